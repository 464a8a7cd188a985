"""Report formats of Linux 6.19+ / 7.x, written from the kernel's printk formats.

* __warn()'s first line (kernel/panic.c) is "WARNING: file:line at
  f+0x1/0x2, CPU#0: comm/pid" (up to 6.18: "WARNING: CPU: 0 PID: 1 at
  file:line f+0x1/0x2"); syzkaller (pkg/report/linux.go, the "WARNING:"
  oopsFormats) reads both, and takes the title's function from the RIP
  line and the stack (warningStackFmt), never from the header.  Each case
  below is parsed in both shapes: the reports must be the same but for
  the header line and the row named.
* hung_task (kernel/hung_task.c debug_show_blocker(), 6.16+) follows a
  hung task's stack with the lock it waits for ("INFO: task A:1 is blocked
  on a mutex likely owned by task B:2.") and B's stack: part of the hung
  task's report (its aux stack "Lock owner"), never a report of its own.
"""

from __future__ import annotations

import unittest
from pathlib import Path

from harness.reports import golden
from harness.reports.engine import Report, parse

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "logs"


def tagged(lines: list[str], ctx: str | None = "T245", start: float = 10.0) -> str:
    """Hand-written console lines with timestamps (and a caller tag)."""
    tag = f"[{ctx:>6}]" if ctx else ""
    return "".join(f"[{start + i / 1000:12.6f}]{tag} {line}\n" for i, line in enumerate(lines))


def header_6x(src: str | None, func: str, cpu: int, comm: str, pid: int) -> str:
    """__warn()'s first line up to 6.18."""
    if src is None:
        return f"WARNING: CPU: {cpu} PID: {pid} at {func}"
    return f"WARNING: CPU: {cpu} PID: {pid} at {src} {func}"


def header_7x(src: str | None, func: str, cpu: int, comm: str, pid: int) -> str:
    """__warn()'s first line from 6.19 on: pr_warn("WARNING: %s:%d at %pS, CPU#%d: %s/%d\\n")."""
    if src is None:
        return f"WARNING: at {func}, CPU#{cpu}: {comm}/{pid}"
    return f"WARNING: {src} at {func}, CPU#{cpu}: {comm}/{pid}"


def x86_warning(header: str, rip: str, trace: list[str], before: list[str] = (),
                after: list[str] = ()) -> list[str]:
    """A WARN() on x86: cut here, the WARN message (__warn_printk prints it
    first), the header, what __warn() prints after it (its args on other
    architectures), registers, the trapped stack, the end marker."""
    return (["------------[ cut here ]------------", *before, header, *after,
             "Modules linked in: uvcvideo videobuf2_v4l2 videodev mc",
             "CPU: 1 UID: 0 PID: 245 Comm: stress-agent Not tainted 7.3.0-dmaharness #1 PREEMPT(voluntary) ",
             "Hardware name: QEMU Standard PC (i440FX + PIIX, 1996), BIOS 1.16.3-debian-1.16.3-2 04/01/2014",
             f"RIP: 0010:{rip}",
             "Code: 48 8b 7b 10 e8 5e 2f ff ff 48 89 df e8 26 f1 ff ff 90 <0f> 0b 90 e9 61 ff ff ff",
             "RSP: 0018:ffffc90000d27d98 EFLAGS: 00010246",
             "RAX: 0000000000000000 RBX: ffff888008a3c000 RCX: 0000000000000000",
             "Call Trace:", " <TASK>", " ? __warn+0xc5/0x2f0", " ? report_bug+0x2c0/0x2f0",
             *[" " + f for f in trace], " </TASK>",
             "irq event stamp: 40128",
             "hardirqs last  enabled at (40127): [<ffffffff8200e9a5>] _raw_spin_unlock_irqrestore+0x35/0x60",
             "---[ end trace 0000000000000000 ]---"])


