"""Console lines taken apart: the prefix before a line's text, and the frames of a stack.

The line engine (:mod:`harness.reports.engine`) reads every console line
through ``_split_prefix`` (syslog level, timestamp or ``dmesg -T`` stamp,
caller tag, then the text) and every stack line through the frame patterns
here.  The skip lists say which frames are reporting machinery, sanitizers,
helpers, locking, allocators and DMA/USB plumbing (:func:`is_machinery`:
never the culprit of our own rows, nor where the bisection points), and
which are transport layers that map a driver's buffer on its behalf
(:data:`TRANSPORT_FRAMES`; :func:`dma_site_frame` is the driver function of
a mapping's stack, for our DMA titles and the sweep's sites).

Knows nothing of reports or of the rules table.
"""

from __future__ import annotations

import re
from typing import Iterable, Optional


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
