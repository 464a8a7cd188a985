"""The report engine reads a log as a stream: a report comes out while the
log is still being read, and what it keeps does not grow with the log."""

import itertools
import tempfile
import tracemalloc
import unittest
from pathlib import Path
from unittest import mock

from harness import files
from harness.reports import engine, golden, summary

LOGS = Path(__file__).resolve().parents[2] / "fixtures" / "logs"
CHATTER = "[   12.000000] usb 1-1: new high-speed USB device number 3 using xhci_hcd"


def kasan_log() -> list[str]:
    text = golden.read_golden((LOGS / "kasan-uaf-timestamps.log").read_text()).log
    return text.split("\n")


class Streaming(unittest.TestCase):
    def test_a_report_comes_out_before_the_log_ends(self):
        read = []

        def lines():
            for ln in kasan_log():
                read.append(ln)
                yield ln
            for i in itertools.count():          # a log that never ends
                read.append(CHATTER)
                yield CHATTER
                if i > 1_000_000:
                    raise AssertionError("the report never came out")

        first = next(engine.iter_reports(lines(), journal=False))
        self.assertTrue(first.title.startswith("KASAN: "), first.title)
        # the report ends at line 81 of 85: out once the window has moved past it
        self.assertLessEqual(len(read), len(kasan_log()) + 5)
        read.clear()
        next(engine.iter_reports(lines()))        # journal or not: decided on the first 8 KiB
        self.assertLess(sum(len(ln) + 1 for ln in read), 8192 + 2 * 1024)

    def test_memory_does_not_grow_with_the_log(self):
        def log(copies):
            return itertools.chain.from_iterable(kasan_log() + [CHATTER] * 50
                                                 for _ in range(copies))

        def peak(copies):
            folder = summary.Folder()
            tracemalloc.start()
            for r in engine.iter_reports(log(copies)):
                folder.add(r)
            _, top = tracemalloc.get_traced_memory()
            tracemalloc.stop()
            return top, folder.total
        small, n_small = peak(20)
        big, n_big = peak(400)
        self.assertEqual(n_big, 20 * n_small)
        # 20 times the log, and the reports, in less than twice the memory
        self.assertLess(big, 2 * small + 200_000, (small, big))

    def test_the_same_reports_as_parse(self):
        text = "\n".join(kasan_log() * 3)
        self.assertEqual([r.to_json() for r in engine.parse(text)],
                         [r.to_json() for r in engine.iter_reports(text.split("\n"))])


class LogLines(unittest.TestCase):
    """harness.files.log_lines reads in blocks: the lines are text.split("\\n")'s
    of the text a file opened in text mode reads, whatever the block boundaries."""

    def test_lines_across_blocks_are_whole(self):
        texts = ["", "a", "a\n", "\n\n", "ab\r\ncd\ref\n", "x" * 50 + "\nyy\n" + "z" * 7,
                 "[ 1.0] BUG: KASAN: slab-out-of-bounds\n" * 9 + "tail"]
        with tempfile.TemporaryDirectory() as d:
            for text in texts:
                p = Path(d) / "log"
                p.write_bytes(text.encode())
                want = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
                for block in (1, 2, 3, 7, 1 << 20):
                    with mock.patch.object(files, "LOG_BLOCK", block):
                        got = list(files.log_lines(str(p)))
                    if max(map(len, want)) <= block:
                        self.assertEqual(got, want, (text, block))
                    else:       # a line longer than a block comes in pieces, nothing lost
                        self.assertEqual("".join(got), "".join(want), (text, block))


if __name__ == "__main__":
    unittest.main()
