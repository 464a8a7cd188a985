"""dmaharness command line: one entry point, one subcommand per job."""

from __future__ import annotations

import argparse
import concurrent.futures
import hashlib
import json
import os
import re
import resource
import shlex
import shutil
import signal
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from . import bisect, cache, camera, diff, errors, fragments, htmlreport, initramfs, insnprof, kernel, kunit, \
    layout, paths, proc, qemu, reports, series, symbolize
from . import case as case_mod
from .errors import HarnessError
from .progress import Progress

JSON_VERSION = 1

EPILOG = """\
exit codes:
  0    success
  1    the check's verdict is negative (a diff that does not match its case)
  2    usage error
  3    environment: a package, tool or kernel source is missing (make deps)
  4    bad input: a series, patch, fragment or config option is wrong
  5    the kernel or a C helper failed to build
  6    the guest failed: panic, hang, silence, missing end marker, bad status
  7    the fake device failed (crashed, never listened)
  130  interrupted

The cache folder is $DMAHARNESS_CACHE, else ~/.cache/dmaharness.
"""


def _variant_args(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("variant (what kernel to build)")
    g.add_argument("--kernel", default="6.1", choices=kernel.SUPPORTED,
                   help="kernel version, from Debian's linux-source-X.Y (default 6.1)")
    g.add_argument("--series", action="append", type=Path, default=[], metavar="FILE",
                   help="a quilt-style series applied after patches/<version>/series "
                        "(repeatable; a case's series, or your own)")
    g.add_argument("--prefix", type=int, metavar="N",
                   help="apply only the first N patches of the --series patches")
    g.add_argument("--fragment", action="append", default=[], metavar="NAME|FILE",
                   help="kconfig fragment(s) to use instead of all of kconfig-fragments/ "
                        "(repeatable; NAME means kconfig-fragments/NAME.config)")
    g.add_argument("--no-base-series", action="store_true",
                   help="do not apply patches/<version>/series (a stock kernel)")
    g.add_argument("-j", "--jobs", type=int, help="make -j (default: number of CPUs)")
    g.add_argument("--force", action="store_true", help="rebuild even when cached")


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress on stderr")


def _variant(a) -> kernel.Variant:
    patches = series.variant_patches(a.kernel, a.series, a.prefix, with_base=not a.no_base_series)
    frags = fragments.resolve_fragments(a.fragment)
    return kernel.Variant(a.kernel, tuple(patches), tuple(frags))


def _emit(a, payload: dict, text: str) -> None:
    if a.json:
        payload = {"version": JSON_VERSION, **payload}
        print(json.dumps(payload, indent=1))
    else:
        print(text)


def cmd_build(a) -> int:
    prog = Progress(quiet=a.quiet)
    res = kernel.build(_variant(a), jobs=a.jobs, progress=prog, force=a.force)
    word = "cached" if res.cached else f"built in {res.seconds:.1f}s"
    _emit(a, {"command": "build", "ok": True, **res.to_json()},
          f"{res.artifacts.key}: {word}\n  bzImage   {res.artifacts.bzimage}\n"
          f"  vmlinux   {res.artifacts.vmlinux}\n  build log {res.artifacts.build_log}")
    return errors.EXIT_OK


def new_run_dir(label: str) -> Path:
    stamp = time.strftime("%Y%m%d-%H%M%S")
    d = paths.sub("runs") / f"{stamp}-{label}-{os.getpid()}"
    d.mkdir(parents=True)
    return d


def _prepare(a, label: str, cfg: initramfs.RunConfig, variant: kernel.Variant | None = None,
             run_dir: Path | None = None, build: kernel.BuildResult | None = None):
    """Build the variant (cached) unless given a build, the initramfs, and a run folder."""
    prog = Progress(quiet=a.quiet)
    res = build or kernel.build(variant or _variant(a), jobs=a.jobs, progress=prog, force=a.force)
    art = res.artifacts
    agent = initramfs.build_agent() if cfg.workload == "agent" else None
    if cfg.workload == "agent" and agent is None:
        raise errors.BuildError("the agent workload needs harness/guest/Makefile to build the agent")
    base = initramfs.base_archive(art, agent)
    run_dir = run_dir or (Path(a.run_dir) if a.run_dir else new_run_dir(f"{label}-{a.kernel}"))
    run_dir.mkdir(parents=True, exist_ok=True)
    initrd = initramfs.run_archive(art, base, cfg, run_dir)
    return prog, res, run_dir, initrd


def _kunit_append(res, command: str) -> str:
    """Built-in KUnit suites run at every boot unless told not to."""
    config = res.artifacts.config.read_text() if res.artifacts.config.is_file() else ""
    if command != "kunit" and "CONFIG_KUNIT=y" in config.splitlines():
        return "kunit.enable=0 "
    return ""


def _boot(a, prog, res, run_dir, initrd, *, timeout, extra_args=(), append="", data_log=None,
          on_retry=None):
    append = (_kunit_append(res, a.command) + append + " " + a.append).strip()
    qemu_opts, accel = list(getattr(a, "qemu_opts", None) or []), a.accel
    if getattr(a, "insn_profile", False):
        if accel == "kvm":
            raise errors.InputError("--insn-profile needs TCG (QEMU plugins do not see KVM's "
                                    "guest): drop --accel kvm")
        insnprof.build_plugin()
        qemu_opts += insnprof.qemu_opts(run_dir / "insnprof.txt")
        accel = "tcg"
    req = qemu.BootRequest(kernel=res.artifacts.bzimage, initrd=initrd,
                           console=run_dir / "console.log", append=append, memory_mb=a.memory,
                           smp=a.smp, accel=accel, timeout=timeout, silence=a.silence,
                           extra_args=list(extra_args), data_log=data_log, qemu_opts=qemu_opts)
    prog.note(f"[{a.command} {a.kernel}] console: {req.console}")
    out = (lambda t: sys.stderr.write(t)) if a.console else None
    try:
        return qemu.boot(req, on_output=out, on_retry=on_retry)
    finally:
        # a copy of the cached base archive plus the run's config: 4 MB a run
        if initrd.parent == run_dir:
            initrd.unlink(missing_ok=True)


def _insn_profile(a, res, run_dir: Path, result) -> dict:
    """The boot's instruction profile by function, for the JSON payload."""
    if not getattr(a, "insn_profile", False):
        return {}
    return {"insn_profile": insnprof.summarize(run_dir / "insnprof.txt", res.artifacts.dir,
                                               result.console)}


def _profile_lines(payload: dict) -> str:
    prof = payload.get("insn_profile")
    if not prof:
        return "\n  instruction profile: none (QEMU did not exit by itself)" if "insn_profile" in payload else ""
    top = ", ".join(f"{t['symbol']} {100 * t['share']:.1f}%" for t in prof["top"][:5])
    return (f"\n  guest instructions  {prof['instructions']:,} (top: {top})"
            f"\n  profile  {prof['file']}")


def _finish(a, run_dir: Path, payload: dict, result) -> None:
    (run_dir / "result.json").write_text(json.dumps({"version": JSON_VERSION, **payload}, indent=1) + "\n")
    if not result.ok:
        try:
            result.raise_for_outcome()
        except HarnessError as e:
            e.payload = payload
            raise


def cmd_boot(a) -> int:
    cfg = initramfs.RunConfig(modules=tuple(m for m in a.modules.split(",") if m),
                              workload=a.workload, agent_args=a.agent_args, workload_cmd=a.cmd)
    prog, res, run_dir, initrd = _prepare(a, "boot", cfg)
    art = res.artifacts
    result = _boot(a, prog, res, run_dir, initrd, timeout=a.timeout)
    payload = {"command": "boot", "ok": result.ok, "build": res.to_json(), "run_dir": str(run_dir),
               **result.to_json(), **_insn_profile(a, res, run_dir, result)}
    _finish(a, run_dir, payload, result)
    facts = ", ".join(k for k, v in result.watch.facts.items() if v) or "none"
    _emit(a, payload,
          f"{art.key}: {result.describe()} in {result.wall:.1f}s ({result.accel})\n"
          f"  seen     {facts}\n  console  {result.console}\n  result   {run_dir / 'result.json'}"
          + _profile_lines(payload))
    return errors.EXIT_OK


def _mib(n: int) -> str:
    return f"{n / 2**20:,.0f} MiB"


def cmd_cache(a) -> int:
    prog = Progress(quiet=a.quiet)
    base = paths.cache_dir()
    if a.action == "prune":
        res = cache.prune(a.keep, a.runs_older_than, dry_run=a.dry_run, progress=prog)
        verb = "would free" if a.dry_run else "freed"
        _emit(a, {"command": "cache", "action": "prune", "ok": True, "cache": str(base), **res},
              f"{base}: {len(res['removed'])} work tree(s) and {len(res['runs_removed'])} run folder(s) "
              f"{'to remove' if a.dry_run else 'removed'}, {verb} {_mib(res['freed_bytes'])}"
              + (f"; {len(res['in_use'])} in use, kept" if res["in_use"] else ""))
        return errors.EXIT_OK
    prog.note(f"[cache] measuring {base}")
    parts = cache.usage()
    trees = cache.trees()
    lines = [f"{base}: {_mib(sum(parts.values()))}"]
    lines += [f"  {k + '/':11} {_mib(v):>12}" for k, v in parts.items()]
    lines.append(f"work trees, most recently used first ({len(trees)}):")
    for t in trees:
        lines.append(f"  {t.key:24} {t.patches:3} patches  {_mib(t.size):>10}  "
                     f"{'built' if t.built else 'not built'}, last used "
                     f"{time.strftime('%Y-%m-%d %H:%M', time.localtime(t.last_used))}")
    _emit(a, {"command": "cache", "action": "list", "ok": True, "cache": str(base),
              "parts_bytes": parts, "trees": [t.to_json() for t in trees]}, "\n".join(lines))
    return errors.EXIT_OK


def cmd_kunit(a) -> int:
    cfg = initramfs.RunConfig(modules=tuple(m for m in a.modules.split(",") if m))
    prog, res, run_dir, initrd = _prepare(a, "kunit", cfg)
    if "CONFIG_KUNIT=y" not in res.artifacts.config.read_text().splitlines():
        raise errors.InputError(f"{res.artifacts.key} has no CONFIG_KUNIT=y: add a fragment that "
                                "enables KUnit and the suites to run", path=str(res.artifacts.config))
    append = f"kunit.filter_glob={a.filter}" if a.filter else ""
    result = _boot(a, prog, res, run_dir, initrd, timeout=a.timeout, append=append)
    ktap = kunit.parse(result.console.read_text(errors="replace"))
    payload = {"command": "kunit", "ok": result.ok and ktap.ok, "build": res.to_json(),
               "run_dir": str(run_dir), "kunit": ktap.to_json(), **result.to_json()}
    _finish(a, run_dir, payload, result)
    c = ktap.counts()
    lines = [f"{res.artifacts.key}: KUnit {c['passed']} passed, {c['failed']} failed, "
             f"{c['skipped']} skipped in {len(ktap.suites)} suite(s)"]
    for s in ktap.suites:
        lines.append(f"  {s.status:8} {s.name} ({', '.join(f'{v} {k}' for k, v in s.counts().items())})")
    for f in ktap.failures():
        lines.append(f"  FAILED   {f}")
    lines.append(f"  console  {result.console}")
    _emit(a, payload, "\n".join(lines))
    return errors.EXIT_OK if ktap.ok else errors.EXIT_VERDICT


@dataclass
class FloodRun:
    build: kernel.BuildResult
    result: qemu.BootResult
    agent: dict | None
    summary: dict
    payload: dict
    run_dir: Path
    crashed: list


def flood_once(a, flood: camera.Flood, duration: float, cycle_hz: float, phys_hz: float,
               variant: kernel.Variant | None = None, run_dir: Path | None = None,
               build: kernel.BuildResult | None = None) -> FloodRun:
    """One boot with the cameras flooding and the agent driving uvcvideo.

    ``a`` holds the run options (argparse namespace of `run`); the kernel
    is ``build`` when given, else ``variant`` (or the one ``a`` names),
    built or taken from the cache.
    """
    # the result line also goes to the second serial port, where printk cannot cut it
    agent_args = [f"--duration {duration:g}", "--wait 30", f"--cameras {a.cameras}",
                  f"--cycle-hz {cycle_hz:g}", f"--phys-hz {phys_hz:g}", "--series",
                  "--output /dev/ttyS1"]
    cfg = initramfs.RunConfig(modules=("uvcvideo",), workload="agent",
                              agent_args=" ".join(agent_args + ([a.agent_args] if a.agent_args else [])))
    prog, res, run_dir, initrd = _prepare(a, "run", cfg, variant, run_dir, build)
    spec = camera.CameraSpec(flood, duration + 5, a.seed, a.hotplug)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    with camera.Cameras(a.cameras, spec, run_dir) as cams:
        prog.note(f"[run {a.kernel}] {a.cameras} camera(s), flood {flood.pattern}:{flood.rate} "
                  f"for {duration:g}s")
        data_log = run_dir / "agent.log"
        result = _boot(a, prog, res, run_dir, initrd, timeout=duration + a.timeout,
                       extra_args=cams.qemu_args(), data_log=data_log, on_retry=cams.restart)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        crashed = cams.crashed()
    qemu_cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    agent = (camera.agent_result(data_log.read_text(errors="replace")) if data_log.is_file() else None) \
        or camera.agent_result(result.console.read_text(errors="replace"))
    summary = camera.summarize(agent, cams.cams, duration)
    summary["qemu_cpu_s"] = round(qemu_cpu, 3)
    summary["fake_device_cpu_share"] = round(summary["fake_device_cpu_s"] / qemu_cpu, 4) if qemu_cpu else None
    payload = {"command": "run", "ok": result.ok and not crashed and agent is not None,
               "build": res.to_json(), "run_dir": str(run_dir), "flood": flood.__dict__,
               "duration_s": duration, "summary": summary, "agent": agent,
               "cameras": [c.counters for c in cams.cams], **result.to_json(),
               **_insn_profile(a, res, run_dir, result)}
    (run_dir / "result.json").write_text(json.dumps({"version": JSON_VERSION, **payload}, indent=1) + "\n")
    return FloodRun(res, result, agent, summary, payload, run_dir, crashed)


def cmd_run(a) -> int:
    if a.case:
        return cmd_run_case(a)
    fr = flood_once(a, camera.Flood.parse(a.flood), camera.parse_duration(a.duration),
                    a.cycle_hz, a.phys_hz)
    result, payload = fr.result, fr.payload
    if fr.crashed and result.ok:
        c = fr.crashed[0]
        e = errors.DeviceError(f"fake camera {c.index} failed (exit {c.exit_code}): "
                               f"{camera._tail(c.stderr)}", path=str(c.stderr))
        e.payload = payload
        raise e
    _finish(a, fr.run_dir, payload, result)
    if fr.agent is None:
        e = errors.GuestError(f"the guest agent printed no result line; console {result.console}",
                              path=str(result.console))
        e.payload = payload
        raise e
    s = fr.summary
    flood = payload["flood"]
    _emit(a, payload,
          f"{fr.build.artifacts.key}: {flood['pattern']}:{flood['rate']} flood, {s['cameras']} camera(s), "
          f"{payload['duration_s']:g}s ({result.accel})\n"
          f"  sent by the fake camera(s)   {s['sent']}\n"
          f"  counted in the guest         {s['guest_counted']} "
          f"({s['guest_events_emitted']} control events emitted, {s['guest_key_events']} key events)\n"
          f"  delivered rate               {s['guest_rate_per_s']:.0f}/s "
          f"({100 * s['ratio_to_ceiling']:.0f}% of the {s['ceiling_per_s']}/s ceiling)\n"
          f"  phys reads, open/close       {s['phys_reads']}, {s['cycles']}\n"
          f"  fake device CPU / QEMU CPU   {s['fake_device_cpu_s']:.2f}s / {s['qemu_cpu_s']:.1f}s\n"
          f"  console  {result.console}\n  result   {fr.run_dir / 'result.json'}"
          + _profile_lines(payload))
    return errors.EXIT_OK


def cmd_run_case(a) -> int:
    """A case: every variant R times under the flood, then the diff of reports."""
    case = case_mod.load_case(a.case)
    ver = case.folder.parent.parent.name
    if ver in kernel.SUPPORTED and ver != a.kernel:
        raise errors.InputError(f"case {case.folder} is for linux {ver}, not --kernel {a.kernel}")
    rs = case.run
    duration = camera.parse_duration(a.duration) if a.duration_given else rs.duration
    prog = Progress(quiet=a.quiet)
    top = Path(a.run_dir) if a.run_dir else new_run_dir(f"case-{case.name}-{a.kernel}")
    top.mkdir(parents=True, exist_ok=True)
    base = series.variant_patches(a.kernel, with_base=not a.no_base_series)
    frags = tuple(fragments.resolve_fragments(a.fragment))
    variants = [(v, kernel.Variant(a.kernel, tuple(base) + v.patches, frags))
                for v in [case.before] + case.afters]
    # builds first, one after the other (incremental, seeded from each other) ...
    for v, variant in variants:
        prog.note(f"[case {case.name}] variant {v.name}: {len(variant.patches)} patches")
        kernel.build(variant, jobs=a.jobs, progress=prog, force=a.force, need_tree=True)
    # ... then the boots, --parallel at a time (each is mostly QEMU)
    jobs = [(v, variant, r) for v, variant in variants for r in range(a.runs)]

    def one(job):
        v, variant, r = job
        prog.note(f"[case {case.name}] {v.name} run {r + 1}/{a.runs}")
        return job, flood_once(a, rs.flood, duration, rs.cycle_hz, rs.phys_hz, variant,
                               top / f"{v.name}-{r + 1}")

    runs: dict[str, list] = {v.name: [] for v, _ in variants}
    traces, syms, failures = [], {}, []
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, a.parallel)) as pool:
        try:
            done = list(pool.map(one, jobs))
        except BaseException:
            # workers wait on their QEMU and cameras: stop those so they return
            pool.shutdown(wait=False, cancel_futures=True)
            proc.stop_all()
            raise
    for (v, variant, r), fr in done:
        text = fr.result.console.read_text(errors="replace")
        reps = reports.parse(text)
        runs[v.name].append(reps)
        if fr.result.outcome not in ("ok", "panic", "guest-error") or fr.crashed:
            failures.append(f"{v.name} run {r + 1}: {fr.result.describe()}"
                            + ("; fake camera crashed" if fr.crashed else ""))
        syms[v.name] = symbolize.symbolizer(fr.build.artifacts.dir)
        series_, start = htmlreport.agent_series(fr.agent)
        traces.append(htmlreport.RunTrace(f"{v.name} #{r + 1}", reps, series_,
                                          start or 0.0, syms[v.name].format_report,
                                          str(fr.result.console)))
    if failures:
        raise errors.GuestError("the case could not run cleanly: " + "; ".join(failures))
    outcome = diff.compare_case(case, runs[case.before.name],
                                {v.name: runs[v.name] for v in case.afters})
    symbolize.annotate(outcome, syms)
    layout.annotate_layouts(outcome, {name: s.artifacts for name, s in syms.items()})
    out_json = top / "outcome.json"
    out_json.write_text(json.dumps(outcome.to_json(), indent=1) + "\n")
    html = htmlreport.write(top / "report.html", outcome, traces,
                            title=f"dmaharness: {case.name} on linux {a.kernel}")
    payload = {"command": "run", "case": case.name, "kernel": a.kernel, "runs": a.runs,
               "ok": outcome.matches, "run_dir": str(top), "html": str(html),
               "outcome": outcome.to_json()}
    _emit(a, payload, diff.format_outcome(outcome) +
          f"\n  logs     {top}/<variant>-<run>/console.log\n  json     {out_json}\n  report   {html}")
    return diff.exit_code(outcome.matches)


