import unittest
from pathlib import Path
from unittest import mock

from harness.boot import bootlog, qemu


def _req(**kw):
    kw.setdefault("console", Path("/r/console.log"))
    return qemu.BootRequest(kernel=Path("/k/bzImage"), initrd=Path("/r/initrd.cpio"), **kw)


class CommandLine(unittest.TestCase):
    def setUp(self):
        p = mock.patch.object(qemu, "qemu_binary", return_value="/usr/bin/qemu-system-x86_64")
        p.start()
        self.addCleanup(p.stop)

    def opt(self, cmd, name):
        return [cmd[i + 1] for i, a in enumerate(cmd) if a == name]

    def test_tcg_boot_line(self):
        cmd = qemu.command_line(_req(append="foo=1", memory_mb=512, smp=2), "tcg")
        self.assertEqual(self.opt(cmd, "-accel"), ["tcg"])
        self.assertIn("-no-reboot", cmd)
        self.assertEqual(self.opt(cmd, "-nic"), ["none"])
        # ttyS0 is the console; ttyS1 the guest's data port (none asked: null)
        self.assertEqual(self.opt(cmd, "-serial"), ["file:/r/console.log", "null"])
        with_data = qemu.command_line(_req(data_log=Path("/r/agent.log")), "tcg")
        self.assertEqual(self.opt(with_data, "-serial"), ["file:/r/console.log", "file:/r/agent.log"])
        self.assertEqual(self.opt(cmd, "-m"), ["512"])
        devs = self.opt(cmd, "-device")
        self.assertIn("qemu-xhci,id=xhci,p2=8,p3=8", devs)
        self.assertTrue(any(d.startswith("isa-debug-exit,iobase=0xf4") for d in devs))
        append = self.opt(cmd, "-append")[0]
        for word in ("console=ttyS0,115200", "panic=-1", "rdinit=/init", "foo=1"):
            self.assertIn(word, append.split())
        self.assertEqual(self.opt(cmd, "-kernel"), ["/k/bzImage"])
        self.assertEqual(self.opt(cmd, "-initrd"), ["/r/initrd.cpio"])

    def test_hung_tasks_are_reported_before_the_silence_limit(self):
        from harness.boot.settings import BootSettings
        append = self.opt(qemu.command_line(_req(), "tcg"), "-append")[0].split()
        got = {w.split("=")[0]: int(w.split("=")[1]) for w in append
               if w.startswith("sysctl.kernel.hung_task")}
        worst = got["sysctl.kernel.hung_task_timeout_secs"] + \
            got["sysctl.kernel.hung_task_check_interval_secs"]
        self.assertLess(worst, BootSettings().silence)

    def test_extra_devices_come_last(self):
        cmd = qemu.command_line(_req(extra_args=["-chardev", "socket,id=c0,path=/s",
                                                 "-device", "usb-redir,chardev=c0,bus=xhci.0"]), "kvm")
        self.assertEqual(cmd[-4:], ["-chardev", "socket,id=c0,path=/s",
                                    "-device", "usb-redir,chardev=c0,bus=xhci.0"])
        self.assertEqual(self.opt(cmd, "-accel"), ["kvm"])

    def test_tcg_requested_skips_probe(self):
        with mock.patch.object(qemu, "probe_kvm") as probe:
            self.assertEqual(qemu.choose_accel("tcg", Path("/tmp"))[0], "tcg")
            probe.assert_not_called()

    def test_auto_falls_back_and_kvm_demand_fails(self):
        with mock.patch.object(qemu, "probe_kvm", return_value=(False, "/dev/kvm: No such file")):
            self.assertEqual(qemu.choose_accel("auto", Path("/tmp")), ("tcg", "/dev/kvm: No such file"))
            from harness.errors import EnvError
            with self.assertRaises(EnvError):
                qemu.choose_accel("kvm", Path("/tmp"))
        with mock.patch.object(qemu, "probe_kvm", return_value=(True, "ok")):
            self.assertEqual(qemu.choose_accel("auto", Path("/tmp"))[0], "kvm")


