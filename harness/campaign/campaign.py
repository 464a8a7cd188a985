"""Campaigns: a piece of work as a list of independent dmaharness commands.

`dmaharness plan case CASE` writes a campaign folder::

    campaign.json   what the jobs are and how to merge them (versioned)
    jobs.txt        one job a line, `dmaharness job ID`: it runs that job's
                    arguments (campaign.json carries them byte for byte;
                    only what a plan writes runs: harness/cli/jobcheck.py)
                    and writes its --json result to results/<id>.json
    case/           the case, copied (its patches are relative to it)
    results/        what came back

Every job line runs with the campaign folder as its working folder and
`dmaharness` on PATH (the checkout's root), on any machine that has the
checkout: here (`dmaharness campaign DIR --parallel N`, through GNU parallel),
over ssh (GNU parallel's --sshlogin) or under Slurm.  A job that runs twice
writes the same file; a result is written whole or not at all.

`dmaharness collect DIR` merges whatever came back into what the local
command gives (the case diff and its verdict), and lists every job that is
missing or failed, by id and command; it never drops one silently.
"""

from __future__ import annotations

import json
import math
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import errors, files, jsonout, paths, proc
from ..errors import InputError
from ..kernel import series as series_mod
from ..devices import catalogue
from ..reports import engine
from ..checks import bisect, caserun, diff, sweep, sweeptable, usbsweep
from ..checks.case import Case, load_case
from . import folder as cfolder, remote, results, slurm

CAMPAIGN_VERSION = 1
KINDS = ("case", "bisect", "sweep")
CAMPAIGN_FILE = "campaign.json"
JOBS_FILE = "jobs.txt"
JOBLOG = "joblog"
TERMSEQ = remote.TERMSEQ
MAX_RUNS = 1000                 # runs per variant a plan makes
MAX_JOBS = 100_000              # jobs a campaign.json may hold
CAMPAIGN_MAX = 64 << 20         # bytes of campaign.json, of joblog
RESULT_MAX = 256 << 20          # bytes of a job's result (its console whole)


@dataclass(frozen=True)
class Job:
    id: str
    argv: tuple[str, ...]           # the dmaharness arguments
    result: str                     # results/<id>.json, relative to the campaign folder

    def line(self) -> str:
        """Its line in jobs.txt, run from the campaign folder by every engine
        (GNU parallel here or over ssh, Slurm): the id only, so that no
        argument byte (a newline, a quote) can change what the line runs."""
        return f"dmaharness job {self.id}"

    def command(self) -> str:
        """Its arguments as one shell command, for people (collect, JUnit, KCIDB)."""
        return shlex.join(("dmaharness",) + self.argv)

    def to_json(self) -> dict:
        return {"id": self.id, "argv": list(self.argv), "result": self.result}


@dataclass(frozen=True)
class Campaign:
    folder: Path
    kind: str                       # "case"
    jobs: tuple[Job, ...]
    about: dict = field(default_factory=dict)

    def to_json(self) -> dict:
        return {"version": CAMPAIGN_VERSION, "kind": self.kind, **self.about,
                "jobs": [j.to_json() for j in self.jobs]}


@dataclass(frozen=True)
class CasePlan:
    """`plan case`: every run of every variant of a case, one job each."""
    case: Path
    runs: int
    folder: Path
    extra: tuple[str, ...] = ()     # more `run` arguments for every job (--kernel, --duration ...)
    check: tuple[str, ...] = ()     # `plan check`: the patches' names, in order (the case's
                                    # after-K is the tree after patch K)


def _write_json(folder: Path, rel: str, data: Any) -> None:
    cfolder.write_text(folder, rel, json.dumps(data, indent=1) + "\n")


def _copy_case(case: Case, dest: Path) -> None:
    """The case's own files into the campaign: case.toml, the patches and
    device profiles it names (load_case proved each a regular file inside
    the case's folder) and its README; nothing else of the folder, and no
    link, travels."""
    top = case.path.parent
    wanted = [case.path] + [p.path for v in [case.before, *case.afters] for p in v.patches] \
        + [Path(d) for d in case.run.get("devices", ()) if os.path.isabs(d)]
    readme = top / "README.md"
    if readme.is_file() and not readme.is_symlink():
        wanted.append(readme)
    for src in dict.fromkeys(wanted):
        to = dest / src.relative_to(top)
        to.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, to)


def plan_case(p: CasePlan) -> Campaign:
    if not 1 <= p.runs <= MAX_RUNS:
        raise InputError(f"--runs {p.runs}: 1 to {MAX_RUNS} runs per variant")
    case = load_case(p.case)
    with cfolder.planned(p.folder) as folder:
        c = _plan_case(p, case, folder)
    return Campaign(p.folder, c.kind, c.jobs, c.about)


