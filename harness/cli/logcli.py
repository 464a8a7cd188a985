"""The console-log readers: `dmaharness reports`, `dmaharness diff`, `python3 -m harness.cli.failnth`.

One shape for both: a log file (``-`` for stdin) in, text or ``--json``
out; exit 0 when the log was parsed (whatever it holds), 2 for a usage
error, 4 when the log cannot be read; a closed stdout (``... | head``) is
no traceback.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import sys
from typing import Any, Callable

from .. import files, jsonout
from ..errors import EXIT_INPUT, EXIT_USAGE, HarnessError
from ..jsonout import JSON_VERSION
from ..reports import engine, failnth, parallel, summary
from ..checks.case import load_case
from ..checks.diff import Outcome, compare, exit_code, format_outcome


def fail(prog: str, as_json: bool, message: str, code: int, kind: str = "input") -> int:
    """An error of a log reader: its message on stderr and, with --json, one JSON object."""
    if as_json:
        print(jsonout.dumps({"command": prog.split()[-1], "ok": False,
                             "error": {"kind": kind, "message": message, "exit_code": code},
                             "failure": message}))
    print(f"{prog}: {message}", file=sys.stderr)
    return code


def parse_args(ap: argparse.ArgumentParser, argv: list[str], prog: str
               ) -> tuple[argparse.Namespace | None, int]:
    """argparse, with a usage error as an exit code (and a JSON object with --json)."""
    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err):
            return ap.parse_args(argv), 0
    except SystemExit as e:
        sys.stderr.write(err.getvalue())
        if e.code in (0, None):
            return None, 0
        lines = err.getvalue().strip().splitlines()
        message = lines[-1].split(": error: ", 1)[-1] if lines else "bad command line"
        if "--json" in argv:
            fail(prog, True, message, EXIT_USAGE, "usage")
        return None, EXIT_USAGE


def read_log(path: str, what: str = "console log") -> str:
    """A console log given on the command line ('-': standard input): any
    bytes, read with universal newlines as files.log_lines() reads them."""
    return "\n".join(files.log_lines(path, what))


def print_out(as_json: bool, obj: Any, text_of: Callable[[], str], indent: int = 2) -> None:
    """The result on stdout; a closed stdout (``... | head``) is no traceback."""
    try:
        if as_json:
            json.dump(obj, sys.stdout, indent=indent)
            sys.stdout.write("\n")
        else:
            sys.stdout.write(text_of())
        sys.stdout.flush()
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())


def log_parser(prog: str, description: str, log_help: str) -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog=prog, description=description,
        epilog="Exit codes: 0 parsed, 2 usage error, 4 the log cannot be read.")
    ap.add_argument("log", help=log_help + " ('-' for stdin)")
    ap.add_argument("--json", action="store_true", help="print JSON (version 1)")
    return ap


def run(argv: list[str], *, prog: str, description: str, log_help: str,
        analyse: Callable[[str, str], tuple[Any, Callable[[], str]]], indent: int = 2) -> int:
    """``analyse(text, path)`` returns (the JSON object, a function giving the text)."""
    args, code = parse_args(log_parser(prog, description, log_help), argv, prog)
    if args is None:
        return code
    try:
        text = read_log(args.log)
    except HarnessError as e:
        return fail(prog, args.json, e.message, e.exit_code)
    obj, text_of = analyse(text, args.log)
    print_out(args.json, obj, text_of, indent)
    return 0


_dumps = json.JSONEncoder(separators=(", ", ": ")).encode


def _indented(obj: Any, pad: str) -> str:
    return json.dumps(obj, indent=2).replace("\n", "\n" + pad)


def reports_main(argv: list[str]) -> int:
    """`dmaharness reports LOG`: the reports as they come, so that memory is
    bounded by the largest report, not by the log; a large log on every
    core (harness.reports.parallel).  With --json the reports wait in
    temporary files until the signatures, which come first, are known:
    {"version", "source", "signatures", "reports"}, indented as
    json.dump(..., indent=2) writes it but for the reports, one a line."""
    prog = "dmaharness reports"
    ap = log_parser(prog, "Print the kernel reports (KASAN, DMA-API, WARNING, BUG, ...) "
                    "found in a console log or saved dmesg, titled as syzkaller titles them.",
                    "console log or dmesg file")
    ap.add_argument("-j", "--jobs", type=jobs_arg, default=0, metavar="N",
                    help="parse a large log (8 MiB or more) on up to N cores (default: every "
                         "core this process may use; 1: one pass); the reports are the same")
    args, code = parse_args(ap, argv, prog)
    if args is None:
        return code
    try:
        got = parallel.parse_log(args.log, jobs=args.jobs, want_json=args.json)
    except HarnessError as e:
        return fail(prog, args.json, e.message, e.exit_code)
    except OSError as e:
        return fail(prog, args.json, f"console log {args.log}: {e.strerror or e}", EXIT_INPUT)
    try:
        folder = got.folder
        sigs = folder.signatures()
        if not args.json:
            sys.stdout.write(summary.format_signatures(sigs, folder.total))
        else:
            head = {"version": JSON_VERSION, "source": args.log,
                    "signatures": [s.to_json() for s in sigs]}
            sys.stdout.write(_indented(head, "")[:-2] + ',\n  "reports": [')
            sys.stdout.flush()
            out = getattr(sys.stdout, "buffer", None)
            if out is None:                   # a test's StringIO
                got.write_reports(lambda b: sys.stdout.write(b.decode("ascii")))
            else:
                out.flush()
                got.write_reports(out.write, out.fileno())
            sys.stdout.write("\n  ]\n}\n" if folder.total else "]\n}\n")
        sys.stdout.flush()
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    finally:
        got.close()
    return 0


def jobs_arg(text: str) -> int:
    """--jobs: a whole number of cores, 1 to 1024."""
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if not 1 <= n <= 1024:
        raise argparse.ArgumentTypeError(f"{n} is not a number of cores (1 to 1024)")
    return n


def failnth_main(argv: list[str]) -> int:
    """`python3 -m harness.cli.failnth LOG`."""
    def analyse(text: str, path: str):
        res = failnth.parse(text)
        return res.to_json(), lambda: failnth.format_text(res)
    return run(argv, prog="python3 -m harness.cli.failnth", analyse=analyse, indent=1,
               description="Read a run's console for fail-nth's steps (what failed, what "
                           "it left, the reports between its markers) and kmemleak's leaks.",
               log_help="console log")


def diff_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="dmaharness diff",
        usage="dmaharness diff BEFORE_LOG... -- AFTER_LOG... [--json] [--case case.toml]",
        description="Diff the kernel reports of console logs: each BEFORE_LOG and "
                    "AFTER_LOG is one run.  Rows: new (after only), fixed (before only), "
                    "unchanged, flaky (not in every run of its side).",
        epilog="Exit codes: 0 the outcome matches the case's expectation (without "
               "--case: nothing new appears), 1 it does not, 2 usage error, "
               "4 unreadable log or bad case file (as `run --case`).")
    ap.add_argument("logs", nargs="*", metavar="LOG",
                    help="console logs, one per run: the before logs, then --, then the after logs")
    ap.add_argument("--json", action="store_true", help="print JSON (version 1)")
    ap.add_argument("--case", metavar="CASE_TOML",
                    help="evaluate against this case's [expect] (file or folder)")
    return ap


def diff_main(argv: list[str]) -> int:
    """`dmaharness diff BEFORE_LOG... -- AFTER_LOG... [--json] [--case F]`."""
    prog = "dmaharness diff"
    ap = diff_parser()
    as_json = "--json" in argv
    if "--" not in argv:
        if any(a in ("-h", "--help") for a in argv):
            ap.print_help()
            return 0
        return fail(prog, as_json, "separate the before logs from the after logs "
                    "with '--' (dmaharness diff B1.log B2.log -- A1.log A2.log)", EXIT_USAGE,
                    "usage")
    i = argv.index("--")
    left, code = parse_args(ap, argv[:i], prog)
    if left is None:
        return code
    right, code = parse_args(ap, argv[i + 1:], prog)
    if right is None:
        return code
    as_json = left.json or right.json
    if left.case and right.case and left.case != right.case:
        return fail(prog, as_json, "--case given twice", EXIT_USAGE, "usage")
    case_file = left.case or right.case
    if not left.logs or not right.logs:
        return fail(prog, as_json, "need at least one before log and one after log", EXIT_USAGE,
                    "usage")
    try:
        expect = None
        case_name = None
        if case_file:
            c = load_case(case_file)
            expect, case_name = c.expect, c.name
        before = [engine.parse(read_log(p)) for p in left.logs]
        after = [engine.parse(read_log(p)) for p in right.logs]
    except HarnessError as e:      # a bad case file or an unreadable log: as `run --case`
        return fail(prog, as_json, e.message, e.exit_code)
    outcome = Outcome([compare(before, after, expect)], case_name)

    def obj() -> dict:
        out = outcome.to_json()
        out["before_logs"] = list(left.logs)
        out["after_logs"] = list(right.logs)
        return out
    print_out(as_json, obj() if as_json else None, lambda: format_outcome(outcome))
    return exit_code(outcome.matches)
