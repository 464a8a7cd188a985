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
  (:func:`is_machinery`), else the first of dma-debug's ``Mapped at:``
  stack; without any frame the title has no `` in f`` part.

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
stack); RCU stalls only after the stalled CPU's interrupted stack; panics
at ``---[ end Kernel panic``; one-line reports (``unregister_netdevice:
waiting for ...``) at their line, leaving a report open around them alone.
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

Command line (wired as ``dmaharness reports`` by the CLI)::

    dmaharness reports <console.log> [--json]

Exit codes: 0 the log was parsed (whether or not it holds reports),
2 usage error, 4 the log cannot be read.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Callable, Iterable, Optional, TypeVar

from . import rules as rr
from ..jsonout import JSON_VERSION
from .titles import NO_FRAMES, describe, is_corrupted

T = TypeVar("T")

# --------------------------------------------------------------------------
# Data model


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
                  "Freed by task", "Mapped at", "lockdep chain", ...
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



# --------------------------------------------------------------------------
# Line prefixes: syslog level, timestamp, caller tag

_DIGITS = frozenset("0123456789")
_JOURNAL_RE = re.compile(
    r"^(?:[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d|\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\S*) \S+ kernel: ",
    re.M)
_DATE_RE = re.compile(r"\d{4}/\d\d/\d\d \d\d:\d\d:\d\d ")


def _split_prefix(line: str) -> tuple[Optional[str], Optional[str], str]:
    """Return (timestamp text, caller tag, body) of one console line."""
    if line[:1] == "<" and line[2:3] == ">" and line[1:2].isdigit():
        line = line[3:]  # syslog level
    # Common forms first: "[   12.345678] body" and "[   12.345678][    T1] body".
    if line[:1] == "[":
        k = line.find("]", 1, 24)
        if k > 7 and line[k - 7] == "." and line[1] != "<":
            n = line[k + 1:k + 2]
            if n == " ":
                return line[1:k], None, line[k + 2:]
            if n == "[":
                k2 = line.find("]", k + 2, k + 12)
                tag = line[k + 2:k2].lstrip()
                if k2 > 0 and tag[:1] in ("T", "C") and tag[1:].isdigit():
                    if line[k2 + 1:k2 + 2] == " ":
                        return line[1:k], tag, line[k2 + 2:]
                    return line[1:k], tag, line[k2 + 1:]
    elif line[:1] != "<":
        k = line.find(" login: [", 0, 80)
        if k > 0:  # a login prompt without a newline, then kernel output
            return _split_prefix_slow(line[k + 8:])
        if line[:3] == "** ":
            k = line.find(" printk messages dropped ** ", 3, 40)
            if k > 0:  # "** 93 printk messages dropped ** [ 1.2] ..."
                return _split_prefix(line[k + 28:])
        elif line[4:5] == "/" and _DATE_RE.match(line):
            return None, None, line[20:]  # syz-manager's "2018/01/09 14:28:48 "
        return None, None, line
    return _split_prefix_slow(line)


def _split_prefix_slow(line: str) -> tuple[Optional[str], Optional[str], str]:
    """The general case of _split_prefix: ``<4>`` syslog levels,
    ``[   12.345678]`` timestamps of any width and ``[    T1]`` / ``[  C0]``
    caller tags, each optional, in that order."""
    ts = ctx = None
    i = 0
    if line[:1] == "<":
        k = line.find(">", 1, 5)
        if k > 1 and line[1:k].isdigit():
            i = k + 1
    for _ in range(2):
        if line[i:i + 1] != "[":
            break
        k = line.find("]", i + 1, i + 40)
        if k < 0:
            break
        inner = line[i + 1:k].strip()
        if not inner:
            break
        c = inner[0]
        if c in _DIGITS and ts is None and ctx is None:
            if not inner.replace(".", "", 1).isdigit():
                break
            ts = inner
        elif ts is None and ctx is None and inner[3:4] == " " and inner.count(":") == 2:
            pass  # dmesg -T: "[Thu Dec  3 07:00:00 2026]", no seconds since boot
        elif (c == "T" or c == "C") and ctx is None and inner[1:].isdigit():
            ctx = inner
        else:
            break
        i = k + 1
    if i and line[i:i + 1] == " ":
        i += 1
    return ts, ctx, line[i:] if i else line


# --------------------------------------------------------------------------
# Frames

# A reliable frame; group 1 is the function without .isra.0/.cold suffixes.
# Questionable frames (" ? foo+0x1/0x2") deliberately do not match.  The
# possessive quantifiers (Python 3.11) keep non-frame lines such as KASAN's
# memory dump from backtracking through every split of a long word.
_FRAME_RE = re.compile(
    r"\s++(?:\[<[0-9a-fx]++>\]\s++)?([A-Za-z_$][\w$]*+)[\w.$]*+\+0x[0-9a-f]++/0x[0-9a-f]"
)
_INLINE_FRAME_RE = re.compile(r"\s++([A-Za-z_$][\w.$]*+) \S+\.[chS]:\d+(?::\d+)? \[inline\]")
_RIP_RE = re.compile(r"(?:RIP|EIP|IP|pc|PC is at):? (?:(00\d\d):)?(?:\[<[0-9a-f]+>\] )?([A-Za-z_$][\w.$]*+)\+0x")
_HEADER_FUNC_RE = re.compile(r"([A-Za-z_$][\w.$]*+)\+0x[0-9a-f]+/0x[0-9a-f]+")

_STACK_MARKERS = frozenset(
    ["<TASK>", "</TASK>", "<IRQ>", "</IRQ>", "<NMI>", "</NMI>", "<SOFTIRQ>",
     "</SOFTIRQ>", "<EOI>", "<EOE>"]
)


def _norm_func(name: str) -> str:
    """foo.isra.0 / foo.constprop.3 / foo.cold -> foo."""
    dot = name.find(".")
    return name[:dot] if dot > 0 else name


_SYSCALL_PREFIXES = (
    "__x64_sys_", "__ia32_sys_", "__x64_compat_sys_", "__ia32_compat_sys_",
    "__arm64_sys_", "__arm64_compat_sys_", "__se_compat_sys_", "__se_sys_",
    "__do_compat_sys_", "__do_sys_", "ksys_", "SyS_", "sys_",
)


def _strip_syscall(name: str) -> str:
    if not name.startswith(_SYSCALL_PREFIXES):
        return name
    for p in _SYSCALL_PREFIXES:
        if name.startswith(p) and len(name) > len(p):
            return name[len(p):]
    return name


# "clocksource: ...:", "tsc: ...:": a one-word subsystem prefix marks another
# part of the kernel talking, never a heading of our report.
_FOREIGN_PREFIX = re.compile(r"[a-z0-9_.-]+: ")

# Frames that are never the culprit of our own rows (DMA-API, detector,
# dma-owned) nor where the bisection points: reporting machinery,
# sanitizers, helpers, locking, allocators, DMA/USB plumbing, interrupt and
# syscall entry.  (syzkaller's rows skip report_rules.SKIP instead.)

_SKIP_EXACT = frozenset("""
    panic __warn warn_slowpath_fmt __warn_printk report_bug handle_bug
    exc_invalid_op asm_exc_invalid_op do_trap do_error_trap die __die
    __die_body oops_end show_regs show_trace_log_lvl show_stack
    print_report print_address_description end_report start_report
    check_panic_on_warn nmi_cpu_backtrace nmi_trigger_cpumask_backtrace
    exc_general_protection asm_exc_general_protection exc_page_fault
    asm_exc_page_fault page_fault_oops kernelmode_fixup_or_oops
    do_user_addr_fault handle_page_fault __bad_area_nosemaphore
    bad_area_nosemaphore no_context do_kern_addr_fault fixup_exception
    exc_divide_error asm_exc_divide_error
    memcpy memmove memset memcmp memchr memscan memdup_user __memcpy
    __memmove __memset memcpy_erms memcpy_orig
    strcpy strncpy strscpy strlcpy strcat strncat strlcat strlen strnlen
    strcmp strncmp strcasecmp strchr strrchr strnchr strstr strnstr strsep
    kstrdup kstrndup kmemdup kstrdup_const sprintf snprintf vsprintf
    vsnprintf scnprintf vscnprintf kasprintf kvasprintf string pointer
    copy_to_user copy_from_user _copy_to_user _copy_from_user
    __copy_to_user __copy_from_user raw_copy_to_user raw_copy_from_user
    copy_user_generic copy_user_generic_unrolled copy_user_enhanced_fast_string
    rep_movs_alternative check_object_size __check_object_size
    check_heap_object usercopy_abort __might_fault might_fault
    __might_sleep __might_resched might_sleep
    _printk printk vprintk vprintk_emit vprintk_default dev_printk
    __dev_printk _dev_warn _dev_err _dev_info dev_warn dev_err dev_info
    lock_acquire lock_release __lock_acquire lock_acquired lock_contended
    mark_lock validate_chain check_prev_add check_prevs_add
    check_noncircular print_circular_bug print_usage_bug
    mutex_lock mutex_unlock mutex_trylock mutex_lock_nested
    mutex_lock_interruptible mutex_lock_killable down up down_read
    down_write up_read up_write down_interruptible down_killable
    down_trylock down_read_trylock down_write_trylock
    do_raw_spin_lock do_raw_spin_unlock queued_spin_lock_slowpath
    native_queued_spin_lock_slowpath osq_lock osq_unlock
    iput dput insert_work __queue_work queue_work_on queue_delayed_work_on
    __queue_delayed_work lock_timer_base mark_held_locks print_lock
    kfree kvfree kfree_sensitive kmem_cache_free slab_free kmalloc
    kzalloc kcalloc krealloc kvmalloc kvzalloc kvmalloc_node
    kmalloc_trace kmalloc_node_trace kmalloc_large kmalloc_node
    kmem_cache_alloc kmem_cache_alloc_node kmem_cache_alloc_lru
    kmem_cache_alloc_trace kmem_cache_zalloc
    vmalloc vzalloc vfree alloc_pages alloc_pages_node __get_free_pages
    get_zeroed_page free_pages __free_pages
    refcount_warn_saturate __list_add_valid __list_del_entry_valid
    list_add list_del __list_add __list_del_entry
    stack_trace_save arch_stack_walk stack_trace_consume_entry
    trace_hardirqs_on trace_hardirqs_off lockdep_hardirqs_on
    lockdep_hardirqs_on_prepare print_irqtrace_events
    check_unmap check_sync add_dma_entry check_for_stack
    check_for_illegal_area check_sg_segment dma_entry_alloc
    usb_submit_urb usb_kill_urb usb_poison_urb usb_unlink_urb
    usb_start_wait_urb usb_control_msg usb_bulk_msg usb_interrupt_msg
    usb_control_msg_send usb_control_msg_recv usb_giveback_urb_bh
    usb_free_urb usb_alloc_urb usb_kill_anchored_urbs
    do_syscall_64 do_syscall_x64 do_syscall_32_irqs_on do_int80_syscall_32
    __do_fast_syscall_32 do_fast_syscall_32 entry_SYSCALL_64
    entry_SYSCALL_64_after_hwframe entry_SYSENTER_compat_after_hwframe
    entry_INT80_compat syscall_exit_to_user_mode exit_to_user_mode_prepare
    exit_to_user_mode_loop ret_from_fork ret_from_fork_asm kthread
    worker_thread process_one_work process_scheduled_works bh_worker
    workqueue_softirq_action
    smpboot_thread_fn run_ksoftirqd __do_softirq handle_softirqs
    do_softirq __irq_exit_rcu irq_exit_rcu irq_exit __local_bh_enable_ip
    local_bh_enable tasklet_action tasklet_action_common tasklet_hi_action
    call_timer_fn __run_timers run_timer_softirq expire_timers
    __hrtimer_run_queues hrtimer_interrupt hrtimer_run_queues
    handle_irq_event handle_irq_event_percpu __handle_irq_event_percpu
    handle_edge_irq handle_fasteoi_irq handle_level_irq __common_interrupt
    common_interrupt asm_common_interrupt generic_handle_irq
    default_idle default_idle_call do_idle cpu_startup_entry
    start_secondary secondary_startup_64 secondary_startup_64_no_verify
    x86_64_start_kernel x86_64_start_reservations start_kernel
    arch_call_rest_init rest_init kernel_init kernel_init_freeable
    do_one_initcall do_initcalls do_basic_setup
    schedule __schedule schedule_timeout io_schedule context_switch
    __switch_to __switch_to_asm finish_task_switch preempt_schedule
    preempt_schedule_common preempt_schedule_irq preempt_schedule_thunk
""".split())

_SKIP_PREFIXES = (
    "dump_stack", "show_stack", "kasan_", "__kasan_", "__asan_", "asan_",
    "kmsan_", "__msan_", "ubsan_", "__ubsan_", "kfence_", "__kfence_",
    "kcsan_", "__tsan_", "__sanitizer_", "warn_slowpath", "report_bug",
    "print_report", "print_address_description", "lockdep_", "__lockdep_",
    "_raw_spin_", "__raw_spin_", "_raw_read_", "_raw_write_",
    "__raw_read_", "__raw_write_", "raw_spin_", "spin_lock", "spin_unlock",
    "__mutex_", "mutex_lock", "rt_mutex_", "__rt_mutex", "rwsem_", "__down",
    "__up", "down_", "up_", "percpu_down_", "percpu_up_",
    "__memcpy", "__memset", "__memmove", "memcpy_", "memset_", "__str",
    "debug_dma_", "dma_debug_", "dma_map_",
    # the cache-line detector's own helpers (kernel/dma/debug_cacheline.c)
    "cl_report", "cl_check_", "cl_save_stack", "cl_first_seen", "cl_bytes_in_use", "dma_unmap_", "__dma_map_", "__dma_unmap_",
    "dma_direct_", "dma_sync_", "__dma_sync_", "dma_alloc_", "dma_free_",
    "dma_pool_", "iommu_dma_", "swiotlb_", "dmam_",
    "usb_hcd_", "__usb_hcd_",
    "__kmalloc", "__kmem_cache_", "kmem_cache_alloc", "slab_alloc",
    "__slab_alloc", "___slab_alloc", "slab_post_alloc", "kmalloc_",
    "__alloc_pages", "__vmalloc", "kmemleak_", "__kmemleak",
    "__might_", "__sysvec_", "sysvec_", "asm_sysvec_", "asm_exc_",
    "__x86_indirect_thunk", "__x86_return_thunk",
    "__pfx_",
    # Generic library code a bug passes through rather than lives in.
    "kobject_", "sysfs_", "debug_object", "debug_print_object", "debug_check_no_",
    "rb_", "__rb_", "rhashtable_", "__rhashtable_", "refcount_", "__refcount_",
    "kref_", "_atomic_dec_and_lock", "atomic_dec_and_", "perf_trace_", "__seqprop",
    "skb_panic", "skb_over_panic", "skb_under_panic", "copy_from_iter", "copy_to_iter",
    "_copy_from_iter", "_copy_to_iter", "copy_page_from_iter", "copy_page_to_iter",
    "iov_iter_", "__list_", "list_", "hlist_", "__hlist_", "xa_", "xas_", "__xa_",
    "idr_", "ida_",
    # Stall and lockup reporting.
    "rcu_dump_cpu_stacks", "print_cpu_stall", "check_cpu_stall", "rcu_pending",
    "rcu_sched_clock_irq", "update_process_times", "tick_sched", "tick_nohz_",
    "tick_periodic", "tick_handle_periodic", "watchdog_timer_fn", "sched_show_task",
    "show_regs", "dump_cpu_task", "trigger_single_cpu", "trigger_all_cpu",
    "arch_trigger_", "nmi_", "lock_is_held",
    "check_preemption_disabled", "debug_smp_processor_id", "__this_cpu_preempt_check",
    "__schedule_bug", "bad_page", "spin_dump", "spin_bug", "rwlock_bug", "do_raw_",
    # Older kernels' WARN path, fault injection, lockdep internals.
    "fixup_bug", "do_invalid_op", "invalid_op", "warn_alloc", "usercopy_warn",
    "should_fail", "register_lock_class", "look_up_lock_class", "hlock_class",
    "__debug_object", "slab_free", "___might_sleep", "warn_bogus_irq_restore",
    "check_memory_region", "__hwasan_", "hwasan_", "__read_once", "dump_backtrace",
    # printk, string formatting, hex dumps.
    "vprintk", "printk", "hex_string", "string_nocheck", "widen_string",
    "hex_dump", "print_hex_dump", "format_decode",
    # Wait queues, work, timers, kthreads, device model: where a bug is found,
    # not where it is.
    "__wake_up", "wake_up_", "finish_wait", "prepare_to_wait", "mutex_",
    "task_blocks_on_rt_mutex", "flush_work", "__flush_work", "flush_workqueue",
    "__flush_workqueue", "cancel_work", "cancel_delayed_work", "__cancel_work",
    "drain_workqueue", "destroy_workqueue", "kthread_stop", "device_del",
    "device_unregister", "device_remove_file", "device_release", "device_destroy",
    "device_add", "devres_release", "dpm_sysfs_", "put_device", "add_uevent_var",
    "klist_", "kill_fasync",
    # skb, fortify, physical addresses, pages, atomics and bitops, checksums.
    "skb_put", "kfree_skb", "consume_skb", "fortify_panic", "__fortify",
    "__virt_to_phys", "__phys_addr", "alloc_page", "free_unref", "free_large_kmalloc",
    "__set_page_owner", "__free_pages", "free_pages", "memdup_user", "atomic_",
    "atomic64_", "arch_atomic", "raw_atomic", "test_and_", "set_bit", "clear_bit",
    "__set_bit", "__clear_bit", "test_bit", "crc", "__crc", "assertfail",
    "ref_tracker", "__check_heap_object", "cleanup_srcu_struct", "find_lock_entries",
    "drop_nlink", "do_init_module", "simple_copy_to_iter",
)

# Host-controller drivers: plumbing for DMA-API titles only (their own
# WARNINGs keep them as guilty).
_DMA_EXTRA_PREFIXES = (
    "xhci_", "ehci_", "ohci_", "uhci_", "dwc2_", "dwc3_", "musb_",
    "dummy_", "vhci_",
)

# Transport layers that map a buffer on a driver's behalf: the virtio ring,
# the USB core's message helpers, the SCSI midlayer and libata, the block
# layer's mapping helpers.  A DMA-API or detector report (and a sweep site,
# harness.checks.sweep) names the driver that handed them the buffer, as
# syzkaller's titles skip the allocator, so that every virtio or USB driver
# gets its own title rather than one `... in vring_map_one_sg`.  Exact
# names, or prefixes ending in '_'.
TRANSPORT_FRAMES = (
    # virtio ring (drivers/virtio/virtio_ring.c)
    "vring_", "virtqueue_", "detach_buf_split", "detach_buf_packed",
    # USB core (drivers/usb/core/message.c, urb.c)
    "usb_submit_urb", "usb_start_wait_urb", "usb_internal_control_msg", "usb_control_msg",
    "usb_control_msg_send", "usb_control_msg_recv", "usb_bulk_msg", "usb_interrupt_msg",
    "usb_sg_init", "usb_sg_wait", "usb_get_descriptor", "usb_get_string", "usb_string_sub",
    # SCSI midlayer and libata
    "scsi_dma_map", "scsi_queue_rq", "scsi_dispatch_cmd", "scsi_execute_cmd", "__scsi_execute",
    "scsi_execute_req", "scsi_alloc_sgtables", "scsi_init_io", "ata_qc_issue", "ata_sg_setup",
    "ata_exec_internal", "ata_exec_internal_sg", "ata_scsi_translate", "ata_scsi_queuecmd",
    "__ata_scsi_queuecmd",
    # block layer
    "blk_rq_map_sg", "__blk_rq_map_sg", "blk_mq_", "__blk_mq_", "blk_execute_rq",
    "blk_rq_map_kern", "submit_bio", "__submit_bio", "submit_bio_noacct",
    # page pools map pages for network drivers
    "page_pool_", "__page_pool_",
)
_TRANSPORT_EXACT = frozenset(f for f in TRANSPORT_FRAMES if not f.endswith("_"))
_TRANSPORT_PREFIXES = tuple(f for f in TRANSPORT_FRAMES if f.endswith("_"))


def is_transport(name: str) -> bool:
    """Is this frame a transport layer mapping a driver's buffer (TRANSPORT_FRAMES)?"""
    return name in _TRANSPORT_EXACT or name.startswith(_TRANSPORT_PREFIXES)


def dma_site_frame(frames: Iterable[str]) -> Optional[str]:
    """The driver function of a mapping's stack: the first frame that is
    neither reporting machinery, a host-controller driver nor a transport."""
    return _first_unskipped(frames, _DMA_EXTRA_PREFIXES, transport=True)


_skip_cache: dict[str, bool] = {}


def is_machinery(name: str) -> bool:
    """Is this frame reporting machinery or DMA/USB/locking plumbing, the
    frames our own rows' guilty frame is never picked from (and the
    bisection does not point at)?"""
    r = _skip_cache.get(name)
    if r is None:
        r = name in _SKIP_EXACT or name.startswith(_SKIP_PREFIXES)
        if len(_skip_cache) < 65536:
            _skip_cache[name] = r
    return r


def _first_unskipped(frames: Iterable[str], extra: tuple[str, ...] = (),
                     transport: bool = False) -> Optional[str]:
    for f in frames:
        if is_machinery(f):
            continue
        if extra and f.startswith(extra):
            continue
        if transport and is_transport(f):
            continue
        return f
    return None




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
# The parser

_REG_PREFIXES = (
    "RIP:", "Code:", "RSP:", "RAX:", "RBX:", "RDX:", "RBP:", "R08:", "R10:",
    "R13:", "FS:", "CS:", "CR0:", "CR2:", "DR0:", "DR3:", "PKRU:", "EIP:",
    "EAX:", "ESI:", "DS:", "CR4:", "Kernel Offset:", "Modules linked in:",
    "Dumping ftrace buffer", "---[ end Kernel panic",
)

_AUX_SECTIONS = (
    "Allocated by task", "Freed by task", "Mapped at", "Uninit was created at",
    "Uninit was stored to memory at", "Local variable",
    "Last potentially related work creation",
    "Second to last potentially related work creation",
)
_NOT_PRIMARY = frozenset(["lockdep chain", "tail", "?"])
_FEED_FIRST = frozenset("-RWNEIpP")
_RIP_PREFIXES = ("RIP: ", "EIP: ", "IP: ", "pc : ", "PC is at ")
_MAX_REPORT_LINES = 2000  # a report that never ends stops swallowing the log here
_PRE_LINE_DISTANCE = 5  # a cut-here/banner line belongs to a header this close
_KERNEL_LINE_RE = re.compile(r"(?:<\d+>)?\[ *\d+\.\d+\]")
_CONTINUATION = re.compile("|".join(re.escape(p) for p in rr.CONTINUATIONS))
_PEEK_FRAME_RE = re.compile(r"\s++(?:\[<[0-9a-fx]++>\]\s++)?(?:\? )?[A-Za-z_$][\w.$]*+\+0x")
_REPLAY = "** replaying previous printk message **"
_FIRMWARE_RE = re.compile(r"SeaBIOS|Decompressing Linux|Booting from ")


class _Builder:
    """Accumulates the lines of one report until it ends."""

    __slots__ = (
        "kind", "rule", "header", "header_index", "header_func", "access", "message", "raw",
        "first_line", "last_line", "ts", "ctx", "sections", "cur",
        "cur_frames", "cur_texts", "pending_rip", "pending_rip_text", "end_trace",
        "tail", "task_open", "stack_started", "nmi_sent", "nmi_seen", "warn_header",
        "closed", "panic_msg", "rip_first", "sep", "stall", "irq_seen",
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
        # A __warn() header ("WARNING: CPU: 0 PID: 1 at file:line f+0x..").
        self.warn_header = header is _WARNING and self.end_trace
        self.closed = False
        self.panic_msg: Optional[str] = None
        self.rip_first: set[int] = set()  # ids of sections that start with a RIP

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


class _Parser:
    def __init__(self, lines: list[str]) -> None:
        self.lines = lines  # the whole log, for lines before a header
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
                ts2, ctx2, body2 = _split_prefix(self.lines[ln - 1])
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
        before the firmware's first words?"""
        if self.boot_scan[1] is None:
            start, _, output = self.boot_scan
            for i in range(start, lineno - 1):
                line = self.lines[i]
                if _KERNEL_LINE_RE.match(line):
                    self.boot_scan = (i, True, output)
                    break
                if _FIRMWARE_RE.search(line):
                    self.boot_scan = (i, output, output)
                    break
                output = output or bool(line.strip())
            else:
                self.boot_scan = (max(start, lineno - 1), None, output)
        return bool(self.boot_scan[1])

    def frame_follows(self, lineno: int) -> bool:
        """Is one of the next two lines a stack frame?"""
        for line in self.lines[lineno:lineno + 2]:
            if _PEEK_FRAME_RE.match(_split_prefix(line)[2]):
                return True
        return False

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
        if lineno < len(self.lines) and _REPLAY in self.lines[lineno]:
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
                            b.nmi_sent and not b.nmi_seen) and not (b.stall and not b.irq_seen):
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
            if body.startswith("Mapped at:"):
                b.new_section("Mapped at")
                return
            if body.startswith(_REG_PREFIXES):
                return
            # Anything else ends the tail: not ours.
            b.raw.pop()
            b.last_line = prev_last
            self.close(b)
            return
        if not b.task_open and b.stack_started and not b.end_trace and not b.sep and b.cur_frames \
                and b.sections[b.cur][0] in ("Call Trace", "backtrace", "NMI backtrace") \
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
                b.new_section("Call Trace")
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
                    if b.end_trace or b.message is not None:
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
            if body.startswith(_RIP_PREFIXES):
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
        self.done.sort(key=lambda r: (r.first_line))
        return self.done


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
    if _JOURNAL_RE.search(text, 0, 8192):
        # journalctl -k: "Dec 03 07:00:00 host kernel: msg" (or ISO dates).
        text = _JOURNAL_RE.sub("", text)
    lines = text.split("\n")
    p = _Parser(lines)
    anywhere = _HEADER_LITERALS
    odd = _ODD_STARTS
    heads = _HEADS
    slow_heads = _START_HEADS | {"[ "}
    slow_starts = _START_PREFIXES + ("[ ",)
    candidate = _is_candidate
    open_ = p.open
    split_prefix = _split_prefix
    feed = p.feed
    for lineno, line in enumerate(lines, 1):
        if not open_ and p.nmi_sink is None:
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
    return p.finish()


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


def to_json(reports: list[Report], source: Optional[str] = None) -> dict:
    return {
        "version": JSON_VERSION,
        "source": source,
        "signatures": [s.to_json() for s in fold(reports)],
        "reports": [r.to_json() for r in reports],
    }


def format_text(reports: list[Report]) -> str:
    sigs = fold(reports)
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
    out.append(f"{len(reports)} report(s), {len(sigs)} signature(s)")
    return "\n".join(out) + "\n"


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