def arm64_warning(header: str, pc: str, trace: list[str]) -> list[str]:
    """A WARN_ON() on arm64: no <TASK> markers, "pc :" instead of RIP,
    (P)/(L) marks after the first frames."""
    return ["------------[ cut here ]------------", header,
            "Modules linked in: uvcvideo",
            "CPU: 0 UID: 0 PID: 12 Comm: kworker/0:1 Not tainted 7.3.0-dmaharness #1 PREEMPT ",
            "pstate: 60400005 (nZCv daif +PAN -UAO -TCO -DIT -SSBS BTYPE=--)",
            f"pc : {pc}", f"lr : {pc}", "sp : ffff80008000bc30",
            "Call trace:", f" {pc} (P)", *[" " + f for f in trace],
            "---[ end trace 0000000000000000 ]---"]


# (name, src or None, header function as %pS prints it, what the report is
# made of: a function of (header) -> lines, the expected title, guilty frame
# and kind, the rows for the 6.x and 7.x headers)
WARN_CASES = [
    ("driver WARN with its message first (x86)",
     "drivers/media/usb/uvc/uvc_v4l2.c:662", "uvc_v4l2_release+0x1a2/0x210 [uvcvideo]",
     lambda h: x86_warning(h, "uvc_v4l2_release+0x1a2/0x210 [uvcvideo]",
                           ["v4l2_release+0x21d/0x2c0 [videodev]", "__fput+0x1fa/0x9b0"],
                           before=["uvcvideo: stream 1 still running at release"]),
     "WARNING in uvc_v4l2_release", "uvc_v4l2_release", "WARNING", "warning", "warning-file-at"),
    ("message after the header (warn_slowpath_fmt)",
     "drivers/media/usb/uvc/uvc_v4l2.c:662", "uvc_v4l2_release+0x1a2/0x210 [uvcvideo]",
     lambda h: x86_warning(h, "uvc_v4l2_release+0x1a2/0x210 [uvcvideo]",
                           ["v4l2_release+0x21d/0x2c0 [videodev]"],
                           after=["uvcvideo: stream 1 still running at release"]),
     "WARNING in uvc_v4l2_release", "uvc_v4l2_release", "WARNING", "warning", "warning-file-at"),
    # The header names fast_dput; syzkaller skips it and dput: the title is
    # the stack's, not the header's.
    ("header function skipped, title from the stack",
     "fs/dcache.c:829", "fast_dput+0x334/0x430",
     lambda h: x86_warning(h, "fast_dput+0x334/0x430",
                           ["dput+0x4a/0x2c0", "uvc_v4l2_release+0x1a2/0x210 [uvcvideo]"]),
     "WARNING in uvc_v4l2_release", "uvc_v4l2_release", "WARNING", "warning", "warning-file-at"),
    ("refcount", "lib/refcount.c:28", "refcount_warn_saturate+0x13c/0x174",
     lambda h: x86_warning(h, "refcount_warn_saturate+0x13c/0x174",
                           ["uvc_status_cleanup+0x20/0x40 [uvcvideo]"],
                           before=["refcount_t: underflow; use-after-free."]),
     "WARNING: refcount bug in uvc_status_cleanup", "uvc_status_cleanup", "WARNING",
     "refcount", "refcount"),
    ("lockdep", "kernel/locking/lockdep.c:232", "hlock_class+0x10c/0x130",
     lambda h: x86_warning(h, "hlock_class+0x10c/0x130",
                           ["__lock_acquire+0x1fa/0x2c0", "lock_acquire+0x1fa/0x2c0",
                            "uvc_queue_buffer+0x20/0x40 [uvcvideo]"],
                           before=["DEBUG_LOCKS_WARN_ON(1)"]),
     "WARNING: locking bug in uvc_queue_buffer", "uvc_queue_buffer", "LOCKDEP",
     "locking-bug", "locking-bug"),
    ("usb_submit_urb", "drivers/usb/core/urb.c:379", "usb_submit_urb+0x72a/0x1150",
     lambda h: x86_warning(h, "usb_submit_urb+0x72a/0x1150",
                           ["uvc_status_start+0x4f/0x70 [uvcvideo]",
                            "uvc_v4l2_open+0x1f7/0x2c0 [uvcvideo]"],
                           before=["URB 00000000c1d2e3f4 submitted while active"]),
     "WARNING in uvc_status_start/usb_submit_urb", "uvc_status_start", "WARNING",
     "usb-submit-urb", "usb-submit-urb"),
    ("kmalloc", "mm/slab_common.c:1012", "kmalloc_slab+0x5d/0x70",
     lambda h: x86_warning(h, "kmalloc_slab+0x5d/0x70",
                           ["__kmalloc_noprof+0x4a/0x2c0", "uvc_alloc_entity+0x5f/0x210 [uvcvideo]"]),
     "WARNING: kmalloc bug in uvc_alloc_entity", "uvc_alloc_entity", "WARNING",
     "kmalloc-bug", "kmalloc-bug"),
    ("ODEBUG", "lib/debugobjects.c:615", "debug_print_object+0x1a1/0x2c0",
     lambda h: x86_warning(h, "debug_print_object+0x1a1/0x2c0",
                           ["debug_check_no_obj_freed+0x44a/0x550", "kfree+0x13b/0x660",
                            "uvc_delete+0x1c8/0x2a0 [uvcvideo]"],
                           before=["ODEBUG: free active (active state 0) object: ffff88807b3c4490 "
                                   "object type: timer_list hint: uvc_ctrl_timer+0x0/0x350"]),
     "WARNING: ODEBUG bug in uvc_delete", "uvc_delete", "WARNING", "odebug", "odebug"),
    ("arm64, no task markers", "drivers/media/usb/uvc/uvc_video.c:1200",
     "uvc_video_complete+0x1c/0x40 [uvcvideo]",
     lambda h: arm64_warning(h, "uvc_video_complete+0x1c/0x40 [uvcvideo]",
                             ["__usb_hcd_giveback_urb+0x9c/0x160", "usb_giveback_urb_bh+0xa0/0x140"]),
     "WARNING in uvc_video_complete", "uvc_video_complete", "WARNING", "warning", "warning-file-at"),
    ("header after a subsystem prefix", "drivers/usb/host/xhci-ring.c:1234",
     "xhci_handle_cmd+0x1a2/0x210",
     lambda h: x86_warning("xhci_hcd 0000:00:04.0: " + h, "xhci_handle_cmd+0x1a2/0x210",
                           ["xhci_irq+0x21d/0x2c0"]),
     "WARNING in xhci_handle_cmd", "xhci_handle_cmd", "WARNING", "warning", "warning-file-at"),
]