def _plan_case(p: CasePlan, case: Case, folder: Path) -> Campaign:
    _copy_case(case, folder / "case")
    extra = list(p.extra)
    # a case of the checkout is named by its path there (every worker has
    # the checkout): its variants are the ones run --case builds, whose
    # keys name the patches by that path; another case travels as the copy
    try:
        where = str(case.folder.resolve().relative_to(paths.REPO))
    except ValueError:
        where = "case"
        ver = caserun.case_version(case)
        if ver and "--kernel" not in extra and "--tree" not in extra:
            extra = ["--kernel", ver] + extra      # the copy no longer sits in patches/<ver>/
    jobs = [case_job(where, v.name, r, extra)
            for v in [case.before] + case.afters for r in range(1, p.runs + 1)]
    c = Campaign(folder, "case", tuple(jobs),
                 {"case": case.name, "case_folder": "case", "runs": p.runs,
                  "variants": [v.name for v in [case.before] + case.afters],
                  "source": str(case.folder), "job_case": where, "extra": extra,
                  "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
                  **({"check_patches": list(p.check)} if p.check else {})})
    _save(c)
    return c


@dataclass(frozen=True)
class BisectPlan:
    """`plan bisect`: a bisection whose steps' runs are jobs.  The steps are
    the local bisection's (bisect.bisect, the same policy); their runs are
    appended to jobs.txt as the search needs them, `campaign` running each
    step's runs on its engine and `collect` replaying the search."""
    series: Path
    signature: str
    folder: Path
    good: int | None = None
    bad: int | None = None
    policy: bisect.Policy = field(default_factory=bisect.Policy)
    extra: tuple[str, ...] = ()


def _publish(c: Campaign) -> Campaign:
    """The planned campaign written whole into its folder, or not at all."""
    with cfolder.planned(c.folder) as tmp:
        _save(Campaign(tmp, c.kind, c.jobs, c.about))
    return c


def plan_bisect(p: BisectPlan) -> Campaign:
    bisect.Matcher(p.signature)                 # a bad regex: before any folder is made
    spath = paths.in_checkout(p.series).resolve()
    user = series_mod.parse_series(spath)
    if not user:
        raise InputError(f"series file {p.series} names no patch", path=str(p.series))
    good = 0 if p.good is None else p.good
    bad = len(user) if p.bad is None else p.bad
    bisect.check(len(user), good, bad, p.policy)
    try:
        # named by its checkout path: every worker has it, and the prefixes'
        # kernels are the local bisection's (their keys name patches so)
        where = str(spath.relative_to(paths.REPO))
    except ValueError:
        raise InputError(f"--series {p.series}: a bisection campaign's series must be in "
                         f"this checkout ({paths.REPO}), which every worker gets; copy it "
                         "under patches/ or tests/fixtures/", path=str(p.series)) from None
    return _publish(Campaign(
        p.folder, "bisect", (),
        {"series": where, "patches": [x.name for x in user], "signature": p.signature,
         "good": good, "bad": bad, "policy": p.policy.to_json(),
         "extra": list(p.extra), "created": time.strftime("%Y-%m-%dT%H:%M:%S%z")}))


@dataclass(frozen=True)
class SweepPlan:
    """`plan sweep`: the boot without a device and each device of the
    catalogue, one job each; collect folds the sites as `sweep` does."""
    folder: Path
    devices: tuple[str, ...] = ()
    catalogue: Path | None = None
    extra: tuple[str, ...] = ()


def _job_name(device: str) -> str:
    return "boot" if device == sweep.BOOT_DEVICE else device


def plan_sweep(p: SweepPlan) -> Campaign:
    cat = catalogue.load(p.catalogue)
    chosen = cat.select(list(p.devices))
    extra = list(p.extra)
    if p.catalogue:
        try:
            name = str(paths.in_checkout(p.catalogue).resolve().relative_to(paths.REPO))
        except ValueError:
            raise InputError(f"--catalogue {p.catalogue}: a sweep campaign's catalogue must "
                             f"be in this checkout ({paths.REPO}), which every worker gets",
                             path=str(p.catalogue)) from None
        extra = ["--catalogue", name] + extra
    jobs = [sweep_job(dev, extra) for dev in [sweep.BOOT_DEVICE] + [d.name for d in chosen]]
    return _publish(Campaign(p.folder, "sweep", tuple(jobs),
                             {"catalogue": str(cat.path), "devices": [d.name for d in chosen],
                              "extra": extra, "created": time.strftime("%Y-%m-%dT%H:%M:%S%z")}))


def plan_usb_sweep(folder: Path, shares: int, extra: tuple[str, ...]) -> Campaign:
    """`plan sweep --usb-drivers`: the drivers in `shares` jobs (each the
    USB sweep of every shares-th driver, its boots one at a time); collect
    puts their drivers together and folds their boots' consoles."""
    if not 1 <= shares <= 1000:
        raise InputError(f"--shares {shares}: 1 to 1000 jobs")
    jobs = [usb_job(k, shares, extra) for k in range(1, shares + 1)]
    return _publish(Campaign(folder, "sweep", tuple(jobs),
                             {"usb_drivers": True, "shares": shares, "devices": [],
                              "extra": list(extra),
                              "created": time.strftime("%Y-%m-%dT%H:%M:%S%z")}))


