"""The run pipeline: a variant built, its initramfs, one boot, one flood.

Every command goes through here: `build`, `boot`, `kunit` and `run` call
one function each; `run --case` (harness.checks.caserun), `bisect` and
`bisect-run` (harness.checks.bisectjob) repeat :func:`flood_once` over variants.
A kernel is named by a :class:`Target` (Debian's linux-source-X.Y, or the
user's own checkout with ``--tree``) plus patches and fragments; options
arrive as typed requests (harness.boot.settings for boot and flood settings),
never as an argparse namespace.
"""

from __future__ import annotations

import concurrent.futures
import os
import resource
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Mapping, Optional, Sequence

from . import errors, jsonout, paths, proc
from .errors import HarnessError
from .progress import Progress
from .kernel import fragments, kbuild, profiles, series
from .kernel.checkout import Checkout, open_checkout
from .devices import agentresult, camera, usbdevices, usbhost
from .boot import initramfs, insnprof, kunit, qemu
from .boot.settings import FAIL_NTH_PATHS, BootSettings, FloodSettings
from .reports import engine, failnth
from .reports.dmesg import dmesg_check


# --- which kernel ------------------------------------------------------------------

@dataclass(frozen=True)
class VariantSpec:
    """What to build, as the user said it (the `variant` option group)."""
    kernel: str | None = None                 # Debian's linux-source-X.Y (default 6.1)
    tree: Path | None = None                  # or a user's git checkout
    series: tuple[Path, ...] = ()             # applied after the base (detector) series
    prefix: int | None = None                 # only the first N patches of `series`
    fragments: tuple[str, ...] = ()           # names or files; () = the profile's set
    profile: str | None = None                # harness.kernel.profiles; None = the default (dma)
    base_series: bool = True                  # patches/<version>/series (the detector)
    jobs: int | None = None
    force: bool = False
    background: bool = False                  # build beside other builds (build --background)


@dataclass(frozen=True)
class Target:
    """A resolved kernel source: a Debian version, or a checkout at its HEAD."""
    version: str
    checkout: Checkout | None
    spec: VariantSpec
    frags: tuple[fragments.Fragment, ...]
    patches: tuple[series.Patch, ...]         # the spec's series (prefix applied)
    profile: profiles.Profile

    @property
    def name(self) -> str:
        """A short name for folders and progress: `6.1`, or `git-6.12-<commit>`."""
        suffix = "" if self.profile.name == profiles.DEFAULT else f"-{self.profile.name}"
        if self.checkout is None:
            return self.version + suffix
        return f"git-{self.version}-{self.checkout.short}{suffix}"

    def variant(self, extra: Sequence[series.Patch] = ()) -> kbuild.AnyVariant:
        """The kernel with the spec's patches, then ``extra`` (a case's, a bisection prefix's)."""
        patches = tuple(self.profile.patches(self.version)) + self.patches + tuple(extra)
        if self.checkout is not None:
            return kbuild.tree_variant(self.checkout, patches, self.frags,
                                       detector=self.spec.base_series,
                                       fragments_given=bool(self.spec.fragments))
        base = tuple(series.variant_patches(self.version, with_base=self.spec.base_series))
        frags = kbuild.variant_fragments(self.frags, detector=self.spec.base_series,
                                         given=bool(self.spec.fragments))
        return kbuild.Variant(self.version, base + patches, frags)

    def to_json(self) -> dict:
        out = {"kernel": self.version, "profile": self.profile.name}
        if self.checkout is None:
            src = kbuild.local_source(self.version)     # never fetches
            out.update({"package": f"linux-source-{self.version}",
                        "package_version": src.deb_version if src else None})
        else:
            out.update({"tree": str(self.checkout.path), "commit": self.checkout.commit,
                        "dirty": bool(self.checkout.dirty)})
        return out


def with_profile(spec: VariantSpec, run: Mapping[str, Any]) -> VariantSpec:
    """The spec with the profile a case's [run] names, unless a flag named one."""
    if spec.profile is None and run.get("profile"):
        return replace(spec, profile=run["profile"])
    return spec


