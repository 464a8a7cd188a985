"""The kinds of kernel report, one table row each.

Read by :mod:`harness.reports.engine`: its line engine finds where a report
starts and ends, and this table says what a report is called.  The rows
follow syzkaller's Linux rules (``pkg/report/linux.go``: its ``oopsFormat``
table, the skip list and the frame extractors) so that our titles are the
ones syzbot shows; the rows marked ``ours`` are the reports of this
project's own tools (dma-debug, the cache-line detector, ``KASAN:
dma-owned``), titled as docs/reports.md documents.

A report opens at a line that holds one of the :data:`HEADERS` literals
(anywhere in the line, unless a suppression of that header matches the
line).  Its title comes from the first :class:`Rule` of that header's group
whose ``title`` regex matches earliest in the report's text (ties go to
the earlier row):

* ``report``: a second regex that must match too; when only ``title``
  matches, the report is corrupted ("matched title but not report regexp");
* ``fmt``: the title template.  ``{1}``, ``{2}``, ... are the groups of
  ``report`` (or of ``title`` when there is no ``report``), then the frames
  found by ``frame``; ``{message}``, ``{access}`` and ``{frame}`` serve our
  own rows.  ``alt`` are alternative titles, same template language;
* ``frame``: how the function of the title is found: the report's lines are
  walked part by part (:class:`FrameRule`), frames named by :data:`SKIP` or
  by the row's ``skip`` are passed over, and the first remaining frame (or
  the one an ``extractor`` picks) is the title's.  None found: ``in
  corrupted``, and the report is corrupted ("extracted no frames");
* ``end``: where the line engine ends the report: ``banner`` (the closing
  ``=====`` line of a sanitizer), ``end-trace`` (``---[ end trace``, with the
  register dump and dma-debug's ``Mapped at:`` that follow), ``stack`` (the
  ``</TASK>`` closing its stack, or the first line after a stack without
  markers), ``stall`` (as ``stack``, but only once the stalled CPU's
  interrupted stack was seen: an ``</IRQ>`` marker or an NMI backtrace) or
  ``line`` (the header line is the whole report; it leaves a report open
  around it alone);
* ``corrupted``: the row itself means a cut report (a panic printed after
  the header was lost, a header without its second half);
  ``no_stack_trace``: the report has no stack, do not call it corrupted for
  lacking one.

Adding a kind is adding a row (and a golden fixture, tests/fixtures/logs).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional

# --------------------------------------------------------------------------
# Regex shorthands used by the rows

_MACROS = {
    "{{ADDR}}": r"0x[0-9a-f]+",
    "{{PC}}": r"\[\<?(?:0x)?[0-9a-f]+\>?\]",
    "{{FUNC}}": r"([a-zA-Z0-9_]+)(?:\.|\+)",
    "{{SRC}}": r"([a-zA-Z0-9-_/.]+\.[a-z]+:[0-9]+)",
    "{{TASK}}": r"[\s\S]{0,100}?",
}


def expand(pattern: str) -> str:
    """Replace the {{...}} shorthands of a row's regex."""
    for k, v in _MACROS.items():
        pattern = pattern.replace(k, v)
    return pattern


STACK = "<stack>"   # a FrameRule part: parse the stack trace that starts here

RIP = expand(r"(?:IP|NIP|pc |PC is at):? (?:(?:[0-9]+:)?(?:{{PC}} +){0,2}{{FUNC}}"
             r"|(?:[0-9]+:)?0x[0-9a-f]+|(?:[0-9]+:)?{{PC}} +\[< *\(null\)>\] +\(null\)"
             r"|[0-9]+: +\(null\))")
CALL_TRACE = r"(?:Call (?:T|t)race:)|(?:Backtrace:)"

# Lines that open a stack trace (the end of the one before).
STACK_STARTS = (
    r"Call (?:T|t)race", r"Allocated:", r"Allocated by task [0-9]+:", r"Freed:",
    r"Freed by task [0-9]+:", r"[^k] backtrace(?: \(crc [0-9a-fA-F]*\))?:", r"Backtrace:",
    r"Uninit was stored to memory at",
    r"status: [0-9a-f]{16} badaddr: [0-9a-f]{16} cause: [0-9a-f]{16}",  # riscv show_regs
)
RISCV_STACK_START = STACK_STARTS[-1]   # may stand without frames after it

# A frame line: "  func+0x1/0x2", "[<ffff...>] func+0x..", arm "(f) from [<..>] (g+".
FRAMES = (
    expand(r"^ *(?:{{PC}} ){0,2}{{FUNC}}"),
    expand(r"^ *{{PC}} \(([a-zA-Z0-9_.]+)\) from {{PC}} \({{FUNC}}"),
)

# A frame printed by fault injection: the report is intermixed with it.
CORRUPTED_LINES = (
    r"^( \[\<?(?:0x)?[0-9a-f]+\>?\])? should_fail(slab)?(\.[a-z0-9.]+)?\+0x",
)

# Syscall entry prefixes, stripped from the frame of a title (the shortest
# strip wins: __x64_sys_ioctl reads ioctl).
STRIP_PREFIXES = (
    "SYSC_", "SyS_", "sys_", "__x64_", "__ia32_", "__arm64_", "____sys_", "___sys_",
    "__sys_", "__se_", "__se_sys_", "__do_sys_", "compat_SYSC_", "compat_SyS_", "ksys_",
)