def one(test: unittest.TestCase, text: str) -> Report:
    reps = parse(text)
    test.assertEqual(len(reps), 1, [r.title for r in reps])
    return reps[0]


def same_report(test: unittest.TestCase, old: Report, new: Report) -> None:
    """Two parses of one report whose header line alone differs."""
    for what in ("title", "alt_titles", "guilty_frame", "stack", "stack_lines", "aux_stacks",
                 "kind", "message", "corrupted", "corrupted_reason", "truncated", "first_line",
                 "last_line", "timestamp", "context"):
        test.assertEqual(getattr(new, what), getattr(old, what), what)
    test.assertEqual(len(new.raw), len(old.raw))
    test.assertEqual([a for a, b in zip(old.raw, new.raw) if a != b],
                     [ln for ln in old.raw if ln.startswith("WARNING: CPU: ") or ": WARNING: " in ln],
                     "only the header line differs")


class WarningFirstLine(unittest.TestCase):
    """The 7.x __warn() first line gives the report the 6.x one gives."""

    def test_new_header_gives_the_old_headers_report(self):
        for name, src, func, lines, title, guilty, kind, row6, row7 in WARN_CASES:
            for ctx in ("T245", None):
                with self.subTest(name, ctx=ctx):
                    old = one(self, tagged(lines(header_6x(src, func, 1, "stress-agent", 245)), ctx))
                    new = one(self, tagged(lines(header_7x(src, func, 1, "stress-agent", 245)), ctx))
                    self.assertEqual((new.title, new.guilty_frame, new.kind), (title, guilty, kind))
                    same_report(self, old, new)
                    self.assertEqual((old.rule, new.rule), (row6, row7))

    def test_new_header_without_timestamps(self):
        name, src, func, lines, title, *_ = WARN_CASES[0]
        old = one(self, "\n".join(lines(header_6x(src, func, 0, "agent", 245))) + "\n")
        new = one(self, "\n".join(lines(header_7x(src, func, 0, "agent", 245))) + "\n")
        self.assertEqual(new.title, title)
        same_report(self, old, new)

    def test_condition_in_the_header(self):
        # CONFIG_DEBUG_BUGVERBOSE_DETAILED off x86: "[cond] " before the file
        # (syzkaller's row for "WARNING: \[.*\] {{SRC}} at {{FUNC}}").
        src, func = "drivers/media/usb/uvc/uvc_v4l2.c:662", "uvc_v4l2_release+0x1a2/0x210 [uvcvideo]"
        lines = WARN_CASES[0][3]
        plain = one(self, tagged(lines(header_7x(src, func, 1, "stress-agent", 245))))
        cond = one(self, tagged(lines(header_7x("[refcount_read(&stream->ref) != 0] " + src, func,
                                                1, "stress-agent", 245))))
        self.assertEqual(cond.rule, "warning-bracket")
        self.assertEqual((cond.title, cond.guilty_frame, cond.stack),
                         (plain.title, plain.guilty_frame, plain.stack))

    def test_caller_not_known(self):
        # Some 6.19-rc trees printed the caller as 0x0 (syzkaller's
        # "WARNING: {{SRC}} at 0x\d+, CPU#\d+" row): the title is the stack's.
        lines = WARN_CASES[0][3]
        src = "drivers/media/usb/uvc/uvc_v4l2.c:662"
        old = one(self, tagged(lines(header_6x(src, "uvc_v4l2_release+0x1a2/0x210 [uvcvideo]", 1,
                                               "stress-agent", 245))))
        new = one(self, tagged(lines(f"WARNING: {src} at 0x0, CPU#1: stress-agent/245")))
        self.assertEqual(new.rule, "warning-at-address")
        self.assertEqual((new.title, new.guilty_frame, new.stack, new.message),
                         (old.title, old.guilty_frame, old.stack, old.message))

    def test_without_a_file_the_line_is_the_title(self):
        # CONFIG_DEBUG_BUGVERBOSE=n: no row of syzkaller's matches either
        # shape; extractDescription titles the report by its header line.
        lines = WARN_CASES[0][3]
        func = "uvc_v4l2_release+0x1a2/0x210 [uvcvideo]"
        old = one(self, tagged(lines(header_6x(None, func, 1, "stress-agent", 245))))
        new = one(self, tagged(lines(header_7x(None, func, 1, "stress-agent", 245))))
        self.assertEqual(old.title, "WARNING: CPU: NUM PID: NUM at uvc_v4l2_release [uvcvideo]")
        self.assertEqual(new.title, "WARNING: at uvc_v4l2_release [uvcvideo], CPU: stress-agent/NUM")
        self.assertEqual((new.kind, new.rule, new.corrupted), ("WARNING", None, False))
        self.assertEqual(new.stack, old.stack)

    def test_panic_on_warn_after_the_new_header(self):
        src, func = "drivers/media/usb/uvc/uvc_v4l2.c:662", "uvc_v4l2_release+0x1a2/0x210 [uvcvideo]"

        def lines(h):
            return ["------------[ cut here ]------------", h, "Modules linked in: uvcvideo",
                    "Kernel panic - not syncing: kernel: panic_on_warn set ...",
                    "CPU: 1 UID: 0 PID: 245 Comm: stress-agent Not tainted 7.3.0-dmaharness #1",
                    "Call Trace:", " <TASK>", " dump_stack_lvl+0x5b/0x77", " panic+0x2f0/0x6a0",
                    " check_panic_on_warn+0x8a/0xb0", " __warn+0xd0/0x2f0", " report_bug+0x2c0/0x2f0",
                    " handle_bug+0x3c/0x70", " exc_invalid_op+0x17/0x40",
                    " asm_exc_invalid_op+0x1a/0x20", f"RIP: 0010:{func}",
                    " v4l2_release+0x21d/0x2c0 [videodev]", " </TASK>", "Kernel Offset: disabled",
                    "---[ end Kernel panic - not syncing: kernel: panic_on_warn set ... ]---"]
        old = one(self, tagged(lines(header_6x(src, func, 1, "stress-agent", 245))))
        new = one(self, tagged(lines(header_7x(src, func, 1, "stress-agent", 245))))
        self.assertEqual(new.title, "WARNING in uvc_v4l2_release")
        same_report(self, old, new)