def classify_run(fr: FloodRun, matcher: bisect.Matcher) -> bisect.RunOutcome:
    """A flood run as bisection evidence: hit, clean, failed or infra."""
    text = fr.result.console.read_text(errors="replace") if fr.result.console.is_file() else ""
    titles = matcher.matching([r.title for r in reports.parse(text)])
    where, wall = str(fr.run_dir), getattr(fr.result, "wall", 0.0)
    if titles:      # even from a run that then panicked: the signature was seen
        return bisect.RunOutcome(bisect.HIT, titles, where, wall)
    if fr.crashed:
        return bisect.RunOutcome(bisect.INFRA, [], f"fake camera crashed; {where}", wall)
    if fr.agent is not None and fr.result.outcome in ("ok", "guest-error"):
        return bisect.RunOutcome(bisect.CLEAN, [], where, wall)
    why = fr.result.describe() if fr.agent is not None or not fr.result.ok else \
        "the guest agent printed no result"
    return bisect.RunOutcome(bisect.FAILED, [], f"{why}; {where}", wall)


class FloodRunner:
    """bisect.Runner over kernel variants: build through the cache, flood, classify.

    ``variant_for(prefix)`` gives the kernel of a step; runs of a step go
    to ``folder/p<prefix>-<n>/`` and are booted ``count`` at once.
    """

    def __init__(self, a, variant_for, matcher: bisect.Matcher, settings, folder: Path,
                 prog: Progress, name_fmt: str = "p{prefix}-{n}"):
        self.a, self.variant_for, self.matcher = a, variant_for, matcher
        self.settings, self.folder, self.prog = settings, folder, prog
        self.name_fmt = name_fmt
        self.builds: dict[int, kernel.BuildResult] = {}     # given, or built by build()
        self._src: kernel.Source | None = None

    def key(self, prefix: int) -> str:
        if self._src is None:       # only variants of Debian's sources have keys here
            self._src = kernel.find_source(self.a.kernel)
        return self.variant_for(prefix).key(self._src)

    def build(self, prefix: int, need_tree: bool = False):
        try:
            self.builds[prefix] = kernel.build(self.variant_for(prefix), jobs=self.a.jobs,
                                               progress=self.prog, force=self.a.force,
                                               need_tree=need_tree)
        except (errors.BuildError, errors.InputError) as e:
            return e.message.splitlines()[0]
        return None

    def run(self, prefix: int, first: int, count: int) -> list[bisect.RunOutcome]:
        rs = self.settings
        if prefix not in self.builds:     # resumed half-way: the build is cached
            why = self.build(prefix)
            if why:
                return [bisect.RunOutcome(bisect.FAILED, [], f"build: {why}")] * count

        def one(i: int) -> bisect.RunOutcome:
            d = self.folder / self.name_fmt.format(prefix=prefix, n=first + i + 1)
            shutil.rmtree(d, ignore_errors=True)
            try:
                fr = flood_once(self.a, rs.flood, rs.duration, rs.cycle_hz, rs.phys_hz,
                                run_dir=d, build=self.builds[prefix])
            except errors.EnvError:
                raise
            except HarnessError as e:
                return bisect.RunOutcome(bisect.INFRA, [], f"{e.message}; {d}")
            return classify_run(fr, self.matcher)

        self.prog.note(f"[{self.a.command}] prefix {prefix}: runs {first + 1}..{first + count}")
        with concurrent.futures.ThreadPoolExecutor(max_workers=count) as pool:
            try:
                return list(pool.map(one, range(count)))
            except BaseException:
                pool.shutdown(wait=False, cancel_futures=True)
                proc.stop_all()
                raise


