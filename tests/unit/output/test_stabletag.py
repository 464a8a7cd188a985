"""`Cc: stable` only with its reason (issue #43, harness/output/stabletag.py)."""

import subprocess
import unittest
from pathlib import Path

from harness.output import stabletag

ROOT = Path(__file__).resolve().parents[3]


def message(body: str, *trailers: str) -> str:
    return body.rstrip("\n") + "\n\n" + "\n".join(trailers) + "\n"


class Rule(unittest.TestCase):
    FIX = "Fixes: 0123456789ab (\"x: y\")"

    def test_without_a_reason_it_fails(self):
        m = message("Free the buffer after use.\n\nStable would be nice.",
                    self.FIX, "Cc: stable@vger.kernel.org")
        self.assertEqual(len(stabletag.problems(m)), 1)
        self.assertIn("no reason", stabletag.problems(m)[0])

    def test_a_body_paragraph_with_stable_and_a_kind(self):
        m = message("Fix it.\n\nThis is for stable as it is a hang that any\nclient reaches.",
                    self.FIX, "Cc: stable@vger.kernel.org")
        self.assertEqual(stabletag.problems(m), ())
        (f,) = stabletag.check(m)
        self.assertIn("hang", f.why)

    def test_stable_and_the_kind_must_share_a_paragraph(self):
        m = message("A deadlock.\n\nFor stable.", self.FIX, "Cc: stable@vger.kernel.org")
        self.assertEqual(len(stabletag.problems(m)), 1)

    def test_an_indented_log_is_no_reason(self):
        m = message("Fix it.\n\n  stable: data corruption in the log\n", self.FIX,
                    "Cc: stable@vger.kernel.org")
        self.assertEqual(len(stabletag.problems(m)), 1)

    def test_the_trailer_comment(self):
        for t in ("Cc: <stable@vger.kernel.org> # oops on resume",
                  "Cc: stable@kernel.org # data corruption on non-coherent DMA"):
            with self.subTest(trailer=t):
                self.assertEqual(stabletag.problems(message("Fix it.", self.FIX, t)), ())
        # a version alone is a note to the stable team, no reason
        m = message("Fix it.", self.FIX, "Cc: <stable@vger.kernel.org> # 6.1.x")
        self.assertEqual(len(stabletag.problems(m)), 1)

    def test_noautosel_needs_its_comment(self):
        self.assertEqual(len(stabletag.problems(message(
            "Fix it.", "Cc: <stable+noautosel@kernel.org>"))), 1)
        self.assertEqual(stabletag.problems(message(
            "Fix it.", "Cc: <stable+noautosel@kernel.org> # needs the new API")), ())

    def test_no_stable_trailer_nothing_to_say(self):
        self.assertEqual(stabletag.check(message("Fix it.", self.FIX, "Cc: a@b.c")), ())

    def test_every_reason_row_has_its_source(self):
        for r in stabletag.REASONS:
            self.assertIn("stable-kernel-rules.rst", r.source)
            self.assertIn(r.kind.split()[0].lower(), r.source.lower())

    def test_message_of_a_mail(self):
        mail = "Subject: [PATCH] x\n\nBody.\n\nCc: stable@vger.kernel.org\n---\n diff\n"
        self.assertEqual(stabletag.message_of(mail), "Body.\n\nCc: stable@vger.kernel.org")


class ThePatchesOfTheCheckout(unittest.TestCase):
    def test_every_cc_stable_says_why(self):
        tracked = subprocess.run(["git", "ls-files", "patches/*.patch"], cwd=ROOT,
                                 capture_output=True, text=True, check=True).stdout.split()
        self.assertGreater(len(tracked), 40)
        bad = {rel: stabletag.problems(stabletag.message_of((ROOT / rel).read_text()))
               for rel in tracked}
        self.assertEqual({k: v for k, v in bad.items() if v}, {})


if __name__ == "__main__":
    unittest.main()
