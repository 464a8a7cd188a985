"""Fault injection and kmemleak: what a run's console says about them.

The guest init runs ``dmaharness-failnth`` after the workload when asked
(``harness/guest/failnth.h``): for N = 1, 2, ... it makes the Nth
fault-injectable call (slab or page allocation) of one bind (the *probe*
path) or unbind (the *disconnect* path) of a USB driver fail, from a task
of its own per step, and prints around each step::

    DMAHARNESS-FAILNTH step path=probe n=3 pid=93 begin
    ... the kernel's messages: "FAULT_INJECTION: forcing a failure.", the
    failing call's stack, any report ...
    DMAHARNESS-FAILNTH step path=probe n=3 pid=93 end injected=1 errno=12 bound=- [died=...]

and at the end one ``DMAHARNESS-FAILNTH {json}`` line (fields in
``harness/guest/failnth_result.h``).  Then, when the kernel has kmemleak,
the init prints what kmemleak reports between ``DMAHARNESS-KMEMLEAK
begin`` and ``DMAHARNESS-KMEMLEAK end leaks=<n>[ error=...]``.

:func:`parse` reads all of it into a :class:`Result`:

* per path, its steps (:class:`Step`): n, pid, injected, errno, the
  interfaces bound after it, the **failed call** -- the first frame of the
  ``FAULT_INJECTION`` stack between its markers that is not fault-injection
  or allocator machinery (``should_fail*``, ``kmalloc*``, ``__alloc_pages*``,
  ``devm_kzalloc``, ``usb_alloc_urb``, ...; :data:`ALLOC_MACHINERY`) --
  with the allocator it went through, the kernel reports between its
  markers (:func:`harness.reports.engine.parse` of that segment), the leaks
  kmemleak attributes to its task, and its **outcome**:

  ``not-reached``  injected=0: the operation made fewer than N injectable
                   calls; the path's last step, it ran to its end
  ``clean``        probe: the bind failed with an errno and none of the
                   device's interfaces is left bound.  disconnect: the
                   unbind failed with an errno and the device is bound as
                   before (refused before it began), or it succeeded and
                   nothing is left bound (disconnect cannot fail, and did
                   not)
  ``left-bound``   an interface stayed bound where ``clean`` wants none
                   (a claim not released, a half-bound device)
  ``tolerated``    probe: the bind succeeded and the device is bound (the
                   failure was handled, or hit an optional allocation, or
                   kmemleak's own metadata, which fails silently)
  ``lost``         probe: the bind succeeded but the device is not bound
  ``partial``      disconnect: the unbind failed but some interfaces went
  ``died``         the writing task died or hung (``died``)
  ``unknown``      injected unknown, or the step's end was not seen (the
                   kernel panicked or the log ends inside it)

  A step is worth a look (:attr:`Step.suspicious`) when it has reports or
  leaks, or its outcome is ``left-bound``, ``lost``, ``partial``, ``died``
  or ``unknown``.

* the kmemleak block (:class:`Kmemleak`): each leak (:class:`Leak`) titled
  by :func:`harness.reports.engine.parse` (``memory leak in <allocating
  function>``) and attributed to the step whose task allocated it (the
  ``comm "...", pid N`` line), else to no step ("outside any step": boot,
  the workload, kworkers, and the plain binds and unbinds between steps).

A step with an ``injected=1`` end marker and no ``FAULT_INJECTION`` dump
failed a ``__GFP_NOWARN`` allocation, which the kernel fails silently
(kmemleak's own metadata, the stack depot): its failed call is None.

Command line (python3 -m harness.reports.failnth)::

    python3 -m harness.reports.failnth <console.log> [--json]

Exit codes: 0 parsed, 2 usage error, 4 the log cannot be read.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Iterator, Optional

from ..jsonout import JSON_VERSION
from . import engine

OUTCOMES = ("not-reached", "clean", "left-bound", "tolerated", "lost", "partial", "died", "unknown")
SUSPICIOUS = ("left-bound", "lost", "partial", "died", "unknown")
RESULT_PREFIX = "DMAHARNESS-FAILNTH {"
KMEMLEAK_BEGIN = "DMAHARNESS-KMEMLEAK begin"

_STEP_RE = re.compile(r"DMAHARNESS-FAILNTH step path=(\w+) n=(\d+) pid=(-?\d+) (begin|end)\b(.*)")
_KMEMLEAK_END_RE = re.compile(r"DMAHARNESS-KMEMLEAK end leaks=(\d+)(.*)")
_FAULT = "FAULT_INJECTION: forcing a failure"
_FAULT_NAME_RE = re.compile(r"\bname (\S+?),? interval ")
_DUMP_TASK_RE = re.compile(r"\bCPU: \d+ (?:UID: \d+ )?PID: (\d+) Comm: (\S+)")
_FRAME_RE = re.compile(r"^\s*(?:\[<[0-9a-fx]+>\]\s*)?(\?\s+)?([A-Za-z_$][\w$]*)[\w.$]*\+0x[0-9a-f]+/0x[0-9a-f]+")
_PREFIX_RE = re.compile(r"^(?:<\d+>)?(?:\[\s*\d+\.\d+\])?(?:\[\s*[TC]\d+\])?\s?")
_COMM_RE = re.compile(r'^\s*comm "(.*)", pid (\d+)')
_OBJECT_RE = re.compile(r"unreferenced object (0x[0-9a-f]+) \(size (\d+)\)")

# Frames of fault injection and of the allocators: the failed call is the
# first frame of the stack that is none of these (prefixes; names without
# their .isra.0/.cold suffix; 6.12's _noprof variants included).
ALLOC_MACHINERY = (
    "dump_stack", "show_stack", "fail_dump", "should_fail", "__should_fail",
    "should_failslab", "__should_failslab", "should_fail_alloc_page",
    "__should_fail_alloc_page", "should_fail_usercopy", "kasan_", "__kasan_",
    "slab_pre_alloc_hook", "slab_alloc", "__slab_alloc", "___slab_alloc",
    "kmem_cache_alloc", "__kmem_cache_alloc", "kmalloc", "__kmalloc", "kzalloc",
    "kcalloc", "krealloc", "__krealloc", "kmemdup", "kstrdup", "kstrndup",
    "kasprintf", "kvasprintf", "kvmalloc", "__kvmalloc", "kvzalloc", "kvcalloc",
    "kvrealloc", "kvmemdup", "memdup_", "vmalloc", "__vmalloc", "vzalloc",
    "__alloc_pages", "alloc_pages", "__alloc_pages_node", "alloc_pages_node",
    "prepare_alloc_pages", "get_page_from_freelist", "rmqueue",
    "__folio_alloc", "folio_alloc", "alloc_slab_page", "allocate_slab", "new_slab",
    "__get_free_pages", "get_zeroed_page", "alloc_pages_exact", "__page_frag_alloc",
    "page_frag_alloc", "mempool_alloc", "devm_k", "devres_alloc", "__devres_alloc",
    "dma_alloc_", "dma_direct_alloc", "__dma_direct_alloc", "dma_pool_alloc",
    "hcd_buffer_alloc", "usb_alloc_coherent", "usb_alloc_urb",
)


def is_alloc_machinery(func: str) -> bool:
    """Is this frame fault injection or allocator machinery (not the caller)?"""
    return func.startswith(ALLOC_MACHINERY)


def _body(line: str) -> str:
    """A console line without its syslog level, timestamp and caller tag."""
    return _PREFIX_RE.sub("", line, count=1) if line[:1] in "<[" else line


@dataclass
class FaultDump:
    """The kernel's "FAULT_INJECTION: forcing a failure." and its stack."""
    attr: Optional[str]          # failslab | fail_page_alloc | ...
    pid: Optional[int]           # the task of the dump_stack header
    comm: Optional[str]
    stack: list[str]             # functions, innermost first (reliable frames)
    call: Optional[str]          # the first frame that is not machinery
    allocator: Optional[str]     # the machinery frame just before it
    line: int                    # 1-based console line of the FAULT_INJECTION line


