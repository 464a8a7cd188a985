"""The console-log readers: `dmaharness diff`, `python3 -m harness.cli.failnth`
(`dmaharness reports` is harness.cli.reportscli's).

One shape for all: a log file (``-`` for stdin) in, text or ``--json``
out; exit 0 when the log was parsed (whatever it holds), 2 for a usage
error, 4 when the log cannot be read; a closed stdout (``... | head``) is
no traceback.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any, Callable

from .. import files
from ..errors import EXIT_ENV, EXIT_INPUT, EXIT_USAGE, EXIT_VERDICT, EnvError, HarnessError
from ..reports import engine, failnth
from ..checks.case import load_case
from ..checks.diff import Outcome, compare, exit_code, format_outcome
from . import helptext
from .reportscli import fail, log_parser, parse_args, stdout_fault, wants_json


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
    except (OSError, ValueError) as e:      # a full disk: the environment's, exit 3
        stdout_fault()
        raise EnvError("cannot write the output to standard output: "
                       f"{getattr(e, 'strerror', None) or e}") from None


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
        epilog=helptext.epilog(
            ("dmaharness diff before.log -- after.log",
             "# two runs a side, judged by a case's [expect]",
             "dmaharness diff b1.log b2.log -- a1.log a2.log \\",
             "    --case patches/6.1/cases/uvc-status-buffer",
             "dmaharness diff --json b1.log -- a1.log"),
            (EXIT_VERDICT, EXIT_INPUT), notes=(),
            meaning={0: "the outcome matches the case's expectation (without --case: "
                        "nothing new appears)",
                     EXIT_VERDICT: "it does not",
                     EXIT_ENV: "environment: standard output is closed or full",
                     EXIT_INPUT: "bad input: a log cannot be read, or a bad case file (as "
                                 "`run --case`)"}),
        formatter_class=helptext.Formatter, allow_abbrev=False)
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
    as_json = wants_json(argv)
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
        # the fields every command's object has (#44), after the version
        out = {"version": out.pop("version"), "command": "diff", "ok": outcome.matches, **out}
        out["before_logs"] = list(left.logs)
        out["after_logs"] = list(right.logs)
        return out
    print_out(as_json, obj() if as_json else None, lambda: format_outcome(outcome))
    return exit_code(outcome.matches)
