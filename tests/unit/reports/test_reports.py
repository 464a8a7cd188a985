"""Unit tests for harness.reports.engine (console log parser)."""

from __future__ import annotations

import contextlib
import io
import json
import os
import tempfile
import unittest
from unittest import mock
from pathlib import Path

from harness.reports import golden
from harness.reports.engine import Report, fold, parse
from harness.cli import main, reportscli

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "logs"


def log(name: str) -> str:
    """A fixture's log, without its golden header."""
    return golden.read_golden((FIXTURES / name).read_text(encoding="utf-8")).log


def load(name: str) -> list[Report]:
    return parse(log(name))


def titles(reps: list[Report]) -> list[str]:
    return [r.title for r in reps]


def tagged(lines: list[str], start: float = 10.0, ctx: str | None = None) -> str:
    """Give hand-written report lines timestamps (and a caller tag)."""
    out = []
    for i, line in enumerate(lines):
        tag = f"[{ctx:>6}]" if ctx else ""
        out.append(f"[{start + i / 1000:12.6f}]{tag} {line}")
    return "\n".join(out) + "\n"


class FixtureTitles(unittest.TestCase):
    """Every fixture gives exactly the reports (and titles) expected."""

    def test_kasan_use_after_free(self):
        reps = load("kasan-uaf-timestamps.log")
        self.assertEqual(titles(reps), ["KASAN: slab-use-after-free Read in uvc_status_complete"])
        r = reps[0]
        self.assertEqual(r.kind, "KASAN")
        self.assertEqual(r.guilty_frame, "uvc_status_complete")
        self.assertAlmostEqual(r.timestamp, 15.300518)
        self.assertFalse(r.truncated)
        # Report starts at the ===== banner (line 10) and ends at the closing one.
        self.assertEqual(r.first_line, 10)
        self.assertTrue(r.raw[0].startswith("====="))
        self.assertTrue(r.raw[-1].startswith("====="))
        self.assertNotIn("Disabling lock debugging due to kernel taint", r.raw)
        # Allocation and free stacks are kept apart from the access stack.
        self.assertEqual(r.aux_stacks["Allocated by task"][3], "uvc_probe")
        self.assertIn("uvc_delete", r.aux_stacks["Freed by task"])
        self.assertNotIn("uvc_probe", r.stack)

    def test_dma_api_giveback_uses_mapped_at_stack_and_folds(self):
        reps = load("dma-api-x86-giveback.log")
        want = "DMA-API: device driver frees DMA memory with different size in uvc_status_start"
        self.assertEqual(titles(reps), [want, want])
        for r in reps:
            self.assertEqual(r.kind, "DMA-API")
            self.assertEqual(r.guilty_frame, "uvc_status_start")
            self.assertTrue(r.message.startswith("device driver frees DMA memory with different size"))
            self.assertEqual(r.stack[0], "check_unmap")  # the RIP comes first
            self.assertEqual(r.stack_lines[0], "check_unmap+0x6b5/0x1c80")
            self.assertEqual(r.aux_stacks["Mapped at"][-1], "uvc_status_start")
        # The report spans cut-here line .. Mapped at, not the next driver line.
        self.assertEqual(reps[0].first_line, 5)
        self.assertEqual(reps[0].raw[0], "------------[ cut here ]------------")
        self.assertEqual(reps[0].raw[-1], " uvc_status_start+0x4f/0x70 [uvcvideo]")
        sigs = fold(reps)
        self.assertEqual(len(sigs), 1)
        self.assertEqual(sigs[0].count, 2)
        self.assertEqual(sigs[0].first.first_line, 5)

    def test_detector_two_tasks_interleaved_with_caller_tags(self):
        reps = load("detector-two-cpus-caller-tags.log")
        self.assertEqual(titles(reps), [
            "DMA-API: mapping shares a cache line with CPU-owned data in uvc_status_start",
            "KASAN: dma-owned Read in evdev_do_ioctl",
            "KASAN: dma-owned Write in uvc_status_stop",
        ])
        self.assertEqual([r.kind for r in reps], ["DETECTOR"] * 3)
        self.assertEqual([r.context for r in reps], ["T245", "T300", "T245"])
        warn, kasan, _ = reps
        # No line of the other task leaked into either report.
        self.assertFalse(any("evdev" in line or "kasan" in line for line in warn.raw))
        self.assertFalse(any("uvc_v4l2_open" in line for line in kasan.raw))
        self.assertFalse(any("1024 interrupts" in line for line in warn.raw + kasan.raw))
        self.assertIn("uvc_v4l2_open", warn.stack)
        self.assertNotIn("uvc_status_start", kasan.stack)  # mapping stack is aux
        made_at = [v for k, v in kasan.aux_stacks.items() if k.endswith("made at")]
        self.assertEqual(made_at, [["debug_dma_map_page", "dma_map_page_attrs",
                                    "usb_hcd_map_urb_for_dma", "uvc_status_start"]])
        self.assertFalse(any(r.truncated for r in reps))

    def test_no_timestamps_and_truncated(self):
        reps = load("no-timestamps-truncated.log")
        self.assertEqual(titles(reps), [
            "WARNING in uvc_video_decode_start",
            "possible deadlock in uvc_status_stop",
            "general protection fault in uvc_queue_buffer",
        ])
        self.assertEqual([r.kind for r in reps], ["WARNING", "LOCKDEP", "GPF"])
        self.assertTrue(all(r.timestamp is None for r in reps))
        self.assertEqual([r.truncated for r in reps], [False, False, True])
        gpf = reps[2]
        self.assertEqual(gpf.stack, ["uvc_queue_buffer", "__enqueue_in_driver", "vb2_core_qbuf"])
        self.assertIn("KASAN: null-ptr-deref in range [0x0000000000000018-0x000000000000001f]", gpf.raw)
        lockdep = reps[1]
        self.assertEqual(lockdep.raw[0], "======================================================")
        self.assertEqual(lockdep.raw[-1], " </TASK>")
        self.assertEqual(lockdep.aux_stacks["lockdep chain"][1], "uvc_video_start_streaming")

    def test_hangs_and_stalls(self):
        reps = load("hangs-stalls.log")
        self.assertEqual(titles(reps), [
            "INFO: task hung in uvc_v4l2_release",
            "INFO: task hung in synchronize_rcu",
            # Stalls are named by what dispatched the loop (syzkaller's
            # stall extractor): the frame before cpu_startup_entry, vfs_ioctl.
            "INFO: rcu detected stall in do_idle",
            "BUG: soft lockup in v4l2_ioctl",
        ])
        self.assertEqual([r.kind for r in reps], ["HUNG", "HUNG", "RCU", "SOFTLOCKUP"])
        # The hung task report ends at </TASK>: the lock dump is not in it.
        self.assertFalse(any("Showing all locks" in line for line in reps[1].raw))
        self.assertEqual(reps[3].stack[0], "_raw_spin_unlock_irqrestore")

    def test_oops_ubsan_kmemleak_panic_with_syslog_levels(self):
        reps = load("oops-ubsan-kmemleak-panic.log")
        self.assertEqual(titles(reps), [
            "UBSAN: array-index-out-of-bounds in uvc_status_complete",
            "memory leak in uvc_status_init",
            "memory leak in uvc_status_init",
            "kernel BUG in uvc_unregister_video",
            "BUG: unable to handle kernel NULL pointer dereference in uvc_v4l2_poll",
            "kernel panic: Fatal exception",
        ])
        # The panic that follows an oops says nothing new: corrupted, as
        # syzkaller judges it.
        self.assertEqual([r.corrupted for r in reps], [False] * 5 + [True])
        self.assertEqual([r.kind for r in reps],
                         ["UBSAN", "KMEMLEAK", "KMEMLEAK", "BUG", "BUG", "PANIC"])
        ubsan, leak1, leak2, kbug, null, panic = reps
        self.assertEqual(leak1.stack, ["kmalloc_trace", "uvc_status_init", "uvc_probe",
                                       "usb_probe_interface"])
        self.assertEqual(leak1.stack_lines[1], "uvc_status_init+0x5e/0x1d0 [uvcvideo]")
        self.assertEqual(null.stack_lines[0], "uvc_v4l2_poll.isra.0+0x3d/0xb0 [uvcvideo]")
        self.assertEqual(len(leak2.stack), 3)
        # "invalid opcode" continues "kernel BUG at", it is not a report of its own.
        self.assertIn("invalid opcode: 0000 [#1] PREEMPT SMP KASAN NOPTI", kbug.raw)
        self.assertEqual(kbug.first_line, 37)  # the cut-here line
        # The register dump after the end marker belongs to the oops.
        self.assertEqual(null.raw[-1], "RIP: 0010:uvc_v4l2_poll.isra.0+0x3d/0xb0 [uvcvideo]")
        self.assertIn("Oops: 0000 [#2] PREEMPT SMP KASAN NOPTI", null.raw)
        self.assertEqual(panic.raw[-1], "---[ end Kernel panic - not syncing: Fatal exception ]---")
        self.assertEqual(panic.message, "Fatal exception")
        sigs = fold(reps)
        self.assertEqual([(s.title, s.count) for s in sigs if s.count > 1],
                         [("memory leak in uvc_status_init", 2)])

    def test_rcu_stall_nmi_backtrace_from_other_cpu(self):
        reps = load("rcu-nmi-caller-tags.log")
        # No timer interrupt in the stalled CPU's NMI backtrace: syzkaller
        # cannot tell where the loop was dispatched from.
        self.assertEqual(titles(reps), ["INFO: rcu detected stall in corrupted"])
        r = reps[0]
        self.assertEqual((r.corrupted, r.corrupted_reason), (True, "extracted no frames"))
        self.assertEqual(r.context, "C0")
        self.assertEqual(r.stack[:2], ["uvc_status_wait_loop", "uvc_status_stop"])
        # The agent's own output (another task) is not part of the report.
        self.assertFalse(any(line.startswith("agent:") for line in r.raw))
        self.assertFalse(r.truncated)

    def test_linux_6_12_formats(self):
        reps = load("linux-6.12-formats.log")
        self.assertEqual(titles(reps), [
            "KASAN: slab-use-after-free Read in uvc_status_complete",
            "WARNING in uvc_status_stop",
            "BUG: unable to handle kernel NULL pointer dereference in uvc_ctrl_status_event",
            "memory leak in uvc_ctrl_init_device",
        ])
        self.assertEqual([r.context for r in reps], ["C0", "T245", "T251", "T312"])
        self.assertFalse(any(r.truncated for r in reps))
        kasan, warn, null, leak = reps
        self.assertEqual(kasan.aux_stacks["Freed by task"][-1], "uvc_delete")
        self.assertIn("Oops: Oops: 0000 [#1] PREEMPT SMP KASAN NOPTI", null.raw)
        self.assertEqual(null.raw[-1], "Code: 48 8b 5d 10 <48> 8b 43 10 48 85 c0")
        self.assertEqual(warn.stack[:2], ["uvc_status_stop", "uvc_v4l2_release"])
        self.assertNotIn("0x7f0d8c91a2e0", " ".join(warn.stack))
        self.assertEqual(leak.stack[1], "uvc_ctrl_init_device")

    def test_every_fixture_normalizes_frames(self):
        for path in sorted(FIXTURES.rglob("*.log")):
            for r in parse(log(str(path.relative_to(FIXTURES)))):
                for f in r.stack + [r.guilty_frame or ""]:
                    with self.subTest(log=path.name, title=r.title, frame=f):
                        self.assertNotIn("+0x", f)
                        self.assertNotIn("[", f)
                        self.assertNotIn(".", f)
                        self.assertNotIn(" ", f)
                        self.assertFalse(f.startswith("|"))
                with self.subTest(log=path.name, title=r.title, what="stack_lines"):
                    self.assertEqual(len(r.stack_lines), len(r.stack))
                    for name, text in zip(r.stack, r.stack_lines):
                        self.assertEqual(text.split("+")[0].split(" ")[0].split(".")[0], name)
                with self.subTest(log=path.name, title=r.title):
                    self.assertNotRegex(r.title, r"\[ *\d+\.\d+\]|\[ *[CT]\d+\]|0x[0-9a-f]|\+0x")
                    self.assertTrue(r.raw)
                    self.assertGreaterEqual(r.first_line, 1)


