"""`plan`, `campaign` and `collect`: a check's runs as a job list, run and merged."""

from __future__ import annotations

import os
import shlex
import time
from pathlib import Path

from .. import errors, jsonout
from ..progress import Progress, fmt_duration
from ..checks import bisect, diff, sweeptable, usbsweep
from ..campaign import campaign, folder as cfolder, junit, kcidb, remote
from ..output import sweephtml
from . import check, helptext, jobcheck
from .common import (add_command, emit, folder, kcidb_args, output_group, whole_number,
                     write_json_out)


def _runs(a, default: int) -> int:
    runs = default if a.runs is None else a.runs
    if not 1 <= runs <= campaign.MAX_RUNS:
        raise errors.HarnessError(f"--runs {runs}: 1 to {campaign.MAX_RUNS}")
    return runs


def cmd_plan(a) -> int:
    extra = list(a.run_args)
    jobcheck.check_plan_args(a.what, "sweep" if a.what == "sweep" else "run", extra)
    if a.what == "check":
        return check.plan_check(a, extra)
    if len(a.case) > 1:
        raise errors.HarnessError(f"plan {a.what} takes one CASE at most; several PATCHes go "
                                  "with plan check")
    a.case = a.case[0] if a.case else None
    if a.what == "bisect":
        if a.case is not None:
            raise errors.HarnessError("plan bisect takes --series and --signature, not a CASE")
        if not a.series or not a.signature:
            raise errors.HarnessError("plan bisect needs --series FILE and --signature TITLE|REGEX")
        for name in ("parallel", "endpoint_runs", "min_hits"):
            if not 0 <= getattr(a, name) <= campaign.MAX_RUNS:
                raise errors.HarnessError(f"--{name.replace('_', '-')} {getattr(a, name)}: "
                                          f"0 to {campaign.MAX_RUNS}")
        policy = bisect.Policy(max_runs=_runs(a, 6), batch=a.parallel,
                               endpoint_runs=a.endpoint_runs, min_hits=a.min_hits,
                               max_miss=a.max_miss)
        c = campaign.plan_bisect(campaign.BisectPlan(a.series, a.signature, a.output, a.good,
                                                     a.bad, policy, tuple(extra)))
        ab = c.about
        emit(a, {"command": "plan", "ok": True, **c.to_json(), "folder": str(c.folder)},
              f"campaign {c.folder}: bisection of {ab['series']} ({len(ab['patches'])} patches, "
              f"good {ab['good']}, bad {ab['bad']}) for {ab['signature']!r}\n"
              "  jobs     none yet: each step's runs are added as the search needs them\n"
              f"  run      dmaharness campaign {c.folder} --parallel N | --ssh HOSTS | --slurm\n"
              f"  merge    dmaharness collect {c.folder}")
        return errors.EXIT_OK
    if a.what == "sweep" and a.usb_drivers:
        if a.case is not None or a.series or a.signature or a.devices or a.catalogue:
            raise errors.HarnessError("plan sweep --usb-drivers takes --shares, not a CASE, "
                                      "--series, --signature, --qemu-devices or --catalogue")
        c = campaign.plan_usb_sweep(a.output, a.shares, tuple(extra))
        emit(a, {"command": "plan", "ok": True, **c.to_json(), "folder": str(c.folder)},
              f"campaign {c.folder}: {len(c.jobs)} jobs (the USB drivers in {a.shares} shares, "
              "each job's boots one at a time)\n"
              f"  jobs     {c.folder / campaign.JOBS_FILE}\n"
              f"  run      dmaharness campaign {c.folder} --parallel N | --ssh HOSTS | --slurm\n"
              f"  merge    dmaharness collect {c.folder}")
        return errors.EXIT_OK
    if a.usb_drivers:
        raise errors.HarnessError("--usb-drivers goes with plan sweep")
    if a.what == "sweep":
        if a.case is not None or a.series or a.signature:
            raise errors.HarnessError("plan sweep takes --qemu-devices and --catalogue, not a "
                                      "CASE or --series/--signature")
        devices = tuple(d for part in a.devices for d in part.split(",") if d)
        c = campaign.plan_sweep(campaign.SweepPlan(a.output, devices, a.catalogue,
                                                   tuple(extra)))
        emit(a, {"command": "plan", "ok": True, **c.to_json(), "folder": str(c.folder)},
              f"campaign {c.folder}: {len(c.jobs)} jobs (the boot without a device, then "
              f"{', '.join(c.about['devices'])})\n"
              f"  jobs     {c.folder / campaign.JOBS_FILE}\n"
              f"  run      dmaharness campaign {c.folder} --parallel N | --ssh HOSTS | --slurm\n"
              f"  merge    dmaharness collect {c.folder}")
        return errors.EXIT_OK
    if a.case is None or a.series or a.signature or a.devices or a.catalogue:
        raise errors.HarnessError("plan case takes a CASE folder (and no --series, "
                                  "--signature, --qemu-devices, --catalogue)")
    c = campaign.plan_case(campaign.CasePlan(a.case, _runs(a, 2), a.output, tuple(extra)))
    emit(a, {"command": "plan", "ok": True, **c.to_json(), "folder": str(c.folder)},
          f"campaign {c.folder}: {len(c.jobs)} jobs (case {c.about['case']}: "
          f"{', '.join(c.about['variants'])} x {c.about['runs']} runs)\n"
          f"  jobs     {c.folder / campaign.JOBS_FILE}\n"
          f"  run      dmaharness campaign {c.folder} --parallel N   (or the lines of jobs.txt, "
          "anywhere, from the campaign folder)\n"
          f"  merge    dmaharness collect {c.folder}")
    return errors.EXIT_OK

