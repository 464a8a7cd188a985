"""`run --case`: every variant of a case under the flood, then the diff of reports.

The variants are built first, one after the other (each seeded from the
last, so each is an incremental build), then booted ``parallel`` at a
time.  The outcome is enriched (file:line, structure layouts) and written
as outcome.json; the run's traces (reports, the agent's series) go with
the result, for the page (harness.output.htmlreport.write_case).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Mapping, Optional

from .. import errors, jsonout, paths
from ..progress import Progress
from ..kernel import fragments, kbuild, series, symbolize
from ..devices import agentresult, usbdevices
from ..boot import settings
from ..reports import engine
from ..reports.engine import Report
from ..pipeline import (FloodJob, check_before_build, ran, Target, VariantSpec, flood_once,
                        new_run_dir, run_parallel, target, with_profile)
from . import case as case_mod, casedevices, diff, enrich, sweep
from .case import CAMERA_SETTINGS, Case, load_case


@dataclass(frozen=True)
class CaseRequest:
    case: Path                                  # the folder or its case.toml
    variant: VariantSpec
    flags: Mapping[str, Any]                    # run settings given on the command line
    runs: int = 2                               # runs per variant
    parallel: int = 2                           # guests booted at once
    run_dir: Path | None = None
    catalogue: Path | None = None               # [devices] catalogue: another catalogue


@dataclass
class RunTrace:
    """One boot: its reports and the agent's per-second series."""

    label: str                         # "bug #1", "fix #2", ...
    reports: list[Report]
    per_second: list[int] = field(default_factory=list)   # status events, one per second
    series_start: float = 0.0          # seconds since boot of per_second[0]
    frames: Optional[Callable[[Report], list[str]]] = None
    """Symbolized stack lines of a report (e.g. harness.kernel.symbolize); None: as printed."""
    source: Optional[str] = None       # console log path, shown as text


@dataclass
class CaseResult:
    case: Case
    target: Target
    outcome: diff.Outcome
    folder: Path
    outcome_json: Path
    settings: dict
    traces: list[RunTrace] = field(default_factory=list)
    title: str = ""

    @property
    def html(self) -> Path:
        """Where the run's page goes (harness.output.htmlreport.write_case)."""
        return self.folder / "report.html"

    @property
    def matches(self) -> bool:
        return bool(self.outcome.matches)

    def to_json(self) -> dict:
        return {"command": "run", "case": self.case.name, **self.target.to_json(),
                "ok": self.outcome.matches, "run_dir": str(self.folder), "html": str(self.html),
                "settings": self.settings, "outcome": self.outcome.to_json()}


def case_version(case: Case) -> str | None:
    """The kernel version a case is written for (patches/<version>/cases/<name>), if it says."""
    ver = case.folder.parent.parent.name
    return ver if case.folder.parent.name == "cases" and re.fullmatch(r"\d+\.\d+", ver) else None


def resolve_case(case_path: Path) -> Path:
    """A case path as given, else relative to the checkout's root: a
    campaign's job names an in-tree case (patches/6.1/cases/NAME) so, and
    runs from the campaign folder."""
    return paths.in_checkout(case_path)


def _prepare(case_path: Path, variant: VariantSpec, flags: Mapping[str, Any],
             catalogue: Path | None, progress: Progress, usb: bool | None = None):
    """The case, its target kernel, the spec, the run settings and its
    catalogue devices (None: the cameras); ``usb``: whether the kernel gets
    the device profiles' fragment (None: when the case attaches devices)."""
    case = load_case(resolve_case(case_path))
    ver = case_version(case)
    spec = with_profile(variant, case.run)
    if ver and spec.kernel is None and spec.tree is None and ver in series.SUPPORTED:
        spec = replace(spec, kernel=ver)        # the case says which kernel
    if case.catalogue:
        clash = [k for k in CAMERA_SETTINGS if k in flags]
        if clash:
            raise errors.InputError(f"case {case.name} attaches catalogue devices and runs "
                                    "their workloads, not the cameras: drop "
                                    + ", ".join("--" + k.replace("_", "-") for k in clash))
        t, cd = casedevices.prepare(case, spec, catalogue, progress)
    elif catalogue is not None:
        raise errors.InputError(f"--catalogue: case {case.name} attaches no catalogue devices "
                                "(it has no [devices] table)")
    else:
        t, cd = target(spec), None
    if ver and ver != t.version:
        where = f"--tree {t.checkout.path} (linux {t.version})" if t.checkout else f"--kernel {t.version}"
        raise errors.InputError(f"case {case.folder} is for linux {ver}, not {where}")
    boot_, flood = settings.resolve(case.run, flags)
    t = case_kernel(case, t, cd is None and bool(flood.devices or flood.usb_host)
                    if usb is None else usb)
    if cd is None:
        check_before_build(flood)                # before any build
    return case, t, spec, boot_, flood, cd


