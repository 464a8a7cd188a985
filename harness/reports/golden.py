"""Golden files of the report engine: console logs that carry the reports expected of them.

:func:`read_golden` splits a file (``tests/fixtures/logs/``) into its
header and its log, :func:`golden_header` writes the header for parsed
reports, and :func:`update_golden` (``tests/run.py --update``) rewrites a
file's header from :func:`harness.reports.engine.parse` of its log.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

from .engine import Report, parse


# --------------------------------------------------------------------------
# Golden files: a log with its expected reports in a header
#
# Like syzkaller's pkg/report testdata: header lines, an empty line, the
# log.  TITLE: starts a report's entry (one per report, in log order);
# ALT:, FRAME:, KIND:, RULE: and CORRUPTED: Y describe the entry above
# them; lines starting with "#" are comments.  syzkaller's files also carry
# TYPE:, SUPPRESSED:, PANICKED:, EXECUTOR:, START: and END: (read, not
# written) and may
# end with an empty line, "REPORT:" and the report's text (left out of the
# log).  A log without reports has an empty header: the file starts with
# its empty line.

_GOLDEN_KEYS = ("TITLE", "ALT", "FRAME", "KIND", "RULE", "CORRUPTED", "TYPE", "SUPPRESSED",
                "PANICKED", "EXECUTOR", "START", "END")


@dataclass(frozen=True)
class Golden:
    """A golden file: its comment lines, expected reports and log."""

    comments: tuple[str, ...]
    expected: tuple[dict, ...]   # per report: TITLE, ALT (list), FRAME, KIND, RULE, CORRUPTED (bool)
    log: str


def read_golden(text: str) -> Golden:
    """Split a golden file into its header and its log (kept byte for byte)."""
    head, sep, rest = text.partition("\n\n") if not text.startswith("\n") else ("", "\n", text[1:])
    if not sep:
        head, rest = text, ""
    comments: list[str] = []
    expected: list[dict] = []
    for ln in head.split("\n") if head else []:
        ln = ln.rstrip("\r")
        if ln.startswith("#"):
            comments.append(ln)
            continue
        key, _, value = ln.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if key not in _GOLDEN_KEYS:
            raise ValueError(f"golden header: unknown field {ln!r}")
        if key == "TITLE" or not expected:
            expected.append({"TITLE": value if key == "TITLE" else "", "ALT": []})
            if key == "TITLE":
                continue
        entry = expected[-1]
        if key == "ALT":
            entry["ALT"].append(value)
        elif key in ("CORRUPTED", "SUPPRESSED", "PANICKED"):
            entry[key] = value == "Y"
        else:
            entry[key] = value
    cut = rest.find("\n\nREPORT:\n")
    if cut >= 0:
        rest = rest[:cut + 1]
    elif rest.startswith("REPORT:\n"):
        rest = ""
    expected = [e for e in expected if e["TITLE"]]   # "TITLE: " alone: no report
    return Golden(tuple(comments), tuple(expected), rest)


def golden_header(reports: list[Report], comments: Iterable[str] = ()) -> str:
    """The header lines (and the empty line after them) for these reports."""
    out = list(comments)
    for r in reports:
        out.append(f"TITLE: {r.title}")
        out += [f"ALT: {a}" for a in r.alt_titles]
        if r.guilty_frame:
            out.append(f"FRAME: {r.guilty_frame}")
        out.append(f"KIND: {r.kind}")
        if r.rule:
            out.append(f"RULE: {r.rule}")
        if r.corrupted:
            out.append("CORRUPTED: Y")
    return "".join(line + "\n" for line in out) + "\n"


def golden_expected(reports: list[Report]) -> list[dict]:
    """What read_golden() gives back for a header written for `reports`."""
    return list(read_golden(golden_header(reports)).expected)


def update_golden(path: str) -> bool:
    """Rewrite a golden file's header from the parser's reports of its log;
    True when it changed."""
    # Bytes as they are: serial consoles write CRLF and stray bytes.
    with open(path, encoding="utf-8", errors="surrogateescape", newline="") as f:
        old = f.read()
    try:
        g = read_golden(old)
    except ValueError as e:
        raise ValueError(f"{path}: {e}") from None
    new = golden_header(parse(g.log), g.comments) + g.log
    if new == old:
        return False
    with open(path, "w", encoding="utf-8", errors="surrogateescape", newline="") as f:
        f.write(new)
    return True
