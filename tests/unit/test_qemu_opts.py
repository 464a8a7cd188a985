"""--qemu-opts: split like a shell, handed to QEMU, kept when a boot reruns under TCG."""

import contextlib
import io
import tempfile
import unittest
from pathlib import Path
from types import SimpleNamespace
from unittest import mock

from harness import cli, qemu


class QemuOpts(unittest.TestCase):
    def test_parsed_like_a_shell(self):
        a = cli.parser().parse_args(["boot", "--kernel", "6.1", "--qemu-opts",
                                     "-icount shift=0,sleep=off -d 'guest_errors'"])
        self.assertEqual(a.qemu_opts, ["-icount", "shift=0,sleep=off", "-d", "guest_errors"])
        self.assertEqual(cli.parser().parse_args(["boot", "--kernel", "6.1"]).qemu_opts, [])

    def test_unbalanced_quote_is_a_usage_error(self):
        with self.assertRaises(SystemExit) as e, contextlib.redirect_stderr(io.StringIO()) as err:
            cli.parser().parse_args(["boot", "--kernel", "6.1", "--qemu-opts", "-icount 'shift"])
        self.assertEqual(e.exception.code, 2)
        self.assertIn("--qemu-opts", err.getvalue())

    def test_given_to_qemu_and_to_the_tcg_rerun(self):
        seen = {}

        def fake_boot(req, on_output=None, on_retry=None):
            seen["extra"] = list(req.extra_args)
            seen["retry"] = list(on_retry())
            return "result"

        with tempfile.TemporaryDirectory() as d:
            run_dir = Path(d)
            a = SimpleNamespace(command="run", kernel="6.1", append="", memory=512, smp=1, accel="auto", silence=60,
                                console=False, qemu_opts=["-icount", "shift=0"])
            res = SimpleNamespace(artifacts=SimpleNamespace(config=run_dir / "no-config",
                                                            bzimage=run_dir / "bzImage"))
            with mock.patch.object(qemu, "boot", side_effect=fake_boot):
                out = cli._boot(a, SimpleNamespace(note=lambda *_: None), res, run_dir, run_dir / "x.cpio",
                                timeout=10, extra_args=["-chardev", "old"], on_retry=lambda: ["-chardev", "new"])
        self.assertEqual(out, "result")
        self.assertEqual(seen["extra"], ["-chardev", "old", "-icount", "shift=0"])
        self.assertEqual(seen["retry"], ["-chardev", "new", "-icount", "shift=0"])


if __name__ == "__main__":
    unittest.main()
