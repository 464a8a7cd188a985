"""Mails carry their sender, not the project (issue #43): the patches of the
checkout sign off for no one; `dmaharness mail` and `site-report --fix`
put the identity of whoever runs them in From: and Signed-off-by:, and
refuse without one."""

import json
import os
import re
import subprocess
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from harness import errors
from harness.output import mail
from tests.unit.cli.test_main import run

ROOT = Path(__file__).resolve().parents[3]
FIX = ROOT / "patches/7.3/cases/virtio-scsi-kick-event/fix"


class GitIdentity(unittest.TestCase):
    """git's configuration in a temporary HOME: none, or the one given."""

    def with_git(self, name=None, email=None):
        home = tempfile.mkdtemp(prefix="dmaharness-mail-")
        self.addCleanup(subprocess.run, ["rm", "-rf", home])
        env = {"HOME": home, "XDG_CONFIG_HOME": home, "GIT_CONFIG_NOSYSTEM": "1",
               "GIT_CONFIG_GLOBAL": os.path.join(home, ".gitconfig")}
        p = mock.patch.dict(os.environ, env)
        p.start()
        self.addCleanup(p.stop)
        for key, value in (("user.name", name), ("user.email", email)):
            if value is not None:
                subprocess.run(["git", "config", "--global", key, value], check=True)


class NothingSignsOff(unittest.TestCase):
    def test_no_patch_of_the_project_carries_a_from_or_a_sign_off(self):
        tracked = subprocess.run(["git", "ls-files", "*.patch"], cwd=ROOT, capture_output=True,
                                 text=True, check=True).stdout.split()
        self.assertGreater(len(tracked), 40)
        bad = []
        for rel in tracked:
            text = (ROOT / rel).read_text(errors="replace")
            message = text.split("\n---\n", 1)[0]       # header and message: before the diff
            bad += [f"{rel}: {ln}" for ln in message.splitlines()
                    if re.match(r"(From|Signed-off-by|Co-developed-by): ", ln)]
        self.assertEqual(bad, [])


class Compose(unittest.TestCase):
    WHO = mail.Identity("Ann Sender", "ann@host.test")

    def test_the_sender_the_trailers_and_the_note(self):
        text = (FIX / next(p.name for p in FIX.glob("*.patch"))).read_text()
        m = mail.compose(text, self.WHO, "./dmaharness run --case X")
        head, rest = m.split("\n\n", 1)
        self.assertIn("\nFrom: Ann Sender <ann@host.test>\n", "\n" + head + "\n")
        self.assertEqual(head.count("From: "), 1)
        message, below = rest.split("\n---\n", 1)
        trailers = message.rsplit("\n\n", 1)[1].splitlines()
        self.assertEqual(trailers[-1], "Signed-off-by: Ann Sender <ann@host.test>")
        self.assertTrue(any(t.startswith("Fixes: ") for t in trailers))   # the patch's own stay
        self.assertTrue(below.startswith(mail.NOTE + "\n"))
        self.assertIn("./dmaharness run --case X", below.split("diff --git", 1)[0])
        self.assertIn("diff --git", below)
        # sending twice signs off once
        self.assertEqual(mail.compose(m, self.WHO, None).count("Signed-off-by: Ann"), 1)

    def test_a_message_without_trailers_gets_a_paragraph_for_the_sign_off(self):
        m = mail.compose("Subject: [PATCH] x: y\n\nWhy it is right.\n---\n", self.WHO, None)
        self.assertIn("Why it is right.\n\nSigned-off-by: Ann", m)

    def test_not_a_patch_mail(self):
        for text in ("", "Subject: x\n\nno cut line\n", "Date: x\n\nbody\n---\n"):
            with self.subTest(text=text), self.assertRaises(errors.InputError):
                mail.compose(text, self.WHO, None)

    def test_the_case_gives_the_command(self):
        p = next(FIX.glob("*.patch"))
        self.assertEqual(mail.reproduce(p),
                         "./dmaharness run --case patches/7.3/cases/virtio-scsi-kick-event")
        self.assertIsNone(mail.reproduce(ROOT / "patches/7.3/detector" / next(
            (ROOT / "patches/7.3/detector").glob("*.patch")).name))


