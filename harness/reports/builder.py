"""One report under construction, and the parts its Report is made of.

The parser of :mod:`harness.reports.engine` feeds the lines of each open
report to a ``_Builder``: its raw lines, its stacks by heading (``Call
Trace``, ``Allocated by task``, ``Mapped at``, ...) and the state that says
where the report ends.  When the report closes, the engine's ``_finish``
makes the Report from what is read here: the main stack
(``_Builder.primary``) and its frames as printed, the text syzkaller's
title rules read (``_title_text``; titles of identical texts computed
once), and the titles of this project's own rows, DMA-API, detector and
KASAN ``dma-owned`` (``_our_title``).
"""

from __future__ import annotations

from typing import Callable, Optional, TypeVar

from . import rules as rr
from .classify import _DMA_OWNED, _WARNING, _dma_short
from .frames import _DMA_EXTRA_PREFIXES, _first_unskipped, _strip_syscall

T = TypeVar("T")


_AUX_SECTIONS = (
    "Allocated by task", "Freed by task", "Mapped at", "Uninit was created at",
    "Uninit was stored to memory at", "Local variable",
    "Last potentially related work creation",
    "Second to last potentially related work creation",
)
# The stack of the task holding the lock a hung task waits for (hung_task's
# "INFO: task A:1 is blocked on a mutex likely owned by task B:2", 6.16 on):
# an aux stack of the hung task's report, never its main one.
LOCK_OWNER = "Lock owner"
_NOT_PRIMARY = frozenset(["lockdep chain", "tail", "?", LOCK_OWNER, "nested WARNING",
                          "nested Call Trace"])


class _Builder:
    """Accumulates the lines of one report until it ends."""

    __slots__ = (
        "kind", "rule", "header", "header_index", "header_func", "access", "message", "raw",
        "first_line", "last_line", "ts", "ctx", "sections", "cur",
        "cur_frames", "cur_texts", "pending_rip", "pending_rip_text", "end_trace",
        "tail", "task_open", "stack_started", "nmi_sent", "nmi_seen", "warn_header",
        "closed", "panic_msg", "rip_first", "sep", "stall", "irq_seen", "blocker",
        "nested",
    )

    def __init__(self, header: rr._Compiled, rule: rr.Rule, lineno: int, ts: Optional[str],
                 ctx: Optional[str]) -> None:
        self.header = header
        self.rule = rule
        self.kind = rule.kind
        self.header_index = 0
        self.header_func: Optional[str] = None
        self.access: Optional[str] = None
        self.message: Optional[str] = None
        self.raw: list[str] = []
        self.first_line = lineno
        self.last_line = lineno
        self.ts = ts
        self.ctx = ctx
        # (heading, function names, frame texts): "" is the text before any
        # heading; names include "|</IRQ>"-like markers, with "" as text.
        self.sections: list[tuple[str, list[str], list[str]]] = [("", [], [])]
        self.cur = 0
        self.cur_frames: list[str] = self.sections[0][1]
        self.cur_texts: list[str] = self.sections[0][2]
        self.pending_rip: Optional[str] = None
        self.pending_rip_text = ""
        self.end_trace = rule.end == "end-trace"   # ends at ---[ end trace ]---
        self.sep = rule.end == "banner"            # ends at a ===== line (sanitizers)
        self.stall = rule.end == "stall"           # ends after the stalled CPU's stack
        self.irq_seen = False    # an </IRQ> marker or an NMI backtrace
        self.tail = False        # after end trace: registers, Mapped at:
        self.task_open = False   # saw <TASK>/<IRQ> markers in a stack
        self.stack_started = False
        self.nmi_sent = False
        self.nmi_seen = False
        # A __warn() header: "WARNING: CPU: 0 PID: 1 at file:line f+0x1/0x2"
        # (up to 6.18), "WARNING: file:line at f+0x1/0x2, CPU#0: comm/1" (6.19+).
        self.warn_header = header is _WARNING and self.end_trace
        self.closed = False
        self.panic_msg: Optional[str] = None
        self.rip_first: set[int] = set()  # ids of sections that start with a RIP
        self.blocker = False     # a hung task's "is blocked on a mutex" line was seen
        # inside a WARNING that the report's own printing hit (until its end trace)
        self.nested = False

    def set_rule(self, rule: rr.Rule) -> None:
        self.rule = rule
        self.end_trace = rule.end == "end-trace"
        self.sep = rule.end == "banner"

    # -- sections -------------------------------------------------------
    def new_section(self, name: str) -> None:
        frames: list[str] = []
        texts: list[str] = []
        if name == "Call Trace" and self.pending_rip:
            frames.append(self.pending_rip)
            texts.append(self.pending_rip_text)
            self.rip_first.add(id(frames))
            self.pending_rip = None
        self.sections.append((name, frames, texts))
        self.cur = len(self.sections) - 1
        self.cur_frames = frames
        self.cur_texts = texts

    # -- finishing ------------------------------------------------------
    def primary(self) -> tuple[list[str], list[str]]:
        """The report's main stack: (names with markers, frame texts)."""
        secs = self.sections
        if self.kind == "KMEMLEAK":
            for name, fr, tx in secs:
                if name == "backtrace" and fr:
                    return fr, tx
        if self.kind == "RCU":
            best: Optional[tuple[list[str], list[str]]] = None
            for name, fr, tx in secs:
                if name in ("Call Trace", "NMI backtrace") and fr:
                    best = fr, tx
            if best:
                return best
        for name, fr, tx in secs:
            if name == "Call Trace" and fr:
                return fr, tx
        for name, fr, tx in secs:
            if fr and name in ("", "NMI backtrace", "backtrace"):
                return fr, tx
        for name, fr, tx in secs:
            # KFENCE: "Out-of-bounds read at 0x... (1B right of kfence-#12):"
            if fr and name not in _NOT_PRIMARY and not name.startswith(_AUX_SECTIONS):
                return fr, tx
        if self.pending_rip:
            return [self.pending_rip], [self.pending_rip_text]
        return [], []


