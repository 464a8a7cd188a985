"""Every command's --help answers questions (#44): examples, its own exit codes, paragraphs."""

import contextlib
import io
import os
import re
import unittest
from pathlib import Path
from unittest import mock

from harness import errors
from harness.cli import helptext
from harness.cli import main as cli

ROOT = Path(__file__).resolve().parents[3]


def commands() -> list[str]:
    return list(cli.parser()._subparsers._group_actions[0].choices)


def render(name: str) -> str:
    """`dmaharness NAME --help` as a user sees it on an 80-column terminal."""
    out = io.StringIO()
    with mock.patch.dict(os.environ, {"COLUMNS": "80"}), contextlib.redirect_stdout(out), \
            contextlib.redirect_stderr(io.StringIO()):
        code = cli.main([name, "--help"])
    assert code == 0, (name, code)
    return out.getvalue()


class EveryCommand(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.helps = {n: render(n) for n in commands()}

    def test_the_walk_sees_every_command(self):
        self.assertGreaterEqual(len(self.helps), 19)
        for n in ("build", "run", "check", "reports", "diff", "bisect-run", "help"):
            self.assertIn(n, self.helps)

    def test_two_examples_an_exit_table_and_short_lines(self):
        for name, text in self.helps.items():
            with self.subTest(command=name):
                ex = [ln for ln in text.splitlines()
                      if ln.lstrip().startswith(("dmaharness ", "./dmaharness "))]
                self.assertGreaterEqual(len(ex), 2, text[-1500:])
                codes = helptext.codes_of(text)
                self.assertIn(0, codes, text[-1500:])
                self.assertTrue(all(codes.values()), codes)       # each code says what it means
                long = [ln for ln in text.splitlines() if len(ln) > 80]
                self.assertEqual(long, [])

    def test_codes_a_command_cannot_return_are_absent(self):
        cannot = {"reports": {1, 5, 6, 7, 8, 9}, "diff": {5, 6, 7, 8, 9},
                  "build": {1, 6, 7, 8, 9}, "boot": {1, 7, 8, 9},
                  "bisect": {5, 6, 7, 8, 9}, "cache": {1, 5, 6, 7, 8, 9},
                  "mail": {1, 5, 6, 7, 8, 9}, "collect": {5, 6, 7, 9},
                  "bisect-run": {2, 3, 4, 9, 70}, "capture": {4, 9}}
        for name, codes in cannot.items():
            got = set(helptext.codes_of(self.helps[name]))
            self.assertEqual(got & codes, set(), name)
        must = {"check": {1, 9}, "plan": {9}, "collect": {1, 8}, "kunit": {1}, "run": {1, 7},
                "bisect-run": {125, 129, 131, 132}, "reports": {4}}
        for name, codes in must.items():
            self.assertLessEqual(codes, set(helptext.codes_of(self.helps[name])), name)

    def test_the_overview_lists_every_code_of_harness_errors(self):
        every = {v for k, v in vars(errors).items() if k.startswith("EXIT_")}
        self.assertEqual(set(helptext.codes_of(self.helps["help"])), every)

    def test_what_0_and_1_mean_is_the_commands_own(self):
        self.assertIn("a culprit was found", helptext.codes_of(self.helps["bisect"])[0])
        self.assertIn("KUnit case failed", helptext.codes_of(self.helps["kunit"])[1])

    def test_docs_list_the_same_codes(self):
        """docs/cli.md's per-command table says what each --help says."""
        text = (ROOT / "docs" / "cli.md").read_text()
        section = text[text.index("### Per command"):]
        rows = re.findall(r"^\| ((?:`[a-z-]+`(?:, )?)+) \| ([0-9, ]+) \|", section, re.M)
        seen = set()
        for names, codes in rows:
            for name in re.findall(r"`([a-z-]+)`", names):
                if name not in self.helps:
                    continue
                seen.add(name)
                self.assertEqual(set(helptext.codes_of(self.helps[name])),
                                 {int(c) for c in codes.split(",")}, name)
        self.assertEqual(seen, set(self.helps) - {"help", "bisect-run", "capture"})


class Paragraphs(unittest.TestCase):
    def fill(self, text: str, width: int = 200) -> str:
        return helptext.Formatter("x")._fill_text(text, width, "")

    def test_prose_is_wrapped_and_indented_lines_are_kept(self):
        prose = "word " * 60
        block = "examples:\n  dmaharness " + "x" * 90
        out = self.fill(prose + "\n\n" + block)
        para, kept = out.split("\n\n")
        self.assertGreater(len(para.splitlines()), 3)
        self.assertLessEqual(max(map(len, para.splitlines())), helptext.WIDTH)
        self.assertEqual(kept, block)

    def test_an_option_is_not_broken_at_its_hyphens(self):
        out = self.fill("x " * 30 + "--max-line-length=80 " + "y " * 30, 60)
        self.assertIn("--max-line-length=80", out)

    def test_a_table_row_wraps_under_its_meaning(self):
        t = helptext.table([0, 3])
        self.assertTrue(t.startswith("exit codes:\n  0    success\n  3    environment"))
        self.assertLessEqual(max(map(len, t.splitlines())), helptext.WIDTH)
        self.assertEqual(set(helptext.codes_of(t)), {0, 3})


if __name__ == "__main__":
    unittest.main()
