"""dmaharness bisect-run in a small git repository built from the pristine 6.1 tree.

The repository (kept in <cache>/testrepos/, keyed by the Debian package
version, and built once: `git add` of a kernel tree takes ~40 s) has five
commits:

  1 pristine          the Debian tree as unpacked           -> exit 0 (good)
  2 README change     harmless
  3 the bug           the seed case's bug patch, by git am  -> exit 1 (bad)
  4 README change     harmless
  5 broken uvcvideo   an #error in uvc_status.c             -> exit 125 (skip)

Its work tree starts as hard links of the read-only pristine tree (no
copy of 1.5 GB), so every check also shows that neither bisect-run nor
git ever writes through a link.  The first bisect-run builds the mirror in
full (ccache makes that cheap after the harness's own 6.1 build); the
later ones are incremental builds of uvcvideo, or cache hits.
"""

import json
import os
import signal
import subprocess
import sys
import time
import unittest
from pathlib import Path

from tests.integration.gitrepo import git, pristine_repo

ROOT = Path(__file__).resolve().parents[2]
CLI = [sys.executable, str(ROOT / "dmaharness")]


def default_sigint():
    """preexec_fn: the child takes SIGINT as a terminal would deliver it, even when this
    test runs from a background job (whose shell ignores SIGINT for its children, a
    disposition the harness rightly keeps)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
BUG = ROOT / "patches/6.1/cases/uvc-status-buffer/0001-media-uvcvideo-Embed-the-status-URB-buffer-in-struct.patch"
SIGNATURE = ("^DMA-API: device driver maps a buffer that shares a cache line with other "
             "data of its object in (uvc_status_start|uvc_v4l2_open)$")
FLOOD = ["--duration", "4s"]
REPO_FORMAT = 1
# a file the bisection never changes: its inode and mtime must stay the pristine ones
WITNESS = "drivers/media/usb/uvc/uvc_driver.c"


def ensure_repo() -> tuple[Path, list[str], Path]:
    """The test repository: (repo, commits, pristine)."""

    def more(tmp: Path, commits: list[str]) -> None:
        def edit(rel, line, msg):
            p = tmp / rel
            text = p.read_text()
            p.unlink()                   # a new file: never write through the link
            p.write_text(text + line)
            git(tmp, "commit", "-q", "-a", "-m", msg)
            commits.append(git(tmp, "rev-parse", "HEAD"))

        edit("README", "\nA harmless line for dmaharness's bisect-run test.\n",
             "README: a harmless change")
        git(tmp, "am", "-q", str(BUG))
        commits.append(git(tmp, "rev-parse", "HEAD"))
        edit("README", "Another harmless line.\n", "README: another harmless change")
        edit("drivers/media/usb/uvc/uvc_status.c",
             '\n#error "dmaharness bisect-run test: this commit does not build"\n',
             "media: uvcvideo: break the build on purpose")

    return pristine_repo("6.1", f"bisect-run-v{REPO_FORMAT}", more)


def bisect_run(repo, *extra, timeout=3600):
    return subprocess.run(CLI + ["bisect-run", "--signature", SIGNATURE, *FLOOD, *extra],
                          cwd=repo, capture_output=True, text=True, timeout=timeout)


class BisectRun(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.repo, cls.commits, cls.pristine = ensure_repo()
        git(cls.repo, "bisect", "reset", check=False)
        st = os.stat(cls.pristine / WITNESS)
        cls.witness = (st.st_ino, st.st_mtime_ns)

    def checkout(self, n):
        git(self.repo, "checkout", "-q", "--detach", self.commits[n - 1])

    def assert_untouched(self):
        self.assertEqual(git(self.repo, "status", "--porcelain", "--untracked-files=all"), "",
                         "bisect-run left the checkout dirty")
        st = os.stat(self.repo / WITNESS)
        self.assertEqual((st.st_ino, st.st_mtime_ns), self.witness,
                         "a file of the checkout (a link of the pristine tree) was changed")

    def step(self, n, expect, *extra):
        self.checkout(n)
        t0 = time.monotonic()
        r = bisect_run(self.repo, "--json", *extra)
        el = time.monotonic() - t0
        sys.stderr.write(f"\n  [bisect-run commit {n}: exit {r.returncode} in {el:.0f}s] "
                         + r.stderr.strip().splitlines()[-1] + "\n")
        self.assertEqual(r.returncode, expect, f"commit {n}:\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}")
        out = json.loads(r.stdout)
        self.assertEqual(out["version"], 1)
        self.assertEqual(out["exit_code"], expect)
        self.assertEqual(out["commit"], self.commits[n - 1])
        self.assertEqual(out["kernel_version"], "6.1")
        self.assertFalse(out["dirty"])
        self.assert_untouched()
        return out

    def test_1_exit_codes_good_bad_skip(self):
        out = self.step(1, 0)
        self.assertEqual(out["verdict"], "good")
        self.assertEqual(out["detector_series"], "6.1")
        self.assertTrue(all(r["status"] == "clean" for r in out["runs"]), out["runs"])
        self.assertGreaterEqual(len(out["runs"]), 2)
        config = (Path(out["build"]["artifacts"]) / "config").read_text().splitlines()
        for opt in ("CONFIG_KASAN=y", "CONFIG_DMA_API_DEBUG=y",
                    "CONFIG_DMA_API_DEBUG_CACHELINE_SHARING=y", "CONFIG_USB_VIDEO_CLASS=m"):
            self.assertIn(opt, config)

        out = self.step(3, 1)
        self.assertEqual(out["verdict"], "bad")
        hits = [r for r in out["runs"] if r["status"] == "hit"]
        self.assertTrue(hits)
        self.assertTrue(os.path.isfile(os.path.join(hits[0]["detail"], "console.log")))

        out = self.step(5, 125)
        self.assertEqual(out["verdict"], "skip")
        self.assertIn("does not build", out["reason"])
        self.assertIn("uvc_status.c", out.get("detail", "") + out["reason"])

        # a commit seen before is not rebuilt
        out = self.step(3, 1)
        self.assertTrue(out["build"]["cached"])

    def test_2_git_bisect_run_finds_the_bug_commit(self):
        git(self.repo, "bisect", "start", self.commits[3], self.commits[0])
        try:
            t0 = time.monotonic()
            r = subprocess.run(["git", "-C", str(self.repo), "bisect", "run", *CLI, "bisect-run",
                                "--signature", SIGNATURE, *FLOOD],
                               capture_output=True, text=True, timeout=3600)
            sys.stderr.write(f"\n  [git bisect run: {time.monotonic() - t0:.0f}s]\n")
            self.assertEqual(r.returncode, 0, r.stdout[-3000:] + r.stderr[-3000:])
            self.assertIn(f"{self.commits[2]} is the first bad commit", r.stdout)
            log = git(self.repo, "bisect", "log")
            self.assertIn(f"# first bad commit: [{self.commits[2]}]", log)
        finally:
            git(self.repo, "bisect", "reset", check=False)
        self.assert_untouched()

    def test_3_usage_error_stops_git_bisect(self):
        git(self.repo, "bisect", "start", self.commits[3], self.commits[0])
        try:
            r = subprocess.run(["git", "-C", str(self.repo), "bisect", "run", *CLI, "bisect-run",
                                "--no-such-option"], capture_output=True, text=True, timeout=600)
            self.assertNotEqual(r.returncode, 0)
            self.assertIn("bisect run failed", r.stdout + r.stderr)
            self.assertNotIn("is the first bad commit", r.stdout)
        finally:
            git(self.repo, "bisect", "reset", check=False)

    def test_4_ctrl_c_during_make_leaves_the_checkout_clean(self):
        self.checkout(3)
        p = subprocess.Popen(CLI + ["bisect-run", "--signature", SIGNATURE, *FLOOD, "--force"],
                             cwd=self.repo, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                             text=True, preexec_fn=default_sigint)
        err = []
        try:
            for line in p.stderr:
                err.append(line)
                if "] mirror: " in line:      # make starts next
                    time.sleep(2)
                    p.send_signal(signal.SIGINT)
                    break
            err += p.stderr.readlines()
            code = p.wait(timeout=120)
        finally:
            if p.poll() is None:
                p.kill()
        self.assertEqual(code, 130, "".join(err)[-3000:])
        self.assertIn("interrupted", err[-1])
        self.assert_untouched()
        mirror = None
        for line in err:
            if "] mirror: " in line:
                mirror = line.split("] mirror: ")[1].split(" ")[0]
        self.assertTrue(mirror)
        left = []
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
            except OSError:
                continue
            if mirror in cmd:
                left.append(cmd)
        self.assertEqual(left, [], "processes left running after Ctrl-C")
        # the next step builds from the interrupted mirror
        out = self.step(3, 1, "--force")
        self.assertFalse(out["build"]["cached"])


if __name__ == "__main__":
    unittest.main()