class DmaDebugFirstLine(unittest.TestCase):
    """dma-debug's and the detector's WARN()s (our own titles, kinds
    DMA-API/DETECTOR) in the 7.x first line."""

    MSG = ("DMA-API: xhci_hcd 0000:00:04.0: device driver frees DMA memory with different size "
           "[device address=0x000000000a3c6000] [map size=4096 bytes] [unmap size=2048 bytes]")
    SHARING = ("DMA-API: xhci_hcd 0000:00:04.0: device driver maps a buffer that shares a cache "
               "line with other data of its object [object offset=977] [object size=2048] "
               "[cache=kmalloc-2k] [buffer size=16] [shared bytes before=81 after=31] "
               "[line size=128] [DMA_FROM_DEVICE]")
    FREE = ["debug_dma_free_coherent+0x1a8/0x230", "dma_free_attrs+0xd1/0x1c0",
            "uvc_status_cleanup+0x5c/0xa0 [uvcvideo]", "uvc_delete+0x1c8/0x2a0 [uvcvideo]"]
    MAP = ["debug_dma_map_page+0x1a7/0x1f0", "dma_map_page_attrs+0x1c3/0x440",
           "usb_hcd_map_urb_for_dma+0x6a4/0x890", "usb_hcd_submit_urb+0x183/0x11a0",
           "usb_submit_urb+0x72a/0x1150", "uvc_status_start+0x4f/0x70 [uvcvideo]"]

    def both(self, src, func, lines) -> tuple[Report, Report]:
        old = one(self, tagged(lines(header_6x(src, func, 0, "swapper/0", 0)), "C0"))
        new = one(self, tagged(lines(header_7x(src, func, 0, "swapper/0", 0)), "C0"))
        same_report(self, old, new)
        return old, new

    def test_message_before_the_header(self):
        _, new = self.both("kernel/dma/debug.c:1041", "check_unmap+0x6b5/0x1c80",
                           lambda h: x86_warning(h, "check_unmap+0x6b5/0x1c80", self.FREE,
                                                 before=[self.MSG]))
        self.assertEqual((new.kind, new.rule, new.title), (
            "DMA-API", "dma-api",
            "DMA-API: device driver frees DMA memory with different size in uvc_status_cleanup"))
        self.assertTrue(new.message.startswith("device driver frees DMA memory with different size"))

    def test_message_after_the_header(self):
        _, new = self.both("kernel/dma/debug.c:1041", "check_unmap+0x6b5/0x1c80",
                           lambda h: x86_warning(h, "check_unmap+0x6b5/0x1c80", self.FREE,
                                                 after=[self.MSG]))
        self.assertEqual((new.kind, new.title), (
            "DMA-API",
            "DMA-API: device driver frees DMA memory with different size in uvc_status_cleanup"))

    def test_detector_report(self):
        _, new = self.both("kernel/dma/debug_cacheline.c:160", "cl_report+0x106/0x117",
                           lambda h: x86_warning(h, "cl_report+0x106/0x117",
                                                 ["cl_check_sharing+0x2a/0x90"] + self.MAP,
                                                 before=[self.SHARING]))
        self.assertEqual((new.kind, new.title), (
            "DETECTOR", "DMA-API: device driver maps a buffer that shares a cache line with "
                        "other data of its object in uvc_status_start"))

    def test_dma_debug_warning_without_message(self):
        _, new = self.both("kernel/dma/debug.c:1041", "check_unmap+0x6b5/0x1c80",
                           lambda h: x86_warning(h, "check_unmap+0x6b5/0x1c80", self.FREE))
        self.assertEqual((new.kind, new.rule, new.title),
                         ("DMA-API", "dma-debug-warning", "WARNING in uvc_status_cleanup"))


