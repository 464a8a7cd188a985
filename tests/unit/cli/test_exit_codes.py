"""Issue #40: bad input is 2 or 4, a broken environment 3 with its cause, and
70 only for a bug of ours; bisect-run stops (>= 128) on the set-up's faults
instead of skipping every commit; --json is one object on every error path;
values known at the start are refused before any build."""

import argparse
import contextlib
import errno
import io
import json
import os
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from harness import errors
from harness.checks import sweep as sweepmod
from harness.cli import bisectrun, logcli, reportscli, main as cli
from harness.kernel import cache, kbuild

NO_BUILD = AssertionError("a build started")


def run(argv, stdout=None):
    out, err = (stdout or io.StringIO()), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli.main(argv)
    return code, out.getvalue() if isinstance(out, io.StringIO) else "", err.getvalue()


class _Full(io.StringIO):
    """A standard output on a full disk (>/dev/full)."""
    def write(self, s):
        raise OSError(errno.ENOSPC, "No space left on device")


class WithCache(unittest.TestCase):
    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp())
        self.addCleanup(subprocess.run, ["rm", "-rf", str(self.tmp)])
        env = mock.patch.dict(os.environ, {"DMAHARNESS_CACHE": str(self.tmp / "cache")})
        env.start()
        self.addCleanup(env.stop)


class BadInputIsNotABug(WithCache):
    def sweep_json(self, kernel="6.1"):
        p = self.tmp / "sweep.json"
        p.write_text(json.dumps({"command": "sweep", "kernel": kernel, "sites": [
            {"key": "a", "function": "f", "offset": 0, "length": 4, "object_size": 64}]}))
        return str(p)

    def test_site_report_rows(self):
        for row in ("²", "x", "-1", "0", "99999", "1e400", "9" * 5000):
            code, _, err = run(["site-report", self.sweep_json(), "--", row])
            self.assertEqual(code, errors.EXIT_INPUT, (row[:9], err[-300:]))

    def test_site_report_kernel_versions(self):
        for kernel in ("6.1.5", "1.2.3.4", "²", "../x", "9.9"):
            code, out, err = run(["site-report", self.sweep_json(kernel), "1", "--json"])
            self.assertEqual(code, 0, (kernel, err[-300:]))
            self.assertNotIn("Traceback", err)

    def test_usb_drivers_output_that_is_no_folder(self):
        alias = self.tmp / "modules.alias"
        alias.write_text("alias usb:v046Dp0825d*dc*dsc*dp*ic*isc*ip*in* uvcvideo\n")
        (self.tmp / "afile").write_text("")
        os.mkfifo(self.tmp / "fifo")
        for out in (str(self.tmp / "afile"), str(self.tmp / "fifo"), ""):
            code, _, err = run(["usb-drivers", str(alias), "-o", out])
            self.assertEqual(code, errors.EXIT_USAGE, (out, err[-300:]))

    def test_counts_and_chances_are_checked_by_the_parser(self):
        for argv in (["run", "--runs", "-1"], ["run", "--parallel", "0"], ["build", "-j", "-3"],
                     ["bisect", "--series", "s", "--signature", "x", "--max-miss", "nan"],
                     ["sweep", "--parallel", "-1"]):
            code, _, err = run(argv)
            self.assertEqual(code, errors.EXIT_USAGE, (argv, err[-300:]))

    def test_a_run_folder_under_a_file(self):
        """--run-dir A/B where A is a file: refused at the door, not NotADirectoryError."""
        (self.tmp / "afile").write_text("x")
        with mock.patch.object(kbuild, "build", side_effect=NO_BUILD):
            code, out, err = run(["run", "--case", "patches/6.1/cases/uvc-status-buffer",
                                  "--run-dir", str(self.tmp / "afile" / "x"), "--json"])
        self.assertEqual(code, errors.EXIT_USAGE, err[-300:])
        self.assertIn("is not a folder", json.loads(out)["error"]["message"])


class BrokenEnvironment(WithCache):
    def test_a_cache_folder_that_is_a_file(self):
        f = self.tmp / "cache"
        f.write_text("")
        for argv in (["cache", "--json"], ["cache", "prune", "--json"]):
            code, out, _ = run(argv)
            self.assertEqual(code, errors.EXIT_ENV, argv)
            self.assertIn(str(f), json.loads(out)["error"]["message"])

    def test_a_cache_folder_not_writable(self):
        with mock.patch.object(os, "access", return_value=False):
            with self.assertRaises(errors.EnvError) as e:
                cache.paths.sub("locks")
        self.assertIn("cache", e.exception.message)

    def test_a_state_file_of_the_wrong_type(self):
        work = self.tmp / "cache" / "work"
        (work / "6.1-abc" / "_build").mkdir(parents=True)
        (work / "6.1-abc.json").write_text(json.dumps(
            {"key": "6.1-abc", "version": "6.1", "patches": 5, "built": True}))
        code, out, err = run(["cache", "--json"])
        self.assertEqual(code, 0, err[-500:])
        self.assertEqual(json.loads(out)["trees"], [])

    def test_corrupt_artifacts_meta_names_the_file(self):
        d = self.tmp / "cache" / "artifacts" / "6.1-abc"
        d.mkdir(parents=True)
        for text in ("[1]", '{"patches": 5}', "{not json"):
            (d / "meta.json").write_text(text)
            with self.assertRaises(errors.EnvError) as e:
                kbuild.load_artifacts("6.1-abc")
            self.assertIn(str(d / "meta.json"), e.exception.message)

    def test_stdout_full(self):
        for argv in (["profiles"], ["profiles", "--json"]):
            code, _, err = run(argv, stdout=_Full())
            self.assertEqual(code, errors.EXIT_ENV, err[-500:])
            self.assertIn("No space left", err)
            self.assertNotIn("Traceback", err)

    def test_stdout_closed(self):
        err = io.StringIO()
        with mock.patch.object(sys, "stdout", None), contextlib.redirect_stderr(err):
            code = cli.main(["profiles", "--json"])
        self.assertEqual(code, errors.EXIT_ENV)
        self.assertIn("standard output is closed", err.getvalue())


