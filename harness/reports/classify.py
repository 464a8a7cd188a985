"""What a console line's text is: a header of the rules table, a marker of ours, or nothing.

Every line the line engine (:mod:`harness.reports.engine`) does not feed
to an open report takes the cheap test ``_is_candidate``; a candidate goes
to ``_classify``: a header of :mod:`harness.reports.rules` with the row the
header line alone points at (it says how the engine ends the report), a
``=====`` or ``cut here`` banner, a dma-debug message, a new boot
(``Linux version``), a kmemleak object.  dma-debug's messages are read
here too: their short form (numbers ``NUM``, addresses ``ADDR``, bracketed
details left out) that DMA-API titles carry, and whether a message is
stock dma-debug's (kind ``DMA-API``) or the detector's (``DETECTOR``).
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Optional

from . import rules as rr


# --------------------------------------------------------------------------
# dma-debug messages

_NUM_RE = re.compile(r"0x[0-9a-fA-F]+|\b[0-9a-fA-F]{8,}\b|\d+")


def _normalize_text(s: str) -> str:
    s = _NUM_RE.sub(lambda m: "ADDR" if m.group(0)[:2] == "0x" or len(m.group(0)) >= 8 else "NUM", s)
    return " ".join(s.split())


_STOCK_DMA_MESSAGES = frozenset([
    "cacheline tracking EEXIST, overlapping mappings aren't supported",
    "device driver has pending DMA allocations while released from device",
    "device driver tries to free an invalid DMA memory address",
    "device driver tries to free DMA memory it has not allocated",
    "device driver frees DMA memory with different size",
    "device driver frees DMA memory with wrong function",
    "device driver frees DMA memory with different CPU address",
    "device driver frees DMA sg list with different entry count",
    "device driver frees DMA memory with different direction",
    "device driver failed to check map error",
    "device driver maps memory from stack",
    "device driver maps memory from kernel text or rodata",
    "device driver tries to sync DMA memory it has not allocated",
    "device driver syncs DMA memory outside allocated range",
    "device driver syncs DMA memory with different direction",
    "device driver syncs device read-only DMA memory for cpu",
    "device driver syncs device write-only DMA memory to device",
    "device driver syncs DMA sg list with different entry count",
    "mapping sg segment longer than device claims to support",
    "mapping sg segment across boundary",
    "device driver maps memory from invalid area",
    "device driver maps memory from vmalloc area",
    "exceeded NUM overlapping mappings of cacheline ADDR",
    "exceeded NUM overlapping mappings of cacheline",
])

_DMA_DEV_RE = re.compile(r"DMA-API: (\S+) (\S+): (.*)")


@lru_cache(maxsize=4096)
def _dma_short(msg: str) -> str:
    cut = msg.find("[")
    if cut >= 0:
        msg = msg[:cut]
    msg = _normalize_text(msg).rstrip(" .,:;!")
    return msg or "unknown"


def _dma_kind(msg: str) -> str:
    return "DMA-API" if _dma_short(msg) in _STOCK_DMA_MESSAGES else "DETECTOR"


def _panic_message(body: str) -> str:
    return body.partition(": ")[2].strip() if ": " in body else ""


# --------------------------------------------------------------------------
# Header recognition: reads of the table (harness.reports.rules)

_ANYWHERE = tuple(c for c in rr.COMPILED if not c.header.line_start)
_HEADER_LITERALS = tuple(c.header.literal for c in _ANYWHERE)
_WARNING = rr.BY_LITERAL["WARNING:"]
_KMEMLEAK = rr.BY_LITERAL["unreferenced object 0x"]
_DMA_MSG = rr.BY_LITERAL["DMA-API: "]
_BOOTING = rr.BY_LITERAL["Booting the kernel"]
_DMA_RULE = _DMA_MSG.header.rules[0]
_DMA_OWNED = rr.BY_NAME["kasan-dma-owned"]
_MEMORY_LEAK = rr.BY_NAME["memory-leak"]

# A line's text goes to _classify() when it starts with one of these: every
# header of the table, and our own markers (banners, dma-debug messages,
# kmemleak objects, a new boot).  Headers of the table are also looked for
# after "[ " ("[ BUG: held lock freed! ]") and after a "subsystem: " prefix
# ("rcu: INFO:", "watchdog: BUG:"); every other line only feeds the report
# open in its context, if any.
_START_PREFIXES = _HEADER_LITERALS + (
    "DMA-API: ", "unreferenced object 0x", "------------[ cut here ]", "=====",
    "Linux version ",
)
_ODD_STARTS = frozenset("<*0123456789")   # syslog level, printk-dropped, dates
_HEADS = frozenset(p[:2] for p in _HEADER_LITERALS)   # cheap filters before startswith()
_START_HEADS = frozenset(p[:2] for p in _START_PREFIXES)

_SEP = ("SEP", None, None)
_PRE = ("PRE", None, None)
_DMA = ("DMA-MSG", _DMA_MSG, _DMA_RULE)
_REBOOT = ("REBOOT", None, None)
_KMEMLEAK_HEADER = ("HEADER", _KMEMLEAK, _KMEMLEAK.header.rules[0])

_Class = tuple[str, Optional[rr._Compiled], Optional[rr.Rule]]


def _is_candidate(body: str) -> bool:
    """Might this line's text hold a header (cheap test for every line)?"""
    if body[:2] in _START_HEADS and body.startswith(_START_PREFIXES):
        return True
    if body[:1] == "[":   # pre-4.x lockdep: "[ BUG: held lock freed! ]"
        return body[2:4] in _HEADS and body.startswith(_HEADER_LITERALS, 2)
    j = body.find(": ", 1, 48)
    return j > 0 and body[j + 2:j + 4] in _HEADS and body.startswith(_HEADER_LITERALS, j + 2)