def run_settings(a) -> case_mod.RunSettings:
    """Flood settings: the case's [run] table when --case is given, then the flags."""
    rs = case_mod.load_case(a.case).run if a.case else case_mod.RunSettings(
        camera.Flood.parse("control:100"), 10.0, 2.0, 200.0)
    return case_mod.RunSettings(
        camera.Flood.parse(a.flood) if a.flood else rs.flood,
        camera.parse_duration(a.duration) if a.duration else rs.duration,
        rs.cycle_hz if a.cycle_hz is None else a.cycle_hz,
        rs.phys_hz if a.phys_hz is None else a.phys_hz)


def point_at_code(res: bisect.Result, user: list, matcher: bisect.Matcher,
                  runner: "FloodRunner") -> dict | None:
    """For the signature: the guilty frame, the driver frames of its stack and
    the patches of the series that touch them (and, for a detector report,
    the structure around the buffer)."""
    bad = [s for s in res.steps if s.verdict == bisect.BAD]
    bad.sort(key=lambda s: s.prefix != res.culprit)
    for step in bad:
        for run in step.runs:
            console = Path(run.detail) / "console.log"
            if run.status != bisect.HIT or not console.is_file():
                continue
            rep = next((r for r in reports.parse(console.read_text(errors="replace"))
                        if matcher.matches(r.title)), None)
            if rep is None:
                continue
            # resumed (the build is cached), or its work tree pruned since: file:line and
            # the layout need the tree
            runner.build(step.prefix, need_tree=True)
            art = runner.builds.get(step.prefix)
            frames = symbolize.symbolizer(art.artifacts.dir).symbolize_report(rep) if art else []
            where = {f.function: f.where for f in frames if f.function and f.where}
            funcs = [f for f in rep.stack if not reports.is_machinery(f)][:4]
            out = {"report": rep.title, "console": str(console), "guilty_frame": rep.guilty_frame,
                   "location": symbolize.guilty_location(frames, rep.guilty_frame),
                   "frames": [], "structure": None, "patches_touching_structure": []}
            for fn in funcs:
                touching = [i + 1 for i, p in enumerate(user) if series.touches_function(p, fn)]
                out["frames"].append({"function": fn, "location": where.get(fn),
                                      "patches": touching})
            if art:
                try:
                    lay = layout.report_layout(rep, art.artifacts.dir)
                except Exception as e:       # a view, never a reason to fail the bisect
                    lay, out["structure_error"] = None, str(e)
                if lay is not None and lay.found:
                    out["structure"] = lay.to_json()
                    out["structure_text"] = lay.format_text()
                    name = (lay.struct or "").split()[-1]
                    out["patches_touching_structure"] = [
                        i + 1 for i, p in enumerate(user) if name and series.touches_struct(p, name)]
            return out
    return None


