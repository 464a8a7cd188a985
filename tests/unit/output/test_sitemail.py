"""harness/output/sitemail.py and `dmaharness site-report`: one sweep site as
a report for its maintainers, from a sweep's JSON read as untrusted input."""

import copy
import json
import os
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

from harness.errors import InputError
from harness.output import mail, sitemail
from tests.unit.output.test_sweephtml import payload

ROOT = Path(__file__).resolve().parents[3]
OWNED_LOG = ROOT / "tests" / "fixtures" / "sweep" / "real-6.12-sweep-virtio-rng.log"


class Render(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = Path(self.tmp.name) / "sweep"
        self.dir.mkdir()
        self.path = self.dir / "sweep.json"
        self.p = payload()

    def tearDown(self):
        self.tmp.cleanup()

    def test_the_owned_site_by_number_key_and_function(self):
        owned = self.p["sites"][1]
        for which in ("2", owned["key"], "uvc_status_start"):
            m = sitemail.render(self.p, which, self.path)
            self.assertEqual(m.key, owned["key"])
        self.assertTrue(m.subject.startswith("[BUG] uvc_status_start: DMA buffer "
                                             "uvc_device.status[16] shares a cache line"))
        self.assertIn("the CPU writes", m.subject)          # a dma-owned Write
        b = m.body
        self.assertIn("u8 status[16];  <== buffer (DMA_FROM_DEVICE)", b)       # the layout
        self.assertIn("uvc_v4l2_open+0x1f7/0x2c0 [uvcvideo]", b)               # the stack
        self.assertIn("KASAN: dma-owned Write in uvc_status_stop", b)
        self.assertIn("arm64      bounced", b)              # the exposure table, on 6.12
        self.assertIn("corrupts on arm, mips, powerpc32", b)
        self.assertIn("./dmaharness sweep --kernel 6.12 --qemu-devices usb-camera", b)
        self.assertIn("No fix is attached yet.", b)
        self.assertTrue(m.text().startswith("Subject: [BUG] "))

    def test_the_sweeps_own_verdicts_are_used_when_whole(self):
        """The sweep judged the site with its layout and allocation stack
        (reports.allocrules): the mail says the same; broken rows are not taken."""
        site = self.p["sites"][1]
        site["exposure"] = [{"arch": a, "verdict": "own-lines", "line": 64, "rule": "devres",
                             "why": "devres data is aligned: the buffer owns its lines"}
                            for a in ("x86_64", "arm64", "riscv", "arm", "mips", "powerpc32")]
        b = sitemail.render(self.p, "2", self.path).body
        self.assertIn("devres data is aligned", b)
        self.assertNotIn("corrupts on", b)
        for broken in ({"arch": "arm", "verdict": "pwned", "line": 64, "why": "x"},
                       {"arch": "vax", "verdict": "corrupts", "line": 64, "why": "x"},
                       {"arch": "arm", "verdict": "own-lines", "line": "64", "why": "x"}):
            site["exposure"][3] = broken
            b = sitemail.render(self.p, "2", self.path).body
            self.assertIn("corrupts on arm, mips, powerpc32", b, broken)

    def test_errors_name_the_file(self):
        for which in ("0", "3", "no_such_function"):
            with self.assertRaises(InputError) as e:
                sitemail.render(self.p, which, self.path)
            self.assertIn(str(self.path), e.exception.message)
        two = copy.deepcopy(self.p)
        two["sites"][0]["function"] = "uvc_status_start"
        with self.assertRaises(InputError) as e:
            sitemail.render(two, "uvc_status_start", self.path)
        self.assertIn("2 sites map in uvc_status_start", e.exception.message)
        with self.assertRaises(InputError):
            sitemail.render({"command": "run", "sites": []}, "1", self.path)

    def test_broken_fields_are_said_not_guessed(self):
        bad = copy.deepcopy(self.p)
        s = bad["sites"][0]
        for k in ("offset", "length", "layout", "evidence", "neighbours", "devices"):
            s[k] = {"nested": ["junk"]}
        m = sitemail.render(bad, "1", self.path)
        self.assertIn("buffer facts missing", m.body)
        self.assertIn("(the JSON lacks the buffer's facts)", m.body)
        self.assertIn("(no stack in the JSON)", m.body)

    def test_the_owned_stack_comes_from_a_console_inside_the_folder_only(self):
        text = OWNED_LOG.read_text()
        p = copy.deepcopy(self.p)
        s = p["sites"][1]
        s["dma_owned_titles"] = ["KASAN: dma-owned Read in virtio_read"]
        inside = self.dir / "virtio-rng" / "console.log"
        inside.parent.mkdir()
        inside.write_text(text)
        s["evidence"]["console"] = str(inside)
        self.assertIn("virtio_read+0x", sitemail.render(p, "2", self.path).body)
        outside = Path(self.tmp.name) / "elsewhere.log"
        outside.write_text(text)
        for where in (str(outside), "../elsewhere.log"):
            s["evidence"]["console"] = where
            b = sitemail.render(p, "2", self.path).body
            self.assertNotIn("virtio_read+0x", b)
            self.assertIn("not inside this sweep's folder", b)

    def test_a_fix_is_appended_as_the_senders_mail(self):
        fix = Path(self.tmp.name) / "0001.patch"
        fix.write_text("Subject: [PATCH] media: uvcvideo: fix it\n\nWhy.\n---\n x | 1 +\n")
        with self.assertRaises(InputError):      # a fix goes out signed off: a sender
            sitemail.render(self.p, "2", self.path, fix)
        who = mail.Identity("Ann Sender", "ann@host.test")
        m = sitemail.render(self.p, "2", self.path, fix, who)
        self.assertIn("A fix is attached: [PATCH] media: uvcvideo: fix it", m.body)
        self.assertIn("\nSigned-off-by: Ann Sender <ann@host.test>\n---\n", m.body)
        self.assertTrue(m.text().startswith("From: Ann Sender <ann@host.test>\nSubject: "))
        self.assertTrue(m.body.rstrip().endswith("x | 1 +"))

    def test_the_case_that_verifies_a_fix_is_named(self):
        # patches/7.3/cases/virtio-scsi-kick-event expects its site fixed, with the
        # offset left open (kmalloc-4k+*:16): any configuration's key matches
        for off in (2136, 2168):
            key = f"virtscsi_kick_event sharing kmalloc-4k+{off}:16 DMA_FROM_DEVICE"
            self.assertEqual(sitemail.fix_cases(key, "7.3"),
                             ["patches/7.3/cases/virtio-scsi-kick-event"])
        self.assertEqual(sitemail.fix_cases(
            "virtscsi_kick_event sharing kmalloc-4k+2136:32 DMA_FROM_DEVICE", "7.3"), [])
        self.assertEqual(sitemail.fix_cases(key, "6.12"), [])
        self.assertEqual(sitemail.fix_cases(key, None), [])
        p = copy.deepcopy(self.p)
        p["kernel"] = "7.3"
        p["sites"][1]["key"] = key
        b = sitemail.render(p, "2", self.path).body
        self.assertIn("./dmaharness run --case patches/7.3/cases/virtio-scsi-kick-event", b)


class Command(unittest.TestCase):
    def run_cli(self, *args):
        # the sender is git's identity where it runs: a known one here
        with tempfile.TemporaryDirectory() as home:
            cfg = Path(home) / "gitconfig"
            cfg.write_text("[user]\n\tname = Ann Sender\n\temail = ann@host.test\n")
            env = dict(os.environ, GIT_CONFIG_GLOBAL=str(cfg), GIT_CONFIG_NOSYSTEM="1")
            return subprocess.run([sys.executable, "-m", "harness", "site-report", *args],
                                  cwd=ROOT, capture_output=True, text=True, timeout=60,
                                  env=env)

    def test_text_json_output_and_exit_codes(self):
        with tempfile.TemporaryDirectory() as d:
            f = Path(d) / "sweep.json"
            f.write_text(json.dumps(payload()))
            out = Path(d) / "mail.txt"
            r = self.run_cli(str(f), "2", "-o", str(out))
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertTrue(r.stdout.startswith("From: Ann Sender <ann@host.test>\n"
                                                "Subject: [BUG] uvc_status_start"), r.stdout[:200])
            self.assertEqual(out.read_text().rstrip("\n"), r.stdout.rstrip("\n"))
            r = self.run_cli(str(f), "2", "--json")
            self.assertEqual(json.loads(r.stdout)["key"], payload()["sites"][1]["key"])
            r = self.run_cli(str(f), "9")
            self.assertEqual(r.returncode, 4, r.stderr)
            self.assertIn("no site 9", r.stderr)
            f.write_text("[]")
            r = self.run_cli(str(f), "1", "--json")
            self.assertEqual(r.returncode, 4)
            self.assertFalse(json.loads(r.stdout)["ok"])
            self.assertNotIn("Traceback", r.stderr)


if __name__ == "__main__":
    unittest.main()