def target(spec: VariantSpec) -> Target:
    """Resolve a spec: read the checkout (never writing it), the series and fragments."""
    checkout = None
    if spec.tree is not None:
        checkout = open_checkout(spec.tree)
        if spec.kernel and spec.kernel != checkout.version:
            raise errors.InputError(f"--kernel {spec.kernel} and --tree {spec.tree} disagree: the "
                                    f"checkout is linux {checkout.version} (drop --kernel)")
        version = checkout.version
    else:
        version = spec.kernel or "6.1"
        if version not in series.SUPPORTED and spec.base_series:
            raise series.unsupported(version)
    patches: list[series.Patch] = []
    for s in spec.series:
        patches.extend(series.parse_series(paths.in_checkout(s)))
    if spec.prefix is not None:
        if not 0 <= spec.prefix <= len(patches):
            raise errors.InputError(f"--prefix {spec.prefix}: the --series name "
                                    f"{len(patches)} patches")
        patches = patches[:spec.prefix]
    prof = profiles.get(spec.profile)
    if spec.fragments and prof.name != profiles.DEFAULT:
        raise errors.InputError(f"--fragment and --profile {prof.name} both choose the kernel's "
                                "fragments: give one")
    frags = tuple(fragments.resolve_fragments(list(spec.fragments)) if spec.fragments
                  else prof.fragments()) + tuple(fragments.extra_fragments(version))
    return Target(version, checkout, spec, frags, tuple(patches), prof)


def build(t: Target, *, progress: Progress) -> kbuild.BuildResult:
    """The target's kernel with the spec's patches, built or from the cache."""
    return kbuild.build(t.variant(), jobs=t.spec.jobs, progress=progress, force=t.spec.force,
                        background=t.spec.background)


# --- one boot ------------------------------------------------------------------------

def new_run_dir(label: str) -> Path:
    """A fresh folder under <cache>/runs: <time>-<label>-<pid>."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    d = paths.sub("runs") / f"{stamp}-{label}-{os.getpid()}"
    d.mkdir(parents=True, exist_ok=True)
    paths.mark_in_use(d)
    return d


@dataclass(frozen=True)
class BootJob:
    """One boot of a built kernel: what the init does, how QEMU runs."""
    build: kbuild.BuildResult
    run_dir: Path
    guest: initramfs.RunConfig
    boot: BootSettings
    command: str = "boot"                       # progress and KUnit's switch
    extra_args: tuple[str, ...] = ()            # devices (usb-redir ...)
    append: str = ""                            # the command's own kernel arguments
    timeout: float | None = None                # None: boot.timeout
    data_log: Path | None = None
    announce: bool = True                       # print the console's path as it starts
                                                # (a sweep lists its consoles at the end)


def _kunit_append(art: kbuild.Artifacts, command: str) -> str:
    """Built-in KUnit suites run at every boot unless told not to."""
    config = art.config.read_text() if art.config.is_file() else ""
    if command != "kunit" and "CONFIG_KUNIT=y" in config.splitlines():
        return "kunit.enable=0 "
    return ""


def initrd_for(art: kbuild.Artifacts, cfg: initramfs.RunConfig, run_dir: Path) -> Path:
    agent = initramfs.guest_tools(cfg)
    if cfg.workload == "agent" and agent is None:
        raise errors.BuildError("the agent workload needs harness/guest/Makefile to build the agent")
    base = initramfs.base_archive(art, agent)
    run_dir.mkdir(parents=True, exist_ok=True)
    return initramfs.run_archive(art, base, cfg, run_dir)


def boot(job: BootJob, progress: Progress, *, on_retry=None, stop_when=None,
         on_output=None) -> qemu.BootResult:
    """Boot once and watch the console (the initramfs made for this run folder)."""
    art = job.build.artifacts
    initrd = initrd_for(art, job.guest, job.run_dir)
    b = job.boot
    append = (_kunit_append(art, job.command) + job.append + " " + b.append).strip()
    qemu_opts, accel = list(b.qemu_opts), b.accel
    if b.insn_profile:
        if accel == "kvm":
            raise errors.InputError("--insn-profile needs TCG (QEMU plugins do not see KVM's "
                                    "guest): drop --accel kvm")
        qemu_opts += insnprof.qemu_opts(job.run_dir / "insnprof.txt", insnprof.build_plugin())
        accel = "tcg"
    req = qemu.BootRequest(kernel=art.bzimage, initrd=initrd, console=job.run_dir / "console.log",
                           append=append, memory_mb=b.memory, smp=b.smp, accel=accel,
                           timeout=job.timeout if job.timeout is not None else b.timeout,
                           silence=b.silence, extra_args=list(job.extra_args),
                           data_log=job.data_log, qemu_opts=qemu_opts)
    if job.announce:
        progress.note(f"[{job.command} {art.key}] console: {req.console}")
    try:
        return qemu.boot(req, on_output=on_output, on_retry=on_retry, stop_when=stop_when)
    finally:
        # a copy of the cached base archive plus the run's config: 4 MB a run
        if initrd.parent == job.run_dir:
            initrd.unlink(missing_ok=True)


def insn_profile(boot_: BootSettings, art: kbuild.Artifacts, run_dir: Path,
                 result: qemu.BootResult) -> dict:
    """The boot's instruction profile by function, for the JSON payload ({} when off)."""
    if not boot_.insn_profile:
        return {}
    return {"insn_profile": insnprof.summarize(run_dir / "insnprof.txt", art.dir, result.console)}