def case_target(req: "CaseRequest", progress: Progress, usb: bool | None = None) -> Target:
    """The kernel a case's before variant is built from (its variants add
    their patches): `check` builds it first to make a device from its
    modules.alias."""
    return _prepare(req.case, req.variant, req.flags, req.catalogue, progress, usb)[1]


def case_kernel(case, t: Target, usb: bool) -> Target:
    """The case's kernel: with USB device profiles, the drivers of their
    classes and usbmon (as `run --usb-device` builds), then the case's own
    kernel.depends (best effort) and kernel.config (harness.checks.case), which
    must stick."""
    frags = t.frags
    if usb:
        frags += (fragments.parse_fragment(usbdevices.FRAGMENT),)
    if case.depends:
        gen = sweep.generated_fragment("cases", "kernel-depends.config",
                                       case_mod.config_fragment_text(case, depends=True))
        frags += (fragments.parse_fragment(gen),)
    if case.config:
        gen = sweep.generated_fragment("cases", "kernel.config",
                                       case_mod.config_fragment_text(case))
        frags += (fragments.parse_fragment(gen),)
    return replace(t, frags=frags)


@dataclass(frozen=True)
class OneBoot:
    """A variant's boot, with the cameras (FloodRun) or catalogue devices
    (harness.checks.sweep.DeviceRun): what the case needs of either."""
    console: Path
    failure: Optional[str]                  # None: it ran cleanly
    reports: list[Report]
    agent: Any = None                       # the agent's result (cameras only)
    outcome: str = ""
    summary: Any = None


def boot_once(cd, build: kbuild.BuildResult, folder: Path, boot_, flood,
              progress: Progress) -> OneBoot:
    if cd is not None:
        r = casedevices.boot(cd, build, folder, boot_, progress)
        console = r.console or folder / "console.log"
        text = console.read_text(errors="replace") if console.is_file() else ""
        return OneBoot(console, r.reason if r.state != "ran" else None, engine.parse(text),
                       outcome=r.outcome)
    fr = flood_once(FloodJob(build, folder, boot_, flood), progress)
    reps = engine.parse(fr.result.console.read_text(errors="replace"))
    failure = None
    if not ran(fr.result, reps) or fr.crashed:
        failure = (fr.device_error().message.splitlines()[0] if fr.crashed
                   else fr.result.describe())
    return OneBoot(fr.result.console, failure, reps, fr.agent, fr.result.outcome, fr.summary)


@dataclass(frozen=True)
class CaseJobRequest:
    """One boot of one variant of a case: a campaign's job (harness.campaign.campaign)."""
    case: Path
    variant: VariantSpec
    flags: Mapping[str, Any]
    name: str                                   # the case variant: before, fix, ...
    index: int                                  # the run, from 1
    run_dir: Path | None = None
    catalogue: Path | None = None