class Command(GitIdentity):
    def test_refused_without_a_git_identity(self):
        self.with_git()
        code, out, err = run(["mail", str(next(FIX.glob("*.patch"))), "--json"])
        self.assertEqual(code, errors.EXIT_ENV, err)
        self.assertIn("signs off for no one", json.loads(out)["error"]["message"])

    def test_half_an_identity_is_none(self):
        self.with_git(name="Ann Sender")
        self.assertIsNone(mail.identity_or_none())
        with self.assertRaises(errors.EnvError):
            mail.identity()

    def test_the_mail_carries_the_person_who_runs_it(self):
        self.with_git("Bo Runner", "bo@runner.test")
        out_dir = Path(tempfile.mkdtemp(prefix="dmaharness-mails-"))
        self.addCleanup(subprocess.run, ["rm", "-rf", str(out_dir)])
        patches = sorted(FIX.glob("*.patch"))
        code, out, err = run(["mail", *map(str, patches), "-o", str(out_dir), "--json"])
        self.assertEqual(code, errors.EXIT_OK, err)
        self.assertEqual(json.loads(out)["from"], "Bo Runner <bo@runner.test>")
        for p in patches:
            text = (out_dir / p.name).read_text()
            self.assertIn("\nFrom: Bo Runner <bo@runner.test>\n", text)
            self.assertIn("\nSigned-off-by: Bo Runner <bo@runner.test>\n---\n", text)


FAKE_CHECKPATCH = """#!/usr/bin/perl
# prints its options; fails when the profile's option is there
my @o = grep { /^--/ } @ARGV;
if (grep { $_ eq '--max-line-length=80' } @o) {
    print "$ARGV[-1]:9: WARNING: line length of 82 exceeds 80 columns\\n"; exit 1;
}
exit 0;
"""


class Check(GitIdentity):
    """`mail --check`: the tree's checkpatch.pl with the profile's options."""

    def tree(self, profile: bool) -> Path:
        d = Path(tempfile.mkdtemp(prefix="dmaharness-tree-"))
        self.addCleanup(subprocess.run, ["rm", "-rf", str(d)])
        (d / "scripts").mkdir()
        (d / "scripts/checkpatch.pl").write_text(FAKE_CHECKPATCH)
        doc = d / "Documentation/driver-api/media/maintainer-entry-profile.rst"
        doc.parent.mkdir(parents=True)
        doc.write_text("\t$ ./scripts/checkpatch.pl --strict --max-line-length=80\n")
        (d / "MAINTAINERS").write_text(
            "SCSI\nS:\tMaintained\nF:\tdrivers/scsi/\n"
            + ("P:\tDocumentation/driver-api/media/maintainer-entry-profile.rst\n" if profile
               else ""))
        return d

    def test_clean_and_failing(self):
        self.with_git("Bo Runner", "bo@runner.test")
        patch = str(next(FIX.glob("*.patch")))
        code, out, err = run(["mail", "--check", "--tree", str(self.tree(False)), patch, "--json"])
        self.assertEqual(code, errors.EXIT_OK, err)
        (c,) = json.loads(out)["checks"]
        self.assertEqual((c["ok"], c["sections"]), (True, ["SCSI"]))
        code, out, err = run(["mail", "--check", "--tree", str(self.tree(True)), patch, "--json"])
        self.assertEqual(code, errors.EXIT_INPUT, err)
        e = json.loads(out)["error"]
        self.assertIn(Path(patch).name, e["message"])
        self.assertIn("line length of 82", e["detail"])

    def test_a_patch_of_no_version_needs_a_tree(self):
        self.with_git("Bo Runner", "bo@runner.test")
        d = Path(tempfile.mkdtemp(prefix="dmaharness-mails-"))
        self.addCleanup(subprocess.run, ["rm", "-rf", str(d)])
        (d / "x.patch").write_text(next(FIX.glob("*.patch")).read_text())
        code, out, err = run(["mail", "--check", str(d / "x.patch")])
        self.assertEqual(code, errors.EXIT_INPUT, err)
        self.assertIn("--tree", err)


if __name__ == "__main__":
    unittest.main()
