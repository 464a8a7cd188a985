"""A log parsed on several cores gives the reports of one pass, byte for byte.

The shares here are tiny (a few KiB, an overlap of 150 lines), so
that a log of the fixtures' reports is cut in many places, inside reports
too; every cut must hand over where both workers rest."""

import json
import os
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from harness import files
from harness.reports import engine, golden, parallel

LOGS = Path(__file__).resolve().parents[2] / "fixtures" / "logs"
CHATTER = "[   12.{n:06d}] usb 1-1: new high-speed USB device number {n} using xhci_hcd"


def fixture_text(name: str) -> str:
    text = golden.read_golden((LOGS / name).read_text(encoding="utf-8")).log
    return text if text.endswith("\n") else text + "\n"


def mixed_log(names: list[str], rounds: int, chatter: int = 7) -> str:
    parts = []
    n = 0
    for r in range(rounds):
        for name in names:
            parts.append(fixture_text(name))
            parts.append("".join(CHATTER.format(n=n + i) + "\n" for i in range(chatter * (r % 3))))
            n += chatter
    return "".join(parts)


def result(path: str, **kw) -> tuple[int, list, bytes]:
    """(workers used, the signatures' JSON, the reports' JSON bytes)."""
    p = parallel.parse_log(path, want_json=True, **kw)
    try:
        with tempfile.TemporaryFile() as out:
            p.write_reports(out.write)
            out.seek(0)
            return p.jobs, [s.to_json() for s in p.folder.signatures()], out.read()
    finally:
        p.close()


