"""One flag, one concept (#44): every option renamed keeps its old spelling as
an alias for a release, and both spellings parse the same.

ALIASES holds every renaming as (command, its positional arguments, the
options in their old spelling, in their new one); the parsers are the real
ones, walked as the man page walks them (harness.cli.manpage: the top
parser's commands and the delegated commands' own parsers).  A second test
reads every option's help for the note "(old spelling: ..., kept for a
release)" and checks that each spelling it names is in the table, and the
other way round (a job-only option, hidden from --help, by the help it
keeps: helptext.help_of); a third that no option string means two things
on one command.  Campaigns: plans write the new names, RUN-ARGS take either, and
a job an older plan wrote in the old spelling still passes the job checker.
"""

from __future__ import annotations

import argparse
import re
import unittest
from pathlib import Path

from harness import errors
from harness.cli import capture, helptext, jobcheck, manpage
from harness.cli import main as cli
from harness.campaign import campaign

ALIASES: list[tuple[str, list[str], list[str], list[str]]] = [
    # guests booted at once are --parallel everywhere (campaign: GNU parallel's jobs)
    ("campaign", ["/tmp/c"], ["--jobs", "3"], ["--parallel", "3"]),
    # -j is make's jobs; reports' parser processes are --workers
    ("reports", ["console.log"], ["-j", "4"], ["--workers", "4"]),
    ("reports", ["console.log"], ["--jobs", "4"], ["--workers", "4"]),
    # one name for "no detector"
    *[(c, [], ["--no-base-series"], ["--no-detector"])
      for c in ("build", "boot", "kunit", "run", "case", "bisect", "check", "sweep",
                "bisect-run")],
    # QEMU device models of the catalogue and USB device profiles: two names
    ("sweep", [], ["--devices", "virtio,nvme"], ["--qemu-devices", "virtio,nvme"]),
    ("plan", ["sweep", "-o", "/tmp/s"], ["--devices", "usb"], ["--qemu-devices", "usb"]),
    *[(c, [], ["--device", "logitech-k120", "--device", "x.profile"],
       ["--usb-device", "logitech-k120", "--usb-device", "x.profile"])
      for c in ("run", "case", "bisect", "bisect-run")],
    # the signature a bisection looks for is --signature on every command
    ("run", [], ["--bisect-signature", "KASAN: dma-owned"],
     ["--signature", "KASAN: dma-owned"]),
    # "profile" is the debug profile; counting guest instructions is --insn-count
    *[(c, [], ["--insn-profile"], ["--insn-count"]) for c in ("boot", "run", "case")],
]

# what a command requires whatever the option under test
REQUIRED = {"bisect": ["--series", "s.series", "--signature", "x"],
            "bisect-run": ["--signature", "x"], "check": ["fix.patch"], "case": ["my-case"]}

# capture's options are its C tool's (fake-device/capture/cli.c, whose own test
# parses both spellings: tests/test_cli.c); its --timeout is per USB request
C_TOOL_ALIASES = {("capture", "--timeout"): "--request-timeout"}


def parsers() -> dict[str, argparse.ArgumentParser]:
    """Every command's parser as the user's command line meets it (capture,
    a C tool, has none)."""
    return {name: p for name, _, p in manpage.commands(cli.parser()) if p is not None}


def parse(command: str, argv: list[str]) -> argparse.Namespace:
    return parsers()[command].parse_args(argv + REQUIRED.get(command, []))


def old_spellings(help_text: str) -> list[str]:
    """The option strings a help text names as old spellings."""
    return [s for m in re.finditer(re.escape(helptext.OLD_SPELLING) + r"(\S+), kept for a "
                                   r"release", help_text) for s in m.group(1).split("/")]


class BothSpellingsParseTheSame(unittest.TestCase):
    def test_each_pair(self):
        for command, args, old, new in ALIASES:
            with self.subTest(command=command, old=old):
                self.assertNotEqual(old, new)
                self.assertEqual(parse(command, args + old), parse(command, args + new))
                self.assertNotEqual(parse(command, args), parse(command, args + new),
                                    "the option changes nothing: the pair tests nothing")

    def test_the_option_is_one_action_and_the_new_name_comes_first(self):
        """--help shows the new name first; usage and error messages name it."""
        for command, _, old, new in ALIASES:
            o, n = old[0], new[0]
            with self.subTest(command=command, old=o):
                act = parsers()[command]._option_string_actions
                self.assertIs(act[o], act[n])
                self.assertEqual(act[n].option_strings[0], n)
                self.assertIn(o, old_spellings(helptext.help_of(act[n])))


