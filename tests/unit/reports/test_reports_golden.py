"""Golden files: every console log under tests/fixtures/logs/ carries the
reports the parser must find in it, in a header like syzkaller's testdata.

Adding a case is adding a file: the log after a header of TITLE:/ALT:/
FRAME:/KIND:/RULE:/CORRUPTED: lines and an empty line (an empty header:
no report).  `tests/run.py --update` writes the header from the parser's
output; review it with git diff.
"""

from __future__ import annotations

import tempfile
import unittest
from pathlib import Path

from harness.reports import rules, engine, golden

LOGS = Path(__file__).resolve().parents[2] / "fixtures" / "logs"


def golden_files() -> list[Path]:
    return sorted(LOGS.rglob("*.log"))


def read(path: Path) -> golden.Golden:
    return golden.read_golden(path.read_text(encoding="utf-8", errors="surrogateescape"))


class GoldenFiles(unittest.TestCase):
    def test_every_file_gives_its_header(self):
        self.assertGreater(len(golden_files()), 10)
        for path in golden_files():
            with self.subTest(log=str(path.relative_to(LOGS))):
                g = read(path)
                got = golden.golden_expected(engine.parse(g.log))
                self.assertEqual(got, list(g.expected),
                                 "the parser's reports differ from the header; if the new ones "
                                 "are right, run tests/run.py --update and review git diff")

    def test_every_kind_of_the_table_has_a_golden_case(self):
        seen = {e.get("RULE") for path in golden_files() for e in read(path).expected}
        missing = [r.name for r in rules.RULES if r.name not in seen]
        self.assertEqual(missing, [], "rows of harness/rules.py without a golden file")

    def test_headers_name_known_rows(self):
        names = {r.name for r in rules.RULES}
        for path in golden_files():
            for e in read(path).expected:
                if "RULE" in e:
                    self.assertIn(e["RULE"], names, path.name)


class GoldenFormat(unittest.TestCase):
    """The header format, syzkaller's fields included (read, not written)."""

    def test_read_syzkaller_style_file(self):
        text = ("TITLE: WARNING in foo\nALT: bad-access in foo\nTYPE: WARNING\nFRAME: foo\n"
                "CORRUPTED: Y\nPANICKED: Y\n\n[ 1.0] line one\n[ 1.1] line two\n\nREPORT:\nfoo\n")
        g = golden.read_golden(text)
        self.assertEqual(g.expected, ({"TITLE": "WARNING in foo", "ALT": ["bad-access in foo"],
                                       "TYPE": "WARNING", "FRAME": "foo", "CORRUPTED": True,
                                       "PANICKED": True},))
        self.assertEqual(g.log, "[ 1.0] line one\n[ 1.1] line two\n")

    def test_empty_header_and_empty_title_mean_no_report(self):
        self.assertEqual(golden.read_golden("\nlog\n"), golden.Golden((), (), "log\n"))
        self.assertEqual(golden.read_golden("TITLE: \n\nlog\n").expected, ())

    def test_comments_kept_and_unknown_fields_refused(self):
        g = golden.read_golden("# a comment\n\nlog\n")
        self.assertEqual(g.comments, ("# a comment",))
        with self.assertRaises(ValueError):
            golden.read_golden("TITEL: x\n\nlog\n")

    def test_a_new_console_is_a_file_dropped_in(self):
        # What adding a golden file cut from a real console takes: the log
        # after an empty line, then update_golden (tests/run.py --update)
        # writes its header; the log stays byte for byte (CRLF, bytes that
        # are not UTF-8), and the file is then one of golden_files().
        log = (golden.read_golden((LOGS / "linux-7-formats.log").read_text(encoding="utf-8")).log
               .replace("disables this message.\n", "disables this message.\r\n")
               + "[  200.000000][   T41] usb 1-1: product \udcff\udcfe\n")
        raw = ("\n" + log).encode("utf-8", "surrogateescape")
        with tempfile.TemporaryDirectory() as d:
            path = Path(d) / "real-7.3-example.log"
            path.write_bytes(raw)
            self.assertTrue(golden.update_golden(str(path)))
            data = path.read_bytes()
            self.assertTrue(data.endswith(raw), "the log is kept byte for byte")
            g = golden.read_golden(data.decode("utf-8", "surrogateescape"))
            self.assertEqual(g.log, log)
            self.assertEqual(len(g.expected), 4)
            # ... and passes test_every_file_gives_its_header as it reads it.
            g = read(path)
            self.assertEqual(golden.golden_expected(engine.parse(g.log)), list(g.expected))
            self.assertFalse(golden.update_golden(str(path)), "a second update changes nothing")

    def test_golden_files_are_found_in_subfolders(self):
        names = {str(p.relative_to(LOGS)) for p in golden_files()}
        self.assertIn("linux-7-formats.log", names)
        self.assertIn(str(Path("rules") / "warnings.log"), names)

    def test_header_round_trip(self):
        reps = engine.parse(golden.read_golden(
            (LOGS / "oops-ubsan-kmemleak-panic.log").read_text(encoding="utf-8")).log)
        header = golden.golden_header(reps, ["# c"])
        g = golden.read_golden(header + "log\n")
        self.assertEqual(list(g.expected), golden.golden_expected(reps))
        self.assertEqual(g.comments, ("# c",))
        self.assertEqual(len(g.expected), len(reps))


if __name__ == "__main__":
    unittest.main()
