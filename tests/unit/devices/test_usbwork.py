"""harness.devices.usbwork: the class workloads' shell, run by busybox on
this machine with the commands that touch devices replaced, and parsed."""

import shutil
import subprocess
import tempfile
import unittest
from pathlib import Path

from harness.devices import usbdevices, usbwork

BUSYBOX = shutil.which("busybox")


@unittest.skipUnless(BUSYBOX, "busybox is not installed (make deps)")
class Shell(unittest.TestCase):
    def sh(self, body: str) -> str:
        script = "\n".join(['say() { echo "DMAHARNESS-DEVICE $*"; }', *usbwork.functions(),
                            body])
        r = subprocess.run([BUSYBOX, "sh", "-c", script], capture_output=True, text=True,
                           timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        return r.stdout

    def test_the_functions_parse(self):
        r = subprocess.run([BUSYBOX, "sh", "-n", "-c", "\n".join(usbwork.functions())],
                           capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)

    def test_each_node_says_its_rounds_and_failures(self):
        out = self.sh('work_nodes() { echo "tty ttyUSB0"; echo "net eth9"; }\n'
                      'work_round() { [ $1 = net ] && return 1; return 0; }\n'
                      'ip() { :; }\n'
                      'work_device 3 /x $(( $(date +%s) + 1 ))')
        got = {}
        for line in out.splitlines():
            w = usbwork.parse(line.split()[2:])
            self.assertIsNotNone(w, line)
            got[w[:2]] = w[2:]
        self.assertEqual(set(got), {("tty", "ttyUSB0"), ("net", "eth9")})
        rounds, failed = got[("tty", "ttyUSB0")]
        self.assertGreater(rounds, 0)
        self.assertEqual(failed, 0)
        self.assertEqual(got[("net", "eth9")], (rounds, rounds))     # every round failed

    def test_a_device_without_nodes_says_so(self):
        out = self.sh("work_device 0 /nonexistent $(( $(date +%s) + 1 ))")
        self.assertEqual(usbwork.parse(out.split()[2:]), ("none", "-", 0, 0))

    def test_nodes_are_found_below_the_device_and_classified_by_name(self):
        with tempfile.TemporaryDirectory() as tmp:
            d = Path(tmp) / "1-1"
            for rel, name in (("1-1:1.0/ttyUSB0/tty/ttyUSB0", "ttyUSB0"),
                              ("1-1:1.1/input/input3/event3", "input/event3"),
                              ("1-1:1.1/input/input3/mouse0", "input/mouse0"),
                              ("1-1:1.2/watchdog/watchdog0", "watchdog0"),
                              ("", "bus/usb/001/002")):
                (d / rel).mkdir(parents=True, exist_ok=True)
                (d / rel / "dev").write_text("1:1\n")
                (d / rel / "uevent").write_text(f"MAJOR=1\nDEVNAME={name}\n")
            (d / "1-1:1.3/net/eth7").mkdir(parents=True)
            (d / "1-1:1.3/net/eth7/ifindex").write_text("4\n")
            # /dev/null stands for every node (a character device here)
            out = self.sh(f'work_nodes() {{ {_patched_nodes()} }}\nwork_nodes {d}')
        self.assertEqual(sorted(out.splitlines()), ["input input/event3", "net eth7",
                                                   "tty ttyUSB0"])


def _patched_nodes() -> str:
    """work_nodes' body with /dev/$dn tests pointed at /dev/null."""
    text = "\n".join(usbwork.functions())
    body = text[text.index("work_nodes() {") + len("work_nodes() {"):]
    body = body[:body.index("\n}\n")]
    return body.replace("[ -c /dev/$dn -o -b /dev/$dn ]", "[ -c /dev/null ]") \
        .replace("[ -b /dev/$dn ]", "false")


class LedEvents(unittest.TestCase):
    def test_three_leds_on_a_report_the_same_off_a_report(self):
        data = bytes(int(o, 8) for o in usbwork._LED_EVENTS.split("\\")[1:])
        events = [data[i:i + 24] for i in range(0, len(data), 24)]
        got = [(int.from_bytes(e[16:18], "little"), int.from_bytes(e[18:20], "little"),
                int.from_bytes(e[20:24], "little")) for e in events]
        self.assertEqual(got, [(0x11, 0, 1), (0x11, 1, 1), (0x11, 2, 1), (0, 0, 0),
                               (0x11, 0, 0), (0x11, 1, 0), (0x11, 2, 0), (0, 0, 0)])


class Parse(unittest.TestCase):
    def test_workload_lines_become_the_results_workloads(self):
        p = usbdevices.summarize("x", None, 0x67b, 0x2303, b"", None)
        console = ("DMAHARNESS-DEVICE 0 found 1:2 067b:2303 1-1\n"
                   "DMAHARNESS-DEVICE 0 workload tty ttyUSB0 7 1\n"
                   "DMAHARNESS-DEVICE 0 workload tty ttyUSB1 x 1\n")
        (r,) = usbdevices.parse(console, [p])
        self.assertEqual(r.workloads, {"tty": {"ttyUSB0": {"rounds": 7, "failed": 1}}})
        self.assertEqual(r.to_json()["workloads"], r.workloads)

    def test_only_an_exercised_run_defines_and_starts_the_loops(self):
        p = usbdevices.summarize("x", None, 0x67b, 0x2303, b"", None)
        self.assertNotIn("work_device", usbdevices.guest_script([p], 5))
        text = usbdevices.guest_script([p], 5, exercise=True)
        self.assertIn("work_device $k $p $end &", text)
        self.assertLess(text.index("work_device $k"), text.index("sleep 5"))


if __name__ == "__main__":
    unittest.main()
