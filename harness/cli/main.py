"""dmaharness command line: parse arguments into requests, print results.

Nothing else lives here: ``parser()`` gathers each command family's
subcommands (harness.cli.build, case, sweep, campaign, cache) in the
order --help lists them, ``main()`` runs one and maps errors to the
documented exit codes; reports, diff, bisect-run and capture parse
their own arguments (DELEGATED).  No module imports this one.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
from typing import Callable

from .. import errors, jsonout, proc
from ..checks import diff
from ..errors import HarnessError
from . import build, cache, campaign, case, logcli, sweep
from .bisectrun import bisect_run
from .capture import capture
from .common import EPILOG, on_sigterm, write_json_out


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="dmaharness",
        description="Build KASAN + DMA-API-debug kernels from Debian's linux-source (or your "
                    "own checkout), boot them in QEMU, and find DMA buffers handled in ways "
                    "x86 hides.",
        epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    build.add_parsers(sub)
    case.add_parsers(sub)
    sweep.add_parsers(sub)
    campaign.add_parsers(sub)
    cache.add_parsers(sub)

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


DELEGATED: dict[str, Callable[[list[str]], int]] = {
    "reports": logcli.reports_main, "diff": diff.main, "bisect-run": bisect_run, "capture": capture}

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
    signal.signal(signal.SIGTERM, on_sigterm)
    try:
        return a.func(a)
    except HarnessError as e:
        failed = {"command": a.command, **e.payload, "ok": False, "error": e.to_json(),
                  "failure": e.message.splitlines()[0] if e.message else None}
        if getattr(a, "json_out", None):
            write_json_out(a.json_out, failed)
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
