"""`check`: a patch (or a series) before and after, with the device that reaches it."""

from __future__ import annotations

from pathlib import Path

from .. import errors, paths
from ..campaign import campaign
from ..checks import diff, patchcheck
from ..output import checkreply, htmlreport
from ..pipeline import VariantSpec
from ..progress import Progress
from . import jobcheck
from .common import command_parser, count, emit, variant_spec


def _unreached(a, payload: dict, text: str) -> int:
    """`check` and `plan check` when nothing the patches touch is reached."""
    emit(a, {**payload, "ok": False, "failure": patchcheck.UNREACHED},
         f"{text}\n  verdict  none: {patchcheck.UNREACHED} (exit 9)")
    return errors.EXIT_UNREACHABLE


def cmd_check(a) -> int:
    prog = Progress(quiet=a.quiet)
    req = patchcheck.CheckRequest(tuple(a.patches), variant_spec(a, series_=False), {},
                                  runs=a.runs, parallel=a.parallel, catalogue=a.catalogue)
    p = patchcheck.plan(req, prog)
    payload = {"command": "check", "ok": p.reachable, **p.to_json()}
    text = patchcheck.format_plan(p)
    if not p.reachable:
        return _unreached(a, payload, text)
    if a.dry_run:
        emit(a, payload, text)
        return errors.EXIT_OK
    res, probed = patchcheck.run(req, p, prog)
    payload["probed"] = probed                  # the tries a probe boot found
    missed, ran = patchcheck.unbound(p, res.folder)
    if p.usb and len(missed) == len(p.usb):
        # the driver never ran: whatever the diff says, it says nothing of the patch
        text += "".join(f"\n  not bound  {m}" for m in missed)
        return _unreached(a, {**payload, **res.to_json(), "command": "check",
                              "unbound": missed}, text)
    htmlreport.write_case(res)
    answer = res.folder / "reply.txt"
    answer.write_text(checkreply.reply(p.version, p.patches, res.outcome, res.folder,
                                       ["./dmaharness", "check",
                                        *(["--tree", str(a.tree)] if a.tree else
                                          ["--kernel", p.version]),
                                        *map(str, a.patches)]))
    text += "".join(f"\n  not bound  {m}" for m in missed)
    text += "".join(f"\n  probed     {m}" for m in ran)
    emit(a, {**payload, **res.to_json(), "command": "check", "reply": str(answer),
             "unbound": missed, "probed_only": ran},
         text + "\n" + diff.format_outcome(res.outcome)
         + "\n" + patchcheck.verdict_text(res.outcome, p.patches)
         + f"\n  logs     {res.folder}/<variant>-<run>/console.log\n  report   {res.html}"
         + f"\n  reply    {answer}")
    return diff.exit_code(res.outcome.matches)


def plan_check(a, extra: list[str]) -> int:
    """`plan check PATCH...`: the check's case (harness.checks.patchcheck) as a
    case campaign whose about names the patches, so that collect says what
    each brings in or takes out."""
    if a.series or a.signature or a.devices or a.usb_drivers:
        raise errors.HarnessError("plan check takes PATCH... (and --catalogue), not --series, "
                                  "--signature, --qemu-devices or --usb-drivers")
    if not a.case:
        raise errors.HarnessError("plan check needs PATCH... (a patch file, several, or an "
                                  "mbox of a series)")
    opts = jobcheck.given("run", list(extra))
    if "tree" in opts:
        raise errors.HarnessError("plan check: RUN-ARGS: --tree is refused (a campaign's "
                                  "workers build Debian's linux-source: --kernel X.Y)")
    kernel = opts["kernel"][1] if "kernel" in opts else None
    runs = 2 if a.runs is None else a.runs
    if not 1 <= runs <= campaign.MAX_RUNS:
        raise errors.HarnessError(f"--runs {runs}: 1 to {campaign.MAX_RUNS}")
    prog = Progress(quiet=a.quiet)
    req = patchcheck.CheckRequest(tuple(a.case), VariantSpec(kernel=kernel), {}, runs=runs,
                                  catalogue=a.catalogue)
    p = patchcheck.plan(req, prog)
    text = patchcheck.format_plan(p)
    if not p.reachable:
        return _unreached(a, {"command": "plan", **p.to_json()}, text)
    made = [d.module for d in p.usb if d.profile is None]
    if made:
        raise errors.InputError(f"plan check: {', '.join(made)} has no shipped profile and "
                                "its device is made from the built kernel's modules.alias, "
                                "which a plan does not build: run `dmaharness check` on one "
                                "machine")
    names = tuple(x.name if paths.is_safe_name(x.name) else f"patch-{k}"
                  for k, x in enumerate(p.patches, 1))
    c = campaign.plan_case(campaign.CasePlan(patchcheck.write_case(p), runs, a.output,
                                             tuple(extra), check=names))
    emit(a, {"command": "plan", "ok": True, **p.to_json(), **c.to_json(),
             "folder": str(c.folder)},
         text + f"\ncampaign {c.folder}: {len(c.jobs)} jobs (before, then the tree after each "
         f"of {len(names)} patch(es), x {runs} runs)\n"
         f"  jobs     {c.folder / campaign.JOBS_FILE}\n"
         f"  run      dmaharness campaign {c.folder} --parallel N | --ssh HOSTS | --slurm\n"
         f"  merge    dmaharness collect {c.folder}")
    return errors.EXIT_OK