def fault_dumps(lines: list[str], first_lineno: int = 1) -> list[FaultDump]:
    """The FAULT_INJECTION dumps in these console lines (their stacks end at
    ``</TASK>``, or at the first line that is no frame once frames began)."""
    out: list[FaultDump] = []
    i = 0
    while i < len(lines):
        if _FAULT not in lines[i]:
            i += 1
            continue
        start = i
        attr = pid = comm = None
        stack: list[str] = []
        in_trace = False
        i += 1
        while i < len(lines):
            body = _body(lines[i])
            if _FAULT in body:
                break
            if attr is None and (m := _FAULT_NAME_RE.search(body)):
                attr = m.group(1)
            elif pid is None and (m := _DUMP_TASK_RE.search(body)):
                pid, comm = int(m.group(1)), m.group(2)
            elif body.strip() == "Call Trace:":
                in_trace = True
            elif in_trace:
                s = body.strip()
                if s == "</TASK>":
                    i += 1
                    break
                m = _FRAME_RE.match(body)
                if m:
                    if not m.group(1):
                        stack.append(m.group(2))
                elif s.startswith("<") and s.endswith(">"):
                    pass        # <TASK>, <IRQ>, ...
                elif stack:
                    break       # the first line after the frames
            i += 1
        call = allocator = None
        for f in stack:
            if is_alloc_machinery(f):
                allocator = f
                continue
            call = f
            break
        out.append(FaultDump(attr=attr, pid=pid, comm=comm, stack=stack, call=call,
                             allocator=allocator if call else None, line=first_lineno + start))
    return out


