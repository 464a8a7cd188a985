"""Kernel console log parser: console text in, kernel reports and signatures out.

This module has one concern: turning a console log (a serial console capture,
a saved ``dmesg``, a CI log) into structured kernel reports, and folding
identical reports into signatures.  It knows nothing about QEMU, builds or
diffs.

What a report is and what it is called is data: the table of
:mod:`harness.reports.rules`, one row per kind (header patterns, title
template, how the title's function is found, where the report ends, when it
is corrupted), read by :mod:`harness.reports.titles`.  Titles are
syzkaller's (``KASAN: use-after-free Read in f``, ``WARNING in f``, ``BUG:
unable to handle kernel paging request in f``, ``possible deadlock in f``,
``INFO: task hung in f``, ``memory leak in f``, ``... in corrupted`` when
syzkaller would judge the report corrupted, ...).  The rows of this
project's own tools keep their documented titles:

* dma-debug's reports (``DMA-API: <driver> <device>: <message>``, and a
  ``WARNING`` at ``kernel/dma/debug.c`` without one) are ``DMA-API: <short
  message> in f``: the message without its bracketed details, numbers
  replaced by ``NUM`` and addresses by ``ADDR``; kind ``DMA-API``;
* the cache-line-sharing detector's reports are titled the same way
  (``DMA-API: device driver maps a buffer that shares a cache line with
  other data of its object in f``) and KASAN reports of bug type
  ``dma-owned`` are ``KASAN: dma-owned Read in f``; kind ``DETECTOR``.
  Their function is the first frame, header function first, that is not
  reporting machinery, DMA/USB plumbing or a host-controller driver
  (:func:`harness.reports.frames.is_machinery`), else the first of
  dma-debug's ``Mapped at:`` stack; without any frame the title has no
  `` in f`` part.

This module is the line engine: it finds the lines of each report in one
pass over the log.  A report starts at a line holding a header of the table
(anywhere in the line, as syzkaller matches them; the engine looks at the
start of the text after the console prefix, after ``[ ``, and after a
``subsystem: `` prefix such as ``rcu:`` or ``watchdog:``), or
at a ``cut here``/``=====`` banner line just before one.  It ends where its
row says (``end``): sanitizer reports at their closing ``=====`` line,
``__warn``/oops reports at ``---[ end trace ... ]---`` plus the register
dump and dma-debug's ``Mapped at:`` stack that follow it, the others at the
``</TASK>`` closing their stack or, on kernels without ``<TASK>`` markers,
at the first line after the stack that is not a frame (unless a frame
follows within two lines: a message of someone else printed inside the
stack); RCU stalls only after the stalled CPU's interrupted stack; a hung
task's after the stack of the task owning the lock it waits for, when
hung_task names it (6.16 on: ``INFO: task A:1 is blocked on a mutex likely
owned by task B:2``, kept as the aux stack ``Lock owner``; such a line
never opens a report of its own); panics at ``---[ end Kernel panic``;
one-line reports (``unregister_netdevice: waiting for ...``) at their line,
leaving a report open around them alone.
A report still open when the log ends, the machine reboots (``Linux
version``, ``Booting the kernel``) or another report starts in the same
context is ``truncated``; it keeps what was seen.  ``Booting the kernel``
after a kernel already printed (or after other output before the
firmware's) is itself a report, ``unexpected kernel reboot``.  A header
that only continues a report (``invalid opcode:`` after ``kernel BUG at``,
the panic of panic_on_warn before the warning's stack, the ``kernel BUG``
of a Rust panic) joins it.

Parsing handles logs with or without ``[ 12.345678]`` timestamps (or ``dmesg
-T`` wall-clock stamps, or ``journalctl -k`` prefixes), with or without
``[    T1]`` / ``[  C0]`` caller tags (CONFIG_PRINTK_CALLER), syslog ``<4>``
levels, ``** N printk messages dropped **`` and syz-manager date prefixes,
CRLF line ends, a login prompt glued before a kernel line, userspace output
inside a timestamped report (lines without a timestamp are left out), and
several CPUs interleaving their output: with caller tags each report only
takes the lines of its own context (an RCU stall also takes the NMI
backtrace of the CPU it interrupted); without caller tags other lines land
in ``raw`` but do not disturb titles or stacks.

Limits: without caller tags two reports printed at the same time cannot be
separated (the second header ends the first, marked truncated); a header
glued after other text in the middle of a line (two printk()s without a
newline) is not seen; a title is read from its report's own lines, where
syzkaller, with caller tags, reads on into the next report of the same task
when the first is cut short; C++ and Rust symbols are not demangled.
``bench/syzkaller-titles`` measures the agreement on syzkaller's corpus.

The parser's parts: :mod:`harness.reports.frames` (line prefixes, frames,
skip lists), :mod:`harness.reports.classify` (which header a line is),
:mod:`harness.reports.builder` (a report under construction, the text its
title reads); :mod:`harness.reports.model` (``Report`` and ``Signature``);
:mod:`harness.reports.golden` reads and writes golden files;
:mod:`harness.reports.parallel` parses a large log on several cores with
this engine, one share of the log a worker.

Command line (wired as ``dmaharness reports`` by the CLI)::

    dmaharness reports <console.log> [--json] [--workers N]

Exit codes: 0 the log was parsed (whether or not it holds reports),
2 usage error, 4 the log cannot be read.
"""