def collected_verdict(col, payload: dict) -> str:
    """A check campaign's collect (campaign.json names its patches): what each
    brings in or takes out, added to ``payload``; '' for any other case."""
    checked = col.campaign.about.get("check_patches")
    if not checked:
        return ""
    pats = tuple(map(Path, checked))
    payload["check"] = [{"patch": ch.patch, "status": ch.status, "title": ch.row.title}
                        for ch in patchcheck.changes(col.outcome, pats)]
    return "\n" + patchcheck.verdict_text(col.outcome, pats)


def add_parsers(sub) -> None:
    p = command_parser(
        sub, "check", cmd_check, "a patch before and after: what it brings in or takes out",
        "Check patches (files, or an mbox of a series as git am takes it) on a kernel: the "
        "files each touches, the objects and Kconfig symbols they build into (the tree's "
        "Makefiles), how the harness reaches them (the fake camera for uvcvideo, USB core "
        "and the DMA layer; the catalogue's QEMU devices for their drivers; for any other "
        "USB or HID driver a device over usb-redir: a shipped profile that binds it, else "
        "one made from the driver's own ID table, with its Kconfig symbol added to the "
        "kernel), then the verdict as run --case "
        "gives it: before = the tree without them, after-K = the tree after patch K, RUNS "
        "runs a side, new / fixed / unchanged reports, and reply.txt in the run folder: the "
        "answer a maintainer can use (syzbot's form for a report brought in; the evidence "
        "for a report taken out). Exit 0: nothing new; 1: a patch "
        "brings a report in (its after-K names it); 9: nothing the patches touch is "
        "reached.", series=False,
        examples=("dmaharness check --kernel 7.3 my-fix.patch",
                  "# a series as an mbox: the plan only (what is built, what reaches it)",
                  "git format-patch --stdout v7.3..HEAD > series.mbox",
                  "dmaharness check --kernel 7.3 series.mbox --dry-run",
                  "# your own tree instead of Debian's source, three runs a side",
                  "dmaharness check --tree ~/src/linux --runs 3 0001-fix.patch"),
        codes=(errors.EXIT_VERDICT, errors.EXIT_INPUT, errors.EXIT_BUILD, errors.EXIT_GUEST,
               errors.EXIT_DEVICE, errors.EXIT_UNREACHABLE),
        meaning={errors.EXIT_OK: "no patch brings a report in",
                 errors.EXIT_VERDICT: "a patch brings a report in (its after-K names it)",
                 errors.EXIT_UNREACHABLE: "nothing the patches touch is reached by a device "
                 "of the harness (the plan says why for each file)",
                 errors.EXIT_BUILD: "a kernel, the fake camera or the guest agent failed to "
                 "build"})
    p.add_argument("patches", type=Path, nargs="+", metavar="PATCH",
                   help="a patch file or an mbox of several")
    p.add_argument("--runs", type=count, default=2, help="runs a side (2)")
    p.add_argument("--parallel", type=count, default=2, help="guests booted at once (2)")
    p.add_argument("--catalogue", type=Path, metavar="FILE",
                   help="another device catalogue (default kconfig-fragments/sweep/"
                        "catalogue.toml)")
    p.add_argument("--dry-run", action="store_true",
                   help="say what would be built and run, and stop")