class Titles(unittest.TestCase):
    """Header formats and frame-skipping rules, on small hand-written logs."""

    def one(self, text: str) -> Report:
        reps = parse(text)
        self.assertEqual(len(reps), 1, [r.title for r in reps])
        return reps[0]

    def test_kasan_write_skips_mem_helpers(self):
        r = self.one(tagged([
            "==================================================================",
            "BUG: KASAN: slab-out-of-bounds in memcpy+0x23/0x60",
            "Write of size 32 at addr ffff888005a1c0f0 by task stress-agent/245",
            "",
            "CPU: 1 PID: 245 Comm: stress-agent Not tainted 6.1.0 #1",
            "Call Trace:",
            " <TASK>",
            " dump_stack_lvl+0x5b/0x77",
            " print_report+0x18a/0x46e",
            " kasan_report+0xa7/0xe0",
            " kasan_check_range+0x10d/0x1c0",
            " __asan_memcpy+0x3c/0x60",
            " memcpy+0x23/0x60",
            " uvc_ctrl_set_fixed.constprop.0+0x1c/0x40 [uvcvideo]",
            " uvc_ioctl_s_ctrl+0x5d/0x90 [uvcvideo]",
            " </TASK>",
            "==================================================================",
        ]))
        self.assertEqual(r.title, "KASAN: slab-out-of-bounds Write in uvc_ctrl_set_fixed")
        self.assertIn("__asan_memcpy", r.stack)

    def test_kasan_double_free_is_invalid_free(self):
        r = self.one(tagged([
            "BUG: KASAN: double-free in kfree+0x8e/0x1a0",
            "Free of addr ffff888005a1c000 by task kworker/0:1/12",
            "Call Trace:",
            " <TASK>",
            " kasan_report_invalid_free+0x6a/0x90",
            " kfree+0x8e/0x1a0",
            " uvc_status_cleanup+0x2a/0x50 [uvcvideo]",
            " </TASK>",
            "==================================================================",
        ]))
        self.assertEqual(r.title, "KASAN: invalid-free in uvc_status_cleanup")

    def test_truncated_after_kasan_header_uses_header_function(self):
        r = self.one("[   5.000000] ====================\n"
                     "[   5.000001] BUG: KASAN: use-after-free in uvc_status_stop+0x2d/0x90 [uvcvideo]\n"
                     "[   5.000002] Write of size 1 at addr ffff88800a3c4e20 by task a/1\n")
        self.assertEqual(r.title, "KASAN: use-after-free Write in uvc_status_stop")
        self.assertTrue(r.truncated)
        self.assertEqual(r.first_line, 1)

    def test_truncated_right_after_header_has_no_frame(self):
        r = self.one("INFO: task stress-agent:245 blocked for more than 120 seconds.\n"
                     "      Not tainted 6.1.0 #1")
        self.assertEqual(r.title, "INFO: task hung in corrupted")
        self.assertIsNone(r.guilty_frame)
        self.assertTrue(r.truncated)
        self.assertEqual((r.corrupted, r.corrupted_reason), (True, "extracted no frames"))

    def test_truncated_dma_owned_keeps_the_kasan_title_shape(self):
        r = self.one("BUG: KASAN: dma-owned in uvc_status_stop+0x2d/0x90 [uvcvideo]\n")
        self.assertEqual((r.kind, r.title), ("DETECTOR", "KASAN: dma-owned in uvc_status_stop"))
        self.assertTrue(r.truncated)
        self.assertEqual(r.corrupted_reason, "no stack trace in report")

    def test_kfence_stack_under_its_own_heading(self):
        r = self.one(tagged([
            "==================================================================",
            "BUG: KFENCE: out-of-bounds write in uvc_parse_format+0x4a1/0x5c0 [uvcvideo]",
            "",
            "Out-of-bounds write at 0x00000000b1c2d3e4 (16B right of kfence-#42):",
            " uvc_parse_format+0x4a1/0x5c0 [uvcvideo]",
            " uvc_parse_streaming+0x8d2/0xe90 [uvcvideo]",
            "",
            "kfence-#42: 0x00000000a1b2c3d4-0x00000000c3d4e5f6, size=64, cache=kmalloc-64",
            "",
            "allocated by task 33 on cpu 1 at 3.214s:",
            " __kmalloc+0x11c/0x3a0",
            " uvc_parse_streaming+0x211/0xe90 [uvcvideo]",
            "==================================================================",
        ]))
        self.assertEqual((r.kind, r.title), ("KFENCE", "KFENCE: out-of-bounds write in uvc_parse_format"))
        self.assertEqual(r.stack, ["uvc_parse_format", "uvc_parse_streaming"])
        self.assertFalse(r.truncated)

    def test_kmsan_stack_without_call_trace_marker(self):
        r = self.one(tagged([
            "=====================================================",
            "BUG: KMSAN: uninit-value in uvc_parse_status+0x1c3/0x2a0 [uvcvideo]",
            " uvc_parse_status+0x1c3/0x2a0 [uvcvideo]",
            " uvc_status_complete+0x16f/0x620 [uvcvideo]",
            " __usb_hcd_giveback_urb+0x1b3/0x340",
            "",
            "Uninit was created at:",
            " __kmalloc+0x11c/0x3a0",
            " uvc_status_init+0x5e/0x1d0 [uvcvideo]",
            "",
            "CPU: 0 PID: 0 Comm: swapper/0 Not tainted 6.1.0 #1",
            "=====================================================",
        ]))
        self.assertEqual(r.title, "KMSAN: uninit-value in uvc_parse_status")
        self.assertEqual(r.kind, "KMSAN")
        self.assertEqual(r.stack[1], "uvc_status_complete")
        self.assertEqual(r.aux_stacks["Uninit was created at"][1], "uvc_status_init")

    def test_page_fault_and_syscall_prefix_stripping(self):
        r = self.one(tagged([
            "BUG: unable to handle page fault for address: ffffc90000abc000",
            "#PF: supervisor write access in kernel mode",
            "Oops: 0002 [#1] PREEMPT SMP KASAN NOPTI",
            "RIP: 0010:__x64_sys_uvcfake+0x3d/0xb0",
            "Call Trace:",
            " <TASK>",
            " do_syscall_64+0x38/0x90",
            " entry_SYSCALL_64_after_hwframe+0x64/0xce",
            " </TASK>",
            "---[ end trace 0000000000000000 ]---",
        ]))
        # One syscall prefix stripped, the shortest result (__x64_), as syzkaller does.
        self.assertEqual(r.title, "BUG: unable to handle kernel paging request in sys_uvcfake")
        self.assertEqual(r.alt_titles, ["BUG: unable to handle kernel paging request in __x64_sys_uvcfake",
                                        "bad-access in __x64_sys_uvcfake", "bad-access in sys_uvcfake"])
        self.assertEqual(r.kind, "BUG")
        self.assertEqual(r.stack[0], "__x64_sys_uvcfake")

    def test_linux_6_12_oops_prefix_gpf(self):
        r = self.one(tagged([
            "Oops: general protection fault, probably for non-canonical address 0xdffffc0000000003: 0000 [#1] PREEMPT SMP KASAN NOPTI",
            "KASAN: null-ptr-deref in range [0x0000000000000018-0x000000000000001f]",
            "CPU: 0 UID: 0 PID: 251 Comm: stress-agent Not tainted 6.12.0 #1",
            "RIP: 0010:uvc_queue_buffer+0x5d/0x170 [uvcvideo]",
            "Call Trace:",
            " <TASK>",
            " ? die_addr+0x3c/0xa0",
            " ? exc_general_protection+0x150/0x230",
            " ? asm_exc_general_protection+0x26/0x30",
            " ? uvc_queue_buffer+0x5d/0x170 [uvcvideo]",
            " __enqueue_in_driver+0x135/0x3a0 [videobuf2_common]",
            " </TASK>",
            "---[ end trace 0000000000000000 ]---",
        ]))
        self.assertEqual(r.title, "general protection fault in uvc_queue_buffer")
        self.assertEqual(r.stack, ["uvc_queue_buffer", "__enqueue_in_driver"])

    def test_linux_6_12_oops_invalid_opcode_continues_kernel_bug(self):
        reps = parse(tagged([
            "------------[ cut here ]------------",
            "kernel BUG at drivers/media/usb/uvc/uvc_queue.c:212!",
            "Oops: invalid opcode: 0000 [#1] PREEMPT SMP KASAN NOPTI",
            "RIP: 0010:uvc_queue_cancel+0x11/0x20 [uvcvideo]",
            "Call Trace:",
            " <TASK>",
            " uvc_video_stop_streaming+0x2c/0x60 [uvcvideo]",
            " </TASK>",
            "---[ end trace 0000000000000000 ]---",
        ]))
        self.assertEqual(titles(reps), ["kernel BUG in uvc_queue_cancel"])

    def test_kmemleak_6_12_crc_backtrace_and_syzkaller_header(self):
        reps = parse(
            "BUG: memory leak\n"
            "unreferenced object 0xffff88810b1c2000 (size 64):\n"
            "  comm \"stress-agent\", pid 245, jiffies 4294712345\n"
            "  hex dump (first 32 bytes):\n"
            "    00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00  ................\n"
            "  backtrace (crc 6b1a2c3d):\n"
            "    kmemleak_alloc+0x4a/0x80\n"
            "    __kmalloc_cache_noprof+0x1d1/0x2b0\n"
            "    uvc_ctrl_init_device+0x7b/0x2a0 [uvcvideo]\n"
            "    uvc_probe+0x1f3/0x2c40 [uvcvideo]\n"
            "\n"
            "agent: done\n")
        self.assertEqual(titles(reps), ["memory leak in uvc_ctrl_init_device"])
        self.assertFalse(reps[0].truncated)

    def test_ubsan_old_undefined_behaviour_header(self):
        r = self.one(tagged([
            "================================================================================",
            "UBSAN: Undefined behaviour in drivers/media/usb/uvc/uvc_video.c:1172:3",
            "shift exponent 32 is too large for 32-bit type 'unsigned int'",
            "Call Trace:",
            " dump_stack+0x5b/0x77",
            " ubsan_epilogue+0xa/0x3e",
            " __ubsan_handle_shift_out_of_bounds+0x1b5/0x1f0",
            " uvc_video_clock_update+0x2f2/0x3a0 [uvcvideo]",
            "================================================================================",
        ]))
        self.assertEqual(r.title, "UBSAN: undefined-behaviour in uvc_video_clock_update")

    def test_dma_api_other_arch_order_header_then_message(self):
        r = self.one(tagged([
            "------------[ cut here ]------------",
            "WARNING: CPU: 0 PID: 1 at kernel/dma/debug.c:1036 check_unmap+0x5c8/0x9b0",
            "DMA-API: ehci-platform 1c1a000.usb: device driver failed to check map error[device address=0x000000004a3c4e10] [size=16 bytes] [mapped as single]",
            "Modules linked in:",
            "Call trace:",
            " check_unmap+0x5c8/0x9b0",
            " debug_dma_unmap_page+0x84/0xa0",
            " usb_hcd_unmap_urb_for_dma+0x90/0x180",
            " usb_hcd_giveback_urb+0x3c/0x130",
            " ehci_urb_done+0x88/0xa0",
            " fake_driver_complete+0x20/0x40",
            "---[ end trace 0000000000000000 ]---",
        ]))
        self.assertEqual(r.title, "DMA-API: device driver failed to check map error in fake_driver_complete")
        self.assertEqual(r.kind, "DMA-API")

    def test_dma_debug_warning_without_message_is_dma_api(self):
        r = self.one(tagged([
            "WARNING: CPU: 0 PID: 1 at kernel/dma/debug.c:1036 check_unmap+0x5c8/0x9b0",
            "Call Trace:",
            " <TASK>",
            " debug_dma_unmap_page+0x84/0xa0",
            " uvc_free_urb_buffers+0x90/0x180 [uvcvideo]",
            " </TASK>",
            "---[ end trace 0000000000000000 ]---",
        ]))
        self.assertEqual((r.kind, r.title), ("DMA-API", "WARNING in uvc_free_urb_buffers"))

    def test_detector_report_without_warn_ends_with_its_stack(self):
        # A detector message over two lines, followed by dump_stack().
        r = self.one(tagged([
            "DMA-API: xhci_hcd 0000:00:04.0: mapping shares a cache line with CPU-owned data [offset=3600] [len=16]",
            "DMA-API: xhci_hcd 0000:00:04.0: object kmalloc-8k size 8192, line size 128, DMA_FROM_DEVICE",
            "CPU: 1 PID: 245 Comm: stress-agent Not tainted 6.1.0 #1",
            "Call Trace:",
            " <TASK>",
            " dump_stack_lvl+0x5b/0x77",
            " debug_dma_map_page+0x1a7/0x1f0",
            " dma_map_page_attrs+0x1c3/0x440",
            " usb_hcd_map_urb_for_dma+0x6a4/0x890",
            " usb_hcd_submit_urb+0x183/0x11a0",
            " usb_submit_urb+0x72a/0x1150",
            " uvc_status_start+0x4f/0x70 [uvcvideo]",
            " </TASK>",
            "uvcvideo 1-1:1.0: status URB submitted",
        ], ctx="T245"))
        self.assertEqual((r.kind, r.title), (
            "DETECTOR", "DMA-API: mapping shares a cache line with CPU-owned data in uvc_status_start"))
        self.assertEqual(len(r.raw), 13)
        self.assertFalse(r.truncated)

    def test_detector_message_over_three_lines_then_warning(self):
        r = self.one(tagged([
            "------------[ cut here ]------------",
            "DMA-API: xhci_hcd 0000:00:04.0: mapping shares a cache line with CPU-owned data [offset=3600]",
            "DMA-API: xhci_hcd 0000:00:04.0: object kmalloc-8k size 8192",
            "DMA-API: xhci_hcd 0000:00:04.0: line size 128, DMA_FROM_DEVICE",
            "WARNING: CPU: 1 PID: 245 at kernel/dma/debug.c:1312 debug_dma_check_sharing+0x3a1/0x4d0",
            "Call Trace:",
            " <TASK>",
            " debug_dma_map_page+0x1a7/0x1f0",
            " uvc_status_start+0x4f/0x70 [uvcvideo]",
            " </TASK>",
            "---[ end trace 0000000000000000 ]---",
        ]))
        self.assertEqual(r.title, "DMA-API: mapping shares a cache line with CPU-owned data in uvc_status_start")
        self.assertEqual(len(r.raw), 11)
        self.assertFalse(r.truncated)

    def test_dma_api_informational_lines_are_not_reports(self):
        self.assertEqual(parse(tagged([
            "DMA-API: preallocated 65536 debug entries",
            "DMA-API: debugging enabled by kernel config",
            "DMA-API: cacheline tracking ENOMEM, dma-debug disabled",
            "DMA-API: dma_debug_entry pool grown to 131072 (200%)",
        ])), [])

    def test_warn_message_of_another_task_is_not_taken(self):
        text = "\n".join([
            "[   10.000000][  T245] ------------[ cut here ]------------",
            "[   10.000001][  T300] agent: open /dev/video0",
            "[   10.000002][  T245] refcount_t: underflow; use-after-free.",
            "[   10.000003][  T245] WARNING: CPU: 1 PID: 245 at lib/refcount.c:28 refcount_warn_saturate+0x13c/0x174",
            "[   10.000004][  T245] Call Trace:",
            "[   10.000005][  T245]  <TASK>",
            "[   10.000006][  T245]  uvc_status_cleanup+0x20/0x40 [uvcvideo]",
            "[   10.000007][  T245]  </TASK>",
            "[   10.000008][  T245] ---[ end trace 0000000000000000 ]---",
        ])
        r = self.one(text)
        self.assertEqual(r.title, "WARNING: refcount bug in uvc_status_cleanup")
        self.assertEqual(r.message, "refcount_t: underflow; use-after-free.")
        self.assertNotIn("agent: open /dev/video0", r.raw)
        self.assertEqual(len(r.raw), 8)

    def test_warning_on_usb_submit_urb_blames_the_driver(self):
        r = self.one(tagged([
            "------------[ cut here ]------------",
            "URB 00000000c1d2e3f4 submitted while active",
            "WARNING: CPU: 1 PID: 245 at drivers/usb/core/urb.c:379 usb_submit_urb+0x72a/0x1150",
            "RIP: 0010:usb_submit_urb+0x72a/0x1150",
            "Call Trace:",
            " <TASK>",
            " ? __warn+0xc5/0x2f0",
            " ? report_bug+0x2c0/0x2f0",
            " uvc_status_start+0x4f/0x70 [uvcvideo]",
            " uvc_v4l2_open+0x1f7/0x2c0 [uvcvideo]",
            " </TASK>",
            "---[ end trace 0000000000000000 ]---",
        ]))
        self.assertEqual(r.title, "WARNING in uvc_status_start/usb_submit_urb")
        # x86 prints the WARN() message between the cut-here line and the header.
        self.assertEqual(r.raw[:2], ["------------[ cut here ]------------",
                                     "URB 00000000c1d2e3f4 submitted while active"])
        self.assertEqual(r.message, "URB 00000000c1d2e3f4 submitted while active")
        self.assertEqual(r.first_line, 1)

    def test_lockdep_recursive_and_suspicious_rcu(self):
        reps = parse(tagged([
            "============================================",
            "WARNING: possible recursive locking detected",
            "6.1.0 #1 Not tainted",
            "--------------------------------------------",
            "stress-agent/245 is trying to acquire lock:",
            "ffff88800a3c4a38 (&dev->lock){+.+.}-{3:3}, at: uvc_ctrl_get+0x1c/0x90 [uvcvideo]",
            "",
            "but task is already holding lock:",
            "ffff88800a3c4a38 (&dev->lock){+.+.}-{3:3}, at: uvc_ioctl_g_ctrl+0x4e/0x210 [uvcvideo]",
            "stack backtrace:",
            "Call Trace:",
            " <TASK>",
            " dump_stack_lvl+0x5b/0x77",
            " __lock_acquire+0x2a5c/0x5ff0",
            " uvc_ctrl_get+0x1c/0x90 [uvcvideo]",
            " </TASK>",
            "=============================",
            "WARNING: suspicious RCU usage",
            "6.1.0 #1 Not tainted",
            "-----------------------------",
            "drivers/media/usb/uvc/uvc_ctrl.c:2001 suspicious rcu_dereference_check() usage!",
            "stack backtrace:",
            "Call Trace:",
            " <TASK>",
            " dump_stack_lvl+0x5b/0x77",
            " lockdep_rcu_suspicious+0x15a/0x1b0",
            " uvc_ctrl_find_mapping+0x9a/0xc0 [uvcvideo]",
            " </TASK>",
        ]))
        self.assertEqual(titles(reps), ["possible deadlock in uvc_ctrl_get",
                                        "WARNING: suspicious RCU usage in uvc_ctrl_find_mapping"])
        self.assertEqual([r.kind for r in reps], ["LOCKDEP", "LOCKDEP"])
        self.assertEqual(reps[1].raw[0], "=============================")

    def test_generic_bug_lines(self):
        r = self.one(tagged([
            "BUG: sleeping function called from invalid context at kernel/locking/mutex.c:580",
            "in_atomic(): 1, irqs_disabled(): 0, non_block: 0, pid: 0, name: swapper/0",
            "Call Trace:",
            " <IRQ>",
            " dump_stack_lvl+0x5b/0x77",
            " __might_resched.cold+0x1a/0x20",
            " mutex_lock+0x1e/0x40",
            " uvc_status_complete+0x1f0/0x620 [uvcvideo]",
            " </IRQ>",
            " <TASK>",
            " default_idle+0xf/0x20",
            " </TASK>",
        ]))
        self.assertEqual(r.title, "BUG: sleeping function called from invalid context in uvc_status_complete")
        self.assertFalse(r.truncated)

    def test_panic_titles(self):
        reps = parse(tagged([
            "Kernel panic - not syncing: kernel: panic_on_warn set ...",
            "CPU: 0 PID: 1 Comm: init Tainted: G        W 6.1.0 #1",
            "Call Trace:",
            " <TASK>",
            " panic+0x2d6/0x5e0",
            " check_panic_on_warn.cold+0x13/0x2b",
            " __warn+0xe0/0x2f0",
            " uvc_status_stop+0x2d/0x90 [uvcvideo]",
            " </TASK>",
            "Kernel Offset: disabled",
            "---[ end Kernel panic - not syncing: kernel: panic_on_warn set ... ]---",
            "Kernel panic - not syncing: Attempted to kill init! exitcode=0x0000000b",
            "Kernel panic - not syncing: panic_on_warn set ...",
        ]))
        # 6.x prints "kernel: panic_on_warn set": syzkaller's row for the
        # cut report ("panic_on_warn set") does not match it.
        self.assertEqual(titles(reps), ["kernel panic: kernel: panic_on_warn set ...",
                                        "kernel panic: Attempted to kill init!",
                                        "kernel panic: panic_on_warn set"])
        # A panic without a stack (or a cut one) names no bug: corrupted.
        self.assertEqual([r.corrupted for r in reps], [False, True, True])
        self.assertIsNone(reps[0].guilty_frame)
        self.assertEqual(reps[0].stack[-1], "uvc_status_stop")
        self.assertEqual(reps[0].kind, "PANIC")

    def test_old_kernel_stack_without_task_markers_ends_at_next_text(self):
        reps = parse(tagged([
            "INFO: task stress-agent:245 blocked for more than 120 seconds.",
            "Call Trace:",
            " [<ffffffff81e3c4f4>] __schedule+0x8f4/0x2590",
            " [<ffffffff81e3d456>] schedule+0xd6/0x1e0",
            " [<ffffffffa0123456>] uvc_v4l2_release+0x4e/0x210 [uvcvideo]",
            "agent: waiting",
            "agent: done",
            "agent: exit",
            " [<ffffffff81e3d456>] not_part_of_it+0x1/0x2",
        ]))
        self.assertEqual(titles(reps), ["INFO: task hung in uvc_v4l2_release"])
        self.assertEqual(reps[0].stack, ["__schedule", "schedule", "uvc_v4l2_release"])
        self.assertFalse(reps[0].truncated)

    def test_symbolized_inline_frames(self):
        r = self.one(tagged([
            "==================================================================",
            "BUG: KASAN: slab-out-of-bounds in uvc_status_complete+0x5a2/0x620 drivers/media/usb/uvc/uvc_status.c:136",
            "Read of size 1 at addr ffff88800a3c4e21 by task swapper/0/0",
            "Call Trace:",
            " <IRQ>",
            " __dump_stack lib/dump_stack.c:88 [inline]",
            " dump_stack_lvl+0x5b/0x77 lib/dump_stack.c:106",
            " uvc_event_control drivers/media/usb/uvc/uvc_status.c:136 [inline]",
            " uvc_status_complete+0x5a2/0x620 drivers/media/usb/uvc/uvc_status.c:210",
            " </IRQ>",
            "==================================================================",
        ]))
        self.assertEqual(r.stack, ["__dump_stack", "dump_stack_lvl", "uvc_event_control",
                                   "uvc_status_complete"])
        self.assertEqual(r.title, "KASAN: slab-out-of-bounds Read in uvc_status_complete")

    def test_newer_warning_header_format(self):
        r = self.one(tagged([
            "WARNING: drivers/media/usb/uvc/uvc_v4l2.c:650 at uvc_v4l2_release+0x1a2/0x210 [uvcvideo], CPU#0: agent/245",
            "RIP: 0010:uvc_v4l2_release+0x1a2/0x210 [uvcvideo]",
            "Call Trace:",
            " <TASK>",
            " v4l2_release+0x21d/0x2c0 [videodev]",
            " </TASK>",
            "---[ end trace 0000000000000000 ]---",
        ]))
        self.assertEqual(r.title, "WARNING in uvc_v4l2_release")

    def test_reboot_ends_a_report_cut_short(self):
        reps = parse(tagged([
            "BUG: kernel NULL pointer dereference, address: 0000000000000008",
            "RIP: 0010:uvc_v4l2_poll+0x3d/0xb0 [uvcvideo]",
            "Call Trace:",
            " <TASK>",
            " v4l2_poll+0x15e/0x270 [videodev]",
        ]) + "Booting the kernel.\n" + tagged([
            "Linux version 6.1.0-dmaharness #1 SMP PREEMPT_DYNAMIC",
            "usb 1-1: new high-speed USB device number 2 using xhci_hcd",
            " not_a_frame_of_the_oops+0x1/0x2",
        ], start=0.0))
        # A kernel had run: the reboot is one of syzkaller's reports too.
        self.assertEqual(titles(reps), ["BUG: unable to handle kernel NULL pointer dereference in uvc_v4l2_poll",
                                        "unexpected kernel reboot"])
        self.assertTrue(reps[0].truncated)
        self.assertEqual(reps[0].stack, ["uvc_v4l2_poll", "v4l2_poll"])
        self.assertEqual(len(reps[0].raw), 5)
        self.assertEqual((reps[1].kind, reps[1].first_line, reps[1].corrupted), ("REBOOT", 6, False))

    def test_report_interrupted_by_another_is_truncated(self):
        reps = parse(tagged([
            "------------[ cut here ]------------",
            "WARNING: CPU: 0 PID: 245 at drivers/media/usb/uvc/uvc_v4l2.c:650 uvc_v4l2_release+0x1a2/0x210 [uvcvideo]",
            "RIP: 0010:uvc_v4l2_release+0x1a2/0x210 [uvcvideo]",
            "Call Trace:",
            " <TASK>",
            " v4l2_release+0x21d/0x2c0 [videodev]",
            "==================================================================",
            "BUG: KASAN: use-after-free in uvc_status_stop+0x2d/0x90 [uvcvideo]",
            "Write of size 1 at addr ffff88800a3c4e20 by task stress-agent/245",
            "==================================================================",
        ]))
        self.assertEqual(titles(reps), ["WARNING in uvc_v4l2_release",
                                        "KASAN: use-after-free Write in uvc_status_stop"])
        self.assertEqual([r.truncated for r in reps], [True, False])
        # The banner went to the KASAN report, not to the warning.
        self.assertTrue(reps[1].raw[0].startswith("====="))
        self.assertFalse(reps[0].raw[-1].startswith("====="))

    def test_old_kernel_reports_back_to_back_are_complete(self):
        reps = parse(tagged([
            "INFO: task stress-agent:245 blocked for more than 120 seconds.",
            "Call Trace:",
            " [<ffffffff81e3c4f4>] __schedule+0x8f4/0x2590",
            " [<ffffffffa0123456>] uvc_v4l2_release+0x4e/0x210 [uvcvideo]",
            "INFO: task kworker/1:2:88 blocked for more than 120 seconds.",
            "Call Trace:",
            " [<ffffffff81e3c4f4>] __schedule+0x8f4/0x2590",
            " [<ffffffffa0123456>] uvc_ctrl_status_event_work+0x9a/0x1c0 [uvcvideo]",
        ]))
        self.assertEqual(titles(reps), ["INFO: task hung in uvc_v4l2_release",
                                        "INFO: task hung in uvc_ctrl_status_event_work"])
        self.assertEqual([r.truncated for r in reps], [False, False])

    def test_rcu_stall_waits_for_the_nmi_backtrace(self):
        # The detecting CPU's own stack ends with </TASK> before the stalled
        # CPU answers the NMI: the report must go on until that answer.
        text = "\n".join([
            "[ 90.1][    C0] rcu: INFO: rcu_preempt detected stalls on CPUs/tasks:",
            "[ 90.1][    C0] Sending NMI from CPU 0 to CPUs 1:",
            "[ 90.1][    C0] CPU: 0 PID: 0 Comm: swapper/0 Not tainted 6.1.0 #1",
            "[ 90.1][    C0] Call Trace:",
            "[ 90.1][    C0]  <TASK>",
            "[ 90.1][    C0]  default_idle+0xf/0x20",
            "[ 90.1][    C0]  </TASK>",
            "[ 90.1][    C1] NMI backtrace for cpu 1",
            "[ 90.1][    C1] RIP: 0010:uvc_status_wait_loop+0x44/0x90 [uvcvideo]",
            "[ 90.1][    C1] Call Trace:",
            "[ 90.1][    C1]  <TASK>",
            "[ 90.1][    C1]  uvc_status_stop+0x5a/0x90 [uvcvideo]",
            "[ 90.1][    C1]  </TASK>",
            "[ 90.2][    C1] usb 1-1: status event",
        ])
        reps = parse(text)
        # No timer interrupt frame: syzkaller does not know the loop's dispatcher.
        self.assertEqual(titles(reps), ["INFO: rcu detected stall in corrupted"])
        self.assertEqual(reps[0].stack[0], "uvc_status_wait_loop")
        self.assertEqual(reps[0].raw[-1], " </TASK>")
        self.assertFalse(reps[0].truncated)

    def test_panic_on_warn_lends_its_stack_to_the_warning(self):
        reps = parse(tagged([
            "------------[ cut here ]------------",
            "WARNING: CPU: 1 PID: 46 at drivers/media/usb/uvc/uvc_status.c:321 uvc_status_stop+0x13c/0x174 [uvcvideo]",
            "Modules linked in: uvcvideo",
            "Kernel panic - not syncing: kernel: panic_on_warn set ...",
            "CPU: 1 PID: 46 Comm: kworker/1:1 Not tainted 6.1.0 #1",
            "Call Trace:",
            " <TASK>",
            " dump_stack_lvl+0x5b/0x77",
            " panic+0x2d6/0x5e0",
            " check_panic_on_warn.cold+0x13/0x2b",
            " __warn+0xe0/0x2f0",
            " ? uvc_status_stop+0x13c/0x174 [uvcvideo]",
            " report_bug+0x2c0/0x2f0",
            " handle_bug+0x3c/0x70",
            " exc_invalid_op+0x18/0x50",
            " asm_exc_invalid_op+0x1a/0x20",
            "RIP: 0010:uvc_status_stop+0x13c/0x174 [uvcvideo]",
            " uvc_v4l2_release+0x1a2/0x210 [uvcvideo]",
            " </TASK>",
            "Kernel Offset: disabled",
            "---[ end Kernel panic - not syncing: kernel: panic_on_warn set ... ]---",
        ]))
        self.assertEqual(titles(reps), ["WARNING in uvc_status_stop"])
        self.assertEqual(reps[0].message, "kernel: panic_on_warn set ...")
        self.assertEqual(reps[0].stack[-2:], ["uvc_status_stop", "uvc_v4l2_release"])
        self.assertFalse(reps[0].truncated)

    def test_userspace_lines_inside_a_timestamped_report_are_dropped(self):
        reps = parse("\n".join([
            "[   12.000000] INFO: task stress-agent:245 blocked for more than 120 seconds.",
            "[   12.000001] Call Trace:",
            "[   12.000002]  [<ffffffff81e3c4f4>] __schedule+0x8f4/0x2590",
            "agent: cycle 3 of 4",
            "[   12.000003]  [<ffffffffa0123456>] uvc_v4l2_release+0x4e/0x210 [uvcvideo]",
            "[   12.000004] usb 1-1: status event",
        ]))
        self.assertEqual(titles(reps), ["INFO: task hung in uvc_v4l2_release"])
        self.assertNotIn("agent: cycle 3 of 4", reps[0].raw)

    def test_login_prompt_glued_to_a_kernel_line(self):
        r = self.one("fake-guest login: [   35.184476] BUG: KASAN: use-after-free in uvc_status_stop+0x2d/0x90\n"
                     "[   35.184477] Write of size 1 at addr ffff88800a3c4e20 by task a/1\n"
                     "[   35.184478] ==================================================================\n")
        self.assertEqual(r.title, "KASAN: use-after-free Write in uvc_status_stop")
        self.assertAlmostEqual(r.timestamp, 35.184476)

    def test_hung_task_in_io_wait_and_kcsan(self):
        reps = parse(tagged([
            "INFO: task udevd:5612 blocked in I/O wait for more than 143 seconds.",
            "Call Trace:",
            " <TASK>",
            " io_schedule+0x1c/0xe0",
            " uvc_query_ctrl+0x98/0x244 [uvcvideo]",
            " </TASK>",
            "==================================================================",
            "BUG: KCSAN: data-race in uvc_status_complete / uvc_status_stop",
            "",
            "write to 0xffff88800a3c4e20 of 1 bytes by task 245 on cpu 1:",
            " uvc_status_stop+0x2d/0x90 [uvcvideo]",
            "==================================================================",
        ]))
        self.assertEqual(titles(reps), ["INFO: task hung in uvc_query_ctrl",
                                        "KCSAN: data-race in uvc_status_complete / uvc_status_stop"])

    def test_generic_bug_titles_drop_variable_parts(self):
        reps = parse(tagged([
            "BUG: Bad rss-counter state mm:00000000c0ffee00 type:MM_ANONPAGES val:1 Comm:agent Pid:245",
            "BUG: spinlock lockup suspected on CPU#1, agent/245",
            "BUG: scheduling while atomic: agent/245/0x00000002",
        ]))
        self.assertEqual([r.title.split(" in ")[0] for r in reps], [
            "BUG: Bad rss-counter state", "BUG: spinlock lockup suspected",
            "BUG: scheduling while atomic"])

    def test_not_reports(self):
        text = tagged([
            "WARNING: The mand mount option has been deprecated",
            "INFO: lockdep is turned off.",
            "EXT4-fs (vda): INFO: recovery required on readonly filesystem",
            "ODEBUG: object is on stack, but not annotated",
            "traps: agent[245] general protection fault ip:7f4c2b6e9b5b sp:7ffe0c2d7a10 error:0 in libc.so.6[7f4c2b600000+155000]",
            "kmemleak: 2 new suspected memory leaks (see /sys/kernel/debug/kmemleak)",
            "------------[ cut here ]------------",
            "==================================================================",
        ])
        self.assertEqual(parse(text), [])
        self.assertEqual(parse(""), [])
        self.assertEqual(parse("\n\n\n"), [])

    def test_mangled_input_never_raises(self):
        # Every cut of every fixture, and a fixture with characters replaced
        # by console-significant ones, parse without an exception.
        import random
        rnd = random.Random(5)
        for path in sorted(FIXTURES.glob("*.log")):
            text = log(path.name)
            for i in range(0, len(text), 97 if len(text) < 20000 else 997):
                parse(text[:i])
            chars = list(text)
            for _ in range(200):
                chars[rnd.randrange(len(chars))] = rnd.choice(" []<>:\n\r\t?+0x/=-#TC.5")
            for r in parse("".join(chars)):
                self.assertIsInstance(r.title, str)
        r = parse("[   50.0\r0100] BUG: KASAN: use-after-free in f+0x1/0x2\n")
        self.assertEqual(len(r), 1)