@dataclass
class SweepCollected:
    runs: list                        # sweep.DeviceRun, consoles under DIR/consoles
    table: sweeptable.Table
    key: str                          # the sweep kernel's build key
    layout: bool                      # its artifacts were here: layouts and file:line
    drivers: list | None = None       # a USB sweep's: every job's drivers (their JSON)
    boot_drivers: dict = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not [r for r in self.runs if r.state == "failed"]

    def to_json(self) -> dict:
        table = self.table.to_json()
        if self.drivers is None:
            return {"key": self.key, "layout": self.layout,
                    "devices": [r.to_json() for r in self.runs], **table}
        return {"key": self.key, "layout": self.layout, "usb_drivers": True,
                "figures": usbsweep.figures([d["state"] for d in self.drivers], len(self.runs),
                                            len(self.table.sites), 0.0, self.drivers,
                                            table.get("sites")),
                "drivers": self.drivers, "devices": [r.to_json() for r in self.runs],
                **usbsweep.attribute(table, self.boot_drivers)}


def fold_sweep(c: Campaign, st: list["JobState"]) -> SweepCollected:
    """The jobs' consoles written under DIR/consoles, folded into sites; the
    layouts when this machine has the sweep kernel's artifacts."""
    cons = c.folder / "consoles"
    cfolder.mkdir(c.folder, "consoles")
    runs, keys = [], set()
    usb = bool(c.about.get("usb_drivers"))
    drivers: list = []
    boot_drivers: dict = {}
    for s in st:
        if usb:          # a USB sweep's job: its drivers, and a run for each of its boots
            keys.add(s.result["build"]["key"])
            drivers += s.result["drivers"]
            for b in s.result["boots"]:
                console = cons / f"{b['device']}.log"
                cfolder.write_text(c.folder, f"consoles/{b['device']}.log", b["console_text"])
                boot_drivers[b["device"]] = b["drivers"]
                runs.append(sweep.DeviceRun(b["device"], "usb", b["state"], b.get("reason") or "",
                                            None, console, b.get("outcome") or ""))
            continue
        d = s.result["device"]
        keys.add(s.result["build"]["key"])
        console = None
        if s.result.get("console_text"):
            console = cons / f"{s.job.id}.log"
            cfolder.write_text(c.folder, f"consoles/{s.job.id}.log", s.result["console_text"])
        runs.append(sweep.DeviceRun(d["device"], d["class"], d["state"], d.get("reason") or "",
                                    None, console, d.get("outcome") or "",
                                    d.get("workload_status"), d.get("wall_seconds") or 0.0,
                                    tuple(d.get("reports") or ())))
    if len(keys) > 1:
        raise InputError(f"{c.folder}: the jobs booted different kernels ({', '.join(sorted(keys))}"
                         "): workers with different sources or compilers; sweep them apart")
    key = keys.pop() if keys else ""
    art = paths.sub("artifacts") / key if key else None
    here = bool(art and (art / "vmlinux").is_file())
    version = key.split("-")[0] if re.fullmatch(r"\d+\.\d+-.*", key) else None
    return SweepCollected(runs, sweeptable.fold(runs, art if here else None, version=version),
                          key, here, sorted(drivers, key=lambda d: d["module"]) if usb else None,
                          boot_drivers)


def _save(c: Campaign) -> None:
    _write_json(c.folder, CAMPAIGN_FILE, c.to_json())
    cfolder.write_text(c.folder, JOBS_FILE, "".join(j.line() + "\n" for j in c.jobs))


# each kind's job as its planner writes it: its fixed arguments, then the
# plan's RUN-ARGS (``extra``); `dmaharness job` and `campaign` check a job
# of campaign.json against these (harness/cli/jobcheck.py)

def case_job(where: str, variant: str, run: int, extra=()) -> Job:
    jid = f"{variant}-{run}"
    res = f"results/{jid}.json"
    return Job(jid, ("run", "--case", where, "--case-variant", variant, "--case-run", str(run),
                     "--json-out", res, "-q", *extra), res)


def sweep_job(device: str, extra=()) -> Job:
    jid = _job_name(device)
    res = f"results/{jid}.json"
    return Job(jid, ("sweep", "--job", device, "--json-out", res, "-q", *extra), res)


def usb_job(k: int, shares: int, extra=()) -> Job:
    res = f"results/usb{k}.json"
    return Job(f"usb{k}", ("sweep", "--usb-drivers", "--batch", f"{k}/{shares}", "--parallel",
                           "1", "--json-out", res, "-q", *extra), res)


def bisect_job(c: Campaign, prefix: int, run: int, extra=None) -> Job:
    jid = f"p{prefix}-{run}"
    res = f"results/{jid}.json"
    return Job(jid, ("run", "--series", c.about["series"], "--prefix", str(prefix),
                     "--signature", c.about["signature"], "--json-out", res, "-q",
                     *(c.about["extra"] if extra is None else extra)), res)


