"""harness/cache: listing the cache folder and pruning work trees and runs safely."""

import contextlib
import io
import json
import os
import signal
import tempfile
import time
import unittest
from pathlib import Path
from unittest import mock

from harness.kernel import cache, kbuild
from harness import paths
from harness.cli import main as cli


class Prune(unittest.TestCase):
    def setUp(self):
        self.base = Path(tempfile.mkdtemp())
        patcher = mock.patch.dict(os.environ, {"DMAHARNESS_CACHE": str(self.base)})
        patcher.start()
        self.addCleanup(patcher.stop)
        self.now = time.time()

    def tree(self, key, version, age_h, built=True, artifact_age_h=None, size=4096):
        work = self.base / "work"
        (work / key / "_build").mkdir(parents=True)
        (work / key / "_build" / "vmlinux").write_bytes(b"x" * size)
        state = work / f"{key}.json"
        state.write_text(json.dumps({"key": key, "version": version, "built": built,
                                     "patches": [["p", 1]]}))
        os.utime(state, (self.now - age_h * 3600,) * 2)
        if artifact_age_h is not None:
            meta = self.base / "artifacts" / key / "meta.json"
            meta.parent.mkdir(parents=True)
            meta.write_text("{}")
            os.utime(meta, (self.now - artifact_age_h * 3600,) * 2)

    def test_keeps_the_most_recently_used_built_tree_of_each_version(self):
        self.tree("6.1-old", "6.1", 50)
        self.tree("6.1-hit", "6.1", 60, artifact_age_h=1)     # built long ago, booted an hour ago
        self.tree("6.1-new-unbuilt", "6.1", 0.1, built=False)  # an interrupted build
        self.tree("6.12-a", "6.12", 5)
        self.tree("6.12-b", "6.12", 3)
        res = cache.prune(1, None)
        self.assertEqual(sorted(t["key"] for t in res["removed"]), ["6.1-new-unbuilt", "6.1-old", "6.12-a"])
        left = sorted(p.name for p in (self.base / "work").iterdir())
        self.assertEqual(left, ["6.1-hit", "6.1-hit.json", "6.12-b", "6.12-b.json"])
        self.assertGreater(res["freed_bytes"], 3 * 4096 - 1)

    def test_keep_two_and_dry_run_removes_nothing(self):
        for i in range(3):
            self.tree(f"6.1-{i}", "6.1", i)
        res = cache.prune(2, None, dry_run=True)
        self.assertEqual([t["key"] for t in res["removed"]], ["6.1-2"])
        self.assertTrue((self.base / "work" / "6.1-2" / "_build" / "vmlinux").is_file())
        self.assertTrue(res["dry_run"])

    def test_a_tree_a_build_holds_is_left_alone(self):
        self.tree("6.1-a", "6.1", 1)
        self.tree("6.1-busy", "6.1", 5)
        with paths.locked("variant-6.1-busy-build", shared=True):     # another build seeds from it
            res = cache.prune(1, None)
        self.assertEqual(res["removed"], [])
        self.assertEqual([t["key"] for t in res["in_use"]], ["6.1-busy"])
        self.assertTrue((self.base / "work" / "6.1-busy.json").is_file())
        # once free, it goes
        self.assertEqual([t["key"] for t in cache.prune(1, None)["removed"]], ["6.1-busy"])

    def test_a_state_file_that_names_no_tree_of_its_own_is_ignored(self):
        """A hand-made work/zz.json must never make prune remove work/ or leave the cache."""
        self.tree("6.1-keep", "6.1", 1)
        work = self.base / "work"
        outside = self.base / "artifacts"
        outside.mkdir()
        for name, key in (("zz", ""), ("zy", "../artifacts"), ("zx", "."), ("zw", "6.1-keep"),
                          ("zv", ["6.1-keep"]), ("zu", "a/../../x")):
            (work / f"{name}.json").write_text(json.dumps({"key": key, "version": "6.1"}))
        (work / "zt.json").write_bytes(b"\xff\x00not json")
        res = cache.prune(0, None)
        self.assertEqual([t["key"] for t in res["removed"]], ["6.1-keep"])
        self.assertTrue(work.is_dir() and outside.is_dir())
        self.assertTrue((work / "zz.json").is_file())

    def test_a_fifo_for_a_state_file_is_not_read(self):
        """work/x.json as a FIFO: `cache` lists the rest instead of blocking on it."""
        self.tree("6.1-keep", "6.1", 1)
        os.mkfifo(self.base / "work" / "6.1-fifo.json")
        (self.base / "work" / "6.1-fifo").mkdir()
        done = []

        class Blocked(BaseException):       # no except clause of the code catches it
            pass

        def alarm(signum, frame):
            raise Blocked("cache.trees() blocked on a FIFO")

        old = signal.signal(signal.SIGALRM, alarm)
        self.addCleanup(signal.signal, signal.SIGALRM, old)
        signal.alarm(10)
        try:
            done = [t.key for t in cache.trees()]
        finally:
            signal.alarm(0)
        self.assertEqual(done, ["6.1-keep"])

    def test_a_run_folder_in_use_is_kept(self):
        runs = self.base / "runs"
        for name in ("busy", "done"):
            (runs / name).mkdir(parents=True)
        with mock.patch.object(paths, "_held", []):
            paths.mark_in_use(runs / "busy")
            for name in ("busy", "done"):
                os.utime(runs / name, (self.now - 10 * 86400,) * 2)
            res = cache.prune(1, 7)
            for fd in paths._held:
                os.close(fd)
        self.assertEqual([Path(r).name for r in res["runs_removed"]], ["done"])
        self.assertEqual([Path(r).name for r in res["runs_in_use"]], ["busy"])
        self.assertTrue((runs / "busy").is_dir())

    def test_ages_that_make_no_sense_are_refused(self):
        for bad in ("nan", "inf", "-1", "1e309", "x"):
            out, err = io.StringIO(), io.StringIO()
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                code = cli.main(["cache", "prune", "--runs-older-than", bad, "--dry-run"])
            self.assertEqual(code, 2, bad)
            self.assertIn("not an age in days", err.getvalue())

    def test_old_runs_and_interrupted_prunes_are_removed(self):
        runs = self.base / "runs"
        for name, age_d in (("old", 10), ("new", 1)):
            (runs / name).mkdir(parents=True)
            (runs / name / "console.log").write_text("x")
            os.utime(runs / name, (self.now - age_d * 86400,) * 2)
        (self.base / "work" / ".pruning-6.1-x-123" / "_build").mkdir(parents=True)
        self.assertEqual(cache.prune(1, None)["runs_removed"], [])    # runs only when asked
        res = cache.prune(1, 7)
        self.assertEqual([Path(r).name for r in res["runs_removed"]], ["old"])
        self.assertEqual(sorted(p.name for p in runs.iterdir()), ["new"])
        self.assertFalse((self.base / "work" / ".pruning-6.1-x-123").exists())

    def test_usage_counts_hard_links_once_under_src(self):
        (self.base / "src").mkdir()
        (self.base / "src" / "Makefile").write_bytes(b"m" * 65536)
        self.tree("6.1-a", "6.1", 1, size=8192)
        before = cache.usage()
        os.link(self.base / "src" / "Makefile", self.base / "work" / "6.1-a" / "Makefile")
        after = cache.usage()
        self.assertGreaterEqual(after["src"], 65536)
        self.assertEqual(after["work"], before["work"])     # the link is src's bytes
        (self.base / "work" / "6.1-a" / "patched.c").write_bytes(b"p" * 65536)
        self.assertGreaterEqual(cache.usage()["work"], before["work"] + 65536)
        self.assertEqual(after["runs"], 0)

    def test_build_hit_needs_the_tree_only_when_asked(self):
        """A pruned variant's build is a hit for boots, and is built again for file:line."""
        src = kbuild.Source("6.1", "6.1.1-1", Path("/nonexistent.tar.xz"))
        variant = kbuild.Variant("6.1", (), ())
        with mock.patch.object(kbuild, "find_source", return_value=src), \
                mock.patch.object(kbuild, "compiler_version", return_value="gcc 12"):
            key = variant.key(src)
            meta = self.base / "artifacts" / key / "meta.json"
            meta.parent.mkdir(parents=True)
            meta.write_text("{}")
            os.utime(meta, (self.now - 3600,) * 2)
            self.assertTrue(kbuild.build(variant).cached)
            self.assertGreater(meta.stat().st_mtime, self.now - 60)      # the hit is a use
            with mock.patch.object(kbuild, "check_tools", side_effect=RuntimeError("builds")):
                with self.assertRaisesRegex(RuntimeError, "builds"):
                    kbuild.build(variant, need_tree=True)
                (self.base / "work" / key / "_build").mkdir(parents=True)
                (self.base / "work" / key / "_build" / "Makefile").write_text("")
                self.assertTrue(kbuild.build(variant, need_tree=True).cached)

    def test_cli_json(self):
        self.tree("6.1-a", "6.1", 1)
        self.tree("6.1-b", "6.1", 2)
        out = io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
            self.assertEqual(cli.main(["cache", "--json"]), 0)
        d = json.loads(out.getvalue())
        self.assertEqual([t["key"] for t in d["trees"]], ["6.1-a", "6.1-b"])
        self.assertIn("work", d["parts_bytes"])
        out = io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
            self.assertEqual(cli.main(["cache", "prune", "--json", "-q"]), 0)
        self.assertEqual([t["key"] for t in json.loads(out.getvalue())["removed"]], ["6.1-b"])
        with contextlib.redirect_stderr(io.StringIO()):
            self.assertEqual(cli.main(["cache", "prune", "--keep", "-1"]), 2)


if __name__ == "__main__":
    unittest.main()
