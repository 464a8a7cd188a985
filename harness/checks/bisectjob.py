"""`bisect` over a quilt series, and `bisect-run`'s test of one commit.

Both build through the one pipeline (harness.kernel.kbuild.build: Debian's tree
or a mirror of the user's checkout), flood through harness.pipeline and
decide with harness.checks.bisect.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Optional

from .. import errors, jsonout, paths
from ..errors import HarnessError
from ..progress import Progress, fmt_duration
from ..kernel import kbuild, series
from ..boot import initramfs, settings
from ..boot.settings import BootSettings, FloodSettings
from ..reports import engine
from ..pipeline import (FloodJob, check_before_build, FloodRun, RunRequest, VariantSpec,
                        build, flood_once, new_run_dir, run_parallel, target, with_profile)
from . import bisect, pointing
from .case import load_case


def case_run(case_path: Path | None) -> Mapping[str, Any]:
    return load_case(case_path).run if case_path is not None else {}


def flood_settings(case_path: Path | None, flags: Mapping[str, Any]
                   ) -> tuple[settings.BootSettings, settings.FloodSettings]:
    """defaults < the profile's run table < the case's [run] table < flags (harness.boot.settings)."""
    return settings.resolve(case_run(case_path), flags)


# --- a flood run as bisection evidence ------------------------------------------------------

def classify_run(fr: FloodRun, matcher: bisect.Matcher) -> bisect.RunOutcome:
    """A flood run as bisection evidence: hit, clean, failed or infra."""
    text = fr.result.console.read_text(errors="replace") if fr.result.console.is_file() else ""
    titles = matcher.matching([r.title for r in engine.parse(text)])
    where, wall = str(fr.run_dir), getattr(fr.result, "wall", 0.0)
    if titles:      # even from a run that then panicked: the signature was seen
        return bisect.RunOutcome(bisect.HIT, titles, where, wall)
    if fr.crashed:
        return bisect.RunOutcome(bisect.INFRA, [], f"fake camera crashed; {where}", wall)
    if fr.agent is not None and fr.result.outcome in ("ok", "guest-error"):
        return bisect.RunOutcome(bisect.CLEAN, [], where, wall)
    why = fr.result.describe() if fr.agent is not None or not fr.result.ok else \
        "the guest agent printed no result"
    return bisect.RunOutcome(bisect.FAILED, [], f"{why}; {where}", wall)


class FloodRunner:
    """bisect.Runner over kernel variants: build through the cache, flood, classify.

    ``variant_for(prefix)`` gives the kernel of a step; runs of a step go
    to ``folder/<name_fmt>`` and are booted ``count`` at once.
    """

    def __init__(self, variant_for: Callable[[int], kbuild.AnyVariant], matcher: bisect.Matcher,
                 boot_: BootSettings, flood: FloodSettings, folder: Path, progress: Progress, *,
                 jobs: int | None = None, force: bool = False, command: str = "bisect",
                 name_fmt: str = "p{prefix}-{n}"):
        self.variant_for, self.matcher = variant_for, matcher
        self.boot, self.flood, self.folder, self.prog = boot_, flood, folder, progress
        self.jobs, self.force, self.command, self.name_fmt = jobs, force, command, name_fmt
        self.builds: dict[int, kbuild.BuildResult] = {}     # given, or built by build()

    def key(self, prefix: int) -> str:
        return kbuild.variant_key(self.variant_for(prefix))

    def build(self, prefix: int, need_tree: bool = False) -> Optional[str]:
        try:
            self.builds[prefix] = kbuild.build(self.variant_for(prefix), jobs=self.jobs,
                                               progress=self.prog, force=self.force,
                                               need_tree=need_tree)
        except (errors.BuildError, errors.InputError) as e:
            return e.message.splitlines()[0]
        return None

    def tree_for(self, prefix: int) -> kbuild.BuildResult | None:
        """The build of a prefix with its work tree present (built again if pruned)."""
        self.build(prefix, need_tree=True)
        return self.builds.get(prefix)

    def run(self, prefix: int, first: int, count: int) -> list[bisect.RunOutcome]:
        if prefix not in self.builds:     # resumed half-way: the build is cached
            why = self.build(prefix)
            if why:
                return [bisect.RunOutcome(bisect.FAILED, [], f"build: {why}")] * count

        def one(i: int) -> bisect.RunOutcome:
            d = self.folder / self.name_fmt.format(prefix=prefix, n=first + i + 1)
            shutil.rmtree(d, ignore_errors=True)
            try:
                fr = flood_once(FloodJob(self.builds[prefix], d, self.boot, self.flood,
                                         self.command), self.prog)
            except errors.EnvError:
                raise
            except HarnessError as e:
                return bisect.RunOutcome(bisect.INFRA, [], f"{e.message}; {d}")
            return classify_run(fr, self.matcher)

        self.prog.note(f"[{self.command}] prefix {prefix}: runs {first + 1}..{first + count}")
        return run_parallel(range(count), one, count)


def bisect_run_job(req: RunRequest, signature: str, progress: Progress) -> dict:
    """`run --bisect-signature`: a bisection campaign's job.  One flood of
    the prefix's kernel, classified as a local bisection's run is (hit,
    clean, failed, infra: classify_run); a kernel that does not build or a
    patch that does not apply is a failed run ("build: ..."), as FloodRunner
    makes it.  Only a missing tool or a bad series is raised: the job failed."""
    matcher = bisect.Matcher(signature)
    check_before_build(req.flood)            # a bad setting is no run's outcome
    t = target(req.variant)
    key = kbuild.variant_key(t.variant())
    try:
        res = build(t, progress=progress)
    except (errors.BuildError, errors.InputError) as e:     # FloodRunner.build's skip
        out = bisect.RunOutcome(bisect.FAILED, [], f"build: {e.message.splitlines()[0]}")
    else:
        run_dir = req.run_dir or new_run_dir(f"bisect-{t.name}")
        try:
            out = classify_run(flood_once(FloodJob(res, run_dir, req.boot, req.flood,
                                                   command="bisect"), progress), matcher)
        except errors.EnvError:
            raise
        except HarnessError as e:
            out = bisect.RunOutcome(bisect.INFRA, [], f"{e.message}; {run_dir}")
    return {"command": "run", "ok": True, "signature": signature, "prefix": req.variant.prefix,
            "key": key, "bisect_run": out.to_json(), **t.to_json()}



# --- bisect ----------------------------------------------------------------------------

@dataclass(frozen=True)
class BisectRequest:
    variant: VariantSpec                 # --kernel/--tree, --fragment, base series; not --series
    series: Path                         # the series to bisect
    signature: str
    flags: Mapping[str, Any]             # run settings given on the command line
    case: Path | None = None             # flood settings from this case's [run]
    good: int | None = None
    bad: int | None = None
    policy: bisect.Policy = bisect.Policy()
    fresh: bool = False
    run_dir: Path | None = None


@dataclass
class BisectOutput:
    result: bisect.Result
    names: list[str]
    payload: dict
    folder: Path
    log: Path
    pointing: dict | None

    @property
    def found(self) -> bool:
        return self.result.found


def run_bisect(req: BisectRequest, progress: Progress) -> BisectOutput:
    matcher = bisect.Matcher(req.signature)
    user = series.parse_series(req.series)
    if not user:
        raise errors.InputError(f"series file {req.series} names no patch", path=str(req.series))
    t = target(with_profile(req.variant, case_run(req.case)))
    good = 0 if req.good is None else req.good
    bad = len(user) if req.bad is None else req.bad
    boot_, flood = flood_settings(req.case, req.flags)
    check_before_build(flood)                # before any build
    policy = req.policy
    bisect.check(len(user), good, bad, policy)      # before any folder is made

    def variant_for(k: int) -> kbuild.AnyVariant:
        return t.variant(user[:k])

    v0 = variant_for(0)
    ident = {"kernel": t.version, "series": [[p.digest(), p.strip] for p in user],
             "base": [p.digest() for p in v0.patches], "fragments": v0.fragments_digest(),
             "signature": req.signature, "good": good, "bad": bad, "policy": policy.to_json(),
             "flood": [flood.flood.pattern, flood.flood.rate, flood.duration, flood.cycle_hz,
                       flood.phys_hz], "cameras": flood.cameras, "seed": flood.seed}
    if t.checkout is not None:
        ident["tree"] = [str(t.checkout.path), t.checkout.commit, t.checkout.dirty]
    if flood.hotplug or flood.agent_args:
        ident["more"] = [flood.hotplug, flood.agent_args]
    digest = hashlib.sha256(json.dumps(ident, sort_keys=True).encode()).hexdigest()[:12]
    folder = req.run_dir or paths.sub("runs") / f"bisect-{t.name}-{digest}"
    folder.mkdir(parents=True, exist_ok=True)
    log_path = folder / "bisect.jsonl"
    if req.fresh:
        log_path.unlink(missing_ok=True)
    elif log_path.is_file():
        progress.note(f"[bisect] resuming from {log_path}")
    (folder / "bisect.json").write_text(json.dumps(ident, indent=1) + "\n")
    names = [p.name for p in user]
    progress.note(f"[bisect] {len(user)} patches, good end {good}, bad end {bad}, "
                  f"signature {req.signature!r}; folder {folder}")
    runner = FloodRunner(variant_for, matcher, boot_, flood, folder, progress,
                         jobs=req.variant.jobs, force=req.variant.force)
    res = bisect.bisect(runner, len(user), good, bad, policy, log=bisect.Log(log_path),
                        note=progress.note)
    culprit = None
    if res.culprit is not None:
        p = user[res.culprit - 1]
        culprit = {"number": res.culprit, "patch": p.name, "path": str(p.path),
                   "subject": series.subject(p)}
    where = pointing.point_at_code(res, user, matcher, runner.tree_for) if not res.error else None
    payload = {**res.to_json(), "command": "bisect", "ok": res.found, **t.to_json(),
               "signature": req.signature, "series": str(req.series), "patches": names,
               "folder": str(folder), "log": str(log_path), "culprit": culprit,
               "flood": settings.flood_json(flood), "policy": policy.to_json(), "where": where}
    jsonout.write(folder / "result.json", payload)
    return BisectOutput(res, names, payload, folder, log_path, where)


# --- bisect-run: one commit of the user's checkout -----------------------------------------

class Skip(Exception):
    """This commit cannot be tested: git bisect skips it (exit 125)."""

    def __init__(self, message: str, detail: str = ""):
        super().__init__(message)
        self.message = message
        self.detail = detail


@dataclass(frozen=True)
class CommitRequest:
    variant: VariantSpec                 # tree: the checkout; base_series: the detector
    signature: str
    flags: Mapping[str, Any]
    case: Path | None = None
    repro_chance: float = 0.8
    max_miss: float = 0.05
    runs: int = 6
    parallel: int = 2


@dataclass
class CommitResult:
    verdict: str                          # bisect.GOOD / BAD / SKIP
    reason: str
    payload: dict = field(default_factory=dict)


def test_commit(req: CommitRequest, progress: Progress, payload: dict, note) -> CommitResult:
    """Build the checkout's HEAD (a Skip when the commit cannot be built), flood, decide.

    ``payload`` is filled as facts become known, so a caller that stops on
    an error still reports what was learned.
    """
    matcher = bisect.Matcher(req.signature)
    t = target(with_profile(req.variant, case_run(req.case)))
    co = t.checkout
    assert co is not None
    payload.update({"tree": str(co.path), "commit": co.commit, "dirty": bool(co.dirty),
                    "kernel_version": co.version})
    boot_, flood = flood_settings(req.case, req.flags)
    check_before_build(flood)                # before any build
    variant = t.variant()
    payload["key"] = kbuild.variant_key(variant)
    try:
        initramfs.build_agent()
    except errors.BuildError as e:
        raise errors.EnvError(e.message, detail=e.detail) from None
    note(f"linux {co.version} in {co.path}; signature {req.signature!r}")
    t0 = time.monotonic()
    try:
        build = kbuild.build(variant, jobs=req.variant.jobs, progress=progress,
                             force=req.variant.force)
    except errors.BuildError as e:
        raise Skip(f"the kernel does not build: {e.message}", e.detail) from None
    except errors.ConfigError:          # the same for every commit: stop the bisection
        raise
    except errors.InputError as e:      # a patch that does not apply, an option that does not stick
        raise Skip(e.message, e.detail) from None
    note(("build: cached " if build.cached else f"build: {build.steps} make steps in "
          f"{fmt_duration(time.monotonic() - t0)}: ") + str(build.artifacts.dir))
    payload.update({"build": build.to_json(),
                    "detector_series": build.artifacts.meta.get("detector_series"),
                    "mirror": build.artifacts.meta.get("mirror")})
    folder = new_run_dir(f"bisect-run-{co.commit[:12]}")
    payload["run_dir"] = str(folder)
    policy = bisect.Policy(max_runs=req.runs, batch=req.parallel, min_hits=1,
                           max_miss=req.max_miss)
    runner = FloodRunner(lambda _k: variant, matcher, boot_, flood, folder,
                         Progress(quiet=True), jobs=req.variant.jobs, command="bisect-run",
                         name_fmt="run-{n}")
    runner.builds[0] = build
    runs: list[bisect.RunOutcome] = []
    while True:
        n = min(policy.batch, policy.max_runs - len(runs))
        first = len(runs) + 1
        tb = time.monotonic()
        batch = runner.run(0, len(runs), n)
        runs += batch
        c = bisect.counts(batch)
        note(f"runs {first}..{first + n - 1}: {c[bisect.HIT]} hit, {c[bisect.CLEAN]} clean, "
             f"{c[bisect.FAILED] + c[bisect.INFRA]} failed in {time.monotonic() - tb:.0f}s")
        verdict, reason = bisect.decide(runs, policy, req.repro_chance)
        if verdict:
            payload["runs"] = [r.to_json() for r in runs]
            return CommitResult(verdict, reason, payload)