from __future__ import annotations

import itertools
import re
from collections import deque
from typing import Iterable, Iterator, Optional

from . import rules as rr
from .builder import (LOCK_OWNER, _AUX_SECTIONS, _Builder, _clean_frames, _frame_text, _memo,
                      _our_title, _title_text)
from .classify import (_BLOCKER_RE, _BOOTING, _Class, _CONTINUATION, _DMA_DEV_RE, _DMA_MSG,
                       _DMA_OWNED, _DMA_RULE, _FEED_FIRST, _FIRMWARE_RE, _HEADER_LITERALS,
                       _HEADS, _KERNEL_LINE_RE, _KMEMLEAK, _MAX_REPORT_LINES, _MEMORY_LEAK,
                       _ODD_STARTS, _PEEK_FRAME_RE, _PRE_LINE_DISTANCE, _REG_PREFIXES, _REPLAY,
                       _REPORTING_CODE, _RIP_PREFIXES, _START_HEADS, _START_PREFIXES,
                       _TASK_HUNG, _WARNING, _classify, _dma_kind, _is_candidate,
                       _normalize_text, _panic_message)
from .frames import (_DIGITS, _FOREIGN_PREFIX, _FRAME_RE, _HEADER_FUNC_RE, _INLINE_FRAME_RE,
                     _JOURNAL_RE, _RIP_RE, _STACK_MARKERS, _norm_func, _split_prefix)
from .model import Report, Signature
from .titles import NO_FRAMES, describe, is_corrupted


# --------------------------------------------------------------------------
# The parser

_STACK_SECTIONS = ("Call Trace", "backtrace", "NMI backtrace", LOCK_OWNER)
_OWNER_TASK = re.compile(r"task:\S").match   # sched_show_task()'s first line


def _finish(b: _Builder, truncated: bool) -> Report:
    primary, texts = b.primary()
    stack = _clean_frames(primary)
    stack_lines = [_frame_text(t) for f, t in zip(primary, texts) if f[:1] != "|"]
    text, cut = _title_text(b)
    if b.rule.ours:
        title, guilty = _our_title(b, stack)
        alts: tuple[str, ...] = ()
        reason = NO_FRAMES if guilty is None else _memo(
            (b.rule.name, title, text), lambda: is_corrupted(title, text, b.rule))
        rule_name: Optional[str] = b.rule.name
        kind = b.kind
    else:
        t = _memo((b.header.header.literal, text, cut),
                  lambda: describe(b.header, text[:cut], text))
        title, alts, reason = t.title, t.alt, t.corrupted
        guilty = t.frame if t.frame != "corrupted" else None
        rule_name = t.rule.name if t.rule is not None else None
        kind = t.rule.kind if t.rule is not None else b.kind
    aux: dict[str, list[str]] = {}
    for name, fr, _ in b.sections:
        if name and name != "?" and name != "tail" and fr and fr is not primary and name not in aux:
            aux[name] = _clean_frames(fr)
    try:
        ts = float(b.ts) if b.ts is not None else None
    except ValueError:  # a mangled timestamp
        ts = None
    return Report(
        kind=kind, title=title, guilty_frame=guilty, stack=stack,
        stack_lines=stack_lines, raw=b.raw,
        first_line=b.first_line, timestamp=ts, context=b.ctx,
        message=b.message if b.message is not None else b.panic_msg,
        aux_stacks=aux, truncated=truncated, alt_titles=list(alts), rule=rule_name,
        corrupted=bool(reason), corrupted_reason=reason, last_line=b.last_line,
    )