def planned_job(c: Campaign, jid: str) -> Job | None:
    """Job ``jid`` as the planner of ``c`` writes it, without RUN-ARGS; None
    when no plan of this campaign has such a job."""
    a = c.about
    num = r"([1-9][0-9]{0,8})"
    if c.kind == "case":
        m = re.fullmatch(r"(.+)-" + num, jid)
        if m and m.group(1) in a["variants"] and int(m.group(2)) <= a["runs"] \
                and isinstance(a.get("job_case"), str):
            return case_job(a["job_case"], m.group(1), int(m.group(2)))
    elif c.kind == "bisect":
        m = re.fullmatch(r"p(0|[1-9][0-9]{0,8})-" + num, jid)
        if m and int(m.group(1)) <= len(a["patches"]):
            return bisect_job(c, int(m.group(1)), int(m.group(2)), ())
    elif a.get("usb_drivers"):
        m = re.fullmatch(r"usb" + num, jid)
        if m and type(a.get("shares")) is int and int(m.group(1)) <= a["shares"]:
            return usb_job(int(m.group(1)), a["shares"])
    elif jid == _job_name(sweep.BOOT_DEVICE) or jid in a["devices"]:
        return sweep_job(sweep.BOOT_DEVICE if jid == _job_name(sweep.BOOT_DEVICE) else jid)
    return None


class NeedRuns(Exception):
    """The bisection's next step needs runs that have no result yet."""

    def __init__(self, jobs: list[Job]):
        super().__init__(", ".join(j.id for j in jobs))
        self.jobs = jobs


class _Replay:
    """bisect.Runner over a campaign's results: a run is its job's result;
    a run without one stops the search (NeedRuns)."""

    def __init__(self, c: Campaign, st: dict[str, "JobState"]):
        self.c, self.st = c, st

    def key(self, prefix: int) -> str:
        return ""

    def build(self, prefix: int):
        return None                              # each job builds its prefix

    def run(self, prefix: int, first: int, count: int) -> list[bisect.RunOutcome]:
        jobs = [bisect_job(self.c, prefix, r) for r in range(first + 1, first + count + 1)]
        missing = [j for j in jobs if j.id not in self.st or self.st[j.id].status != "done"]
        if missing:
            raise NeedRuns(missing)
        return [bisect.RunOutcome.from_json(self.st[j.id].result["bisect_run"]) for j in jobs]


def replay_bisect(c: Campaign, st: list["JobState"]) -> tuple[bisect.Result | None, list[Job]]:
    """The bisection as far as the results take it: (the result, []) when it
    is over, else (None, the jobs its next step needs)."""
    a = c.about
    try:
        res = bisect.bisect(_Replay(c, {s.job.id: s for s in st}), len(a["patches"]),
                            a["good"], a["bad"], bisect.Policy(**a["policy"]))
    except NeedRuns as e:
        return None, e.jobs
    return res, []


def add_jobs(c: Campaign, jobs: list[Job]) -> Campaign:
    """The campaign with these jobs appended (kept: Seq is the line number)."""
    have = {j.id for j in c.jobs}
    new = [j for j in jobs if j.id not in have]
    if not new:
        return c
    c = Campaign(c.folder, c.kind, c.jobs + tuple(new), c.about)
    _save(c)
    return c


JOB_COMMANDS = ("run", "sweep")      # what a job may run: `dmaharness job` refuses the rest
# what collect reads of each kind's campaign.json, and its type
_ABOUT = {"case": {"case": str, "case_folder": str, "variants": list, "runs": int},
          "bisect": {"series": str, "patches": list, "signature": str, "good": int, "bad": int,
                     "policy": dict, "extra": list},
          "sweep": {"devices": list, "extra": list}}


def load(folder: Path) -> Campaign:
    """A campaign folder's campaign.json, checked whole before anything uses it:
    a campaign travels (a mail, a shared folder), so every name that becomes
    a path is a safe name, every job's result is results/<its id>.json, and
    every job runs `run` or `sweep` with arguments that are strings (which
    options: harness/cli/jobcheck.py, before anything runs)."""
    f = folder / CAMPAIGN_FILE
    if not folder.is_dir():
        raise InputError(f"{folder} is not a campaign folder (not a folder)", path=str(folder))
    try:
        data = files.parse_json(cfolder.read_bytes(folder, CAMPAIGN_FILE, "campaign file",
                                                   CAMPAIGN_MAX), str(f), f)
    except InputError as e:
        if cfolder.kind(folder, CAMPAIGN_FILE) != cfolder.MISSING:
            raise
        raise InputError(f"{folder} is not a campaign: it has no {CAMPAIGN_FILE} "
                         "(`dmaharness plan` writes one)", path=str(f)) from e
    return _campaign(folder, data, f)


