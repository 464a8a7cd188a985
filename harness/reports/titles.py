"""A report's title from its text, by the rows of :mod:`harness.reports.rules`.

Given the lines of one report (from its header line on, console prefixes
removed), :func:`describe` picks the header group's row whose ``title``
regex matches earliest, formats the row's template with the regex groups
and the frames its :class:`~harness.reports.rules.FrameRule` finds, and says
whether and why the report is corrupted.  The result is syzkaller's title
for the same text: addresses, numbers, file lines and executor ids are
replaced (``ADDR``, ``NUM``, ``:LINE``), the title is cut at 120 bytes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Callable, Optional, Sequence

from . import rules as rr
from .rules import STACK, FrameRule, Rule

NO_FRAMES = "extracted no frames"


@dataclass(frozen=True)
class Title:
    """What :func:`describe` found."""

    title: str
    alt: tuple[str, ...]
    rule: Optional[Rule]          # the row that titled it, None: the header line itself
    corrupted: str                # why the report is corrupted, "" when it is not
    frame: Optional[str]          # the function named by the title


# --------------------------------------------------------------------------
# Regexes of the table, compiled once

_STACK_STARTS = tuple(re.compile(p) for p in rr.STACK_STARTS)
_STACK_START_ANY = re.compile("|".join(f"(?:{p})" for p in rr.STACK_STARTS))
_RISCV = _STACK_STARTS[rr.STACK_STARTS.index(rr.RISCV_STACK_START)]
_FRAMES = tuple(re.compile(p[1:] if p.startswith("^") else p) for p in rr.FRAMES)  # .match
_CORRUPTED_LINE = re.compile("|".join(rr.CORRUPTED_LINES))
_CORRUPTED_TITLE = re.compile("|".join(rr.CORRUPTED_TITLES))
_STALL_ANCHORS = re.compile("|".join(f"(?:{p})" for p in rr.STALL_ANCHORS))
_TITLE_FRAME = re.compile(r".* in ((?:<[a-zA-Z0-9_: ]+>)?[a-zA-Z0-9_:]+)")
_FMT_FIELD = re.compile(r"\{(\w+)\}")


@lru_cache(maxsize=None)
def _rx(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


@lru_cache(maxsize=None)
def _skip_rx(skip: tuple[str, ...]) -> re.Pattern[str]:
    return re.compile("|".join(f"(?:{s})" for s in rr.SKIP + skip))


def fmt(template: str, args: Sequence[str], **named: str) -> str:
    """Fill a row's template: {1}.. positional (1-based), {name} named."""
    def field(m: re.Match[str]) -> str:
        key = m.group(1)
        if key.isdigit():
            i = int(key) - 1
            return args[i] if 0 <= i < len(args) else ""
        return named.get(key, "")
    return _FMT_FIELD.sub(field, template)


# --------------------------------------------------------------------------
# Frames


def strip_frame(name: str) -> str:
    """The shortest of name with one syscall prefix removed."""
    best = name
    for p in rr.STRIP_PREFIXES:
        if name.startswith(p) and len(name) - len(p) < len(best):
            best = name[len(p):]
    return best


def _first(frames: list[str]) -> Optional[tuple[str, int]]:
    return frames[0], 0


def _stall(frames: list[str]) -> Optional[tuple[str, int]]:
    """The frame before the first dispatch point (STALL_ANCHORS): a loop is
    named by what dispatched it, not by where the stall caught it."""
    prev, prev_i = frames[0], 0
    for i, f in enumerate(frames):
        if _STALL_ANCHORS.search(f):
            if "smp_call_function" in f:
                return "smp_call_function", i
            return prev, prev_i
        prev, prev_i = f, i
    return None


def _hung(frames: list[str]) -> Optional[tuple[str, int]]:
    """Hangs on synchronize_rcu and rtnl_lock grouped, else the first frame
    that is not waiting machinery."""
    for i, f in enumerate(frames):
        for anchor, repl in rr.HUNG_ANCHORS:
            if anchor in f:
                return repl or f, i
    for i, f in enumerate(frames):
        if not any(s in f for s in rr.HUNG_SKIP):
            return f, i
    return None


