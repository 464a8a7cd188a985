"""dmaharness command line: parse arguments into requests, print results.

Nothing else lives here: each subcommand turns its arguments into a typed
request (harness.pipeline, harness.checks.caserun, harness.checks.bisectjob,
harness.boot.settings), calls one function of a core module and prints what it
returns, as text or as one JSON object (--json).  No module imports this one.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import shlex
import signal
import sys
import time
import traceback
from pathlib import Path
from typing import Any, Callable

from ..checks import bisect, bisectjob, caserun, diff, pointing, sweep, sweeptable
from ..kernel import cache, kbuild, profiles
from ..campaign import campaign, kcidb, remote
from .. import errors, jsonout, paths, pipeline, proc
from ..boot import initramfs, settings
from . import logcli
from ..output import htmlreport, sweephtml
from ..devices import usbdevices
from ..kernel import ccachestats
from ..errors import HarnessError
from ..pipeline import VariantSpec
from ..progress import Progress, fmt_duration

EPILOG = """\
exit codes:
  0    success
  1    the check's verdict is negative (a diff that does not match its case)
  2    usage error
  3    environment: a package, tool or kernel source is missing (make deps)
  4    bad input: a series, patch, fragment, case or config option is wrong
  5    the kernel or a C helper failed to build
  6    the guest failed: panic, hang, silence, missing end marker, bad status
  7    the fake device failed (crashed, never listened)
  8    a campaign is incomplete: jobs are missing or failed (collect lists them)
  130  interrupted

run settings (boot and flood options): defaults < a case's [run] table < the
flags given on the command line.

The cache folder is $DMAHARNESS_CACHE, else ~/.cache/dmaharness.
"""


# --- option groups, declared once ------------------------------------------------

def _typed(name: str) -> Callable[[str], Any]:
    """argparse type: the setting's own parser (harness.boot.settings)."""
    def parse(text: str):
        try:
            return settings.SETTINGS[name].parse(text)
        except HarnessError as e:
            raise argparse.ArgumentTypeError(e.message) from None
    parse.__name__ = name
    return parse


def _count(text: str) -> int:
    """argparse type: a whole number, 0 or more."""
    try:
        n = int(text)
    except ValueError:
        n = -1
    if n < 0:
        raise argparse.ArgumentTypeError(f"not a whole number >= 0: {text!r}")
    return n


def _setting(g, name: str, *, default_shown: Any = None, help_: str | None = None,
             flag: str | None = None, **kw) -> None:
    """A run setting as a flag whose absence means "not given" (None)."""
    s = settings.SETTINGS[name]
    shown = settings.default(name) if default_shown is None else default_shown
    if isinstance(shown, bool):
        g.add_argument(flag or "--" + name.replace("_", "-"), action="store_true", default=None,
                       help=help_ or s.help, **kw)
        return
    g.add_argument(flag or "--" + name.replace("_", "-"), type=_typed(name), default=None,
                   help=f"{help_ or s.help} ({shown})", **kw)


def variant_group(p, *, kernel: bool = True, series: bool = True, tree: bool = True) -> None:
    g = p.add_argument_group("variant (what kernel to build)")
    if kernel:
        g.add_argument("--kernel", choices=kbuild.SUPPORTED, default=None,
                       help="kernel version, from Debian's linux-source-X.Y (default 6.1)")
    if tree:
        g.add_argument("--tree", type=Path, metavar="DIR",
                       help="your own Linux git checkout instead of Debian's source (default "
                            "for bisect-run: the current folder): its HEAD and local changes "
                            "are built in a mirror in the cache; the checkout is never written. "
                            "The detector series is patches/<its version>/series, else the "
                            "nearest version's")
    if series:
        g.add_argument("--series", action="append", type=Path, default=[], metavar="FILE",
                       help="a quilt-style series applied after the base (detector) series "
                            "(repeatable; a case's series, or your own)")
        g.add_argument("--prefix", type=_count, metavar="N",
                       help="apply only the first N patches of the --series patches")
    _setting(g, "profile", metavar="NAME",
             help_="debug profile: " + ", ".join(profiles.names())
                   + " (what each finds and costs: `dmaharness profiles`; a case's [run] "
                     "may name one)")
    g.add_argument("--fragment", action="append", default=[], metavar="NAME|FILE",
                   help="kconfig fragment(s) to use instead of the profile's (all of "
                        "kconfig-fragments/ for dma; repeatable; NAME means "
                        "kconfig-fragments/NAME.config)")
    g.add_argument("--no-base-series", "--no-detector", dest="no_base_series",
                   action="store_true",
                   help="do not apply patches/<version>/series, the detector (a stock kernel; "
                        "with --tree the detector and kunit fragments are left out too unless "
                        "--fragment is given)")
    g.add_argument("-j", "--jobs", type=int, help="make -j (default: number of CPUs)")
    g.add_argument(ccachestats.FLAG, dest="ccache_remote", metavar="URL",
                   help="share compiled objects with other machines (a campaign's workers) "
                        "through ccache's remote storage: redis://HOST[:PORT], "
                        "redis+unix:/SOCKET, http://HOST[:PORT]/PATH or file:/DIR, given to "
                        "ccache as CCACHE_REMOTE_STORAGE; not part of the variant key "
                        f"(default ${ccachestats.ENV}; without either, a CCACHE_REMOTE_STORAGE "
                        "of your environment is used as it is).  The build's ccache hits and "
                        "misses are in its JSON (ccache)")
    g.add_argument("--force", action="store_true", help="rebuild even when cached")


def boot_group(p, *, timeout_help: str, timeout: float | None = None, smp: int | None = None,
               profile: bool = False, run_dir: bool = True):
    g = p.add_argument_group("boot (run settings)")
    _setting(g, "accel", metavar="auto|tcg|kvm")
    _setting(g, "timeout", help_=timeout_help, default_shown=timeout, metavar="S")
    _setting(g, "silence", metavar="S")
    _setting(g, "memory", metavar="MIB")
    _setting(g, "smp", default_shown=smp, metavar="N")
    _setting(g, "append", metavar="ARGS")
    _setting(g, "qemu_opts", help_="more QEMU options, split like a shell would (e.g. "
             "'-icount shift=0,sleep=off' to make the guest clock count instructions)",
             metavar="OPTS")
    if profile:
        _setting(g, "insn_profile", help_="count the guest instructions of every kernel "
                 "function (a QEMU TCG plugin, bench/insnprof; implies --accel tcg): "
                 "<run-dir>/insnprof.json, and the top functions in the result")
    _setting(g, "console")
    if run_dir:
        g.add_argument("--run-dir", type=Path,
                       help="folder for the console log and results (default: a new folder "
                            "under <cache>/runs)")
    return g


def flood_group(p, *, title: str = "flood (run settings)"):
    g = p.add_argument_group(title)
    metavars = {"flood": "PATTERN[:RATE]", "duration": "TIME", "cycle_hz": "HZ",
                "phys_hz": "HZ", "cameras": "N", "hotplug": "S", "seed": "N", "agent_args": "ARGS"}
    for name, metavar in metavars.items():
        _setting(g, name, metavar=metavar)
    _setting(g, "fail_nth", metavar="PATHS", nargs="?", const=settings.FAIL_NTH_PATHS,
             default_shown="off; without PATHS: probe,disconnect")
    _setting(g, "fail_nth_max", metavar="N")
    g.add_argument("--device", dest="devices", action="append", default=None,
                   metavar="NAME|FILE", help=settings.SETTINGS["devices"].help)
    _setting(g, "capture")
    g.add_argument("--usb-host", dest="usb_host", action="append", default=None,
                   metavar="VID:PID|BUS-DEV", help=settings.SETTINGS["usb_host"].help)
    g.add_argument("--case", type=Path, metavar="DIR|case.toml",
                   help="a case: its [run] table gives the run settings that no flag gives")
    return g