# Frames never named in a title (regexes searched in the function name):
# reporting machinery, sanitizers, allocators, locking, string and copy
# helpers, generic library and device-model code a bug passes through.
SKIP = (
    "__sanitizer", "__asan", "kasan", "hwasan", "__msan", "kmsan", "kcsan_setup_watchpoint",
    "check_memory_region", "check_heap_object", "check_object", "read_word_at_a_time",
    "(read|write)_once_.*nocheck", "print_address_description", "panic", "invalid_op",
    "report_bug", "fixup_bug", "print_report", "print_usage_bug", "do_error", "_trap$|do_trap",
    "show_stack", "dump_stack", "walk_stack", "dump_backtrace", "warn_slowpath", "warn_alloc",
    "warn_bogus", "__warn", "alloc_page", "k?v?(?:m|z|c)alloc", "krealloc", "kmem_cache",
    "allocate_slab", "__alloc_frozen_pages_noprof", "folio_(?:alloc|unlock)",
    "filemap_alloc_folio", "__filemap_get_folio", "find_or_create_page", "do_read_cache_folio",
    "read_cache_page", "pagecache_get_page", "grab_cache_page_write_begin", "slab_",
    "debug_object", "timer_is_static_object", "work_is_static_object", "__might_fault",
    "print_unlock", "imbalance_bug", "lockdep", "bh_enable", "bh_disable", "perf_trace",
    "lock_acquire", "lock_release", "lock_class", "mark_lock", "(reacquire|mark)_held_locks",
    "raw_spin_rq", "spin_lock", "spin_trylock", "spin_unlock", "read_lock", "read_trylock",
    "write_lock", "write_trylock", "read_unlock", "write_unlock", "^down$", "down_read",
    "down_write", "down_read_trylock", "down_write_trylock", "down_trylock", "up_read",
    "up_write", "^mutex_", "^__mutex_", "^rt_mutex_", "owner_on_cpu", "osq_lock", "osq_unlock",
    "atomic(64)?_(dec|inc|read|set|or|xor|and|add|sub|fetch|xchg|cmpxchg|try)",
    "(set|clear|change|test)_bit", "__wake_up", "^refcount_", "^kref_", "ref_tracker",
    "seqprop_assert", "memcpy", "memcmp", "memset", "memchr", "memmove", "memdup", "strcmp",
    "strncmp", "strcpy", "strlcpy", "strncpy", "strscpy", "strlen", "strstr", "strnstr",
    "strnlen", "strchr", "strdup", "strndup", "copy_to_user", "copy_from_user", "copy_to_iter",
    "copy_from_iter", "copy_page_to_iter", "copy_page_from_iter", "copy_folio_to_iter",
    "^copyin$", "^copyout$", "put_user", "get_user", "might_fault", "might_sleep", "list_add",
    "list_del", "list_replace", "list_move", "list_splice", "^rb_", "^__rb_",
    "_indirect_thunk_", "string", "pointer", "snprintf", "scnprintf", "kasprintf", "kvasprintf",
    "printk", "va_format", "dev_info", "dev_notice", "dev_warn", "dev_err", "dev_alert",
    "dev_crit", "dev_emerg", "program_check_exception", "program_check_common", "del_timer",
    "flush_work", "__cancel_work_timer", "cancel_work_sync", "try_to_grab_pending",
    "flush_workqueue", "drain_workqueue", "destroy_workqueue", "queue_work", "finish_wait",
    "kthread_stop", "kobject_", "add_uevent_var", "get_device_parent", "device_add",
    "device_del", "device_unregister", "device_destroy", "device_release", "devres_release_all",
    "hwrng_unregister", "i2c_del_adapter", "__unregister_client", "device_for_each_child",
    "rollback_registered", "unregister_netdev", "sysfs_remove", "device_remove_file",
    "tty_unregister_device", "dummy_urb_enqueue", "usb_kill_urb", "usb_kill_anchored_urbs",
    "usb_control_msg", "usb_hcd_submit_urb", "usb_submit_urb", "^complete$",
    "wait_for_completion", "^kv?free$", "kfree_skb", "readb$", "readw$", "readl$", "readq$",
    "writeb$", "writew$", "writel$", "writeq$", "logic_in", "logic_out", r"^crc\d+",
    "crc_itu_t", "__might_resched", "assertfail", "^iput$", "^iput_final$", "^ihold$",
    "hex_dump_to_buffer", "print_hex_dump", "^klist_", "(trace|lockdep)_(hard|soft)irq",
    "^(un)?lock_page", "stack_trace_consume_entry", "arch_stack_walk", "stack_trace_save",
    "insert_work", "__queue_delayed_work", "queue_delayed_work_on", "ida_free",
    "do_(kernel|translation)_fault", "do_mem_abort", "el1_abort", "el1h_64_sync(?:_handler)?",
    "print_tainted", "xas_(?:start|load|find)", "find_lock_entries", "truncate_inode_pages_range",
    "__phys_addr", "__fortify_report", "cleanup_srcu_struct", "rhashtable_lookup",
    "extract_(user|iter)_to_sg", "drop_nlink", "^get_taint$", "^put_device$", "lock_timer_base",
    "__timer_delete_sync", "sk_stop_timer_sync", "__mod_timer", "fast_dput", "dput",
    "mark_buffer_dirty",
)

# Where a stall's loop is dispatched from: the frame before the first of
# these names the stall (process_one_work -> the work function, vfs_ioctl ->
# the driver's ioctl).
STALL_ANCHORS = (
    "process_one_work", "do_syscall_", "do_fast_syscall_", "sysenter_dispatch",
    "tracesys_phase2", "el0_svc_handler", "invoke_syscall", "ret_fast_syscall",
    "netif_receive_skb", "do_softirq", "call_timer_fn", "_run_timers", "run_timer_softirq",
    "hrtimer_run", "run_ksoftirqd", "smpboot_thread_fn", "^kthread$", "start_secondary",
    "cpu_startup_entry", "ret_from_fork", "vfs_write", "vfs_read", "vfs_iter_read",
    "vfs_iter_write", "do_iter_read", "do_iter_write", "call_read_iter", "call_write_iter",
    "new_sync_read", "new_sync_write", "vfs_ioctl", "ksys_ioctl", "compat_ioctl",
    "compat_sys_ioctl", "blkdev_driver_ioctl", "blkdev_ioctl", "^call_read_iter",
    "^call_write_iter", "do_iter_readv_writev", "^call_mmap", "mmap_region", "do_mmap",
    "do_dentry_open", "vfs_open", "^sock_sendmsg", "^sock_recvmsg", "^sock_release",
    "^__sock_release", "^setsockopt$", "kernel_setsockopt", "sock_common_setsockopt",
    "^listen$", "kernel_listen", "sk_common_release", "^sock_mmap", "^accept$",
    "kernel_accept", "^sock_do_ioctl", "^sock_ioctl", "^compat_sock_ioctl",
    "^nfnetlink_rcv_msg", "^rtnetlink_rcv_msg", "^netlink_dump",
    "^(sys_)?(socketpair|connect|ioctl)", "__do_fault", "do_page_fault", "^page_fault$",
    "__fput", "task_work_run", "exit_to_usermode", "smp_call_function", "tasklet_action",
    "tasklet_hi_action",
)

# Hung tasks block in random victims: these anchors group them ("" keeps
# the anchor frame itself), else the first frame not waiting machinery.
HUNG_ANCHORS = (
    ("rtnl_lock", ""), ("synchronize_rcu", "synchronize_rcu"),
    ("synchronize_srcu", "synchronize_rcu"), ("synchronize_net", "synchronize_rcu"),
    ("synchronize_sched", "synchronize_rcu"),
)
HUNG_SKIP = (
    "sched", "_lock", "_slowlock", "down", "rwsem", "completion", "kthread", "wait",
    "synchronize", "context_switch", "__switch_to", "cancel_delayed_work", "rcu_barrier",
)