def _collected(a, col: campaign.Collected, extra: dict | None = None) -> int:
    if a.junit:
        jsonout.write_text(a.junit, junit.junit(col))
    if a.kcidb and col.campaign.kind != "case":
        raise errors.InputError("--kcidb exports a case campaign's runs; a bisection's "
                                "result is its culprit (--json)")
    if a.kcidb:
        kcidb.check_origin(a.kcidb_origin)
        try:
            doc = kcidb.export(col, a.kcidb_origin)
        except (KeyError, TypeError, ValueError, AttributeError, IndexError,
                OverflowError) as e:   # a failed job's result, read as it came back
            raise errors.InputError(f"--kcidb: a result of {col.campaign.folder} is not one "
                                    f"the export reads ({type(e).__name__}: "
                                    f"{str(e)[:200]})") from None
        bad = kcidb.validate(doc)
        if bad:                                 # a dmaharness bug: say so, write nothing
            raise errors.HarnessError("the KCIDB export breaks the schema: " + "; ".join(bad[:5]))
        write_json_out(a.kcidb, doc)
    payload = {**col.to_json(), **(extra or {})}
    if col.incomplete:
        emit(a, payload, campaign.format_incomplete(col))
        return errors.EXIT_INCOMPLETE
    if col.campaign.kind == "sweep":
        sw = col.sweep
        html = col.campaign.folder / "sweep.html"
        payload["html"] = str(html)
        swj = sw.to_json()
        cfolder.write_text(col.campaign.folder, "sweep.html",
                           sweephtml.render({**payload, **swj}))
        emit(a, payload, (usbsweep.summary(sw.key, swj["figures"]) + "\n"
                          if sw.drivers is not None else "")
              + sweeptable.format_text(sw.table, sw.runs)
              + (f"  (no layouts: the sweep kernel {sw.key} was built on the workers, not here)\n"
                 if not sw.layout else "")
              + f"  html     {html}\n  logs     {col.campaign.folder}/consoles/<device>.log"
              + (f"\n  junit    {a.junit}" if a.junit else ""))
        return errors.EXIT_OK if sw.ok else errors.EXIT_VERDICT
    if col.campaign.kind == "bisect":
        ab = col.campaign.about
        emit(a, payload, bisect.format_result(col.bisection, ab["patches"], ab["signature"])
              + f"\n  jobs     {len(col.jobs)}, all back ({col.campaign.folder}/results)"
              + (f"\n  junit    {a.junit}" if a.junit else ""))
        return errors.EXIT_OK if col.bisection.found else errors.EXIT_VERDICT
    verdict = check.collected_verdict(col, payload)
    emit(a, payload, diff.format_outcome(col.outcome) + verdict
          + f"\n  jobs     {len(col.jobs)}, all back ({col.campaign.folder}/results)"
          + (f"\n  junit    {a.junit}" if a.junit else ""))
    return diff.exit_code(col.outcome.matches)

