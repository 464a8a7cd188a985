"""--qemu-opts: split like a shell, handed to QEMU, kept when a boot reruns under TCG."""

import contextlib
import io
import tempfile
import unittest
from pathlib import Path
from types import SimpleNamespace
from unittest import mock

from harness.boot import bootlog, initramfs, qemu, settings
from harness import pipeline
from harness.cli import main as cli
from harness.cli import common


class QemuOpts(unittest.TestCase):
    def test_parsed_like_a_shell(self):
        a = cli.parser().parse_args(["boot", "--kernel", "6.1", "--qemu-opts",
                                     "-icount shift=0,sleep=off -d 'guest_errors'"])
        self.assertEqual(a.qemu_opts, ("-icount", "shift=0,sleep=off", "-d", "guest_errors"))
        self.assertIsNone(cli.parser().parse_args(["boot", "--kernel", "6.1"]).qemu_opts)
        self.assertEqual(settings.resolve(common.flags(cli.parser().parse_args(
            ["boot", "--kernel", "6.1"])))[0].qemu_opts, ())

    def test_unbalanced_quote_is_a_usage_error(self):
        with self.assertRaises(SystemExit) as e, contextlib.redirect_stderr(io.StringIO()) as err:
            cli.parser().parse_args(["boot", "--kernel", "6.1", "--qemu-opts", "-icount 'shift"])
        self.assertEqual(e.exception.code, 2)
        self.assertIn("--qemu-opts", err.getvalue())

    def test_given_to_qemu_and_to_the_tcg_rerun(self):
        """The first (KVM) boot and its TCG rerun with fresh devices both get them, last."""
        commands = []

        def fake_boot_once(req, accel, on_output, poll, kvm_grace, stop_when=None):
            commands.append(qemu.command_line(req, accel))
            outcome = "kvm-silent" if accel == "kvm" else "ok"
            return qemu.BootResult(outcome, accel, 1.0, 0, 0, bootlog.ConsoleWatch(), req.console, [])

        with tempfile.TemporaryDirectory() as d:
            run_dir = Path(d)
            b = settings.BootSettings(memory=512, qemu_opts=("-icount", "shift=0"))
            build = SimpleNamespace(artifacts=SimpleNamespace(config=run_dir / "no-config", key="k",
                                                              bzimage=run_dir / "bzImage"))
            job = pipeline.BootJob(build, run_dir, initramfs.RunConfig(), b, "run",
                                   extra_args=("-chardev", "old"), timeout=10)
            with mock.patch.object(qemu.paths, "sub", return_value=run_dir), \
                    mock.patch.object(pipeline, "initrd_for", return_value=run_dir / "x.cpio"), \
                    mock.patch.object(qemu, "qemu_binary", return_value="qemu-system-x86_64"), \
                    mock.patch.object(qemu, "choose_accel", return_value=("kvm", "probe ok")), \
                    mock.patch.object(qemu, "record_kvm_broken"), \
                    mock.patch.object(qemu, "_boot_once", side_effect=fake_boot_once):
                out = pipeline.boot(job, SimpleNamespace(note=lambda *_: None),
                                    on_retry=lambda: ["-chardev", "new"])
        self.assertEqual(out.outcome, "ok")
        self.assertEqual(len(commands), 2)
        self.assertEqual(commands[0][-4:], ["-chardev", "old", "-icount", "shift=0"])
        self.assertEqual(commands[1][-4:], ["-chardev", "new", "-icount", "shift=0"])


if __name__ == "__main__":
    unittest.main()
