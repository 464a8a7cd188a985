"""`case DIR`, the before/after job as a command of its own (#44 item 3):
`run --case DIR` stays, and both reach the same function with the same
request (the runner, harness.checks.caserun.run_case, mocked), the same
options but for --case itself and a campaign job's, the same exit codes,
and the same JSON but for its "command"."""

from __future__ import annotations

import contextlib
import io
import json
import unittest
from pathlib import Path
from types import SimpleNamespace
from unittest import mock

from harness import errors
from harness.checks import caserun, diff
from harness.cli import helptext
from harness.cli import case as clicase
from harness.cli import main as cli
from harness.output import htmlreport

CASE = "patches/6.1/cases/uvc-status-buffer"

# what each command line adds to the case; both spellings of an option
OPTIONS = [
    [],
    ["--runs", "3", "--parallel", "1", "--duration", "4s", "--kernel", "6.12"],
    ["--tree", "/src/linux", "--series", "extra.series", "--no-detector", "-j", "4", "-q"],
    ["--usb-device", "logitech-k120", "--insn-count", "--timeout", "60", "--json",
     "--run-dir", "/tmp/case-x", "--catalogue", "cat.toml", "--profile", "full"],
]

# run's options that `case` leaves out: its argument is the case, and the
# campaign job's, which stay `run --case` (docs/campaigns.md)
RUN_ONLY = {"--case", "--case-variant", "--case-run", "--signature", "--bisect-signature"}


class _Reached(Exception):
    """The runner was called: its arguments are in ``args``."""


def reached(argv: list[str]) -> tuple:
    """The arguments the runner gets for ``argv``: its request and its
    progress's quietness (the command's own function, as main() calls it)."""
    a, code = cli.parse(argv)
    assert a is not None, (argv, code)
    with mock.patch.object(caserun, "run_case", side_effect=_Reached) as runner:
        try:
            a.func(a)
        except _Reached:
            pass
    runner.assert_called_once()
    (req, progress), kw = runner.call_args
    return req, progress.quiet, kw


def parsed(argv: list[str]) -> dict:
    a, _ = cli.parse(argv)
    return {k: v for k, v in vars(a).items() if k not in ("command", "func")}


def options(command: str) -> set[str]:
    p = cli.parser()._subparsers._group_actions[0].choices[command]
    return {s for a in p._actions for s in a.option_strings}


class SameFunctionSameArguments(unittest.TestCase):
    def test_case_and_run_case_give_the_runner_the_same_request(self):
        for opts in OPTIONS:
            with self.subTest(opts=opts):
                via_case = reached(["case", CASE, *opts])
                via_run = reached(["run", "--case", CASE, *opts])
                self.assertIsInstance(via_case[0], caserun.CaseRequest)
                self.assertEqual(via_case, via_run)
                self.assertEqual(via_case[0].case, Path(CASE))

    def test_the_options_change_the_request(self):
        """The comparison above tests something: the options reach the request."""
        req = reached(["case", CASE, *OPTIONS[1]])[0]
        self.assertEqual((req.runs, req.parallel), (3, 1))
        self.assertEqual(req.flags["duration"], 4.0)
        self.assertEqual(req.variant.kernel, "6.12")
        self.assertNotEqual(req, reached(["case", CASE])[0])

    def test_the_same_namespace_but_for_runs_own(self):
        for opts in OPTIONS:
            with self.subTest(opts=opts):
                run = parsed(["run", "--case", CASE, *opts])
                del run["bisect_signature"]         # a bisection job's, not a case's
                self.assertEqual(parsed(["case", CASE, *opts]), run)

    def test_the_case_is_an_argument_anywhere(self):
        self.assertEqual(parsed(["case", "--runs", "3", CASE]),
                         parsed(["case", CASE, "--runs", "3"]))

    def test_runs_options_but_the_case_and_a_jobs(self):
        self.assertEqual(options("run") - options("case"), RUN_ONLY)
        self.assertEqual(options("case") - options("run"), set())

    def test_a_case_is_required(self):
        with contextlib.redirect_stderr(io.StringIO()):
            a, code = cli.parse(["case"])
        self.assertIsNone(a)
        self.assertEqual(code, errors.EXIT_USAGE)


def outcome(matches: bool):
    """A CaseResult as caserun.run_case returns one (what the CLI reads of it)."""
    folder = Path("/tmp/case-x")
    return SimpleNamespace(
        outcome=SimpleNamespace(matches=matches), folder=folder,
        outcome_json=folder / "outcome.json", html=folder / "report.html",
        to_json=lambda: {"command": "run", "case": "uvc-status-buffer", "kernel": "6.1",
                         "ok": matches, "run_dir": str(folder), "outcome": {}})


def main(argv: list[str], matches: bool) -> tuple[int, dict]:
    out = io.StringIO()
    with mock.patch.object(caserun, "run_case", return_value=outcome(matches)), \
            mock.patch.object(htmlreport, "write_case"), \
            mock.patch.object(diff, "format_outcome", return_value="outcome"), \
            contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        code = cli.main(argv)
    return code, json.loads(out.getvalue())


class SameCodesSameJson(unittest.TestCase):
    def test_exit_codes_and_json_but_the_command(self):
        for matches, code in ((True, errors.EXIT_OK), (False, errors.EXIT_VERDICT)):
            with self.subTest(matches=matches):
                c1, j1 = main(["case", CASE, "--json"], matches)
                c2, j2 = main(["run", "--case", CASE, "--json"], matches)
                self.assertEqual((c1, c2), (code, code))
                self.assertEqual((j1["command"], j2["command"]), ("case", "run"))
                self.assertEqual(list(j1), list(j2))          # the same fields, in order
                self.assertEqual({**j1, "command": "run"}, j2)

    def test_an_error_names_the_command_given(self):
        out = io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
            code = cli.main(["case", "/nonexistent/case", "--json"])
        self.assertEqual(code, errors.EXIT_INPUT)
        obj = json.loads(out.getvalue())
        self.assertEqual((obj["command"], obj["ok"]), ("case", False))

    def test_the_help_lists_runs_case_codes(self):
        codes = helptext.codes_of(cli.parser()._subparsers._group_actions[0]
                                  .choices["case"].format_help())
        self.assertEqual(set(codes), set(helptext.ALWAYS) | set(clicase.CASE_CODES))
        self.assertIn("matches", codes[errors.EXIT_OK])


if __name__ == "__main__":
    unittest.main()