def _campaign(folder: Path, data: Any, f: Path) -> Campaign:
    def bad(where: str, why: str):
        return InputError(f"{f}: {where}: {why}", path=str(f))

    if not isinstance(data, dict):
        raise bad("(top level)", f"an object is expected, not {type(data).__name__}")
    if data.get("version") != CAMPAIGN_VERSION or data.get("kind") not in KINDS:
        raise InputError(f"{f}: version {data.get('version')!r} kind {data.get('kind')!r}; "
                         f"this dmaharness reads version {CAMPAIGN_VERSION}, kinds "
                         f"{', '.join(KINDS)}", path=str(f))
    kind = data["kind"]
    for key, typ in _ABOUT[kind].items():
        if type(data.get(key)) is not typ:
            raise bad(key, f"a {typ.__name__} is expected, not {type(data.get(key)).__name__}")
    for key in ("variants", "patches", "devices", "extra"):
        if key in _ABOUT[kind] and not all(isinstance(x, str) for x in data[key]):
            raise bad(key, "a list of strings is expected")
    if not isinstance(data.get("usb_drivers", False), bool):
        raise bad("usb_drivers", "true or false is expected")
    if kind == "case":
        for name in [data["case_folder"], *data["variants"]]:
            if not paths.is_safe_name(name):
                raise bad("case_folder/variants", f"{name!r} is not a safe name")
        checked = data.get("check_patches", [])
        if not isinstance(checked, list) or not all(
                isinstance(x, str) and paths.is_safe_name(x) for x in checked) \
                or len(checked) >= len(data["variants"]):
            raise bad("check_patches", "a list of safe patch names, fewer than the "
                      "variants (one for each after variant), is expected")
    jobs_data = data.get("jobs")
    if not isinstance(jobs_data, list) or len(jobs_data) > MAX_JOBS:
        raise bad("jobs", f"a list of at most {MAX_JOBS} jobs is expected")
    jobs, seen = [], set()
    for i, j in enumerate(jobs_data):
        where = f"jobs[{i}]"
        if not isinstance(j, dict):
            raise bad(where, "an object is expected")
        jid, argv, result = j.get("id"), j.get("argv"), j.get("result")
        if not paths.is_safe_name(jid):
            raise bad(f"{where}.id", f"{jid!r} is not a safe name (letters, digits, '.', '_', '-')")
        if jid in seen:
            raise bad(f"{where}.id", f"{jid!r} twice")
        seen.add(jid)
        if (not isinstance(argv, list) or not argv or argv[0] not in JOB_COMMANDS
                or not all(isinstance(a, str) and "\0" not in a for a in argv)):
            raise bad(f"{where}.argv", f"a list of strings starting with {' or '.join(JOB_COMMANDS)}"
                      " (no NUL) is expected")
        if result != f"results/{jid}.json":
            raise bad(f"{where}.result", f"{result!r}: a job's result is results/{jid}.json")
        jobs.append(Job(jid, tuple(argv), result))
    about = {k: v for k, v in data.items() if k not in ("version", "kind", "jobs")}
    return Campaign(folder, kind, tuple(jobs), about)


def job(c: Campaign, jid: str) -> Job:
    """The job ``jid`` of a loaded campaign; InputError when it has none."""
    for j in c.jobs:
        if j.id == jid:
            return j
    f = c.folder / CAMPAIGN_FILE
    raise InputError(f"{f} has no job {jid!r}", path=str(f))


def job_argv(folder: Path, jid: str) -> tuple[str, ...]:
    """`dmaharness job ID`: the arguments of that job of the campaign in ``folder``."""
    return job(load(folder), jid).argv


# --- collect --------------------------------------------------------------------

@dataclass
class JobState:
    job: Job
    status: str                     # "done", "failed", "missing"
    why: str = ""
    result: dict | None = None
    attempt: dict | None = None     # the joblog's last line for it: host, runtime, exit

    @property
    def seconds(self) -> float:
        try:
            x = float((self.attempt or {}).get("runtime") or 0)
        except ValueError:
            return 0.0
        return x if math.isfinite(x) else 0.0

    def to_json(self) -> dict:
        return {"id": self.job.id, "status": self.status, "why": self.why or None,
                "command": self.job.command(), "result": self.job.result,
                "host": (self.attempt or {}).get("host") or None, "seconds": self.seconds}


def _host(login: str) -> str:
    """The joblog's Host column is the sshlogin: its host part ("" here, ":")."""
    login = login.strip()
    return "" if login == ":" else (login.split() or [""])[-1]


def joblog(folder: Path) -> dict[int, dict]:
    """GNU parallel's --joblog, by Seq (the job's line in jobs.txt, from 1,
    which is always parallel's whole input): the last attempt's host,
    runtime, exit and signal."""
    out: dict[int, dict] = {}
    if cfolder.kind(folder, JOBLOG) == cfolder.MISSING:
        return out
    lines = cfolder.read_text(folder, JOBLOG, "joblog", CAMPAIGN_MAX).splitlines()
    for ln in lines[1:]:
        a = slurm.attempt_line(ln)
        if a is not None:
            seq = a.pop("seq")
            out[seq] = {**a, "host": _host(a["host"])}
    return out