# Since 6.16 (CONFIG_DETECT_HUNG_TASK_BLOCKER, kernel/hung_task.c
# debug_show_blocker()), after a hung task's stack, the lock it waits for:
#   INFO: task A:1 is blocked on a mutex likely owned by task B:2.
#   INFO: task A:1 blocked on a semaphore likely last held by task B:2
#   INFO: task A:1 <writer> blocked on an rw-semaphore likely owned by task B:2 <reader>
#   INFO: task A:1 is blocked on a mutex, but the owner is not found.
#   (the last also for a semaphore, "last holder", and an rw-semaphore)
# (any "...mutex"/"...semaphore": hung_task.h reserves a type for rt-mutexes)
# then B's stack (sched_show_task(), from "task:B state:..") unless B is
# hung itself.  They continue the hung task's report (the engine ends it
# after B's stack): not an INFO: header of their own (HEADERS' suppress).
# syzkaller has no rule for them; its "INFO:" header matches them, so its
# ParseAll would start a report there, titled by the line; Parse (what
# syzbot reports) keeps them inside the hung task's report, whose title
# reads the first Call Trace only.
HUNG_BLOCKER = r"INFO: task .* blocked on an? [\w-]*(?:mutex|semaphore)\b"

# Messages that come with a stack of their own but are no bug: printed
# inside a report (no caller tags to tell them apart), the report's title
# is taken from the text before them.
INTERMIXED = ("vmalloc: allocation failure:", "FAULT_INJECTION: forcing a failure",
              "FAULT_FLAG_ALLOW_RETRY missing")

# Header lines that continue a report rather than start one: inside an
# open report of the same context that has not reached its stack yet they
# belong to it ("invalid opcode:" after "kernel BUG at", arm64's "Internal
# error: Oops - BUG:" after "kernel BUG at", the panic of panic_on_warn, the
# BUG() a Rust panic ends in).
CONTINUATIONS = ("invalid opcode: 0000", "Kernel panic - not syncing", "PANIC: double fault",
                 "Internal error:", "kernel BUG at rust/helpers/bug.c")

# Titles with a timestamp inside were glued together from two lines.
CORRUPTED_TITLES = (r"\[ *[0-9]+\.[0-9]+\]",)

# --------------------------------------------------------------------------
# The table


@dataclass(frozen=True)
class FrameRule:
    """How the title's function is found.

    parts    regexes matched line by line in order: a part with a group
             yields a frame (the RIP function, a lockdep ``at:`` function);
             STACK collects the frames of the stack trace that starts there
             (until the next stack heading)
    parts2   tried instead when parts yield nothing
    skip     more frames never named, for this row only
    extractor "first" (the first frame kept), "stall" (the frame before the
             dispatch point, STALL_ANCHORS) or "hung" (HUNG_ANCHORS)
    """

    parts: tuple[str, ...]
    parts2: tuple[str, ...] = ()
    skip: tuple[str, ...] = ()
    extractor: str = "first"


@dataclass(frozen=True)
class Rule:
    """One kind of report: see the module docstring."""

    name: str
    kind: str
    title: str
    fmt: str
    report: str = ""
    alt: tuple[str, ...] = ()
    frame: Optional[FrameRule] = None
    no_stack_trace: bool = False
    corrupted: bool = False
    end: str = "stack"
    ours: bool = False


@dataclass(frozen=True)
class Header:
    """A literal that opens a report, and the rows titling its reports.

    suppress  regexes: a line matching one is not this header (``ODEBUG:``
              holds ``BUG:``, ``INFO: lockdep is turned off`` is no report)
    """

    literal: str
    rules: tuple[Rule, ...]
    suppress: tuple[str, ...] = ()
    line_start: bool = False   # our own headers: only at the start of a line
    kind: str = "BUG"          # the kind of a report no row of the group titles


def _warning_frame(*skip: str) -> FrameRule:
    """WARNINGs: the RIP function and the stack under it (newer kernels trap
    into __warn, the stack starts after the trap frames); else the stack
    after Call Trace."""
    return FrameRule(parts=("(?:" + RIP + "|" + expand(r"--- interrupt: [0-9]+ at {{FUNC}}") + ")",
                            STACK),
                     parts2=(CALL_TRACE, STACK), skip=skip)


_OOPS = FrameRule(parts=(RIP, CALL_TRACE, STACK))
_TRACE = FrameRule(parts=(CALL_TRACE, STACK))
_KMEMLEAK_SKIP = ("kmemleak", "mmap", "kmem", "slab", "alloc", "create_object", "idr_get",
                  "list_lru_init", "kasprintf", "kvasprintf", "pcpu_create", "strdup",
                  "strndup", "memdup")
_KMEMLEAK = FrameRule(parts=(r"backtrace(?: \(crc [0-9a-fA-F]*\))?:", STACK), skip=_KMEMLEAK_SKIP)
_KMSAN_PARTS = (STACK, r"(Local variable .* created at:|Uninit was created at:)", STACK)
_KFENCE_PARTS = (expand(r"BUG: KFENCE: (?:[a-z\- ]+) in {{FUNC}}"), STACK)
_UBSAN = FrameRule(parts=(CALL_TRACE, STACK), skip=("ubsan", "overflow"))
_LOCKDEP_AT = expand(r"at: (?:{{PC}} +)?{{FUNC}}")


def _r(name: str, kind: str, title: str, fmt: str, **kw) -> Rule:
    return Rule(name=name, kind=kind, title=expand(title), fmt=fmt,
                report=expand(kw.pop("report", "")), **kw)