class WhereHeadersAre(unittest.TestCase):
    """Headers are found where syzkaller finds them, and some headers only
    continue a report or stand alone."""

    def test_header_after_a_subsystem_prefix_or_in_an_old_banner(self):
        reps = parse(tagged([
            "usb 1-1: WARNING: the fake camera's firmware is incomplete, don't expect anything to work!",
            "=========================",
            "[ BUG: held lock freed! ]",
            "4.9.0 #1 Not tainted",
            "-------------------------",
            "stress-agent/245 is freeing memory ffff88800a3c4000-ffff88800a3c47ff, with a lock still held there!",
            " (&dev->lock){+.+.+.}, at: [<ffffffffa0123456>] uvc_status_cleanup+0x1c/0x50 [uvcvideo]",
        ]))
        self.assertEqual(titles(reps), [
            "WARNING: the fake camera's firmware is incomplete, don't expect anything to work!",
            "BUG: held lock freed in uvc_status_cleanup"])
        self.assertIsNone(reps[0].rule)   # no row: the header line is the title

    def test_printk_dropped_and_syz_manager_date_prefixes(self):
        reps = parse("** 93 printk messages dropped ** [  322.962139] "
                     "BUG: KASAN: use-after-free in uvc_status_stop+0x2d/0x90\n")
        self.assertEqual(titles(reps), ["KASAN: use-after-free in uvc_status_stop"])
        self.assertEqual((reps[0].corrupted, reps[0].timestamp), (True, 322.962139))
        reps = parse("2018/01/09 14:28:48 BUG: memory leak\nunreferenced object 0xffff88810b1c2000 (size 64):\n"
                     "  backtrace:\n    [<ffffffffa0123456>] uvc_ctrl_init_device+0x7b/0x2a0 [uvcvideo]\n")
        self.assertEqual(titles(reps), ["memory leak in uvc_ctrl_init_device"])

    def test_a_header_replayed_on_the_next_line_counts_once(self):
        reps = parse("[  584.3][   T31] INFO: t\n"
                     "** replaying previous printk message **\n"
                     + tagged(["INFO: task udevd:5612 blocked for more than 143 seconds.", "Call Trace:",
                               " <TASK>", " __schedule+0x8f4/0x2590", " uvc_v4l2_release+0x4e/0x210",
                               " </TASK>"], start=584.3, ctx="T31"))
        self.assertEqual(titles(reps), ["INFO: task hung in uvc_v4l2_release"])

    def test_one_line_report_leaves_the_open_report_alone(self):
        reps = parse(tagged([
            "INFO: task stress-agent:245 blocked for more than 120 seconds.",
            "Call Trace:",
            " [<ffffffff81e3c4f4>] __schedule+0x8f4/0x2590",
            "unregister_netdevice: waiting for lo to become free. Usage count = 6",
            " [<ffffffffa0123456>] uvc_v4l2_release+0x4e/0x210 [uvcvideo]",
            "usb 1-1: status event",
        ]))
        self.assertEqual(titles(reps), ["INFO: task hung in uvc_v4l2_release",
                                        "unregister_netdevice: waiting for DEV to become free"])
        self.assertEqual(reps[0].stack, ["__schedule", "uvc_v4l2_release"])
        self.assertEqual((reps[1].first_line, reps[1].last_line), (4, 4))

    def test_a_line_of_someone_else_inside_an_old_stack(self):
        # Without caller tags: a message printed between two frames does not
        # end a stack without <TASK> markers when a frame follows it.
        reps = parse(tagged([
            "INFO: task stress-agent:245 blocked for more than 120 seconds.",
            "Call Trace:",
            " [<ffffffff81e3c4f4>] __schedule+0x8f4/0x2590",
            "audit: type=1326 audit(1554431287.410:64): auid=4294967295 uid=0",
            " [<ffffffffa0123456>] uvc_v4l2_release+0x4e/0x210 [uvcvideo]",
            "usb 1-1: status event",
        ]))
        self.assertEqual(titles(reps), ["INFO: task hung in uvc_v4l2_release"])
        self.assertEqual(reps[0].stack, ["__schedule", "uvc_v4l2_release"])
        self.assertFalse(reps[0].truncated)

    def test_a_continuation_header_joins_the_report(self):
        # arm64: "Internal error: Oops - BUG:" holds "BUG:", after "kernel BUG at".
        reps = parse(tagged([
            "------------[ cut here ]------------",
            "kernel BUG at lib/list_debug.c:64!",
            "Internal error: Oops - BUG: 00000000f2000800 [#1] PREEMPT SMP",
            "pc : __list_del_entry_valid+0xcc/0xd0",
            "Call trace:",
            " __list_del_entry_valid+0xcc/0xd0",
            " uvc_queue_cancel+0x8f/0x190 [uvcvideo]",
            " uvc_video_stop_streaming+0x2c/0x60 [uvcvideo]",
            "---[ end trace 0000000000000000 ]---",
        ]))
        self.assertEqual(titles(reps), ["BUG: corrupted list in uvc_queue_cancel"])

    def test_title_read_before_intermixed_fault_injection(self):
        # No caller tags: a fault injection's stack printed inside the
        # report; syzkaller titles the report from the text before it.
        r = parse(tagged([
            "------------[ cut here ]------------",
            "WARNING: CPU: 1 PID: 245 at mm/slab_common.c:1012 kmalloc_slab+0x5d/0x70",
            "FAULT_INJECTION: forcing a failure.",
            "name failslab, interval 1, probability 0, space 0, times 0",
            "RIP: 0010:kmalloc_slab+0x5d/0x70",
            "Call Trace:",
            " <TASK>",
            " __kmalloc+0x25/0x760",
            " uvc_alloc_entity+0x5f/0x2e0 [uvcvideo]",
            " </TASK>",
            "---[ end trace 0000000000000000 ]---",
        ]))[0]
        self.assertEqual(r.title, "WARNING: kmalloc bug in corrupted")
        self.assertTrue(r.corrupted)

    def test_reboot_of_the_first_boot_is_no_report(self):
        text = ("SeaBIOS (version 1.16.2-debian-1.16.2-1)\nBooting from ROM...\n"
                "Decompressing Linux... Parsing ELF... done.\nBooting the kernel.\n"
                + tagged(["Linux version 6.1.0-dmaharness #1 SMP PREEMPT_DYNAMIC"], start=0.0))
        self.assertEqual(parse(text), [])