def output_group(p) -> None:
    p.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    p.add_argument("--json-out", type=Path, metavar="FILE",
                   help="also write that JSON object to FILE, whole or not at all (also on "
                        "an error: then with \"ok\": false); what a campaign's jobs do")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress on stderr")


def variant_spec(a, *, series_: bool = True) -> VariantSpec:
    ccachestats.set_flag(getattr(a, "ccache_remote", None))     # every build of this process
    return VariantSpec(kernel=getattr(a, "kernel", None), tree=a.tree,
                       series=tuple(a.series) if series_ else (),
                       prefix=a.prefix if series_ else None, fragments=tuple(a.fragment),
                       profile=a.profile,
                       base_series=not a.no_base_series, jobs=a.jobs, force=a.force)


def flags(a) -> dict[str, Any]:
    """The run settings given on the command line (typed; absent ones are None)."""
    return {k: tuple(v) if isinstance(v, list) else v for k in settings.SETTINGS
            if (v := getattr(a, k, None)) is not None}


# --- printing ------------------------------------------------------------------------

def _emit(a, payload: dict, text: str) -> None:
    if getattr(a, "json_out", None):
        _write_json_out(a.json_out, payload)
    print(jsonout.dumps(payload) if a.json else text)


def _write_json_out(path: Path, payload: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(jsonout.dumps(payload) + "\n")
    os.replace(tmp, path)


def _profile_lines(payload: dict) -> str:
    if "insn_profile" not in payload:
        return ""
    prof = payload["insn_profile"]
    if not prof:
        return "\n  instruction profile: none (QEMU did not exit by itself)"
    top = ", ".join(f"{t['symbol']} {100 * t['share']:.1f}%" for t in prof["top"][:5])
    return (f"\n  guest instructions  {prof['instructions']:,} (top: {top})"
            f"\n  profile  {prof['file']}")


def _mib(n: int) -> str:
    return f"{n / 2**20:,.0f} MiB"


# --- commands ----------------------------------------------------------------------------

def cmd_build(a) -> int:
    t, res = pipeline.build_command(variant_spec(a), Progress(quiet=a.quiet))
    word = "cached" if res.cached else f"built in {res.seconds:.1f}s"
    _emit(a, {"command": "build", "ok": True, **t.to_json(), **res.to_json()},
          f"{res.artifacts.key}: {word}\n  bzImage   {res.artifacts.bzimage}\n"
          f"  vmlinux   {res.artifacts.vmlinux}\n  build log {res.artifacts.build_log}")
    return errors.EXIT_OK


def _boot_settings(a) -> settings.BootSettings:
    # a whole boot without a flood (boot, kunit): 300 s, two vCPUs
    return settings.resolve(flags(a), boot=settings.BootSettings(timeout=300.0, smp=2))[0]


def _console(b: settings.BootSettings):
    return sys.stderr.write if b.console else None


def cmd_boot(a) -> int:
    cfg = initramfs.RunConfig(modules=tuple(m for m in a.modules.split(",") if m),
                              workload=a.workload, agent_args=a.guest_agent_args,
                              workload_cmd=a.cmd)
    b = _boot_settings(a)
    out = pipeline.boot_command(pipeline.BootCommand(variant_spec(a), cfg, b, "boot",
                                                     run_dir=a.run_dir),
                                Progress(quiet=a.quiet), on_output=_console(b))
    result = out.result
    facts = ", ".join(k for k, v in result.watch.facts.items() if v) or "none"
    _emit(a, out.payload,
          f"{out.build.artifacts.key}: {result.describe()} in {result.wall:.1f}s ({result.accel})\n"
          f"  seen     {facts}\n  console  {result.console}\n"
          f"  result   {out.run_dir / 'result.json'}" + _profile_lines(out.payload))
    return errors.EXIT_OK


def cmd_kunit(a) -> int:
    cfg = initramfs.RunConfig(modules=tuple(m for m in a.modules.split(",") if m))
    b = _boot_settings(a)
    out = pipeline.boot_command(pipeline.BootCommand(
        variant_spec(a), cfg, b, "kunit", append=f"kunit.filter_glob={a.filter}" if a.filter else "",
        run_dir=a.run_dir), Progress(quiet=a.quiet), on_output=_console(b))
    ktap = out.ktap
    c = ktap.counts()
    lines = [f"{out.build.artifacts.key}: KUnit {c['passed']} passed, {c['failed']} failed, "
             f"{c['skipped']} skipped in {len(ktap.suites)} suite(s)"]
    for s in ktap.suites:
        lines.append(f"  {s.status:8} {s.name} ({', '.join(f'{v} {k}' for k, v in s.counts().items())})")
    for f in ktap.failures():
        lines.append(f"  FAILED   {f}")
    lines.append(f"  console  {out.result.console}")
    _emit(a, out.payload, "\n".join(lines))
    return errors.EXIT_OK if ktap.ok else errors.EXIT_VERDICT


def cmd_run(a) -> int:
    if a.case:
        return cmd_run_case(a)
    b, f = settings.resolve(flags(a))
    if a.bisect_signature:
        payload = bisectjob.bisect_run_job(
            pipeline.RunRequest(variant_spec(a), b, f, a.run_dir), a.bisect_signature,
            Progress(quiet=a.quiet))
        o = payload["bisect_run"]
        _emit(a, payload, f"{payload['key']} (prefix {payload['prefix']}): {o['status']}"
              + (f" {', '.join(o['titles'])}" if o["titles"] else "")
              + (f"\n  {o['detail']}" if o["detail"] else ""))
        return errors.EXIT_OK
    fr = pipeline.run_flood(pipeline.RunRequest(variant_spec(a), b, f, a.run_dir),
                            Progress(quiet=a.quiet), on_output=_console(b))
    s, payload = fr.summary, fr.payload
    if payload.get("devices") is not None:
        _emit(a, payload, _devices_text(fr, f))
        caps = [d.get("capture") for d in payload["devices"]] if f.capture else []
        return errors.EXIT_VERDICT if any(not (c and c["same"]) for c in caps) \
            else errors.EXIT_OK
    _emit(a, payload,
          f"{fr.build.artifacts.key}: {f.flood.pattern}:{f.flood.rate} flood, {s['cameras']} camera(s), "
          f"{f.duration:g}s ({fr.result.accel})\n"
          f"  sent by the fake camera(s)   {s['sent']}\n"
          f"  counted in the guest         {s['guest_counted']} "
          f"({s['guest_events_emitted']} control events emitted, {s['guest_key_events']} key events)\n"
          f"  delivered rate               {s['guest_rate_per_s']:.0f}/s "
          f"({100 * s['ratio_to_ceiling']:.0f}% of the {s['ceiling_per_s']}/s ceiling)\n"
          f"  phys reads, open/close       {s['phys_reads']}, {s['cycles']}\n"
          f"  fake device CPU / QEMU CPU   {s['fake_device_cpu_s']:.2f}s / {s['qemu_cpu_s']:.1f}s\n"
          f"  console  {fr.result.console}\n  result   {fr.run_dir / 'result.json'}"
          + _profile_lines(payload) + (f"\n{fr.checks.format_text()}" if fr.checks else ""))
    return errors.EXIT_OK


def _devices_text(fr, f) -> str:
    """`run --device/--usb-host`: per device, its drivers, nodes and endpoint counts."""
    devs = fr.payload["devices"]
    real = sum(1 for d in devs if d.get("passthrough"))
    what = ", ".join(x for x in (f"{len(devs) - real} from profiles" if len(devs) > real else "",
                                 f"{real} passed through from this host" if real else "") if x)
    out = [f"{fr.build.artifacts.key}: {len(devs)} USB device(s) ({what}), "
           f"{f.duration:g}s ({fr.result.accel})"]
    for d, cam in zip(fr.payload["devices"], fr.payload["cameras"]):
        sent = {e["endpoint"]: e["sent"] for e in cam.get("endpoints", [])}
        where = f"at {d['found']}" if d["found"] else "NOT FOUND in the guest"
        out.append(f"  {d['name']} ({d['id']}) {where}")
        if d["interfaces"]:
            out.append("    drivers    " + ", ".join(f"{k}: {v}" for k, v in d["interfaces"].items()))
        if d["opened"]:
            out.append("    opened     " + ", ".join(d["opened"]))
        for ep, n in d["interrupt_completions"].items():
            out.append(f"    {ep}       {n} completions in the guest (usbmon)"
                       + ("" if d.get("passthrough") else
                          f", {sent.get(int(ep, 16), 0)} packets sent"))
        if f.capture:
            c = d.get("capture")
            out.append("    capture    " + ("none came back from the guest" if not c else
                       f"{'same as its profile' if c['same'] else 'DIFFERS from its profile'}"
                       f" (dmaharness-capture exit {c['exit']}): {c['file']}"))
            if c and not c["same"]:
                out += [f"      {x}" for x in c["compare"][1:12]]
        for ln in d.get("dmesg", []):
            out.append(f"    dmesg      {ln}")
    dm = fr.payload.get("dmesg") or {}
    if dm:
        out.append("  dmesg    " + ("clean" if dm["clean"] else "NOT clean")
                   + (f"; {len(dm['sharing_findings'])} cache-line sharing finding(s) of the "
                      "detector" if dm["sharing_findings"] else ""))
        out += [f"    report   {t}" for t in dm["reports"]]
    out.append(f"  console  {fr.result.console}\n  result   {fr.run_dir / 'result.json'}")
    return "\n".join(out)


def cmd_run_case(a) -> int:
    prog = Progress(quiet=a.quiet)
    if a.case_variant or a.case_run:
        if not (a.case_variant and a.case_run):
            raise errors.InputError("--case-variant and --case-run go together (one run of "
                                    "one variant: a campaign's job)")
        payload = caserun.run_case_job(caserun.CaseJobRequest(
            a.case, variant_spec(a), flags(a), a.case_variant, a.case_run, a.run_dir), prog)
        sigs = payload["signatures"]
        _emit(a, payload, f"{payload['job']['case']} {a.case_variant} run {a.case_run}: "
              + (f"{len(sigs)} report title(s)" if payload["ok"] else
                 f"FAILED: {payload['failure']}")
              + "".join(f"\n  {s['count']:>5}  {s['title']}" for s in sigs)
              + f"\n  console  {payload['console']}")
        return errors.EXIT_OK if payload["ok"] else errors.EXIT_GUEST
    req = caserun.CaseRequest(a.case, variant_spec(a), flags(a), runs=a.runs,
                              parallel=a.parallel, run_dir=a.run_dir)
    res = caserun.run_case(req, prog)
    htmlreport.write_case(res)
    _emit(a, res.to_json(), diff.format_outcome(res.outcome)
          + f"\n  logs     {res.folder}/<variant>-<run>/console.log\n  json     {res.outcome_json}"
            f"\n  report   {res.html}")
    return diff.exit_code(res.outcome.matches)


def cmd_plan(a) -> int:
    extra = list(a.run_args)
    if a.what == "bisect":
        if a.case is not None:
            raise errors.HarnessError("plan bisect takes --series and --signature, not a CASE")
        if not a.series or not a.signature:
            raise errors.HarnessError("plan bisect needs --series FILE and --signature TITLE|REGEX")
        policy = bisect.Policy(max_runs=a.runs or 6, batch=a.parallel,
                               endpoint_runs=a.endpoint_runs, min_hits=a.min_hits,
                               max_miss=a.max_miss)
        c = campaign.plan_bisect(campaign.BisectPlan(a.series, a.signature, a.output, a.good,
                                                     a.bad, policy, tuple(extra)))
        ab = c.about
        _emit(a, {"command": "plan", "ok": True, **c.to_json(), "folder": str(c.folder)},
              f"campaign {c.folder}: bisection of {ab['series']} ({len(ab['patches'])} patches, "
              f"good {ab['good']}, bad {ab['bad']}) for {ab['signature']!r}\n"
              "  jobs     none yet: each step's runs are added as the search needs them\n"
              f"  run      dmaharness campaign {c.folder} --jobs N | --ssh HOSTS | --slurm\n"
              f"  merge    dmaharness collect {c.folder}")
        return errors.EXIT_OK
    if a.what == "sweep":
        if a.case is not None or a.series or a.signature:
            raise errors.HarnessError("plan sweep takes --devices and --catalogue, not a CASE "
                                      "or --series/--signature")
        devices = tuple(d for part in a.devices for d in part.split(",") if d)
        c = campaign.plan_sweep(campaign.SweepPlan(a.output, devices, a.catalogue,
                                                   tuple(extra)))
        _emit(a, {"command": "plan", "ok": True, **c.to_json(), "folder": str(c.folder)},
              f"campaign {c.folder}: {len(c.jobs)} jobs (the boot without a device, then "
              f"{', '.join(c.about['devices'])})\n"
              f"  jobs     {c.folder / campaign.JOBS_FILE}\n"
              f"  run      dmaharness campaign {c.folder} --jobs N | --ssh HOSTS | --slurm\n"
              f"  merge    dmaharness collect {c.folder}")
        return errors.EXIT_OK
    if a.case is None or a.series or a.signature or a.devices or a.catalogue:
        raise errors.HarnessError("plan case takes a CASE folder (and no --series, "
                                  "--signature, --devices, --catalogue)")
    c = campaign.plan_case(campaign.CasePlan(a.case, a.runs or 2, a.output, tuple(extra)))
    _emit(a, {"command": "plan", "ok": True, **c.to_json(), "folder": str(c.folder)},
          f"campaign {c.folder}: {len(c.jobs)} jobs (case {c.about['case']}: "
          f"{', '.join(c.about['variants'])} x {a.runs} runs)\n"
          f"  jobs     {c.folder / campaign.JOBS_FILE}\n"
          f"  run      dmaharness campaign {c.folder} --jobs N   (or the lines of jobs.txt, "
          "anywhere, from the campaign folder)\n"
          f"  merge    dmaharness collect {c.folder}")
    return errors.EXIT_OK


def _collected(a, col: campaign.Collected, extra: dict | None = None) -> int:
    if a.junit:
        a.junit.write_text(campaign.junit(col))
    if a.kcidb and col.campaign.kind != "case":
        raise errors.InputError("--kcidb exports a case campaign's runs; a bisection's "
                                "result is its culprit (--json)")
    if a.kcidb:
        try:
            doc = kcidb.export(col, a.kcidb_origin)
        except ValueError as e:
            raise errors.InputError(f"--kcidb-origin: {e}") from None
        bad = kcidb.validate(doc)
        if bad:                                 # a dmaharness bug: say so, write nothing
            raise errors.HarnessError("the KCIDB export breaks the schema: " + "; ".join(bad[:5]))
        _write_json_out(a.kcidb, doc)
    payload = {**col.to_json(), **(extra or {})}
    if col.incomplete:
        _emit(a, payload, campaign.format_incomplete(col))
        return errors.EXIT_INCOMPLETE
    if col.campaign.kind == "sweep":
        sw = col.sweep
        html = col.campaign.folder / "sweep.html"
        payload["html"] = str(html)
        sweephtml.write(html, {**payload, **sw.to_json()})
        _emit(a, payload, sweeptable.format_text(sw.table, sw.runs)
              + (f"  (no layouts: the sweep kernel {sw.key} was built on the workers, not here)\n"
                 if not sw.layout else "")
              + f"  html     {html}\n  logs     {col.campaign.folder}/consoles/<device>.log"
              + (f"\n  junit    {a.junit}" if a.junit else ""))
        return errors.EXIT_OK if sw.ok else errors.EXIT_VERDICT
    if col.campaign.kind == "bisect":
        ab = col.campaign.about
        _emit(a, payload, bisect.format_result(col.bisection, ab["patches"], ab["signature"])
              + f"\n  jobs     {len(col.jobs)}, all back ({col.campaign.folder}/results)"
              + (f"\n  junit    {a.junit}" if a.junit else ""))
        return errors.EXIT_OK if col.bisection.found else errors.EXIT_VERDICT
    _emit(a, payload, diff.format_outcome(col.outcome)
          + f"\n  jobs     {len(col.jobs)}, all back ({col.campaign.folder}/results)"
          + (f"\n  junit    {a.junit}" if a.junit else ""))
    return diff.exit_code(col.outcome.matches)


def cmd_collect(a) -> int:
    return _collected(a, campaign.collect(a.folder))


def cmd_campaign(a) -> int:
    prog = Progress(quiet=a.quiet)
    c = campaign.load(a.folder)
    t0 = time.monotonic()
    where: dict = {"engine": "local"}
    last: dict = {}
    if a.slurm is not None:
        if a.ssh or a.pin or a.jobs or a.remote_dir or a.no_prepare:
            raise errors.HarnessError("--slurm takes none of --ssh, --pin, --jobs, "
                                      "--remote-dir, --no-prepare (Slurm places the jobs)")
        try:
            extra = shlex.split(a.sbatch or "")
        except ValueError as e:
            raise errors.HarnessError(f"--sbatch {a.sbatch!r}: {e}") from None
        where = {"engine": "slurm", "partition": a.slurm or None}

        def engine(c, first):
            info = campaign.run_slurm(c, a.slurm, extra, prog, wait=not a.no_wait)
            last.update(info)
            if info["slurm_job"] and not a.no_wait:
                prog.note(f"[campaign] Slurm job {info['slurm_job']}: no task left after "
                          f"{fmt_duration(time.monotonic() - t0)}")
    elif a.ssh:
        if a.pin:
            raise errors.HarnessError("--pin is for a campaign run here; not with --ssh")
        hosts = remote.parse_hosts(a.ssh)
        where = {"engine": "ssh", "hosts": [h.name for h in hosts]}

        def engine(c, first):
            last["parallel_exit"] = campaign.run_ssh(
                c, hosts, a.jobs or None, prog, a.remote_dir or remote.DEFAULT_REMOTE_DIR,
                prepare=first and not a.no_prepare)
    else:
        if a.remote_dir or a.no_prepare:
            raise errors.HarnessError("--remote-dir and --no-prepare go with --ssh")
        if a.sbatch or a.no_wait:
            raise errors.HarnessError("--sbatch and --no-wait go with --slurm")

        def engine(c, first):
            last["parallel_exit"] = campaign.run_local(c, a.jobs or os.cpu_count() or 1, prog,
                                                       pin=a.pin)
    if c.kind == "bisect":
        if a.no_wait:                  # one step submitted; rerun to go on
            col = campaign.collect(c.folder)
            if col.bisection is None and col.next_jobs:
                engine(campaign.add_jobs(c, col.next_jobs), True)
        else:
            campaign.drive_bisect(c, engine, prog)
    else:
        engine(c, True)
    wall = time.monotonic() - t0
    if a.no_wait:
        _emit(a, {"command": "campaign", "ok": True, "campaign": str(c.folder), **where, **last},
              f"campaign {c.folder}: "
              + (f"{last['submitted']} jobs submitted as Slurm array job {last['slurm_job']}"
                 if last.get("slurm_job") else "nothing to submit")
              + f"\n  merge    dmaharness collect {c.folder}   (when squeue shows none "
              "of its tasks" + ("; then campaign again for the next step)" if c.kind == "bisect"
                                else ")"))
        return errors.EXIT_OK
    if "parallel_exit" in last:
        prog.note(f"[campaign] GNU parallel exited {last['parallel_exit']} after "
                  f"{fmt_duration(wall)}")
    return _collected(a, campaign.collect(a.folder),
                      {"command": "campaign", **where, **last, "wall_s": round(wall, 1)})


def cmd_bisect(a) -> int:
    prog = Progress(quiet=a.quiet)
    policy = bisect.Policy(max_runs=a.runs, batch=a.parallel, endpoint_runs=a.endpoint_runs,
                           min_hits=a.min_hits, max_miss=a.max_miss)
    policy.check()
    req = bisectjob.BisectRequest(variant_spec(a, series_=False), a.series, a.signature,
                                  flags(a), case=a.case, good=a.good, bad=a.bad,
                                  policy=policy, fresh=a.fresh, run_dir=a.run_dir)
    out = bisectjob.run_bisect(req, prog)
    _emit(a, out.payload, bisect.format_result(out.result, out.names, a.signature)
          + ("\n" + pointing.format_pointing(out.pointing, out.names, out.result.culprit)
             if out.pointing else "")
          + f"\n  log      {out.log}\n  result   {out.folder / 'result.json'}")
    return errors.EXIT_OK if out.found else errors.EXIT_VERDICT


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


def cmd_profiles(a) -> int:
    out, lines = [], []
    for prof in profiles.table().values():
        frags = [f.name for f in prof.fragments()]
        series_ = {v: str(f.relative_to(paths.REPO)) for v in kbuild.SUPPORTED
                   if (f := prof.series_file(v))}
        out.append({"name": prof.name, "description": prof.description, "finds": prof.finds,
                    "costs": prof.costs, "fragments": frags, "series": series_,
                    "run": dict(prof.run)})
        lines.append(f"{prof.name}{' (default)' if prof.name == profiles.DEFAULT else ''}:"
                     f" {prof.description}")
        lines.append(f"  finds:     {prof.finds}")
        lines.append(f"  costs:     {prof.costs}")
        lines.append(f"  fragments: {', '.join(frags)}")
        if series_:
            lines.append("  series:    " + ", ".join(series_.values()))
        if prof.run:
            lines.append("  run:       " + ", ".join(f"{k}={v}" for k, v in prof.run.items()))
    _emit(a, {"command": "profiles", "ok": True, "profiles": out}, "\n".join(lines))
    return errors.EXIT_OK


def cmd_sweep(a) -> int:
    prog = Progress(quiet=a.quiet)
    base = sweeptable.load_sites(a.baseline) if a.baseline else None
    devices = tuple(d for part in a.devices for d in part.split(",") if d)
    b = settings.resolve(flags(a), boot=settings.BootSettings(timeout=300.0, smp=1))[0]
    if a.job:
        if devices or a.list or a.baseline:
            raise errors.HarnessError("sweep --job takes none of --devices, --list, --baseline")
        payload = sweep.sweep_job(sweep.SweepRequest(variant_spec(a, series_=False), b, (),
                                                     a.catalogue, 1, a.run_dir), a.job, prog)
        d = payload["device"]
        _emit(a, payload,
              f"{payload['build']['key']}: {d['device']} {d['state']}"
              + (f" ({d['reason']})" if d["reason"] else "")
              + f", {len(d['reports'])} report(s)" + (f"\n  console  {d['console']}"
                                                      if d["console"] else ""))
        return errors.EXIT_OK
    res = sweep.sweep(sweep.SweepRequest(variant_spec(a, series_=False), b, devices,
                                         a.catalogue, a.parallel, a.run_dir,
                                         plan_only=a.list), prog)
    payload = res.to_json()
    if a.list:
        lines = [f"{res.build.artifacts.key}: {len(res.runs)} device(s)"]
        lines += [f"  {r.state:8} {r.device:<20} {r.klass:<8} {r.reason}".rstrip()
                  for r in res.runs]
        _emit(a, payload, "\n".join(lines))
        return errors.EXIT_OK
    text = sweeptable.format_text(res.table, res.runs)
    code = errors.EXIT_OK if res.ok else errors.EXIT_VERDICT
    if base is not None:
        d = sweeptable.diff(base, payload["sites"])
        payload["baseline"] = {"file": str(a.baseline), **d.to_json()}
        text += f"\nagainst {a.baseline}:\n" + d.format_text()
        code = errors.EXIT_VERDICT if d.differs else code
    html = res.run_dir / "sweep.html"
    payload["html"] = str(html)
    sweephtml.write(html, payload)
    text += (f"\n  json     {res.run_dir / 'sweep.json'}\n  html     {html}"
             f"\n  logs     {res.run_dir}/<device>/console.log")
    jsonout.write(res.run_dir / "sweep.json", payload)
    _emit(a, payload, text)
    return code


# --- the parser --------------------------------------------------------------------------

def _command(sub, name: str, func, help_text: str, description: str, **variant) -> argparse.ArgumentParser:
    """A subcommand that builds a variant: variant options, --json, -q, exit codes."""
    p = sub.add_parser(name, help=help_text, description=description, epilog=EPILOG,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    variant_group(p, **variant)
    output_group(p)
    p.set_defaults(func=func)
    return p


def kcidb_args(p) -> None:
    p.add_argument("--kcidb", type=Path, metavar="FILE",
                   help="also write the results as a KCIDB I/O document (KernelCI's schema "
                        f"v{kcidb.MAJOR}.{kcidb.MINOR}: checkouts, builds, one "
                        "test per job and per expected outcome), for `kcidb-submit`")
    p.add_argument("--kcidb-origin", default=kcidb.ORIGIN, metavar="NAME",
                   help=f"the KCIDB origin: the ids' prefix ({kcidb.ORIGIN}; your CI system's "
                        "name as KCIDB knows it)")


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="dmaharness",
        description="Build KASAN + DMA-API-debug kernels from Debian's linux-source (or your "
                    "own checkout), boot them in QEMU, and find DMA buffers handled in ways "
                    "x86 hides.",
        epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    _command(sub, "build", cmd_build, "build a kernel variant (cached by content)",
             "Build a kernel variant: linux-source-X.Y (or --tree) + patches/X.Y/series + "
             "--series patches, configured from tinyconfig and kconfig-fragments/. A variant "
             "already built is not rebuilt.")

    bt = _command(sub, "boot", cmd_boot, "build if needed, then boot in QEMU and watch the console",
                  "Boot a kernel variant under QEMU (TCG unless KVM really works) with the "
                  "harness's initramfs, and wait for the guest's end marker. Fails on panic, "
                  "hang or silence.")
    g = boot_group(bt, timeout_help="wall-clock limit in seconds", timeout=300, smp=2,
                   profile=True)
    g.add_argument("--modules", default="", help="comma-separated modules the init loads")
    g.add_argument("--workload", choices=("none", "agent", "shell-cmd"), default="none",
                   help="what the guest init runs after loading modules (none)")
    g.add_argument("--agent-args", dest="guest_agent_args", default="",
                   help="arguments of the guest agent (--workload agent)")
    g.add_argument("--cmd", default="", help="shell command for --workload shell-cmd")

    ku = _command(sub, "kunit", cmd_kunit, "boot a variant and run its KUnit suites (KTAP parsed)",
                  "Boot the variant and collect the KTAP output of its KUnit suites (built in, "
                  "or modules given with --modules). Exit 0 when every case passed or was "
                  "skipped, 1 when one failed.")
    g = boot_group(ku, timeout_help="wall-clock limit in seconds", timeout=300, smp=2)
    g.add_argument("--filter", default="", help="kunit.filter_glob: suites to run (default all)")
    g.add_argument("--modules", default="", help="KUnit test modules to load (comma-separated)")

    rn = _command(sub, "run", cmd_run, "boot with fake UVC cameras flooding the status endpoint",
                  "Start fake UVC cameras (fake-device/) on usbredir, boot the variant with them "
                  "attached, load uvcvideo and run the guest agent; report packets sent, events "
                  "counted in the guest and the delivered rate over time. With --case, run a "
                  "case's before and after variants and diff their kernel reports (exit 0 when "
                  "the outcome matches the case's expectation, 1 when not).")
    boot_group(rn, timeout_help="seconds allowed beyond --duration", profile=True)
    flood_group(rn)
    g = rn.add_argument_group("case (before/after diff, with --case)")
    g.add_argument("--runs", type=int, default=2, help="runs per variant (2)")
    g.add_argument("--parallel", type=int, default=2,
                   help="guests booted at once (2; one per core is about right)")
    g.add_argument("--case-variant", metavar="NAME",
                   help="with --case-run: one run of this variant only, its kernel reports "
                        "folded by title in the JSON (a campaign's job; `dmaharness collect` "
                        "diffs them); exit 0 when the guest ran, 6 when it failed")
    g.add_argument("--case-run", type=int, metavar="N", help="which run (from 1)")
    g.add_argument("--bisect-signature", metavar="TITLE|REGEX",
                   help="a bisection campaign's job (`plan bisect`): classify this run as a "
                        "bisection step's run for the signature (hit, clean, failed; a kernel "
                        "that does not build is a failed run) in the JSON (bisect_run); exit 0 "
                        "whenever the run was classified")

    bs = _command(
        sub, "bisect", cmd_bisect, "find the patch of a series that brings a report in (or out)",
        "Bisect a quilt series: prefix k is the variant with the first k patches "
        "of --series applied (after patches/<version>/series). Both ends are "
        "checked first (--good must not show the signature, --bad must), then "
        "prefixes are binary-searched; each step builds incrementally through the "
        "build cache, boots with the camera flood and the agent, and looks for the "
        "signature among the kernel reports. --good < --bad finds the patch that "
        "brings the report in; --good > --bad the one that takes it away. Verdicts: "
        "good, bad, skip (build, patch or boot failure; never bad). Rerunning the "
        "same command resumes from its log.", series=False)
    bs.epilog = (EPILOG.replace("  0    success", "  0    a culprit was found")
                 .replace("  1    the check's verdict is negative (a diff that does not "
                          "match its case)",
                          "  1    no single culprit: an end failed its check, or skipped "
                          "steps leave a range")
                 + "\nthresholds (see harness/checks/bisect.py): a step is bad after --min-hits runs "
                   "that show the signature;\ngood once a bad kernel would have shown nothing "
                   "in its clean runs with chance\n<= --max-miss, the chance per run estimated "
                   "at the bad end.\n")
    g = bs.add_argument_group("what to bisect")
    g.add_argument("--series", type=Path, required=True, metavar="FILE",
                   help="the quilt series to bisect (applied after patches/<version>/series)")
    g.add_argument("--signature", required=True, metavar="TITLE|REGEX",
                   help="a report title as `dmaharness reports` prints it, or a Python regex "
                        "searched in titles")
    g.add_argument("--good", type=int, metavar="N",
                   help="prefix length without the signature (default 0)")
    g.add_argument("--bad", type=int, metavar="M",
                   help="prefix length with the signature (default: the whole series)")
    g.add_argument("--fresh", action="store_true", help="ignore the log of an earlier run")
    g = bs.add_argument_group("verdicts")
    g.add_argument("--runs", type=int, default=6, help="most runs per step (6)")
    g.add_argument("--endpoint-runs", type=int, default=4,
                   help="runs at each end; the bad end's estimate the repro chance (4)")
    g.add_argument("--parallel", type=int, default=2, help="guests booted at once (2)")
    g.add_argument("--min-hits", type=int, default=1,
                   help="runs showing the signature that make a step bad (1)")
    g.add_argument("--max-miss", type=float, default=0.05,
                   help="accepted chance that a good verdict misses a bad kernel (0.05)")
    boot_group(bs, timeout_help="seconds allowed beyond --duration")
    flood_group(bs)

    sw = _command(
        sub, "sweep", cmd_sweep, "boot every QEMU device model of the catalogue; list the "
        "DMA sharing sites",
        "Survey a stock kernel (the detector series only): build it with the drivers of "
        "kconfig-fragments/sweep/catalogue.toml, boot it once without a device and once per "
        "device model (virtio with the DMA API forced, storage, NICs in pairs, sound, USB), "
        "run each device's workload (real I/O) and fold every detector report into sites: "
        "one row per driver function and buffer that shares a cache line with other data of "
        "its object, with the devices that reached it, whether a CPU access to the "
        "device-owned bytes was seen (KASAN: dma-owned), the structure layout and the console "
        "evidence. Devices whose model this QEMU lacks or whose driver this kernel cannot "
        "build are listed as skipped, with the reason. Exit 0, or 1 when a boot failed or "
        "(with --baseline) the sites differ from the baseline's.", series=False)
    g = sw.add_argument_group("sweep")
    g.add_argument("--devices", action="append", default=[], metavar="LIST",
                   help="comma-separated device names or classes (virtio, storage, network, "
                        "sound, usb, misc) of the catalogue (default: all; repeatable)")
    g.add_argument("--catalogue", type=Path, metavar="FILE",
                   help="another device catalogue (default kconfig-fragments/sweep/catalogue.toml)")
    g.add_argument("--baseline", type=Path, metavar="FILE",
                   help="an earlier sweep's sweep.json (or --json output): list new, gone and "
                        "unchanged sites; exit 1 when they differ, as diff(1)")
    g.add_argument("--parallel", type=int, default=0,
                   help="guests booted at once (default: one per core)")
    g.add_argument("--list", action="store_true",
                   help="build the sweep kernel (cached) and list what would run and what is "
                        "skipped, and why; boot nothing")
    g.add_argument("--job", metavar="DEVICE",
                   help="a sweep campaign's job (`plan sweep`): the one boot of this device "
                        "of the catalogue, or '(boot)' for the boot without a device; the "
                        "JSON carries its console whole (`collect` folds the sites)")
    boot_group(sw, timeout_help="seconds a boot may take before its workload", timeout=300,
               smp=1)

    pl = sub.add_parser(
        "plan", usage="dmaharness plan case CASE -o DIR [--runs N] [-- RUN-ARGS...]\n"
                      "       dmaharness plan sweep -o DIR [--devices LIST] [-- SWEEP-ARGS...]\n"
                      "       dmaharness plan bisect --series FILE --signature TITLE|REGEX "
                      "-o DIR [--good N] [--bad M] [--runs N] ... [-- RUN-ARGS...]",
        help="write a campaign: a case's runs, or a bisection's steps, as independent jobs",
        description="Write a campaign folder (-o DIR): campaign.json and jobs.txt, one plain "
                    "`dmaharness run` command a line, its --json result written to "
                    "results/<job>.json.  Run the lines anywhere that has this checkout, "
                    "from the campaign folder with dmaharness on PATH: `dmaharness campaign "
                    "DIR --jobs N` here (GNU parallel), --ssh HOSTS, --slurm.  Then "
                    "`dmaharness collect DIR` merges them.\n\n"
                    "plan case CASE: every run of every variant of the case (a copy of the "
                    "case goes along); collect diffs them as `run --case` does.\n\n"
                    "plan bisect: the bisection `dmaharness bisect` makes (the same search and "
                    "verdict thresholds), each step's runs being jobs: `campaign` adds the "
                    "runs of the next step as the search needs them and has its engine run "
                    "them; collect replays the search over the results and gives the culprit "
                    "(the series must be in this checkout).\n\n"
                    "plan sweep: the boot without a device and each device of the catalogue "
                    "(--devices), one job each, the sweep kernel built by each worker; "
                    "collect folds every job's console into the sites table `sweep` prints "
                    "(the layouts when the sweep kernel is built here too).\n\n"
                    "Arguments after -- go to every job (--duration 5s, --kernel 6.12, ...).",
        epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    pl.add_argument("what", choices=("case", "bisect", "sweep"), help="what to plan")
    pl.add_argument("case", type=Path, metavar="CASE", nargs="?",
                    help="plan case: the case folder or its case.toml")
    pl.add_argument("-o", "--output", type=Path, required=True, metavar="DIR",
                    help="the campaign folder (new, or empty)")
    pl.add_argument("--runs", type=int, default=None,
                    help="case: runs per variant (2); bisect: most runs per step (6)")
    g = pl.add_argument_group("plan bisect (as `dmaharness bisect`)")
    g.add_argument("--series", type=Path, metavar="FILE", help="the quilt series to bisect")
    g.add_argument("--signature", metavar="TITLE|REGEX",
                   help="a report title, or a Python regex searched in titles")
    g.add_argument("--good", type=int, metavar="N", help="prefix without the signature (0)")
    g.add_argument("--bad", type=int, metavar="M",
                   help="prefix with the signature (the whole series)")
    g.add_argument("--endpoint-runs", type=int, default=4, help="runs at each end (4)")
    g.add_argument("--parallel", type=int, default=2,
                   help="runs a step asks for at once: jobs the engine can run together (2)")
    g.add_argument("--min-hits", type=int, default=1,
                   help="runs showing the signature that make a step bad (1)")
    g.add_argument("--max-miss", type=float, default=0.05,
                   help="accepted chance that a good verdict misses a bad kernel (0.05)")
    g = pl.add_argument_group("plan sweep (as `dmaharness sweep`)")
    g.add_argument("--devices", action="append", default=[], metavar="LIST",
                   help="comma-separated device names or classes of the catalogue (all)")
    g.add_argument("--catalogue", type=Path, metavar="FILE",
                   help="the device catalogue, in this checkout "
                        "(kconfig-fragments/sweep/catalogue.toml)")
    pl.set_defaults(run_args=[])
    output_group(pl)
    pl.set_defaults(func=cmd_plan)

    co = sub.add_parser(
        "collect", help="merge a campaign's results: the case diff, missing and failed jobs",
        description="Read a campaign folder's results (and GNU parallel's joblog, Slurm's "
                    "attempt files, when there are some) and print what the local command "
                    "prints: a case's diff and verdict (exit 0 when it matches the case's "
                    "expectation, 1 when not); a bisection's steps and culprit (0 found, 1 "
                    "not); a sweep's sites table (0, or 1 when a boot failed).  Jobs with no "
                    "result, or a failed one, are listed by id, why and command, and nothing "
                    "is merged until every job is back (exit 8; for a bisection: the runs its "
                    "next step needs).",
        epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    co.add_argument("folder", type=Path, metavar="DIR", help="the campaign folder")
    co.add_argument("--junit", type=Path, metavar="FILE",
                    help="also write JUnit XML: one test case per job, one per expected outcome "
                         "(failures carry the report titles)")
    kcidb_args(co)
    output_group(co)
    co.set_defaults(func=cmd_collect)

    cg = sub.add_parser(
        "campaign", help="run a campaign's jobs here or on ssh hosts (GNU parallel) or "
                         "Slurm, then collect",
        description="Run the jobs of a campaign folder that have no good result yet: --jobs "
                    "at a time on this machine through GNU parallel (--joblog DIR/joblog, "
                    "--resume-failed: a job that failed or was killed runs again, a job done "
                    "is not); on other machines with --ssh HOSTS (GNU parallel --sshlogin, "
                    "after preparing each host); or as a Slurm array job with --slurm.  Then "
                    "print what `collect` prints.  Each job builds what it needs through its "
                    "machine's build cache (one build at a time; --ccache-remote in the "
                    "jobs' run arguments shares compiled objects) and boots its guest.",
        epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    cg.add_argument("folder", type=Path, metavar="DIR", help="the campaign folder")
    cg.add_argument("--jobs", type=int, default=0, metavar="N",
                    help="guests at once (default: one per core); with --ssh, on each host "
                         "(default: one per core of each host)")
    cg.add_argument("--ssh", metavar="HOSTS",
                    help="run the jobs on these hosts through GNU parallel --sshlogin, "
                         "results brought back (--return): a comma-separated list of GNU "
                         "parallel sshlogins ('host', 'user@host', '2/host', 'ssh -p 2222 "
                         "-i KEY user@host'), or a file of them, one a line.  Each host is "
                         "prepared first: this checkout synced (rsync), `make deps` and the C "
                         "tools built there, the campaign's files copied.  Logins must not "
                         "ask for a password (BatchMode); the hosts need rsync and make")
    cg.add_argument("--remote-dir", default=None, metavar="DIR",
                    help="with --ssh: where on each host the checkout and the campaign go, "
                         "relative to the login's home unless absolute "
                         "(.cache/dmaharness/remote)")
    cg.add_argument("--slurm", nargs="?", const="", default=None, metavar="PARTITION",
                    help="submit the jobs to Slurm as one array job (sbatch --array; task N "
                         "runs line N of jobs.txt, one CPU each) on PARTITION or the "
                         "cluster's default, then follow it in squeue until no task is left "
                         "and collect; Ctrl-C cancels it (scancel).  The campaign folder "
                         "(results land there) and this checkout must be at the same path "
                         "on every node: a shared folder")
    cg.add_argument("--sbatch", metavar="OPTIONS",
                    help="with --slurm: more sbatch options, one string ('--time=2:00:00 "
                         "--mem=2G --account=lab'); they win over dmaharness's own")
    cg.add_argument("--no-wait", action="store_true",
                    help="with --slurm: submit and return (exit 0, the job id printed); "
                         "`dmaharness collect DIR` later")
    cg.add_argument("--no-prepare", action="store_true",
                    help="with --ssh: skip the prepare step (the hosts are ready from a "
                         "previous --ssh run of this campaign)")
    cg.add_argument("--pin", action="store_true",
                    help="run job slot k on core k-1 only (taskset): one guest per core, "
                         "QEMU's threads and the fake device's together")
    cg.add_argument("--junit", type=Path, metavar="FILE", help="as collect --junit")
    kcidb_args(cg)
    output_group(cg)
    cg.set_defaults(func=cmd_campaign)

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
    output_group(cp)
    cp.set_defaults(func=cmd_cache)

    pp = sub.add_parser(
        "profiles", help="the debug profiles (--profile): what each finds and costs",
        description="The kernel's debug profiles, from kconfig-fragments/profiles/profiles.toml: "
                    "each one's fragments (verified like every fragment), its patch series, "
                    "its run-setting defaults, what it finds and what it costs (measured by "
                    "bench/profiles).  Choose one with --profile on any command that builds, or "
                    "`profile = \"NAME\"` in a case's [run] table.",
        epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    output_group(pp)
    pp.set_defaults(func=cmd_profiles)

    # listed for --help; main() hands their argv to their own parsers
    sub.add_parser("reports", add_help=False,
                   help="list the kernel reports (KASAN, DMA-API, WARNING, ...) in a console log")
    sub.add_parser("diff", add_help=False,
                   help="diff the kernel reports of console logs: before -- after")
    sub.add_parser("bisect-run", add_help=False,
                   help="`git bisect run` helper: test HEAD of your own kernel checkout "
                        "(exit 0 good, 1 bad, 125 skip)")
    sub.add_parser("capture", add_help=False,
                   help="read a USB device with libusb and write its profile, for "
                        "run --device (fake-device/capture/: exit 0 all read, 3 some requests "
                        "failed, 1 nothing read)")
    return p


def _on_sigterm(signum, frame):
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] in DELEGATED:
        # subcommands with their own argparse (and --help)
        return DELEGATED[argv[0]](argv[1:])
    run_args = []
    if argv and argv[0] == "plan" and "--" in argv:
        # `plan ... -- RUN-ARGS`: what follows -- goes to every job, unparsed
        i = argv.index("--")
        argv, run_args = argv[:i], argv[i + 1:]
    a = parser().parse_args(argv)
    if run_args:
        a.run_args = run_args
    signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        return a.func(a)
    except HarnessError as e:
        failed = {"command": a.command, **e.payload, "ok": False, "error": e.to_json(),
                  "failure": e.message.splitlines()[0] if e.message else None}
        if getattr(a, "json_out", None):
            _write_json_out(a.json_out, failed)
        if getattr(a, "json", False):
            print(jsonout.dumps(failed))
        sys.stderr.write(f"\ndmaharness {a.command}: error: {e.message}\n")
        if e.detail and not getattr(a, "quiet", False):
            sys.stderr.write(e.detail.rstrip() + "\n")
        return e.exit_code
    except BrokenPipeError:       # `dmaharness run | head -1`: the reader left; not an error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return errors.EXIT_OK
    except KeyboardInterrupt:
        proc.stop_all()
        sys.stderr.write(f"\ndmaharness {a.command}: interrupted; nothing is left running, "
                         "and the cache stays consistent (rerun to continue)\n")
        return errors.EXIT_INTERRUPTED


# --- bisect-run: exit codes for `git bisect run` ----------------------------------------

BR_GOOD, BR_BAD, BR_SKIP = 0, 1, 125
BR_INTERNAL = 128       # a bug in the harness: the traceback is printed
BR_USAGE = 129          # bad command line (argparse's own 2 would mean "bad")
BR_INTERRUPTED = 130    # Ctrl-C or SIGTERM
BR_ENV = 131            # a tool, package or the fake device's build is missing
BR_INPUT = 132          # not a kernel checkout, a --series/--fragment file is wrong
BR_VERDICT_EXIT = {bisect.GOOD: BR_GOOD, bisect.BAD: BR_BAD, bisect.SKIP: BR_SKIP}

BR_DESCRIPTION = """\
Test the commit checked out in your own Linux git checkout, for `git bisect run`:
build it out of tree with dmaharness's kconfig fragments and detector series,
boot it in QEMU with fake UVC cameras flooding the status endpoint, and look
for --signature among the kernel's reports.

  git bisect start BAD GOOD
  git bisect run /path/to/dmaharness bisect-run --signature 'TITLE|REGEX'

Your checkout is never written to: the commit is built in a mirror in the
cache (hard links of the tracked files, the detector patches applied there),
<cache>/work/checkout-<hash>/, whose _build/ folder is kept between steps, so
every step after the first is an incremental build.  Artifacts are cached by
commit (and local changes, fragments, patches), so a commit seen before is
not rebuilt.  The build is the same as `dmaharness build --tree DIR`.

The detector series is patches/X.Y/series for the checkout's version; other
versions try 6.1 and 6.12, nearest first.  When none applies the commit is
skipped (--no-detector builds without it)."""

BR_EPILOG = """\
exit codes (what git bisect run reads):
  0    good: no run showed the signature, and a bad kernel would have shown it
       with chance >= 1 - --max-miss given --repro-chance
  1    bad: a run showed the signature
  125  skip: the detector series or --series does not apply, a config option
       of the fragments does not stick, the kernel does not build, or the
       guest failed in every run
  128  internal error (a harness bug; traceback on stderr)   } git bisect run
  129  usage error (bad command line)                         } stops the
  130  interrupted (Ctrl-C, SIGTERM)                          } bisection on
  131  environment: a tool or package is missing (make deps)  } any code
  132  bad input: not a kernel checkout, a --series,          } above 127
       --fragment or --case file is missing or wrong

verdict: runs are booted --parallel at a time (2) until harness/checks/bisect.py's
decide() is decisive: bad after one run with the signature; good once
(1 - repro-chance)^clean_runs <= --max-miss (with the default 0.8 and 0.05:
2 clean runs; with 0.4: 6); skip when every run of a batch failed; at most
--runs runs.  --repro-chance is the chance that one run of a bad kernel shows
the signature: 0.8 is what a deterministic one gets in `dmaharness bisect`
(4 hits of 4 runs at the bad end, 4/5); lower it for a flaky signature.

run settings (boot and flood options): defaults < the --case's [run] table <
the flags given on the command line.

The cache folder is $DMAHARNESS_CACHE, else ~/.cache/dmaharness.
"""


class _BisectRunParser(argparse.ArgumentParser):
    def error(self, message):
        self.print_usage(sys.stderr)
        self.exit(BR_USAGE, f"{self.prog}: error: {message}\n")


def bisect_run_parser() -> argparse.ArgumentParser:
    p = _BisectRunParser(prog="dmaharness bisect-run", description=BR_DESCRIPTION,
                         epilog=BR_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    g = p.add_argument_group("what to look for")
    g.add_argument("--signature", required=True, metavar="TITLE|REGEX",
                   help="a report title as `dmaharness reports` prints it, or a Python regex "
                        "searched in titles")
    variant_group(p, kernel=False)
    g = p.add_argument_group("verdict")
    g.add_argument("--repro-chance", type=float, default=0.8, metavar="P",
                   help="chance that one run of a bad kernel shows the signature (0.8)")
    g.add_argument("--max-miss", type=float, default=0.05,
                   help="accepted chance that a good verdict misses a bad kernel (0.05)")
    g.add_argument("--runs", type=int, default=6, help="most runs per step (6)")
    g.add_argument("--parallel", type=int, default=2, help="runs booted at once (2)")
    flood_group(p)
    boot_group(p, timeout_help="seconds allowed beyond --duration", run_dir=False)
    p.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    p.add_argument("-q", "--quiet", action="store_true", help="only the verdict line on stderr")
    return p


def bisect_run_args(argv: list[str]) -> argparse.Namespace:
    """Parse, mapping every argparse exit but --help's 0 to BR_USAGE."""
    p = bisect_run_parser()
    try:
        a = p.parse_args(argv)
    except SystemExit as e:            # --help (0), or anything else argparse rejects
        raise SystemExit(0 if e.code in (0, None) else BR_USAGE) from None
    bad = []
    if not 0 < a.repro_chance <= 1:
        bad.append("--repro-chance must be in (0, 1]")
    if not 0 < a.max_miss < 1:
        bad.append("--max-miss must be between 0 and 1 (exclusive)")
    if a.runs < 1 or a.parallel < 1:
        bad.append("--runs and --parallel must be >= 1")
    if bad:
        p.error("; ".join(bad))
    return a


def bisect_run(argv: list[str]) -> int:
    try:
        a = bisect_run_args(list(argv))
    except SystemExit as e:
        return e.code if isinstance(e.code, int) else BR_USAGE
    old_term = signal.signal(signal.SIGTERM, _on_sigterm)
    t0 = time.monotonic()
    payload: dict = {"command": "bisect-run", "signature": a.signature}
    prog = Progress(quiet=a.quiet)
    head = ["bisect-run"]

    def note(msg: str) -> None:
        prog.note(f"[{' '.join(head)}] {msg}")

    code, verdict, reason, detail = BR_INTERNAL, "error", "", ""
    try:
        bisect.Matcher(a.signature)
        spec = dataclasses.replace(variant_spec(a), tree=a.tree or Path.cwd())
        req = bisectjob.CommitRequest(spec, a.signature, flags(a), case=a.case,
                                      repro_chance=a.repro_chance, max_miss=a.max_miss,
                                      runs=a.runs, parallel=a.parallel)
        res = bisectjob.test_commit(req, prog, payload, note)
        head.append(payload.get("commit", "?")[:12])
        verdict, reason, code = res.verdict, res.reason, BR_VERDICT_EXIT[res.verdict]
    except bisectjob.Skip as s:
        verdict, reason, detail, code = bisect.SKIP, s.message, s.detail, BR_SKIP
    except KeyboardInterrupt:
        proc.stop_all()
        verdict, reason, code = "abort", "interrupted; nothing is left running and your " \
                                         "checkout is untouched", BR_INTERRUPTED
    except errors.EnvError as e:
        verdict, reason, detail, code = "abort", e.message, e.detail, BR_ENV
    except HarnessError as e:
        verdict, reason, detail, code = "abort", e.message, e.detail, BR_INPUT
    except Exception:
        proc.stop_all()
        verdict, reason, code = "abort", "internal error (a dmaharness bug)", BR_INTERNAL
        detail = traceback.format_exc()
    finally:
        signal.signal(signal.SIGTERM, old_term)
    payload.update({"ok": code in (BR_GOOD, BR_BAD, BR_SKIP), "verdict": verdict,
                    "exit_code": code, "reason": reason,
                    "seconds": round(time.monotonic() - t0, 1)})
    if detail:
        payload["detail"] = detail[-4000:]
    if a.json:
        print(jsonout.dumps(payload))
    if detail and (code >= 128 or not a.quiet):
        sys.stderr.write(detail.rstrip() + "\n")
    what = {0: "good", 1: "bad", 125: "skip"}.get(code, "stop the bisection")
    sys.stderr.write(f"bisect-run: {payload.get('commit', '?')[:12]}"
                     f"{'+dirty' if payload.get('dirty') else ''} {verdict}: {reason} "
                     f"-> exit {code} ({what}) in {fmt_duration(time.monotonic() - t0)}\n")
    return code


def capture(argv: list[str]) -> int:
    """`dmaharness capture ...`: the C tool (fake-device/capture/, libusb),
    built on first use; its options, output and exit codes are its own
    (`dmaharness capture --help`)."""
    try:
        binary = usbdevices.build_capture()
    except HarnessError as e:
        sys.stderr.write(f"dmaharness capture: error: {e.message}\n")
        return e.exit_code
    os.execv(str(binary), [str(binary), *argv])
    return 1       # not reached


DELEGATED: dict[str, Callable[[list[str]], int]] = {
    "reports": logcli.reports_main, "diff": diff.main, "bisect-run": bisect_run, "capture": capture}
