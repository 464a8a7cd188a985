"""Series bisection: which patch of a series brings a kernel report in or out.

The search space is the prefixes of a series: prefix k is the base series
(patches/<ver>/series: the detector) plus the first k patches of the
user's series.  The two ends are given as prefix lengths, ``--good G`` and
``--bad B``:

* ``G < B``: *cause* bisection.  The signature is absent at G and present
  at B; the culprit is the first patch after which it is present.
* ``G > B``: *fix* bisection.  The signature is present at B and absent at
  G; the culprit is the first patch after which it is absent.

Verdicts of a step: ``bad`` (the signature showed), ``good`` (it did not,
often enough to trust it) and ``skip`` (the prefix did not build, its patch
did not apply, or the guest failed in every run: never counted as bad).

Thresholds (:class:`Policy`), with syzkaller's pkg/bisect as the reference:

* syzkaller boots 10 (20 while flakiness is unknown) VMs per commit and
  calls it bad with at least max(2, n/6) crashed runs, because *any* crash
  counts for it; good needs n/2 clean runs.  Here a hit is the signature
  itself (a title, or a regular expression over titles), not any report,
  so ``min_hits`` = 1 matching run calls a step bad.
* Runs are booted in batches of ``batch`` (2: one per core) and the step
  stops as soon as it is decisive: after a batch with a hit (bad), or once
  the chance that a bad step would have shown nothing in all its clean
  runs, (1 - p)^clean, is at most ``max_miss`` (5%).  p, the chance that
  one run of a bad kernel shows the signature, is estimated at the bad end
  (all ``endpoint_runs`` runs are made there) as hits / (runs + 1), which
  stays below 1 even when every run hit, and is only ever lowered later
  (as syzkaller does): a bad step with ratio r sets p = min(p, (p + r) / 2).
  A deterministic signature (p = 0.8 from 4/4) thus needs 2 clean runs for
  good; one that shows in half the runs (p = 0.4) needs 6.
* ``max_runs`` caps a step.  Reaching it without a hit gives ``good`` with
  the confidence it earned; reaching it with no usable run gives ``skip``.
  A batch in which every run failed (boot failure, panic without the
  signature, no agent result) also gives ``skip`` at once.
* Confidence of the result: the product over good verdicts of
  1 - (1 - p)^clean (a bad verdict is taken as certain: the signature was
  seen), as syzkaller's "accumulated error probability".

The log: every finished step is appended as one JSON line to
``bisect.jsonl`` in the bisection's folder, which is named after a hash of
everything that decides its steps (kernel, series, signature, ends,
fragments, flood settings).  Running the same command again resumes: steps
in the log whose variant key still matches are reused.
"""

from __future__ import annotations

import json
import math
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Optional, Protocol, Sequence

from ..errors import InputError

HIT, CLEAN, FAILED, INFRA = "hit", "clean", "failed", "infra"
GOOD, BAD, SKIP = "good", "bad", "skip"


# --- signatures ------------------------------------------------------------------

class Matcher:
    """A signature given on the command line: a report title, or a regex.

    A title matches when it equals the text, or when the text, read as a
    Python regular expression, is found in it (``re.search``).  Text that
    is not a valid expression only matches exactly.
    """

    def __init__(self, text: str):
        if not text.strip():
            raise InputError("--signature must not be empty")
        self.text = text
        try:
            self.regex: Optional[re.Pattern[str]] = re.compile(text)
        except re.error:
            self.regex = None

    def matches(self, title: str) -> bool:
        return title == self.text or bool(self.regex and self.regex.search(title))

    def matching(self, titles: Sequence[str]) -> list[str]:
        return sorted({t for t in titles if self.matches(t)})


# --- runs, steps and the verdict -----------------------------------------------

@dataclass
class RunOutcome:
    """One boot of a step."""

    status: str                       # hit | clean | failed | infra
    titles: list[str] = field(default_factory=list)    # matching report titles
    detail: str = ""                  # the run folder, or why it failed
    wall: float = 0.0                 # seconds QEMU ran

    def to_json(self) -> dict:
        return {"status": self.status, "titles": self.titles, "detail": self.detail,
                "wall": round(self.wall, 2)}

    @staticmethod
    def from_json(d: dict) -> "RunOutcome":
        return RunOutcome(d["status"], list(d.get("titles", [])), d.get("detail", ""),
                          d.get("wall", 0.0))


