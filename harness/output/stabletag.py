"""`Cc: stable` only with its reason (issue #43).

Documentation/process/stable-kernel-rules.rst takes a patch into -stable
when it "must either fix a real bug that bothers people or just add a
device ID", and lists the kinds of real bug; it lets the author pass notes
to the stable team "use a shell-style inline comment" on the trailer.  A
reader of a mail must see why it is for -stable, so the rule here is:

A message with a ``Cc: stable@vger.kernel.org`` (or ``stable@kernel.org``,
with or without ``<>``) trailer passes when

1. the trailer's ``# comment`` names one of the kinds of REASONS, or
2. one paragraph of the body (the message above its trailers, indented
   lines such as quoted logs left out) has the word "stable" and names
   one of the kinds of REASONS;

a ``Cc: <stable+noautosel@kernel.org>`` passes only with a non-empty
``# comment`` ("reason goes here, and must be present").  Whether the
reason is true, and not a "theoretical race condition", is the author's
call; the rule only makes sure the mail states it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_SOURCE = "Documentation/process/stable-kernel-rules.rst"
_KINDS = ("\"It fixes a problem like an oops, a hang, data corruption, a real security "
          "issue, a hardware quirk, a build error (but not for things marked CONFIG_BROKEN), "
          "or some \"oh, that's not good\" issue.\"")


@dataclass(frozen=True)
class Reason:
    kind: str
    pattern: str          # searched case-insensitively in the text
    source: str


REASONS: tuple[Reason, ...] = (
    Reason("oops", r"\b(oops|oopses|panic|panics)\b", f"{_SOURCE}: {_KINDS}"),
    Reason("hang", r"\b(hang|hangs|hung|deadlocks?|deadlocked)\b", f"{_SOURCE}: {_KINDS}"),
    Reason("data corruption", r"\b(data corruption|corrupts?|corrupted|corruption)\b",
           f"{_SOURCE}: {_KINDS}"),
    Reason("security issue", r"\bsecurity\b", f"{_SOURCE}: {_KINDS}"),
    Reason("hardware quirk", r"\bquirks?\b", f"{_SOURCE}: {_KINDS}"),
    Reason("build error", r"\bbuild (error|failure)s?\b", f"{_SOURCE}: {_KINDS}"),
    Reason("device ID", r"\bdevice ids?\b",
           f"{_SOURCE}: \"It must either fix a real bug that bothers people or just add a "
           "device ID.\""),
)

_STABLE = re.compile(r"Cc:\s*<?(stable(\+noautosel)?@(vger\.)?kernel\.org)>?\s*(#\s*(.*))?",
                     re.I)
_TRAILER = re.compile(r"[A-Za-z][A-Za-z0-9-]*:\s")


@dataclass(frozen=True)
class Finding:
    trailer: str
    ok: bool
    why: str              # the reason found, or what is missing


def reasons_in(text: str) -> tuple[str, ...]:
    return tuple(r.kind for r in REASONS if re.search(r.pattern, text, re.I))


def split(message: str) -> tuple[list[str], list[str]]:
    """The body's paragraphs (each one string) and the trailer lines of a
    commit message (the text between the header's blank line and '---')."""
    lines = message.rstrip("\n").split("\n")
    end = len(lines)
    while end and not lines[end - 1].strip():
        end -= 1
    start = end
    while start and lines[start - 1].strip() and _TRAILER.match(lines[start - 1]):
        start -= 1
    trailers = lines[start:end]
    paragraphs, cur = [], []
    for ln in lines[:start]:
        if not ln.strip():
            if cur:
                paragraphs.append(" ".join(cur))
            cur = []
        elif not ln[:1].isspace():              # quoted logs and lists of code are indented
            cur.append(ln.strip())
    if cur:
        paragraphs.append(" ".join(cur))
    return paragraphs, trailers


def message_of(mail: str) -> str:
    """The commit message of a git format-patch text: after the header's
    blank line, up to the '---' line."""
    head, _, rest = mail.partition("\n\n")
    return rest.split("\n---\n", 1)[0] if rest else ""


def check(message: str) -> tuple[Finding, ...]:
    """Every stable trailer of ``message`` with its verdict."""
    paragraphs, trailers = split(message)
    body = [p for p in paragraphs if re.search(r"\bstable\b", p, re.I) and reasons_in(p)]
    out = []
    for t in trailers:
        m = _STABLE.fullmatch(t.strip())
        if not m:
            continue
        comment = (m.group(5) or "").strip()
        if m.group(2):                                     # stable+noautosel
            out.append(Finding(t, bool(comment), comment or
                               "stable+noautosel without its '# reason' comment"))
            continue
        found = reasons_in(comment)
        if found:
            out.append(Finding(t, True, f"the trailer's comment: {', '.join(found)}"))
        elif body:
            out.append(Finding(t, True, f"the body: {', '.join(reasons_in(body[0]))}"))
        else:
            out.append(Finding(t, False, "no reason: neither a '# comment' on the trailer nor "
                               "a paragraph of the body says why it is for stable (an oops, "
                               "a hang, data corruption, a security issue, a hardware quirk, "
                               f"a build error, a device ID; {_SOURCE})"))
    return tuple(out)


def problems(message: str) -> tuple[str, ...]:
    return tuple(f"{f.trailer}: {f.why}" for f in check(message) if not f.ok)
