"""A campaign's jobs checked by the door `run` and `sweep` use for their own
command line: a campaign folder is data from someone else.

A job of campaign.json may carry only what its planner writes: the kind's
fixed arguments (harness.campaign.campaign.planned_job: its case, variant,
run, --json-out results/<id>.json, -q ...), then the plan's RUN-ARGS,
which must be options of `run` (or `sweep`) that the planner does not set
itself and that name no host output: no --json-out, --run-dir, nor an
option that makes ccache write where it is told, or hands the host's USB
devices to the guest; --qemu-opts only as a case may (boot/qemurules.py).  `plan` checks RUN-ARGS the same way
before it writes anything; `dmaharness job ID` and `dmaharness campaign`
before they run a job.
"""

from __future__ import annotations

import argparse
import functools
from pathlib import Path
from typing import NoReturn

from .. import paths
from ..errors import HarnessError, InputError
from ..boot import qemurules
from ..campaign import campaign, folder as cfolder
from . import build, sweep

# the options the planner sets itself, per command (never in RUN-ARGS)
PLANNED = {"run": {"case": "--case", "case_variant": "--case-variant", "case_run": "--case-run",
                   "series": "--series", "prefix": "--prefix",
                   "bisect_signature": "--signature", "json_out": "--json-out"},
           "sweep": {"job": "--job", "batch": "--batch", "usb_drivers": "--usb-drivers",
                     "json_out": "--json-out"}}
# options that write on this host where they are told, or reach beyond the guest
HOST = {"json_out": "--json-out", "run_dir": "--run-dir", "usb_host": "--usb-host",
        "help": "--help"}
HARMLESS = {"quiet", "json"}
# in a case or sweep plan, a series after the case's is the user's to add
PLAN_MAY_SET = {"case": {"series", "prefix"}, "sweep": set(), "bisect": set()}