def attempts(folder: Path) -> dict[int, dict]:
    """Each job's last attempt, wherever it ran: GNU parallel's joblog (here,
    over ssh) or the Slurm tasks' attempt files, the later start winning."""
    out = joblog(folder)
    for seq, a in slurm.attempts(folder).items():
        def start(x):
            try:
                return float(x.get("start") or 0)
            except ValueError:
                return 0.0
        if seq not in out or start(a) >= start(out[seq]):
            out[seq] = a
    return out


def tidy_joblog(folder: Path) -> None:
    """Host columns that hold an ssh command ('ssh -p 2222 me@box') become
    the host ('me@box'): GNU parallel (20221122) writes them so but cannot
    read them back for --resume-failed ("Format of 'joblog' is wrong")."""
    if cfolder.kind(folder, JOBLOG) == cfolder.MISSING:
        return
    lines = cfolder.read_text(folder, JOBLOG, "joblog", CAMPAIGN_MAX).splitlines(keepends=True)
    out, changed = lines[:1], False
    for ln in lines[1:]:
        w = ln.split("\t")
        if len(w) >= 9 and len(w[1].split()) > 1:
            w[1] = w[1].split()[-1]
            ln, changed = "\t".join(w), True
        out.append(ln)
    if changed:
        cfolder.write_text(folder, JOBLOG, "".join(out))


def _why_missing(a: dict | None) -> str:
    if a is None:
        return "never run"
    on = f" on {a['host']}" if a["host"] else ""
    if a["exit"] == "-1" and a["signal"] in ("0", ""):
        # a Slurm task records its start first: no end means it still runs,
        # or was killed (SIGKILL) or lost with its node
        return f"started{on}, no end recorded (running, killed, or its node was lost)"
    sig = f", signal {a['signal']}" if a["signal"] not in ("0", "") else ""
    return f"exit {a['exit']}{sig}{on}, no result came back"


_JOB_LINE = re.compile(r"dmaharness job ([A-Za-z0-9][A-Za-z0-9._-]*)\W*$")


def _job_of(command: str) -> str | None:
    """The job id a joblog's Command names: the line itself here and under
    Slurm, inside `PATH=... sh -c 'dmaharness job ID'` over ssh."""
    m = _JOB_LINE.search(command.strip())
    return m.group(1) if m else None


def states(c: Campaign) -> list[JobState]:
    log = attempts(c.folder)
    cfolder.require(c.folder, "results", cfolder.DIR, "the results folder")
    out = []
    for seq, j in enumerate(c.jobs, 1):
        f = c.folder / j.result
        attempt = log.get(seq)
        if attempt is not None and _job_of(attempt.get("command", "")) != j.id:
            attempt = None      # another job list's line (an older jobs.txt): not this job's
        if cfolder.kind(c.folder, j.result) == cfolder.MISSING:
            out.append(JobState(j, "missing", _why_missing(attempt), None, attempt))
            continue
        try:
            data = cfolder.read_json(c.folder, j.result, "result", RESULT_MAX)
        except InputError as e:
            out.append(JobState(j, "failed", e.message, None, attempt))
            continue
        if not isinstance(data, dict):
            out.append(JobState(j, "failed", f"{f} is not a JSON object", None, attempt))
            continue
        if not data.get("ok"):
            why = data.get("failure")
            out.append(JobState(j, "failed", results.printable(why)[:2000]
                                if isinstance(why, str) and why else
                                "the job says it failed", data, attempt))
            continue
        problem = results.problem(c.kind, c.about, j.id, data)
        if problem:
            out.append(JobState(j, "failed", f"{f}: {problem}", None, attempt))
            continue
        out.append(JobState(j, "done", "", data, attempt))
    return out


@dataclass
class Collected:
    campaign: Campaign
    jobs: list[JobState]
    outcome: diff.Outcome | None    # None until every job is done
    sweep: "SweepCollected | None" = None     # kind sweep: when every job is done
    bisection: bisect.Result | None = None    # kind bisect: when the search is over
    next_jobs: list[Job] = field(default_factory=list)   # kind bisect: what it needs next

    @property
    def incomplete(self) -> list[JobState]:
        if self.campaign.kind == "bisect":
            need = {j.id for j in self.next_jobs}
            return [s for s in self.jobs if s.status != "done" or s.job.id in need] + \
                [JobState(j, "missing", "never run (the search needs it next)")
                 for j in self.next_jobs if j.id not in {s.job.id for s in self.jobs}]
        return [s for s in self.jobs if s.status != "done"]

    @property
    def verdict(self) -> bool:
        if self.campaign.kind == "bisect":
            return bool(self.bisection and self.bisection.found)
        if self.campaign.kind == "sweep":
            return bool(self.sweep and self.sweep.ok)
        return bool(self.outcome and self.outcome.matches)

    def culprit(self) -> dict | None:
        r = self.bisection
        if not r or r.culprit is None:
            return None
        names = self.campaign.about["patches"]
        return {"number": r.culprit, "patch": names[r.culprit - 1]}

    def to_json(self) -> dict:
        out = {"command": "collect", "campaign": str(self.campaign.folder),
               "kind": self.campaign.kind, **self.campaign.about,
               "ok": not self.incomplete and self.verdict,
               "complete": not self.incomplete,
               "jobs": [s.to_json() for s in self.jobs],
               "outcome": self.outcome.to_json() if self.outcome else None}
        if self.campaign.kind == "sweep":
            out["sweep"] = self.sweep.to_json() if self.sweep else None
        if self.campaign.kind == "bisect":
            out["bisection"] = self.bisection.to_json() if self.bisection else None
            out["culprit"] = self.culprit()
            out["next_jobs"] = [j.id for j in self.next_jobs]
        return out


