"""`dmaharness reports`, and what every console-log reader shares
(harness.cli.logcli's diff and failnth too): a log file ('-' for stdin)
in, text or ``--json`` out; exit 0 when the log was parsed (whatever it
holds), 2 for a usage error, 4 when the log cannot be read; a closed
stdout (``... | head``) is no traceback.

Apart from logcli so that `reports` imports the log parser and nothing
else: ./dmaharness hands it its arguments before importing every command,
which on a large log read on every core is a tenth of the time
(``python3 -m harness reports`` goes through harness.cli.main).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import sys
import traceback
from typing import Any, Callable

from .. import jsonout, proc
from . import helptext
from ..errors import (EXIT_ENV, EXIT_INPUT, EXIT_INTERNAL, EXIT_INTERRUPTED, EXIT_USAGE,
                      EnvError, HarnessError)
from ..jsonout import JSON_VERSION
from ..reports import parallel, summary


def fail(prog: str, as_json: bool, message: str, code: int, kind: str = "input") -> int:
    """An error of a log reader: its message on stderr and, with --json, one JSON object."""
    if as_json:
        print(jsonout.dumps({"command": prog.split()[-1], "ok": False,
                             "error": {"kind": kind, "message": message, "exit_code": code},
                             "failure": message}))
    print(f"{prog}: {message}", file=sys.stderr)
    return code


def wants_json(argv: list[str]) -> bool:
    """Whether an argv asks for --json, or for what argparse would have taken
    for it before allow_abbrev=False (--js): its usage error is still one
    JSON object."""
    return any(x in ("--json", "--jso", "--js") or x.startswith("--json=") for x in argv)


def stdout_fault() -> str | None:
    """Why standard output cannot take what a command writes (closed, a full
    disk, an I/O error), or None.  Once said, stdout is pointed at /dev/null
    so that the interpreter's last flush does not fail the exit code again."""
    out = sys.stdout
    if out is None:
        return "cannot write the output: standard output is closed"
    try:
        out.flush()
        return None
    except BrokenPipeError:
        why = None
    except (OSError, ValueError) as e:
        why = f"cannot write the output to standard output: {getattr(e, 'strerror', None) or e}"
    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), out.fileno())
    except (OSError, ValueError, io.UnsupportedOperation):
        pass
    return why


def stdout_usable() -> None:
    """EnvError (exit 3) before any work when standard output is closed."""
    if sys.stdout is None or getattr(sys.stdout, "closed", False) is True:
        raise EnvError("cannot write the output: standard output is closed")


# bisect-run speaks git bisect run's language: 0 good, 1 bad, >= 128 stops; its
# own codes for what main() says with 3, 70 and "a reader left" (0 would be good)
_BISECT_RUN = {"env": 131, "internal": 128, "reader_left": 131}


def guarded(name: str, func: Callable[[list[str]], int], argv: list[str]) -> int:
    """A command that parses its own arguments (reports, diff, bisect-run,
    capture, job), with main()'s last resort: a bug of ours is exit 70 with
    its traceback on stderr (and one JSON object with --json), never a
    verdict's 1; Ctrl-C is 130; a reader that left (``| head``) is no error;
    a closed or full standard output is the environment's (3)."""
    codes = _BISECT_RUN if name == "bisect-run" else {
        "env": EXIT_ENV, "internal": EXIT_INTERNAL, "reader_left": 0}
    prog = f"dmaharness {name}"
    try:
        if sys.stdout is None or getattr(sys.stdout, "closed", False) is True:
            return fail(prog, False, "cannot write the output: standard output is closed",
                        codes["env"], "environment")
        code = func(argv)
        sys.stdout.flush()          # a full disk says so here, not at exit
        return code
    except KeyboardInterrupt:
        proc.stop_all()
        sys.stderr.write(f"\n{prog}: interrupted; nothing is left running\n")
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return codes["reader_left"]
    except EnvError as e:           # print_out's: standard output is full or broken
        return fail(prog, False, e.message, codes["env"], "environment")
    except (OSError, ValueError) as e:
        why = stdout_fault()
        if why is None:
            return _internal(prog, argv, e, codes["internal"])
        return fail(prog, False, why, codes["env"], "environment")
    except Exception as e:
        return _internal(prog, argv, e, codes["internal"])