def cmd_collect(a) -> int:
    return _collected(a, campaign.collect(a.folder))

def cmd_campaign(a) -> int:
    prog = Progress(quiet=a.quiet)
    c = campaign.load(a.folder)
    jobcheck.check_campaign(c)          # before anything runs: only what a plan writes
    t0 = time.monotonic()
    where: dict = {"engine": "local"}
    last: dict = {}
    if a.slurm is not None:
        if a.ssh or a.pin or a.parallel or a.remote_dir or a.no_prepare:
            raise errors.HarnessError("--slurm takes none of --ssh, --pin, --parallel, "
                                      "--remote-dir, --no-prepare (Slurm places the jobs)")
        try:
            extra = shlex.split(a.sbatch or "")
        except ValueError as e:
            raise errors.HarnessError(f"--sbatch {a.sbatch!r}: {e}") from None
        where = {"engine": "slurm", "partition": a.slurm or None}

        def engine(c, first):
            info = campaign.run_slurm(c, a.slurm, extra, prog, wait=not a.no_wait)
            last.update(info)
            if info["slurm_job"] and not a.no_wait:
                prog.note(f"[campaign] Slurm job {info['slurm_job']}: no task left after "
                          f"{fmt_duration(time.monotonic() - t0)}")
    elif a.ssh:
        if a.pin:
            raise errors.HarnessError("--pin is for a campaign run here; not with --ssh")
        hosts = remote.parse_hosts(a.ssh)
        where = {"engine": "ssh", "hosts": [h.name for h in hosts]}

        def engine(c, first):
            last["parallel_exit"] = campaign.run_ssh(
                c, hosts, a.parallel or None, prog, a.remote_dir or remote.DEFAULT_REMOTE_DIR,
                prepare=first and not a.no_prepare)
    else:
        if a.remote_dir or a.no_prepare:
            raise errors.HarnessError("--remote-dir and --no-prepare go with --ssh")
        if a.sbatch or a.no_wait:
            raise errors.HarnessError("--sbatch and --no-wait go with --slurm")

        def engine(c, first):
            last["parallel_exit"] = campaign.run_local(c, a.parallel or os.cpu_count() or 1,
                                                       prog, pin=a.pin)
    if c.kind == "bisect":
        if a.no_wait:                  # one step submitted; rerun to go on
            col = campaign.collect(c.folder)
            if col.bisection is None and col.next_jobs:
                engine(campaign.add_jobs(c, col.next_jobs), True)
        else:
            campaign.drive_bisect(c, engine, prog)
    else:
        engine(c, True)
    wall = time.monotonic() - t0
    if a.no_wait:
        emit(a, {"command": "campaign", "ok": True, "campaign": str(c.folder), **where, **last},
              f"campaign {c.folder}: "
              + (f"{last['submitted']} jobs submitted as Slurm array job {last['slurm_job']}"
                 if last.get("slurm_job") else "nothing to submit")
              + f"\n  merge    dmaharness collect {c.folder}   (when squeue shows none "
              "of its tasks" + ("; then campaign again for the next step)" if c.kind == "bisect"
                                else ")"))
        return errors.EXIT_OK
    if "parallel_exit" in last:
        prog.note(f"[campaign] GNU parallel exited {last['parallel_exit']} after "
                  f"{fmt_duration(wall)}")
    return _collected(a, campaign.collect(a.folder),
                      {"command": "campaign", **where, **last, "wall_s": round(wall, 1)})