BUG_RULES = (
    # Ours: the detector's KASAN report of a CPU access to memory the
    # device owns; titled with the access and our guilty-frame rules.
    _r("kasan-dma-owned", "DETECTOR", r"BUG: KASAN: dma-owned",
       "KASAN: dma-owned{access} in {frame}", end="banner", ours=True),
    _r("kasan", "KASAN", r"BUG: KASAN:", "KASAN: {1} {3} in {4}",
       report=r"BUG: KASAN: ([a-z\-]+) in {{FUNC}}(?:.*\n)+?.*(Read|Write) (?:of size|at addr) (?:[0-9a-f]+)",
       alt=("bad-access in {4}",), end="banner",
       frame=FrameRule(parts=(expand(r"BUG: KASAN: (?:[a-z\-]+) in {{FUNC}}"), CALL_TRACE, STACK),
                       skip=("kernel_fault", "tag_check", "mem_abort", "^el1_", "^el1h_"))),
    _r("kasan-invalid-free", "KASAN", r"BUG: KASAN:", "KASAN: invalid-free in {2}",
       report=r"BUG: KASAN: (?:double-free or invalid-free|double-free|invalid-free) in {{FUNC}}",
       alt=("invalid-free in {2}",), end="banner",
       frame=FrameRule(parts=(expand(r"BUG: KASAN: (?:double-free or invalid-free|double-free"
                                     r"|invalid-free) in {{FUNC}}"), CALL_TRACE, STACK),
                       skip=("slab_", "kfree", "vunmap", "vfree"))),
    _r("kasan-on-address", "KASAN",
       r"BUG: KASAN: ([a-z\-]+) on address(?:.*\n)+?.*(Read|Write) of size ([0-9]+)",
       "KASAN: {1} {2}", end="banner"),
    _r("kasan-cut", "KASAN", r"BUG: KASAN: (.*)", "KASAN: {1}", corrupted=True, end="banner"),
    _r("kmsan-usb-infoleak", "KMSAN", r"BUG: KMSAN: kernel-usb-infoleak",
       "KMSAN: kernel-usb-infoleak in {2}", report=r"BUG: KMSAN: kernel-usb-infoleak in {{FUNC}}",
       alt=("KMSAN origin in {3}",), no_stack_trace=True, end="banner",
       frame=FrameRule(parts=_KMSAN_PARTS, skip=(
           "alloc_skb", "usb_submit_urb", "usb_start_wait_urb", "usb_bulk_msg",
           "usb_interrupt_msg", "usb_control_msg"))),
    _r("kmsan", "KMSAN", r"BUG: KMSAN:", "KMSAN: {1} in {3}",
       report=r"BUG: KMSAN: ([a-z\-]+) in {{FUNC}}", alt=("bad-access in {3}",),
       no_stack_trace=True, end="banner",
       frame=FrameRule(parts=_KMSAN_PARTS, skip=(
           "alloc_skb", "netlink_ack", "netlink_rcv_skb", "_encrypt$",
           "^(?:crypto|cipher|drbg|rng)_"))),
    _r("kcsan-data-race", "KCSAN", r"BUG: KCSAN: data-race", "KCSAN: {1}",
       report=r"BUG: KCSAN: (.*)", no_stack_trace=True, end="banner"),
    _r("kcsan", "KCSAN", r"BUG: KCSAN:", "KCSAN: {1}", report=r"BUG: KCSAN: (.*)",
       no_stack_trace=True, end="banner"),
    _r("kfence-access", "KFENCE", r"BUG: KFENCE: (use-after-free|out-of-bounds) (read|write) in {{FUNC}}",
       "KFENCE: {1} {2} in {4}", alt=("bad-access in {4}",), end="banner",
       frame=FrameRule(parts=_KFENCE_PARTS)),
    _r("kfence-invalid-free", "KFENCE", r"BUG: KFENCE: invalid free in {{FUNC}}",
       "KFENCE: invalid free in {2}", alt=("invalid-free in {2}",), no_stack_trace=True,
       end="banner", frame=FrameRule(parts=_KFENCE_PARTS)),
    _r("kfence-invalid", "KFENCE", r"BUG: KFENCE: invalid (read|write) in {{FUNC}}",
       "KFENCE: invalid {1} in {3}", alt=("bad-access in {3}",), end="banner",
       frame=FrameRule(parts=_KFENCE_PARTS)),
    _r("kfence-corruption", "KFENCE", r"BUG: KFENCE: memory corruption in {{FUNC}}",
       "KFENCE: memory corruption in {2}", no_stack_trace=True, end="banner",
       frame=FrameRule(parts=_KFENCE_PARTS)),
    _r("paging-request", "BUG",
       r"BUG: (?:unable to handle kernel paging request|unable to handle page fault for address"
       r"|Unable to handle kernel data access)",
       "BUG: unable to handle kernel paging request in {1}", alt=("bad-access in {1}",),
       frame=_OOPS, end="end-trace"),
    _r("null-deref", "BUG",
       r"BUG: (?:unable to handle kernel NULL pointer dereference|kernel NULL pointer dereference"
       r"|Kernel NULL pointer dereference)",
       "BUG: unable to handle kernel NULL pointer dereference in {1}", alt=("bad-access in {1}",),
       frame=_OOPS, end="end-trace"),
    # The second half of the header, a printk of its own, was lost.
    _r("unable-to-handle-cut", "BUG", r"BUG: (?:unable to handle kernel|Unable to handle kernel)",
       "BUG: unable to handle kernel", corrupted=True, end="end-trace"),
    _r("spinlock", "BUG",
       r"BUG: (spinlock|rwlock) (lockup suspected|already unlocked|recursion|cpu recursion"
       r"|bad magic|wrong owner|wrong CPU|trylock failure on UP)",
       "BUG: {1} {2} in {3}", frame=FrameRule(parts=(CALL_TRACE, STACK),
                                                skip=("spin_", "_lock", "_unlock"))),
    _r("soft-lockup", "SOFTLOCKUP", r"BUG: soft lockup", "BUG: soft lockup in {1}",
       alt=("stall in {1}",), frame=FrameRule(parts=(RIP, CALL_TRACE, STACK), extractor="stall")),
    _r("still-has-locks-bug", "LOCKDEP", r"BUG: .*still has locks held!",
       "BUG: still has locks held in {1}",
       report=r"BUG: .*still has locks held!(?:.*\n)+?.*{{PC}} +{{FUNC}}"),
    _r("scheduling-while-atomic", "BUG", r"BUG: scheduling while atomic",
       "BUG: scheduling while atomic in {1}",
       frame=FrameRule(parts=(CALL_TRACE, STACK), skip=("schedule",))),
    _r("lock-held-returning-bug", "LOCKDEP", r"BUG: lock held when returning to user space",
       "BUG: lock held when returning to user space in {1}", no_stack_trace=True,
       report=r"BUG: lock held when returning to user space(?:.*\n)+?.*leaving the kernel with "
              r"locks still held(?:.*\n)+?.*at: (?:{{PC}} +)?{{FUNC}}"),
    _r("bad-unlock-balance-bug", "LOCKDEP", r"BUG: bad unlock balance detected!",
       "BUG: bad unlock balance in {1}",
       frame=FrameRule(parts=(expand(r"{{PC}} +{{FUNC}}"), CALL_TRACE, STACK))),
    _r("held-lock-freed-bug", "LOCKDEP", r"BUG: held lock freed!", "BUG: held lock freed in {1}",
       report=r"BUG: held lock freed!(?:.*\n)+?.*{{PC}} +{{FUNC}}"),
    _r("bad-rss-counter", "BUG", r"BUG: Bad rss-counter state", "BUG: Bad rss-counter state",
       no_stack_trace=True, end="line"),
    _r("nr-ptes", "BUG", r"BUG: non-zero nr_ptes on freeing mm",
       "BUG: non-zero nr_ptes on freeing mm", no_stack_trace=True, end="line"),
    _r("nr-pmds", "BUG", r"BUG: non-zero nr_pmds on freeing mm",
       "BUG: non-zero nr_pmds on freeing mm", no_stack_trace=True, end="line"),
    # The block device and the filesystem type only split one bug in many.
    _r("dentry-in-use", "BUG", r"BUG: Dentry .* still in use", "BUG: Dentry still in use in {1}",
       report=r"BUG: Dentry .* still in use \([0-9]+\) \[(unmount) of ([^\]]+)\]",
       alt=("BUG: Dentry still in use [{1} of {2}]",)),
    _r("bad-page", "BUG", r"BUG: Bad page (state|cache)", "BUG: Bad page {1} in {2}",
       frame=FrameRule(parts=(r"page last allocated", STACK), skip=(
           "(free|put|get|update|release)_page", "free_unref", "^_*folio",
           "truncate_inode_pages", "page_frag_free", "alloc", "vmap", "page_owner"))),
    _r("bad-page-map", "BUG", r"BUG: Bad page map", "BUG: Bad page map"),
    _r("workqueue-lockup", "BUG", r"BUG: workqueue lockup", "BUG: workqueue lockup",
       no_stack_trace=True),
    _r("sleeping-in-atomic", "BUG", r"BUG: sleeping function called from invalid context at (.*)",
       "BUG: sleeping function called from invalid context in {2}", frame=_TRACE),
    _r("preemptible", "BUG", r"BUG: using ([a-z_]+)\(\) in preemptible",
       "BUG: using {1}() in preemptible code in {2}",
       frame=FrameRule(parts=(CALL_TRACE, STACK), skip=(
           "dump_stack", "preemption", "preempt", "debug_", "processor_id", "this_cpu"))),
    _r("workqueue-leaked-lock", "BUG", r"BUG: workqueue leaked lock or atomic",
       "BUG: workqueue leaked lock or atomic in {1}", no_stack_trace=True,
       report=r"BUG: workqueue leaked lock or atomic(?:.*\n)+?.*last function: ([a-zA-Z0-9_]+)\n"),
    _r("memory-leak", "KMEMLEAK", r"BUG: memory leak", "memory leak in {1}", frame=_KMEMLEAK),
    _r("stack-guard-page", "BUG", r"BUG: .*stack guard page was hit at",
       "BUG: stack guard page was hit in {1}", alt=("stack-overflow in {1}",), end="end-trace",
       frame=FrameRule(parts=(RIP, CALL_TRACE, STACK), extractor="stall")),
    # arm64 prints this where x86 prints a lockdep WARNING: same title.
    _r("invalid-wait-context", "LOCKDEP", r"BUG: Invalid wait context", "WARNING: locking bug in {1}",
       frame=FrameRule(parts=(CALL_TRACE, STACK), skip=("lock_sock", "release_sock"))),
    _r("bug-cut", "BUG", r"BUG:\s*(?:\n|$)", "BUG: corrupted", corrupted=True),
)

