"""`bisect-run`: `git bisect run`'s test of the commit checked out in your tree.

Its own parser, and exit codes that git bisect run reads: 0 good, 1 bad,
125 skip, and 128..132 to stop the bisection (a harness bug, usage,
interrupted, environment, bad input).  Only a commit that cannot be built or
tested itself is skipped: whatever is wrong with the set-up (the cache
folder, the arguments, the case or fragments, a missing tool) would be wrong
for every commit, so it stops the bisection instead of skipping them all.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import io
import signal
import sys
import time
import traceback
from pathlib import Path

from .. import errors, jsonout, paths, proc
from ..errors import HarnessError
from ..progress import Progress, fmt_duration
from ..checks import bisect, bisectjob
from ..kernel import series as kseries
from . import helptext
from .common import (TIMEOUT_BEYOND_FLOOD, boot_group, count, flags, flood_group, on_sigterm,
                     variant_group, variant_spec)
from .reportscli import stdout_fault, wants_json


# --- exit codes for `git bisect run` ---------------------------------------------------

BR_GOOD, BR_BAD, BR_SKIP = 0, 1, 125

BR_INTERNAL = 128       # a bug in the harness: the traceback is printed

BR_USAGE = 129          # bad command line (argparse's own 2 would mean "bad")

BR_INTERRUPTED = 130    # Ctrl-C or SIGTERM

BR_ENV = 131            # a tool or package is missing, the cache folder is unusable, stdout full

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

The detector series is patches/X.Y/series for the checkout's version; for
another version, those of {supported} are tried, the nearest first.  When
none applies the commit is skipped (--no-detector builds without it).""".format(
    supported=", ".join(kseries.SUPPORTED))

BR_EPILOG = """\
examples:
  # one commit by hand: the one checked out in ~/src/linux
  dmaharness bisect-run --tree ~/src/linux --signature 'KASAN: dma-owned'
  # a flaky signature: more runs a commit, a lower chance per run
  dmaharness bisect-run --signature 'in uvc_status_stop$' --repro-chance 0.4 \\
      --runs 10 --duration 10s

exit codes (what git bisect run reads):
  0    good: no run showed the signature, and a bad kernel would have shown it
       with chance >= 1 - --max-miss given --repro-chance
  1    bad: a run showed the signature
  125  skip: this commit cannot be tested: the detector series or --series
       does not apply to it, a config option of the fragments does not stick,
       it does not build, or the guest failed in every run
  128  internal error (a harness bug; traceback on stderr)   } git bisect run
  129  usage error (bad command line)                         } stops the
  130  interrupted (Ctrl-C, SIGTERM)                          } bisection on
  131  environment: a tool or package is missing (make deps), } any code
       the cache folder is unusable or inside the checkout,   } above 127:
       standard output is closed or full                      } the set-up's
  132  bad input: not a kernel checkout, a --series,          } fault, the
       --fragment or --case file is missing or wrong          } same for
                                                              } every commit

verdict: runs are booted --parallel at a time (2) until harness/checks/bisect.py's
decide() is decisive: bad after one run with the signature; good once
(1 - repro-chance)^clean_runs <= --max-miss (with the default 0.8 and 0.05:
2 clean runs; with 0.4: 6); skip when every run of a batch failed; at most
--runs runs.  --repro-chance is the chance that one run of a bad kernel shows
the signature: 0.8 is what a deterministic one gets in `dmaharness bisect`
(4 hits of 4 runs at the bad end, 4/5); lower it for a flaky signature.

run settings (boot and flood options): defaults < the profile's run table <
the --case's [run] table < the flags given on the command line.

The cache folder is $DMAHARNESS_CACHE, else ~/.cache/dmaharness.
"""

class _BisectRunParser(argparse.ArgumentParser):
    def error(self, message):
        self.print_usage(sys.stderr)
        self.exit(BR_USAGE, f"{self.prog}: error: {message}\n")

def bisect_run_parser() -> argparse.ArgumentParser:
    p = _BisectRunParser(prog="dmaharness bisect-run", description=BR_DESCRIPTION,
                         epilog=BR_EPILOG, formatter_class=helptext.Formatter,
                         allow_abbrev=False)
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
    g.add_argument("--runs", type=count, default=6, help="most runs per step (6)")
    g.add_argument("--parallel", type=count, default=2, help="runs booted at once (2)")
    flood_group(p)
    boot_group(p, timeout_help=TIMEOUT_BEYOND_FLOOD, run_dir=False)
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

def check_cache(tree: Path) -> None:
    """EnvError when the cache folder cannot serve any commit: not a folder,
    not readable or writable, or inside the checkout being bisected (its
    mirror and builds would land in the tree they are made from)."""
    base = paths.cache_dir()
    real = Path(tree).resolve()
    # a folder that is no git checkout is bad input, which test_commit says (132)
    if (real / ".git").exists() and (base == real or real in base.parents):
        raise errors.EnvError(f"cache folder {base} is inside the checkout {real} being "
                              "bisected; set DMAHARNESS_CACHE to a folder outside it",
                              path=str(base))
    for part in ("work", "locks"):
        paths.sub(part)


def bisect_run(argv: list[str]) -> int:
    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err):
            a = bisect_run_args(list(argv))
    except SystemExit as e:
        sys.stderr.write(err.getvalue())
        code = e.code if isinstance(e.code, int) else BR_USAGE
        if code and wants_json(argv):       # one JSON object, a bad command line included
            lines = err.getvalue().strip().splitlines()
            reason = lines[-1].split(": error: ", 1)[-1] if lines else "bad command line"
            print(jsonout.dumps({"command": "bisect-run", "ok": False, "verdict": "abort",
                                 "exit_code": code, "reason": reason}))
        return code
    sys.stderr.write(err.getvalue())
    old_term = signal.signal(signal.SIGTERM, on_sigterm)
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
        check_cache(spec.tree)               # the set-up's fault: stop, never skip
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
        try:
            print(jsonout.dumps(payload), flush=True)
        except BrokenPipeError:
            stdout_fault()
        except (OSError, ValueError) as e:  # no verdict git should act on: stop
            stdout_fault()
            code = BR_ENV
            sys.stderr.write("bisect-run: cannot write the output to standard output: "
                             f"{getattr(e, 'strerror', None) or e}\n")
    if detail and (code >= 128 or not a.quiet):
        sys.stderr.write(detail.rstrip() + "\n")
    what = {0: "good", 1: "bad", 125: "skip"}.get(code, "stop the bisection")
    sys.stderr.write(f"bisect-run: {payload.get('commit', '?')[:12]}"
                     f"{'+dirty' if payload.get('dirty') else ''} {verdict}: {reason} "
                     f"-> exit {code} ({what}) in {fmt_duration(time.monotonic() - t0)}\n")
    return code
