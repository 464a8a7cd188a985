"""defaults < a case's [run] < flags, for every command that floods.

Each command is run through cli.main with the build and the boots
replaced; what reaches the flood is captured and checked: the flag given
wins over the case, the case over the defaults.
"""

import contextlib
import io
import os
import subprocess
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from harness.checks import bisectjob, caserun
from harness.cli import main as cli
from harness.cli import common
from harness.cli import bisectrun
from harness.kernel import kbuild
from harness.boot import settings

CASE = """\
name = "prec"
[run]
flood = "button:100"
duration = "9s"
cycle_hz = 3
cameras = 2
smp = 2
[[variants]]
name = "before"
role = "before"
patches = ["0001-x.patch"]
[[variants]]
name = "after"
role = "after"
patches = []
[expect]
fixed = ["x"]
"""


class Captured(BaseException):    # not an Exception: cli.main turns those into exit 70
    def __init__(self, boot_, flood):
        self.boot, self.flood = boot_, flood


def fake_build(*a, **k):
    return mock.Mock(cached=True, steps=0, to_json=lambda: {"key": "k"},
                     artifacts=mock.Mock(dir=Path("/nonexistent"), meta={}, key="k"))


class Precedence(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.d = Path(self.tmp.name)
        case = self.d / "cases" / "prec"
        case.mkdir(parents=True)
        (case / "0001-x.patch").write_text("--- a/x\n+++ b/x\n")
        (case / "case.toml").write_text(CASE)
        self.case = case
        (self.d / "series").write_text("0001-x.patch\n")
        (self.d / "0001-x.patch").write_text("--- a/x\n+++ b/x\n")
        for p in (mock.patch.dict(os.environ, {"DMAHARNESS_CACHE": str(self.d / "cache")}),
                  mock.patch.object(kbuild, "find_source",
                                    return_value=kbuild.Source("6.1", "6.1.0-test", Path("/x"))),
                  mock.patch.object(kbuild, "compiler_version", return_value="gcc 12")):
            p.start()
            self.addCleanup(p.stop)

    def tearDown(self):
        self.tmp.cleanup()

    def main(self, *argv) -> Captured:
        err = io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            try:
                cli.main(list(argv))
            except Captured as c:
                return c
        self.fail(f"nothing reached the flood: {err.getvalue()[-2000:]}")

    def check(self, c: Captured):
        # flags: --duration 4s, --smp 1; the case: button:100, cycle 3, 2 cameras; defaults: phys 0
        self.assertEqual(c.flood.duration, 4.0)
        self.assertEqual(c.boot.smp, 1)
        self.assertEqual((c.flood.flood.pattern, c.flood.flood.rate), ("button", "100"))
        self.assertEqual((c.flood.cycle_hz, c.flood.cameras), (3.0, 2))
        self.assertEqual((c.flood.phys_hz, c.boot.memory), (0.0, 1024))

    def test_run_case(self):
        def flood_once(job, progress, on_output=None):
            raise Captured(job.boot, job.flood)

        with mock.patch.object(caserun.kbuild, "build", side_effect=fake_build), \
                mock.patch.object(caserun, "flood_once", side_effect=flood_once), \
                mock.patch.object(caserun.symbolize, "symbolizer"):
            self.check(self.main("run", "--kernel", "6.1", "--case", str(self.case),
                                 "--duration", "4s", "--smp", "1", "--parallel", "1"))

    def test_bisect(self):
        def fake_bisect(runner, *a, **k):
            raise Captured(runner.boot, runner.flood)

        with mock.patch.object(bisectjob.bisect, "bisect", side_effect=fake_bisect):
            self.check(self.main("bisect", "--kernel", "6.1", "--series", str(self.d / "series"),
                                 "--signature", "x", "--case", str(self.case),
                                 "--duration", "4s", "--smp", "1",
                                 "--run-dir", str(self.d / "b")))

    def test_bisect_run(self):
        repo = self.d / "linux"
        repo.mkdir()
        (repo / "Makefile").write_text("VERSION = 6\nPATCHLEVEL = 1\n")
        for args in (["init", "-q"], ["add", "-A"],
                     ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "x"]):
            subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)

        def fake_run(self_, prefix, first, count):
            raise Captured(self_.boot, self_.flood)

        with mock.patch.object(bisectjob.kbuild, "build", side_effect=fake_build), \
                mock.patch.object(bisectjob.initramfs, "build_agent", return_value=Path("/bin/true")), \
                mock.patch.object(bisectjob.FloodRunner, "run", fake_run):
            with self.assertRaises(Captured) as cm:
                # bisect-run reports exceptions as exit codes: call its core directly
                a = bisectrun.bisect_run_args(["--signature", "x", "--tree", str(repo), "--case",
                                         str(self.case), "--duration", "4s", "--smp", "1"])
                req = bisectjob.CommitRequest(common.variant_spec(a), a.signature, common.flags(a),
                                              case=a.case)
                bisectjob.test_commit(req, mock.Mock(), {}, lambda m: None)
            self.check(cm.exception)

    def test_defaults_are_one_set(self):
        b, f = settings.resolve()
        self.assertEqual((f.flood.pattern, f.flood.rate, f.duration, f.cycle_hz, f.phys_hz),
                         ("control", "max", 20.0, 0.0, 0.0))
        self.assertEqual((b.smp, b.timeout), (1, 120.0))
        # --help shows the same defaults
        helptext = io.StringIO()
        with contextlib.redirect_stdout(helptext), self.assertRaises(SystemExit):
            cli.parser().parse_args(["run", "--help"])
        self.assertIn("(control:max)", helptext.getvalue())


if __name__ == "__main__":
    unittest.main()