_EXTRACTORS: dict[str, Callable[[list[str]], Optional[tuple[str, int]]]] = {
    "first": _first, "stall": _stall, "hung": _hung}


def _key_frame(raw: list[str], extractor: str) -> Optional[tuple[str, str]]:
    """(canonical name, raw name) of the frame that names the report."""
    if not raw:
        return None
    found = _EXTRACTORS[extractor]([strip_frame(f) for f in raw])
    if found is None or not found[0]:
        return None
    return found[0], raw[found[1]]


def _append(raw: list[str], m: re.Match[str], skip: re.Pattern[str]) -> None:
    for g in m.groups():
        if g is not None and not skip.search(g):
            raw.append(g)


def _frame_match(line: str) -> Optional[re.Match[str]]:
    for rx in _FRAMES:
        m = rx.match(line)
        if m is not None:
            return m
    return None


def _walk(parts: tuple[str, ...], lines: list[str], skip: re.Pattern[str],
          extractor: str) -> tuple[list[tuple[str, str]], bool]:
    """Walk the report's lines part by part; one key frame per stack."""
    raw: list[str] = []
    out: list[tuple[str, str]] = []
    ok = True
    stacks = 0
    li, n = 0, len(lines)
    pi = 0
    while True:
        if pi == len(parts) or (parts[pi] == STACK and stacks > 0):
            key = _key_frame(raw, extractor)
            if key is None:
                key, ok = ("corrupted", "corrupted"), False
            out.append(key)
            raw = []
        if pi == len(parts):
            return out, ok
        part = parts[pi]
        if part == STACK:
            stacks += 1
            nxt = _rx(parts[pi + 1]) if pi + 1 < len(parts) and parts[pi + 1] != STACK else None
            while li < n:
                ln = lines[li]
                li += 1
                if "should_fail" in ln and _CORRUPTED_LINE.search(ln):
                    ok = False
                    break
                if _STACK_START_ANY.search(ln):
                    break
                if nxt is not None:
                    m = nxt.search(ln)
                    if m is not None:
                        _append(raw, m, skip)
                        pi += 1
                        break
                m = _frame_match(ln)
                if m is not None:
                    _append(raw, m, skip)
        else:
            rx = _rx(part)
            while li < n:
                ln = lines[li]
                li += 1
                if "should_fail" in ln and _CORRUPTED_LINE.search(ln):
                    ok = False
                    break
                m = rx.search(ln)
                if m is not None:
                    _append(raw, m, skip)
                    break
        pi += 1


def find_frames(rule: FrameRule, text: str) -> tuple[list[tuple[str, str]], bool]:
    """The key frames of a report's text (from where its title matched):
    a list of (name as in the title, name as printed), and whether every
    part found one."""
    lines = text.split("\n")
    skip = _skip_rx(rule.skip)
    frames, ok = _walk(rule.parts, lines, skip, rule.extractor)
    if ok or not rule.parts2:
        return frames, ok
    return _walk(rule.parts2, lines, skip, rule.extractor)


def _stripped_variants(args: list[str], frames: list[tuple[str, str]]) -> list[list[str]]:
    """Arguments with the frames as printed and with each syscall prefix
    stripped: more alternative titles to fold the same bug under."""
    out = []
    for i in range(len(rr.STRIP_PREFIXES) + 1):
        prefix = rr.STRIP_PREFIXES[i - 1] if i else ""
        add = i == 0
        names = []
        for _, raw in frames:
            t = raw[len(prefix):] if prefix and raw.startswith(prefix) else raw
            add = add or t != raw
            names.append(t)
        if add:
            out.append(args + names)
    return out


# --------------------------------------------------------------------------
# Titles


