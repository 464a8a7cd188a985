"""--tree: build, run and run --case on a git checkout made from the 7.3 tree.

The checkout is a git repository of Debian's pristine linux-source-7.3
(hard links, one commit), as a kernel engineer's own tree would be.  The
harness builds it in a mirror in the cache and must never write to it; the
seed case's outcome through --tree must be the Debian tree's.
"""

import json
import os
import re
import subprocess
import sys
import time
import tomllib
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
sys.path.insert(0, str(ROOT))

from tests.integration.gitrepo import git, pristine_repo  # noqa: E402

CLI = [sys.executable, str(ROOT / "dmaharness")]
VERSION = "7.3"       # the current kernel: a 7.x checkout must pick patches/7.3/series
CASE = ROOT / "patches" / VERSION / "cases" / "uvc-status-buffer"
REPO_FORMAT = 1
WITNESS = "drivers/media/usb/uvc/uvc_status.c"     # patched by the case: must stay as it is
SHORT = ("--runs", "1", "--duration", "8s")


def run(*args, timeout=3600):
    return subprocess.run(CLI + list(args), capture_output=True, text=True, timeout=timeout)


def fixed_patterns(outcome: dict, patterns: list[str]) -> list[list[bool]]:
    """Per comparison: which of the case's expect.fixed patterns are fixed as a class of
    titles (a matching report in every before run, none in any after run), as the
    diff's verdict judges them; a single title may be flaky (KASAN reports only the
    first bad access of a boot, which differs from run to run)."""
    out = []
    for c in outcome["comparisons"]:
        rows = c["signatures"]
        verdict = []
        for p in patterns:
            hit = [r for r in rows if re.search(p, r["title"])]
            before = all(any(r["before_counts"][i] for r in hit)
                         for i in range(c["before"]["runs"])) if hit else False
            after = any(n for r in hit for n in r["after_counts"])
            verdict.append(before and not after)
        out.append(verdict)
    return out


class OwnTree(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.repo = pristine_repo(VERSION, f"tree-v{REPO_FORMAT}")[0]
        st = os.stat(cls.repo / WITNESS)
        cls.witness = (st.st_ino, st.st_mtime_ns)

    def assert_untouched(self):
        self.assertEqual(git(self.repo, "status", "--porcelain", "--untracked-files=all"), "",
                         "the harness left the checkout dirty")
        st = os.stat(self.repo / WITNESS)
        self.assertEqual((st.st_ino, st.st_mtime_ns), self.witness,
                         "a file of the checkout was written")

    def test_1_build_and_run(self):
        t0 = time.monotonic()
        r = run("build", "--tree", str(self.repo), "--json")
        self.assertEqual(r.returncode, 0, r.stderr[-3000:])
        out = json.loads(r.stdout)
        sys.stderr.write(f"\n  [build --tree: {time.monotonic() - t0:.0f}s, "
                         f"cached={out['cached']}] ")
        head = git(self.repo, "rev-parse", "HEAD")
        self.assertTrue(out["key"].startswith(f"git-{VERSION}-{head[:12]}-"), out["key"])
        self.assertEqual((out["tree"], out["commit"], out["kernel"]),
                         (str(self.repo.resolve()), head, VERSION))
        if not out["cached"]:       # the build says which detector series it chose
            self.assertIn(f"detector patches/{VERSION}/series", r.stderr)
        config = (Path(out["artifacts"]) / "config").read_text().splitlines()
        for opt in ("CONFIG_KASAN=y", "CONFIG_DMA_API_DEBUG=y", "CONFIG_USB_VIDEO_CLASS=m"):
            self.assertIn(opt, config)
        self.assert_untouched()
        # --kernel that contradicts the checkout is refused before any work
        r = run("build", "--tree", str(self.repo), "--kernel", "6.1")
        self.assertEqual(r.returncode, 2 if "invalid choice" in r.stderr else 4, r.stderr)
        self.assertIn("disagree", r.stderr)

        r = run("run", "--tree", str(self.repo), "--duration", "4s", "--json")
        self.assertEqual(r.returncode, 0, r.stderr[-3000:])
        out = json.loads(r.stdout)
        self.assertEqual(out["build"]["key"].split("-")[:2], ["git", VERSION])
        self.assertTrue(out["build"]["cached"])
        self.assertGreater(out["summary"]["guest_counted"], 0)
        self.assert_untouched()

    def test_2_seed_case_matches_the_debian_tree(self):
        # the short form of test_boot's seed case: 7.3's dma-owned write is
        # deterministic (bench/seed-signal: 100 of 100), so one run a variant
        r = run("run", "--tree", str(self.repo), "--case", str(CASE), *SHORT, "--json")
        self.assertIn(r.returncode, (0, 1), r.stderr[-3000:])
        ours = json.loads(r.stdout)
        for c in ours["outcome"]["comparisons"]:
            self.assertTrue(c["verdict"]["matches"], json.dumps(c["verdict"], indent=1))
        self.assertEqual(r.returncode, 0)
        self.assertEqual(ours["tree"], str(self.repo.resolve()))
        self.assert_untouched()
        r = run("run", "--kernel", VERSION, "--case", str(CASE), *SHORT, "--json")
        self.assertEqual(r.returncode, 0, r.stderr[-3000:])
        debian = json.loads(r.stdout)
        patterns = tomllib.loads((CASE / "case.toml").read_text())["expect"]["fixed"]
        self.assertEqual(fixed_patterns(ours["outcome"], patterns),
                         fixed_patterns(debian["outcome"], patterns))
        # the layout evidence is the --tree variant's own
        html = Path(ours["html"]).read_text()
        self.assertRegex(html, r"status\[\d+\];\s*&lt;== buffer")


if __name__ == "__main__":
    unittest.main()