OWNER_STACK = [
    "task:kworker/0:2     state:D stack:28520 pid:87    tgid:87    ppid:2      task_flags:0x4208060 flags:0x00004000",
    "Workqueue: events uvc_ctrl_status_event_work [uvcvideo]",
    "Call Trace:", " <TASK>", " __schedule+0x8a9/0x1000", " schedule+0x3c/0xa0",
    " schedule_timeout+0x1c2/0x270", " __wait_for_common+0x1f5/0x4a0", " usb_kill_urb+0x1cb/0x270",
    " uvc_status_stop+0x3c/0x70 [uvcvideo]", " uvc_ctrl_status_event_work+0x9a/0x120 [uvcvideo]",
    " process_one_work+0x8a1/0x1500", " worker_thread+0x5b5/0x1070", " kthread+0x2d3/0x3a0",
    " ret_from_fork+0x4c/0x80", " ret_from_fork_asm+0x1a/0x30", " </TASK>",
]
OWNER = ["__schedule", "schedule", "schedule_timeout", "__wait_for_common", "usb_kill_urb",
         "uvc_status_stop", "uvc_ctrl_status_event_work", "process_one_work", "worker_thread",
         "kthread", "ret_from_fork", "ret_from_fork_asm"]
HUNG_STACK = ["__schedule", "schedule", "schedule_preempt_disabled", "__mutex_lock",
              "mutex_lock_nested", "uvc_v4l2_open", "v4l2_open", "chrdev_open"]
