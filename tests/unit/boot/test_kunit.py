import unittest

from harness.boot import kunit

LOG = """\
[    0.000000] Linux version 6.1.192
[    3.100000] KTAP version 1
[    3.100001] 1..2
[    3.100002]     KTAP version 1
[    3.100003]     # Subtest: dma-cacheline
[    3.100004]     1..4
[    3.200000]     ok 1 embedded_buffer_warns
[    3.210000] usb 1-1: new high-speed USB device number 2 using xhci_hcd
[    3.300000]     # kmalloc_buffer_quiet: EXPECTATION FAILED at kernel/dma/x.c:12
[    3.300001]     Expected warnings == 0, but
[    3.300002]     not ok 2 kmalloc_buffer_quiet
[    3.400000]     ok 3 aligned_buffer_quiet # SKIP needs 128-byte lines
[    3.400100]         KTAP version 1
[    3.400101]         # Subtest: param_case
[    3.400102]         ok 1 line 32
[    3.400103]         ok 2 line 64
[    3.400104]     # param_case: pass:2 fail:0 skip:0 total:2
[    3.400105]     ok 4 param_case
[    3.500000] # dma-cacheline: pass:2 fail:1 skip:1 total:4
[    3.500001] not ok 1 dma-cacheline
[    3.600000]     KTAP version 1
[    3.600001]     # Subtest: other
[    3.600002]     1..1
[    3.600003]     ok 1 only
[    3.600004] ok 2 other
"""


class Ktap(unittest.TestCase):
    def test_suites_cases_and_statuses(self):
        r = kunit.parse(LOG)
        self.assertEqual([s.name for s in r.suites], ["dma-cacheline", "other"])
        s = r.suites[0]
        self.assertEqual(s.planned, 4)
        self.assertEqual([(c.name, c.status) for c in s.cases],
                         [("embedded_buffer_warns", "passed"), ("kmalloc_buffer_quiet", "failed"),
                          ("aligned_buffer_quiet", "skipped"), ("param_case", "passed")])
        self.assertEqual(s.status, "failed")
        self.assertEqual(s.cases[2].reason, "needs 128-byte lines")
        self.assertIn("kmalloc_buffer_quiet: EXPECTATION FAILED at kernel/dma/x.c:12", s.cases[1].log)
        self.assertEqual(r.counts(), {"passed": 3, "failed": 1, "skipped": 1})
        self.assertFalse(r.ok)
        self.assertEqual(r.failures(), ["dma-cacheline.kmalloc_buffer_quiet"])

    def test_all_passing(self):
        text = LOG.replace("not ok 2 kmalloc", "ok 2 kmalloc").replace("not ok 1 dma-cacheline", "ok 1 dma-cacheline")
        r = kunit.parse(text)
        self.assertTrue(r.ok)
        self.assertEqual(r.to_json()["counts"]["failed"], 0)

    def test_crash_mid_suite_is_not_ok(self):
        cut = LOG[:LOG.index("[    3.400000]")]
        r = kunit.parse(cut + "[    3.41] BUG: kernel NULL pointer dereference\n")
        self.assertFalse(r.ok)
        self.assertIn("dma-cacheline (no result: crashed or hung?)", r.failures())

    def test_plan_mismatch_is_not_ok(self):
        text = LOG.replace("    1..1", "    1..3").replace("not ok 2 kmalloc", "ok 2 kmalloc") \
                  .replace("not ok 1 dma-cacheline", "ok 1 dma-cacheline")
        r = kunit.parse(text)
        self.assertFalse(r.ok)
        self.assertIn("other (planned 3 cases, saw 1)", r.failures())

    def test_nothing(self):
        self.assertFalse(kunit.parse("[ 1.0] hello\n").ok)

    def test_without_timestamps(self):
        text = "\n".join(l[15:] if l.startswith("[") else l for l in LOG.splitlines())
        self.assertEqual(len(kunit.parse(text).suites), 2)


if __name__ == "__main__":
    unittest.main()