def format_pointing(pt: dict, names: list[str], culprit: int | None) -> str:
    mark = lambda n: f"{n}*" if n == culprit else str(n)
    lines = [f"where: {pt['report']}"]
    for f in pt["frames"]:
        pl = ", ".join(mark(n) for n in f["patches"]) or "none"
        lines.append(f"  {f['function']:32} {f['location'] or '':40} patches touching it: {pl}")
    if pt.get("structure_text"):
        lines.append("  " + pt["structure_text"].rstrip().replace("\n", "\n  "))
        pl = ", ".join(mark(n) for n in pt["patches_touching_structure"]) or "none"
        lines.append(f"  patches touching the structure: {pl}")
    if culprit:
        changed = pt.get("culprit_changes") or {}
        if changed:
            lines.append(f"  the culprit changes: {', '.join(changed.get('functions', []) + changed.get('structs', [])) or '-'}"
                         f" in {', '.join(changed.get('files', []))}")
        lines.append("  (* the culprit)")
    return "\n".join(lines)


def cmd_bisect(a) -> int:
    prog = Progress(quiet=a.quiet)
    matcher = bisect.Matcher(a.signature)
    user = series.parse_series(a.series)
    if not user:
        raise errors.InputError(f"series file {a.series} names no patch", path=str(a.series))
    base = tuple(series.variant_patches(a.kernel, with_base=not a.no_base_series))
    frags = tuple(fragments.resolve_fragments(a.fragment))
    good = 0 if a.good is None else a.good
    bad = len(user) if a.bad is None else a.bad
    rs = run_settings(a)
    policy = bisect.Policy(max_runs=a.runs, batch=a.parallel, endpoint_runs=a.endpoint_runs,
                           min_hits=a.min_hits, max_miss=a.max_miss)
    bisect.check(len(user), good, bad, policy)      # before any folder is made

    def variant_for(k: int) -> kernel.Variant:
        return kernel.Variant(a.kernel, base + tuple(user[:k]), frags)

    ident = {"kernel": a.kernel, "series": [[p.digest(), p.strip] for p in user],
             "base": [p.digest() for p in base], "fragments": variant_for(0).fragments_digest(),
             "signature": a.signature, "good": good, "bad": bad, "policy": policy.to_json(),
             "flood": [rs.flood.pattern, rs.flood.rate, rs.duration, rs.cycle_hz, rs.phys_hz],
             "cameras": a.cameras, "seed": a.seed}
    digest = hashlib.sha256(json.dumps(ident, sort_keys=True).encode()).hexdigest()[:12]
    folder = Path(a.run_dir) if a.run_dir else paths.sub("runs") / f"bisect-{a.kernel}-{digest}"
    folder.mkdir(parents=True, exist_ok=True)
    log_path = folder / "bisect.jsonl"
    if a.fresh:
        log_path.unlink(missing_ok=True)
    elif log_path.is_file():
        prog.note(f"[bisect] resuming from {log_path}")
    (folder / "bisect.json").write_text(json.dumps(ident, indent=1) + "\n")
    names = [p.name for p in user]
    prog.note(f"[bisect] {len(user)} patches, good end {good}, bad end {bad}, "
              f"signature {a.signature!r}; folder {folder}")
    runner = FloodRunner(a, variant_for, matcher, rs, folder, prog)
    res = bisect.bisect(runner, len(user), good, bad, policy, log=bisect.Log(log_path),
                        note=prog.note)
    culprit = None
    if res.culprit is not None:
        p = user[res.culprit - 1]
        culprit = {"number": res.culprit, "patch": p.name, "path": str(p.path),
                   "subject": series.subject(p)}
    pointing = point_at_code(res, user, matcher, runner) if not res.error else None
    if pointing is not None and res.culprit is not None:
        hs = series.hunks(user[res.culprit - 1])
        pointing["culprit_changes"] = {
            "files": sorted({h.file for h in hs}),
            "functions": sorted({f for h in hs for f in h.functions}),
            "structs": sorted({m.group(0) for h in hs for m in
                               [re.search(r"\bstruct \w+(?= \{)", h.context)] if m})}
    payload = {**res.to_json(), "command": "bisect", "ok": res.found, "kernel": a.kernel,
               "signature": a.signature, "series": str(a.series), "patches": names,
               "folder": str(folder), "log": str(log_path), "culprit": culprit,
               "flood": {"pattern": rs.flood.pattern, "rate": rs.flood.rate,
                         "duration_s": rs.duration, "cycle_hz": rs.cycle_hz,
                         "phys_hz": rs.phys_hz},
               "policy": policy.to_json(), "where": pointing}
    (folder / "result.json").write_text(json.dumps({"version": JSON_VERSION, **payload},
                                                   indent=1) + "\n")
    _emit(a, payload, bisect.format_result(res, names, a.signature)
          + ("\n" + format_pointing(pointing, names, res.culprit) if pointing else "")
          + f"\n  log      {log_path}\n  result   {folder / 'result.json'}")
    return errors.EXIT_OK if res.found else errors.EXIT_VERDICT