# how far the parser looks around the line it reads: back to a banner
# (_PRE_LINE_DISTANCE) before a header, ahead to the next two lines
_BACK = _PRE_LINE_DISTANCE + 1
_AHEAD = 2


class _Window:
    """The lines around the one being parsed (``_BACK`` before it, ``_AHEAD``
    after): all of the log the parser keeps, so that its memory is bounded
    by the largest report, not by the log."""

    __slots__ = ("lines", "last")

    def __init__(self) -> None:
        self.lines: deque[str] = deque(maxlen=_BACK + _AHEAD + 1)
        self.last = 0                  # the line number of lines[-1]

    def get(self, lineno: int) -> Optional[str]:
        i = lineno - self.last - 1     # from the end
        return self.lines[i] if -len(self.lines) <= i < 0 else None


class _Parser:
    def __init__(self) -> None:
        self.win = _Window()
        self.open: dict[Optional[str], _Builder] = {}
        self.done: list[Report] = []
        # ctx -> (lineno, body) of the last cut-here / "=====" banner line
        self.pre: dict[Optional[str], tuple[int, str]] = {}
        self.nmi_sink: Optional[_Builder] = None
        # rebooted(): (lines scanned, a reboot is unexpected (None: not
        # known yet), output seen before the firmware's)
        self.boot_scan: tuple[int, Optional[bool], bool] = (0, None, False)

    def close(self, b: _Builder, truncated: bool = False) -> None:
        if b.closed:
            return
        b.closed = True
        if self.open.get(b.ctx) is b:
            del self.open[b.ctx]
        if self.nmi_sink is b:
            self.nmi_sink = None
        self.done.append(_finish(b, truncated))

    def close_all(self) -> None:
        for other in list(self.open.values()):
            self.close(other, not _complete(other))
        self.pre.clear()

    def start(self, header: rr._Compiled, rule: rr.Rule, body: str, lineno: int,
              ts: Optional[str], ctx: Optional[str]) -> _Builder:
        b = _Builder(header, rule, lineno, ts, ctx)
        pre = self.pre.get(ctx)
        if pre is not None and lineno - pre[0] <= _PRE_LINE_DISTANCE:
            b.raw.append(pre[1])
            b.first_line = pre[0]
            del self.pre[ctx]
            # Lines between the banner and the header (x86 prints a WARN()
            # message before the WARNING line) belong to the report too.
            for ln in range(pre[0] + 1, lineno):
                ts2, ctx2, body2 = _split_prefix(self.win.get(ln) or "")
                if ctx2 == ctx and body2 and not (ts2 is None and ts is not None):
                    b.raw.append(body2)
                    if b.message is None and b.warn_header and not rule.ours:
                        b.message = body2
        b.header_index = len(b.raw)
        b.raw.append(body)
        if rule.ours:
            m = _HEADER_FUNC_RE.search(body)
            b.header_func = _norm_func(m.group(1)) if m else None
        if rule.kind == "PANIC":
            b.panic_msg = _panic_message(body)
        self.open[ctx] = b
        return b

    def unfeed_pre(self, cur: _Builder, lineno: int) -> None:
        """A banner/cut-here line fed to cur, and what followed it, belong to
        the header that follows."""
        pre = self.pre.get(cur.ctx)
        if pre is None or lineno - pre[0] > _PRE_LINE_DISTANCE:
            return
        raw = cur.raw
        for i in range(len(raw) - 1, max(len(raw) - 1 - _PRE_LINE_DISTANCE, -1), -1):
            if raw[i] is pre[1]:
                del raw[i:]
                cur.last_line = min(cur.last_line, pre[0] - 1)
                return

    def rebooted(self, lineno: int) -> bool:
        """Is "Booting the kernel" at this line a reboot, not the log's first
        boot: did a kernel print before it (a timestamped line), or anything
        before the firmware's first words?  (observe() has seen every line
        before this one.)"""
        return bool(self.boot_scan[1])

    def rest_key(self, lineno: int) -> tuple:
        """With nothing open before this line (open and nmi_sink empty), the
        state that still matters: the banners near enough to give a header
        after them its first line.  Two parsers with the same key here give
        the same reports from here on, whatever each read before."""
        return (lineno, tuple(sorted((ctx or "", pre[0]) for ctx, pre in self.pre.items()
                                     if lineno - pre[0] <= _PRE_LINE_DISTANCE)))

    def observe(self, line: str) -> None:
        """A line read, for rebooted(): until a kernel line or the firmware's
        first words settle it (most logs: their first line)."""
        _, known, output = self.boot_scan
        if known is not None:
            return
        if _KERNEL_LINE_RE.match(line):
            self.boot_scan = (0, True, output)
        elif _FIRMWARE_RE.search(line):
            self.boot_scan = (0, output, output)
        else:
            self.boot_scan = (0, None, output or bool(line.strip()))

    def frame_follows(self, lineno: int) -> bool:
        """Is one of the next two lines a stack frame?"""
        for n in (lineno + 1, lineno + 2):
            line = self.win.get(n)
            if line is not None and _PEEK_FRAME_RE.match(_split_prefix(line)[2]):
                return True
        return False

    def comes_next(self, b: _Builder, lineno: int, wanted) -> bool:
        """Does a line in report b's context among the next two match
        `wanted` (a predicate on its text) before any header does?"""
        for n in (lineno + 1, lineno + 2):
            line = self.win.get(n)
            if line is None:
                return False
            _, ctx, body = _split_prefix(line)
            if ctx == b.ctx:
                if wanted(body):
                    return True
                if _is_candidate(body):
                    return False
        return False

    def blocked_on(self, b: _Builder, lineno: int) -> None:
        """hung_task's line naming the lock a hung task waits for
        ("INFO: task A:1 is blocked on a mutex likely owned by task B:2",
        rules.HUNG_BLOCKER) was fed to hung-task report b: the stack of the
        lock's owner follows ("task:B state:D ..." first, then its Call
        Trace, kept as the aux stack LOCK_OWNER) and ends the report;
        without it (the owner not found, or hung itself and reported on its
        own) the report ends here."""
        b.blocker = True
        if self.comes_next(b, lineno, _OWNER_TASK):
            b.new_section("?")
        else:
            self.close(b)

    def single(self, header: rr._Compiled, rule: rr.Rule, body: str, lineno: int,
               ts: Optional[str], ctx: Optional[str]) -> None:
        """A report of one line, leaving whatever is open alone."""
        b = _Builder(header, rule, lineno, ts, ctx)
        b.raw.append(body)
        b.closed = True
        self.done.append(_finish(b, False))

    def joins(self, cur: _Builder, header: rr._Compiled) -> bool:
        """Does a header that only continues a report belong to cur?"""
        return (not cur.tail and not cur.sep and not cur.stack_started
                and cur.pending_rip is None and cur.header is not header)

    def header(self, cls: _Class, body: str, lineno: int,
               ts: Optional[str], ctx: Optional[str]) -> None:
        what, ch, rule = cls
        cur = self.open.get(ctx)
        if what == "SEP":
            if cur is not None and not cur.tail and cur.sep:
                cur.raw.append(body)
                cur.last_line = lineno
                self.close(cur)
                return
            self.pre[ctx] = (lineno, body)
            if cur is not None:
                self.feed(cur, body, lineno)
            return
        if what == "PRE":
            if body.startswith("------------[ cut here ]"):
                self.pre[ctx] = (lineno, body)
            if cur is not None:
                self.feed(cur, body, lineno)
            return
        if what == "DMA-MSG":
            self.dma_message(cur, body, lineno, ts, ctx)
            return
        if what == "REBOOT":
            # The machine restarted: whatever was open will never end.
            self.close_all()
            return
        assert ch is not None and rule is not None
        nxt = self.win.get(lineno + 1)
        if nxt is not None and _REPLAY in nxt:
            # A header cut short, printed again on the next line.
            if cur is not None:
                self.feed(cur, body, lineno)
            return
        if cur is not None and cur.warn_header is False and rule.end == "end-trace" \
                and ch is _WARNING and not cur.tail and cur.message is not None \
                and not cur.stack_started and len(cur.raw) <= 10:
            # x86: __warn_printk printed the DMA-API message first.
            cur.raw.append(body)
            cur.last_line = lineno
            cur.warn_header = True
            cur.end_trace = True
            m = _HEADER_FUNC_RE.search(body)
            cur.header_func = _norm_func(m.group(1)) if m else None
            return
        if cur is not None and self.joins(cur, ch) and _CONTINUATION.search(body):
            # panic_on_warn and friends: the panic's stack is the report's;
            # "invalid opcode:" after "kernel BUG at".
            cur.raw.append(body)
            cur.last_line = lineno
            if rule.kind == "PANIC":
                cur.panic_msg = _panic_message(body)
            return
        if cur is not None and cur.sep and not cur.tail and not cur.nested \
                and ch is _WARNING and _REPORTING_CODE.search(body):
            # The sanitizer's report faulted while printing itself: the
            # warning belongs to it, and the report goes on after the
            # warning's end trace up to its own closing banner.
            cur.raw.append(body)
            cur.last_line = lineno
            cur.nested = True
            cur.new_section("nested WARNING")
            return
        if ch is _KMEMLEAK and cur is not None and cur.rule is _MEMORY_LEAK \
                and not cur.raw[-1].startswith(" ") and len(cur.raw) <= 2:
            cur.raw.append(body)   # syzkaller's "BUG: memory leak" header, then kmemleak's
            cur.last_line = lineno
            return
        if ch is _BOOTING:
            self.close_all()
            if self.rebooted(lineno):   # not the first boot of the log
                self.single(ch, rule, body, lineno, ts, ctx)
            return
        if rule.end == "line":
            # One line says it all ("unregister_netdevice: waiting for lo
            # to become free"), printed by whoever, maybe inside another
            # report: that report goes on.
            self.single(ch, rule, body, lineno, ts, ctx)
            return
        if cur is not None:
            self.unfeed_pre(cur, lineno)
            self.close(cur, not _complete(cur))
        self.start(ch, rule, body, lineno, ts, ctx)

    def dma_message(self, cur: Optional[_Builder], body: str, lineno: int,
                    ts: Optional[str], ctx: Optional[str]) -> None:
        """A "DMA-API: drv dev: message" line: dma-debug's or the detector's."""
        m = _DMA_DEV_RE.match(body)
        msg = m.group(3) if m else body[9:]
        if (cur is not None and cur.rule is _DMA_OWNED and not cur.tail
                and msg.startswith("the device owns this byte")):
            # The detector describes the owning mapping inside KASAN's report.
            self.feed(cur, body, lineno)
            return
        if (cur is not None and not cur.tail and cur.message is None and cur.warn_header
                and len(cur.raw) <= 3):
            # The WARNING header came first (__warn printing args after it).
            cur.raw.append(body)
            cur.last_line = lineno
            cur.message = msg
            cur.kind = _dma_kind(msg)
            cur.set_rule(_DMA_RULE)
            return
        if (m is not None and cur is not None and cur.message is not None
                and not cur.tail and not cur.stack_started and len(cur.raw) <= 8
                and cur.raw[-1].startswith(body[:m.end(2) + 1])):
            # A message printed over several "DMA-API: drv dev: ..." lines.
            cur.raw.append(body)
            cur.last_line = lineno
            return
        pre = self.pre.get(ctx)
        near_pre = pre is not None and lineno - pre[0] <= 1
        if m is None and not near_pre:
            # "DMA-API: preallocated 65536 debug entries" and friends.
            if cur is not None:
                self.feed(cur, body, lineno)
            return
        if cur is not None:
            self.unfeed_pre(cur, lineno)
            self.close(cur, not _complete(cur))
        b = self.start(_DMA_MSG, _DMA_RULE, body, lineno, ts, ctx)
        b.kind = _dma_kind(msg)
        b.message = msg
        b.end_trace = False   # until a WARNING header joins it
        b.warn_header = False

    def feed(self, b: _Builder, body: str, lineno: int) -> None:
        """A non-header line that belongs to open report b."""
        b.raw.append(body)
        prev_last = b.last_line
        b.last_line = lineno
        if len(b.raw) > _MAX_REPORT_LINES:
            self.close(b, truncated=True)
            return
        c = body[:1]
        if c == " " or c == "\t":
            if b.tail and b.sections[b.cur][0] != "Mapped at":
                return
            m = _FRAME_RE.match(body)
            if m is not None:
                b.cur_frames.append(m.group(1))
                b.cur_texts.append(body)  # trimmed by _frame_text() if needed
                b.stack_started = True
                return
            s = body.strip()
            if s in _STACK_MARKERS:
                if s[1] == "/" and s != "</TASK>" or s == "<EOI>":
                    b.cur_frames.append("|" + s)
                    b.cur_texts.append("")
                    b.task_open = True
                    b.irq_seen = True
                elif s == "</TASK>":
                    if not b.sep and not b.end_trace and not (
                            b.nmi_sent and not b.nmi_seen) and not (b.stall and not b.irq_seen) \
                            and not (b.rule is _TASK_HUNG and not b.blocker
                                     and self.comes_next(b, lineno, _BLOCKER_RE.match)):
                        self.close(b)
                        return
                    # The stack is over; later frames belong to something else.
                    b.new_section("?")
                else:
                    b.task_open = True
                return
            if s.startswith("backtrace"):
                b.new_section("backtrace")
                return
            if s.startswith("-> #"):
                b.new_section("lockdep chain")
                return
            if s[-8:] == "[inline]":
                m2 = _INLINE_FRAME_RE.match(body)
                if m2 is not None:
                    b.cur_frames.append(_norm_func(m2.group(1)))
                    b.cur_texts.append(s)
            return
        # Unindented line.
        if b.tail:
            if body.startswith(("Mapped at:", "DMA-API: Mapped at:")):   # pr_fmt'd in debug.c
                b.new_section("Mapped at")
                return
            if body.startswith(_REG_PREFIXES):
                return
            # Anything else ends the tail: not ours.
            b.raw.pop()
            b.last_line = prev_last
            self.close(b)
            return
        if c == "I" and b.rule is _TASK_HUNG and not b.blocker and _BLOCKER_RE.match(body):
            self.blocked_on(b, lineno)
            return
        if not b.task_open and b.stack_started and not b.end_trace and not b.sep and b.cur_frames \
                and b.sections[b.cur][0] in _STACK_SECTIONS \
                and not body.startswith(_REG_PREFIXES) and not (b.stall and not b.irq_seen) \
                and not self.frame_follows(lineno):
            # Old kernels without <TASK> markers: the stack ended (unless a
            # message of someone else was printed in its middle).
            b.raw.pop()
            b.last_line = prev_last
            self.close(b)
            return
        if body[-1:] == ":" and b.stack_started and _FOREIGN_PREFIX.match(body):
            # "clocksource: ... too large:": another subsystem's message
            # printed in the middle of our stack, not a heading; the stack
            # goes on after it.
            b.raw.pop()
            b.last_line = prev_last
            return
        if body[-1:] == ":":
            # Headings of stacks: "Call Trace:", "Allocated by task 1:", ...
            if body.startswith(("Call Trace:", "Call trace:")):
                b.new_section("nested Call Trace" if b.nested else
                              LOCK_OWNER if b.blocker else "Call Trace")
            elif body.startswith("stack backtrace:"):
                pass
            elif body.startswith(_AUX_SECTIONS):
                for p in _AUX_SECTIONS:
                    if body.startswith(p):
                        b.new_section(p)
                        break
            elif body.startswith("Sending NMI from CPU"):
                b.nmi_sent = True
                if b.kind == "RCU":
                    self.nmi_sink = b
            elif body.startswith("-> #"):
                b.new_section("lockdep chain")
            else:
                b.new_section(_normalize_text(body[:-1]))
            return
        c0 = body[:1]
        if c0 in _FEED_FIRST:
            if c0 == "-":
                if body.startswith("---[ end trace"):
                    if b.nested:
                        b.nested = False       # back to the report around it
                        b.new_section("?")
                    elif b.end_trace or b.message is not None:
                        b.tail = True
                        b.new_section("tail")
                    else:
                        self.close(b)
                elif body.startswith("---[ end Kernel panic"):
                    self.close(b)
                elif body.startswith("-> #"):
                    b.new_section("lockdep chain")
                return
            if c0 == "R" and body[1:2] == "e" or c0 == "W":
                if b.access is None:
                    if body.startswith(("Read of size", "Read at addr")):
                        b.access = "Read"
                    elif body.startswith(("Write of size", "Write at addr")):
                        b.access = "Write"
                return
            if c0 == "N":
                if body.startswith("NMI backtrace for cpu"):
                    b.nmi_seen = b.irq_seen = True
                    b.new_section("NMI backtrace")
                return
            if body.startswith(_RIP_PREFIXES) and not b.nested:
                m = _RIP_RE.match(body)
                if m is not None and m.group(1) != "0033":
                    name = _norm_func(m.group(2))
                    text = body[m.start(2):]
                    if b.stack_started and b.sections[b.cur][0] == "Call Trace":
                        b.cur_frames.append(name)
                        b.cur_texts.append(text)
                    elif b.pending_rip is None:
                        b.pending_rip = name
                        b.pending_rip_text = text
                return

    def line(self, lineno: int, ts: Optional[str], ctx: Optional[str], body: str) -> None:
        """A line whose text may hold a header."""
        b = self.open.get(ctx)
        cls = _classify(body)
        if b is not None and ts is None and b.ts is not None and (cls is None or cls[1] is not _BOOTING):
            return  # userspace output on a timestamped console (the decompressor's is not)
        if b is None and ctx is not None and ctx[0] == "C" and self.nmi_sink is not None:
            b = self.nmi_sink
        if cls is not None:
            if b is not None and b.ctx != ctx and cls[0] in ("SEP", "PRE"):
                # Routed through the NMI sink: keep the banner inside.
                self.feed(b, body, lineno)
                return
            self.header(cls, body, lineno, ts, ctx)
            return
        if b is not None:
            self.feed(b, body, lineno)

    def finish(self) -> list[Report]:
        for b in list(self.open.values()):
            # A report still open at the end of the log is truncated unless
            # it ended in a way that needs no marker.
            self.close(b, not _complete(b))
        return self.ready(None)

    def ready(self, lineno: Optional[int]) -> list[Report]:
        """The reports done that no later line can put before another (all
        of them at the end, lineno None), in log order, taken from done."""
        if lineno is None:
            out, self.done = self.done, []
        else:
            limit = min([lineno - _BACK - _AHEAD] + [b.first_line for b in self.open.values()]
                        + ([self.nmi_sink.first_line] if self.nmi_sink else []))
            out = [r for r in self.done if r.first_line < limit]
            if not out:
                return out
            self.done = [r for r in self.done if r.first_line >= limit]
        out.sort(key=lambda r: r.first_line)
        return out