class Classify(unittest.TestCase):
    def watch(self, text):
        return bootlog.scan(text)

    def test_ok_via_debug_exit(self):
        w = self.watch("[    1.0] x\nDMAHARNESS-END status=0 modules=1/1 workload=none\n")
        self.assertEqual(qemu.classify(w, 1, None), ("ok", 0))

    def test_guest_status_from_exit_code(self):
        w = self.watch("DMAHARNESS-END status=3 modules=0/1 workload=none\n")
        self.assertEqual(qemu.classify(w, (3 << 1) | 1, None), ("guest-error", 3))

    def test_marker_without_debug_exit_device(self):
        w = self.watch("DMAHARNESS-END status=0 modules=0/0 workload=none\n")
        self.assertEqual(qemu.classify(w, 0, None), ("ok", 0))

    def test_panic_wins_even_after_timeout(self):
        w = self.watch("[ 2.1] Kernel panic - not syncing: Attempted to kill init! exitcode=0x00000100\n")
        self.assertEqual(qemu.classify(w, 0, None)[0], "panic")
        self.assertEqual(qemu.classify(w, None, "timeout")[0], "panic")
        self.assertIn("Attempted to kill init", w.panic_line)

    def test_silence_and_timeout(self):
        w = self.watch("[ 1.0] booting\n")
        self.assertEqual(qemu.classify(w, None, "silent"), ("silent", None))
        self.assertEqual(qemu.classify(w, None, "timeout"), ("timeout", None))

    def test_no_marker_and_qemu_error(self):
        self.assertEqual(qemu.classify(self.watch("[ 1.0] booting\n"), 0, None)[0], "no-marker")
        self.assertEqual(qemu.classify(self.watch(""), 1, None)[0], "qemu-error")


class Watch(unittest.TestCase):
    def test_partial_lines_across_feeds(self):
        w = bootlog.ConsoleWatch()
        w.feed("[ 0.5] KernelAddressSan")
        self.assertFalse(w.facts["kasan"])
        w.feed("itizer initialized (generic)\r\nDMAHARNESS-EN")
        self.assertTrue(w.facts["kasan"])
        self.assertFalse(w.ended)
        w.feed("D status=0 modules=0/0 workload=none")
        self.assertFalse(w.ended)   # no newline yet
        w.finish()
        self.assertTrue(w.ended)
        self.assertEqual(w.end_status, 0)

    def test_oops_lines_collected_and_tail(self):
        text = "".join(f"line {i}\n" for i in range(100)) + "BUG: kernel NULL pointer dereference, address: 0\n"
        w = bootlog.scan(text)
        self.assertEqual(len(w.oops_lines), 1)
        self.assertEqual(w.tail(2), ["line 99", "BUG: kernel NULL pointer dereference, address: 0"])


class DmaApiCounters(unittest.TestCase):
    """The init's counters line becomes a dict in the watch and the boot's JSON."""

    def test_counters_line(self):
        w = bootlog.scan("[    3.1] something\n"
                         "DMAHARNESS-INIT dma-api counters cacheline_report_count=10 "
                         "cacheline_sharing_count=70 error_count=0 dma_owned_dropped=0\r\n"
                         "DMAHARNESS-END status=0 modules=1/1 workload=agent\n")
        self.assertEqual(w.dma_api_counters, {"cacheline_report_count": 10, "cacheline_sharing_count": 70,
                                              "error_count": 0, "dma_owned_dropped": 0})
        res = qemu.BootResult("ok", "tcg", 1.0, 1, 0, w, Path("/r/console.log"), [])
        self.assertEqual(res.to_json()["dma_api_counters"]["cacheline_sharing_count"], 70)

    def test_absent_or_mangled(self):
        self.assertIsNone(bootlog.scan("DMAHARNESS-END status=0 modules=0/0 workload=none\n").dma_api_counters)
        # interleaved kernel output in the middle of the line: not taken half-read
        w = bootlog.scan("DMAHARNESS-INIT dma-api counters error_count=0 [ 5.0] usb 1-1: x\n")
        self.assertIsNone(w.dma_api_counters)
        # no counters at all (no DMA-API debugging files): an empty dict
        self.assertEqual(bootlog.scan("DMAHARNESS-INIT dma-api counters\n").dma_api_counters, {})


class KvmFallbackRetry(unittest.TestCase):
    """A KVM boot that stays silent is rerun under TCG with fresh devices."""

    def test_on_retry_gives_the_second_boot_new_extra_args(self):
        import tempfile
        calls = []

        def fake_boot_once(req, accel, on_output, poll, kvm_grace, stop_when=None):
            calls.append((accel, list(req.extra_args)))
            outcome = "kvm-silent" if accel == "kvm" else "ok"
            return qemu.BootResult(outcome, accel, 1.0, 0, 0, bootlog.ConsoleWatch(),
                                   req.console, [])

        with tempfile.TemporaryDirectory() as d, \
                mock.patch.object(qemu.paths, "sub", return_value=Path(d)), \
                mock.patch.object(qemu, "choose_accel", return_value=("kvm", "probe ok")), \
                mock.patch.object(qemu, "record_kvm_broken") as rec, \
                mock.patch.object(qemu, "_boot_once", side_effect=fake_boot_once):
            req = _req(extra_args=["-chardev", "socket,path=/old.sock"], console=Path(d) / "console.log")
            res = qemu.boot(req, on_retry=lambda: ["-chardev", "socket,path=/new.sock"])
        self.assertEqual(calls, [("kvm", ["-chardev", "socket,path=/old.sock"]),
                                 ("tcg", ["-chardev", "socket,path=/new.sock"])])
        self.assertEqual(res.outcome, "ok")
        self.assertIn("fell back to TCG", res.accel_note)
        rec.assert_called_once()


