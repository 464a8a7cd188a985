"""The report parser on console logs recorded from real runs."""

import unittest
from pathlib import Path

from harness.reports import engine, golden

LOGS = Path(__file__).resolve().parents[2] / "fixtures" / "logs"


def log(name: str) -> str:
    """A golden fixture's log (its header left out)."""
    return golden.read_golden((LOGS / name).read_text(errors="replace")).log


class RealLogs(unittest.TestCase):
    def test_uvc_xu0_null_dereference(self):
        reps = engine.parse(log("real-6.1-stock-uvc-xu0-null-deref.log"))
        self.assertEqual([r.title for r in reps],
                         ["BUG: unable to handle kernel NULL pointer dereference in __uvc_ctrl_get_value"])
        r = reps[0]
        self.assertEqual(r.guilty_frame, "__uvc_ctrl_get_value")
        self.assertIn("uvc_ctrl_status_event_work", r.stack)
        self.assertAlmostEqual(r.timestamp, 13.341745)

    def test_detector_reports_blame_the_caller_not_the_detector(self):
        text = log("real-6.1-detector-stock-camera-flood.log")
        sigs = {s.title: s.count for s in engine.fold(engine.parse(text))}
        msg = "DMA-API: device driver maps a buffer that shares a cache line with other data of its object"
        self.assertEqual(sigs, {f"{msg} in usb_string": 4, f"{msg} in __uvc_query_ctrl": 6})
        self.assertTrue(all(r.kind == "DETECTOR" for r in engine.parse(text)))

    def test_foreign_message_inside_a_call_trace_does_not_cut_it(self):
        text = log("real-6.12-clocksource-inside-call-trace.log")
        sigs = {s.title: s.count for s in engine.fold(engine.parse(text))}
        self.assertFalse([t for t in sigs if t.endswith(" in cl_report")], sigs)
        msg = "DMA-API: device driver maps a buffer that shares a cache line with other data of its object"
        self.assertEqual(sigs.get(f"{msg} in usb_string"), 4, sigs)

    def test_clean_boots_have_no_reports(self):
        boot = LOGS.parent / "boot"
        for name in ("6.1-ok-uvcvideo.log", "6.1-silent-sleeping-workload.log"):
            self.assertEqual(engine.parse((boot / name).read_text(errors="replace")), [], name)

    def test_init_exit_panic_is_a_report(self):
        text = (LOGS.parent / "boot" / "6.1-panic-init-exits.log").read_text(errors="replace")
        titles = [r.title for r in engine.parse(text)]
        self.assertTrue(any("kill init" in t or t.startswith("kernel panic") for t in titles), titles)


if __name__ == "__main__":
    unittest.main()