@dataclass
class Leak:
    """One object kmemleak reports."""
    title: str                   # "memory leak in <allocating function>"
    address: Optional[str]
    size: Optional[int]
    comm: Optional[str]          # the allocating task
    pid: Optional[int]
    stack: list[str]             # the allocation's backtrace, functions
    line: int                    # 1-based console line of "unreferenced object"
    step: Optional["Step"] = None    # the step whose task allocated it

    def to_json(self) -> dict:
        return {"title": self.title, "address": self.address, "size": self.size,
                "comm": self.comm, "pid": self.pid, "stack": list(self.stack), "line": self.line,
                "step": {"path": self.step.path, "n": self.step.n} if self.step else None}


@dataclass
class Kmemleak:
    """The DMAHARNESS-KMEMLEAK block."""
    leaks: list[Leak]
    count: Optional[int]         # the end marker's leaks=, None without it
    error: Optional[str]         # the end marker's error= (scan-failed, ...)
    complete: bool               # the end marker was seen
    first_line: int
    last_line: int

    def to_json(self) -> dict:
        return {"count": self.count, "error": self.error, "complete": self.complete,
                "first_line": self.first_line, "last_line": self.last_line,
                "leaks": [lk.to_json() for lk in self.leaks],
                "outside_steps": sum(1 for lk in self.leaks if lk.step is None)}


@dataclass
class Step:
    """One N of one path."""
    path: str
    n: int
    pid: Optional[int]
    injected: Optional[bool]     # None: unknown
    errno: Optional[int]
    bound_after: Optional[list[str]]
    died: Optional[str]
    complete: bool               # the end marker was seen
    first_line: int              # the begin marker's console line (1-based)
    last_line: int               # the end marker's, or the log's last line
    fault: Optional[FaultDump] = None
    reports: list[engine.Report] = field(default_factory=list)
    leaks: list[Leak] = field(default_factory=list)
    outcome: str = "unknown"

    @property
    def failed_call(self) -> Optional[str]:
        return self.fault.call if self.fault else None

    @property
    def suspicious(self) -> bool:
        return bool(self.reports or self.leaks) or self.outcome in SUSPICIOUS

    def to_json(self) -> dict:
        f = self.fault
        return {
            "path": self.path, "n": self.n, "pid": self.pid, "injected": self.injected,
            "errno": self.errno, "bound_after": self.bound_after, "died": self.died,
            "complete": self.complete, "outcome": self.outcome, "suspicious": self.suspicious,
            "failed_call": f.call if f else None, "allocator": f.allocator if f else None,
            "fault_attr": f.attr if f else None, "fault_stack": list(f.stack) if f else [],
            "reports": [{"title": r.title, "kind": r.kind, "first_line": r.first_line}
                        for r in self.reports],
            "leaks": [lk.title for lk in self.leaks],
            "first_line": self.first_line, "last_line": self.last_line,
        }