class Prefixes(unittest.TestCase):
    """Timestamps, caller tags, syslog levels and line endings."""

    LINES = [
        "------------[ cut here ]------------",
        "WARNING: CPU: 0 PID: 245 at drivers/media/usb/uvc/uvc_v4l2.c:650 uvc_v4l2_release+0x1a2/0x210 [uvcvideo]",
        "RIP: 0010:uvc_v4l2_release+0x1a2/0x210 [uvcvideo]",
        "Call Trace:",
        " <TASK>",
        " v4l2_release+0x21d/0x2c0 [videodev]",
        " </TASK>",
        "---[ end trace 0000000000000000 ]---",
    ]
    STACK = ["uvc_v4l2_release", "v4l2_release"]

    def check(self, text: str, ts: float | None, ctx: str | None) -> None:
        reps = parse(text)
        self.assertEqual(titles(reps), ["WARNING in uvc_v4l2_release"])
        self.assertEqual(reps[0].stack, self.STACK)
        self.assertEqual(reps[0].context, ctx)
        if ts is None:
            self.assertIsNone(reps[0].timestamp)
        else:
            self.assertAlmostEqual(reps[0].timestamp, ts)
        self.assertEqual(reps[0].raw, self.LINES)
        self.assertFalse(reps[0].truncated)

    def test_plain(self):
        self.check("\n".join(self.LINES), None, None)

    def test_timestamps(self):
        self.check(tagged(self.LINES, start=7.0), 7.001, None)

    def test_timestamps_and_caller_tags(self):
        self.check(tagged(self.LINES, start=7.0, ctx="T245"), 7.001, "T245")

    def test_caller_tags_without_timestamps(self):
        self.check("\n".join("[  T245] " + line for line in self.LINES), None, "T245")

    def test_syslog_levels_and_crlf(self):
        text = "\r\n".join("<4>[  100.250000] " + line for line in self.LINES) + "\r\n"
        self.check(text, 100.25, None)

    def test_dmesg_human_times(self):
        text = "\n".join(f"[Thu Dec  3 07:00:0{i} 2026] {line}" for i, line in enumerate(self.LINES))
        self.check(text, None, None)

    def test_journalctl_kernel_lines(self):
        text = "Dec 03 06:59:59 fakehost systemd[1]: Started agent.service.\n" + "\n".join(
            f"Dec 03 07:00:0{i} fakehost kernel: {line}" for i, line in enumerate(self.LINES))
        self.check(text, None, None)
        self.assertEqual(parse(text)[0].first_line, 2)
        iso = "\n".join(f"2026-12-03T07:00:0{i}.123456+0000 fakehost kernel: {line}"
                        for i, line in enumerate(self.LINES))
        self.check(iso, None, None)

    def test_two_cpus_interleaving_two_warnings(self):
        a = tagged(self.LINES, start=7.0, ctx="T245").splitlines()
        other = [line.replace("uvc_v4l2_release+", "uvc_queue_release+")
                 .replace("uvc_v4l2.c", "uvc_queue.c") for line in self.LINES]
        b = tagged(other, start=7.0005, ctx="C1").splitlines()
        mixed = [x for pair in zip(a, b) for x in pair]
        reps = parse("\n".join(mixed))
        self.assertEqual(sorted(titles(reps)), ["WARNING in uvc_queue_release",
                                                "WARNING in uvc_v4l2_release"])
        for r in reps:
            self.assertEqual(len(r.raw), len(self.LINES))
            self.assertEqual(r.stack[1:], ["v4l2_release"])
            self.assertFalse(r.truncated)

    def test_other_cpu_output_inside_a_report_without_caller_tags(self):
        # Without caller tags another CPU's lines cannot be told apart: they
        # stay in raw, but the title and the stack are not disturbed.
        lines = list(self.LINES)
        lines.insert(4, "usb 1-1: reset high-speed USB device number 2 using xhci_hcd")
        lines.insert(3, "uvcvideo 1-1:1.0: Non-zero status (-71) in status completion handler.")
        reps = parse(tagged(lines))
        self.assertEqual(titles(reps), ["WARNING in uvc_v4l2_release"])
        self.assertEqual(reps[0].stack, self.STACK)
        self.assertEqual(len(reps[0].raw), len(lines))
        self.assertFalse(reps[0].truncated)

    def test_line_numbers_count_every_line(self):
        text = "noise\n\n[ 1.0] more noise\n" + "\n".join(self.LINES)
        self.assertEqual(parse(text)[0].first_line, 4)


