#!/usr/bin/env python3
"""Run the Python tests with unittest and close with 'N passed, N failed'.

  tests/run.py unit          tests/unit/test_*.py (fast, no QEMU)
  tests/run.py integration   tests/integration/test_*.py (build and boot kernels)
  tests/run.py all
  tests/run.py ci            what `make test` runs: unit, then `make unit-c fuzz`, then
                             integration, with CI's 7.3 kernel built in the background
                             from the start (see ci())
  tests/run.py --update [unit|...]
                             rewrite the golden headers of tests/fixtures/logs/**/*.log
                             (TITLE:, ALT:, FRAME:, KIND:, RULE:, CORRUPTED:) from what
                             harness.reports.engine parses in them; review with git diff.
                             With a suite, run it afterwards.
"""

import os
import signal
import subprocess
import sys
import time
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class _Result(unittest.TextTestResult):
    times: list[tuple[float, str]] = []      # (wall seconds, test id), every test of the run

    def startTest(self, test):
        self._t0 = time.monotonic()
        super().startTest(test)

    def stopTest(self, test):
        super().stopTest(test)
        el = time.monotonic() - self._t0
        _Result.times.append((el, test.id()))
        if self.showAll:
            return
        if el > 5:
            self.stream.write(f"\n  ({test.id()} took {el:.0f}s)\n")
            self.stream.flush()


GOLDEN = os.path.join(ROOT, "tests", "fixtures", "logs")
CI_FRAGMENTS = "7.3=" + os.path.join(ROOT, "tests", "fixtures", "kernel", "ci-7.3.config")


def update_golden() -> int:
    """Rewrite every golden file's header; print the files that changed."""
    sys.path.insert(0, ROOT)
    from harness.reports import golden
    names = sorted(os.path.relpath(os.path.join(d, n), GOLDEN)
                   for d, _, files in os.walk(GOLDEN) for n in files if n.endswith(".log"))
    changed = [n for n in names if golden.update_golden(os.path.join(GOLDEN, n))]
    for n in changed:
        print(f"updated tests/fixtures/logs/{n}")
    print(f"golden files: {len(changed)} of {len(names)} rewritten")
    return 0


def ci() -> int:
    """`make test`: the Python unit tests, the C unit tests and the fuzz
    targets, then the integration tests, stopping at the first phase that
    fails as make would.  CI's 7.3 kernel (the one configuration every 7.3
    test shares) is built from the start by `build --background` (nice 19,
    beside the one-at-a-time builds): on the core the unit tests leave idle,
    then beside the 6.1 tests' boots, whose QEMU keeps one core busy and
    leaves the other idle.  The first 7.3 test waits for it (the variant's
    lock); if it failed, that test builds the kernel itself and says why.
    The background build ends with this run (stopped as Ctrl-C stops a
    build, the cache consistent) and its log stays in the cache folder."""
    env = dict(os.environ)
    env.setdefault("DMAHARNESS_EXTRA_FRAGMENTS", CI_FRAGMENTS)
    cache = os.environ.get("DMAHARNESS_CACHE") or os.path.expanduser("~/.cache/dmaharness")
    os.makedirs(cache, exist_ok=True)
    log_path = os.path.join(cache, "make-test-background-7.3.log")
    with open(log_path, "w") as log:
        pre = subprocess.Popen([sys.executable, os.path.join(ROOT, "dmaharness"), "build",
                                "--kernel", "7.3", "--background"],
                               stdin=subprocess.DEVNULL, stdout=log, stderr=log, env=env, cwd=ROOT)
    print(f"ci: building CI's 7.3 kernel in the background (log: {log_path})", flush=True)
    me = os.path.abspath(__file__)
    try:
        for cmd in ([sys.executable, me, "unit"], ["make", "-s", "unit-c", "fuzz"],
                    [sys.executable, me, "integration"]):
            rc = subprocess.call(cmd, cwd=ROOT)
            if rc:
                return rc
        return 0
    finally:
        if pre.poll() is None:
            pre.send_signal(signal.SIGINT)      # as Ctrl-C: make stopped, the cache consistent
            try:
                pre.wait(timeout=120)
            except subprocess.TimeoutExpired:
                pre.kill()
                pre.wait()
        print(f"ci: the background 7.3 build exited {pre.returncode}: {_outcome(log_path)} "
              f"(log: {log_path})", flush=True)


def _outcome(log_path: str) -> str:
    """What `build` said last: "KEY: cached", "KEY: built in S s", or its last line."""
    try:
        with open(log_path, errors="replace") as f:
            lines = [ln.strip() for ln in f if ln.strip()]
    except OSError:
        return "no log"
    said = [ln for ln in lines if ln.endswith(": cached") or ": built in " in ln]
    return (said or lines or ["nothing"])[-1]


def main(argv):
    if len(argv) > 1 and argv[1] == "ci":
        return ci()
    if "--update" in argv[1:]:
        argv = [a for a in argv if a != "--update"]
        update_golden()
        if len(argv) == 1:
            return 0
    which = argv[1] if len(argv) > 1 else "unit"
    pattern = argv[2] if len(argv) > 2 else "test_*.py"
    dirs = {"unit": ["unit"], "integration": ["integration"], "all": ["unit", "integration"]}[which]
    sys.path.insert(0, ROOT)
    os.chdir(ROOT)
    if which != "unit":
        # CI's 7.3 kernels as one configuration: the dma profile's, the CI
        # sweep's and the device profiles' (tests/fixtures/kernel/ci-7.3.config)
        os.environ.setdefault("DMAHARNESS_EXTRA_FRAGMENTS", CI_FRAGMENTS)
        # Per-architecture layouts (harness.reports.archlayout) cost a cross
        # prepare (~20 s) per variant tree and architecture: the case and
        # sweep tests judge on x86_64's layout, test_crosslayout.py computes
        # arm's itself.  Set DMAHARNESS_ARCH_LAYOUTS=all to run them all with it.
        os.environ.setdefault("DMAHARNESS_ARCH_LAYOUTS", "none")
    suite = unittest.TestSuite()
    loader = unittest.TestLoader()
    for d in dirs:
        suite.addTests(loader.discover(os.path.join(ROOT, "tests", d), pattern=pattern,
                                       top_level_dir=ROOT))
    verbosity = 2 if which != "unit" else 1
    runner = unittest.TextTestRunner(verbosity=verbosity, resultclass=_Result, stream=sys.stdout)
    res = runner.run(suite)
    failed = len(res.failures) + len(res.errors) + len(res.unexpectedSuccesses)
    skipped = len(res.skipped)
    passed = res.testsRun - failed - skipped
    if which != "unit":     # what each integration test costs, for the next change to see
        slow = sorted(_Result.times, reverse=True)
        print(f"\n{which}: wall time per test, slowest first "
              f"(total {sum(s for s, _ in slow) / 60:.1f} min):")
        for s, name in slow:
            if s >= 1:
                print(f"  {s:7.1f}s  {name.removeprefix('tests.integration.')}")
    print(f"{which}: {passed} passed, {failed} failed, {skipped} skipped")
    if res.testsRun == 0:
        print(f"{which}: no test ran", file=sys.stderr)
        return 1
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
