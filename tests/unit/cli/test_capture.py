"""`dmaharness capture --help` builds nothing (#44): its text is read from the C source."""

import os
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from harness import errors, proc
from harness.cli import capture

from .test_main import run

ROOT = Path(__file__).resolve().parents[3]



class Help(unittest.TestCase):
    def test_help_calls_no_make(self):
        with mock.patch.object(proc, "make", side_effect=AssertionError("built")):
            for argv in (["capture", "--help"], ["capture", "-h"], ["help", "capture"]):
                code, out, err = run(argv)
                self.assertEqual(code, 0, err)
                self.assertTrue(out.startswith("Usage: dmaharness-capture DEVICE"), out[:200])
                self.assertIn("dmaharness capture --device 046d:0825", out)

    def test_without_make_on_the_path_from_any_folder(self):
        with tempfile.TemporaryDirectory() as empty:
            env = {"PATH": empty, "HOME": os.environ.get("HOME", "/"),
                   "DMAHARNESS_CACHE": str(Path(empty) / "cache")}
            for argv in (["capture", "--help"], ["help", "capture"]):
                r = subprocess.run([sys.executable, str(ROOT / "dmaharness"), *argv],
                                   cwd="/", env=env, capture_output=True, text=True, timeout=60)
                self.assertEqual(r.returncode, 0, r.stderr)
                self.assertIn("Usage: dmaharness-capture", r.stdout)
                self.assertIn("Exit status:", r.stdout)
            # anything else needs the tool: no make is the environment's (3), not a bug (70)
            r = subprocess.run([sys.executable, str(ROOT / "dmaharness"), "capture",
                                "--device", "1:2"], cwd="/", env=env, capture_output=True,
                               text=True, timeout=60)
            self.assertEqual(r.returncode, errors.EXIT_ENV, r.stderr)
            self.assertIn("make", r.stderr)
            self.assertNotIn("Traceback", r.stderr)

    def test_the_text_is_the_c_sources(self):
        """What tests/test_cli.c asserts of cap_usage(), escapes decoded as C does."""
        text = capture.usage_text()
        for words in ("--device VID:PID", "--bus N --address N", "--node PATH", "--detach",
                      "Exit status", "  3  the profile was written", "on stderr when the profile",
                      "never a vendor request", '"HD Pro Webcam C920"'):
            self.assertIn(words, text)
        self.assertNotIn("\\n", text)
        self.assertNotIn('\\"', text)
        self.assertTrue(text.endswith("for tests.\n"))
        self.assertLessEqual(max(map(len, text.splitlines())), 80)

    def test_a_shape_it_does_not_know_builds_the_tool(self):
        with tempfile.TemporaryDirectory() as d:
            src = Path(d) / "cli.c"
            for body in ('void cap_usage(FILE *f)\n{\n\tfputs(USAGE, f);\n}\n',
                         'void cap_usage(FILE *f)\n{\n\tfputs("Usage: dmaharness-capture\\x41", f);\n}\n',
                         'void cap_usage(FILE *f)\n{\n\tfprintf(f, "%s", u);\n}\n'):
                src.write_text(body)
                self.assertIsNone(capture.usage_text(src), body)
            self.assertIsNone(capture.usage_text(Path(d) / "missing.c"))
            src.write_text('void cap_usage(FILE *f)\n{\n\tfputs(\n"Usage: dmaharness-capture X\\n"\n'
                           '"  \\"q\\" \\\\ end\\n", f);\n}\n')
            self.assertEqual(capture.usage_text(src),
                             'Usage: dmaharness-capture X\n  "q" \\ end\n')
            with mock.patch.object(capture, "USAGE_SOURCE", Path(d) / "missing.c"), \
                    mock.patch.object(proc, "make", side_effect=errors.BuildError("no")):
                code, _, err = run(["capture", "--help"])
            self.assertEqual(code, errors.EXIT_BUILD, err)

    def test_only_a_lone_help_is_answered_here(self):
        self.assertTrue(capture.wants_help(["--help"]))
        self.assertTrue(capture.wants_help(["-h", "--help"]))
        for argv in ([], ["--device", "1:2", "--help"], ["--name", "--help"]):
            self.assertFalse(capture.wants_help(argv), argv)


if __name__ == "__main__":
    unittest.main()