# --- one flood -----------------------------------------------------------------------

@dataclass(frozen=True)
class FloodJob:
    build: kbuild.BuildResult
    run_dir: Path
    boot: BootSettings
    flood: FloodSettings
    command: str = "run"
    about: tuple[tuple[str, Any], ...] = ()     # more fields for the payload (the target's)
    modules: tuple[str, ...] = ()               # with profiles: modules loaded before theirs


@dataclass
class FloodRun:
    build: kbuild.BuildResult
    result: qemu.BootResult
    agent: dict | None
    summary: dict
    payload: dict
    run_dir: Path
    crashed: list = field(default_factory=list)     # camera.Camera that died
    checks: failnth.Result | None = None            # fail-nth steps and kmemleak's leaks

    def device_error(self) -> errors.DeviceError | None:
        """A DeviceError naming the first camera that died, how, and its last log lines."""
        if not self.crashed:
            return None
        c = self.crashed[0]
        return _with_payload(errors.DeviceError(
            f"{c.label} failed ({camera.describe_exit(c.exit_code)}); "
            f"its last log lines:\n{camera.tail(c.stderr)}", path=str(c.stderr)), self.payload)


def agent_args(f: FloodSettings) -> str:
    """The guest agent's command line for a flood (its result also goes to ttyS1,
    where printk cannot cut it)."""
    args = [f"--duration {f.duration:g}", "--wait 30", f"--cameras {f.cameras}",
            f"--cycle-hz {f.cycle_hz:g}", f"--phys-hz {f.phys_hz:g}", "--series",
            "--output /dev/ttyS1"]
    return " ".join(args + ([f.agent_args] if f.agent_args else []))


FAIL_NTH_NEEDS = ("CONFIG_FAULT_INJECTION=y", "CONFIG_FAILSLAB=y", "CONFIG_FAIL_PAGE_ALLOC=y",
                  "CONFIG_FAULT_INJECTION_DEBUG_FS=y")
FAIL_NTH_STEP_S = 3.0       # time allowed per fail-nth step (a bind or unbind under TCG)


def check_fail_nth(art: kbuild.Artifacts) -> None:
    """--fail-nth needs fault injection in the kernel: say so before booting."""
    config = art.config.read_text().splitlines() if art.config.is_file() else []
    missing = [o.split("=")[0] for o in FAIL_NTH_NEEDS if o not in config]
    if missing:
        raise errors.InputError(f"--fail-nth needs a kernel with {', '.join(missing)}; "
                                f"{art.key} has not (use --profile full)", path=str(art.config))