@dataclass
class PathResult:
    name: str
    steps: list[Step]
    completed: Optional[bool]    # reached an N the operation did not get to
    capped: Optional[bool]       # None: not known (no result line)
    error: Optional[str]
    bound_at_end: Optional[list[str]]

    @property
    def calls(self) -> Optional[int]:
        """The operation's injectable calls, when the path completed."""
        if self.completed and self.steps:
            return self.steps[-1].n - 1
        return None

    def to_json(self) -> dict:
        return {"completed": self.completed, "capped": self.capped, "calls": self.calls,
                "error": self.error, "bound_at_end": self.bound_at_end,
                "steps": [s.to_json() for s in self.steps]}


@dataclass
class Result:
    """What a console says about fail-nth and kmemleak."""
    ran: bool                    # fail-nth markers or its result line were seen
    driver: Optional[str] = None
    interfaces: list[str] = field(default_factory=list)
    paths: dict[str, PathResult] = field(default_factory=dict)
    error: Optional[str] = None  # the tool's set-up error
    exit_code: Optional[int] = None
    result_line: bool = False    # the JSON line was read
    result_problem: Optional[str] = None   # why it could not be
    kmemleak: Optional[Kmemleak] = None

    def steps(self) -> Iterator[Step]:
        for p in self.paths.values():
            yield from p.steps

    def to_json(self) -> dict:
        return {
            "version": JSON_VERSION, "ran": self.ran, "driver": self.driver,
            "interfaces": list(self.interfaces), "error": self.error,
            "exit_code": self.exit_code, "result_line": self.result_line,
            "result_problem": self.result_problem,
            "paths": {k: v.to_json() for k, v in self.paths.items()},
            "suspicious": [{"path": s.path, "n": s.n} for s in self.steps() if s.suspicious],
            "kmemleak": self.kmemleak.to_json() if self.kmemleak else None,
        }

    def format_text(self) -> str:
        return format_text(self)


# --------------------------------------------------------------------------
# Parsing


def _tokens(rest: str) -> dict[str, str]:
    return dict(t.split("=", 1) for t in rest.split() if "=" in t)


def _bound_list(v: Optional[str]) -> Optional[list[str]]:
    if v is None:
        return None
    return [] if v in ("", "-") else v.split(",")


def outcome(path: str, s: Step, interfaces: list[str]) -> str:
    """The step's outcome (the table in the module's documentation)."""
    if s.died:
        return "died"
    if not s.complete or s.injected is None or s.errno is None or s.bound_after is None:
        return "unknown"
    if not s.injected:
        return "not-reached"
    bound = set(s.bound_after)
    first = interfaces[0] if interfaces else None
    if path == "probe":
        if s.errno:
            return "left-bound" if bound else "clean"
        return "tolerated" if first is None or first in bound else "lost"
    if s.errno:
        return "clean" if not interfaces or bound >= set(interfaces) else "partial"
    return "left-bound" if bound else "clean"


def _read_result(line: str) -> tuple[Optional[dict], Optional[str]]:
    k = line.find(RESULT_PREFIX)
    try:
        doc = json.loads(line[k + len(RESULT_PREFIX) - 1:])
    except ValueError as e:
        return None, f"the result line is not JSON ({e.msg} at column {e.pos}): cut or mixed with other output?"
    if not isinstance(doc, dict):
        return None, "the result line is not a JSON object"
    return doc, None


def parse_kmemleak(text: str) -> Optional[Kmemleak]:
    """The DMAHARNESS-KMEMLEAK block of a console (the first), or None."""
    return _kmemleak(text.replace("\r\n", "\n").split("\n"))