def collect(folder: Path) -> Collected:
    c = load(folder)
    st = states(c)
    if c.kind == "bisect":
        res, need = replay_bisect(c, st)
        return Collected(c, st, None, None, res, need)
    if c.kind == "sweep":
        done = not any(s.status != "done" for s in st)
        return Collected(c, st, None, fold_sweep(c, st) if done else None)
    outcome = None
    if not any(s.status != "done" for s in st):
        cfolder.require(folder, c.about["case_folder"], cfolder.DIR, "the case", False)
        cfolder.require(folder, f"{c.about['case_folder']}/case.toml", cfolder.FILE, "the case",
                        False)
        case = load_case(folder / c.about["case_folder"])
        runs: dict[str, list] = {name: [] for name in c.about["variants"]}
        for s in sorted(st, key=lambda s: (s.result["job"]["variant"], s.result["job"]["run"])):
            runs[s.result["job"]["variant"]].append(
                [engine.Signature.from_json(x) for x in s.result["signatures"]])
        outcome = diff.compare_case(case, runs[case.before.name],
                                    {v.name: runs[v.name] for v in case.afters})
    return Collected(c, st, outcome)


def format_incomplete(col: Collected) -> str:
    bad = col.incomplete
    done = sum(1 for s in col.jobs if s.status == "done")
    out = [f"campaign {col.campaign.folder}: {done} of {len(col.jobs)} jobs came back; "
           f"{len(bad)} missing or failed" + (" (the bisection's next runs)"
                                              if col.campaign.kind == "bisect" else "") + ":"]
    for s in bad:
        out.append(f"  {s.job.id:<16} {s.status:<8} {s.why}")
        out.append(f"  {'':<16} {'':<8} {results.printable(s.job.command())}")
    out.append(f"  (rerun them: dmaharness campaign {col.campaign.folder} --parallel N; "
               "done jobs are skipped)")
    return "\n".join(out)


# --- run: GNU parallel ---------------------------------------------------------

def parallel_command(jobs: int, pin: bool = False) -> list[str]:
    """GNU parallel over the whole jobs.txt, N at a time.  --resume-failed
    reads the joblog: jobs that exited 0 before are not run again, failed
    and unrun ones are (a job exits 0 only when it wrote a good result).
    With pin, job slot k runs on core k-1 (taskset): one guest per core."""
    if not shutil.which("parallel"):
        raise errors.EnvError("GNU parallel is not installed (Debian's parallel package; "
                              "`make deps` installs it)")
    cmd = ["parallel", "--will-cite", "--jobs", str(jobs), "--joblog", JOBLOG,
           "--resume-failed", "--halt", "never", "--termseq", TERMSEQ, "--line-buffer",
           "-a", JOBS_FILE]
    if pin:
        cores = os.cpu_count() or 1
        cmd += [f"taskset -c $(( ({{%}} - 1) % {cores} )) sh -c {{}}"]
    return cmd


def pending(c: Campaign) -> list[Job]:
    """The jobs without a good result; jobs.txt is written anew from
    campaign.json first, so that a job's line number (GNU parallel's Seq,
    Slurm's task id) is its place in campaign.json, whatever jobs.txt held."""
    check_folder(c)
    _save(c)
    return [s.job for s in states(c) if s.status != "done"]


def check_folder(c: Campaign) -> None:
    """Before an engine runs jobs that write into the folder (results, GNU
    parallel's joblog, Slurm's and ssh's files): each a real folder or a
    regular file of the folder, or none yet; never a link, whose target
    they would write."""
    cfolder.mkdir(c.folder, "results", "the results folder")
    cfolder.require(c.folder, JOBLOG, cfolder.FILE, "joblog")
    for d in (slurm.SLURM_DIR, remote.SSH_DIR, "consoles"):
        cfolder.require(c.folder, d, cfolder.DIR, "folder")


def run_local(c: Campaign, jobs: int, progress, pin: bool = False) -> int:
    """Run the campaign's pending jobs here through GNU parallel; its exit
    (the number of jobs that failed, as parallel counts them)."""
    todo = pending(c)
    if not todo:
        progress.note(f"[campaign] every job of {c.folder} has its result")
        return 0
    cmd = parallel_command(jobs, pin)
    env = dict(os.environ, PATH=f"{paths.REPO}{os.pathsep}{os.environ.get('PATH', '')}")
    progress.note(f"[campaign] {len(todo)} of {len(c.jobs)} jobs to run, {jobs} at a time "
                  f"(GNU parallel, joblog {c.folder / JOBLOG})")
    return _parallel(cmd, c, progress, env)