WARNING_RULES = (
    # Ours: dma-debug (kernel/dma/debug.c) and the detector
    # (kernel/dma/debug_cacheline.c) warn through WARN(); titled by the
    # DMA-API message they print.
    _r("dma-debug-warning", "DMA-API", r"WARNING: .*kernel/dma/debug", "DMA-API: {message} in {frame}",
       end="end-trace", ours=True),
    _r("odebug", "WARNING", r"WARNING: .*lib/debugobjects\.c.* (?:debug_print|debug_check|at)",
       "WARNING: ODEBUG bug in {1}", end="end-trace",
       frame=_warning_frame("debug_", "rcu", "hrtimer_", "timer_", "work_", "percpu_", "vunmap",
                            "vfree", "__free_", "debug_check", "kobject_")),
    _r("bad-usercopy-warning", "WARNING", r"WARNING: .*mm/usercopy\.c.* (?:usercopy_warn|at)",
       "WARNING: bad usercopy in {1}", end="end-trace",
       frame=_warning_frame("usercopy", "__check")),
    _r("kobject", "WARNING", r"WARNING: .*lib/kobject\.c.* (?:kobject_|at)",
       "WARNING: kobject bug in {1}", end="end-trace", frame=_warning_frame("kobject_")),
    _r("proc-registration", "WARNING", r"WARNING: .*fs/proc/generic\.c.* (?:proc_register|at)",
       "WARNING: proc registration bug in {1}", end="end-trace", frame=_warning_frame("proc_")),
    _r("refcount", "WARNING", r"WARNING: .*lib/refcount\.c.* (?:refcount_|at)",
       "WARNING: refcount bug in {1}", end="end-trace",
       frame=_warning_frame("refcount", "kobject_")),
    _r("locking-bug", "LOCKDEP", r"WARNING: .*kernel/locking/lockdep\.c.*lock_",
       "WARNING: locking bug in {1}", end="end-trace",
       frame=_warning_frame("lock_sock", "release_sock")),
    _r("still-has-locks", "LOCKDEP", r"WARNING: .*still has locks held!",
       "WARNING: still has locks held in {1}",
       report=r"WARNING: .*still has locks held!(?:.*\n)+?.*at: {{FUNC}}"),
    _r("nested-lock", "LOCKDEP", r"WARNING: Nested lock was not taken",
       "WARNING: nested lock was not taken in {1}", frame=_warning_frame()),
    _r("lock-held-returning", "LOCKDEP", r"WARNING: lock held when returning to user space",
       "WARNING: lock held when returning to user space in {1}", no_stack_trace=True,
       report=r"WARNING: lock held when returning to user space(?:.*\n)+?.*leaving the kernel with "
              r"locks still held(?:.*\n)+?.*at: (?:{{PC}} +)?{{FUNC}}"),
    _r("kmalloc-bug", "WARNING", r"WARNING: .*mm/.*\.c.* k?.?malloc", "WARNING: kmalloc bug in {1}",
       end="end-trace", frame=_warning_frame("kmalloc", "krealloc", "slab", "kmem")),
    _r("zero-size-vmalloc", "WARNING", r"WARNING: .*mm/vmalloc.c.*__vmalloc_node",
       "WARNING: zero-size vmalloc in {1}", end="end-trace", frame=_warning_frame()),
    _r("usb-submit-urb", "WARNING", r"WARNING: .* usb_submit_urb", "WARNING in {1}/usb_submit_urb",
       end="end-trace", frame=_warning_frame(
           "usb_submit_urb", "usb_start_wait_urb", "usb_bulk_msg", "usb_interrupt_msg",
           "usb_control_msg")),
    # __warn()'s first line (kernel/panic.c), as syzkaller's oopsFormats for
    # "WARNING:" (pkg/report/linux.go) read it.  Whatever the shape, the
    # title's function is found the same way (_warning_frame: the RIP line
    # and the stack under it, else the Call Trace), not read from the line:
    #   up to 6.18:  "WARNING: CPU: 0 PID: 1 at file.c:12 f+0x1/0x2"       warning
    #   6.19+, 7.x:  "WARNING: file.c:12 at f+0x1/0x2, CPU#0: comm/1"      warning-file-at
    #     with CONFIG_DEBUG_BUGVERBOSE_DETAILED (not x86, whose condition
    #     is printed as the WARN message):
    #                "WARNING: [cond] file.c:12 at f+0x1/0x2, CPU#0: comm/1"  warning-bracket
    #     the caller not known (x86 WARN traps of some 6.19-rc/next trees):
    #                "WARNING: file.c:12 at 0x0, CPU#0: comm/1"            warning-at-address
    # Without a file (CONFIG_DEBUG_BUGVERBOSE=n), "WARNING: CPU: 0 PID: 1 at
    # f+0x1/0x2" and "WARNING: at f+0x1/0x2, CPU#0: comm/1" match no row:
    # titled by the line itself, as syzkaller does.  The rows above match
    # both shapes (".*file.c.* (?:f|at)").
    _r("warning-at-address", "WARNING", r"WARNING: {{SRC}} at 0x\d+, CPU#\d+", "WARNING in {2}",
       end="end-trace", frame=_warning_frame()),
    _r("warning", "WARNING", r"WARNING: .* at {{SRC}} {{FUNC}}", "WARNING in {3}",
       end="end-trace", frame=_warning_frame()),
    _r("warning-file-at", "WARNING", r"WARNING: {{SRC}} at {{FUNC}}", "WARNING in {3}",
       end="end-trace", frame=_warning_frame()),
    _r("warning-bracket", "WARNING", r"WARNING: \[.*\] {{SRC}} at {{FUNC}}.*", "WARNING in {3}",
       end="end-trace", frame=_warning_frame()),
    _r("circular-locking", "LOCKDEP", r"WARNING: possible circular locking dependency detected",
       "possible deadlock in {1}",
       report=r"WARNING: possible circular locking dependency detected(?:.*\n)+?.*is trying to acquire lock",
       # Workqueue functions take the locks of the work items they run.
       frame=FrameRule(parts=(_LOCKDEP_AT, _LOCKDEP_AT, STACK), skip=(
           "process_one_work", "flush_workqueue", "drain_workqueue", "destroy_workqueue"))),
    _r("irq-lock-inversion", "LOCKDEP", r"WARNING: possible irq lock inversion dependency detected",
       "possible deadlock in {1}",
       report=r"WARNING: possible irq lock inversion dependency detected(?:.*\n)+?.*just changed "
              r"the state of lock(?:.*\n)+?.*at: (?:{{PC}} +)?{{FUNC}}"),
    _r("lock-order", "LOCKDEP", r"WARNING: .*-safe -> .*-unsafe lock order detected",
       "possible deadlock in {1}", frame=FrameRule(parts=(r"which became (?:.*) at:", STACK))),
    _r("recursive-locking", "LOCKDEP", r"WARNING: possible recursive locking detected",
       "possible deadlock in {1}",
       report=r"WARNING: possible recursive locking detected(?:.*\n)+?.*is trying to acquire "
              r"lock(?:.*\n)+?.*at: (?:{{PC}} +)?{{FUNC}}"),
    _r("inconsistent-lock-state", "LOCKDEP", r"WARNING: inconsistent lock state",
       "inconsistent lock state in {2}",
       report=r"WARNING: inconsistent lock state(?:.*\n)+?.*takes(?:.*\n)+?.*at: (?:{{PC}} +)?{{FUNC}}",
       frame=_TRACE),
    _r("suspicious-rcu", "LOCKDEP", r"WARNING: suspicious RCU usage",
       "WARNING: suspicious RCU usage in {2}",
       report=r"WARNING: suspicious RCU usage(?:.*\n)+?.*?{{SRC}}",
       frame=FrameRule(parts=(CALL_TRACE, STACK), skip=("rcu", "kmem", "slab"))),
    _r("stack-regs-bad", "WARNING", r"WARNING: kernel stack regs at [0-9a-f]+ in [^ ]* has bad '([^']+)' value",
       "WARNING: kernel stack regs has bad '{1}' value", no_stack_trace=True),
    _r("frame-pointer-bad", "WARNING",
       r"WARNING: kernel stack frame pointer at [0-9a-f]+ in [^ ]* has bad value",
       "WARNING: kernel stack frame pointer has bad value", no_stack_trace=True),
    _r("bad-unlock-balance", "LOCKDEP", r"WARNING: bad unlock balance detected!",
       "WARNING: bad unlock balance in {1}",
       frame=FrameRule(parts=(expand(r"{{PC}} +{{FUNC}}"), CALL_TRACE, STACK))),
    _r("held-lock-freed", "LOCKDEP", r"WARNING: held lock freed!", "WARNING: held lock freed in {1}",
       report=r"WARNING: held lock freed!(?:.*\n)+?.*at:(?: {{PC}})? +{{FUNC}}"),
    _r("stack-regs-bad-bp", "WARNING", r"WARNING: kernel stack regs .* has bad 'bp' value",
       "WARNING: kernel stack regs has bad value", no_stack_trace=True),
    _r("frame-pointer-bad-any", "WARNING", r"WARNING: kernel stack frame pointer .* has bad value",
       "WARNING: kernel stack regs has bad value", no_stack_trace=True),
    _r("warning-cut", "WARNING", r"WARNING:\s*(?:\n|$)", "WARNING: corrupted", corrupted=True),
)

