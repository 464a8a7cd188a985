"""Diff kernel reports between a before side and an after side.

Each side is R runs (R may differ between the sides); a run is the list
of reports (or signatures, see :mod:`harness.reports.engine`) of one boot.
Reports are compared by title.  For a title let ``b`` be the number of
before runs it appears in (out of ``Rb``) and ``a`` the number of after
runs (out of ``Ra``).  Its status is:

=========== ================================================================
``flaky``   not reproducible on a side where it appears: ``0 < b < Rb`` or
            ``0 < a < Ra``.  ``flaky_side`` says which side(s)
``fixed``   in every before run, in no after run (``b == Rb``, ``a == 0``)
``new``     in every after run, in no before run (``a == Ra``, ``b == 0``)
``unchanged`` in every run of both sides
=========== ================================================================

Each row also has the report count of every run (a title printed 37 times
in the first before run counts 37 there).

Evaluation against a case's expectation (:class:`harness.checks.case.Expect`):
the outcome *matches* when

* every ``expect.fixed`` regex is *fixed as a class*: in every before
  run at least one report's title matches it (``re.search``), and in no
  after run does any.  The titles may differ from run to run: KASAN
  reports only the first bad access of a boot, so a race shows as
  ``dma-owned Read in str_to_user`` in one run and ``dma-owned Read in
  uvc_status_stop`` in the next (each row ``flaky``; the class ``fixed``).
  A regex that names one title is exactly a ``fixed`` row; and
* no title seen in an after run but in no before run (a ``new`` row, or a
  ``flaky`` row with ``b == 0``) appears, unless it matches one of
  ``expect.new_allowed``.  Something new that showed up only once still
  counts: with few runs, "sometimes" is the usual shape of a new bug.
  A title all of whose reports are corrupted (a report cut short or
  intermixed, ``Report.corrupted``, ``... in corrupted``) is not a new
  signature, as syzkaller files no bug for a corrupted report: it is noted,
  not counted.

Without a case (``dmaharness diff`` with no ``--case``) the expectation is
"nothing new": no regex is expected fixed.

For a case with several after variants, the before side is diffed against
each of them (:func:`compare_case`); the case matches when every
comparison matches.

Exit codes (``dmaharness diff``, :func:`exit_code`):

  0  the outcome matches the expectation
  1  it does not
  2  usage error
  4  bad input: an unreadable log, a bad case file (as `run --case`)
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Iterable, Optional, Sequence, Union

from ..jsonout import JSON_VERSION
from ..reports.engine import Report, Signature
from . import sitekeys

EXIT_MATCH = 0
EXIT_MISMATCH = 1
EXIT_ERROR = 2

STATUSES = ("new", "fixed", "flaky", "unchanged")   # table order

Run = Sequence[Union[Report, Signature]]


@dataclass
class Row:
    """One title of a diff."""

    title: str
    kind: str
    status: str                  # one of STATUSES
    before_counts: list[int]     # reports per before run
    after_counts: list[int]      # reports per after run
    guilty_frame: Optional[str] = None
    example: Optional[Report] = None   # the first report seen (before side first)
    example_side: str = "before"       # the side `example` comes from
    location: Optional[str] = None     # file:line of the guilty frame, when symbolized
    frames: Optional[list] = None      # example's symbolized stack (harness.kernel.symbolize.Frame)
    layout: Optional[object] = None    # harness.reports.layout.Layout of a detector report's buffer
    corrupted: bool = False            # every report of the title is corrupted

    @property
    def before_runs(self) -> int:
        """Number of before runs the title appears in."""
        return sum(1 for c in self.before_counts if c)

    @property
    def after_runs(self) -> int:
        return sum(1 for c in self.after_counts if c)

    @property
    def flaky_side(self) -> Optional[str]:
        """"before", "after" or "both" for a flaky row, else None."""
        b = 0 < self.before_runs < len(self.before_counts)
        a = 0 < self.after_runs < len(self.after_counts)
        if b and a:
            return "both"
        return "before" if b else "after" if a else None

    @property
    def after_only(self) -> bool:
        """Seen in an after run and in no before run."""
        return self.after_runs > 0 and self.before_runs == 0

    def to_json(self) -> dict:
        out = {"title": self.title, "kind": self.kind, "status": self.status,
               "flaky_side": self.flaky_side, "guilty_frame": self.guilty_frame,
               "corrupted": self.corrupted, "location": self.location,
               "before_counts": list(self.before_counts),
               "after_counts": list(self.after_counts)}
        if self.frames is not None:
            out["stack"] = [f.to_json() for f in self.frames]
        if self.layout is not None:
            out["layout"] = self.layout.to_json()
        return out


@dataclass
class Diff:
    before_label: str
    after_label: str
    runs_before: int
    runs_after: int
    rows: list[Row]

    def by_status(self, status: str) -> list[Row]:
        return [r for r in self.rows if r.status == status]

    def summary(self) -> dict[str, int]:
        return {s: len(self.by_status(s)) for s in STATUSES}

    def to_json(self) -> dict:
        return {"before": {"label": self.before_label, "runs": self.runs_before},
                "after": {"label": self.after_label, "runs": self.runs_after},
                "summary": self.summary(),
                "signatures": [r.to_json() for r in self.rows]}


@dataclass
class Verdict:
    matches: bool
    reasons: list[str]           # why it does not match (empty when it does)
    notes: list[str] = field(default_factory=list)   # what matched, flaky rows

    def to_json(self) -> dict:
        return {"matches": self.matches, "reasons": list(self.reasons), "notes": list(self.notes)}


@dataclass
class Comparison:
    """One before-versus-after diff and its verdict."""

    diff: Diff
    verdict: Verdict

    def to_json(self) -> dict:
        return {**self.diff.to_json(), "verdict": self.verdict.to_json()}


@dataclass
class Outcome:
    """Every comparison of a case (one per after variant)."""

    comparisons: list[Comparison]
    case: Optional[str] = None

    @property
    def matches(self) -> bool:
        return all(c.verdict.matches for c in self.comparisons)

    def to_json(self) -> dict:
        return {"version": JSON_VERSION, "case": self.case, "matches": self.matches,
                "exit_code": exit_code(self.matches),
                "comparisons": [c.to_json() for c in self.comparisons]}


# --------------------------------------------------------------------------
# Diff


def _tally(run: Run) -> dict[str, tuple[int, str, Optional[Report], bool]]:
    """title -> (count, kind, first report, all corrupted) for one run."""
    out: dict[str, tuple[int, str, Optional[Report], bool]] = {}
    for item in run:
        if isinstance(item, Signature):
            n, kind, first, bad = item.count, item.kind, item.first, item.corrupted
        else:
            n, kind, first, bad = 1, item.kind, item, item.corrupted
        old = out.get(item.title)
        if old is None:
            out[item.title] = (n, kind, first, bad)
        else:
            out[item.title] = (old[0] + n, old[1], old[2], old[3] and bad)
    return out


def _status(b: int, rb: int, a: int, ra: int) -> str:
    if 0 < b < rb or 0 < a < ra:
        return "flaky"
    if a == 0:
        return "fixed"
    if b == 0:
        return "new"
    return "unchanged"


def diff_runs(before: Sequence[Run], after: Sequence[Run], *,
              before_label: str = "before", after_label: str = "after") -> Diff:
    """Diff R before runs against R' after runs (R, R' >= 1)."""
    if not before or not after:
        raise ValueError("each side needs at least one run")
    tb = [_tally(r) for r in before]
    ta = [_tally(r) for r in after]
    order: dict[str, tuple[str, Optional[Report], str]] = {}
    corrupted: dict[str, bool] = {}
    for side, tallies in (("before", tb), ("after", ta)):
        for t in tallies:
            for title, (_, kind, first, bad) in t.items():
                order.setdefault(title, (kind, first, side))
                corrupted[title] = corrupted.get(title, True) and bad
    rows = []
    for title, (kind, first, side) in order.items():
        bc = [t[title][0] if title in t else 0 for t in tb]
        ac = [t[title][0] if title in t else 0 for t in ta]
        status = _status(sum(1 for c in bc if c), len(bc), sum(1 for c in ac if c), len(ac))
        rows.append(Row(title, kind, status, bc, ac,
                        first.guilty_frame if first is not None else None, first, side,
                        corrupted=corrupted[title]))
    rank = {s: i for i, s in enumerate(STATUSES)}
    rows.sort(key=lambda r: (rank[r.status], r.title))
    return Diff(before_label, after_label, len(before), len(after), rows)


# --------------------------------------------------------------------------
# Evaluation


def evaluate(diff: Diff, fixed: Iterable[re.Pattern[str]] = (),
             new_allowed: Iterable[re.Pattern[str]] = ()) -> Verdict:
    """Does the diff show the expected outcome?  See the module docstring."""
    reasons: list[str] = []
    notes: list[str] = []
    new_allowed = list(new_allowed)
    for rx in fixed:
        rows = [r for r in diff.rows if rx.search(r.title)]
        if not rows:
            reasons.append(f"expected fixed /{rx.pattern}/: no such report on either side")
            continue
        b = sum(1 for i in range(diff.runs_before) if any(r.before_counts[i] for r in rows))
        a = sum(1 for i in range(diff.runs_after) if any(r.after_counts[i] for r in rows))
        titles = "; ".join(f"{r.title} ({r.status})" for r in rows)
        if b == diff.runs_before and a == 0:
            notes.append(f"expected fixed /{rx.pattern}/: {titles}")
        else:
            reasons.append(f"expected fixed /{rx.pattern}/: matching reports in "
                           f"{b}/{diff.runs_before} before runs and {a}/{diff.runs_after} "
                           f"after runs: {titles}")
    for r in diff.rows:
        if not r.after_only:
            if r.status == "flaky":
                notes.append(f"flaky ({r.flaky_side}): {r.title}")
            continue
        # the row's own status word (new, or flaky when not in every after
        # run), so that the reasons say what the table and its summary say
        where = f"in {r.after_runs}/{diff.runs_after} {diff.after_label} runs"
        if r.corrupted:
            notes.append(f"{r.status} but corrupted, not a signature ({where}): {r.title}")
        elif any(p.search(r.title) for p in new_allowed):
            notes.append(f"{r.status} but allowed ({where}): {r.title}")
        else:
            reasons.append(f"{r.status} ({where}): {r.title}")
    return Verdict(not reasons, reasons, notes)


def evaluate_sites(keys: Iterable[str], before: Sequence[Run], after: Sequence[Run]
                   ) -> tuple[list[str], list[str]]:
    """(reasons, notes) for sweep site keys expected fixed: each in every
    before run and in no after run (harness.checks.sitekeys; ``*`` in a
    key matches any text)."""
    reasons, notes = [], []
    kb = [sitekeys.run_keys(r) for r in before]
    ka = [sitekeys.run_keys(r) for r in after]
    for key in keys:
        b = sum(1 for k in kb if sitekeys.matching(key, k))
        a = sum(1 for k in ka if sitekeys.matching(key, k))
        owned = sum(1 for k in kb if any(k[m] for m in sitekeys.matching(key, k)))
        if b == len(kb) and a == 0:
            notes.append(f"expected fixed site {key}: in {b}/{len(kb)} before runs "
                         f"({owned} with a dma-owned access), in no after run")
        else:
            reasons.append(f"expected fixed site {key}: in {b}/{len(kb)} before runs and "
                           f"{a}/{len(ka)} after runs")
    return reasons, notes


def compare(before: Sequence[Run], after: Sequence[Run], expect=None, *,
            before_label: str = "before", after_label: str = "after") -> Comparison:
    """diff_runs + evaluate; `expect` is a harness.checks.case.Expect or None."""
    d = diff_runs(before, after, before_label=before_label, after_label=after_label)
    if expect is None:
        return Comparison(d, evaluate(d))
    v = evaluate(d, expect.fixed, expect.new_allowed)
    if getattr(expect, "sites", ()):
        reasons, notes = evaluate_sites(expect.sites, before, after)
        v = Verdict(v.matches and not reasons, v.reasons + reasons, notes + v.notes)
    return Comparison(d, v)


def compare_case(case, before: Sequence[Run], after: dict[str, Sequence[Run]]) -> Outcome:
    """Diff the case's before runs against the runs of each after variant.

    `case` is a harness.checks.case.Case; `after` maps after-variant names to
    their runs (every after variant of the case must be there).
    """
    missing = [v.name for v in case.afters if v.name not in after]
    if missing:
        raise ValueError(f"no runs for after variant(s) {', '.join(missing)}")
    comps = [compare(before, after[v.name], case.expect, before_label=case.before.name,
                     after_label=v.name) for v in case.afters]
    return Outcome(comps, case.name)


def example_rows(outcome: "Outcome"):
    """(row, label of the side its example report comes from) for every row
    of every comparison that has an example: what annotators work on."""
    for comp in outcome.comparisons:
        d = comp.diff
        for row in d.rows:
            if row.example is not None:
                yield row, (d.before_label if row.example_side == "before" else d.after_label)


def exit_code(matches: Optional[bool]) -> int:
    """0 when the outcome matches, 1 when it does not, 2 when there is no
    outcome (None: the harness failed before it could compare)."""
    if matches is None:
        return EXIT_ERROR
    return EXIT_MATCH if matches else EXIT_MISMATCH


# --------------------------------------------------------------------------
# Text


def _counts(counts: list[int]) -> str:
    return ",".join(str(c) for c in counts)


def format_table(diff: Diff) -> str:
    """An aligned table: status, per-run counts of each side, title.

    Titles are never cut: they are what a reader searches for.  A row whose
    guilty frame was symbolized shows its file:line after the title.
    """
    head = ("status", diff.before_label, diff.after_label, "title")
    lines = [(r.status + ("*" if r.status == "flaky" else ""), _counts(r.before_counts),
              _counts(r.after_counts), r.title + (f"  ({r.location})" if r.location else ""))
             for r in diff.rows]
    w = [max(len(x[i]) for x in [head] + lines) for i in range(3)]
    out = [f"{x[0]:<{w[0]}}  {x[1]:>{w[1]}}  {x[2]:>{w[2]}}  {x[3]}" for x in [head] + lines]
    if not diff.rows:
        out.append("(no kernel reports on either side)")
    s = diff.summary()
    out.append(f"{diff.runs_before} {diff.before_label} run(s), {diff.runs_after} "
               f"{diff.after_label} run(s): " + ", ".join(f"{s[k]} {k}" for k in STATUSES)
               + ("  (* not in every run of its side)" if s["flaky"] else ""))
    return "\n".join(out) + "\n"


def format_layouts(diff: Diff, shown: Optional[dict[str, str]] = None) -> str:
    """The structure layout around the buffer of each row that has one
    (harness.reports.layout, attached by harness.checks.enrich); rows without a found
    layout get their one-line reason.

    A layout is printed once: the same structure and lines again (in this
    diff, or in `shown`, which maps the layouts printed before to the title
    they were printed for, and is updated) is one line referring back."""
    shown = {} if shown is None else shown
    out, again = [], []
    for r in diff.rows:
        if r.layout is None:
            continue
        text = r.layout.format_text(indent="  ")
        # a found layout's struct and lines (its first two lines name the
        # struct and sum it up); a reason is its one line
        key = "\n".join(text.splitlines()[2:]) if r.layout.found else text
        if key in shown:
            again.append(r.title.rpartition(" in ")[2] or r.title)
            continue
        shown[key] = r.title
        out.append(f"layout for: {r.title}\n" + text)
    if again:       # one line for every layout already printed
        out.append(f"layouts as above for: {', '.join(again)}\n")
    return "".join(out)


def format_comparison(c: Comparison, shown: Optional[dict[str, str]] = None) -> str:
    """One comparison's table and layouts (`shown`: see format_layouts)."""
    d = c.diff
    text = f"== {d.before_label} vs {d.after_label}\n" + format_table(d) + format_layouts(d, shown)
    if c.verdict.matches:
        text += "outcome: matches the expectation\n"
        text += "".join(f"  + {n}\n" for n in c.verdict.notes
                        if n.startswith("expected fixed site"))
    else:
        text += "outcome: does NOT match the expectation\n"
        text += "".join(f"  - {r}\n" for r in c.verdict.reasons)
    return text


def format_outcome(o: Outcome) -> str:
    shown: dict[str, str] = {}      # each layout once, across the comparisons
    text = "\n".join(format_comparison(c, shown) for c in o.comparisons)
    if len(o.comparisons) > 1:
        bad = [c.diff.after_label for c in o.comparisons if not c.verdict.matches]
        text += ("all after variants match\n" if not bad
                 else f"mismatch: {', '.join(bad)}\n")
    return text


# --------------------------------------------------------------------------
# Command line
