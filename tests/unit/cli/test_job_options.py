"""Options only a campaign's job uses are hidden from users' help (#44 item 3):
absent from --help, its usage line and the man page, yet parsed as before
(plans write them, and jobs an older plan wrote still run); each keeps its
text (helptext.help_of) and docs/campaigns.md lists it."""

from __future__ import annotations

import argparse
import re
import unittest
from pathlib import Path

from harness.campaign import campaign
from harness.cli import helptext, jobcheck, manpage
from harness.cli import main as cli

ROOT = Path(__file__).resolve().parents[3]

# command -> its job-only options (every option string, old spellings too)
HIDDEN = {"run": {"--case-variant", "--case-run", "--signature", "--bisect-signature"},
          "sweep": {"--job", "--batch"}}

# a job's command line for each, as a plan writes it
JOBS = [
    (["run", "--case", "patches/6.1/cases/uvc-status-buffer", "--case-variant", "before",
      "--case-run", "1"], {"case_variant": "before", "case_run": 1}),
    (["run", "--series", "s.series", "--prefix", "3", "--signature", "KASAN"],
     {"bisect_signature": "KASAN", "prefix": 3}),
    (["run", "--bisect-signature", "KASAN"], {"bisect_signature": "KASAN"}),
    (["sweep", "--job", "(boot)"], {"job": "(boot)"}),
    (["sweep", "--usb-drivers", "--batch", "2/4"], {"batch": "2/4", "usb_drivers": True}),
]


def parsers() -> dict[str, argparse.ArgumentParser]:
    return {n: p for n, _, p in manpage.commands(cli.parser()) if p is not None}


def hidden() -> dict[str, set[str]]:
    """Every command's options whose help is suppressed."""
    out: dict[str, set[str]] = {}
    for name, p in parsers().items():
        for a in p._actions:
            if a.option_strings and a.help == argparse.SUPPRESS:
                out.setdefault(name, set()).update(a.option_strings)
    return out


class Hidden(unittest.TestCase):
    def test_exactly_the_job_options_are_hidden(self):
        self.assertEqual(hidden(), HIDDEN)

    def test_absent_from_help_and_usage(self):
        for command, strings in HIDDEN.items():
            text = parsers()[command].format_help()
            for s in strings:
                with self.subTest(command=command, option=s):
                    self.assertIsNone(re.search(rf"(?<![\w-]){re.escape(s)}(?![\w-])", text),
                                      text)

    def test_absent_from_the_man_page(self):
        page = manpage.render("/usr/share/dmaharness", "/usr/share/doc", "v", "d")
        for command, strings in HIDDEN.items():
            sect = page[page.index(f"\n.SS {command}\n"):]
            sect = sect[:sect.index("\n.SS ", 1)]
            for s in strings:
                self.assertNotIn(".B " + manpage.esc(s), sect, (command, s))

    def test_each_keeps_its_text_and_says_it_is_a_jobs(self):
        for command, p in parsers().items():
            for a in p._actions:
                if a.help == argparse.SUPPRESS and a.option_strings:
                    with self.subTest(command=command, option=a.option_strings[0]):
                        self.assertIn("campaign's job", helptext.help_of(a))

    def test_docs_campaigns_lists_them(self):
        text = (ROOT / "docs" / "campaigns.md").read_text()
        section = text[text.index("## Options a job uses"):]
        section = section[:section.index("\n## ", 1)]
        for strings in HIDDEN.values():
            for s in strings:
                self.assertRegex(section, rf"`{re.escape(s)}[ `]", s)


class StillParsed(unittest.TestCase):
    def test_the_commands_parse_them(self):
        for argv, want in JOBS:
            with self.subTest(argv=argv):
                a, code = cli.parse(argv)
                self.assertIsNotNone(a, code)
                for k, v in want.items():
                    self.assertEqual(getattr(a, k), v)

    def test_the_job_checker_parses_them(self):
        for argv, want in JOBS:
            with self.subTest(argv=argv):
                got = jobcheck.given(argv[0], argv[1:])
                for k, v in want.items():
                    self.assertEqual(got[k][1], v)

    def test_a_planned_case_job_passes_its_check(self):
        c = campaign.Campaign(Path("/tmp/c"), "case", (), {
            "case": "uvc-status-buffer", "case_folder": "case", "job_case": "case",
            "variants": ["before", "fix"], "runs": 1, "extra": []})
        job = campaign.planned_job(c, "before-1")
        self.assertIn("--case-variant", job.argv)
        jobcheck.check_job(c, job)                   # no InputError


if __name__ == "__main__":
    unittest.main()
