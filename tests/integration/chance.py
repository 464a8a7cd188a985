"""Tests whose signal depends on timing.

A case's verdict needs every expected report in every "before" run.  Some
of those reports need a race to be hit (a CPU access while the device owns
a line, a hang that needs a control change at the right moment): each run
shows them with a probability below 1, measured per case (bench/seed-signal,
the case READMEs).  A test that runs such a case once would fail now and
then for nothing.  `run_case` runs the case again, up to a bound, when and
only when the verdict's sole shortfall is an expected report missing from
a before run while the after runs are clean of it; any other reason (a new
report, an expected report still present after the fix, a crash) fails at
once.  With a per-run miss probability p, n attempts fail by chance with
probability p**n; each test's docstring gives its p and n.
"""

import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CLI = [sys.executable, str(ROOT / "dmaharness")]

_MISS = re.compile(r"^expected fixed /.*/: (no such report on either side|"
                   r"matching reports in \d+/\d+ before runs and 0/\d+ after runs: .*)$"
                   r"|^expected fixed site .*: in \d+/\d+ before runs and 0/\d+ after runs$")


def chance_miss(verdicts) -> bool:
    """Is every reason of every failed verdict an expected report missing from
    a before run (and absent after)?  False when some verdict failed otherwise,
    or when none failed."""
    reasons = [r for v in verdicts for r in v.get("reasons", [])]
    return bool(reasons) and all(_MISS.match(r) for r in reasons)


def run_case(args, attempts: int, timeout: float = 3600):
    """`dmaharness run ... --case ... --json -q` (args without --json/-q),
    again while a failure is only a chance miss, at most `attempts` times.
    Returns (CompletedProcess, parsed JSON or None, attempts used, the
    earlier attempts' reasons)."""
    missed: list[list[str]] = []
    for attempt in range(1, attempts + 1):
        r = subprocess.run(CLI + list(args) + ["--json", "-q"], capture_output=True,
                           text=True, timeout=timeout)
        try:
            out = json.loads(r.stdout)
        except json.JSONDecodeError:
            return r, None, attempt, missed
        comps = (out.get("outcome") or {}).get("comparisons") or []
        verdicts = [c.get("verdict", {}) for c in comps]
        if r.returncode == 0 or not chance_miss(verdicts) or attempt == attempts:
            return r, out, attempt, missed
        missed.append([x for v in verdicts for x in v.get("reasons", [])])
        print(f"\n  (chance miss on attempt {attempt}, running the case again: "
              f"{missed[-1][0][:160]})", file=sys.stderr, flush=True)
    raise AssertionError("unreachable")