PLAN_DESCRIPTION = (
    "Write a campaign folder (-o DIR): campaign.json, which holds each job's "
    "`dmaharness run` arguments byte for byte, and jobs.txt, one `dmaharness "
    "job ID` a line, which runs them and writes the --json result to "
    "results/<job>.json.  Run the lines anywhere that has this checkout, "
    "from the campaign folder with dmaharness on PATH: `dmaharness campaign "
    "DIR --parallel N` here (GNU parallel), --ssh HOSTS, --slurm.  Then "
    "`dmaharness collect DIR` merges them.\n\n"
    "plan case CASE: every run of every variant of the case (a copy of the "
    "case goes along); collect diffs them as `run --case` does.\n\n"
    "plan check PATCH...: the runs of `dmaharness check` (--kernel X.Y in "
    "RUN-ARGS); collect says what each patch brings in or takes out; exit 9, "
    "no campaign, when nothing they touch is reached.\n\n"
    "plan bisect: the bisection `dmaharness bisect` makes (the same search and "
    "verdict thresholds), each step's runs being jobs: `campaign` adds the "
    "runs of the next step as the search needs them and has its engine run "
    "them; collect replays the search over the results and gives the culprit "
    "(the series must be in this checkout).\n\n"
    "plan sweep: the boot without a device and each device of the catalogue "
    "(--qemu-devices), one job each, the sweep kernel built by each worker; "
    "collect folds every job's console into the sites table `sweep` prints "
    "(the layouts when the sweep kernel is built here too).\n\n"
    "Arguments after -- go to every job (--duration 5s, --kernel 6.12, ...).")


# what collect (and campaign, which ends with it) answers, per kind of campaign
COLLECTED = {
    errors.EXIT_OK: "a case matches its expectation, a bisection found its culprit, every "
                    "boot of a sweep ran; with --no-wait: submitted",
    errors.EXIT_VERDICT: "a case does not match, a bisection found no single culprit, a "
                         "boot of a sweep failed",
}