class BisectRunStopsOnTheSetUp(WithCache):
    def tree(self):
        t = self.tmp / "linux"
        t.mkdir()
        (t / "Makefile").write_text("VERSION = 6\nPATCHLEVEL = 1\nSUBLEVEL = 0\n")
        git = ["git", "-C", str(t), "-c", "user.email=a@b", "-c", "user.name=a"]
        subprocess.run(git + ["init", "-q"], check=True)
        subprocess.run(git + ["add", "Makefile"], check=True)
        subprocess.run(git + ["commit", "-qm", "x"], check=True)
        return t

    def bisect_run(self, argv):
        with mock.patch.object(kbuild, "build", side_effect=NO_BUILD):
            return run(["bisect-run", "--signature", "KASAN", "--json"] + argv)

    def test_a_cache_folder_inside_the_checkout(self):
        t = self.tree()
        with mock.patch.dict(os.environ, {"DMAHARNESS_CACHE": str(t / ".cache")}):
            code, out, err = self.bisect_run(["--tree", str(t)])
        self.assertEqual(code, bisectrun.BR_ENV, err[-500:])
        obj = json.loads(out)
        self.assertFalse(obj["ok"])
        self.assertIn("inside the checkout", obj["reason"])

    def test_a_case_nested_too_deeply(self):
        case = self.tmp / "deep.toml"
        case.write_text("[run]\nx = " + "[" * 5000 + "]" * 5000 + "\n")
        code, out, err = self.bisect_run(["--tree", str(self.tree()), "--case", str(case)])
        self.assertEqual(code, bisectrun.BR_INPUT, err[-500:])
        self.assertFalse(json.loads(out)["ok"])

    def test_an_abbreviated_option_is_a_usage_error(self):
        code, out, _ = run(["bisect-run", "--signature", "x", "--js"])
        self.assertEqual(code, bisectrun.BR_USAGE)
        self.assertFalse(json.loads(out)["ok"])

    def test_the_epilog_lists_each_stop_code_once(self):
        for c in (128, 129, 130, 131, 132):
            self.assertEqual(bisectrun.BR_EPILOG.count(f"\n  {c} "), 1, c)


class JsonOnEveryError(WithCache):
    def test_an_abbreviation_is_a_usage_error_with_one_json_object(self):
        for argv in (["profiles", "--js"], ["cache", "--jso"], ["reports", "x.log", "--js"]):
            code, out, err = run(argv)
            self.assertEqual(code, errors.EXIT_USAGE, argv)
            self.assertFalse(json.loads(out)["ok"])
            self.assertNotIn("Traceback", err)

    def test_no_parser_takes_abbreviations(self):
        def walk(p):
            yield p
            for a in p._actions:
                if isinstance(a, argparse._SubParsersAction):
                    for child in a.choices.values():
                        yield from walk(child)
        parsers = [*walk(cli.parser()), bisectrun.bisect_run_parser(), logcli.diff_parser(),
                   reportscli.log_parser("p", "d", "l")]
        self.assertGreater(len(parsers), 10)
        for p in parsers:
            self.assertFalse(p.allow_abbrev, p.prog)

    def test_job_errors_with_json(self):
        code, out, _ = run(["job", "some-id", "--json"])
        self.assertEqual(code, errors.EXIT_USAGE)
        self.assertFalse(json.loads(out)["ok"])


class RefusedBeforeTheBuild(WithCache):
    def sweep(self, argv):
        with mock.patch.object(kbuild, "build", side_effect=NO_BUILD), \
                mock.patch.object(kbuild, "pristine_tree", side_effect=NO_BUILD), \
                mock.patch.object(sweepmod, "source_tree", side_effect=NO_BUILD):
            return run(argv + ["--json"])

    def test_driver_names(self):
        for d in ("../x", "a,b/c", "x y", "é"):
            code, out, err = self.sweep(["sweep", "--usb-drivers", "--drivers", d])
            self.assertEqual(code, errors.EXIT_USAGE, (d, err[-300:]))
            self.assertIn("--drivers", json.loads(out)["error"]["message"])

    def test_usb_flags_without_usb_drivers(self):
        for flag, value in (("--per-boot", "3"), ("--tries", "2")):
            code, out, _ = self.sweep(["sweep", flag, value])
            self.assertEqual(code, errors.EXIT_USAGE, flag)
            self.assertIn(flag, json.loads(out)["error"]["message"])

    def test_a_device_case_of_another_kernel(self):
        code, out, err = self.sweep(["run", "--case", "patches/7.3/cases/virtio-gpu-inline-resp",
                                     "--kernel", "6.1"])
        self.assertEqual(code, errors.EXIT_INPUT, err[-500:])
        self.assertIn("7.3", json.loads(out)["error"]["message"])


if __name__ == "__main__":
    unittest.main()
