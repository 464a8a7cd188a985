import json
import tempfile
import unittest
from pathlib import Path

from harness.devices import agentresult, camera
from harness.boot import settings
from harness.errors import InputError


class Parsing(unittest.TestCase):
    def test_flood(self):
        self.assertEqual(camera.Flood.parse("control:max"), camera.Flood("control", "max"))
        self.assertEqual(camera.Flood.parse("button:4000"), camera.Flood("button", "4000"))
        self.assertEqual(camera.Flood.parse("mixed"), camera.Flood("mixed", "max"))
        for bad in ("nope:max", "control:-3", "control:fast", "control:0"):
            with self.assertRaises(InputError):
                camera.Flood.parse(bad)

    def test_duration(self):
        self.assertEqual(settings.parse_duration("20s"), 20)
        self.assertEqual(settings.parse_duration("20"), 20)
        self.assertEqual(settings.parse_duration("500ms"), 0.5)
        self.assertEqual(settings.parse_duration("2m"), 120)
        with self.assertRaises(InputError):
            settings.parse_duration("soon")


class AgentLine(unittest.TestCase):
    def test_last_valid_line_wins_and_prefix_noise_is_ignored(self):
        text = ("[ 1.0] boot\n"
                "DMAHARNESS-AGENT {\"version\": 1, \"totals\": {\"events_emitted\": 1}}\n"
                "[ 2.0] x DMAHARNESS-AGENT {\"version\": 1, \"totals\": {\"events_emitted\": 5}}\n"
                "DMAHARNESS-AGENT {\"version\": 1, \"tot\n")   # cut by a kernel line: ignored
        self.assertEqual(agentresult.agent_result(text)["totals"]["events_emitted"], 5)

    def test_absent(self):
        self.assertIsNone(agentresult.agent_result("[ 1.0] nothing here\n"))


class Summary(unittest.TestCase):
    def test_rates_and_sums(self):
        with tempfile.TemporaryDirectory() as d:
            cams = []
            for i, sent in enumerate((1000, 3000)):
                out = Path(d) / f"c{i}.json"
                out.write_text(json.dumps({"sent": sent, "cpu_user_s": 0.1, "cpu_sys_s": 0.2}) + "\n")
                c = camera.Camera(i, Path(d) / "s", None, out, out)
                c.counters = camera._last_json(out)
                cams.append(c)
            agent = {"run_elapsed_s": 2.0, "hold": "stream",
                     "hold_reason": "auto: /proc/kallsyms has uvc_pm_get, ...",
                     "totals": {"events_emitted": 3000, "events_dequeued": 2900, "key_events": 200,
                                "phys_reads": 7, "cycles": 2, "hold_failures": 1}}
            s = agentresult.summarize(agent, cams, 2.0)
        self.assertEqual(s["sent"], 4000)
        self.assertEqual(s["guest_counted"], 3200)
        self.assertEqual(s["guest_rate_per_s"], 1600.0)
        self.assertEqual(s["ceiling_per_s"], 16000)
        self.assertEqual(s["ratio_to_ceiling"], 0.1)
        self.assertAlmostEqual(s["fake_device_cpu_s"], 0.6)
        self.assertEqual(s["hold"], "stream")
        self.assertTrue(s["hold_reason"].startswith("auto: /proc/kallsyms has uvc_pm_get"))
        self.assertEqual(s["hold_failures"], 1)

    def test_no_agent(self):
        s = agentresult.summarize(None, [], 10)
        self.assertEqual(s["guest_counted"], 0)
        self.assertIsNone(s["hold"])
        self.assertIsNone(s["hold_reason"])
        self.assertEqual(s["hold_failures"], 0)

    def test_agent_before_hold(self):
        # an agent without --hold (an older initramfs): no hold fields
        s = agentresult.summarize({"run_elapsed_s": 1.0, "totals": {}}, [], 1)
        self.assertIsNone(s["hold"])
        self.assertEqual(s["hold_failures"], 0)


if __name__ == "__main__":
    unittest.main()


class ExitWords(unittest.TestCase):
    def test_signal_and_exit_code(self):
        self.assertEqual(camera.describe_exit(-9), "killed by signal 9 (SIGKILL)")
        self.assertEqual(camera.describe_exit(3), "exit 3")

    def test_tail_says_when_the_log_is_empty_or_missing(self):
        with tempfile.TemporaryDirectory() as d:
            p = Path(d) / "camera0.log"
            self.assertIn("missing", camera.tail(p))
            p.write_text("")
            self.assertIn("empty", camera.tail(p))
            p.write_text("usbredirparser: bad packet\n")
            self.assertEqual(camera.tail(p), "usbredirparser: bad packet")