class EveryOldSpellingIsInTheTable(unittest.TestCase):
    def test_every_note_in_help_is_tested(self):
        tested = {(c, old[0]) for c, _, old, _ in ALIASES}
        noted = set()
        for command, p in parsers().items():
            for a in p._actions:
                for s in old_spellings(helptext.help_of(a)):
                    self.assertIn(s, a.option_strings, (command, a.option_strings))
                    noted.add((command, s))
        self.assertEqual(noted - tested, set(), "old spellings that no pair of ALIASES tests")
        self.assertEqual(tested - noted, set(), "pairs whose option says nothing of its "
                                                "old spelling in --help")
        self.assertGreater(len(noted), 15)

    def test_capture_names_its_old_spelling_too(self):
        text = " ".join(capture.usage_text().split())
        for (_, old), new in C_TOOL_ALIASES.items():
            self.assertIn(new, text)
            self.assertIn(old, old_spellings(text[text.index(new):]))

    def test_the_reader_of_notes(self):
        note = helptext.old_spelling("-j", "--jobs", note="; elsewhere -j is make's jobs")
        self.assertEqual(old_spellings("parse on N cores" + note), ["-j", "--jobs"])
        self.assertEqual(old_spellings("plain help"), [])


class NoStringMeansTwoThings(unittest.TestCase):
    def test_an_old_spelling_is_no_other_options_name(self):
        for command, p in parsers().items():
            seen: dict[str, argparse.Action] = {}
            for a in p._actions:
                for s in a.option_strings:
                    with self.subTest(command=command, option=s):
                        self.assertIs(seen.setdefault(s, a), a)


class CampaignsSpellTheNewNames(unittest.TestCase):
    def test_the_job_checker_names_options_by_their_new_names(self):
        self.assertIn("--signature is set by the plan itself",
                      jobcheck.run_args_problem("run", ["--bisect-signature", "x"], "case"))
        self.assertIn("--signature is set by the plan itself",
                      jobcheck.run_args_problem("run", ["--signature", "x"], "case"))
        self.assertEqual(jobcheck.spellings("run")["--device"], "--usb-device")
        self.assertEqual(jobcheck.spellings("sweep")["--devices"], "--qemu-devices")

    def test_run_args_take_either_spelling(self):
        for args in (["--device", "logitech-k120"], ["--usb-device", "logitech-k120"],
                     ["--no-base-series"], ["--no-detector"]):
            self.assertEqual(jobcheck.run_args_problem("run", args, "case"), "", args)

    def test_a_bisection_job_planned_before_the_renaming_still_runs(self):
        about = {"series": "tests/fixtures/bisect/6.1/series", "patches": ["a", "b"],
                 "signature": "SIG", "extra": ["--duration", "4s"]}
        c = campaign.Campaign(Path("/tmp/c"), "bisect", (), about)
        new = campaign.bisect_job(c, 1, 2)
        self.assertIn("--signature", new.argv)             # what plans write now
        old = campaign.Job(new.id, tuple("--bisect-signature" if x == "--signature" else x
                                         for x in new.argv), new.result)
        self.assertNotEqual(old.argv, new.argv)
        for j in (new, old):
            jobcheck.check_job(c, j)                # no InputError
        bad = campaign.Job(new.id, tuple("--usb-device" if x == "--signature" else x
                                         for x in new.argv), new.result)
        with self.assertRaisesRegex(errors.InputError, "where its plan writes '--signature'"):
            jobcheck.check_job(c, bad)

    def test_a_job_an_older_plan_wrote_is_still_its_plans(self):
        want = ("run", "--series", "s", "--prefix", "1", "--signature", "SIG", "-q")
        old = ("run", "--series", "s", "--prefix", "1", "--bisect-signature", "SIG", "-q")
        self.assertTrue(jobcheck._same_fixed(want, want))
        self.assertTrue(jobcheck._same_fixed(old, want))
        # an alias of another option, or a value changed, is not the plan's
        self.assertFalse(jobcheck._same_fixed(
            ("run", "--series", "s", "--prefix", "1", "--device", "SIG", "-q"), want))
        self.assertFalse(jobcheck._same_fixed(
            ("run", "--series", "s", "--prefix", "2", "--signature", "SIG", "-q"), want))


if __name__ == "__main__":
    unittest.main()