def _count(text: str) -> int:
    """argparse type: a whole number, 0 or more."""
    try:
        n = int(text)
    except ValueError:
        n = -1
    if n < 0:
        raise argparse.ArgumentTypeError(f"not a whole number >= 0: {text!r}")
    return n


def _shell_words(text: str) -> list[str]:
    try:
        return shlex.split(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(f"cannot split {text!r}: {e}") from None


def _boot_args(p: argparse.ArgumentParser, *, timeout: float, help_timeout: str, smp: int = 2,
               profile: bool = False):
    g = p.add_argument_group("boot")
    g.add_argument("--accel", choices=("auto", "tcg", "kvm"), default="auto",
                   help="auto: KVM only when a real kernel runs on it, else TCG (default)")
    g.add_argument("--timeout", type=float, default=timeout, help=help_timeout)
    g.add_argument("--silence", type=float, default=60,
                   help="seconds without console output that count as a hang (60)")
    g.add_argument("--memory", type=int, default=1024, help="guest memory in MiB (1024)")
    g.add_argument("--smp", type=int, default=smp, help=f"guest CPUs ({smp})")
    g.add_argument("--append", default="", help="extra kernel command line")
    g.add_argument("--qemu-opts", type=_shell_words, default=[], metavar="OPTS",
                   help="more QEMU options, split like a shell would (e.g. "
                        "'-icount shift=0,sleep=off' to make the guest clock count instructions)")
    if profile:
        g.add_argument("--insn-profile", action="store_true",
                       help="count the guest instructions of every kernel function (a QEMU TCG "
                            "plugin, bench/insnprof; implies --accel tcg): <run-dir>/insnprof.json, "
                            "and the top functions in the result")
    g.add_argument("--console", action="store_true", help="copy the console to stderr live")
    g.add_argument("--run-dir", help="folder for the console log and results "
                                     "(default: a new folder under <cache>/runs)")
    return g


def _command(sub, name: str, func, help_text: str, description: str) -> argparse.ArgumentParser:
    """A subcommand that builds a variant: variant options, --json, -q, exit codes."""
    p = sub.add_parser(name, help=help_text, description=description, epilog=EPILOG,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    _variant_args(p)
    _common(p)
    p.set_defaults(func=func)
    return p


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="dmaharness",
        description="Build KASAN + DMA-API-debug kernels from Debian's linux-source, "
                    "boot them in QEMU, and find DMA buffers handled in ways x86 hides.",
        epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    _command(sub, "build", cmd_build, "build a kernel variant (cached by content)",
             "Build a kernel variant: linux-source-X.Y + patches/X.Y/series + --series "
             "patches, configured from tinyconfig and kconfig-fragments/. A variant already "
             "built is not rebuilt.")

    bt = _command(sub, "boot", cmd_boot, "build if needed, then boot in QEMU and watch the console",
                  "Boot a kernel variant under QEMU (TCG unless KVM really works) with the "
                  "harness's initramfs, and wait for the guest's end marker. Fails on panic, "
                  "hang or silence.")
    g = _boot_args(bt, timeout=300, help_timeout="wall-clock limit in seconds (300)", profile=True)
    g.add_argument("--modules", default="", help="comma-separated modules the init loads")
    g.add_argument("--workload", choices=("none", "agent", "shell-cmd"), default="none",
                   help="what the guest init runs after loading modules (none)")
    g.add_argument("--agent-args", default="", help="arguments of the guest agent")
    g.add_argument("--cmd", default="", help="shell command for --workload shell-cmd")

    ku = _command(sub, "kunit", cmd_kunit, "boot a variant and run its KUnit suites (KTAP parsed)",
                  "Boot the variant and collect the KTAP output of its KUnit suites (built in, "
                  "or modules given with --modules). Exit 0 when every case passed or was "
                  "skipped, 1 when one failed.")
    g = _boot_args(ku, timeout=300, help_timeout="wall-clock limit in seconds (300)")
    g.add_argument("--filter", default="", help="kunit.filter_glob: suites to run (default all)")
    g.add_argument("--modules", default="", help="KUnit test modules to load (comma-separated)")

    rn = _command(sub, "run", cmd_run, "boot with fake UVC cameras flooding the status endpoint",
                  "Start fake UVC cameras (fake-device/) on usbredir, boot the variant with them "
                  "attached, load uvcvideo and run the guest agent; report packets sent, events "
                  "counted in the guest and the delivered rate over time. With --case, run a "
                  "case's before and after variants and diff their kernel reports.")
    # one vCPU: under TCG on 2 host cores, -smp 2 halves the delivered status rate
    _boot_args(rn, timeout=120, help_timeout="seconds allowed beyond --duration (120)", smp=1,
               profile=True)
    g = rn.add_argument_group("flood")
    g.add_argument("--flood", default="control:max",
                   help="PATTERN[:RATE]: control, button, mixed, malformed or random; "
                        "RATE per second or max (default control:max)")
    g.add_argument("--duration", default=None,
                   help="flood and agent run time (20s; with --case, the case's own)")
    g.add_argument("--cameras", type=int, default=1, help="fake cameras, one usb-redir each (1)")
    g.add_argument("--hotplug", type=float, default=0,
                   help="unplug and replug each camera every S seconds (0: never)")
    g.add_argument("--seed", type=int, default=1, help="seed of the random/malformed patterns (1)")
    g.add_argument("--cycle-hz", type=float, default=0, help="agent close/open rate (0)")
    g.add_argument("--phys-hz", type=float, default=0, help="agent EVIOCGPHYS read rate (0)")
    g.add_argument("--agent-args", default="", help="more arguments for the guest agent")
    g = rn.add_argument_group("case (before/after diff)")
    g.add_argument("--case", type=Path, metavar="DIR|case.toml",
                   help="run a case's before and after variants and diff their reports "
                        "(exit 0 when the outcome matches the case's expectation, 1 when not)")
    g.add_argument("--runs", type=int, default=2, help="runs per variant with --case (2)")
    g.add_argument("--parallel", type=int, default=2,
                   help="guests booted at once with --case (2; one per core is about right)")

    bs = sub.add_parser(
        "bisect", help="find the patch of a series that brings a report in (or out)",
        description="Bisect a quilt series: prefix k is the variant with the first k patches "
                    "of --series applied (after patches/<version>/series). Both ends are "
                    "checked first (--good must not show the signature, --bad must), then "
                    "prefixes are binary-searched; each step builds incrementally through the "
                    "build cache, boots with the camera flood and the agent, and looks for the "
                    "signature among the kernel reports. --good < --bad finds the patch that "
                    "brings the report in; --good > --bad the one that takes it away. Verdicts: "
                    "good, bad, skip (build, patch or boot failure; never bad). Rerunning the "
                    "same command resumes from its log.",
        epilog=EPILOG.replace("  0    success", "  0    a culprit was found")
                     .replace("  1    the check's verdict is negative (a diff that does not "
                              "match its case)",
                              "  1    no single culprit: an end failed its check, or skipped "
                              "steps leave a range")
        + "\nthresholds (see harness/bisect.py): a step is bad after --min-hits runs that "
          "show the signature;\ngood once a bad kernel would have shown nothing in its clean "
          "runs with chance\n<= --max-miss, the chance per run estimated at the bad end.\n",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    bs.set_defaults(func=cmd_bisect)
    g = bs.add_argument_group("what to bisect")
    g.add_argument("--kernel", default="6.1", choices=kernel.SUPPORTED,
                   help="kernel version, from Debian's linux-source-X.Y (default 6.1)")
    g.add_argument("--series", type=Path, required=True, metavar="FILE",
                   help="the quilt series to bisect (applied after patches/<version>/series)")
    g.add_argument("--signature", required=True, metavar="TITLE|REGEX",
                   help="a report title as `dmaharness reports` prints it, or a Python regex "
                        "searched in titles")
    g.add_argument("--good", type=int, metavar="N",
                   help="prefix length without the signature (default 0)")
    g.add_argument("--bad", type=int, metavar="M",
                   help="prefix length with the signature (default: the whole series)")
    g.add_argument("--fragment", action="append", default=[], metavar="NAME|FILE",
                   help="kconfig fragment(s) instead of all of kconfig-fragments/")
    g.add_argument("--no-base-series", action="store_true",
                   help="do not apply patches/<version>/series first")
    g.add_argument("-j", "--jobs", type=int, help="make -j (default: number of CPUs)")
    g.add_argument("--force", action="store_true", help="rebuild variants even when cached")
    g.add_argument("--fresh", action="store_true", help="ignore the log of an earlier run")
    _common(bs)
    g = bs.add_argument_group("verdicts")
    g.add_argument("--runs", type=int, default=6, help="most runs per step (6)")
    g.add_argument("--endpoint-runs", type=int, default=4,
                   help="runs at each end; the bad end's estimate the repro chance (4)")
    g.add_argument("--parallel", type=int, default=2, help="guests booted at once (2)")
    g.add_argument("--min-hits", type=int, default=1,
                   help="runs showing the signature that make a step bad (1)")
    g.add_argument("--max-miss", type=float, default=0.05,
                   help="accepted chance that a good verdict misses a bad kernel (0.05)")
    _boot_args(bs, timeout=120, help_timeout="seconds allowed beyond --duration (120)", smp=1)
    g = bs.add_argument_group("flood (default: the --case's [run] table, else control:100 "
                              "for 10s, cycle 2/s, phys 200/s)")
    g.add_argument("--case", type=Path, metavar="DIR|case.toml",
                   help="take the flood settings from this case")
    g.add_argument("--flood", default=None, help="PATTERN[:RATE], as `run --flood`")
    g.add_argument("--duration", default=None, help="flood and agent run time per boot")
    g.add_argument("--cycle-hz", type=float, default=None, help="agent close/open rate")
    g.add_argument("--phys-hz", type=float, default=None, help="agent EVIOCGPHYS read rate")
    g.add_argument("--cameras", type=int, default=1, help="fake cameras (1)")
    g.add_argument("--hotplug", type=float, default=0, help="replug every S seconds (0)")
    g.add_argument("--seed", type=int, default=1, help="seed of random/malformed patterns (1)")
    g.add_argument("--agent-args", default="", help="more arguments for the guest agent")

    cp = sub.add_parser(
        "cache", help="what the cache folder holds; prune work trees and old runs",
        description="Without an action: the cache folder's size by part, and every variant's "
                    "work tree (its _build folder's size, when it was last used).  'prune' "
                    "removes the work trees of all but the --keep most recently used built "
                    "variants of each kernel version (their artifacts stay, so boots and "
                    "cached builds still work; a pruned variant rebuilds incrementally from a "
                    "kept one), and with --runs-older-than the run folders older than that.  "
                    "A tree that a build is using is left alone.",
        epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    cp.add_argument("action", nargs="?", choices=("list", "prune"), default="list")
    cp.add_argument("--keep", type=_count, default=1, metavar="N",
                    help="prune: work trees kept per kernel version, most recently used first (1)")
    cp.add_argument("--runs-older-than", type=float, metavar="DAYS",
                    help="prune: also remove run folders (runs/) older than DAYS")
    cp.add_argument("--dry-run", action="store_true", help="prune: say what would go, remove nothing")
    _common(cp)
    cp.set_defaults(func=cmd_cache)

    # listed for --help; main() hands their argv to their own parsers
    sub.add_parser("reports", add_help=False,
                   help="list the kernel reports (KASAN, DMA-API, WARNING, ...) in a console log")
    sub.add_parser("diff", add_help=False,
                   help="diff the kernel reports of console logs: before -- after")
    sub.add_parser("bisect-run", add_help=False,
                   help="`git bisect run` helper: test HEAD of your own kernel checkout "
                        "(exit 0 good, 1 bad, 125 skip)")
    return p


def _on_sigterm(signum, frame):
    raise KeyboardInterrupt


def _bisect_run(argv: list[str]) -> int:
    from . import bisectrun       # imports cli: loaded on use
    return bisectrun.main(argv)


DELEGATED = {"reports": lambda argv: reports.main(argv), "diff": lambda argv: diff.main(argv),
             "bisect-run": _bisect_run}


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] in DELEGATED:
        # subcommands with their own argparse (and --help)
        return DELEGATED[argv[0]](argv[1:])
    a = parser().parse_args(argv)
    if getattr(a, "command", None) == "run":
        a.duration_given = a.duration is not None
        a.duration = a.duration or "20s"
    signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        return a.func(a)
    except HarnessError as e:
        if getattr(a, "json", False):
            print(json.dumps({"version": JSON_VERSION, "command": a.command, **e.payload,
                              "ok": False, "error": e.to_json()}, indent=1))
        sys.stderr.write(f"\ndmaharness {a.command}: error: {e.message}\n")
        if e.detail and not getattr(a, "quiet", False):
            sys.stderr.write(e.detail.rstrip() + "\n")
        return e.exit_code
    except KeyboardInterrupt:
        proc.stop_all()
        sys.stderr.write(f"\ndmaharness {a.command}: interrupted; nothing is left running, "
                         "and the cache stays consistent (rerun to continue)\n")
        return errors.EXIT_INTERRUPTED