def flood_once(job: FloodJob, progress: Progress, on_output=None) -> FloodRun:
    """One boot with the cameras flooding and the agent driving uvcvideo.

    Then, when asked, fail-nth on uvcvideo's probe/disconnect; then, on a
    kernel with kmemleak, its scan (the init does both).  The guest is
    stopped as soon as a camera dies (its run cannot count).  Writes
    result.json in the run folder; never raises for a guest or camera
    failure (the FloodRun says what happened).
    """
    f, run_dir = job.flood, job.run_dir
    check_combinations(f)
    cfg = initramfs.RunConfig(modules=("uvcvideo",), workload="agent", agent_args=agent_args(f),
                              fail_nth_driver="uvcvideo" if f.fail_nth else "",
                              fail_nth_paths=f.fail_nth or FAIL_NTH_PATHS,
                              fail_nth_max=f.fail_nth_max)
    profs: list[usbdevices.Profile] = []
    hosts = [usbhost.find(s) for s in f.usb_host]
    if f.devices or hosts:
        # profiles and host devices instead of the built-in cameras, and a
        # workload that holds their drivers' nodes open (harness.devices.usbdevices)
        binary = camera.build_fake_device()
        profs = [usbdevices.load(d, binary) for d in f.devices]
        profs += [usbdevices.from_host(h) for h in hosts]
        modules = tuple(dict.fromkeys(job.modules + f.modules
                                      + tuple(m for p in profs for m in p.modules)))
        tools = (("/bin/dmaharness-capture", str(usbdevices.build_capture())),) \
            if f.capture else ()
        cfg = initramfs.RunConfig(modules=modules, workload="shell-cmd",
                                  workload_cmd=usbdevices.guest_script(profs, f.duration,
                                                                       f.capture, f.exercise),
                                  tools=tools)
    extra_time = 0.0
    if f.fail_nth:
        check_fail_nth(job.build.artifacts)
        extra_time = FAIL_NTH_STEP_S * f.fail_nth_max * len(f.fail_nth)
    # the fake devices flood for the run, counted from their first start;
    # reading each device back first (--capture) takes up to ~25 s a device
    spec = camera.CameraSpec(f.flood, f.duration + 5 + (25 * len(profs) if f.capture else 0),
                             f.seed, f.hotplug, tuple(p.path for p in profs if p.path),
                             tuple(hosts), f.bulk_in)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    run_dir.mkdir(parents=True, exist_ok=True)
    with camera.Cameras(0 if profs else f.cameras, spec, run_dir) as cams:
        progress.note(f"[{job.command} {job.build.artifacts.key}] "
                      + (f"{len(profs)} device(s) ({', '.join(p.name for p in profs)})"
                         if profs else f"{f.cameras} camera(s), flood "
                         f"{f.flood.pattern}:{f.flood.rate}") + f" for {f.duration:g}s")
        data_log = run_dir / "agent.log"

        def camera_gone() -> str:
            dead = cams.crashed()
            return (f"{dead[0].label} died ({camera.describe_exit(dead[0].process.poll())})"
                    if dead else "")

        result = boot(BootJob(job.build, run_dir, cfg, job.boot, job.command,
                              tuple(cams.qemu_args()),
                              timeout=f.duration + job.boot.timeout + extra_time,
                              data_log=data_log),
                      progress, on_retry=cams.restart, stop_when=camera_gone, on_output=on_output)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        crashed = cams.crashed()
    qemu_cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    agent = (agentresult.agent_result(data_log.read_text(errors="replace"))
             if data_log.is_file() else None) \
        or agentresult.agent_result(result.console.read_text(errors="replace"))
    console = result.console.read_text(errors="replace") if result.console.is_file() else ""
    checks = failnth.parse(console) if f.fail_nth or failnth.KMEMLEAK_BEGIN in console else None
    summary = agentresult.summarize(agent, cams.cams, f.duration)
    summary["qemu_cpu_s"] = round(qemu_cpu, 3)
    summary["fake_device_cpu_share"] = (round(summary["fake_device_cpu_s"] / qemu_cpu, 4)
                                        if qemu_cpu else None)
    log_text = data_log.read_text(errors="replace") if data_log.is_file() else ""
    devs = dmesg = None
    if profs:
        results = usbdevices.parse(console, profs, log_text)
        dmesg = dmesg_check(console, results)
        devs = [d.to_json() for d in results]
    if profs and f.capture:
        caps = usbdevices.captures(log_text, profs, run_dir, camera.build_fake_device())
        for d, c in zip(devs, caps):
            d["capture"] = c
    payload = {"command": job.command,
               "ok": result.ok and not crashed and (agent is not None or bool(profs)),
               **dict(job.about), "build": job.build.to_json(), "run_dir": str(run_dir),
               "flood": f.flood.__dict__, "duration_s": f.duration, "summary": summary,
               "agent": agent, "cameras": [c.counters for c in cams.cams], **result.to_json(),
               **insn_profile(job.boot, job.build.artifacts, run_dir, result),
               "fail_nth": list(f.fail_nth), "guest_checks": checks.to_json() if checks else None,
               **({"devices": devs, "dmesg": dmesg} if profs else {})}
    if f.fail_nth and checks is not None and result.ok and not crashed and (
            checks.error or not checks.result_line):
        payload["ok"] = False
    jsonout.write(run_dir / "result.json", payload)
    return FloodRun(job.build, result, agent, summary, payload, run_dir, crashed, checks)