def _parallel(cmd: list[str], c: Campaign, progress, env: dict | None = None) -> int:
    """Run GNU parallel in the campaign folder; its exit.  The jobs' own
    output is progress: stderr (stdout stays the campaign's).  GNU parallel
    runs in a session of its own, dying with us; on Ctrl-C or an error it
    and every process of its session are stopped (each job stops its QEMU;
    a job's ssh that goes takes the remote job with it)."""
    tidy_joblog(c.folder)
    p = proc.spawn(cmd, cwd=c.folder, env=env, stdin=subprocess.DEVNULL,
                   stdout=subprocess.DEVNULL if progress.quiet else sys.stderr.fileno())
    try:
        return p.wait()
    except BaseException:
        proc.stop_session(p, grace=30)
        raise
    finally:
        tidy_joblog(c.folder)


def run_ssh(c: Campaign, hosts, per_host: int | None, progress, remote_dir: str,
            prepare: bool = True) -> int:
    """Prepare the hosts (checkout, make deps, the campaign's files), then run
    the pending jobs on them through GNU parallel --sshlogin, results coming
    back with --return; GNU parallel's exit, as run_local."""
    todo = pending(c)
    if not todo:
        progress.note(f"[campaign] every job of {c.folder} has its result")
        return 0
    lay = remote.Layout.of(remote_dir, c.folder, str(c.about.get("created", "")))
    if prepare:
        kernels = [j.argv[i + 1] for j in c.jobs for i, x in enumerate(j.argv[:-1])
                   if x == "--kernel"]
        remote.prepare(hosts, lay, c.folder, progress, kernels)
    else:       # a bisection's next step: its jobs are new in campaign.json
        remote.send_campaign(hosts, lay, c.folder)
    cmd = remote.parallel_command(c.folder, hosts, lay, c.jobs, per_host)
    progress.note(f"[campaign] {len(todo)} of {len(c.jobs)} jobs to run on "
                  f"{', '.join(h.name for h in hosts)}"
                  + (f", {per_host} at a time each" if per_host else ", one per core each")
                  + f" (GNU parallel --sshlogin, joblog {c.folder / JOBLOG})")
    return _parallel(cmd, c, progress)


SLURM_JOB = "slurm/job"        # the array job last submitted, its id


def run_slurm(c: Campaign, partition: str | None, sbatch_args: list[str], progress,
              wait: bool = True) -> dict:
    """Submit the pending jobs as one Slurm array (the campaign folder and
    this checkout must be at the same path on every node), then follow it
    until no task is left unless not `wait`; the array's id and size."""
    check_folder(c)
    _save(c)
    todo = [seq for seq, s in enumerate(states(c), 1) if s.status != "done"]
    if not todo:
        progress.note(f"[campaign] every job of {c.folder} has its result")
        return {"slurm_job": None, "submitted": 0}
    last = c.folder / SLURM_JOB
    if cfolder.kind(c.folder, SLURM_JOB) != cfolder.MISSING:
        prev = cfolder.read_text(c.folder, SLURM_JOB, "Slurm job file", 4096).strip()
        if prev and re.fullmatch(r"[0-9A-Za-z_.;-]{1,80}", prev) and slurm.queue(prev):
            raise InputError(f"Slurm job {prev} of this campaign still has tasks queued or "
                             f"running: wait for it (`dmaharness collect {c.folder}` shows what "
                             f"is back) or cancel it (scancel {prev})", path=str(last))
    job = slurm.submit(c.folder, todo, partition or None, paths.REPO, sbatch_args)
    cfolder.write_text(c.folder, SLURM_JOB, job + "\n")
    progress.note(f"[campaign] {len(todo)} of {len(c.jobs)} jobs submitted to Slurm as array "
                  f"job {job}" + (f" (partition {partition})" if partition else "")
                  + f"; task output in {c.folder / 'slurm'}")
    if wait:
        slurm.wait(job, progress, total=len(todo))
    return {"slurm_job": job, "submitted": len(todo)}


def drive_bisect(c: Campaign, engine, progress) -> Collected:
    """A bisection campaign: replay the search over the results; while it
    needs runs, append them as jobs and have `engine(campaign, first)` run
    what is pending; stop when it is over or when a round brought nothing
    new (jobs lost: collect lists them)."""
    first = True
    while True:
        col = collect(c.folder)
        if col.bisection is not None or not col.next_jobs:
            return col
        need = col.next_jobs
        c = add_jobs(load(c.folder), need)
        prefixes = sorted({int(j.id[1:].split("-")[0]) for j in need})
        progress.note(f"[bisect] prefix {', '.join(map(str, prefixes))}: "
                      f"{len(need)} run(s) as jobs {', '.join(j.id for j in need)}")
        engine(c, first)
        first = False
        after = collect(c.folder)
        if after.bisection is None and {j.id for j in after.next_jobs} == {j.id for j in need}:
            return after                     # the engine could not bring them: stop here
