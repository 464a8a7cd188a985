"""Every kernel patch of the project is clean under the tree's own
scripts/checkpatch.pl --strict (issue: detector and seed-case patches must be).

Runs the checkpatch.pl of the unpacked linux-source of each version (the
harness unpacks it if the cache folder does not have it yet), from a folder
outside any git checkout, as a maintainer would run it on a mail: the mail
`dmaharness mail` makes of the patch (harness.output.mail), with a sender's
From: and Signed-off-by:, for the patches themselves sign off for no one.

Each mail is checked with the options its subsystems' Maintainer Entry
Profiles ask for (harness/output/subsystems.py: the P: of the MAINTAINERS
sections of the files it touches; media's --max-line-length=80), as
`dmaharness mail --check` does, and with the Cc: stable rule
(harness/output/stabletag.py)."""

import re
import subprocess
import tempfile
import unittest
from pathlib import Path

from harness.kernel import kbuild
from harness.output import mail, mailcheck, stabletag, subsystems
from harness.progress import Progress

ROOT = Path(__file__).resolve().parents[2]
SENDER = mail.Identity("Ann Sender", "ann@host.test")      # who would send them, for the test


def as_mail(patch: Path, text: str, folder: str) -> Path:
    out = Path(folder) / ("mail-" + patch.name)
    out.write_text(mail.compose(text, SENDER, mail.reproduce(patch), str(patch)))
    return out


def checkpatch(tree: Path, patch: Path, cwd: str) -> subprocess.CompletedProcess:
    # UNKNOWN_COMMIT_ID: checkpatch looks a Fixes: id up with git, and Debian's
    # source has no history, so any id is "unknown" there; the fix mails' ids
    # and subjects are checked against upstream's log by hand (their README)
    options = mailcheck.options_for(subsystems.of_patch(patch.read_text(), tree), tree)
    return subprocess.run(["perl", str(tree / "scripts" / "checkpatch.pl"), *options,
                           "--no-summary", "--terse", str(patch)],
                          cwd=cwd, capture_output=True, text=True, timeout=300)


def with_trailing_space(text: str) -> str:
    """The patch with trailing whitespace on its first added line of code."""
    lines = text.split("\n")
    hunk = next(i for i, line in enumerate(lines) if line.startswith("@@"))
    add = next(i for i in range(hunk, len(lines)) if lines[i].startswith("+") and lines[i].strip("+ \t"))
    lines[add] += " "
    return "\n".join(lines)


class Checkpatch(unittest.TestCase):
    def check_version(self, version: str):
        tree = kbuild.pristine_tree(kbuild.find_source(version), Progress(quiet=True))
        patches = sorted((ROOT / "patches" / version).rglob("*.patch"))
        self.assertGreaterEqual(len(patches), 8, "detector (4) and seed case (4) patches expected")
        with tempfile.TemporaryDirectory() as d:
            # the checker can fail: a patch with a style error is reported
            # (the first patch that adds a line: a fix may only remove one)
            first = next(p for p in patches if re.search(r"(?m)^\+(?!\+\+ )\s*\S", p.read_text()))
            bad = as_mail(first, with_trailing_space(first.read_text()), d)
            r = checkpatch(tree, bad, d)
            self.assertNotEqual(r.returncode, 0, "checkpatch accepted a patch with a space before a tab")
            for p in patches:
                with self.subTest(patch=str(p.relative_to(ROOT))):
                    m = as_mail(p, p.read_text(), d)
                    r = checkpatch(tree, m, d)
                    self.assertEqual((r.returncode, r.stdout + r.stderr), (0, ""))
                    self.assertEqual(stabletag.problems(stabletag.message_of(m.read_text())), ())

    def test_patches_6_1(self):
        self.check_version("6.1")

    def test_patches_6_12(self):
        self.check_version("6.12")

    def test_patches_7_3(self):
        self.check_version("7.3")


if __name__ == "__main__":
    unittest.main()