def _internal(prog: str, argv: list[str], e: Exception, code: int) -> int:
    """A bug of ours: its exit code, its traceback on stderr."""
    proc.stop_all()
    fail(prog, wants_json(argv), f"internal error (a dmaharness bug, please report it): "
         f"{type(e).__name__}: {e}", code, "internal")
    sys.stderr.write(traceback.format_exc())
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
        if wants_json(argv):
            fail(prog, True, message, EXIT_USAGE, "usage")
        return None, EXIT_USAGE


# what a console-log reader answers (reports, the fail-nth reader)
LOG_CODES = {0: "the log was parsed (whatever it holds)",
             EXIT_ENV: "environment: standard output is closed or full",
             EXIT_INPUT: "bad input: the log cannot be read"}


def log_parser(prog: str, description: str, log_help: str,
               example_lines: tuple[str, ...] = ()) -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog=prog, description=description,
        epilog=helptext.epilog(example_lines, LOG_CODES, meaning=LOG_CODES, notes=())
        if example_lines else helptext.table((*helptext.ALWAYS, *LOG_CODES), LOG_CODES) + "\n",
        formatter_class=helptext.Formatter, allow_abbrev=False)
    ap.add_argument("log", help=log_help + " ('-' for stdin)")
    ap.add_argument("--json", action="store_true", help="print JSON (version 1)")
    return ap


def _indented(obj: Any, pad: str) -> str:
    return json.dumps(obj, indent=2).replace("\n", "\n" + pad)


def reports_parser() -> argparse.ArgumentParser:
    ap = log_parser("dmaharness reports", "Print the kernel reports (KASAN, DMA-API, WARNING, "
                    "BUG, ...) found in a console log or saved dmesg, titled as syzkaller "
                    "titles them: one line a title, with its count, its kind and where it "
                    "first appears; --json gives every report whole.",
                    "console log or dmesg file",
                    ("dmaharness reports ~/.cache/dmaharness/runs/<run>/console.log",
                     "# every report whole, the log read on 4 cores",
                     "dmaharness reports --json --workers 4 console.log",
                     "# a saved dmesg, from standard input",
                     "dmesg | dmaharness reports -"))
    ap.add_argument("--workers", "-j", "--jobs", dest="workers", type=jobs_arg, default=0,
                    metavar="N",
                    help="parse a large log (8 MiB or more) with up to N processes, one a core "
                         "(default: every core this process may use; 1: one pass); the "
                         "reports are the same"
                         + helptext.old_spelling("-j", "--jobs", note="; elsewhere -j is "
                                                 "make's jobs"))
    return ap


def reports_main(argv: list[str]) -> int:
    """`dmaharness reports LOG`: the reports as they come, so that memory is
    bounded by the largest report, not by the log; a large log on every
    core (harness.reports.parallel).  With --json the reports wait in
    temporary files until the signatures, which come first, are known:
    {"version", "source", "signatures", "reports"}, indented as
    json.dump(..., indent=2) writes it but for the reports, one a line."""
    prog = "dmaharness reports"
    args, code = parse_args(reports_parser(), argv, prog)
    if args is None:
        return code
    try:
        got = parallel.parse_log(args.log, jobs=args.workers, want_json=args.json)
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
            head = {"version": JSON_VERSION, "command": "reports", "ok": True,
                    "source": args.log,
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
    except OSError as e:                # a full disk: the environment's, exit 3
        stdout_fault()
        raise EnvError(f"cannot write the output to standard output: {e.strerror or e}") \
            from None
    finally:
        got.close()
    return 0


def jobs_arg(text: str) -> int:
    """--workers: a whole number of cores, 1 to 1024."""
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if not 1 <= n <= 1024:
        raise argparse.ArgumentTypeError(f"{n} is not a number of cores (1 to 1024)")
    return n