class FoldAndOutput(unittest.TestCase):

    def test_fold_counts_and_order(self):
        reps = load("dma-api-x86-giveback.log") + load("kasan-uaf-timestamps.log") \
            + load("dma-api-x86-giveback.log")
        sigs = fold(reps)
        self.assertEqual([(s.title, s.count) for s in sigs], [
            ("DMA-API: device driver frees DMA memory with different size in uvc_status_start", 4),
            ("KASAN: slab-use-after-free Read in uvc_status_complete", 1),
        ])
        self.assertEqual(sigs[0].kind, "DMA-API")
        self.assertIs(sigs[0].first, reps[0])
        self.assertEqual(len(sigs[0].reports), 4)
        self.assertEqual(fold([]), [])

    def run_main(self, argv: list[str]) -> tuple[int, str, str]:
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            rc = reportscli.reports_main(argv)
        return rc, out.getvalue(), err.getvalue()

    def log_file(self, name: str) -> str:
        """A fixture's log (no golden header) in a file of its own."""
        f = tempfile.NamedTemporaryFile("w", suffix=".log", delete=False)
        with f:
            f.write(log(name))
        self.addCleanup(os.unlink, f.name)
        return f.name

    def test_main_json(self):
        rc, out, _ = self.run_main([self.log_file("dma-api-x86-giveback.log"), "--json"])
        self.assertEqual(rc, 0)
        doc = json.loads(out)
        self.assertEqual(doc["version"], 1)
        self.assertEqual(len(doc["reports"]), 2)
        self.assertEqual(len(doc["signatures"]), 1)
        sig = doc["signatures"][0]
        self.assertEqual(sig["count"], 2)
        self.assertEqual(sig["kind"], "DMA-API")
        self.assertEqual(sig["guilty_frame"], "uvc_status_start")
        self.assertEqual(sig["lines"], [5, 62])
        rep = doc["reports"][0]
        for key in ("kind", "title", "guilty_frame", "stack", "raw", "first_line", "timestamp"):
            self.assertIn(key, rep)
        self.assertEqual(rep["alt_titles"], [])
        self.assertEqual(rep["rule"], "dma-api")
        self.assertEqual((rep["corrupted"], rep["corrupted_reason"]), (False, None))
        self.assertEqual(rep["span"], {"first_line": 5, "last_line": 59})
        self.assertFalse(sig["corrupted"])

    def test_main_text(self):
        rc, out, _ = self.run_main([self.log_file("oops-ubsan-kmemleak-panic.log")])
        self.assertEqual(rc, 0)
        self.assertIn("2x memory leak in uvc_status_init", out)
        self.assertIn("6 report(s), 5 signature(s)", out)
        self.assertIn("kernel panic: Fatal exception  [PANIC, line 81, 60.002200s] "
                      "(corrupted: report format is marked as corrupted)", out)

    def test_main_empty_log(self):
        with tempfile.NamedTemporaryFile("w", suffix=".log", delete=False) as f:
            f.write("just boot noise\n")
        try:
            rc, out, _ = self.run_main([f.name])
            self.assertEqual(rc, 0)
            self.assertEqual(out, "no kernel reports\n")
            rc, out, _ = self.run_main([f.name, "--json"])
            self.assertEqual(json.loads(out)["reports"], [])
        finally:
            os.unlink(f.name)

    def test_main_errors(self):
        # A log that cannot be read is bad input (4), named in the message;
        # 2 is for usage errors.
        rc, _, err = self.run_main(["/nonexistent/console.log"])
        self.assertEqual(rc, 4)
        self.assertIn("/nonexistent/console.log: no such file", err)
        rc, _, _ = self.run_main([])
        self.assertEqual(rc, 2)
        # --jobs is a number of cores
        for bad in ("0", "-1", "x", "1e3", "nan", "99999"):
            rc, out, err = self.run_main([self.log_file("dma-api-x86-giveback.log"), "--json",
                                          "--jobs", bad])
            self.assertEqual(rc, 2, bad)
            self.assertIs(json.loads(out)["ok"], False, bad)
            self.assertIn("--jobs", err, bad)

    def test_a_bug_of_ours_is_exit_70_not_a_verdict(self):
        # a delegated command's unexpected exception: main()'s last resort,
        # one JSON object with --json, the traceback on stderr
        def broken(argv):
            raise RuntimeError("boom")
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            rc = reportscli.guarded("reports", broken, ["x.log", "--json"])
        self.assertEqual(rc, 70)
        self.assertEqual(json.loads(out.getvalue())["error"]["kind"], "internal")
        self.assertIn("RuntimeError: boom", err.getvalue())
        with mock.patch.dict(main.DELEGATED, {"reports": broken}), \
                contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            self.assertEqual(main.main(["reports", "x.log"]), 70)

    def test_main_jobs_give_the_same_output(self):
        # a small log is read in one pass whatever --jobs says (the
        # several-core path is tests/unit/reports/test_parallel.py)
        path = self.log_file("dma-api-x86-giveback.log")
        outs = [self.run_main([path, "--json", "-j", j]) for j in ("1", "2", "64")]
        self.assertEqual(outs[0][0], 0)
        self.assertTrue(all(o == outs[0] for o in outs), "the output depends on --jobs")