INFO_RULES = (
    # Pre-4.x lockdep banners: "[ INFO: possible circular locking dependency detected ]".
    _r("circular-locking-old", "LOCKDEP", r"INFO: possible circular locking dependency detected",
       "possible deadlock in {1}",
       report=r"INFO: possible circular locking dependency detected \](?:.*\n)+?.*is trying to "
              r"acquire lock(?:.*\n)+?.*at: {{PC}} +{{FUNC}}"),
    _r("irq-lock-inversion-old", "LOCKDEP", r"INFO: possible irq lock inversion dependency detected",
       "possible deadlock in {1}",
       report=r"INFO: possible irq lock inversion dependency detected \](?:.*\n)+?.*just changed "
              r"the state of lock(?:.*\n)+?.*at: {{PC}} +{{FUNC}}"),
    _r("lock-order-old", "LOCKDEP", r"INFO: SOFTIRQ-safe -> SOFTIRQ-unsafe lock order detected",
       "possible deadlock in {1}",
       report=r"INFO: SOFTIRQ-safe -> SOFTIRQ-unsafe lock order detected \](?:.*\n)+?.*is trying "
              r"to acquire(?:.*\n)+?.*at: {{PC}} +{{FUNC}}"),
    _r("recursive-locking-old", "LOCKDEP", r"INFO: possible recursive locking detected",
       "possible deadlock in {1}",
       report=r"INFO: possible recursive locking detected \](?:.*\n)+?.*is trying to acquire "
              r"lock(?:.*\n)+?.*at: {{PC}} +{{FUNC}}"),
    _r("inconsistent-lock-state-old", "LOCKDEP", r"INFO: inconsistent lock state",
       "inconsistent lock state in {1}",
       report=r"INFO: inconsistent lock state \](?:.*\n)+?.*takes(?:.*\n)+?.*at: {{PC}} +{{FUNC}}"),
    _r("rcu-stall", "RCU", r"INFO: rcu_(?:preempt|sched|bh|tasks) (?:self-)?detected(?: expedited)? stall",
       "INFO: rcu detected stall in {1}", alt=("stall in {1}",),
       frame=FrameRule(parts=("apic_timer_interrupt", RIP, STACK),
                       parts2=(r"(?:apic_timer_interrupt|Exception stack|el1h_64_irq)", STACK),
                       skip=("apic_timer_interrupt", "rcu"), extractor="stall"), end="stall"),
    _r("non-static-key", "LOCKDEP", r"INFO: trying to register non-static key",
       "INFO: trying to register non-static key in {1}",
       frame=FrameRule(parts=(CALL_TRACE, STACK), skip=("stack", "lock", "IRQ"))),
    _r("suspicious-rcu-old", "LOCKDEP", r"INFO: suspicious RCU usage", "INFO: suspicious RCU usage in {2}",
       report=r"INFO: suspicious RCU usage(?:.*\n)+?.*?{{SRC}}",
       frame=FrameRule(parts=(CALL_TRACE, STACK), skip=("rcu", "kmem", "slab"))),
    _r("task-hung", "HUNG", r"INFO: task {{TASK}} blocked (?:in I/O wait )?for more than [0-9]+ seconds",
       "INFO: task hung in {1}", alt=("hang in {1}",),
       frame=FrameRule(parts=(CALL_TRACE, STACK), extractor="hung")),
    _r("task-cant-die", "HUNG", r"INFO: task {{TASK}} can't die for more than .* seconds",
       "INFO: task can't die in {1}", alt=("hang in {1}",),
       frame=FrameRule(parts=(CALL_TRACE, STACK), skip=("schedule",))),
    # What is left of an old-style (SLUB debug) KASAN report.
    _r("freed-allocated-in", "BUG", r"INFO: (Freed|Allocated) in (.*)", "INFO: {1} in {2}",
       corrupted=True),
    _r("info-cut", "BUG", r"INFO:\s*(?:\n|$)", "INFO: corrupted", corrupted=True),
)

