"""dmaharness command line: parse arguments into requests, print results.

Nothing else lives here: ``parser()`` gathers each command family's
subcommands (harness.cli.build, case, sweep, campaign, cache), which
--help and the overview (a bare `dmaharness`, `dmaharness help`) list by
area (helptext.GROUPS), ``main()`` runs one and maps errors to the
documented exit codes; reports, diff, bisect-run and capture parse
their own arguments (DELEGATED).  No module imports this one.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import traceback
from typing import Callable

from .. import errors, jsonout, paths, proc
from ..errors import HarnessError
from . import build, cache, campaign, case, check, jobcheck, logcli, mailcli, reportscli, sources, sweep
from .bisectrun import bisect_run
from .capture import capture
from . import helptext
from .common import EPILOG, on_sigterm, write_json_out
from .reportscli import stdout_fault, stdout_usable


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="dmaharness",
        description="Build KASAN + DMA-API-debug kernels from Debian's linux-source (or your "
                    "own checkout), boot them in QEMU, and find DMA buffers handled in ways "
                    "x86 hides.",
        epilog=helptext.examples((
            "# the kernel reports of a console log, titled as syzkaller does",
            "dmaharness reports console.log",
            "# the seed case before and after its fixes (builds and boots 6.1)",
            "dmaharness case patches/6.1/cases/uvc-status-buffer",
            "# your patch on your tree: what it brings in or takes out",
            "dmaharness check --tree ~/src/linux my-fix.patch")) + "\n\n" + EPILOG,
        formatter_class=helptext.Overview, allow_abbrev=False)
    p.add_argument("--version", action="version", version=f"dmaharness {version()}")
    # listed by area (helptext.GROUPS), whatever the order they are added in
    sub = p.add_subparsers(dest="command", metavar="COMMAND", title=helptext.COMMANDS)
    sub.required = True

    build.add_parsers(sub)
    case.add_parsers(sub)
    check.add_parsers(sub)
    sweep.add_parsers(sub)
    mailcli.add_parsers(sub)
    campaign.add_parsers(sub)
    cache.add_parsers(sub)
    sources.add_parsers(sub)

    hp = sub.add_parser("help", help="this overview, or a command's --help (help COMMAND)")
    hp.add_argument("topic", nargs="?", metavar="COMMAND")
    hp.set_defaults(func=None)
    # listed for --help; main() hands their argv to their own parsers
    sub.add_parser("reports", add_help=False,
                   help="the kernel reports (KASAN, DMA-API, ...) of a console log")
    sub.add_parser("diff", add_help=False,
                   help="diff the kernel reports of console logs: before -- after")
    sub.add_parser("bisect-run", add_help=False,
                   help="`git bisect run` on your checkout: 0 good, 1 bad, 125 skip")
    sub.add_parser("capture", add_help=False,
                   help="read a real USB device into a profile (run --usb-device)")
    for child in sub.choices.values():        # --js is no --json: only exact option names
        child.allow_abbrev = False
    return p


def run_job(argv: list[str]) -> int:
    """`dmaharness job ID` (not listed in --help): a campaign's job, by its id."""
    try:
        args = jobcheck.job_args(argv)
    except HarnessError as e:
        if reportscli.wants_json(argv):     # one JSON object, as every command's errors
            print(jsonout.dumps({"command": "job", "ok": False, "error": e.to_json(),
                                 "failure": e.message.splitlines()[0] if e.message else None}))
        sys.stderr.write(f"dmaharness job: error: {e.message}\n")
        return e.exit_code
    return main(args)


# subcommands with their own argparse (and --help)
DELEGATED: dict[str, Callable[[list[str]], int]] = {
    "reports": reportscli.reports_main, "diff": logcli.diff_main, "bisect-run": bisect_run,
    "capture": capture, "job": run_job}


def parse(argv: list[str]) -> tuple[argparse.Namespace | None, int]:
    """The parsed arguments, or (None, exit code) when argparse stopped: 0
    after --help, 2 on a usage error (one JSON object too with --json), as
    the log readers parse theirs."""
    return reportscli.parse_args(parser(), argv, "dmaharness " + (argv[0] if argv else ""))