LOCKS = ["", "Showing all locks held in the system:", "1 lock held by khungtaskd/38:",
         " #0: ffffffff83b8a2e0 (rcu_read_lock){....}-{1:3}, at: debug_show_all_locks+0x36/0x1c0",
         "", "=============================================", ""]

# kernel/hung_task.c debug_show_blocker(): (line, is a stack of the owner printed after it)
BLOCKERS = [
    ("INFO: task stress-agent:251 is blocked on a mutex likely owned by task kworker/0:2:87.", True),
    ("INFO: task stress-agent:251 blocked on a semaphore likely last held by task kworker/0:2:87", True),
    ("INFO: task stress-agent:251 <writer> blocked on an rw-semaphore likely owned by task "
     "kworker/0:2:87 <reader>", True),
    ("INFO: task stress-agent:251 <reader> blocked on an rw-semaphore likely owned by task "
     "kworker/0:2:87 <writer>", True),
    ("INFO: task stress-agent:251 is blocked on a mutex, but the owner is not found.", False),
    ("INFO: task stress-agent:251 is blocked on a semaphore, but the last holder is not found.", False),
    ("INFO: task stress-agent:251 is blocked on an rw-semaphore, but the owner is not found.", False),
]


def hung(comm: str = "stress-agent", pid: int = 251, markers: bool = True) -> list[str]:
    """hung_task_info(): the header, then sched_show_task() of the hung task."""
    frames = [" __schedule+0x8a9/0x1000", " schedule+0x3c/0xa0",
              " schedule_preempt_disabled+0x15/0x20", " __mutex_lock+0x4d3/0xa40",
              " mutex_lock_nested+0x1b/0x30", " uvc_v4l2_open+0x5c/0x2c0 [uvcvideo]",
              " v4l2_open+0x184/0x239 [videodev]", " chrdev_open+0x1b1/0x500"]
    return [f"INFO: task {comm}:{pid} blocked for more than 61 seconds.",
            "      Not tainted 7.3.0-dmaharness #1",
            "\"echo 0 > /proc/sys/kernel/hung_task_timeout_secs\" disables this message.",
            f"task:{comm:<15} state:D stack:27680 pid:{pid:<5} tgid:{pid:<5} ppid:1      "
            "task_flags:0x400000 flags:0x00004002",
            "Call Trace:" if markers else "Call trace:",
            *([" <TASK>"] + frames + [" </TASK>"] if markers else frames)]