def _provisional(ch: rr._Compiled, body: str) -> rr.Rule:
    """The row the header line alone points at: it says how the engine ends
    the report (the final title reads the whole report)."""
    line = body + "\n"
    for rule, rx in zip(ch.header.rules, ch.titles):
        if rx.search(line):
            return rule
    return ch.fallback


def _classify(body: str) -> Optional[_Class]:
    """What a candidate line is: a table header (with its provisional row),
    one of our markers, or nothing."""
    c = body[:1]
    if c == "=":
        return _SEP if body.startswith("====================") and body.strip("=") == "" else None
    if c == "-":
        return _PRE
    if c == "D" and body.startswith("DMA-API: "):
        return _DMA
    if c == "L" and body.startswith("Linux version "):
        return _REBOOT
    if c == "u" and body.startswith("unreferenced object 0x"):
        return _KMEMLEAK_HEADER
    for ch in _ANYWHERE:
        if ch.header.literal in body and not (ch.suppress and ch.suppress.search(body)):
            return "HEADER", ch, _provisional(ch, body)
    return None


# --------------------------------------------------------------------------
# What the parser (engine) looks for in the lines of an open report

_REG_PREFIXES = (
    "RIP:", "Code:", "RSP:", "RAX:", "RBX:", "RDX:", "RBP:", "R08:", "R10:",
    "R13:", "FS:", "CS:", "CR0:", "CR2:", "DR0:", "DR3:", "PKRU:", "EIP:",
    "EAX:", "ESI:", "DS:", "CR4:", "Kernel Offset:", "Modules linked in:",
    "Dumping ftrace buffer", "---[ end Kernel panic",
)

_FEED_FIRST = frozenset("-RWNEIpP")
_RIP_PREFIXES = ("RIP: ", "EIP: ", "IP: ", "pc : ", "PC is at ")
_MAX_REPORT_LINES = 2000  # a report that never ends stops swallowing the log here
_PRE_LINE_DISTANCE = 5  # a cut-here/banner line belongs to a header this close
_KERNEL_LINE_RE = re.compile(r"(?:<\d+>)?\[ *\d+\.\d+\]")
_CONTINUATION = re.compile("|".join(re.escape(p) for p in rr.CONTINUATIONS))
_PEEK_FRAME_RE = re.compile(r"\s++(?:\[<[0-9a-fx]++>\]\s++)?(?:\? )?[A-Za-z_$][\w.$]*+\+0x")
_REPLAY = "** replaying previous printk message **"
_FIRMWARE_RE = re.compile(r"SeaBIOS|Decompressing Linux|Booting from ")
_BLOCKER_RE = re.compile(rr.HUNG_BLOCKER)
_TASK_HUNG = rr.BY_NAME["task-hung"]
# Where a sanitizer's report prints from: a WARNING from there, inside the
# report, is the report's own printing failing (stack_depot_fetch() on an
# allocation record the reported overflow overwrote), not a report of its own
_REPORTING_CODE = re.compile(r"\b(?:lib/stackdepot\.c|mm/kasan/|mm/kfence/|mm/kmsan/)"
                             r"|\bat (?:stack_depot_|kasan_|kfence_|print_report\b)")
