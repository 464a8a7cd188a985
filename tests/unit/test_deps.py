"""harness/deps.sh: each command's package set (nothing is installed here:
only --list and --why, which read the table)."""

import os
import re
import subprocess
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DEPS = ROOT / "harness" / "deps.sh"
TEST_ONLY = {"chromium", "slurmctld", "slurmd", "slurm-client", "munge", "redis-server",
             "openssh-server", "parallel", "python3-junitparser", "libcmocka-dev", "clang",
             "libusb-1.0-0-dev"}


def deps(*args, kernel=None):
    env = {k: v for k, v in os.environ.items() if k != "KERNEL"}
    if kernel:
        env["KERNEL"] = kernel
    r = subprocess.run(["sh", str(DEPS), *args], capture_output=True, text=True, env=env)
    return r.returncode, r.stdout, r.stderr


class Sets(unittest.TestCase):
    def listed(self, name, kernel=None):
        rc, out, err = deps("--list", name, kernel=kernel)
        self.assertEqual(rc, 0, err)
        return out.split()

    def test_run_installs_nothing_only_the_tests_need(self):
        run = set(self.listed("run"))
        self.assertFalse(run & TEST_ONLY, run & TEST_ONLY)
        for needed in ("qemu-system-x86", "linux-source-6.1", "libusbredirparser-dev",
                       "busybox-static", "gcc", "dwarves"):
            self.assertIn(needed, run)

    def test_sets_nest(self):
        run, test, every = (set(self.listed(n)) for n in ("run", "test", "all"))
        self.assertLess(run, test)
        self.assertLess(test, every)
        self.assertLessEqual(TEST_ONLY, test)
        self.assertEqual(len(self.listed("all")), len(every), "a package listed twice")

    def test_kernel_adds_its_source_to_run(self):
        self.assertIn("linux-source-6.12", self.listed("run", kernel="6.12"))
        self.assertNotIn("linux-source-6.12", self.listed("run", kernel="6.1"))
        # 7.x is fetched by the harness itself: nothing to install
        self.assertEqual(self.listed("run", kernel="7.3"), self.listed("run"))

    def test_every_package_says_why(self):
        rc, out, _ = deps("--why", "all")
        self.assertEqual(rc, 0)
        rows = [line.split(None, 2) for line in out.splitlines()]
        self.assertEqual(len(rows), len(self.listed("all")))
        for pkg, group, why in rows:
            self.assertIn(group, ("run", "test", "all"), pkg)
            self.assertGreater(len(why), 5, pkg)

    def test_bad_set_is_a_usage_error(self):
        rc, _, err = deps("--list", "everything")
        self.assertEqual(rc, 2)
        self.assertIn("usage", err)

    def test_makefile_targets_use_their_sets(self):
        mk = (ROOT / "Makefile").read_text()
        self.assertRegex(mk, r"(?m)^run: deps-run ")
        self.assertNotRegex(mk, r"(?m)^run:.*c-tools")     # c-tools has the capture tool
        for target in ("unit-python", "unit-c", "fuzz", "integration"):
            self.assertRegex(mk, rf"(?m)^{re.escape(target)}: deps-test\b")


if __name__ == "__main__":
    unittest.main()
