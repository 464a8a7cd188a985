"""dmaharness command line: one entry point, one subcommand per job."""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import time
from pathlib import Path

from . import errors, fragments, initramfs, kernel, paths, qemu, reports, series
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


def cmd_boot(a) -> int:
    prog = Progress(quiet=a.quiet)
    res = kernel.build(_variant(a), jobs=a.jobs, progress=prog, force=a.force)
    art = res.artifacts
    agent = initramfs.build_agent() if a.workload == "agent" else None
    if a.workload == "agent" and agent is None:
        raise errors.BuildError("--workload agent needs harness/guest/Makefile to build the agent")
    base = initramfs.base_archive(art, agent)
    run_dir = Path(a.run_dir) if a.run_dir else new_run_dir(f"boot-{a.kernel}")
    run_dir.mkdir(parents=True, exist_ok=True)
    cfg = initramfs.RunConfig(modules=tuple(m for m in a.modules.split(",") if m),
                              workload=a.workload, agent_args=a.agent_args,
                              workload_cmd=a.cmd)
    initrd = initramfs.run_archive(art, base, cfg, run_dir)
    req = qemu.BootRequest(kernel=art.bzimage, initrd=initrd, console=run_dir / "console.log",
                           append=a.append, memory_mb=a.memory, smp=a.smp, accel=a.accel,
                           timeout=a.timeout, silence=a.silence)
    prog.note(f"[boot {a.kernel}] console: {req.console}")
    out = (lambda t: sys.stderr.write(t)) if a.console else None
    result = qemu.boot(req, on_output=out)
    payload = {"command": "boot", "ok": result.ok, "build": res.to_json(), "run_dir": str(run_dir),
               **result.to_json()}
    (run_dir / "result.json").write_text(json.dumps({"version": JSON_VERSION, **payload}, indent=1) + "\n")
    if not result.ok:
        try:
            result.raise_for_outcome()
        except HarnessError as e:
            e.payload = payload
            raise
    facts = ", ".join(k for k, v in result.watch.facts.items() if v) or "none"
    _emit(a, payload,
          f"{art.key}: {result.describe()} in {result.wall:.1f}s ({result.accel})\n"
          f"  seen     {facts}\n  console  {req.console}\n  result   {run_dir / 'result.json'}")
    return errors.EXIT_OK


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="dmaharness",
        description="Build KASAN + DMA-API-debug kernels from Debian's linux-source, "
                    "boot them in QEMU, and find DMA buffers handled in ways x86 hides.",
        epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    b = sub.add_parser("build", help="build a kernel variant (cached by content)",
                       description="Build a kernel variant: linux-source-X.Y + patches/X.Y/series "
                                   "+ --series patches, configured from tinyconfig and "
                                   "kconfig-fragments/. A variant already built is not rebuilt.",
                       epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    _variant_args(b)
    _common(b)
    b.set_defaults(func=cmd_build)

    bt = sub.add_parser("boot", help="build if needed, then boot in QEMU and watch the console",
                        description="Boot a kernel variant under QEMU (TCG unless KVM really "
                                    "works) with the harness's initramfs, and wait for the "
                                    "guest's end marker. Fails on panic, hang or silence.",
                        epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    _variant_args(bt)
    _common(bt)
    g = bt.add_argument_group("boot")
    g.add_argument("--accel", choices=("auto", "tcg", "kvm"), default="auto",
                   help="auto: KVM only when a probe guest really runs on it (default)")
    g.add_argument("--timeout", type=float, default=300, help="wall-clock limit in seconds (300)")
    g.add_argument("--silence", type=float, default=60,
                   help="seconds without console output that count as a hang (60)")
    g.add_argument("--memory", type=int, default=1024, help="guest memory in MiB (1024)")
    g.add_argument("--smp", type=int, default=2, help="guest CPUs (2)")
    g.add_argument("--append", default="", help="extra kernel command line")
    g.add_argument("--modules", default="", help="comma-separated modules the init loads")
    g.add_argument("--workload", choices=("none", "agent", "shell-cmd"), default="none",
                   help="what the guest init runs after loading modules (none)")
    g.add_argument("--agent-args", default="", help="arguments of the guest agent")
    g.add_argument("--cmd", default="", help="shell command for --workload shell-cmd")
    g.add_argument("--console", action="store_true", help="copy the console to stderr live")
    g.add_argument("--run-dir", help="folder for the console log and results "
                                     "(default: a new folder under <cache>/runs)")
    bt.set_defaults(func=cmd_boot)

    r = sub.add_parser("reports", add_help=False,
                       help="list the kernel reports (KASAN, DMA-API, WARNING, ...) in a console log")
    r.add_argument("args", nargs=argparse.REMAINDER)
    r.set_defaults(func=lambda a: reports.main(a.args))
    return p


def _on_sigterm(signum, frame):
    raise KeyboardInterrupt


DELEGATED = {"reports": lambda argv: reports.main(argv)}


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] in DELEGATED:
        # subcommands with their own argparse (and --help)
        return DELEGATED[argv[0]](argv[1:])
    a = parser().parse_args(argv)
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
        sys.stderr.write(f"\ndmaharness {a.command}: interrupted; nothing is left running, "
                         "and the cache stays consistent (rerun to continue)\n")
        return errors.EXIT_INTERRUPTED
