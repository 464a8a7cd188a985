"""The commands by area (#44 item 3): `dmaharness`, `dmaharness help` and
`--help` list every command exactly once, under the title of its area
(harness.cli.helptext.GROUPS), the bare overview on one screen; the man
page and docs/cli.md's "Commands" group them the same way."""

from __future__ import annotations

import contextlib
import io
import os
import re
import unittest
from pathlib import Path
from unittest import mock

from harness.cli import helptext, manpage
from harness.cli import main as cli

ROOT = Path(__file__).resolve().parents[3]


def commands() -> list[str]:
    return list(cli.parser()._subparsers._group_actions[0].choices)


def run(argv: list[str]) -> str:
    """What `dmaharness ARGV` prints on an 80-column terminal."""
    out = io.StringIO()
    with mock.patch.dict(os.environ, {"COLUMNS": "80"}), contextlib.redirect_stdout(out), \
            contextlib.redirect_stderr(io.StringIO()):
        code = cli.main(argv)
    assert code == 0, (argv, code)
    return out.getvalue()


def listed(text: str) -> list[tuple[str, str]]:
    """(group title, command) for each command line of an overview: a title
    is a line "  TITLE:", a command "    NAME  its help"."""
    out, title = [], None
    for ln in text.splitlines():
        m = re.fullmatch(r"  (\S.*):", ln)
        if m:
            title = m.group(1)
            continue
        m = re.match(r"    ([a-z][a-z-]*)(?:\s{2,}\S|$)", ln)
        if m and title is not None:
            out.append((title, m.group(1)))
    return out


def want() -> list[tuple[str, str]]:
    return [(title, n) for title, names in helptext.GROUPS for n in names]


class Groups(unittest.TestCase):
    def test_every_command_is_in_exactly_one_group(self):
        names = [n for _, group in helptext.GROUPS for n in group]
        self.assertEqual(len(names), len(set(names)), "a command in two groups")
        self.assertEqual(sorted(names), sorted(commands()))
        titles = [t for t, _ in helptext.GROUPS]
        self.assertEqual(len(titles), len(set(titles)))
        self.assertNotIn(helptext.OTHER, titles)

    def test_a_command_no_group_names_is_listed_under_other(self):
        g = helptext.grouped(["run", "new-command", "build"])
        self.assertEqual(g, [("kernels", ["build"]), ("runs and verdicts", ["run"]),
                             (helptext.OTHER, ["new-command"])])

    def test_areas_with_more_than_one_door(self):
        """The issue's examples: a series' bisection and git's, sweeps of QEMU
        devices and of USB drivers with their site reports, the campaign's
        plan, run and collect, each area one group."""
        where = {n: t for t, n in want()}
        for together in (("bisect", "bisect-run"), ("sweep", "site-report", "usb-drivers"),
                         ("plan", "campaign", "collect"), ("run", "case", "check"),
                         ("build", "boot", "kunit")):
            self.assertEqual(len({where[n] for n in together}), 1, together)


class Overview(unittest.TestCase):
    def test_bare_and_help_list_each_command_once_under_its_group(self):
        for argv in ([], ["help"]):
            with self.subTest(argv=argv):
                text = run(argv)
                self.assertEqual(listed(text), want(), text)

    def test_the_overview_fits_one_screen(self):
        text = run([])
        lines = text.splitlines()
        self.assertLessEqual(len(lines), 40, text)
        self.assertEqual([ln for ln in lines if len(ln) > 80], [])
        # each command's help on its own line, none wrapped under it
        for ln in lines:
            m = re.match(r"    ([a-z][a-z-]*)\s*$", ln)
            self.assertIsNone(m, f"a command whose help does not fit its line: {ln!r}")
        self.assertIn("usage: dmaharness", text)
        self.assertIn("dmaharness --help", text)

    def test_help_lists_them_the_same_with_examples_and_exit_codes(self):
        text = run(["--help"])
        self.assertEqual(listed(text), want())
        self.assertIn("examples:", text)
        self.assertEqual(len(helptext.codes_of(text)), len(helptext.MEANING))

    def test_the_man_page_groups_them_too(self):
        order = [n for n, _, _ in manpage.commands(cli.parser())]
        self.assertEqual(order, [n for _, n in want() if n != "help"])
        page = manpage.render("/usr/share/dmaharness", "/usr/share/doc/dmaharness", "v", "d")
        top = page[page.index("The commands, by area:"):page.index(".SH COMMANDS")]
        self.assertEqual(re.findall(r"^\.I (.*)$", top, re.M),
                         [manpage.esc(t) for t, _ in helptext.GROUPS])


class Docs(unittest.TestCase):
    def test_cli_md_groups_the_commands_as_the_overview(self):
        """docs/cli.md's Commands: one ### section per group, in order, its
        table naming the group's commands."""
        text = (ROOT / "docs" / "cli.md").read_text()
        section = text[text.index("\n## Commands\n"):]
        section = section[:section.index("\n## ", 1)]
        got = []
        for part in re.split(r"^### ", section, flags=re.M)[1:]:
            title, _, body = part.partition("\n")
            rows = re.findall(r"^\| ((?:`[a-z-]+`(?:, )?)+) \|", body, re.M)
            names = [n for r in rows for n in re.findall(r"`([a-z-]+)`", r)]
            got.append((title.strip().lower(), names))
        self.assertEqual(got, [(t, list(n)) for t, n in helptext.GROUPS])


if __name__ == "__main__":
    unittest.main()
