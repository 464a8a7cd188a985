"""What a case may ask of QEMU (harness.boot.qemurules), and the values a run
knows at its start, refused before any kernel is built (issue #40)."""

import json
import shutil
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from harness import errors
from harness.boot import qemurules, settings
from harness.checks.case import load_case
from harness.kernel import kbuild
from tests.unit.cli.test_main import run

ROOT = Path(__file__).resolve().parents[3]
CASE = ROOT / "patches" / "6.1" / "cases" / "uvc-status-buffer"

# each names a host file, device, socket or program (or is one QEMU takes as a disk)
HOSTILE = [
    "-pidfile /tmp/x.pid", "--pidfile /tmp/x.pid", "-D /tmp/qemu.log",
    "-chardev file,id=c,path=/etc/passwd", "-drive file=/etc/shadow,format=raw",
    "-object memory-backend-file,id=m,size=1M,mem-path=/tmp/m",
    "-netdev tap,id=n,script=/tmp/evil.sh", "-monitor unix:/tmp/mon.sock,server",
    "-serial /dev/ttyS0", "-plugin /tmp/evil.so", "-incoming exec:touch-x",
    "/etc/passwd", "-hda /etc/passwd", "-machine q35,dumpdtb=/tmp/x.dtb",
    "-machine q35,firmware=/etc/passwd", "-icount shift=0,rr=record,rrfile=/tmp/rr",
    "-cpu qemu64,model-id=/etc", "-d guest_errors -D /tmp/log", "-device usb-host,hostbus=1",
    "-device vfio-pci,host=00:02.0", "-readconfig /etc/qemu.conf", "-global loader.file=/x",
    "-icount", "-machine q35,,dumpdtb=/tmp/x", "-pidfile=/tmp/x", "-S", "-smp 4",
]
ALLOWED = [
    "-icount shift=0,sleep=off", "-icount auto", "--icount shift=3",
    "-cpu qemu64,+ssse3,-x2apic,pmu=off", "-machine q35,hpet=off", "-M pc",
    "-d guest_errors,unimp", "-d trace:usb_xhci*", "-rtc base=utc,clock=vm",
    "-msg timestamp=on", "",
]


class Rules(unittest.TestCase):
    def test_every_hostile_option_is_refused_with_its_name(self):
        for text in HOSTILE:
            words = settings.SETTINGS["qemu_opts"].parse(text)
            with self.subTest(text=text), self.assertRaises(errors.InputError) as e:
                qemurules.check(words)
            self.assertIn("QEMU option", e.exception.message)
            self.assertTrue(any(repr(w) in e.exception.message for w in words),
                            e.exception.message)

    def test_what_a_case_needs_passes(self):
        for text in ALLOWED:
            words = settings.SETTINGS["qemu_opts"].parse(text)
            with self.subTest(text=text):
                self.assertEqual(qemurules.check(words), words)

    def test_each_rule_says_why(self):
        for name, rule in qemurules.RULES.items():
            self.assertGreater(len(rule.why), 20, name)