# the titles (as syzkaller gives them) of the kernel's own hang reports
HANG_TITLES = ("INFO: task hung in ", "INFO: rcu detected stall", "BUG: soft lockup",
               "INFO: task can't die in ", "BUG: workqueue lockup")


def hang_reports(result: qemu.BootResult, reports: Optional[Sequence] = None) -> list[str]:
    """A guest that went silent or ran out of time: the hang reports its kernel
    printed first (blocked tasks, stalls), so the hang is a report, not only a
    silence.  Empty for every other outcome.  ``reports``: the console's,
    when the caller has parsed it already."""
    if result.outcome not in ("silent", "timeout"):
        return []
    if reports is None:
        if not result.console.is_file():
            return []
        reports = engine.parse(result.console.read_text(errors="replace"))
    return sorted({r.title for r in reports if r.title.startswith(HANG_TITLES)})


def ran(result: qemu.BootResult, reports: Sequence) -> bool:
    """Whether a boot counts as a run whose reports (its console's, parsed) can
    be compared: it ended, even with a panic or the agent's error, or it hung
    and the kernel said why."""
    return result.outcome in ("ok", "panic", "guest-error") or bool(hang_reports(result, reports))


def guest_failure(result: qemu.BootResult) -> HarnessError:
    """The GuestError a failed boot raises (its console's last lines, and the
    kernel's hang reports when it hung)."""
    try:
        result.raise_for_outcome()
    except HarnessError as e:
        hung = hang_reports(result)
        if hung:
            e.message = (e.message.rstrip() + "; the kernel reported the hang: "
                         + "; ".join(hung))
            e.args = (e.message,)
        return e
    raise AssertionError("guest_failure() of a boot that went well")


def _with_payload(e: HarnessError, payload: dict) -> HarnessError:
    e.payload = payload           # what --json prints beside the error
    return e


def check_flood(fr: FloodRun) -> None:
    """Raise what a plain `run` reports for a failed flood: the camera, the guest, the agent."""
    result = fr.result
    e: HarnessError | None = fr.device_error()
    if e is None and not result.ok:
        e = guest_failure(result)
    if e is None and fr.agent is None and not fr.payload.get("devices"):
        e = errors.GuestError(f"the guest agent printed no result line; console {result.console}",
                              path=str(result.console))
    ch = fr.checks
    if e is None and fr.payload.get("fail_nth") and ch is not None and (
            ch.error or not ch.result_line):
        e = errors.GuestError(f"fail-nth did not run to its end: {ch.error or ch.result_problem}; "
                              f"console {result.console}", path=str(result.console))
    if e is not None:
        raise _with_payload(e, fr.payload)


# --- runs in parallel --------------------------------------------------------------

def run_parallel(jobs: Sequence, one: Callable, parallel: int) -> list:
    """``one(job)`` for each job, ``parallel`` at a time (each is mostly QEMU), in order.

    On an exception or Ctrl-C, every child still running is stopped so the
    workers return.
    """
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, parallel)) as pool:
        try:
            return list(pool.map(one, jobs))
        except BaseException:
            pool.shutdown(wait=False, cancel_futures=True)
            proc.stop_all()
            raise


# --- the one-boot commands -----------------------------------------------------------

@dataclass(frozen=True)
class BootCommand:
    """`boot` and `kunit`: build (cached), boot once, watch."""
    variant: VariantSpec
    guest: initramfs.RunConfig
    boot: BootSettings
    command: str = "boot"                  # "boot" or "kunit"
    append: str = ""                       # the command's own kernel arguments
    run_dir: Path | None = None


@dataclass
class BootOutput:
    target: Target
    build: kbuild.BuildResult
    run_dir: Path
    result: qemu.BootResult
    payload: dict
    ktap: Optional[kunit.Result] = None