def _kmemleak(lines: list[str]) -> Optional[Kmemleak]:
    begin = next((i for i, ln in enumerate(lines) if KMEMLEAK_BEGIN in ln), None)
    if begin is None:
        return None
    end, m = None, None
    for i in range(begin + 1, len(lines)):
        m = _KMEMLEAK_END_RE.search(lines[i])
        if m:
            end = i
            break
    stop = end if end is not None else len(lines)
    leaks = []
    for r in engine.parse("\n".join(lines[begin + 1:stop])):
        if r.kind != "KMEMLEAK":
            continue
        addr = size = comm = pid = None
        for raw in r.raw:
            if (mo := _OBJECT_RE.search(raw)) and addr is None:
                addr, size = mo.group(1), int(mo.group(2))
            elif (mc := _COMM_RE.match(raw)) and pid is None:
                comm, pid = mc.group(1), int(mc.group(2))
        leaks.append(Leak(title=r.title, address=addr, size=size, comm=comm, pid=pid,
                          stack=list(r.stack), line=begin + 1 + r.first_line))
    tok = _tokens(m.group(2)) if end is not None else {}
    return Kmemleak(leaks=leaks, count=int(m.group(1)) if end is not None else None,
                    error=tok.get("error"), complete=end is not None,
                    first_line=begin + 1, last_line=(end if end is not None else len(lines) - 1) + 1)


def parse(text: str) -> Result:
    """Fail-nth's steps and result, and the kmemleak block, of console text."""
    lines = text.replace("\r\n", "\n").split("\n")
    res = Result(ran=False)
    doc = None
    steps: dict[tuple[str, int], Step] = {}
    open_step: Optional[Step] = None
    open_at = 0

    def close(st: Step, end: int) -> None:
        """The step's segment: the lines between its begin marker and end."""
        seg = lines[open_at + 1:end]
        dumps = fault_dumps(seg, open_at + 2)
        # fail-nth fails calls of the step's own task only: another task's
        # dump is not the step's (one without its task line may be)
        mine = [d for d in dumps if d.pid == st.pid] or [d for d in dumps if d.pid is None]
        st.fault = mine[0] if mine else None
        off = open_at + 1
        for r in engine.parse("\n".join(seg)):
            r.first_line += off
            r.last_line = r.last_line + off if r.last_line else r.first_line
            st.reports.append(r)

    def new_step(path: str, n: int, pid: Optional[int], first: int, last: int) -> Step:
        return Step(path=path, n=n, pid=pid, injected=None, errno=None, bound_after=None,
                    died=None, complete=False, first_line=first, last_line=last)

    for i, line in enumerate(lines):
        if "DMAHARNESS-FAILNTH" not in line:
            continue
        m = _STEP_RE.search(line)
        if m:
            res.ran = True
            path, n, pid, what, rest = m.group(1), int(m.group(2)), int(m.group(3)), m.group(4), m.group(5)
            if what == "begin":
                if open_step is not None:
                    close(open_step, i)
                    open_step.last_line = i
                open_step = steps[(path, n)] = new_step(path, n, pid, i + 1, len(lines))
                open_at = i
                continue
            st = steps.get((path, n))
            if st is None:      # an end without its begin: the begin was lost
                st = steps[(path, n)] = new_step(path, n, pid, i + 1, i + 1)
            elif st is open_step:
                close(st, i)
                open_step = None
            tok = _tokens(rest)
            st.complete = True
            st.last_line = i + 1
            st.injected = {"1": True, "0": False}.get(tok.get("injected", "?"))
            st.errno = int(tok["errno"]) if tok.get("errno", "").lstrip("-").isdigit() else None
            st.bound_after = _bound_list(tok.get("bound"))
            st.died = tok.get("died")
            continue
        if RESULT_PREFIX in line:
            res.ran = True
            doc, res.result_problem = _read_result(line)
    if open_step is not None:
        close(open_step, len(lines))

    if doc is not None:
        res.result_line = True
        res.driver = doc.get("driver")
        res.interfaces = [str(x) for x in doc.get("interfaces") or []]
        res.error = doc.get("error")
        res.exit_code = doc.get("exit_code")
        for name, pdoc in (doc.get("paths") or {}).items():
            pr = res.paths[name] = PathResult(name=name, steps=[], completed=pdoc.get("completed"),
                                              capped=pdoc.get("capped"), error=pdoc.get("error"),
                                              bound_at_end=pdoc.get("bound_at_end"))
            for sd in pdoc.get("steps") or []:
                key = (name, int(sd.get("n", 0)))
                st = steps.get(key)
                if st is None:  # in the result but its markers were not seen
                    st = steps[key] = new_step(name, key[1], None, 0, 0)
                # the result line is the tool's own record: it wins
                st.pid = sd.get("pid", st.pid)
                if sd.get("injected") is not None or st.injected is None:
                    st.injected = sd.get("injected")
                st.errno = sd.get("errno", st.errno)
                st.bound_after = sd.get("bound_after", st.bound_after)
                st.died = sd.get("died") or st.died
    for (name, _), st in steps.items():
        pr = res.paths.get(name)
        if pr is None:
            pr = res.paths[name] = PathResult(name=name, steps=[], completed=None, capped=None,
                                              error=None, bound_at_end=None)
        pr.steps.append(st)
    for pr in res.paths.values():
        pr.steps.sort(key=lambda s: s.n)
        if pr.completed is None and pr.steps and pr.steps[-1].injected is False:
            pr.completed = True
        for st in pr.steps:
            st.outcome = outcome(pr.name, st, res.interfaces)

    res.kmemleak = _kmemleak(lines)
    if res.kmemleak:
        by_pid: dict[int, Step] = {}
        for st in res.steps():
            if st.pid is not None:
                by_pid.setdefault(st.pid, st)
        for lk in res.kmemleak.leaks:
            lk.step = by_pid.get(lk.pid) if lk.pid is not None else None
            if lk.step:
                lk.step.leaks.append(lk)
    return res


