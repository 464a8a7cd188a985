"""harness.cli.main: exit codes keep their meaning, and --json is one object on every path."""

import contextlib
import io
import json
import unittest
from unittest import mock

from harness import errors
from harness.cli import main as cli
from harness.kernel import kbuild


def run(argv):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli.main(argv)
    return code, out.getvalue(), err.getvalue()


class Usage(unittest.TestCase):
    def test_an_argument_error_is_one_json_object_with_json(self):
        code, out, err = run(["run", "--json", "--duration", "nope"])
        self.assertEqual(code, errors.EXIT_USAGE)
        obj = json.loads(out)
        self.assertEqual((obj["ok"], obj["command"], obj["error"]["kind"]), (False, "run", "usage"))
        self.assertIn("--duration", obj["error"]["message"])
        self.assertIn("not a duration", err)           # argparse's own text stays on stderr

    def test_an_unknown_command_with_json(self):
        code, out, _ = run(["no-such-command", "--json"])
        self.assertEqual(code, errors.EXIT_USAGE)
        self.assertEqual(json.loads(out)["error"]["exit_code"], errors.EXIT_USAGE)

    def test_without_json_stdout_stays_empty(self):
        code, out, err = run(["run", "--duration", "nope"])
        self.assertEqual((code, out), (errors.EXIT_USAGE, ""))
        self.assertIn("error:", err)

    def test_help_is_zero(self):
        code, out, _ = run(["build", "--help"])
        self.assertEqual(code, 0)
        self.assertIn("usage: dmaharness build", out)


class Overview(unittest.TestCase):
    """`dmaharness`, `dmaharness help [COMMAND]`, `--version` (#44)."""

    def test_bare_and_help_print_the_commands(self):
        for argv in ([], ["help"], ["help", "help"]):
            code, out, err = run(argv)
            self.assertEqual(code, 0, err)
            self.assertIn("COMMAND", out)
            self.assertIn("check", out)

    def test_help_of_a_command(self):
        code, out, _ = run(["help", "mail"])
        self.assertEqual(code, 0)
        self.assertIn("usage: dmaharness mail", out)
        code, _, err = run(["help", "no-such-command"])
        self.assertEqual(code, errors.EXIT_USAGE)
        self.assertIn("no-such-command", err)
        self.assertEqual(run(["help", "a", "b"])[0], errors.EXIT_USAGE)

    def test_version_names_the_commit(self):
        code, out, _ = run(["--version"])
        self.assertEqual(code, 0)
        self.assertRegex(out, r"^dmaharness \S+")


class BeforeTheBuild(unittest.TestCase):
    """What the first second can say is said before a kernel build starts."""

    def test_a_missing_device_profile(self):
        for argv in (["run", "--device", "/nonexistent.profile"],
                     ["run", "--device", "no-such-profile", "--kernel", "6.12"],
                     ["run", "--case", "patches/6.1/cases/uvc-status-buffer", "--device",
                      "/nonexistent.profile"]):
            with mock.patch.object(kbuild, "build", side_effect=AssertionError("built")), \
                    mock.patch.object(kbuild, "pristine_tree", side_effect=AssertionError("built")):
                code, out, err = run(argv + ["--json"])
            self.assertEqual(code, errors.EXIT_INPUT, err)
            self.assertIn("--usb-device", json.loads(out)["error"]["message"])


class Internal(unittest.TestCase):
    """A bug of ours is exit 70 with its traceback, never a verdict (0, 1) or an input error."""

    def test_an_unexpected_exception_is_exit_70_with_the_traceback(self):
        with mock.patch.object(cli.cache, "cmd_profiles", side_effect=KeyError("boom")):
            code, out, err = run(["profiles", "--json"])
        self.assertEqual(code, errors.EXIT_INTERNAL)
        obj = json.loads(out)
        self.assertEqual(obj["error"]["kind"], "internal")
        self.assertIn("KeyError", obj["error"]["message"])
        self.assertIn("Traceback", err)

    def test_a_harness_error_keeps_its_code(self):
        with mock.patch.object(cli.cache, "cmd_profiles", side_effect=errors.InputError("bad")):
            code, out, _ = run(["profiles", "--json"])
        self.assertEqual(code, errors.EXIT_INPUT)
        self.assertEqual(json.loads(out)["error"]["kind"], "input")


class HoldLine(unittest.TestCase):
    """`run`'s text: which status hold the agent ran, and why."""

    def test_the_hold_and_its_reason(self):
        from harness.cli import build
        line = build._hold_line({"hold": "stream", "hold_reason": "auto: x has uvc_pm_get",
                                 "hold_failures": 0})
        self.assertEqual(line.split(None, 2)[2], "stream (auto: x has uvc_pm_get)\n")
        self.assertIn("1 start(s) FAILED", build._hold_line({"hold": "stream", "hold_reason": "r",
                                                             "hold_failures": 1}))

    def test_no_line_without_a_hold(self):
        from harness.cli import build
        self.assertEqual(build._hold_line({"hold": None}), "")


if __name__ == "__main__":
    unittest.main()
