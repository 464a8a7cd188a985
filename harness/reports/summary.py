"""What `dmaharness reports` prints of a log: its reports folded by title.

``Folder`` folds reports as they come from harness.reports.engine.iter_reports
(per title the first report, the count, the lines, whether all were
corrupted: not the reports themselves, so a log full of reports stays
small); ``format_signatures`` is the command's text.
"""

from __future__ import annotations

from .engine import Report, Signature


class Folder:
    """fold() as reports come, one at a time: per title the first report,
    the count, the reports' first lines and whether every one was corrupted,
    not the reports themselves (a log full of reports stays small)."""

    def __init__(self) -> None:
        self.sigs: dict[str, Signature] = {}
        self.total = 0

    def add(self, r: Report) -> None:
        self.total += 1
        s = self.sigs.get(r.title)
        if s is None:
            self.sigs[r.title] = Signature(title=r.title, kind=r.kind, count=1, first=r,
                                           all_corrupted=r.corrupted, lines=[r.first_line])
            return
        s.count += 1
        assert s.lines is not None
        s.lines.append(r.first_line)
        s.all_corrupted = bool(s.all_corrupted and r.corrupted)

    def signatures(self) -> list[Signature]:
        return list(self.sigs.values())


def format_signatures(sigs: list[Signature], total: int) -> str:
    """`dmaharness reports`' text: a line per signature, then the counts."""
    if not sigs:
        return "no kernel reports\n"
    out = []
    width = max(len(str(s.count)) for s in sigs)
    for s in sigs:
        where = f"line {s.first.first_line}"
        if s.first.timestamp is not None:
            where += f", {s.first.timestamp:.6f}s"
        flags = []
        if s.first.truncated:
            flags.append("truncated")
        if s.corrupted:
            flags.append(f"corrupted: {s.first.corrupted_reason}")
        flag = f" ({'; '.join(flags)})" if flags else ""
        out.append(f"{s.count:>{width}}x {s.title}  [{s.kind}, {where}]{flag}")
    out.append(f"{total} report(s), {len(sigs)} signature(s)")
    return "\n".join(out) + "\n"