def add_parsers(sub) -> None:
    """plan, collect, campaign."""
    pl = add_command(
        sub, "plan", cmd_plan,
        "write a campaign: a case, bisection, sweep or check as jobs",
        PLAN_DESCRIPTION,
        examples=("dmaharness plan case patches/6.1/cases/uvc-status-buffer -o /tmp/c "
                  "--runs 4 \\",
                  "    -- --duration 20s",
                  "dmaharness plan check my-series.mbox -o /tmp/k -- --kernel 7.3",
                  "dmaharness plan sweep -o /tmp/s --qemu-devices usb,storage -- "
                  "--kernel 6.12",
                  "# then, here or elsewhere",
                  "dmaharness campaign /tmp/c --parallel 2"),
        codes=(errors.EXIT_INPUT, errors.EXIT_UNREACHABLE),
        meaning={errors.EXIT_UNREACHABLE: "plan check: nothing the patches touch is reached "
                 "by a device of the harness (no campaign is written)"},
        usage="dmaharness plan case CASE -o DIR [--runs N] [-- RUN-ARGS...]\n"
              "       dmaharness plan check PATCH... -o DIR [--runs N] [-- RUN-ARGS...]\n"
              "       dmaharness plan sweep -o DIR [--qemu-devices LIST | --usb-drivers]\n"
              "                             [-- SWEEP-ARGS...]\n"
              "       dmaharness plan bisect --series FILE --signature TITLE|REGEX -o DIR\n"
              "                              [--good N] [--bad M] [--runs N] ...\n"
              "                              [-- RUN-ARGS...]")
    pl.add_argument("what", choices=("case", "check", "bisect", "sweep"), help="what to plan")
    pl.add_argument("case", type=Path, metavar="CASE|PATCH", nargs="*",
                    help="plan case: the case folder or its case.toml; plan check: the "
                         "patches (files, or an mbox of a series)")
    pl.add_argument("-o", "--output", type=folder, required=True, metavar="DIR",
                    help="the campaign folder (new, or empty)")
    pl.add_argument("--runs", type=int, default=None,
                    help="case: runs per variant (2); bisect: most runs per step (6); "
                         f"1 to {campaign.MAX_RUNS}")
    g = pl.add_argument_group("plan bisect (as `dmaharness bisect`)")
    g.add_argument("--series", type=Path, metavar="FILE", help="the quilt series to bisect")
    g.add_argument("--signature", metavar="TITLE|REGEX",
                   help="a report title, or a Python regex searched in titles")
    g.add_argument("--good", type=int, metavar="N", help="prefix without the signature (0)")
    g.add_argument("--bad", type=int, metavar="M",
                   help="prefix with the signature (the whole series)")
    g.add_argument("--endpoint-runs", type=int, default=4, help="runs at each end (4)")
    g.add_argument("--parallel", type=int, default=2,
                   help="runs a step asks for at once: jobs the engine can run together (2)")
    g.add_argument("--min-hits", type=int, default=1,
                   help="runs showing the signature that make a step bad (1)")
    g.add_argument("--max-miss", type=float, default=0.05,
                   help="accepted chance that a good verdict misses a bad kernel (0.05)")
    g = pl.add_argument_group("plan sweep (as `dmaharness sweep`)")
    g.add_argument("--qemu-devices", "--devices", dest="devices", action="append", default=[],
                   metavar="LIST",
                   help="comma-separated QEMU device models of the catalogue, by name or class "
                        "(all)" + helptext.old_spelling("--devices"))
    g.add_argument("--catalogue", type=Path, metavar="FILE",
                   help="the device catalogue, in this checkout "
                        "(kconfig-fragments/sweep/catalogue.toml); plan check too")
    g.add_argument("--usb-drivers", action="store_true",
                   help="the USB driver sweep (`sweep --usb-drivers`) instead of the catalogue: "
                        "its drivers in --shares jobs")
    g.add_argument("--shares", type=int, default=8, metavar="N",
                   help="--usb-drivers: jobs, each every N-th driver (8; 1 to 1000)")
    pl.set_defaults(run_args=[])
    output_group(pl)

    co = add_command(
        sub, "collect", cmd_collect,
        "merge a campaign's results; list jobs missing or failed",
        "Read a campaign folder's results (and GNU parallel's joblog, Slurm's "
                    "attempt files, when there are some) and print what the local command "
                    "prints: a case's diff and verdict (exit 0 when it matches the case's "
                    "expectation, 1 when not); a bisection's steps and culprit (0 found, 1 "
                    "not); a sweep's sites table (0, or 1 when a boot failed).  Jobs with no "
                    "result, or a failed one, are listed by id, why and command, and nothing "
                    "is merged until every job is back (exit 8; for a bisection: the runs its "
                    "next step needs).",
        examples=("dmaharness collect /tmp/c",
                  "# JUnit for CI, and KernelCI's KCIDB document",
                  "dmaharness collect /tmp/c --junit junit.xml --kcidb kcidb.json --json"),
        codes=(errors.EXIT_VERDICT, errors.EXIT_INPUT, errors.EXIT_INCOMPLETE),
        meaning=COLLECTED)
    co.add_argument("folder", type=Path, metavar="DIR", help="the campaign folder")
    co.add_argument("--junit", type=Path, metavar="FILE",
                    help="also write JUnit XML: one test case per job, one per expected outcome "
                         "(failures carry the report titles)")
    kcidb_args(co)
    output_group(co)

    cg = add_command(
        sub, "campaign", cmd_campaign,
        "run a campaign's jobs here, over ssh or under Slurm; collect",
        "Run the jobs of a campaign folder that have no good result yet: --parallel "
                    "at a time on this machine through GNU parallel (--joblog DIR/joblog, "
                    "--resume-failed: a job that failed or was killed runs again, a job done "
                    "is not); on other machines with --ssh HOSTS (GNU parallel --sshlogin, "
                    "after preparing each host); or as a Slurm array job with --slurm.  Then "
                    "print what `collect` prints.  Each job builds what it needs through its "
                    "machine's build cache (one build at a time; --ccache-remote in the "
                    "jobs' run arguments shares compiled objects) and boots its guest.",
        examples=("dmaharness campaign /tmp/c --parallel 2 --junit /tmp/c/junit.xml",
                  "dmaharness campaign /tmp/c --ssh box1,me@box2 --parallel 2",
                  "dmaharness campaign /shared/c --slurm debug --sbatch '--time=1:00:00'"),
        codes=(errors.EXIT_VERDICT, errors.EXIT_INPUT, errors.EXIT_INCOMPLETE),
        meaning={**COLLECTED, errors.EXIT_ENV: "environment: GNU parallel, ssh, rsync or "
                 "Slurm is missing or a host cannot be prepared, the cache folder is "
                 "unusable, standard output is closed or full"})
    cg.add_argument("folder", type=Path, metavar="DIR", help="the campaign folder")
    cg.add_argument("--parallel", "--jobs", dest="parallel", type=whole_number, default=0,
                    metavar="N",
                    help="jobs run at once, each a guest (default: one per core); with "
                         "--ssh, on each host (default: one per core of each host)"
                         + helptext.old_spelling("--jobs"))
    cg.add_argument("--ssh", metavar="HOSTS",
                    help="run the jobs on these hosts through GNU parallel --sshlogin, "
                         "results brought back (--return): a comma-separated list of GNU "
                         "parallel sshlogins ('host', 'user@host', '2/host', 'ssh -p 2222 "
                         "-i KEY user@host'), or a file of them, one a line.  Each host is "
                         "prepared first: this checkout synced (rsync), `make deps` and the C "
                         "tools built there, the campaign's files copied.  Logins must not "
                         "ask for a password (BatchMode); the hosts need rsync and make")
    cg.add_argument("--remote-dir", default=None, metavar="DIR",
                    help="with --ssh: where on each host the checkout and the campaign go, "
                         "relative to the login's home unless absolute "
                         "(.cache/dmaharness/remote)")
    cg.add_argument("--slurm", nargs="?", const="", default=None, metavar="PARTITION",
                    help="submit the jobs to Slurm as one array job (sbatch --array; task N "
                         "runs line N of jobs.txt, one CPU each) on PARTITION or the "
                         "cluster's default, then follow it in squeue until no task is left "
                         "and collect; Ctrl-C cancels it (scancel).  The campaign folder "
                         "(results land there) and this checkout must be at the same path "
                         "on every node: a shared folder")
    cg.add_argument("--sbatch", metavar="OPTIONS",
                    help="with --slurm: more sbatch options, one string ('--time=2:00:00 "
                         "--mem=2G --account=lab'); they win over dmaharness's own")
    cg.add_argument("--no-wait", action="store_true",
                    help="with --slurm: submit and return (exit 0, the job id printed); "
                         "`dmaharness collect DIR` later")
    cg.add_argument("--no-prepare", action="store_true",
                    help="with --ssh: skip the prepare step (the hosts are ready from a "
                         "previous --ssh run of this campaign)")
    cg.add_argument("--pin", action="store_true",
                    help="run job slot k on core k-1 only (taskset): one guest per core, "
                         "QEMU's threads and the fake device's together")
    cg.add_argument("--junit", type=Path, metavar="FILE", help="as collect --junit")
    kcidb_args(cg)
    output_group(cg)