def boot_command(req: BootCommand, progress: Progress, on_output=None) -> BootOutput:
    """Build, boot once, write result.json; raise the guest's failure (with the payload)."""
    t = target(req.variant)
    res = build(t, progress=progress)
    if req.command == "kunit" and "CONFIG_KUNIT=y" not in res.artifacts.config.read_text().splitlines():
        raise errors.InputError(f"{res.artifacts.key} has no CONFIG_KUNIT=y: add a fragment that "
                                "enables KUnit and the suites to run", path=str(res.artifacts.config))
    run_dir = req.run_dir or new_run_dir(f"{req.command}-{t.name}")
    result = boot(BootJob(res, run_dir, req.guest, req.boot, req.command, append=req.append),
                  progress, on_output=on_output)
    payload = {"command": req.command, "ok": result.ok, **t.to_json(), "build": res.to_json(),
               "run_dir": str(run_dir), **result.to_json(),
               **insn_profile(req.boot, res.artifacts, run_dir, result)}
    ktap = None
    if req.command == "kunit":
        ktap = kunit.parse(result.console.read_text(errors="replace"))
        payload.update({"ok": result.ok and ktap.ok, "kunit": ktap.to_json()})
    jsonout.write(run_dir / "result.json", payload)
    if not result.ok:
        raise _with_payload(guest_failure(result), payload)
    return BootOutput(t, res, run_dir, result, payload, ktap)


@dataclass(frozen=True)
class RunRequest:
    """`run` without a case: one flood of one kernel."""
    variant: VariantSpec
    boot: BootSettings
    flood: FloodSettings
    run_dir: Path | None = None


def check_combinations(f: FloodSettings) -> None:
    """The settings that do not go together (InputError): flood_once's first
    step, and check_before_build's."""
    if f.capture and not f.devices:
        raise errors.InputError("--capture reads back the --usb-device profiles: give --usb-device")
    if f.exercise and not (f.devices or f.usb_host):
        raise errors.InputError("--exercise uses the --usb-device (or --usb-host) devices: give one "
                                "(the cameras are the agent's to drive)")
    if f.modules and not (f.devices or f.usb_host):
        raise errors.InputError("--modules loads the drivers of --usb-device profiles: give "
                                "--usb-device (the cameras' driver is uvcvideo)")
    if f.fail_nth and (f.devices or f.usb_host):
        raise errors.InputError("--fail-nth drives uvcvideo's camera: not with --usb-device "
                                "or --usb-host")
    if f.fail_nth and f.hotplug:
        raise errors.InputError("--fail-nth and --hotplug both take the camera away from "
                                "uvcvideo: give one")


def check_before_build(f: FloodSettings) -> None:
    """A flood's settings, checked before any build (a late refusal costs a
    build of minutes): what it attaches (each host device there and ours to
    open, each profile a file: fake-uvc checks its content when it serves
    it; how many fit a boot), the combinations flood_once refuses, and the
    agent's command line by the agent's own parser."""
    camera.check_count(0 if f.devices or f.usb_host else f.cameras, len(f.devices),
                       len(f.usb_host))
    check_combinations(f)
    for s in f.usb_host:
        usbhost.find(s)
    for d in f.devices:
        usbdevices.resolve(d)
    if not (f.devices or f.usb_host):
        initramfs.check_agent_args(agent_args(f), "--agent-args" if f.agent_args else
                                   "the agent's arguments")


def run_flood(req: RunRequest, progress: Progress, on_output=None) -> FloodRun:
    """Build, flood once; raise what failed (a camera, the guest, the agent) with the payload."""
    t = target(req.variant)
    check_before_build(req.flood)
    if req.flood.devices or req.flood.usb_host:
        # the drivers of the profiles' USB classes, and usbmon
        t = replace(t, frags=t.frags + (fragments.parse_fragment(usbdevices.FRAGMENT),))
    res = build(t, progress=progress)
    run_dir = req.run_dir or new_run_dir(f"run-{t.name}")
    fr = flood_once(FloodJob(res, run_dir, req.boot, req.flood, about=tuple(t.to_json().items())),
                    progress, on_output=on_output)
    check_flood(fr)
    return fr


def build_command(spec: VariantSpec, progress: Progress) -> tuple[Target, kbuild.BuildResult]:
    """`build`: the target and its build (cached or made)."""
    t = target(spec)
    return t, build(t, progress=progress)