class HungTaskBlocker(unittest.TestCase):
    """hung_task's blocker line and the owner's stack stay in the hung task's report."""

    def test_owner_stack_is_part_of_the_hung_report(self):
        lines = hung() + [BLOCKERS[0][0]] + OWNER_STACK + LOCKS
        r = one(self, tagged(lines, "T38"))
        self.assertEqual((r.title, r.kind, r.rule, r.guilty_frame),
                         ("INFO: task hung in uvc_v4l2_open", "HUNG", "task-hung", "uvc_v4l2_open"))
        self.assertEqual(r.stack, HUNG_STACK)
        self.assertEqual(r.aux_stacks, {"Lock owner": OWNER})
        self.assertIn(BLOCKERS[0][0], r.raw)
        self.assertEqual(r.raw[-1], " </TASK>")
        self.assertEqual(r.last_line, len(hung()) + 1 + len(OWNER_STACK))
        self.assertFalse(r.truncated)
        self.assertFalse(r.corrupted, r.corrupted_reason)
        self.assertNotIn("Showing all locks held in the system:", r.raw)

    def test_title_as_without_the_blocker(self):
        # syzkaller reads the title's frame in the first Call Trace only: the
        # owner's stack never names the report, even when the hung task's
        # stack has nothing but waiting machinery.
        machinery = [ln for ln in hung() if "uvc_" not in ln and "v4l2_" not in ln
                     and "chrdev" not in ln]
        for head in (hung(), machinery):
            with self.subTest(frames=len(head)):
                alone = one(self, tagged(head + LOCKS, "T38"))
                joined = one(self, tagged(head + [BLOCKERS[0][0]] + OWNER_STACK + LOCKS, "T38"))
                for what in ("title", "alt_titles", "guilty_frame", "stack", "kind", "corrupted",
                             "corrupted_reason", "truncated"):
                    self.assertEqual(getattr(joined, what), getattr(alone, what), what)
        self.assertEqual(joined.title, "INFO: task hung in corrupted")

    def test_every_wording(self):
        for line, owner in BLOCKERS:
            for ctx in ("T38", None):
                with self.subTest(line, ctx=ctx):
                    lines = hung() + [line] + (OWNER_STACK if owner else []) + LOCKS
                    r = one(self, tagged(lines, ctx))
                    self.assertEqual(r.title, "INFO: task hung in uvc_v4l2_open")
                    self.assertEqual(r.raw.index(line), len(hung()))
                    self.assertEqual(r.aux_stacks, {"Lock owner": OWNER} if owner else {})
                    # Without an owner's stack the report ends at the line.
                    self.assertEqual(r.last_line, len(hung()) + 1 + (len(OWNER_STACK) if owner else 0))
                    self.assertFalse(r.truncated)

    def test_owner_hung_itself_is_reported_on_its_own(self):
        # The owner's stack is not printed after the line when the owner is
        # hung too: hung_task reports it with a header of its own.
        owner = hung("kworker/0:2", 87)
        lines = hung() + [BLOCKERS[0][0]] + owner + LOCKS
        reps = parse(tagged(lines, "T38"))
        self.assertEqual([r.title for r in reps], ["INFO: task hung in uvc_v4l2_open"] * 2)
        self.assertEqual([r.truncated for r in reps], [False, False])
        self.assertEqual(reps[0].last_line, len(hung()) + 1)
        self.assertEqual(reps[1].first_line, len(hung()) + 2)
        self.assertEqual(reps[0].aux_stacks, {})

    def test_two_hung_tasks_each_with_its_blocker(self):
        lines = (hung() + [BLOCKERS[0][0]] + OWNER_STACK
                 + hung("v4l_id", 263) + [BLOCKERS[6][0].replace("stress-agent:251", "v4l_id:263")]
                 + LOCKS)
        reps = parse(tagged(lines, "T38"))
        self.assertEqual([(r.title, r.truncated, list(r.aux_stacks)) for r in reps],
                         [("INFO: task hung in uvc_v4l2_open", False, ["Lock owner"]),
                          ("INFO: task hung in uvc_v4l2_open", False, [])])
        self.assertEqual(reps[1].last_line, len(lines) - len(LOCKS))

    def test_arm64_stacks_without_task_markers(self):
        owner = [ln for ln in OWNER_STACK if "TASK>" not in ln]
        owner[owner.index("Call Trace:")] = "Call trace:"
        lines = hung(markers=False) + [BLOCKERS[0][0]] + owner + LOCKS
        r = one(self, tagged(lines, None))
        self.assertEqual(r.title, "INFO: task hung in uvc_v4l2_open")
        self.assertEqual(r.stack, HUNG_STACK)
        self.assertEqual(r.aux_stacks, {"Lock owner": OWNER})
        self.assertEqual(r.last_line, len(hung(markers=False)) + 1 + len(owner))
        self.assertFalse(r.truncated)

    def test_other_contexts_in_between(self):
        text = ""
        chatter = "usb 1-1: reset high-speed USB device number 2 using xhci_hcd"
        for i, line in enumerate(hung() + [BLOCKERS[0][0]] + OWNER_STACK + LOCKS):
            text += f"[{10 + i / 1000:12.6f}][   T38] {line}\n"
            if line in (" </TASK>", BLOCKERS[0][0]):
                text += f"[{10 + i / 1000:12.6f}][   T41] {chatter}\n"
        r = one(self, text)
        self.assertEqual(r.title, "INFO: task hung in uvc_v4l2_open")
        self.assertEqual(r.aux_stacks, {"Lock owner": OWNER})
        self.assertNotIn(chatter, r.raw)

    def test_blocker_line_alone_is_no_report(self):
        # Its hung task's report lost (or cut): no report of its own, and
        # the owner's stack is no report either.
        for line, _ in BLOCKERS:
            with self.subTest(line):
                self.assertEqual(parse(tagged([line] + OWNER_STACK + LOCKS, "T38")), [])

    def test_not_a_continuation_of_other_reports(self):
        # A KASAN report open in the same context goes on as before.
        kasan = ["==================================================================",
                 "BUG: KASAN: slab-use-after-free in uvc_v4l2_open+0x5c/0x2c0 [uvcvideo]",
                 "Read of size 8 at addr ffff888009ab4e18 by task stress-agent/251",
                 "Call Trace:", " <TASK>", " uvc_v4l2_open+0x5c/0x2c0 [uvcvideo]", " </TASK>",
                 BLOCKERS[0][0],
                 "==================================================================",
                 ]
        r = one(self, tagged(kasan, "T251"))
        self.assertEqual(r.title, "KASAN: slab-use-after-free Read in uvc_v4l2_open")
        self.assertEqual(r.aux_stacks, {})