class CaseFile(unittest.TestCase):
    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp(prefix="dmaharness-qemurules-"))
        self.addCleanup(shutil.rmtree, self.tmp)

    def case_with(self, run_lines: str) -> Path:
        d = self.tmp / f"case{len(list(self.tmp.iterdir()))}"
        shutil.copytree(CASE, d)
        text = (d / "case.toml").read_text()
        (d / "case.toml").write_text(text.replace("[run]", "[run]\n" + run_lines, 1)
                                     if "[run]" in text else text + "\n[run]\n" + run_lines)
        return d

    def test_a_case_naming_a_host_file_is_refused_at_load(self):
        d = self.case_with('qemu_opts = "-pidfile /tmp/dmaharness-pidfile"\n')
        with self.assertRaises(errors.InputError) as e:
            load_case(d)
        self.assertIn("-pidfile", e.exception.message)
        self.assertIn("qemu_opts", e.exception.message)

    def test_a_list_is_checked_as_a_string_is(self):
        d = self.case_with('qemu_opts = ["-chardev", "file,id=x,path=/tmp/y"]\n')
        with self.assertRaises(errors.InputError):
            load_case(d)
        d = self.case_with('qemu_opts = ["-icount", "shift=0,sleep=off"]\n')
        self.assertEqual(load_case(d).run["qemu_opts"], ("-icount", "shift=0,sleep=off"))

    def test_refused_before_any_build(self):
        for line in ('qemu_opts = "-netdev user,id=n,script=/tmp/x.sh"\n',
                     'agent_args = "--cameras 9"\n', 'agent_args = "--no-such-option"\n',
                     'agent_args = "--output \'/tmp/x\'"\n', 'seed = -1\n', 'cameras = 9\n'):
            d = self.case_with(line)
            with self.subTest(line=line), \
                    mock.patch.object(kbuild, "build", side_effect=AssertionError("built")), \
                    mock.patch.object(kbuild, "pristine_tree",
                                      side_effect=AssertionError("built")):
                code, out, err = run(["run", "--case", str(d), "--json"])
                self.assertEqual(code, errors.EXIT_INPUT, err)
                self.assertFalse(json.loads(out)["ok"])

    def test_a_cases_device_profiles_are_its_own(self):
        """run.devices: a shipped name or a file of the case's folder, never a host path."""
        for spec in ("/etc/passwd", "../../../../etc/passwd", "missing.profile"):
            d = self.case_with(f'devices = ["{spec}"]\n')
            with self.subTest(spec=spec), self.assertRaises(errors.InputError) as e:
                load_case(d)
            self.assertIn("run.devices[0]", e.exception.message)
        d = self.case_with('devices = ["mine.profile"]\n')
        (d / "mine.profile").write_text("name mine\n")
        self.assertEqual(load_case(d).run["devices"], (str((d / "mine.profile").resolve()),))
        shipped = sorted((ROOT / "fake-device" / "profiles").glob("*.profile"))[0].stem
        d = self.case_with(f'devices = ["{shipped}"]\n')
        self.assertEqual(load_case(d).run["devices"], (shipped,))

    def test_the_keyboard_stays_free(self):
        """Your own --qemu-opts is yours: parsed, not filtered."""
        self.assertEqual(settings.SETTINGS["qemu_opts"].parse("-pidfile /tmp/x"),
                         ("-pidfile", "/tmp/x"))


class Flags(unittest.TestCase):
    """The values a flag gives that no run can take: a usage error, before any build."""

    def test_bad_values_at_the_door(self):
        for argv in (["run", "--seed", "-1"], ["run", "--seed", str(1 << 40)],
                     ["run", "--cameras", "9"], ["run", "--cameras", "64"]):
            with self.subTest(argv=argv), \
                    mock.patch.object(kbuild, "build", side_effect=AssertionError("built")):
                code, out, err = run(argv + ["--json"])
                self.assertEqual(code, errors.EXIT_USAGE, err)

    def test_agent_arguments_by_the_agents_own_parser(self):
        for args, what in (("--cameras 9", "--cameras"), ("--hold always", "--hold"),
                           ("--help", "--help"), ("--duration soon", "--duration")):
            with self.subTest(args=args), \
                    mock.patch.object(kbuild, "build", side_effect=AssertionError("built")), \
                    mock.patch.object(kbuild, "pristine_tree",
                                      side_effect=AssertionError("built")):
                code, out, err = run(["run", "--kernel", "6.1", f"--agent-args={args}", "--json"])
                self.assertEqual(code, errors.EXIT_INPUT, err)
                self.assertIn(what, json.loads(out)["error"]["message"])

    def test_more_devices_than_a_boot_takes(self):
        with mock.patch.object(kbuild, "build", side_effect=AssertionError("built")):
            code, out, err = run(["run", "--kernel", "6.1", "--cameras", "8", "--capture",
                                  "--json"])
        self.assertEqual(code, errors.EXIT_INPUT, err)
        self.assertIn("--capture", json.loads(out)["error"]["message"])


if __name__ == "__main__":
    unittest.main()