class Parallel(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.addCleanup(self.dir.cleanup)

    def write(self, text: str, name: str = "console.log", newline: str = "\n") -> str:
        """The log with `newline` for every line end; a lone CR for every third one
        (a serial console's; the cuts come after a LF only)."""
        p = Path(self.dir.name) / name
        if newline == "\r":
            parts = text.split("\n")
            text = "".join(s + ("\r" if i % 3 == 2 else "\n") for i, s in enumerate(parts[:-1]))
            text += parts[-1]
        else:
            text = text.replace("\n", newline)
        p.write_bytes(text.encode("utf-8"))
        return str(p)

    def same_as_one_pass(self, path: str, jobs: int, overlap: int = 150, min_share: int = 2048,
                         parallel_expected: bool = True) -> None:
        one = result(path, jobs=1)
        many = result(path, jobs=jobs, overlap=overlap, min_share=min_share)
        if parallel_expected:
            self.assertGreater(many[0], 1, "the log was not shared out")
        self.assertEqual(many[1], one[1])
        self.assertEqual(many[2], one[2])
        # the JSON is a list of the reports, as engine.parse() gives them
        reports = json.loads("[" + one[2].decode() + "]") if one[2] else []
        text = Path(path).read_bytes().decode("utf-8", "replace")
        text = text.replace("\r\n", "\n").replace("\r", "\n")    # universal newlines
        self.assertEqual(reports, [r.to_json() for r in engine.parse(text)])

    def test_reports_across_many_cuts_are_those_of_one_pass(self):
        names = sorted(p.name for p in LOGS.glob("*.log"))
        path = self.write(mixed_log(names, 3))
        for jobs in (2, 3, 8):
            with self.subTest(jobs=jobs):
                self.same_as_one_pass(path, jobs)

    def test_crlf_and_lone_cr_line_ends_keep_the_line_numbers(self):
        names = ["kasan-uaf-timestamps.log", "dma-api-x86-giveback.log", "hangs-stalls.log"]
        for newline in ("\r\n", "\r"):
            with self.subTest(newline=repr(newline)):
                # the planner reads 5 bytes at a time: a CRLF falls across its reads
                with mock.patch.object(parallel, "_SCAN", 5):
                    self.same_as_one_pass(self.write(mixed_log(names, 4), newline=newline), 4)

    def test_caller_tags_and_interleaved_cpus(self):
        names = ["detector-two-cpus-caller-tags.log", "rcu-nmi-caller-tags.log"]
        self.same_as_one_pass(self.write(mixed_log(names, 12)), 4)

    def test_a_report_open_across_the_overlap_means_one_pass(self):
        # a WARNING whose stack goes on past every overlap: the workers never
        # rest on the same line, so the log is parsed again in one pass
        head = "[    1.000000] ------------[ cut here ]------------\n" \
               "[    1.000001] WARNING: CPU: 0 PID: 1 at drivers/x.c:1 f+0x1/0x2\n" \
               "[    1.000002] Call Trace:\n"
        frames = "".join(f"[    1.{i:06d}]  g{i}+0x1/0x2\n" for i in range(3, 1900))
        path = self.write(head + frames + fixture_text("kasan-uaf-timestamps.log"))
        self.same_as_one_pass(path, 2, overlap=30, min_share=4096, parallel_expected=False)
        self.assertEqual(result(path, jobs=2, overlap=30, min_share=4096)[0], 1)

    def test_a_worker_that_fails_is_parsed_again_in_one_pass(self):
        path = self.write(mixed_log(["kasan-uaf-timestamps.log", "hangs-stalls.log"], 10))
        real = engine.iter_reports

        def broken(lines, journal=None, **kw):
            if kw.get("first_line", 1) > 1:
                raise RuntimeError("a bug of ours in a worker")
            return real(lines, journal, **kw)

        with mock.patch.object(engine, "iter_reports", broken):
            got = result(path, jobs=3, overlap=150, min_share=2048)
        self.assertEqual(got[0], 1)
        self.assertEqual(got[1:], result(path, jobs=1)[1:])
        with self.assertRaises(ChildProcessError):      # every worker reaped
            os.waitpid(-1, os.WNOHANG)


class Plan(unittest.TestCase):
    def test_cuts_follow_a_newline_and_count_lines_as_log_lines_does(self):
        with tempfile.TemporaryDirectory() as d:
            p = Path(d) / "log"
            for text in ("x\n" * 500, "ab\r\ncd\r" * 300 + "tail", "\n" * 999, "é\n" * 400):
                p.write_bytes(text.encode())
                for scan in (3, 64, 1 << 20):
                    with mock.patch.object(parallel, "_SCAN", scan):
                        shares = parallel.plan(str(p), 3, overlap=10, min_share=64)
                    self.assertIsNotNone(shares, (text[:8], scan))
                    data = p.read_bytes()
                    lines = list(files.log_lines(str(p)))
                    self.assertEqual(shares[0].start, 0)
                    self.assertEqual(shares[-1].end, len(data))
                    for a, b in zip(shares, shares[1:]):
                        self.assertEqual(a.end, b.start)
                        self.assertEqual(data[a.end - 1:a.end], b"\n")
                        self.assertEqual(a.first + a.lines, b.first)
                    self.assertEqual(shares[-1].lines, -1)       # the last: to the end
                    self.assertLessEqual(shares[-1].first + 20, len(lines))

    def test_one_pass_for_small_logs_long_lines_and_one_core(self):
        with tempfile.TemporaryDirectory() as d:
            p = Path(d) / "log"
            p.write_bytes(b"x\n" * 100)
            self.assertIsNone(parallel.plan(str(p), 4, overlap=10, min_share=1 << 20))
            p.write_bytes(b"x\n" * 1000 + b"y" * (1 << 20) + b"\n" + b"x\n" * 1000)
            self.assertIsNone(parallel.plan(str(p), 2, overlap=10, min_share=4096))
            p.write_bytes(b"x\n" * 5000)
            self.assertIsNone(parallel.plan(str(p), 1, overlap=10, min_share=64))
            self.assertIsNotNone(parallel.plan(str(p), 2, overlap=10, min_share=64))


if __name__ == "__main__":
    unittest.main()