# --------------------------------------------------------------------------
# Text


def _result_cell(s: Step) -> str:
    if s.outcome in ("clean", "left-bound", "partial") and s.errno:
        return f"{s.outcome} (errno {s.errno})"
    if s.outcome == "died":
        return f"died ({s.died})"
    return s.outcome


def format_text(res: Result) -> str:
    """A compact table: per path per N the failed call, the outcome, the
    reports and leaks; then the kmemleak leaks and where they came from."""
    out: list[str] = []
    if res.ran:
        head = f"fail-nth on {res.driver or '?'}"
        if res.interfaces:
            head += f" ({', '.join(res.interfaces)})"
        out.append(head)
        if res.error:
            out.append(f"  error: {res.error}")
        if res.result_problem:
            out.append(f"  {res.result_problem}")
        for pr in res.paths.values():
            if pr.completed:
                state = f"completed: {pr.calls} injectable calls"
            elif pr.capped:
                state = "stopped at the cap"
            else:
                state = "did not complete"
            out.append(f"  {pr.name}: {len(pr.steps)} steps, {state}"
                       + (f"; {pr.error}" if pr.error else ""))
        rows = [("path", "n", "failed call", "outcome", "reports", "leaks")]
        for s in res.steps():
            call = s.failed_call or ("-" if s.injected is False else "(no dump)")
            if s.fault and s.fault.allocator and s.failed_call:
                call += f" <- {s.fault.allocator}"
            rows.append((s.path, str(s.n), call, _result_cell(s),
                         "; ".join(r.title for r in s.reports) or "-",
                         "; ".join(lk.title for lk in s.leaks) or "-"))
        if len(rows) > 1:
            widths = [max(len(r[c]) for r in rows) for c in range(5)]
            for r in rows:
                out.append("  " + "  ".join(f"{r[c]:>{widths[c]}}" if c == 1 else f"{r[c]:<{widths[c]}}"
                                            for c in range(5)) + "  " + r[5])
        sus = [s for s in res.steps() if s.suspicious]
        out.append(f"  {len(sus)} step(s) worth a look" if sus else "  every step clean")
    k = res.kmemleak
    if k is not None:
        outside = [lk for lk in k.leaks if lk.step is None]
        line = f"kmemleak: {len(k.leaks)} leak(s)"
        if k.leaks:
            line += f", {len(k.leaks) - len(outside)} in fail-nth steps, {len(outside)} outside any step"
        if k.error:
            line += f" ({k.error})"
        if not k.complete:
            line += " (the block's end was not seen)"
        out.append(line)
        for lk in k.leaks:
            where = f"{lk.step.path} n={lk.step.n}" if lk.step else "outside any step"
            out.append(f"  {lk.title}  [{lk.size} bytes, {lk.comm} pid {lk.pid}] -> {where}")
    if not out:
        return "no fail-nth steps and no kmemleak block\n"
    return "\n".join(out) + "\n"
