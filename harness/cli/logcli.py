"""The console-log readers: `dmaharness reports`, `python3 -m harness.cli.failnth`.

One shape for both: a log file (``-`` for stdin) in, text or ``--json``
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

from ..errors import EXIT_INPUT, EXIT_USAGE
from ..reports import engine, failnth


def run(argv: list[str], *, prog: str, description: str, log_help: str,
        analyse: Callable[[str, str], tuple[Any, Callable[[], str]]], indent: int = 2) -> int:
    """``analyse(text, path)`` returns (the JSON object, a function giving the text)."""
    ap = argparse.ArgumentParser(
        prog=prog, description=description,
        epilog="Exit codes: 0 parsed, 2 usage error, 4 the log cannot be read.")
    ap.add_argument("log", help=log_help + " ('-' for stdin)")
    ap.add_argument("--json", action="store_true", help="print JSON (version 1)")
    try:
        args = ap.parse_args(argv)
    except SystemExit as e:
        return 0 if e.code == 0 else EXIT_USAGE
    try:
        if args.log == "-":
            text = sys.stdin.read()
        else:
            with open(args.log, encoding="utf-8", errors="replace") as f:
                text = f.read()
    except OSError as e:
        print(f"{prog}: cannot read {args.log}: {e.strerror or e}", file=sys.stderr)
        return EXIT_INPUT
    obj, text_of = analyse(text, args.log)
    try:
        if args.json:
            json.dump(obj, sys.stdout, indent=indent)
            sys.stdout.write("\n")
        else:
            sys.stdout.write(text_of())
        sys.stdout.flush()
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    return 0


def reports_main(argv: list[str]) -> int:
    """`dmaharness reports LOG`."""
    def analyse(text: str, path: str):
        reports = engine.parse(text)
        return engine.to_json(reports, path), lambda: engine.format_text(reports)
    return run(argv, prog="dmaharness reports", analyse=analyse,
               description="Print the kernel reports (KASAN, DMA-API, WARNING, BUG, ...) "
                           "found in a console log or saved dmesg, titled as syzkaller "
                           "titles them.",
               log_help="console log or dmesg file")


def failnth_main(argv: list[str]) -> int:
    """`python3 -m harness.cli.failnth LOG`."""
    def analyse(text: str, path: str):
        res = failnth.parse(text)
        return res.to_json(), lambda: failnth.format_text(res)
    return run(argv, prog="python3 -m harness.cli.failnth", analyse=analyse, indent=1,
               description="Read a run's console for fail-nth's steps (what failed, what "
                           "it left, the reports between its markers) and kmemleak's leaks.",
               log_help="console log")
