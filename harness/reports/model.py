"""What the console log parser finds: a kernel report (``Report``) and
identical reports folded under one title (``Signature``), with their JSON
forms (``to_json`` / ``from_json``, what ``dmaharness reports --json`` prints
and a campaign job's result holds).  :mod:`harness.reports.engine` makes
them (and re-exports them: callers use ``engine.Report``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional


@dataclass
class Report:
    """One kernel report found in a console log.

    kind          the row's kind: KASAN, KMSAN, KFENCE, KCSAN, UBSAN, DMA-API,
                  DETECTOR, WARNING, BUG, GPF, LOCKDEP, HUNG, RCU, SOFTLOCKUP,
                  KMEMLEAK, PANIC, REBOOT (harness.reports.rules)
    title         syzkaller's title (ours for DMA-API/DETECTOR), the folding key
    guilty_frame  the function the title blames (None if no frame was seen)
    stack         the report's main stack, innermost first: the ``RIP``
                  function if one preceded the call trace, then the trace's
                  reliable frames; names only (no offsets, modules,
                  addresses, ``.isra.0``-like suffixes); ``? `` frames and
                  ``<IRQ>``-like markers left out
    stack_lines   stack's frames as printed, for symbolization: one per
                  stack entry, e.g. "uvc_status_start+0x4f/0x70 [uvcvideo]"
    raw           the report's lines with timestamps and caller tags removed
                  (with caller tags, only lines of the report's own context)
    first_line    1-based log line of raw[0] (the ``cut here`` or ``=====``
                  banner when the report has one, else the header)
    timestamp     seconds of the header line, None without timestamps
    context       the caller tag (``T245``, ``C0``) or None
    message       DMA-API/detector message, the WARN() message x86 prints
                  before a WARNING header, or the panic message
    aux_stacks    further stacks by heading: "Allocated by task",
                  "Freed by task", "Mapped at", "lockdep chain", "Lock owner"
                  (a hung task's lock owner), ...
    truncated     the report's end was not seen (log ended, machine
                  rebooted, another report cut in)
    alt_titles    syzkaller's alternative titles (``bad-access in f``, the
                  frame with its syscall prefix, ...), sorted
    rule          the name of the table row that titled it
    corrupted     syzkaller would judge the report corrupted (cut, or
                  intermixed with other output): its title does not name a
                  bug reliably; ``corrupted_reason`` says why
    last_line     1-based log line of the report's last line (the span is
                  first_line..last_line; with caller tags other contexts'
                  lines may sit inside it)
    """

    kind: str
    title: str
    guilty_frame: Optional[str]
    stack: list[str]
    raw: list[str]
    first_line: int
    stack_lines: list[str] = field(default_factory=list)
    timestamp: Optional[float] = None
    context: Optional[str] = None
    message: Optional[str] = None
    aux_stacks: dict[str, list[str]] = field(default_factory=dict)
    truncated: bool = False
    alt_titles: list[str] = field(default_factory=list)
    rule: Optional[str] = None
    corrupted: bool = False
    corrupted_reason: str = ""
    last_line: int = 0

    def to_json(self) -> dict:
        return {
            "kind": self.kind,
            "title": self.title,
            "alt_titles": list(self.alt_titles),
            "rule": self.rule,
            "guilty_frame": self.guilty_frame,
            "corrupted": self.corrupted,
            "corrupted_reason": self.corrupted_reason or None,
            "span": {"first_line": self.first_line, "last_line": self.last_line or self.first_line},
            "stack": list(self.stack),
            "stack_lines": list(self.stack_lines),
            "aux_stacks": {k: list(v) for k, v in self.aux_stacks.items()},
            "first_line": self.first_line,
            "timestamp": self.timestamp,
            "context": self.context,
            "message": self.message,
            "truncated": self.truncated,
            "raw": list(self.raw),
        }

    @staticmethod
    def from_json(d: dict) -> "Report":
        """The report to_json() wrote (a campaign job's result)."""
        return Report(
            kind=d["kind"], title=d["title"], guilty_frame=d.get("guilty_frame"),
            stack=list(d.get("stack") or []), raw=list(d.get("raw") or []),
            first_line=int(d.get("first_line") or 0),
            stack_lines=list(d.get("stack_lines") or []), timestamp=d.get("timestamp"),
            context=d.get("context"), message=d.get("message"),
            aux_stacks={k: list(v) for k, v in (d.get("aux_stacks") or {}).items()},
            truncated=bool(d.get("truncated")), alt_titles=list(d.get("alt_titles") or []),
            rule=d.get("rule"), corrupted=bool(d.get("corrupted")),
            corrupted_reason=d.get("corrupted_reason") or "",
            last_line=int((d.get("span") or {}).get("last_line") or 0))


@dataclass
class Signature:
    """Identical reports (same title) folded together."""

    title: str
    kind: str
    count: int
    first: Report
    reports: list[Report] = field(default_factory=list)
    all_corrupted: Optional[bool] = None     # given, when `reports` is not kept (from_json)
    lines: Optional[list[int]] = None        # the reports' first lines, likewise

    @property
    def corrupted(self) -> bool:
        """Every report of the signature is corrupted."""
        if self.all_corrupted is not None:
            return self.all_corrupted
        return all(r.corrupted for r in (self.reports or [self.first]))

    def to_json_full(self) -> dict:
        """to_json() with the first report whole: what from_json() reads."""
        return {**self.to_json(), "first": self.first.to_json()}

    @staticmethod
    def from_json(d: dict) -> "Signature":
        return Signature(title=d["title"], kind=d["kind"], count=int(d["count"]),
                         first=Report.from_json(d["first"]),
                         all_corrupted=bool(d.get("corrupted")), lines=list(d.get("lines") or []))

    def to_json(self) -> dict:
        return {
            "title": self.title,
            "kind": self.kind,
            "count": self.count,
            "guilty_frame": self.first.guilty_frame,
            "corrupted": self.corrupted,
            "first_line": self.first.first_line,
            "first_timestamp": self.first.timestamp,
            "lines": [r.first_line for r in self.reports] if self.lines is None
            else list(self.lines),
        }