class _Refused(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    """argparse that raises instead of printing and exiting."""

    def error(self, message: str) -> NoReturn:
        raise _Refused(message)

    def exit(self, status: int = 0, message: str | None = None) -> NoReturn:
        raise _Refused(message or "--help")

    def print_help(self, file=None) -> None:
        pass

    def print_usage(self, file=None) -> None:
        pass


@functools.lru_cache(maxsize=1)
def _parser() -> argparse.ArgumentParser:
    p = _Parser(prog="dmaharness", add_help=False, allow_abbrev=False)
    sub = p.add_subparsers(dest="command")
    build.add_parsers(sub)          # run
    sweep.add_parsers(sub)          # sweep
    for child in sub.choices.values():      # exact option names only, as main.parser()
        child.allow_abbrev = False
    return p


def _parse(argv: list[str]) -> argparse.Namespace:
    return _parser().parse_args(argv)


def given(command: str, args: list[str]) -> dict[str, tuple[str, object]]:
    """The options ``args`` give to ``command`` ('run' or 'sweep'), parsed as
    its command line is: {dest: (option, value)}; _Refused with argparse's
    message (abbreviations, --opt=value and the like are argparse's)."""
    base, names = _defaults(command)
    got = vars(_parse([command, *args]))
    return {d: (names.get(d, d), got[d]) for d in got if got[d] != base.get(d)}


def _command_actions(command: str) -> list[argparse.Action]:
    sp = [a for a in _parser()._actions if isinstance(a, argparse._SubParsersAction)][0]
    return [a for a in sp.choices[command]._actions if a.option_strings]


def _canonical(a: argparse.Action) -> str:
    """An option's name as --help shows it first: its first long string (the
    ones after it are old spellings kept as aliases, #44)."""
    return next((s for s in a.option_strings if s.startswith("--")), a.option_strings[0])


@functools.lru_cache(maxsize=None)
def _defaults(command: str) -> tuple[dict, dict]:
    """``command``'s values when no option is given, and each option's long name."""
    names = {a.dest: _canonical(a) for a in _command_actions(command)}
    return vars(_parse([command])), names


@functools.lru_cache(maxsize=None)
def spellings(command: str) -> dict[str, str]:
    """Every option string of ``command`` -> its canonical one (itself, or the
    new name of an old spelling kept as an alias)."""
    return {s: _canonical(a) for a in _command_actions(command) for s in a.option_strings}


def run_args_problem(command: str, args: list[str], kind: str) -> str:
    """What is wrong with RUN-ARGS ``args`` of a ``kind`` plan whose jobs run
    ``command``, or ''."""
    if command not in PLANNED:
        return f"a job runs run or sweep, not {command!r}"
    try:
        opts = given(command, list(args))
    except _Refused as e:
        return f"not options of `{command}` ({str(e).strip()})"
    for dest, (opt, value) in sorted(opts.items()):
        if dest in HARMLESS:
            continue
        if dest in HOST:
            return (f"{opt} is refused in a campaign's jobs: it writes on the host where it is "
                    "told, or reaches beyond the guest (a job's output is its "
                    "results/<id>.json)")
        if dest in PLANNED[command] and dest not in PLAN_MAY_SET.get(kind, set()):
            return f"{opt} is set by the plan itself, per job"
        if dest == "qemu_opts":
            try:                        # what a case may ask of QEMU, a job too
                qemurules.check(value)
            except InputError as e:
                return e.message
        if dest == "ccache_remote" and str(value).startswith("file:"):
            return ("--ccache-remote file:... is refused in a campaign's jobs: it writes into "
                    "a folder of the host (use redis:// or http://)")
    return ""


def check_plan_args(kind: str, command: str, args: list[str]) -> None:
    """`plan KIND ... -- RUN-ARGS`: refused (exit 2) before anything is written."""
    why = run_args_problem(command, args, kind)
    if why:
        raise HarnessError(f"plan {kind}: RUN-ARGS: {why}")


def _refuse(c: campaign.Campaign, jid: str, why: str) -> NoReturn:
    f = c.folder / campaign.CAMPAIGN_FILE
    raise InputError(f"{f}: job {jid}: {why}; a campaign's jobs carry only what its plan "
                     "writes", path=str(f))


def _in_checkout(rel: str) -> bool:
    p = Path(rel)
    if p.is_absolute() or ".." in p.parts or not rel:
        return False
    try:
        (paths.REPO / p).resolve().relative_to(paths.REPO.resolve())
    except (ValueError, OSError, RuntimeError):
        return False
    return True


def check_campaign(c: campaign.Campaign) -> None:
    """Every job of ``c`` (and, for a bisection, the jobs it will add) is one
    its plan writes; else InputError naming the job and the option."""
    _check_about(c)
    for j in c.jobs:
        check_job(c, j)


def _check_about(c: campaign.Campaign) -> None:
    """What of campaign.json's top level goes into jobs' arguments."""
    a = c.about
    if c.kind == "case" and a.get("job_case") != a.get("case_folder") \
            and not _in_checkout(str(a.get("job_case") or "")):
        _refuse(c, "(all)", f"job_case {str(a.get('job_case'))[:80]!r}: the case is the "
                "campaign's copy or a path inside the checkout")
    if c.kind == "bisect":
        if not _in_checkout(a["series"]):
            _refuse(c, "(all)", f"series {a['series'][:80]!r}: not a path inside the checkout")
        why = run_args_problem("run", a["extra"], "bisect")
        if why:
            _refuse(c, "(next steps)", f"extra: {why}")


def check_job(c: campaign.Campaign, j: campaign.Job) -> None:
    want = campaign.planned_job(c, j.id)
    if want is None:
        _refuse(c, j.id, "no plan of this campaign makes such a job")
    fixed = len(want.argv)
    if not _same_fixed(j.argv[:fixed], want.argv):
        diff = next((i for i, (x, y) in enumerate(zip(j.argv, want.argv)) if x != y),
                    min(len(j.argv), fixed))
        got = j.argv[diff] if diff < len(j.argv) else "(nothing)"
        _refuse(c, j.id, f"argument {diff + 1} is {got[:80]!r} where its plan writes "
                f"{want.argv[diff]!r} ({' '.join(want.argv)[:200]})")
    why = run_args_problem(j.argv[0], list(j.argv[fixed:]), c.kind)
    if why:
        _refuse(c, j.id, why)
    try:                                # and whole, as `run`/`sweep` will read it
        whole = given(j.argv[0], list(j.argv[1:]))
    except _Refused as e:
        _refuse(c, j.id, f"not a command line of `{j.argv[0]}` ({str(e).strip()})")
    out = whole.get("json_out", ("", None))[1]
    if str(out) != j.result or any(d in whole for d in HOST if d != "json_out"):
        _refuse(c, j.id, f"its output is not {j.result} alone")


def _same_fixed(got: tuple[str, ...], want: tuple[str, ...]) -> bool:
    """A job's fixed arguments are its plan's: the same strings, but for an
    option an older dmaharness wrote in its old spelling (a campaign planned
    before #44: `run --bisect-signature`, now --signature)."""
    if len(got) != len(want) or not got or got[0] != want[0]:
        return False
    names = spellings(want[0]) if want[0] in PLANNED else {}
    return all(x == y or (y.startswith("--") and names.get(y) == y and names.get(x) == y)
               for x, y in zip(got, want))


def job_argv(folder: Path, jid: str) -> list[str]:
    """`dmaharness job ID`, run in the campaign folder: that job's arguments,
    checked, with its result's folder a real one of the campaign."""
    c = campaign.load(folder)
    job = campaign.job(c, jid)
    _check_about(c)
    check_job(c, job)
    cfolder.mkdir(folder, "results", "the results folder")
    cfolder.require(folder, job.result, cfolder.FILE, "job result")
    return list(job.argv)


def job_args(argv: list[str]) -> list[str]:
    """`dmaharness job ID`, a line of a campaign's jobs.txt, run in the campaign
    folder: that job's arguments, read from campaign.json (checked whole)."""
    if len(argv) != 1 or argv[0].startswith("-"):
        raise HarnessError("usage: dmaharness job ID (a line of a campaign's jobs.txt, "
                                  "run in the campaign's folder)")
    return job_argv(Path.cwd(), argv[0])
