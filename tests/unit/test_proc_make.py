"""proc.make: how the project's C tools (camera, agent, profiler) are built."""

import os
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from harness import errors, proc


class Make(unittest.TestCase):
    def setUp(self):
        self.dir = Path(tempfile.mkdtemp())

    def test_product_is_returned(self):
        (self.dir / "Makefile").write_text("all:\n\ttouch tool\n")
        self.assertEqual(proc.make(self.dir, self.dir / "tool", "a tool"), self.dir / "tool")

    def test_failure_names_the_tool_and_makes_last_words(self):
        (self.dir / "Makefile").write_text("all:\n\t@echo 'tool.c:3: error: nope' >&2; exit 1\n")
        with self.assertRaises(errors.BuildError) as e:
            proc.make(self.dir, self.dir / "tool", "the frobnicator")
        self.assertIn("the frobnicator failed to build", str(e.exception))
        self.assertIn("tool.c:3: error: nope", str(e.exception))

    def test_success_without_the_product_is_a_failure(self):
        (self.dir / "Makefile").write_text("all:\n\t@true\n")
        with self.assertRaises(errors.BuildError):
            proc.make(self.dir, self.dir / "tool", "a tool")

    def test_a_folder_it_may_not_write_builds_into_the_cache(self):
        """An installed copy (read-only for its users) builds its C tools in
        <cache>/tools/, never in its own folder (#44)."""
        (self.dir / "Makefile").write_text("BUILD ?= build\nall:\n\tmkdir -p $(BUILD) && "
                                           "touch $(BUILD)/tool\n")
        real = os.access
        cache = self.dir / "cache"

        def access(path, mode):
            return False if Path(path) == self.dir else real(path, mode)
        with mock.patch.dict(os.environ, {"DMAHARNESS_CACHE": str(cache)}), \
                mock.patch.object(proc.os, "access", access):
            out = proc.make(self.dir, self.dir / "build" / "tool", "a tool")
            self.assertEqual(out.parent, proc.build_dir(self.dir))
        self.assertTrue(out.is_file())
        self.assertIn(cache.resolve() / "tools", out.parents)
        self.assertFalse((self.dir / "build").exists())
        # a folder one may write keeps its own build/
        self.assertEqual(proc.build_dir(self.dir), self.dir / "build")

    def test_no_make_is_the_environments(self):
        (self.dir / "Makefile").write_text("all:\n\ttouch tool\n")
        with mock.patch.dict(os.environ, {"PATH": str(self.dir / "empty")}), \
                self.assertRaises(errors.EnvError) as e:
            proc.make(self.dir, self.dir / "tool", "a tool")
        self.assertIn("make cannot run", e.exception.message)


if __name__ == "__main__":
    unittest.main()


ROOT = Path(__file__).resolve().parents[2]


@unittest.skipUnless(Path("/proc/self/autogroup").is_file(), "the kernel has no autogroups")
class Priority(unittest.TestCase):
    def test_a_spawned_session_keeps_a_niced_harness_priority(self):
        # a new session is a new autogroup at nice 0: without keep_priority()
        # a background build's make would weigh as much as the foreground's
        code = ("import os, sys; sys.path.insert(0, sys.argv[1]); os.nice(7)\n"
                "from harness import proc\n"
                "p = proc.spawn(['cat', '/proc/self/autogroup'], stdout=sys.stdout); p.wait()")
        out = subprocess.run([sys.executable, "-c", code, str(ROOT)], capture_output=True,
                             text=True, check=True).stdout
        self.assertRegex(out, r"nice 7$", out)
