"""harness.jsonout: a file is written whole or not at all, and a failure leaves nothing behind."""

import json
import os
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from harness import jsonout
from harness.errors import InputError


class Write(unittest.TestCase):
    def setUp(self):
        self.d = Path(tempfile.mkdtemp(prefix="dmaharness-jsonout-"))

    def tearDown(self):
        for p in sorted(self.d.rglob("*"), reverse=True):
            p.rmdir() if p.is_dir() else p.unlink()
        self.d.rmdir()

    def test_whole_and_versioned(self):
        jsonout.write(self.d / "r.json", {"ok": True})
        self.assertEqual(json.loads((self.d / "r.json").read_text()), {"version": 1, "ok": True})
        self.assertEqual([p.name for p in self.d.iterdir()], ["r.json"])

    def test_a_failed_rename_leaves_the_old_file_and_no_temporary_one(self):
        (self.d / "r.json").write_text("old\n")
        with mock.patch.object(os, "replace", side_effect=OSError(28, "No space left on device")):
            with self.assertRaisesRegex(InputError, "No space left"):
                jsonout.write(self.d / "r.json", {"ok": True})
        self.assertEqual((self.d / "r.json").read_text(), "old\n")
        self.assertEqual([p.name for p in self.d.iterdir()], ["r.json"])

    def test_a_folder_or_a_missing_parent_is_an_input_error(self):
        (self.d / "a-folder").mkdir()
        for bad in (self.d / "a-folder", self.d / "missing" / "r.json"):
            with self.assertRaises(InputError):
                jsonout.write_text(bad, "x")
        self.assertEqual(sorted(p.name for p in self.d.iterdir()), ["a-folder"])


if __name__ == "__main__":
    unittest.main()
