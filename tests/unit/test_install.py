"""`make install` (#44): dmaharness on the PATH, from any folder, with its man page."""

import os
import shutil
import subprocess
import sys
import tempfile
import time
import unittest
from pathlib import Path

from harness.cli import main as cli

ROOT = Path(__file__).resolve().parents[2]


@unittest.skipUnless(shutil.which("make") and shutil.which("tar"), "make install needs make and tar")
class Install(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.dest = Path(cls.tmp.name) / "dest"
        env = dict(os.environ, PYTHON=sys.executable)
        t0 = time.monotonic()
        cls.made = subprocess.run(["make", "-s", "-C", str(ROOT), "install",
                                   f"DESTDIR={cls.dest}", "PREFIX=/usr",
                                   f"PYTHON={sys.executable}"],
                                  env=env, capture_output=True, text=True, timeout=120)
        cls.seconds = time.monotonic() - t0
        cls.share = cls.dest / "usr" / "share" / "dmaharness"

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def dmaharness(self, *argv):
        env = {"PATH": os.pathsep.join([os.path.dirname(sys.executable), "/usr/bin", "/bin"]),
               "HOME": self.tmp.name, "DMAHARNESS_CACHE": str(Path(self.tmp.name) / "cache"),
               "COLUMNS": "80"}
        return subprocess.run([str(self.dest / "usr/bin/dmaharness"), *argv],   # its #! line
                              cwd="/", env=env, capture_output=True, text=True, timeout=60)

    def test_installs_quickly_and_cleanly(self):
        self.assertEqual(self.made.returncode, 0, self.made.stderr[-2000:])
        self.assertLess(self.seconds, 20)
        for rel in ("dmaharness", "harness/cli/main.py", "harness/guest/init",
                    "harness/guest/Makefile", "patches/6.1/series", "kconfig-fragments/base.config",
                    "fake-device/Makefile", "fake-device/capture/cli.c",
                    "fake-device/profiles", "bench/insnprof/get-header.sh"):
            self.assertTrue((self.share / rel).exists(), rel)
        self.assertTrue(os.access(self.share / "bench/insnprof/get-header.sh", os.X_OK))
        left = [p for p in self.share.rglob("*") if p.name in ("build", ".gitignore")
                or p.suffix == ".o"]
        self.assertEqual(left, [])
        self.assertFalse((self.share.parent / "dmaharness.new").exists())
        link = self.dest / "usr/bin/dmaharness"
        self.assertEqual(os.readlink(link), "../share/dmaharness/dmaharness")
        self.assertTrue((self.dest / "usr/share/doc/dmaharness/docs/cli.md").is_file())

    def test_the_launcher_runs_from_any_folder(self):
        r = self.dmaharness("--help")
        self.assertEqual(r.returncode, 0, r.stderr)
        for name in cli.parser()._subparsers._group_actions[0].choices:
            self.assertIn(name, r.stdout)
        r = self.dmaharness("reports", str(ROOT / "tests/fixtures/logs/"
                                          "real-6.1-detector-stock-camera-flood.log"))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("10 report(s), 2 signature(s)", r.stdout)
        r = self.dmaharness("capture", "--help")        # read from the installed C source
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("Usage: dmaharness-capture", r.stdout)

    def test_the_installed_copy_knows_its_version(self):
        r = self.dmaharness("--version")
        self.assertEqual(r.returncode, 0, r.stderr)
        stamped = self.share / "VERSION"
        if stamped.is_file():               # git was there at install time
            self.assertEqual(r.stdout.split()[1], stamped.read_text().strip())

    def test_the_man_page_renders(self):
        page = self.dest / "usr/share/man/man1/dmaharness.1"
        text = page.read_text()
        for sect in ("NAME", "SYNOPSIS", "DESCRIPTION", "COMMANDS", "EXIT STATUS", "FILES",
                     "SEE ALSO"):
            self.assertIn(f"\n.SH {sect}\n", text)
        for name in cli.parser()._subparsers._group_actions[0].choices:
            if name != "help":
                self.assertIn(f"\n.SS {name.replace('-', chr(92) + '-')}\n", text)
        self.assertIn(".I ~/.cache/dmaharness", text)
        self.assertIn("/usr/share/dmaharness", text)
        if shutil.which("man"):
            cmd = ["man", "--warnings", "-E", "UTF-8", "-l", "-P", "cat", str(page)]
        elif shutil.which("groff"):
            cmd = ["groff", "-man", "-Tutf8", "-ww", str(page)]
        else:
            self.skipTest("neither man nor groff is installed: the page is not rendered")
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=60,
                           env=dict(os.environ, MANWIDTH="80"))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stderr.strip(), "")
        self.assertIn("dmaharness bisect-run", r.stdout)
        self.assertIn("--signature", r.stdout)

    def test_uninstall_takes_it_all_away(self):
        other = Path(self.tmp.name) / "other"
        args = ["make", "-s", "-C", str(ROOT), f"DESTDIR={other}", "PREFIX=/opt/x",
                f"PYTHON={sys.executable}"]
        subprocess.run(args + ["install"], check=True, capture_output=True, timeout=120)
        self.assertTrue((other / "opt/x/bin/dmaharness").is_symlink())
        subprocess.run(args + ["uninstall"], check=True, capture_output=True, timeout=60)
        self.assertEqual([p for p in other.rglob("*") if not p.is_dir()], [])

    def test_a_relative_prefix_is_refused(self):
        r = subprocess.run(["make", "-s", "-C", str(ROOT), "install", "PREFIX=usr",
                            f"DESTDIR={self.tmp.name}/rel"], capture_output=True, text=True,
                           timeout=60)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("absolute", r.stderr)


if __name__ == "__main__":
    unittest.main()
