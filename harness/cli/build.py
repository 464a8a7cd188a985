"""`build`, `boot`, `kunit` and `run`: a kernel variant built, booted, flooded.

`run --case` is harness.cli.case's (the `case` command's code and options);
the rest of `run` (one flood, USB device profiles, a bisection campaign's
job) is here.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from .. import errors, pipeline
from ..progress import Progress
from ..boot import initramfs, settings
from ..checks import bisectjob
from . import helptext
from .case import BUILD_MEANING, CASE_CODES, case_group, cmd_run_case
from .common import (TIMEOUT_BEYOND_FLOOD, TIMEOUT_WHOLE_BOOT, boot_group, command_parser, count,
                     emit, flags, flood_group, variant_spec)


def _profile_lines(payload: dict) -> str:
    if "insn_profile" not in payload:
        return ""
    prof = payload["insn_profile"]
    if not prof:
        return "\n  instruction profile: none (QEMU did not exit by itself)"
    top = ", ".join(f"{t['symbol']} {100 * t['share']:.1f}%" for t in prof["top"][:5])
    return (f"\n  guest instructions  {prof['instructions']:,} (top: {top})"
            f"\n  profile  {prof['file']}")

def cmd_build(a) -> int:
    if a.background:
        os.nice(19)           # the lowest CPU priority, for this build and everything it runs
    t, res = pipeline.build_command(variant_spec(a), Progress(quiet=a.quiet))
    word = "cached" if res.cached else f"built in {res.seconds:.1f}s"
    emit(a, {"command": "build", "ok": True, **t.to_json(), **res.to_json()},
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
    emit(a, out.payload,
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
    emit(a, out.payload, "\n".join(lines))
    return errors.EXIT_OK if ktap.ok else errors.EXIT_VERDICT

def cmd_run(a) -> int:
    if a.case:
        return cmd_run_case(a)
    if a.catalogue is not None:
        raise errors.InputError("--catalogue goes with --case (a case with [devices] catalogue)")
    b, f = settings.resolve(flags(a))
    if a.bisect_signature:
        payload = bisectjob.bisect_run_job(
            pipeline.RunRequest(variant_spec(a), b, f, a.run_dir), a.bisect_signature,
            Progress(quiet=a.quiet))
        o = payload["bisect_run"]
        emit(a, payload, f"{payload['key']} (prefix {payload['prefix']}): {o['status']}"
              + (f" {', '.join(o['titles'])}" if o["titles"] else "")
              + (f"\n  {o['detail']}" if o["detail"] else ""))
        return errors.EXIT_OK
    fr = pipeline.run_flood(pipeline.RunRequest(variant_spec(a), b, f, a.run_dir),
                            Progress(quiet=a.quiet), on_output=_console(b))
    s, payload = fr.summary, fr.payload
    if payload.get("devices") is not None:
        emit(a, payload, _devices_text(fr, f))
        caps = [d.get("capture") for d in payload["devices"]] if f.capture else []
        return errors.EXIT_VERDICT if any(not (c and c["same"]) for c in caps) \
            else errors.EXIT_OK
    emit(a, payload,
          f"{fr.build.artifacts.key}: {f.flood.pattern}:{f.flood.rate} flood, {s['cameras']} camera(s), "
          f"{f.duration:g}s ({fr.result.accel})\n"
          f"  sent by the fake camera(s)   {s['sent']}\n"
          f"  counted in the guest         {s['guest_counted']} "
          f"({s['guest_events_emitted']} control events emitted, {s['guest_key_events']} key events)\n"
          f"  delivered rate               {s['guest_rate_per_s']:.0f}/s "
          f"({100 * s['ratio_to_ceiling']:.0f}% of the {s['ceiling_per_s']}/s ceiling)\n"
          f"  phys reads, open/close       {s['phys_reads']}, {s['cycles']}\n"
          + _hold_line(s) +
          f"  fake device CPU / QEMU CPU   {s['fake_device_cpu_s']:.2f}s / {s['qemu_cpu_s']:.1f}s\n"
          f"  console  {fr.result.console}\n  result   {fr.run_dir / 'result.json'}"
          + _profile_lines(payload) + (f"\n{fr.checks.format_text()}" if fr.checks else ""))
    return errors.EXIT_OK

def _hold_line(s: dict) -> str:
    """What held uvcvideo's status URB for the run, and why (the agent's --hold)."""
    if not s.get("hold"):
        return ""
    failed = (f"; {s['hold_failures']} start(s) FAILED, see the agent's errors"
              if s.get("hold_failures") else "")
    return f"  status hold                  {s['hold']} ({s.get('hold_reason') or 'no reason given'}{failed})\n"


def _devices_text(fr, f) -> str:
    """`run --usb-device/--usb-host`: per device, its drivers, nodes and endpoint counts."""
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


def add_parsers(sub) -> None:
    """build, boot, kunit, run."""
    bd = command_parser(sub, "build", cmd_build, "build a kernel variant (cached by content)",
             "Build a kernel variant: linux-source-X.Y (or --tree) + patches/X.Y/series + "
             "--series patches, configured from tinyconfig and kconfig-fragments/. A variant "
             "already built is not rebuilt.",
             examples=("# 6.12 with the detector (the dma profile), cached by content",
                       "dmaharness build --kernel 6.12",
                       "# your checkout's HEAD and local changes; it is never written to",
                       "dmaharness build --tree ~/src/linux --profile full",
                       "# a kernel needed later, built on the cores other work leaves idle",
                       "dmaharness build --kernel 7.3 --series my.series --background"),
             codes=(errors.EXIT_INPUT, errors.EXIT_BUILD))
    bd.add_argument("--background", action="store_true",
                    help="build at the lowest CPU priority (nice 19) beside other builds "
                         "instead of after them: a kernel you will need later, made on the "
                         "cores other work leaves idle (make test builds CI's 7.3 kernel so "
                         "while the unit tests and the 6.1 boots run); a run that needs the "
                         "same variant waits for it")

    bt = command_parser(sub, "boot", cmd_boot, "build if needed, then boot in QEMU and watch the console",
                  "Boot a kernel variant under QEMU (TCG unless KVM really works) with the "
                  "harness's initramfs, and wait for the guest's end marker. Fails on panic, "
                  "hang or silence.",
                  examples=("dmaharness boot --kernel 6.1 --modules uvcvideo",
                            "# a shell command in the guest, the console copied to stderr",
                            "dmaharness boot --workload shell-cmd --cmd 'cat /proc/iomem' "
                            "--console",
                            "# the guest instructions each kernel function costs",
                            "dmaharness boot --kernel 6.1 --insn-count --modules uvcvideo"),
                  codes=(errors.EXIT_INPUT, errors.EXIT_BUILD, errors.EXIT_GUEST),
                  run_settings=True)
    g = boot_group(bt, timeout_help=TIMEOUT_WHOLE_BOOT, timeout=300, smp=2,
                   profile=True)
    g.add_argument("--modules", default="", help="comma-separated modules the init loads")
    g.add_argument("--workload", choices=("none", "agent", "shell-cmd"), default="none",
                   help="what the guest init runs after loading modules (none)")
    g.add_argument("--agent-args", dest="guest_agent_args", default="",
                   help="arguments of the guest agent (--workload agent)")
    g.add_argument("--cmd", default="", help="shell command for --workload shell-cmd")

    ku = command_parser(sub, "kunit", cmd_kunit, "boot a variant and run its KUnit suites (KTAP parsed)",
                  "Boot the variant and collect the KTAP output of its KUnit suites (built in, "
                  "or modules given with --modules). Exit 0 when every case passed or was "
                  "skipped, 1 when one failed.",
                  examples=("# the detector's own suite (dma-debug-cacheline) and the others",
                            "dmaharness kunit --kernel 6.1",
                            "dmaharness kunit --kernel 7.3 --filter 'dma-debug-cacheline'"),
                  codes=(errors.EXIT_VERDICT, errors.EXIT_INPUT, errors.EXIT_BUILD,
                         errors.EXIT_GUEST),
                  meaning={errors.EXIT_OK: "every KUnit case passed or was skipped",
                           errors.EXIT_VERDICT: "a KUnit case failed"},
                  run_settings=True)
    g = boot_group(ku, timeout_help=TIMEOUT_WHOLE_BOOT, timeout=300, smp=2)
    g.add_argument("--filter", default="", help="kunit.filter_glob: suites to run (default all)")
    g.add_argument("--modules", default="", help="KUnit test modules to load (comma-separated)")

    rn = command_parser(sub, "run", cmd_run, "boot with fake UVC cameras flooding the status endpoint",
                  "Start fake UVC cameras (fake-device/) on usbredir, boot the variant with them "
                  "attached, load uvcvideo and run the guest agent; report packets sent, events "
                  "counted in the guest and the delivered rate over time. With --case, run a "
                  "case's before and after variants and diff their kernel reports (exit 0 when "
                  "the outcome matches the case's expectation, 1 when not), as `dmaharness "
                  "case DIR` does.",
                  examples=("dmaharness run --kernel 6.1 --flood control:max --duration 10s",
                            "# the seed case: the bug, then each fix (as: dmaharness case DIR)",
                            "dmaharness run --case patches/6.1/cases/uvc-status-buffer",
                            "# USB devices from profiles instead of the cameras",
                            "dmaharness run --usb-device logitech-k120 --usb-device "
                            "stm32-cdc-acm"),
                  codes=CASE_CODES,
                  meaning={errors.EXIT_VERDICT: "with --case: the outcome does not match the "
                           "case's expectation; with --capture: a capture differs from its "
                           "profile",
                           errors.EXIT_BUILD: BUILD_MEANING},
                  run_settings=True)
    boot_group(rn, timeout_help=TIMEOUT_BEYOND_FLOOD, profile=True)
    flood_group(rn)
    case_group(rn, title="case (before/after diff, with --case; as `case DIR`)", job=True)
    helptext.job_only(
        rn, "--signature", "--bisect-signature", dest="bisect_signature", metavar="TITLE|REGEX",
        help="a bisection campaign's job (`plan bisect`): classify this run as a bisection "
             "step's run for the signature, as bisect --signature (hit, clean, failed; a "
             "kernel that does not build is a failed run) in the JSON (bisect_run); exit 0 "
             "whenever the run was classified" + helptext.old_spelling("--bisect-signature"))
