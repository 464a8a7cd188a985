"""`case DIR` (and `run --case DIR`, the same) and `bisect`: a case's variants
diffed, a series bisected.

`case` is the before/after job as a command of its own (#44): its parser
takes run's options but --case (the case is its argument) and the
campaign-job ones; both commands reach cmd_run_case with the same
request, and the JSON names the command that was run.
"""

from __future__ import annotations

from pathlib import Path

from .. import errors
from ..progress import Progress
from ..checks import bisect, bisectjob, caserun, diff, pointing
from ..output import htmlreport
from . import helptext
from .common import (TIMEOUT_BEYOND_FLOOD, boot_group, chance, command_parser, count, emit,
                     flags, flood_group, variant_spec, whole_number)

# what `case` and `run --case` can return, and what 0 and 1 mean for them
CASE_CODES = (errors.EXIT_VERDICT, errors.EXIT_INPUT, errors.EXIT_BUILD, errors.EXIT_GUEST,
              errors.EXIT_DEVICE)
BUILD_MEANING = "the kernel, the fake camera or the guest agent failed to build"


def cmd_run_case(a) -> int:
    """`case DIR` and `run --case DIR`: the case's variants run and diffed, or
    (--case-variant/--case-run, a campaign's job) one run of one variant.
    The JSON's command is the one given (case or run)."""
    prog = Progress(quiet=a.quiet)
    if a.case_variant or a.case_run:
        if not (a.case_variant and a.case_run):
            raise errors.InputError("--case-variant and --case-run go together (one run of "
                                    "one variant: a campaign's job)")
        payload = {**caserun.run_case_job(caserun.CaseJobRequest(
            a.case, variant_spec(a), flags(a), a.case_variant, a.case_run, a.run_dir,
            a.catalogue), prog), "command": a.command}
        sigs = payload["signatures"]
        emit(a, payload, f"{payload['job']['case']} {a.case_variant} run {a.case_run}: "
              + (f"{len(sigs)} report title(s)" if payload["ok"] else
                 f"FAILED: {payload['failure']}")
              + "".join(f"\n  {s['count']:>5}  {s['title']}" for s in sigs)
              + f"\n  console  {payload['console']}")
        return errors.EXIT_OK if payload["ok"] else errors.EXIT_GUEST
    req = caserun.CaseRequest(a.case, variant_spec(a), flags(a), runs=a.runs,
                              parallel=a.parallel, run_dir=a.run_dir, catalogue=a.catalogue)
    res = caserun.run_case(req, prog)
    htmlreport.write_case(res)
    emit(a, {**res.to_json(), "command": a.command}, diff.format_outcome(res.outcome)
          + f"\n  logs     {res.folder}/<variant>-<run>/console.log\n  json     {res.outcome_json}"
            f"\n  report   {res.html}")
    return diff.exit_code(res.outcome.matches)

def cmd_bisect(a) -> int:
    prog = Progress(quiet=a.quiet)
    policy = bisect.Policy(max_runs=a.runs, batch=a.parallel, endpoint_runs=a.endpoint_runs,
                           min_hits=a.min_hits, max_miss=a.max_miss)
    policy.check()
    req = bisectjob.BisectRequest(variant_spec(a, series_=False), a.series, a.signature,
                                  flags(a), case=a.case, good=a.good, bad=a.bad,
                                  policy=policy, fresh=a.fresh, run_dir=a.run_dir)
    out = bisectjob.run_bisect(req, prog)
    emit(a, out.payload, bisect.format_result(out.result, out.names, a.signature)
          + ("\n" + pointing.format_pointing(out.pointing, out.names, out.result.culprit)
             if out.pointing else "")
          + f"\n  log      {out.log}\n  result   {out.folder / 'result.json'}")
    return errors.EXIT_OK if out.found else errors.EXIT_VERDICT


def case_group(p, *, title: str, job: bool) -> None:
    """The options of a case's before/after diff (`case`, `run --case`); ``job``:
    those of one run of one variant too, a campaign's job (hidden)."""
    g = p.add_argument_group(title)
    g.add_argument("--runs", type=count, default=2, help="runs per variant (2)")
    g.add_argument("--parallel", type=count, default=2,
                   help="guests booted at once (2; one per core is about right)")
    if job:
        helptext.job_only(
            g, "--case-variant", metavar="NAME",
            help="with --case-run: one run of this variant only, its kernel reports folded "
                 "by title in the JSON (a campaign's job; `dmaharness collect` diffs them); "
                 "exit 0 when the guest ran, 6 when it failed")
        helptext.job_only(g, "--case-run", type=count, metavar="N",
                          help="with --case-variant: which run (from 1; a campaign's job)")
    g.add_argument("--catalogue", type=Path, metavar="FILE",
                   help="a case with [devices] catalogue: the device catalogue its entries come "
                        "from (default kconfig-fragments/sweep/catalogue.toml); its kernel is "
                        "that catalogue's sweep kernel with the case's patches")