PANIC_RULES = (
    _r("stack-protector", "PANIC", r"Kernel panic - not syncing: stack-protector:",
       "kernel panic: stack is corrupted in {1}", no_stack_trace=True,
       report=r"Kernel panic - not syncing: stack-protector: Kernel stack is corrupted in: {{FUNC}}"),
    _r("stack-protector-address", "PANIC", r"Kernel panic - not syncing: stack-protector:",
       "kernel panic: stack is corrupted in {1}",
       report=r"Kernel panic - not syncing: stack-protector: Kernel stack is corrupted in: [a-f0-9]+",
       frame=FrameRule(parts=(CALL_TRACE, STACK), skip=("stack_chk",))),
    _r("corrupted-stack-end", "PANIC", r"Kernel panic - not syncing: corrupted stack end",
       "kernel panic: corrupted stack end in {1}", alt=("stack-overflow in {1}",),
       report=r"Kernel panic - not syncing: corrupted stack end detected inside scheduler",
       frame=FrameRule(parts=(CALL_TRACE, STACK), skip=("schedule", "retint_kernel"),
                       extractor="stall")),
    _r("kernel-stack-overflow", "PANIC", r"Kernel panic - not syncing: kernel stack overflow",
       "kernel stack overflow in {1}", alt=("stack-overflow in {1}",),
       frame=FrameRule(parts=(CALL_TRACE, STACK), skip=("bad_stack",), extractor="stall")),
    _r("kill-init", "PANIC", r"Kernel panic - not syncing: Attempted to kill init!",
       "kernel panic: Attempted to kill init!"),
    _r("n-tty-ldisc", "PANIC",
       r"Kernel panic - not syncing: Couldn't open N_TTY ldisc for [^ ]+ --- error -[0-9]+",
       "kernel panic: Couldn't open N_TTY ldisc"),
    # The report this panic ends (a BUG, a WARNING, a hung task) was lost.
    _r("fatal-exception", "PANIC", r"Kernel panic - not syncing: Fatal exception",
       "kernel panic: Fatal exception", corrupted=True),
    _r("panic-on-warn", "PANIC", r"Kernel panic - not syncing: panic_on_warn set",
       "kernel panic: panic_on_warn set", corrupted=True),
    _r("hung-task-panic", "PANIC", r"Kernel panic - not syncing: hung_task: blocked tasks",
       "kernel panic: hung_task: blocked tasks", corrupted=True),
    _r("panic", "PANIC", r"Kernel panic - not syncing: (.*)", "kernel panic: {1}"),
)

KERNEL_BUG_RULES = (
    _r("bad-usercopy", "BUG", r"kernel BUG at mm/usercopy.c", "BUG: bad usercopy in {1}",
       end="end-trace", frame=FrameRule(parts=(CALL_TRACE, STACK), skip=("usercopy", "__check"))),
    _r("corrupted-list", "BUG", r"kernel BUG at lib/list_debug.c", "BUG: corrupted list in {1}",
       alt=("bad-access in {1}",), end="end-trace", frame=_TRACE),
    # skb helpers BUG_ON() for their callers.
    _r("kernel-bug", "BUG", r"kernel BUG at (.*)", "kernel BUG in {2}", end="end-trace",
       frame=FrameRule(parts=(RIP, CALL_TRACE, STACK), skip=("^skb_",))),
)


def _oops(name: str, literal: str, fmt: str, *, alt: tuple[str, ...] = (),
          rip_only: bool = False) -> Rule:
    """A trap whose title is the faulting function (the RIP line)."""
    parts = (RIP,) if rip_only else (RIP, CALL_TRACE, STACK)
    return _r(name, "BUG", re.escape(literal), fmt, alt=alt, end="end-trace",
              frame=FrameRule(parts=parts))