def _complete(b: _Builder) -> bool:
    """Did report b reach its end, for a report closed by something else?"""
    if b.tail:
        return True
    # Stacks of old kernels have no </TASK>: the next header ends them.
    return b.stack_started and not b.task_open and not b.end_trace and not b.sep


def parse(text: str) -> list[Report]:
    """Parse console text and return its reports in log order."""
    if "\r" in text:
        text = text.replace("\r\n", "\n")
    return list(iter_reports(text.split("\n")))


def is_journal(head: str) -> bool:
    """Is this the start of `journalctl -k` output ("Dec 03 07:00:00 host kernel: ")?"""
    return bool(_JOURNAL_RE.search(head, 0, 8192))


def journal_head(lines: Iterable[str]) -> tuple[bool, Iterator[str]]:
    """Are these lines `journalctl -k` output (decided from their first 8
    KiB), and the same lines again."""
    it = iter(lines)
    head: list[str] = []
    size = 0
    for line in it:
        head.append(line)
        size += len(line) + 1
        if size >= 8192:
            break
    return is_journal("\n".join(head)), itertools.chain(head, it)


def iter_reports(lines: Iterable[str], journal: Optional[bool] = None, *, first_line: int = 1,
                 booted: Optional[bool] = None, rest: Optional[tuple[int, int, list[tuple]]] = None
                 ) -> Iterator[Report]:
    """The reports of a console given line by line (without line ends: no
    "\\n", no CR of a CRLF), in log order, each as soon as no later line
    can change it or put a report before it: memory bounded by the largest
    report, not by the log.  ``journal``: strip `journalctl -k` prefixes
    (None: decide from the first 8 KiB).

    For a share of a log (:mod:`harness.reports.parallel`): ``first_line``
    is the number of the first line given; ``booted`` whether a kernel had
    printed before the share (what the log's head settled); ``rest`` =
    (head_to, tail_from, out): for every line below head_to or from
    tail_from on before which the parser is at rest (no report open), its
    _Parser.rest_key() is appended to out."""
    it = iter(lines)
    if journal is None:
        journal, it = journal_head(it)
    p = _Parser()
    if booted is not None:
        p.boot_scan = (0, booted, False)
    head_to, tail_from, rests = rest if rest is not None else (0, 1 << 62, [])
    rest_key = p.rest_key
    anywhere = _HEADER_LITERALS
    odd = _ODD_STARTS
    heads = _HEADS
    slow_heads = _START_HEADS | {"[ "}
    slow_starts = _START_PREFIXES + ("[ ",)
    candidate = _is_candidate
    open_ = p.open
    split_prefix = _split_prefix
    feed = p.feed
    # The window: line n is parsed once lines n+1 and n+2 are in it (None
    # past the log's end); observe() sees each line before the next is parsed.
    win = p.win
    buf = win.lines
    append = buf.append
    if journal:
        it = (_JOURNAL_RE.sub("", line, 1) for line in it)
    read = first_line - 1               # the number of the line last read
    scanning = booted is None           # observe() has not settled rebooted() yet
    for line in itertools.chain(it, (None,) * _AHEAD):
        append(line)
        read += 1
        win.last = read
        if read < first_line + _AHEAD:
            continue
        lineno = read - _AHEAD
        line = buf[-_AHEAD - 1]
        if line is None:                # a log shorter than the look-ahead
            break
        if scanning and lineno > 1:
            p.observe(buf[-_AHEAD - 2])
            scanning = p.boot_scan[1] is None
        if p.done:
            yield from p.ready(lineno)
        if not open_ and p.nmi_sink is None:
            if lineno < head_to or lineno >= tail_from:
                rests.append(rest_key(lineno))
            # Fast path, no report open: only a header line matters.  The
            # text of "[ ts][ tag] text" starts after the last "] " of the
            # prefix; header lines have no "] " of their own before that.
            # A line goes on when its text might start with a header, or a
            # "subsystem: " prefix might precede one (the checks of
            # _is_candidate, by their first two characters only).
            k = line.find("] ", 0, 40)
            k = k + 2 if k >= 0 else 0
            if k or line[:1] not in odd:
                if line[k:k + 2] not in slow_heads or not line.startswith(slow_starts, k):
                    j = line.find(": ", k + 1, k + 48)
                    if j < 0 or line[j + 2:j + 4] not in heads or not line.startswith(anywhere, j + 2):
                        continue
        # Inline the commonest prefixes, "[   12.345678] body" and
        # "[   12.345678][    T1] body"; anything else goes to the helper.
        ctx = None
        k = line.find("]", 8, 20)
        if k > 7 and line[0] == "[" and line[k - 7] == "." and line[1] != "<":
            n = line[k + 1:k + 2]
            if n == " ":
                ts, body = line[1:k], line[k + 2:]
            elif n == "[" and (k2 := line.find("] ", k + 2, k + 12)) > 0 \
                    and line[k2 - 1] in _DIGITS:
                ts, ctx, body = line[1:k], line[k + 2:k2].lstrip(), line[k2 + 2:]
            else:
                ts, ctx, body = split_prefix(line)
        else:
            ts, ctx, body = split_prefix(line)
        if body[:1] != " " and candidate(body):   # frames first: no header starts with " "
            p.line(lineno, ts, ctx, body)
            continue
        b = open_.get(ctx) if open_ else None
        if b is None:
            b = p.nmi_sink
            if b is None or ctx is None or ctx[0] != "C":
                continue
        elif ts is None and b.ts is not None:
            continue  # userspace output on a timestamped console
        feed(b, body, lineno)
    yield from p.finish()


def fold(reports: Iterable[Report]) -> list[Signature]:
    """Fold reports with identical titles into signatures, first seen first."""
    sigs: dict[str, Signature] = {}
    for r in reports:
        s = sigs.get(r.title)
        if s is None:
            sigs[r.title] = Signature(title=r.title, kind=r.kind, count=1, first=r, reports=[r])
        else:
            s.count += 1
            s.reports.append(r)
    return list(sigs.values())
