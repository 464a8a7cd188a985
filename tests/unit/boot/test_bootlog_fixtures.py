"""Boot-log detection on console logs recorded from real boots."""

import unittest
from pathlib import Path

from harness.boot import bootlog, qemu

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "boot"


def scan(name):
    return bootlog.scan((FIX / name).read_text(errors="replace"))


class RecordedBoots(unittest.TestCase):
    def test_clean_boot(self):
        w = scan("6.1-ok-uvcvideo.log")
        self.assertTrue(all(w.facts.values()), w.facts)
        self.assertEqual(w.end_status, 0)
        self.assertIn("modules=1/1", w.end_line)
        self.assertFalse(w.panicked)
        self.assertEqual(w.oops_lines, [])
        self.assertEqual(qemu.classify(w, 1, None), ("ok", 0))

    def test_panic(self):
        w = scan("6.1-panic-init-exits.log")
        self.assertTrue(w.panicked)
        self.assertIn("Attempted to kill init", w.panic_line)
        self.assertFalse(w.ended)
        # QEMU exits 0 by itself (panic=-1 reboots, -no-reboot exits)
        self.assertEqual(qemu.classify(w, 0, None)[0], "panic")
        self.assertTrue(any("Kernel panic" in l or "Kernel Offset" in l for l in w.tail(5)))

    def test_silent(self):
        w = scan("6.1-silent-sleeping-workload.log")
        self.assertFalse(w.ended)
        self.assertFalse(w.panicked)
        self.assertTrue(w.facts["init"])
        self.assertEqual(qemu.classify(w, None, "silent"), ("silent", None))
        # killed while silent, the log alone (QEMU exit 0 after SIGTERM) is a missing marker
        self.assertEqual(qemu.classify(w, 0, None)[0], "no-marker")

    def test_streaming_in_small_chunks_matches_whole(self):
        text = (FIX / "6.1-ok-uvcvideo.log").read_text(errors="replace")
        w = bootlog.ConsoleWatch()
        for i in range(0, len(text), 7):
            w.feed(text[i:i + 7])
        w.finish()
        whole = bootlog.scan(text)
        self.assertEqual((w.lines, w.end_status, w.facts), (whole.lines, whole.end_status, whole.facts))


if __name__ == "__main__":
    unittest.main()