class Linux7Fixture(unittest.TestCase):
    """tests/fixtures/logs/linux-7-formats.log (its header is checked by
    test_reports_golden): what the header does not say."""

    def test_reports(self):
        text = golden.read_golden((FIXTURES / "linux-7-formats.log").read_text(encoding="utf-8")).log
        reps = parse(text)
        self.assertEqual([(r.title, r.context, r.truncated) for r in reps], [
            ("WARNING in uvc_v4l2_release", "T245", False),
            ("DMA-API: device driver frees DMA memory with different size in uvc_status_cleanup",
             "C0", False),
            ("INFO: task hung in uvc_v4l2_open", "T38", False),
            ("INFO: task hung in uvc_query_v4l2_ctrl", "T38", False),
        ])
        warn, dma, hung1, hung2 = reps
        self.assertEqual(warn.message, "uvcvideo: stream 1 still running at release")
        self.assertEqual(warn.stack[:3], ["uvc_v4l2_release", "v4l2_release", "__fput"])
        self.assertTrue(dma.message.startswith("device driver frees DMA memory with different size"))
        self.assertEqual(hung1.aux_stacks["Lock owner"][4:6], ["usb_kill_urb", "uvc_status_stop"])
        self.assertTrue(hung1.raw[-1].endswith("</TASK>"))
        self.assertTrue(hung2.raw[-1].startswith("INFO: task v4l_id:263 is blocked on an rw-semaphore"))
        self.assertEqual(hung2.aux_stacks, {})




class DmaDebugMappedAt(unittest.TestCase):
    """debug.c sets pr_fmt to "DMA-API: ", so a real kernel prints
    "DMA-API: Mapped at:" where the hand-written fixtures say "Mapped at:":
    the mapping stack is the report's either way."""

    def test_real_prefix_keeps_the_mapping_stack(self):
        text = (FIXTURES / "dma-api-x86-giveback.log").read_text()
        self.assertIn("] Mapped at:", text)
        real = text.replace("] Mapped at:", "] DMA-API: Mapped at:")
        a, b = parse(text), parse(real)
        self.assertEqual([r.title for r in a], [r.title for r in b])
        self.assertTrue(any("Mapped at" in r.aux_stacks for r in a))
        self.assertEqual([r.aux_stacks for r in a], [r.aux_stacks for r in b])
        self.assertEqual([r.last_line for r in a], [r.last_line for r in b])


if __name__ == "__main__":
    unittest.main()