def version() -> str:
    """The checkout's commit as git describes it (a dirty tree says so); an
    installed copy's, written by make install into VERSION; or why there is
    none."""
    try:
        stamped = (paths.REPO / "VERSION").read_text().strip()
    except (OSError, UnicodeDecodeError):
        stamped = ""
    if stamped:
        return stamped
    try:
        r = subprocess.run(["git", "-C", str(paths.REPO), "describe", "--always", "--dirty"],
                           capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return "(git not found: the commit is unknown)"
    return r.stdout.strip() if r.returncode == 0 and r.stdout.strip() else \
        "(not a git checkout: the commit is unknown)"


def overview(p: argparse.ArgumentParser | None = None) -> str:
    """What `dmaharness` and `dmaharness help` print, on one screen: the usage,
    what the tool does and its commands by area (--help adds the examples,
    the options and every exit code)."""
    p = p or parser()
    f = p._get_formatter()
    f.add_usage(p.usage, p._actions, p._mutually_exclusive_groups)
    f.add_text(p.description)
    for g in p._action_groups:
        if g.title == helptext.COMMANDS:
            f.start_section(g.title)
            f.add_text(g.description)
            f.add_arguments(g._group_actions)
            f.end_section()
    f.add_text(helptext.MORE)
    return f.format_help()


def _help(topic: str | None) -> int:
    """`dmaharness`, `dmaharness help [COMMAND]`: the overview or a command's help."""
    if topic is None:
        sys.stdout.write(overview())
        return errors.EXIT_OK
    if topic == "help":
        return _help(None)
    return main([topic, "--help"])


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] == "help":
        if len(argv) > 2:
            sys.stderr.write("usage: dmaharness help [COMMAND]\n")
            return errors.EXIT_USAGE
        return _help(argv[1] if len(argv) == 2 else None)   # an unknown one: argparse says
    if argv and argv[0] in DELEGATED:
        # subcommands with their own argparse (and --help)
        return reportscli.guarded(argv[0], DELEGATED[argv[0]], argv[1:])
    run_args = []
    if argv and argv[0] == "plan" and "--" in argv:
        # `plan ... -- RUN-ARGS`: what follows -- goes to every job, unparsed
        i = argv.index("--")
        argv, run_args = argv[:i], argv[i + 1:]
    a, code = parse(argv)
    if a is None:
        return code
    if run_args:
        a.run_args = run_args
    signal.signal(signal.SIGTERM, on_sigterm)
    try:
        stdout_usable()
        code = a.func(a)
        sys.stdout.flush()        # a full disk says so here, not at exit
        return code
    except HarnessError as e:
        return _failed(a, e.to_json(), e.payload, e.message, e.detail, e.exit_code)
    except BrokenPipeError:       # `dmaharness run | head -1`: the reader left; not an error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return errors.EXIT_OK
    except (OSError, ValueError) as e:
        why = stdout_fault()      # stdout full or broken: the environment's, not a bug
        if why is None:
            return _internal(a, e)
        err = errors.EnvError(why)
        return _failed(a, err.to_json(), {}, why, "", errors.EXIT_ENV)
    except KeyboardInterrupt:
        proc.stop_all()
        sys.stderr.write(f"\ndmaharness {a.command}: interrupted; nothing is left running, "
                         "and the cache stays consistent (rerun to continue)\n")
        return errors.EXIT_INTERRUPTED
    except Exception as e:        # a bug of ours: its own exit code, never a verdict's
        return _internal(a, e)


def _internal(a, e: Exception) -> int:
    proc.stop_all()
    message = f"internal error (a dmaharness bug, please report it): {type(e).__name__}: {e}"
    return _failed(a, {"kind": "internal", "message": message,
                       "exit_code": errors.EXIT_INTERNAL}, {}, message,
                   traceback.format_exc(), errors.EXIT_INTERNAL, always_detail=True)


def _failed(a, error: dict, payload: dict, message: str, detail: str, code: int, *,
            always_detail: bool = False) -> int:
    """An error's --json object and --json-out file, its message on stderr; its exit code."""
    failed = {"command": a.command, **payload, "ok": False, "error": error,
              "failure": message.splitlines()[0] if message else None}
    if getattr(a, "json_out", None):
        try:
            write_json_out(a.json_out, failed)
        except HarnessError as e:             # the error itself is what we report
            sys.stderr.write(f"dmaharness {a.command}: {e.message}\n")
    if getattr(a, "json", False):
        try:
            print(jsonout.dumps(failed), flush=True)
        except (OSError, ValueError):         # stdout itself is what failed
            stdout_fault()
    sys.stderr.write(f"\ndmaharness {a.command}: error: {message}\n")
    if detail and (always_detail or not getattr(a, "quiet", False)):
        sys.stderr.write(detail.rstrip() + "\n")
    return code