def run_case_job(req: CaseJobRequest, progress: Progress) -> dict:
    """Build the variant, boot it once under the flood; the payload carries
    the run's kernel reports folded by title, each with its first report
    whole, so that `collect` diffs the case without the console."""
    case, t, spec, boot_, flood, cd = _prepare(req.case, req.variant, req.flags, req.catalogue,
                                               progress)
    found = [v for v in [case.before] + case.afters if v.name == req.name]
    if not found:
        names = ", ".join(v.name for v in [case.before] + case.afters)
        raise errors.InputError(f"case {case.name} has no variant {req.name!r} ({names})")
    if req.index < 1:
        raise errors.InputError(f"--case-run {req.index}: runs count from 1")
    v = found[0]
    # the artifacts only: a job does not enrich (file:line, layouts), so a
    # variant whose work tree was pruned is not rebuilt (that serialized the
    # jobs of a campaign behind one incremental build each)
    b = kbuild.build(t.variant(v.patches), jobs=spec.jobs, progress=progress, force=spec.force)
    if cd is not None:
        casedevices.check_built(cd, b)
    folder = req.run_dir or new_run_dir(f"case-{case.name}-{v.name}-{req.index}")
    progress.note(f"[case {case.name}] {v.name} run {req.index}")
    one = boot_once(cd, b, folder, boot_, flood, progress)
    return {"command": "run", "job": {"case": case.name, "variant": v.name, "run": req.index},
            **t.to_json(), "build": b.to_json(), "ok": one.failure is None,
            "failure": one.failure, "outcome": one.outcome, "run_dir": str(folder),
            "console": str(one.console), "summary": one.summary,
            "signatures": [s.to_json_full() for s in engine.fold(one.reports)]}


def run_case(req: CaseRequest, progress: Progress) -> CaseResult:
    case, t, spec, boot_, flood, cd = _prepare(req.case, req.variant, req.flags, req.catalogue,
                                               progress)
    top = req.run_dir or new_run_dir(f"case-{case.name}-{t.name}")
    top.mkdir(parents=True, exist_ok=True)
    variants = [(v, t.variant(v.patches)) for v in [case.before] + case.afters]
    builds: dict[str, kbuild.BuildResult] = {}
    for v, variant in variants:
        progress.note(f"[case {case.name}] variant {v.name}: {len(variant.patches)} patches")
        builds[v.name] = kbuild.build(variant, jobs=spec.jobs, progress=progress,
                                      force=spec.force, need_tree=t.checkout is None)
        if cd is not None:
            casedevices.check_built(cd, builds[v.name])
    jobs = [(v, r) for v, _ in variants for r in range(req.runs)]

    def one(job):
        v, r = job
        progress.note(f"[case {case.name}] {v.name} run {r + 1}/{req.runs}")
        return job, boot_once(cd, builds[v.name], top / f"{v.name}-{r + 1}", boot_, flood,
                              progress)

    runs: dict[str, list] = {v.name: [] for v, _ in variants}
    traces, failures = [], []
    syms = {name: symbolize.symbolizer(b.artifacts.dir) for name, b in builds.items()}
    for (v, r), ob in run_parallel(jobs, one, req.parallel):
        runs[v.name].append(ob.reports)
        if ob.failure:
            failures.append(f"{v.name} run {r + 1}: {ob.failure}")
        series_, start = agentresult.agent_series(ob.agent)
        traces.append(RunTrace(f"{v.name} #{r + 1}", ob.reports, series_, start or 0.0,
                               syms[v.name].format_report, str(ob.console)))
    if failures:
        raise errors.GuestError("the case could not run cleanly: " + "; ".join(failures))
    outcome = diff.compare_case(case, runs[case.before.name],
                                {v.name: runs[v.name] for v in case.afters})
    if t.checkout is None:
        enrich.annotate_outcome(outcome, {name: b.artifacts.dir for name, b in builds.items()})
    else:
        # one mirror per checkout: rebuild each variant's tree in turn (incremental)
        for v, variant in variants:
            kbuild.build(variant, jobs=spec.jobs, progress=progress, need_tree=True)
            enrich.annotate_outcome(outcome, {v.name: builds[v.name].artifacts.dir})
    out_json = top / "outcome.json"
    jsonout.write(out_json, outcome.to_json())
    title = (f"dmaharness: {case.name} on linux {t.version}"
             + (f" ({t.checkout.path} at {t.checkout.short})" if t.checkout else ""))
    return CaseResult(case, t, outcome, top, out_json,
                      {"boot": boot_.__dict__ | {"qemu_opts": list(boot_.qemu_opts)},
                       "flood": settings.flood_json(flood)}, traces, title)