# Header literals in the order a line is tried (a line holding two of them
# belongs to the first).
HEADERS: tuple[Header, ...] = (
    Header("BUG:", BUG_RULES, suppress=(
        "ODEBUG:", "Boot_DEBUG:", "xlog_status:", "DEBUG:", "BUG: no syscalls can create resource")),
    Header("WARNING:", WARNING_RULES, suppress=(
        "WARNING: /etc/ssh/moduli does not exist, using fixed modulus",
        "WARNING: workqueue cpumask: online intersect > possible intersect",
        "WARNING: [Tt]he mand mount option",
        r"WARNING: Unsupported flag value\(s\) of 0x%x in DT_FLAGS_1",
        "WARNING: Unprivileged eBPF is enabled with eIBRS",
        r"WARNING: fbcon: Driver '(.*)' missed to adjust virtual screen size",
        "WARNING: See https.* for mitigation options.", "WARNING: kernel not compiled with CPU_SRSO",
        r"EXT4-[Ff][Ss](?: \(.*\))?:", "(?i:warning: .* uses (deprecated v2 capabilities|wireless extensions))",
        r"XFS \(\w+\): WARNING"), kind="WARNING"),
    Header("INFO:", INFO_RULES, suppress=(
        "INFO: lockdep is turned off", "INFO: Stall ended before state dump start",
        "INFO: NMI handler", "INFO: recovery required on readonly filesystem",
        "(handler|interrupt).*took too long", "INFO: sys_.* is not present in /proc/kallsyms",
        "INFO: no syscalls can create resource", "rmt_storage:INFO:", "_INFO:",
        HUNG_BLOCKER)),
    Header("Unable to handle kernel", (
        _r("arm-unable-to-handle", "BUG",
           r"Unable to handle kernel (paging request|NULL pointer dereference|access to user memory)",
           "BUG: unable to handle kernel {1} in {2}", alt=("bad-access in {2}",), frame=_OOPS,
           end="end-trace"),)),
    Header("general protection fault", (
        _r("general-protection-fault", "GPF", r"general protection fault.*:",
           "general protection fault in {1}", alt=("bad-access in {1}",), frame=_OOPS,
           end="end-trace"),),
        suppress=(r"general protection fault .* error:\d+ in ",), kind="GPF"),   # a user-space segfault
    Header("stack segment: ", (_oops("stack-segment", "stack segment: ", "stack segment fault in {1}"),)),
    Header("Kernel panic", PANIC_RULES, kind="PANIC"),
    Header("PANIC: double fault", (_oops("double-fault", "PANIC: double fault",
                                         "PANIC: double fault in {1}", rip_only=True),)),
    Header("rust_kernel: panicked", (
        _r("rust-panic", "BUG", r"rust_kernel: panicked", "{1} in {2}", end="end-trace",
           report=r"rust_kernel: panicked at [^\n]*?\n(.+?)\n",
           frame=FrameRule(parts=(CALL_TRACE, STACK), skip=(re.escape("__rustc::rust_begin_unwind"),))),)),
    Header("kernel BUG", KERNEL_BUG_RULES),
    Header("Kernel BUG", (_r("kernel-bug-other", "BUG", r"Kernel BUG (.*)", "kernel BUG {1}"),)),
    Header("BUG kmalloc-", (_r("object-already-free", "BUG", r"BUG kmalloc-.*: Object already free",
                               "BUG: Object already free"),)),
    Header("divide error:", (_oops("divide-error", "divide error: ", "divide error in {1}", rip_only=True),)),
    Header("divide_error:", (_oops("divide-error-misspelt", "divide_error: ", "divide error in {1}",
                                   rip_only=True),)),
    Header("invalid opcode:", (_oops("invalid-opcode", "invalid opcode: ", "invalid opcode in {1}",
                                     rip_only=True),)),
    Header("int3:", (_oops("int3", "int3: ", "int3 in {1}"),)),
    Header("UBSAN:", (
        _r("ubsan-undefined-behaviour", "UBSAN", r"UBSAN:", "UBSAN: undefined-behaviour in {1}",
           report=r"UBSAN: Undefined behaviour in", frame=_UBSAN, end="banner"),
        _r("ubsan-array-index", "UBSAN", r"UBSAN: array-index-out-of-bounds in",
           "UBSAN: array-index-out-of-bounds in {1}", alt=("bad-access in {1}",), frame=_UBSAN,
           end="banner"),
        _r("ubsan", "UBSAN", r"UBSAN:", "UBSAN: {1} in {2}", report=r"UBSAN: (.*?) in",
           frame=_UBSAN, end="banner"),
    ), kind="UBSAN"),
    # A reboot after the kernel ran: the machine reset without a report.
    Header("Booting the kernel", (
        _r("unexpected-reboot", "REBOOT", r"^Booting the kernel", "unexpected kernel reboot",
           no_stack_trace=True, end="line"),),
        suppress=("Parsing ELF|Decompressing Linux|Unknown parameter '",), kind="REBOOT"),
    Header("unregister_netdevice: waiting for", (
        _r("netdevice-refcount", "BUG", r"unregister_netdevice: waiting for (?:.*) to become free",
           "unregister_netdevice: waiting for DEV to become free", no_stack_trace=True,
           end="line"),)),
    Header("VFS: Close: file count is 0", (
        _r("vfs-file-count", "BUG", r"VFS: Close: file count is 0",
           "VFS: Close: file count is zero (use-after-free)", no_stack_trace=True, end="line"),)),
    Header("VFS: Busy inodes after unmount", (
        _r("vfs-busy-inodes", "BUG", r"VFS: Busy inodes after unmount",
           "VFS: Busy inodes after unmount (use-after-free)", no_stack_trace=True, end="line"),)),
    Header("Internal error:", (_oops("internal-error", "Internal error:", "Internal error in {1}",
                                     alt=("bad-access in {1}",)),)),
    Header("Unhandled fault:", (_oops("unhandled-fault", "Unhandled fault:", "Unhandled fault in {1}",
                                      alt=("bad-access in {1}",)),)),
    Header("Alignment trap:", (_oops("alignment-trap", "Alignment trap:", "Alignment trap in {1}"),)),
    Header("trusty: panic", (
        _r("trusty-assert", "PANIC", r"trusty: panic.* ASSERT FAILED", "trusty: ASSERT FAILED: {1}",
           report=r"trusty: panic \(.*?\):(?: DEBUG)? ASSERT FAILED at \(.*?\): (.+)",
           no_stack_trace=True),
        _r("trusty-assert-cut", "PANIC", r"trusty: panic.* ASSERT FAILED.*: *(.*)",
           "trusty: ASSERT FAILED: {1}", corrupted=True),
        _r("trusty-panic", "PANIC", r"trusty: panic", "trusty: panic: {1}",
           report=r"trusty: panic \(.*?\): (.+)", no_stack_trace=True),
    ), kind="PANIC"),
    # Ours, recognised at the start of a line only.
    Header("unreferenced object 0x", (
        _r("kmemleak", "KMEMLEAK", r"unreferenced object 0x", "memory leak in {1}", frame=_KMEMLEAK),),
        line_start=True, kind="KMEMLEAK"),
    Header("DMA-API: ", (
        _r("dma-api", "DMA-API", r"DMA-API: ", "DMA-API: {message} in {frame}", end="end-trace",
           ours=True),), line_start=True, kind="DMA-API"),
)

RULES: tuple[Rule, ...] = tuple(r for h in HEADERS for r in h.rules)


@dataclass(frozen=True)
class _Compiled:
    """A header's regexes, compiled once."""

    header: Header
    suppress: Optional[re.Pattern[str]]
    titles: tuple[re.Pattern[str], ...]
    reports: tuple[Optional[re.Pattern[str]], ...]
    fallback: Rule   # a report no row titles: the header line is its title


def compile_header(h: Header) -> _Compiled:
    sup = re.compile("|".join(f"(?:{s})" for s in h.suppress)) if h.suppress else None
    return _Compiled(
        header=h, suppress=sup,
        titles=tuple(re.compile(r.title) for r in h.rules),
        reports=tuple(re.compile(r.report) if r.report else None for r in h.rules),
        fallback=Rule(name="", kind=h.kind, title="", fmt=""))


COMPILED: tuple[_Compiled, ...] = tuple(compile_header(h) for h in HEADERS)
BY_LITERAL: dict[str, _Compiled] = {c.header.literal: c for c in COMPILED}
BY_NAME: dict[str, Rule] = {r.name: r for r in RULES}
assert len(BY_NAME) == len(RULES), "rule names must be unique"