def add_case_parser(sub) -> None:
    """case DIR: run --case's options (harness.cli.build's run) but --case
    itself and a campaign job's."""
    cs = command_parser(
        sub, "case", cmd_run_case, "a case's kernels without and with the fix, reports diffed",
        "The before/after job: build a case's variants (case.toml: its before kernel, with "
        "the bug, and each after kernel, with a fix), boot each --runs times under the "
        "case's flood (its [run] table, then the flags given), and diff their kernel "
        "reports: new, fixed, unchanged, flaky. Exit 0 when the outcome matches the case's "
        "expectation, 1 when not. The same as `run --case DIR`, which stays; the JSON's "
        "command is case. Writing a case: docs/cases.md.",
        examples=("# the seed case: the bug, then each of its fixes, their reports diffed",
                  "dmaharness case patches/6.1/cases/uvc-status-buffer",
                  "# your case on your checkout, three runs a variant, a shorter flood",
                  "dmaharness case my-case --tree ~/src/linux --runs 3 --duration 10s"),
        codes=CASE_CODES,
        meaning={errors.EXIT_OK: "the outcome matches the case's expectation",
                 errors.EXIT_VERDICT: "the outcome does not match the case's expectation",
                 errors.EXIT_BUILD: BUILD_MEANING},
        run_settings=True)
    cs.add_argument("case", type=Path, metavar="DIR|case.toml",
                    help="the case: a folder holding case.toml, or that file")
    cs.set_defaults(case_variant=None, case_run=None)     # no campaign job: run --case's
    boot_group(cs, timeout_help=TIMEOUT_BEYOND_FLOOD, profile=True)
    flood_group(cs, case=False)
    case_group(cs, title="case (before/after diff)", job=False)


def add_parsers(sub) -> None:
    """case, bisect."""
    add_case_parser(sub)
    bs = command_parser(
        sub, "bisect", cmd_bisect, "the patch of a quilt series that brings a report in (or out)",
        "Bisect a quilt series: prefix k is the variant with the first k patches "
        "of --series applied (after patches/<version>/series). Both ends are "
        "checked first (--good must not show the signature, --bad must), then "
        "prefixes are binary-searched; each step builds incrementally through the "
        "build cache, boots with the camera flood and the agent, and looks for the "
        "signature among the kernel reports. --good < --bad finds the patch that "
        "brings the report in; --good > --bad the one that takes it away. Verdicts: "
        "good, bad, skip (build, patch or boot failure; never bad). Rerunning the "
        "same command resumes from its log.", series=False,
        examples=("# which patch of the series brings the report in",
                  "dmaharness bisect --series tests/fixtures/bisect/6.1/series \\",
                  "    --duration 4s --signature 'in (uvc_status_start|uvc_v4l2_open)$'",
                  "# which one takes it away (--good > --bad), a new search",
                  "dmaharness bisect --series fixes.series --good 5 --bad 0 --fresh \\",
                  "    --signature 'KASAN: dma-owned'"),
        codes=(errors.EXIT_VERDICT, errors.EXIT_INPUT),
        meaning={errors.EXIT_OK: "a culprit was found",
                 errors.EXIT_VERDICT: "no single culprit: an end failed its check, or "
                 "skipped steps leave a range (a patch that does not apply or build, or a "
                 "guest that fails, is a skipped step, not an error)"},
        run_settings=True)
    bs.epilog += ("\nthresholds (see harness/checks/bisect.py): a step is bad after "
                  "--min-hits runs\nthat show the signature; good once a bad kernel would "
                  "have shown nothing\nin its clean runs with chance <= --max-miss, the "
                  "chance per run estimated\nat the bad end.\n")
    g = bs.add_argument_group("what to bisect")
    g.add_argument("--series", type=Path, required=True, metavar="FILE",
                   help="the quilt series to bisect (applied after patches/<version>/series)")
    g.add_argument("--signature", required=True, metavar="TITLE|REGEX",
                   help="a report title as `dmaharness reports` prints it, or a Python regex "
                        "searched in titles")
    g.add_argument("--good", type=whole_number, metavar="N",
                   help="prefix length without the signature (default 0)")
    g.add_argument("--bad", type=whole_number, metavar="M",
                   help="prefix length with the signature (default: the whole series)")
    g.add_argument("--fresh", action="store_true", help="ignore the log of an earlier run")
    g = bs.add_argument_group("verdicts")
    g.add_argument("--runs", type=count, default=6, help="most runs per step (6)")
    g.add_argument("--endpoint-runs", type=count, default=4,
                   help="runs at each end; the bad end's estimate the repro chance (4)")
    g.add_argument("--parallel", type=count, default=2, help="guests booted at once (2)")
    g.add_argument("--min-hits", type=count, default=1,
                   help="runs showing the signature that make a step bad (1)")
    g.add_argument("--max-miss", type=chance, default=0.05,
                   help="accepted chance that a good verdict misses a bad kernel (0.05)")
    boot_group(bs, timeout_help=TIMEOUT_BEYOND_FLOOD)
    flood_group(bs)