@dataclass(frozen=True)
class Policy:
    max_runs: int = 6
    batch: int = 2
    endpoint_runs: int = 4
    min_hits: int = 1
    max_miss: float = 0.05

    def check(self) -> None:
        if self.batch < 1 or self.max_runs < 1 or self.endpoint_runs < 1 or self.min_hits < 1:
            raise InputError("--runs, --endpoint-runs, --parallel and --min-hits must be >= 1")
        if not 0 < self.max_miss < 1:
            raise InputError("--max-miss must be between 0 and 1 (exclusive)")

    def to_json(self) -> dict:
        return dict(self.__dict__)


def counts(runs: Sequence[RunOutcome]) -> dict[str, int]:
    c = {HIT: 0, CLEAN: 0, FAILED: 0, INFRA: 0}
    for r in runs:
        c[r.status] = c.get(r.status, 0) + 1
    return c


def miss_chance(p: float, clean: int) -> float:
    """Chance that a bad kernel shows nothing in `clean` runs."""
    return (1.0 - p) ** clean


def decide(runs: Sequence[RunOutcome], policy: Policy, p: float, *,
           endpoint: bool = False) -> tuple[Optional[str], str]:
    """The verdict the runs so far support, or None to run another batch.

    Returns (verdict, reason).  Endpoints run all their runs (they
    estimate p), so they get a verdict only at ``endpoint_runs``.
    """
    c = counts(runs)
    ok = c[HIT] + c[CLEAN]
    cap = policy.endpoint_runs if endpoint else policy.max_runs
    if endpoint and len(runs) < cap:
        return None, ""
    if c[HIT] >= policy.min_hits:
        return BAD, f"signature in {c[HIT]} of {ok} run(s)"
    last = runs[-policy.batch:] if runs else []
    if not endpoint and last and all(r.status in (FAILED, INFRA) for r in last) and ok == 0:
        return SKIP, f"no usable run: {last[-1].detail}"
    if c[HIT] == 0 and ok > 0 and not endpoint and miss_chance(p, ok) <= policy.max_miss:
        return GOOD, f"no signature in {ok} run(s); a bad kernel would show nothing " \
                     f"with chance {miss_chance(p, ok):.3f}"
    if len(runs) >= cap:
        if ok == 0:
            return SKIP, f"no usable run in {len(runs)}: {runs[-1].detail}"
        if c[HIT] == 0 and endpoint:
            return GOOD, f"no signature in {ok} run(s)"
        if c[HIT] == 0:
            return GOOD, f"no signature in {ok} run(s) (run cap reached; a bad kernel would " \
                         f"show nothing with chance {miss_chance(p, ok):.3f})"
        return GOOD, f"signature in {c[HIT]} run(s), fewer than --min-hits {policy.min_hits}"
    return None, ""


@dataclass
class Step:
    prefix: int
    verdict: str
    reason: str
    runs: list[RunOutcome]
    seconds: float = 0.0
    key: str = ""                      # the variant's build key
    endpoint: bool = False
    resumed: bool = False
    confidence: float = 1.0            # chance this verdict is right (good steps)
    build_seconds: float = 0.0
    run_seconds: float = 0.0           # the batches of boots, wall

    def to_json(self) -> dict:
        c = counts(self.runs)
        return {"prefix": self.prefix, "verdict": self.verdict, "reason": self.reason,
                "runs": len(self.runs), "hits": c[HIT], "clean": c[CLEAN],
                "failed": c[FAILED] + c[INFRA], "seconds": round(self.seconds, 1),
                "build_seconds": round(self.build_seconds, 1),
                "run_seconds": round(self.run_seconds, 1),
                "key": self.key, "endpoint": self.endpoint, "resumed": self.resumed,
                "confidence": round(self.confidence, 4),
                "evidence": [r.to_json() for r in self.runs]}

    @staticmethod
    def from_json(d: dict) -> "Step":
        return Step(d["prefix"], d["verdict"], d.get("reason", ""),
                    [RunOutcome.from_json(r) for r in d.get("evidence", [])],
                    d.get("seconds", 0.0), d.get("key", ""), d.get("endpoint", False),
                    True, d.get("confidence", 1.0), d.get("build_seconds", 0.0),
                    d.get("run_seconds", 0.0))