class KvmFailure(unittest.TestCase):
    """Which first boots say KVM is unusable here (then the boot reruns under TCG)."""

    def res(self, outcome, accel="kvm", console="", stderr=""):
        return qemu.BootResult(outcome, accel, 1.0, 134 if outcome == "qemu-error" else 0, None,
                               bootlog.scan(console), Path("/r/console.log"), [], stderr)

    ABORT = ("qemu-system-x86_64: error: failed to set MSR 0x10a to 0x69\n"
             "qemu-system-x86_64: ../../target/i386/kvm/kvm.c:3183: kvm_buf_set_msrs: "
             "Assertion `ret == cpu->kvm_msr_buf->nmsrs' failed.\n")

    def test_qemu_dying_under_kvm_before_any_output(self):
        why = qemu.kvm_failure(_req(), self.res("qemu-error", stderr=self.ABORT))
        self.assertIn("under KVM before the guest printed anything", why)
        self.assertIn("kvm_buf_set_msrs", why)

    def test_silent_kernel_under_kvm(self):
        self.assertIn("printed nothing", qemu.kvm_failure(_req(), self.res("kvm-silent")))

    def test_not_a_kvm_failure(self):
        # QEMU dying under TCG, or after the kernel printed, is the kernel's or QEMU's own error
        self.assertIsNone(qemu.kvm_failure(_req(), self.res("qemu-error", accel="tcg", stderr=self.ABORT)))
        self.assertIsNone(qemu.kvm_failure(_req(), self.res("qemu-error", console="Linux version 6.1\n")))
        self.assertIsNone(qemu.kvm_failure(_req(), self.res("panic", console="Kernel panic - not syncing\n")))
        # --accel kvm asked for KVM: no silent fallback
        self.assertIsNone(qemu.kvm_failure(_req(accel="kvm"), self.res("qemu-error", stderr=self.ABORT)))

    def test_abort_under_kvm_falls_back_to_tcg(self):
        import tempfile
        accels = []

        def fake_boot_once(req, accel, on_output, poll, kvm_grace, stop_when=None):
            accels.append(accel)
            if accel == "kvm":
                return self.res("qemu-error", stderr=self.ABORT)
            return qemu.BootResult("ok", accel, 1.0, 0, 0, bootlog.ConsoleWatch(), req.console, [])

        with tempfile.TemporaryDirectory() as d, \
                mock.patch.object(qemu.paths, "sub", return_value=Path(d)), \
                mock.patch.object(qemu, "choose_accel", return_value=("kvm", "probe ok")), \
                mock.patch.object(qemu, "_boot_once", side_effect=fake_boot_once):
            res = qemu.boot(_req(console=Path(d) / "console.log"))
            verdict = (Path(d) / "kvm-verdict.json").read_text()
        self.assertEqual(accels, ["kvm", "tcg"])
        self.assertEqual(res.outcome, "ok")
        self.assertIn("kvm_buf_set_msrs", verdict)

    def test_probe_uses_the_machine_and_cpu_of_real_boots(self):
        import subprocess
        import tempfile
        seen = []

        def fake_run(cmd, **kw):
            seen.append(cmd)
            return subprocess.CompletedProcess(cmd, 134, "", self.ABORT)

        with tempfile.TemporaryDirectory() as d, \
                mock.patch.object(qemu.os, "open", return_value=99), \
                mock.patch.object(qemu.os, "close"), \
                mock.patch.object(qemu.fcntl, "ioctl", side_effect=[12, 100]), \
                mock.patch.object(qemu, "qemu_binary", return_value="qemu-system-x86_64"), \
                mock.patch.object(qemu.subprocess, "run", side_effect=fake_run):
            ok, why = qemu.probe_kvm(Path(d))
        self.assertFalse(ok)
        self.assertIn("kvm_buf_set_msrs", why)
        real = qemu.command_line(_req(), "kvm")
        for opt in ("-machine", "-cpu"):
            self.assertEqual(seen[0][seen[0].index(opt) + 1], real[real.index(opt) + 1], opt)


if __name__ == "__main__":
    unittest.main()