def _frame_text(line: str) -> str:
    """'    [<ffffffff81234567>] foo+0x1/0x2 [mod]' -> 'foo+0x1/0x2 [mod]'."""
    line = line.strip()
    if line[:2] == "[<":
        line = line[line.find(">]") + 2:].lstrip()
    return line


def _clean_frames(frames: list[str]) -> list[str]:
    return [f for f in frames if f[:1] != "|"]


def _title_text(b: _Builder) -> tuple[str, int]:
    """The report's text as syzkaller titles it, and where its title part
    ends: from the header line on, without questionable frames (on a
    timestamped console), without "Disabling lock debugging", without a
    panic or lockdep report printed after a long enough report
    (panic_on_warn's second stack); without caller tags, the title is read
    before a message intermixed from elsewhere (a fault injection's stack)."""
    hi = b.header_index
    lines = b.raw[hi:] if hi else b.raw
    text = "\n".join(lines)
    if b.ts is not None and (" ? " in text or " (unreliable)" in text):
        lines = [lines[0]] + [ln for ln in lines[1:] if (" ? " not in ln or "<EOI>" in ln)
                              and not ln.endswith(" (unreliable)")]
        text = "\n".join(lines)
    if "Kernel panic - not syncing" not in text and "Disabling lock debugging" not in text \
            and "WARNING: possible circular locking" not in text \
            and "vmalloc: allocation failure:" not in text and "FAULT_" not in text:
        return text + "\n", len(text) + 1
    limit = 16 if "BUG: KMSAN:" in lines[0] else 22
    out = [lines[0]]
    cut = 0
    for n, ln in enumerate(lines[1:], 2):
        if "Disabling lock debugging due to kernel taint" in ln:
            continue
        if n > limit and ("Kernel panic - not syncing" in ln
                          or "WARNING: possible circular locking dependency detected" in ln):
            break
        if not cut and b.ctx is None and any(p in ln for p in rr.INTERMIXED):
            cut = len(out)
        out.append(ln)
    out.append("")
    text = "\n".join(out)
    return text, (len("\n".join(out[:cut])) + 1 if cut else len(text))


_title_cache: dict[tuple, object] = {}


def _memo(key: tuple, compute: Callable[[], T]) -> T:
    """Titles of identical report texts (a flood of one report) computed once."""
    v = _title_cache.get(key)
    if v is None:
        if len(_title_cache) > 4096:
            _title_cache.clear()
        v = _title_cache[key] = compute()
    return v  # type: ignore[return-value]


def _our_title(b: _Builder, stack: list[str]) -> tuple[str, Optional[str]]:
    """Title and function of our own rows (DMA-API, detector, dma-owned)."""
    dma = b.message is not None
    extra = _DMA_EXTRA_PREFIXES if dma else ()
    cands = ([b.header_func] if b.header_func else []) + stack
    guilty = _first_unskipped(cands, extra, transport=dma)
    if guilty is None:
        for name, fr, _ in b.sections:
            if name == "Mapped at":
                guilty = _first_unskipped(fr, extra, transport=dma)
                break
    if guilty is None and cands:
        guilty = cands[0]  # everything was machinery: the first frame we have
    if guilty is not None:
        guilty = _strip_syscall(guilty)
    if b.rule is _DMA_OWNED:
        base = "KASAN: dma-owned" + (" " + b.access if b.access else "")
    elif b.message is not None:
        base = "DMA-API: " + _dma_short(b.message)
    else:
        base = "WARNING"
    return (base + " in " + guilty if guilty else base), guilty