if __name__ == "__main__":
    unittest.main()


class WarningInsideSanitizerReport(unittest.TestCase):
    """KASAN's report faulting while it prints (stack_depot_fetch() on an
    allocation record that the reported overflow overwrote): the WARNING is
    part of the KASAN report, which goes on to its closing banner; a real
    6.1 console (uvcvideo's status buffer half the URB's length), and the
    same with 7.x's WARNING line."""

    LOG = (Path(__file__).resolve().parents[2] / "fixtures" / "logs"
           / "real-6.1-kasan-report-faults-in-stackdepot.log")

    def log(self):
        return golden.read_golden(self.LOG.read_text()).log

    def check(self, text):
        reps = parse(text)
        titles = [r.title for r in reps]
        self.assertEqual(titles, ["KASAN: slab-out-of-bounds Read in uvc_get_le_value"])
        (r,) = reps
        self.assertFalse(r.truncated)
        self.assertEqual(r.guilty_frame, "uvc_get_le_value")
        self.assertIn("stack_depot_fetch", "\n".join(r.raw))          # kept inside
        self.assertIn("The buggy address belongs to the object", "\n".join(r.raw))
        self.assertNotIn("stack_depot_print", r.stack)               # not the report's stack

    def test_6x_warning_line(self):
        text = self.log()
        self.assertIn("WARNING: CPU: 0 PID: 13 at lib/stackdepot.c:377", text)
        self.check(text)

    def test_7x_warning_line(self):
        text = self.log().replace(
            "WARNING: CPU: 0 PID: 13 at lib/stackdepot.c:377 stack_depot_fetch+0x30/0x5c",
            "WARNING: lib/stackdepot.c:377 at stack_depot_fetch+0x30/0x5c, CPU#0: kworker/0:1/13")
        self.assertIn("CPU#0: kworker/0:1/13", text)
        self.check(text)

    def test_a_warning_from_elsewhere_is_its_own_report(self):
        text = self.log().replace(
            "WARNING: CPU: 0 PID: 13 at lib/stackdepot.c:377 stack_depot_fetch+0x30/0x5c",
            "WARNING: CPU: 0 PID: 13 at kernel/workqueue.c:377 stack_depot_fetch+0x30/0x5c")
        titles = [r.title for r in parse(text)]
        self.assertEqual(len(titles), 2, titles)