def describe(header: rr._Compiled, text: str, full: Optional[str] = None) -> Title:
    """Title a report whose text (header line first, "\\n" after every
    line) was opened by `header`; `full` is the whole report when the text
    to title stops before its end (checked for corruption)."""
    start = len(text)
    desc = ""
    corrupted = ""
    alts: list[str] = []
    chosen: Optional[Rule] = None
    matched_title = False
    rules = header.header.rules
    for i, rule in enumerate(rules):
        if rule.ours:
            continue
        m = header.titles[i].search(text)
        if m is None or m.start() > start or (m.start() == start and desc):
            continue
        if m.start() < start:
            desc, chosen, start = "", None, m.start()
        matched_title = True
        rep = header.reports[i]
        if rep is not None:
            m = rep.search(text)
            if m is None:
                continue
        args = [g or "" for g in m.groups()]
        frames: list[tuple[str, str]] = []
        corrupted = ""
        if rule.frame is not None:
            frames, ok = find_frames(rule.frame, text[m.start():])
            if not ok:
                corrupted = NO_FRAMES
        canon = args + [c for c, _ in frames]
        desc = fmt(rule.fmt, canon)
        alts += [fmt(a, canon) for a in rule.alt]
        for seq in _stripped_variants(args, frames):
            t = fmt(rule.fmt, seq)
            if t != desc:
                alts.append(t)
            alts += [fmt(a, seq) for a in rule.alt]
        chosen = rule
    if not desc:
        if matched_title:
            corrupted = "matched title but not report regexp"
        pos = text.find(header.header.literal)
        end = text.find("\n", pos)
        desc = text[pos:end if end >= 0 else len(text)] if pos >= 0 else ""
    if not corrupted and chosen is not None and chosen.corrupted:
        corrupted = "report format is marked as corrupted"
    if not corrupted:
        corrupted = is_corrupted(desc, text if full is None else full, chosen)
    title = clean_title(desc)
    alt = tuple(sorted(clean_title(a) for a in dict.fromkeys(alts)))
    m = _TITLE_FRAME.match(title)
    return Title(title, alt, chosen, corrupted, m.group(1) if m else None)


def is_corrupted(desc: str, text: str, rule: Optional[Rule]) -> str:
    """Why a titled report looks cut or intermixed ("" when it does not):
    a timestamp inside its title, or a stack heading without frames after
    it, or no stack at all where the row expects one."""
    if _CORRUPTED_TITLE.search(desc):
        return "title matches corrupted regexp"
    if rule is None or rule.no_stack_trace:
        return ""
    has_stack = False
    for key in _STACK_STARTS:
        m = key.search(text)
        if m is None:
            continue
        after = text[m.start():].split("\n", 17)
        if len(after) < 4:
            return "call trace is missed"
        bad = True
        for ln in after[1:16]:
            if _STACK_START_ANY.search(ln):
                break
            if "(stack is not available)" in ln or _frame_match(ln):
                has_stack, bad = True, False
                break
        if bad and key is not _RISCV:
            return "no frames in a stack trace"
    return "" if has_stack else "no stack trace in report"


# --------------------------------------------------------------------------
# Cleaning a title

_REPLACEMENTS = tuple((re.compile(p, re.ASCII), r) for p, r in (
    (r"syz-executor\.?[0-9]+((/|:)[0-9]+)?", "syz-executor"),   # executor pids
    (r"syzkaller[0-9]+((/|:)[0-9]+)?", "syzkaller"),
    (r"([^a-zA-Z0-9])(?:0x)?[0-9a-f]{6,}", r"\1ADDR"),          # anything like an address
    (r"([0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3})", "IP"),
    (r"(\.\w+)(:[0-9]+)+", r"\1:LINE"),                         # file:line
    (r"([a-zA-Z][a-zA-Z0-9_.]+)\+0x[0-9a-z]+/0x[0-9a-z]+", r"\1"),  # func+0x1/0x2
    (r"CPU#[0-9]+", "CPU"),
    (r"(\W)(\d+)(\W|$)", r"\1NUM\3"),                          # other decimal numbers
    (r"(\d+){7,}", "NUM"),
))
_MAX_TITLE = 120


def clean_title(title: str) -> str:
    """Variable parts replaced, control characters and doubled spaces
    dropped, cut at 120 bytes."""
    if not title:
        return title
    for rx, repl in _REPLACEMENTS:
        while True:
            new = rx.sub(repl, title)
            if new == title:
                break
            title = new
    out = []
    prev = " "
    for b in title.encode("utf-8", "replace")[:_MAX_TITLE]:
        if b == 9:
            b = 32
        elif b < 32 or b >= 127:
            continue
        if b == 32 and prev == " ":
            continue
        prev = chr(b)
        out.append(prev)
    return "".join(out).strip()