class Runner(Protocol):
    """What a bisection needs from the world (a fake one in unit tests)."""

    def key(self, prefix: int) -> str:
        """The build key of the prefix's variant ('' when it cannot be known)."""

    def build(self, prefix: int) -> Optional[str]:
        """Build the prefix's variant; None when it built, else why not (skip)."""

    def run(self, prefix: int, first: int, count: int) -> list[RunOutcome]:
        """Boot it `count` times (runs first .. first+count-1), at once."""


# --- the search --------------------------------------------------------------------

@dataclass
class Result:
    mode: str                          # cause | fix
    good: int
    bad: int
    steps: list[Step]
    culprit: Optional[int] = None      # 1-based patch number in the series
    range: Optional[tuple[int, int]] = None   # culprit among these (skips)
    confidence: float = 1.0
    p: float = 0.0
    error: Optional[str] = None        # endpoint check failed

    @property
    def found(self) -> bool:
        return self.culprit is not None

    def to_json(self) -> dict:
        return {"mode": self.mode, "good": self.good, "bad": self.bad,
                "culprit": self.culprit, "range": list(self.range) if self.range else None,
                "confidence": round(self.confidence, 4), "repro_chance": round(self.p, 4),
                "error": self.error, "steps": [s.to_json() for s in self.steps],
                "search_steps": sum(1 for s in self.steps if not s.endpoint)}


def next_prefix(lo: int, hi: int, skipped: set[int]) -> Optional[int]:
    """The untested prefix strictly between lo and hi nearest their middle."""
    mid = (lo + hi) // 2
    cands = [k for k in range(lo + 1, hi) if k not in skipped]
    if not cands:
        return None
    return min(cands, key=lambda k: (abs(k - mid), k))


class Log:
    """bisect.jsonl: one finished step per line; reused on resume."""

    def __init__(self, path: Optional[Path]):
        self.path = path
        self.done: dict[int, Step] = {}
        if path and path.is_file():
            for n, line in enumerate(path.read_text().splitlines(), 1):
                if not line.strip():
                    continue
                try:
                    d = json.loads(line)
                    step = Step.from_json(d)
                except (ValueError, KeyError, TypeError):
                    # a line cut by a crash: everything after it is redone
                    break
                self.done[step.prefix] = step

    def get(self, prefix: int, key: str, endpoint: bool) -> Optional[Step]:
        s = self.done.get(prefix)
        if s and s.key == key and s.endpoint == endpoint:
            return s
        return None

    def append(self, step: Step) -> None:
        if self.path:
            with open(self.path, "a") as f:
                f.write(json.dumps(step.to_json()) + "\n")
                f.flush()


def check(n_patches: int, good: int, bad: int, policy: Policy) -> None:
    """Reject ends and thresholds that cannot make a bisection (InputError)."""
    policy.check()
    if not (0 <= good <= n_patches and 0 <= bad <= n_patches):
        raise InputError(f"--good {good} and --bad {bad} must be prefix lengths "
                         f"between 0 and {n_patches} (the series has {n_patches} patches)")
    if good == bad:
        raise InputError(f"--good and --bad are both {good}: nothing to bisect")


