"""Kernel console log parser: console text in, kernel reports and signatures out.

This module has one concern: turning a console log (a serial console capture,
a saved ``dmesg``, a CI log) into structured kernel reports, and folding
identical reports into signatures.  It knows nothing about QEMU, builds or
diffs.

Recognised reports (``Report.kind``):

========== ================================================================
kind       what starts it (after the timestamp and caller tag are stripped)
========== ================================================================
KASAN      ``BUG: KASAN: <type> in f``
KMSAN      ``BUG: KMSAN: <type> in f``
KFENCE     ``BUG: KFENCE: <type> in f``
KCSAN      ``BUG: KCSAN: data-race in f / g`` (title kept as printed)
UBSAN      ``UBSAN: <type> in file:line:col``
DMA-API    ``DMA-API: <driver> <device>: <message>`` (stock dma-debug), or a
           ``WARNING`` at ``kernel/dma/debug.c``
DETECTOR   a ``DMA-API:`` report whose message is not one of dma-debug's own
           messages (the cache-line-sharing detector), and KASAN reports of
           bug type ``dma-owned``
WARNING    ``WARNING: CPU: n PID: n at file:line f+0x..`` (``__warn``)
BUG        ``BUG: unable to handle page fault``, ``BUG: kernel NULL pointer
           dereference`` (arm64: ``Unable to handle kernel ...``), ``kernel
           BUG at``, ``invalid opcode``, ``Oops:``, and other ``BUG: ...``
           lines (sleeping function called from invalid context, scheduling
           while atomic, ...; title without addresses and counters)
GPF        ``general protection fault`` (also 6.9+ ``Oops: general ...``)
LOCKDEP    lockdep's ``WARNING: possible circular locking dependency
           detected`` and friends, ``WARNING: suspicious RCU usage``, ...
HUNG       ``INFO: task <comm>:<pid> blocked for more than N seconds.``
RCU        ``rcu: INFO: rcu_preempt self-detected stall on CPU`` and
           ``... detected stalls on CPUs/tasks:``
SOFTLOCKUP ``watchdog: BUG: soft lockup - CPU#n stuck for Ns!``
KMEMLEAK   ``unreferenced object 0x... (size n):`` (kmemleak) and
           syzkaller's ``BUG: memory leak``
PANIC      ``Kernel panic - not syncing: <message>``, unless it comes inside a
           report still waiting for its stack (panic_on_warn): then the
           panic's stack is that report's, and no PANIC report is made
========== ================================================================

Titles follow syzkaller's conventions (``KASAN: use-after-free Read in f``,
``WARNING in f``, ``BUG: unable to handle page fault in f``, ``possible
deadlock in f``, ``INFO: task hung in f``, ...).  DMA-API and detector
reports are titled ``DMA-API: <short message> in f`` where the short message
is dma-debug's message without its bracketed details, numbers replaced by
``NUM`` and addresses by ``ADDR``.  When no frame at all could be found (a
report truncated right after its header) the title has no `` in f`` part.

Guilty frame: the first frame, in the order that matters for the kind (the
function named in the header, the ``RIP`` function, then the call trace), that
is not reporting machinery (dump_stack, kasan_*, __warn, report_bug, ...),
a mem*/str*/copy helper, a locking primitive, an allocator function, DMA or
USB core plumbing (debug_dma_*, dma_map_*, usb_hcd_*, usb_submit_urb, ...),
or interrupt/softirq/syscall entry code.  Syscall wrapper prefixes are
stripped from the guilty frame (``__x64_sys_ioctl`` reads ``ioctl``).  Hung
tasks, RCU stalls and soft lockups use the special rules described at
:func:`_hung_frame` and :func:`_stall_frame`.  For DMA-API reports whose call
trace is all plumbing (the USB giveback path), the ``Mapped at:`` stack that
dma-debug prints after the warning is used.

Where a report ends: sanitizer reports at their closing ``=====`` line,
``__warn``/oops reports at ``---[ end trace ... ]---`` (plus the register dump
and dma-debug's ``Mapped at:`` stack that follow it), panics at ``---[ end
Kernel panic``, the others (lockdep, hung task, stalls, kmemleak,
``dump_stack()`` reports) at the ``</TASK>`` closing their stack, or, on
kernels without ``<TASK>`` markers, at the first line after the stack that
is not a frame.  A report still open when the log ends, the machine reboots
(``Linux version``, ``Booting the kernel``) or another report starts in the
same context is ``truncated``; it keeps what was seen.

Parsing handles logs with or without ``[ 12.345678]`` timestamps (or ``dmesg
-T`` wall-clock stamps, or ``journalctl -k`` prefixes), with or
without ``[    T1]`` / ``[  C0]`` caller tags (CONFIG_PRINTK_CALLER), syslog
``<4>`` levels, CRLF line ends, a login prompt glued before a kernel line,
userspace output inside a timestamped report (lines without a timestamp are
left out), and several CPUs interleaving their output: with caller tags each
report only takes the lines of its own context (an RCU stall also takes the
NMI backtrace of the CPU it interrupted); without caller tags other lines
land in ``raw`` but do not disturb titles or stacks.

Limits: without caller tags two reports printed at the same time cannot be
separated (the second header ends the first, marked truncated); pre-4.x
bracketed lockdep banners (``[ INFO: ... ]``) and arm32/riscv stack formats
are not recognised.

Command line (wired as ``dmaharness reports`` by the CLI)::

    dmaharness reports <console.log> [--json]

Exit codes: 0 the log was parsed (whether or not it holds reports),
2 usage error or the log cannot be read.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from dataclasses import dataclass, field
from typing import Iterable, Optional

JSON_VERSION = 1

# --------------------------------------------------------------------------
# Data model


@dataclass
class Report:
    """One kernel report found in a console log.

    kind          one of the kinds in the module docstring
    title         syzkaller-style title, the folding key
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

    def to_json(self) -> dict:
        return {
            "kind": self.kind,
            "title": self.title,
            "guilty_frame": self.guilty_frame,
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


@dataclass
class Signature:
    """Identical reports (same title) folded together."""

    title: str
    kind: str
    count: int
    first: Report
    reports: list[Report] = field(default_factory=list)

    def to_json(self) -> dict:
        return {
            "title": self.title,
            "kind": self.kind,
            "count": self.count,
            "guilty_frame": self.first.guilty_frame,
            "first_line": self.first.first_line,
            "first_timestamp": self.first.timestamp,
            "lines": [r.first_line for r in self.reports],
        }


# --------------------------------------------------------------------------
# Line prefixes: syslog level, timestamp, caller tag

_DIGITS = frozenset("0123456789")
_JOURNAL_RE = re.compile(
    r"^(?:[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d|\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\S*) \S+ kernel: ",
    re.M)


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
_AT_RE = re.compile(r", at: (?:\[<[0-9a-f]+>\] )?([A-Za-z_$][\w.$]*+)\+0x")

_STACK_MARKERS = frozenset(
    ["<TASK>", "</TASK>", "<IRQ>", "</IRQ>", "<NMI>", "</NMI>", "<SOFTIRQ>",
     "</SOFTIRQ>", "<EOI>", "<EOE>"]
)
_INTERRUPT_FRAMES = frozenset(
    ["asm_sysvec_apic_timer_interrupt", "apic_timer_interrupt",
     "sysvec_apic_timer_interrupt", "asm_exc_nmi", "asm_common_interrupt"]
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


# Frames that are never the culprit: reporting machinery, sanitizers,
# helpers, locking, allocators, DMA/USB plumbing, interrupt and syscall entry.
# "clocksource: ...:", "tsc: ...:": a one-word subsystem prefix marks another
# part of the kernel talking, never a heading of our report.
_FOREIGN_PREFIX = re.compile(r"[a-z0-9_.-]+: ")

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

_skip_cache: dict[str, bool] = {}


def is_machinery(name: str) -> bool:
    """Is this frame reporting machinery or DMA/USB/locking plumbing, the
    frames a guilty frame is never picked from?"""
    r = _skip_cache.get(name)
    if r is None:
        r = name in _SKIP_EXACT or name.startswith(_SKIP_PREFIXES)
        if len(_skip_cache) < 65536:
            _skip_cache[name] = r
    return r


def _first_unskipped(frames: Iterable[str], extra: tuple[str, ...] = ()) -> Optional[str]:
    for f in frames:
        if is_machinery(f):
            continue
        if extra and f.startswith(extra):
            continue
        return f
    return None


_HUNG_SUBSTRINGS = (
    "sched", "_lock", "_slowlock", "down", "rwsem", "completion", "kthread",
    "wait", "synchronize", "context_switch", "__switch_to",
    "cancel_delayed_work", "rcu_barrier", "flush_work", "flush_workqueue",
)
_HUNG_ANCHORS = (
    ("synchronize_rcu", "synchronize_rcu"), ("synchronize_srcu", "synchronize_rcu"),
    ("synchronize_net", "synchronize_rcu"), ("rtnl_lock", "rtnl_lock"),
)


def _hung_frame(frames: list[str]) -> Optional[str]:
    """Hung tasks block in random victims: group hangs on synchronize_rcu and
    rtnl_lock, otherwise take the first frame that is not waiting machinery."""
    for f in frames:
        for anchor, name in _HUNG_ANCHORS:
            if anchor in f:
                return name
    for f in frames:
        if is_machinery(f) or any(s in f for s in _HUNG_SUBSTRINGS):
            continue
        return f
    return None


_STALL_ANCHORS = frozenset("""
    vfs_ioctl vfs_read vfs_write do_syscall_64 process_one_work kthread
    ret_from_fork worker_thread smpboot_thread_fn call_timer_fn
    __do_softirq handle_softirqs tasklet_action_common do_idle
    cpu_startup_entry
""".split())


def _stall_frame(frames: list[str]) -> Optional[str]:
    """Stalls and lockups catch a CPU at a random point of a loop.  Use the
    interrupted stack (after the last interrupt boundary) and take its first
    frame that is not machinery nor RCU/watchdog code."""
    for f in frames:
        if f in _STALL_ANCHORS:
            break
        if is_machinery(f) or f.startswith(("rcu_", "__rcu_", "watchdog")):
            continue
        return f
    return None


# --------------------------------------------------------------------------
# Header classification

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


def _dma_short(msg: str) -> str:
    cut = msg.find("[")
    if cut >= 0:
        msg = msg[:cut]
    msg = _normalize_text(msg).rstrip(" .,:;!")
    return msg or "unknown"


_WARN_CPU_RE = re.compile(r"WARNING: CPU: \d+ PID: \d+ at (\S+) (.*)")
_WARN_AT_RE = re.compile(r"WARNING: (?:\[.*?\] )?(?:at )?(\S+:\d+)(?: at)? (.*)")

_LOCKDEP_WARNINGS = (
    ("WARNING: possible circular locking dependency detected", "possible deadlock"),
    ("WARNING: possible recursive locking detected", "possible deadlock"),
    ("WARNING: possible irq lock inversion dependency detected", "possible deadlock"),
    ("WARNING: inconsistent lock state", "inconsistent lock state"),
    ("WARNING: suspicious RCU usage", "WARNING: suspicious RCU usage"),
    ("WARNING: bad unlock balance detected!", "WARNING: bad unlock balance"),
    ("WARNING: held lock freed!", "WARNING: held lock freed"),
    ("WARNING: lock held when returning to user space!",
     "WARNING: lock held when returning to user space"),
    ("WARNING: Nested lock was not taken", "WARNING: nested lock was not taken"),
    ("INFO: possible circular locking dependency detected", "possible deadlock"),
    ("INFO: possible recursive locking detected", "possible deadlock"),
    ("INFO: possible irq lock inversion dependency detected", "possible deadlock"),
    ("INFO: inconsistent lock state", "inconsistent lock state"),
    ("INFO: suspicious RCU usage", "INFO: suspicious RCU usage"),
    ("INFO: trying to register non-static key", "INFO: trying to register non-static key"),
    ("BUG: held lock freed!", "BUG: held lock freed"),
    ("BUG: bad unlock balance detected!", "BUG: bad unlock balance"),
    ("BUG: lock held when returning to user space!",
     "BUG: lock held when returning to user space"),
    ("BUG: Invalid wait context", "BUG: Invalid wait context"),
)
_LOCK_ORDER_RE = re.compile(r"WARNING: \S+-safe -> \S+-unsafe lock order detected")

_SEP_KINDS = frozenset(["KASAN", "KMSAN", "KFENCE", "KCSAN", "UBSAN", "DETECTOR"])
_OOPS_TITLES = frozenset([
    "BUG: unable to handle page fault", "BUG: kernel NULL pointer dereference",
    "kernel BUG", "invalid opcode", "Oops", "divide error",
])

# First characters of everything the main loop must look at closely.
_START_PREFIXES = (
    "BUG: ", "WARNING: ", "INFO: ", "UBSAN: ", "DMA-API: ", "Kernel panic - not syncing",
    "general protection fault", "kernel BUG at ", "invalid opcode: ", "Oops: ",
    "unreferenced object 0x", "rcu: INFO: ", "watchdog: BUG: soft lockup",
    "divide error: ", "------------[ cut here ]", "=====", "Linux version ",
    "Booting the kernel", "Unable to handle kernel ", "NMI watchdog: BUG: soft lockup",
)

_MAX_REPORT_LINES = 2000  # a report that never ends stops swallowing the log here
_PRE_LINE_DISTANCE = 5  # a cut-here/banner line belongs to a header this close


class _Builder:
    """Accumulates the lines of one report until it ends."""

    __slots__ = (
        "kind", "base_title", "header_func", "access", "message", "raw",
        "first_line", "ts", "ctx", "sections", "cur", "sanitizer",
        "cur_frames", "cur_texts", "pending_rip", "pending_rip_text", "end_trace",
        "tail", "task_open",
        "stack_started", "at_func", "nmi_sent", "nmi_seen", "warn_header",
        "closed", "panic_msg", "rip_first", "sep",
    )

    def __init__(self, kind: str, base_title: str, lineno: int, ts: Optional[str],
                 ctx: Optional[str]) -> None:
        self.kind = kind
        self.base_title = base_title
        self.header_func: Optional[str] = None
        self.access: Optional[str] = None
        self.message: Optional[str] = None
        self.raw: list[str] = []
        self.first_line = lineno
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
        self.end_trace = False   # ends at ---[ end trace ]---
        self.tail = False        # after end trace: registers, Mapped at:
        self.task_open = False   # saw <TASK>/<IRQ> markers in a stack
        self.stack_started = False
        self.at_func: Optional[str] = None
        self.nmi_sent = False
        self.nmi_seen = False
        self.warn_header = False
        self.closed = False
        self.panic_msg: Optional[str] = None
        self.rip_first: set[int] = set()  # ids of sections that start with a RIP
        self.sep = kind in _SEP_KINDS  # ends at a ===== line (sanitizers)
        # "KASAN"/"KMSAN"/"KFENCE" when the header is a sanitizer's: titles
        # read "<sanitizer>: <bug type> [Read|Write]".
        self.sanitizer: Optional[str] = None

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


def _after_boundary(frames: list[str]) -> list[str]:
    cut = 0
    for i, f in enumerate(frames):
        if f[:1] == "|" or f in _INTERRUPT_FRAMES:
            cut = i + 1
    return [f for f in frames[cut:] if f[:1] != "|"]


def _finish(b: _Builder, truncated: bool) -> Report:
    primary, texts = b.primary()
    stack = _clean_frames(primary)
    stack_lines = [_frame_text(t) for f, t in zip(primary, texts) if f[:1] != "|"]
    kind = b.kind
    guilty: Optional[str] = None
    if kind in ("KASAN", "KMSAN", "KFENCE", "WARNING", "DMA-API", "DETECTOR"):
        cands = ([b.header_func] if b.header_func else []) + stack
        extra = _DMA_EXTRA_PREFIXES if kind in ("DMA-API", "DETECTOR") and b.message is not None else ()
        guilty = _first_unskipped(cands, extra)
        if guilty is None and kind in ("DMA-API", "DETECTOR"):
            for name, fr, _ in b.sections:
                if name == "Mapped at":
                    guilty = _first_unskipped(fr, extra)
                    break
    elif kind == "LOCKDEP":
        cands = ([b.at_func] if b.at_func else []) + stack
        guilty = _first_unskipped(cands)
    elif kind == "HUNG":
        guilty = _hung_frame(stack)
    elif kind in ("RCU", "SOFTLOCKUP"):
        if id(primary) in b.rip_first:
            # show_regs() style: RIP and the stack of the interrupted code.
            guilty = _stall_frame(stack)
        else:
            # dump_stack() style: the interrupted code is after the interrupt.
            guilty = _stall_frame(_after_boundary(primary))
    else:
        guilty = _first_unskipped(stack)
    if guilty is None:
        # Everything was machinery: fall back to the first frame we have.
        for f in ([b.header_func] if b.header_func else []) + stack:
            guilty = f
            break
    if guilty is not None:
        guilty = _strip_syscall(guilty)

    # Title.
    base = b.base_title
    if b.sanitizer == "KASAN":
        base = "KASAN: " + b.base_title + (" " + b.access if b.access else "")
    elif b.sanitizer is not None:
        base = b.sanitizer + ": " + b.base_title
    elif b.message is not None and kind in ("DMA-API", "DETECTOR"):
        base = "DMA-API: " + _dma_short(b.message)
    if kind == "PANIC" or kind == "KCSAN":
        title = base  # the header names its functions already
    elif guilty is None:
        title = base
    else:
        title = base + " in " + guilty

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
        aux_stacks=aux, truncated=truncated,
    )


# --------------------------------------------------------------------------
# Header recognition


def _classify(body: str) -> Optional[tuple[str, str, Optional[str]]]:
    """Return (kind, base title, header function) for a report header line,
    "pre" kinds for lines that precede a header, or None."""
    c = body[0]
    if c == "B":
        if body.startswith("Booting the kernel"):
            return "REBOOT", "", None
        if body.startswith("BUG: KASAN: "):
            rest = body[12:]
            btype, _, where = rest.partition(" in ")
            if not where:
                btype = rest.split(" ", 1)[0]
            m = _HEADER_FUNC_RE.match(where) if where else None
            func = _norm_func(m.group(1)) if m else None
            btype = btype.strip()
            if btype in ("double-free or invalid-free", "double-free", "invalid-free"):
                return "KASAN", "invalid-free", func
            kind = "DETECTOR" if btype == "dma-owned" else "KASAN"
            return kind, btype, func
        if body.startswith(("BUG: KMSAN: ", "BUG: KFENCE: ")):
            kind = "KMSAN" if body[5] == "K" and body[6] == "M" else "KFENCE"
            rest = body[body.index(": ", 5) + 2:]
            btype, _, where = rest.partition(" in ")
            m = _HEADER_FUNC_RE.match(where) if where else None
            return kind, btype.strip(), _norm_func(m.group(1)) if m else None
        if body.startswith(("BUG: unable to handle page fault", "BUG: unable to handle kernel paging request")):
            return "BUG", "BUG: unable to handle page fault", None
        if body.startswith(("BUG: kernel NULL pointer dereference",
                            "BUG: unable to handle kernel NULL pointer dereference")):
            return "BUG", "BUG: kernel NULL pointer dereference", None
        if body.startswith("BUG: soft lockup"):
            return "SOFTLOCKUP", "BUG: soft lockup", None
        if body.startswith("BUG: memory leak"):
            return "KMEMLEAK", "memory leak", None
        for prefix, title in _LOCKDEP_WARNINGS:
            if body.startswith(prefix):
                return "LOCKDEP", title, None
        if body.startswith("BUG: using ") and " in preemptible " in body:
            return "BUG", body[:body.index(" in preemptible ")] + " in preemptible code", None
        if body.endswith("still has locks held!"):
            return "LOCKDEP", "BUG: still has locks held", None
        if body.startswith("BUG: KCSAN: "):
            return "KCSAN", body[12:].strip(), None
        if body.startswith("BUG: "):
            text = _bug_text(body[5:])
            if not text:
                return None
            return "BUG", "BUG: " + text, None
        return None
    if c == "W":
        m = _WARN_CPU_RE.match(body) or (" at " in body and _WARN_AT_RE.match(body))
        if m:
            mf = _HEADER_FUNC_RE.search(m.group(2))
            func = _norm_func(mf.group(1)) if mf else None
            kind = "DMA-API" if m.group(1).startswith("kernel/dma/debug.c") else "WARNING"
            return kind, "WARNING", func
        for prefix, title in _LOCKDEP_WARNINGS:
            if body.startswith(prefix):
                return "LOCKDEP", title, None
        if _LOCK_ORDER_RE.match(body):
            return "LOCKDEP", "possible deadlock", None
        if body.endswith("still has locks held!"):
            return "LOCKDEP", "WARNING: still has locks held", None
        return None
    if c == "I":
        if body.startswith("INFO: task ") and " blocked " in body and " for more than " in body:
            return "HUNG", "INFO: task hung", None
        if body.startswith("INFO: rcu_") and ("detected stall" in body or "detected expedited stall" in body):
            return "RCU", "INFO: rcu detected stall", None
        for prefix, title in _LOCKDEP_WARNINGS:
            if body.startswith(prefix):
                return "LOCKDEP", title, None
        return None
    if c == "r":
        if body.startswith("rcu: INFO: "):
            return _classify(body[5:])
        return None
    if c == "w":
        if body.startswith("watchdog: BUG: soft lockup"):
            return "SOFTLOCKUP", "BUG: soft lockup", None
        return None
    if c == "U":
        if body.startswith("Unable to handle kernel NULL pointer dereference"):
            return "BUG", "BUG: kernel NULL pointer dereference", None
        if body.startswith("Unable to handle kernel "):  # arm64
            return "BUG", "BUG: unable to handle page fault", None
        if body.startswith("UBSAN: "):
            rest = body[7:]
            if rest.startswith("Undefined behaviour in"):
                return "UBSAN", "UBSAN: undefined-behaviour", None
            btype = rest.split(" in ", 1)[0].strip()
            return "UBSAN", "UBSAN: " + btype, None
        return None
    if c == "D":
        if body.startswith("DMA-API: "):
            return "DMA-MSG", body, None
        return None
    if c == "K":
        if body.startswith("Kernel panic - not syncing"):
            return "PANIC", "kernel panic", None
        return None
    if c == "L":
        if body.startswith("Linux version "):
            return "REBOOT", "", None
        return None
    if c == "N":
        if body.startswith("NMI watchdog: BUG: soft lockup"):
            return "SOFTLOCKUP", "BUG: soft lockup", None
        return None
    if c == "g":
        if body.startswith("general protection fault") and " ip:" not in body:
            return "GPF", "general protection fault", None
        return None
    if c == "O":
        if body.startswith("Oops: general protection fault"):
            return "GPF", "general protection fault", None
        if body.startswith("Oops: invalid opcode"):
            return "OOPS", "invalid opcode", None
        if body.startswith("Oops: "):
            return "OOPS", "Oops", None
        return None
    if c == "k":
        if body.startswith("kernel BUG at "):
            return "BUG", "kernel BUG", None
        return None
    if c == "i":
        if body.startswith("invalid opcode: "):
            return "OOPS", "invalid opcode", None
        return None
    if c == "d":
        if body.startswith("divide error: "):
            return "OOPS", "divide error", None
        return None
    if c == "u":
        if body.startswith("unreferenced object 0x"):
            return "KMEMLEAK", "memory leak", None
        return None
    if c == "-":
        return "PRE", "", None
    if c == "=":
        if body.startswith("====================") and body.strip("=") == "":
            return "SEP", "", None
        return None
    return None


_BUG_TEXT_CUTS = (" - ", ", ", ": ", " at ", " for ", " in process ", " on CPU#", " [")
_BUG_TEXT_NOISE = frozenset(":{(=#[")


def _bug_text(text: str) -> str:
    """'Bad rss-counter state mm:000 idx:1 val:2' -> 'Bad rss-counter state'."""
    for sep in _BUG_TEXT_CUTS:
        i = text.find(sep)
        if i > 0:
            text = text[:i]
    words = [w for w in text.split()
             if not (_BUG_TEXT_NOISE.intersection(w) or w[0].isdigit())]
    return " ".join(words).rstrip("!.:")


def _panic_title(body: str) -> tuple[str, str]:
    msg = body.partition(": ")[2] if ": " in body else ""
    msg = msg.strip()
    if "panic_on_warn set" in msg:
        short = "panic_on_warn set"
    else:
        short = msg
        for cut in (" exitcode=", " [", " -- ", " --- ", " in: "):
            i = short.find(cut)
            if i > 0:
                short = short[:i]
        short = _normalize_text(short).rstrip(" .!")
    return "kernel panic: " + (short or "unknown"), msg


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

class _Parser:
    def __init__(self, lines: list[str]) -> None:
        self.lines = lines  # the whole log, for lines before a header
        self.open: dict[Optional[str], _Builder] = {}
        self.done: list[Report] = []
        # ctx -> (lineno, body) of the last cut-here / "=====" banner line
        self.pre: dict[Optional[str], tuple[int, str]] = {}
        self.nmi_sink: Optional[_Builder] = None

    def close(self, b: _Builder, truncated: bool = False) -> None:
        if b.closed:
            return
        b.closed = True
        if self.open.get(b.ctx) is b:
            del self.open[b.ctx]
        if self.nmi_sink is b:
            self.nmi_sink = None
        self.done.append(_finish(b, truncated))

    def start(self, kind: str, title: str, func: Optional[str], body: str, lineno: int,
              ts: Optional[str], ctx: Optional[str]) -> _Builder:
        b = _Builder(kind, title, lineno, ts, ctx)
        b.header_func = func
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
                    if b.message is None and kind == "WARNING":
                        b.message = body2
        b.raw.append(body)
        if body.startswith(("BUG: KASAN: ", "BUG: KMSAN: ", "BUG: KFENCE: ", "BUG: KCSAN: ")):
            b.sanitizer = body[5:body.index(":", 5)]
        if kind in ("BUG", "GPF", "OOPS", "WARNING", "DMA-API") and (
                kind != "BUG" or title in _OOPS_TITLES):
            b.end_trace = True
        if kind == "OOPS":
            b.kind = "BUG"
        if kind == "DMA-API":
            b.warn_header = True
        if kind == "WARNING":
            b.warn_header = True
        if kind == "PANIC":
            b.base_title, b.panic_msg = _panic_title(body)
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
                return

    def header(self, cls: tuple[str, str, Optional[str]], body: str, lineno: int,
               ts: Optional[str], ctx: Optional[str]) -> None:
        kind, title, func = cls
        cur = self.open.get(ctx)
        if kind == "SEP":
            if cur is not None and not cur.tail and cur.sep:
                cur.raw.append(body)
                self.close(cur)
                return
            self.pre[ctx] = (lineno, body)
            if cur is not None:
                self.feed(cur, body)
            return
        if kind == "PRE":
            if body.startswith("------------[ cut here ]"):
                self.pre[ctx] = (lineno, body)
            if cur is not None:
                self.feed(cur, body)
            return
        if kind == "DMA-MSG":
            m = _DMA_DEV_RE.match(body)
            msg = m.group(3) if m else body[9:]
            # WARNING header came first (__warn printing args after it).
            if (cur is not None and not cur.tail and cur.message is None and cur.warn_header
                    and cur.kind in ("WARNING", "DMA-API") and len(cur.raw) <= 3):
                cur.raw.append(body)
                cur.message = msg
                cur.kind = _dma_kind(msg)
                return
            if (m is not None and cur is not None and cur.message is not None
                    and not cur.tail and not cur.stack_started and len(cur.raw) <= 8
                    and cur.raw[-1].startswith(body[:m.end(2) + 1])):
                # A message printed over several "DMA-API: drv dev: ..." lines.
                cur.raw.append(body)
                return
            pre = self.pre.get(ctx)
            near_pre = pre is not None and lineno - pre[0] <= 1
            if m is None and not near_pre:
                # "DMA-API: preallocated 65536 debug entries" and friends.
                if cur is not None:
                    self.feed(cur, body)
                return
            if cur is not None:
                self.unfeed_pre(cur, lineno)
                self.close(cur, not _complete(cur))
            b = self.start(_dma_kind(msg), "WARNING", None, body, lineno, ts, ctx)
            b.message = msg
            b.end_trace = False   # until a WARNING header joins it
            b.warn_header = False
            b.sep = False
            return
        if kind == "DMA-API" or kind == "WARNING":
            if (cur is not None and not cur.tail and cur.message is not None
                    and not cur.warn_header and not cur.stack_started and len(cur.raw) <= 10):
                # x86: __warn_printk printed the DMA-API message first.
                cur.raw.append(body)
                cur.warn_header = True
                cur.end_trace = True
                cur.header_func = func
                return
        if kind == "PANIC" and cur is not None and not cur.tail and not cur.sep \
                and not cur.stack_started and cur.pending_rip is None and cur.kind != "PANIC":
            # panic_on_warn and friends: the panic's stack is the report's.
            cur.raw.append(body)
            cur.panic_msg = _panic_title(body)[1]
            return
        if kind == "OOPS" and cur is not None and not cur.tail and cur.kind in ("BUG", "GPF") \
                and cur.end_trace and len(cur.raw) <= 8:
            cur.raw.append(body)
            return
        if kind == "KMEMLEAK" and title == "memory leak" and body.startswith("unreferenced") \
                and cur is not None and cur.kind == "KMEMLEAK" and not cur.raw[-1].startswith(" ") \
                and cur.raw[0].startswith("BUG: memory leak") and len(cur.raw) <= 2:
            cur.raw.append(body)
            return
        if cur is not None:
            self.unfeed_pre(cur, lineno)
            self.close(cur, not _complete(cur))
        if kind == "REBOOT":
            # The machine restarted: whatever was open will never end.
            for other in list(self.open.values()):
                self.close(other, not _complete(other))
            self.pre.clear()
            return
        self.start(kind, title, func, body, lineno, ts, ctx)

    def feed(self, b: _Builder, body: str) -> None:
        """A non-header line that belongs to open report b."""
        b.raw.append(body)
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
                elif s == "</TASK>":
                    if not b.sep and not b.end_trace and not (
                            b.nmi_sent and not b.nmi_seen):
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
            if b.kind == "LOCKDEP" and b.at_func is None and ", at: " in body:
                ma = _AT_RE.search(body)
                if ma:
                    b.at_func = _norm_func(ma.group(1))
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
            self.close(b)
            return
        if not b.task_open and b.stack_started and not b.end_trace and not b.sep \
                and b.sections[b.cur][0] in ("Call Trace", "backtrace", "NMI backtrace") \
                and not body.startswith(_REG_PREFIXES):
            # Old kernels without <TASK> markers: the stack ended.
            b.raw.pop()
            self.close(b)
            return
        if body[-1:] == ":" and b.stack_started and _FOREIGN_PREFIX.match(body):
            # "clocksource: ... too large:": another subsystem's message
            # printed in the middle of our stack, not a heading; the stack
            # goes on after it.
            b.raw.pop()
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
                    b.nmi_seen = True
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
        if b.kind == "LOCKDEP" and b.at_func is None and ", at: " in body:
            ma = _AT_RE.search(body)
            if ma:
                b.at_func = _norm_func(ma.group(1))

    def line(self, lineno: int, ts: Optional[str], ctx: Optional[str], body: str) -> None:
        b = self.open.get(ctx)
        if b is not None and ts is None and b.ts is not None:
            return  # userspace output on a timestamped console
        if b is None and ctx is not None and ctx[0] == "C" and self.nmi_sink is not None:
            b = self.nmi_sink
        if body.startswith(_START_PREFIXES):
            cls = _classify(body)
            if cls is not None:
                if b is not None and b.ctx != ctx:
                    # Routed through the NMI sink: keep the header inside.
                    if cls[0] in ("SEP", "PRE"):
                        self.feed(b, body)
                        return
                self.header(cls, body, lineno, ts, ctx)
                return
        if b is not None:
            self.feed(b, body)

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


def _dma_kind(msg: str) -> str:
    return "DMA-API" if _dma_short(msg) in _STOCK_DMA_MESSAGES else "DETECTOR"


def parse(text: str) -> list[Report]:
    """Parse console text and return its reports in log order."""
    if "\r" in text:
        text = text.replace("\r\n", "\n")
    if _JOURNAL_RE.search(text, 0, 8192):
        # journalctl -k: "Dec 03 07:00:00 host kernel: msg" (or ISO dates).
        text = _JOURNAL_RE.sub("", text)
    lines = text.split("\n")
    p = _Parser(lines)
    starts = _START_PREFIXES
    open_ = p.open
    split_prefix = _split_prefix
    feed = p.feed
    for lineno, line in enumerate(lines, 1):
        if not open_ and p.nmi_sink is None:
            # Fast path, no report open: only a header line matters.  The
            # body of "[ ts][ tag] body" starts after the last "] " of the
            # prefix; header lines have no "] " of their own before that.
            k = line.find("] ", 0, 40)
            if not line.startswith(starts, k + 2 if k >= 0 else 0) and not (
                    k < 0 and line[:1] == "<"):
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
        if body.startswith(starts):
            p.line(lineno, ts, ctx, body)
            continue
        b = open_.get(ctx) if open_ else None
        if b is None:
            b = p.nmi_sink
            if b is None or ctx is None or ctx[0] != "C":
                continue
        elif ts is None and b.ts is not None:
            continue  # userspace output on a timestamped console
        feed(b, body)
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
        flag = " (truncated)" if s.first.truncated else ""
        out.append(f"{s.count:>{width}}x {s.title}  [{s.kind}, {where}]{flag}")
    out.append(f"{len(reports)} report(s), {len(sigs)} signature(s)")
    return "\n".join(out) + "\n"


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(
        prog="dmaharness reports",
        description="Print the kernel reports (KASAN, DMA-API, WARNING, BUG, ...) "
                    "found in a console log or saved dmesg.",
        epilog="Exit codes: 0 parsed, 2 usage error or unreadable log.")
    ap.add_argument("log", help="console log or dmesg file ('-' for stdin)")
    ap.add_argument("--json", action="store_true", help="print JSON (version 1)")
    try:
        args = ap.parse_args(argv)
    except SystemExit as e:
        return 0 if e.code == 0 else 2
    try:
        if args.log == "-":
            text = sys.stdin.read()
        else:
            with open(args.log, encoding="utf-8", errors="replace") as f:
                text = f.read()
    except OSError as e:
        print(f"dmaharness reports: cannot read {args.log}: {e.strerror}", file=sys.stderr)
        return 2
    reports = parse(text)
    try:
        if args.json:
            json.dump(to_json(reports, args.log), sys.stdout, indent=2)
            sys.stdout.write("\n")
        else:
            sys.stdout.write(format_text(reports))
        sys.stdout.flush()
    except BrokenPipeError:  # dmaharness reports log | head
        # Python's recipe: point stdout at /dev/null so the exit flush is quiet.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