def bisect(runner: Runner, n_patches: int, good: int, bad: int, policy: Policy, *,
           log: Optional[Log] = None, note: Callable[[str], None] = lambda s: None) -> Result:
    """Check both ends, then binary-search the prefixes between them."""
    check(n_patches, good, bad, policy)
    log = log or Log(None)
    mode = "cause" if good < bad else "fix"
    res = Result(mode, good, bad, [])
    p = 1.0

    def step(prefix: int, endpoint: bool) -> Step:
        key = runner.key(prefix)
        old = log.get(prefix, key, endpoint)
        if old:
            note(f"[bisect] prefix {prefix}: {old.verdict} (from the log: {old.reason})")
            res.steps.append(old)
            return old
        t0 = time.monotonic()
        why = runner.build(prefix)
        t1 = time.monotonic()
        runs: list[RunOutcome] = []
        if why is not None:
            verdict, reason = SKIP, f"build: {why}"
        else:
            verdict = None
            while verdict is None:
                n = min(policy.batch, (policy.endpoint_runs if endpoint else policy.max_runs)
                        - len(runs))
                runs += runner.run(prefix, len(runs), n)
                verdict, reason = decide(runs, policy, p, endpoint=endpoint)
        t2 = time.monotonic()
        s = Step(prefix, verdict, reason, runs, t2 - t0, key, endpoint,
                 build_seconds=t1 - t0, run_seconds=t2 - t1)
        note(f"[bisect] prefix {prefix}: {verdict} ({reason})")
        log.append(s)
        res.steps.append(s)
        return s

    # the ends: the --good one must not show the signature, the --bad one must
    sg = step(good, True)
    if sg.verdict != GOOD:
        res.error = (f"the --good end (prefix {good}) "
                     + ("shows the signature: " if sg.verdict == BAD else "could not be tested: ")
                     + sg.reason)
        return res
    sb = step(bad, True)
    c = counts(sb.runs)
    if sb.verdict != BAD:
        res.error = (f"the --bad end (prefix {bad}) "
                     + ("does not show the signature: " if sb.verdict == GOOD else
                        "could not be tested: ") + sb.reason)
        return res
    ok = c[HIT] + c[CLEAN]
    p = c[HIT] / (ok + 1)
    res.p = p
    note(f"[bisect] one run of a bad kernel shows the signature with p ~ {p:.2f} "
         f"({c[HIT]}/{ok} at the bad end)")

    # search: lo keeps the state of the lower end, hi the state of the higher
    lo, hi = min(good, bad), max(good, bad)
    lo_verdict = GOOD if mode == "cause" else BAD
    skipped: set[int] = set()
    while True:
        k = next_prefix(lo, hi, skipped)
        if k is None:
            break
        s = step(k, False)
        if s.verdict == SKIP:
            skipped.add(k)
            continue
        if s.verdict == BAD:
            hits, ok = counts(s.runs)[HIT], counts(s.runs)[HIT] + counts(s.runs)[CLEAN]
            if ok:
                p = min(p, (p + hits / ok) / 2)
        if s.verdict == lo_verdict:
            lo = k
        else:
            hi = k
    res.p = p
    for s in res.steps:
        if s.verdict == GOOD and not s.endpoint:
            s.confidence = 1.0 - miss_chance(p, counts(s.runs)[CLEAN])
            res.confidence *= s.confidence
    if any(lo < k < hi for k in skipped):
        res.range = (lo + 1, hi)
    else:
        res.culprit = hi
    return res


def format_result(res: Result, names: Sequence[str], signature: str) -> str:
    """The text report: culprit, then every step with its evidence."""
    out = []
    what = "brings in" if res.mode == "cause" else "takes away"
    if res.error:
        out.append(f"bisect: no culprit: {res.error}")
    elif res.culprit is not None:
        out.append(f"culprit: patch {res.culprit}/{len(names)} {names[res.culprit - 1]}")
        out.append(f"  it {what} {signature!r}")
        out.append(f"  confidence {res.confidence:.3f} (chance that no good verdict was a "
                   f"missed bad one; one bad run shows the signature with p ~ {res.p:.2f})")
    elif res.range:
        a, b = res.range
        out.append(f"culprit: one of patches {a}..{b} (the ones between could not be tested):")
        for i in range(a, b + 1):
            out.append(f"  {i:3d} {names[i - 1]}")
    out.append(f"steps ({sum(1 for s in res.steps if not s.endpoint)} search + "
               f"{sum(1 for s in res.steps if s.endpoint)} endpoint checks):")
    out.append(f"  {'prefix':>6}  {'verdict':7} {'hits':>4}/{'runs':<4} {'time':>6}  last patch / reason")
    for s in res.steps:
        c = counts(s.runs)
        last = names[s.prefix - 1] if s.prefix else "(no patch of the series)"
        tag = " [end]" if s.endpoint else (" [log]" if s.resumed else "")
        out.append(f"  {s.prefix:>6}  {s.verdict:7} {c[HIT]:>4}/{len(s.runs):<4} "
                   f"{s.seconds:5.0f}s  {last}{tag}")
        out.append(f"  {'':6}  {'':7} {'':>9} {'':6}  {s.reason}")
    return "\n".join(out)


def confidence_runs(p: float, max_miss: float) -> int:
    """Clean runs a good verdict needs at repro chance p (for docs and tests)."""
    if p >= 1:
        return 1
    if p <= 0:
        return math.inf  # type: ignore[return-value]
    return max(1, math.ceil(math.log(max_miss) / math.log(1 - p)))
