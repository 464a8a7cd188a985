"""`dmaharness check PATCH...`: what a patch brings in or takes out (issue #42).

For the patches given (files, or an mbox of a series as git am takes it):

1. the files each touches, the objects and Kconfig symbols they build into
   (harness.kernel.kmodules, from the tree's Makefiles) and how the harness
   reaches each (harness.devices.reach: the camera, shared code of a class,
   a catalogue entry, an ID table, or nothing);
2. the workload that reaches them: the fake camera (uvcvideo, USB core,
   the DMA layer) or the catalogue's QEMU devices (their [devices] table);
   a driver reached only by its own USB/HID ID table is named, and not run
   yet (the USB sweep's device for it is the next step of #42);
3. the verdict, as `run --case` gives it: a case made in the cache folder
   whose before is the tree without the patches and whose afters are the
   tree after each patch in turn (after-1, after-2, ...: the first after
   that shows a new report names the patch that brings it in), with no
   report expected fixed, so that any new report is the verdict; each
   patch's changes (``changes``) are what its after-K shows first, and the
   answer a maintainer can use is written from them
   (harness.output.checkreply: reply.txt in the run folder).

Nothing reachable is its own exit code (EXIT_UNREACHABLE), never a silent
"nothing changed".
"""

from __future__ import annotations

import hashlib
import re
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Optional

from .. import errors, files, paths
from ..devices import catalogue as catalogue_mod, reach as reach_mod
from ..kernel import kmodules, series
from ..pipeline import VariantSpec, target
from ..progress import Progress
from . import caserun, sweep

MAX_PATCHES = 50
UNREACHED = "nothing the patches touch is reached by a device of the harness"
_MAIL_START = re.compile(r"^From [0-9a-f]{40} ", re.M)


@dataclass(frozen=True)
class CheckRequest:
    patches: tuple[Path, ...]
    variant: VariantSpec
    flags: Mapping[str, Any]
    runs: int = 2
    parallel: int = 2
    run_dir: Optional[Path] = None
    catalogue: Optional[Path] = None


@dataclass(frozen=True)
class Touch:
    patch: str
    unit: kmodules.Unit
    reach: reach_mod.Reach

    def to_json(self) -> dict:
        return {"patch": self.patch, **self.unit.to_json(), "reach": self.reach.to_json()}


@dataclass(frozen=True)
class Plan:
    version: str
    patches: tuple[Path, ...]
    touches: tuple[Touch, ...]
    workload: str                   # "camera", "catalogue" or "none"
    devices: tuple[str, ...]        # the catalogue's entries, for "catalogue"
    left_out: tuple[str, ...]       # objects the workload does not reach, with why

    @property
    def reachable(self) -> bool:
        return self.workload != "none"

    def to_json(self) -> dict:
        return {"kernel": self.version, "patches": [str(p) for p in self.patches],
                "touched": [t.to_json() for t in self.touches], "workload": self.workload,
                "devices": list(self.devices), "left_out": list(self.left_out)}


def split(paths_: tuple[Path, ...], into: Path) -> tuple[Path, ...]:
    """The patches: each file as it is, an mbox of several mails (git
    format-patch --stdout) split into one file a mail, in order."""
    out: list[Path] = []
    for p in paths_:
        text = files.read_text(p, "patch")
        starts = [m.start() for m in _MAIL_START.finditer(text)]
        if len(starts) <= 1:
            out.append(files.resolve(p, "patch"))
            continue
        into.mkdir(parents=True, exist_ok=True)
        for i, a in enumerate(starts):
            b = starts[i + 1] if i + 1 < len(starts) else len(text)
            f = into / f"{len(out) + 1:04d}-{p.name}"
            f.write_text(text[a:b])
            # named as git format-patch names a mail: its number and subject
            slug = re.sub(r"[^A-Za-z0-9]+", "-", series.subject(series.Patch(f))).strip("-")
            if slug:
                f = f.rename(into / f"{len(out) + 1:04d}-{slug[:52]}.patch")
            out.append(f)
    if not out:
        raise errors.InputError("check: no patch given")
    if len(out) > MAX_PATCHES:
        raise errors.InputError(f"check: {len(out)} patches; at most {MAX_PATCHES} at once")
    return tuple(out)


# shared code whose class the camera reaches (its USB device, its button's
# HID and input device, its DMA mappings)
CAMERA_CLASSES = ("usb", "hid", "dma")


def _catalogue_devices(t: Touch, cat: catalogue_mod.Catalogue) -> tuple[str, ...]:
    """The catalogue devices that reach a touch: its entries, or for shared
    code of a catalogue class (virtio's core and ring) every entry of that
    class that boots beside others."""
    if t.reach.how == "catalogue":
        return t.reach.devices
    if t.reach.how == "class" and t.reach.devices[:1] == ("virtio",):
        return tuple(d.name for d in cat.devices
                     if d.klass == "virtio" and not d.skip and not d.alone)
    return ()


def _choose(touches: list[Touch], cat: catalogue_mod.Catalogue
            ) -> tuple[str, tuple[str, ...], tuple[str, ...]]:
    """The workload, its catalogue devices, and what it leaves out (with why)."""
    camera = [t for t in touches if t.reach.how == "camera"
              or (t.reach.how == "class" and t.reach.devices[:1] in
                  tuple((c,) for c in CAMERA_CLASSES))]
    by_cat = {id(t): _catalogue_devices(t, cat) for t in touches}
    devs = tuple(dict.fromkeys(d for t in touches for d in by_cat[id(t)]))
    if camera:
        workload, devices = "camera", ()
        reached = set(map(id, camera))
    elif devs:
        workload, devices = "catalogue", devs
        reached = {i for i, d in by_cat.items() if d}
    else:
        workload, devices, reached = "none", (), set()
    left = tuple(dict.fromkeys(
        f"{t.unit.module or t.unit.file}: {t.reach.detail}" for t in touches
        if id(t) not in reached))
    return workload, devices, left


def plan(req: CheckRequest, progress: Progress) -> Plan:
    t = target(req.variant)
    tree = sweep.source_tree(t, progress)
    pats = split(req.patches, paths.sub("checks") / "split" / _digest(req.patches))
    cat = catalogue_mod.load(req.catalogue)
    touches = []
    for p in pats:
        for u in kmodules.units(tree, series.Patch(p).touched_files()):
            touches.append(Touch(p.name, u, reach_mod.reach(tree, u, cat)))
    if not touches:
        raise errors.InputError(f"check: {', '.join(p.name for p in pats)} touch no file "
                                "(not a diff?)")
    workload, devices, left = _choose(touches, cat)
    return Plan(t.version, pats, tuple(touches), workload, devices, left)


def _digest(patches: tuple[Path, ...]) -> str:
    h = hashlib.sha256()
    for p in patches:
        h.update(files.read_bytes(p, "patch"))
    return h.hexdigest()[:16]


def case_text(p: Plan) -> str:
    """The case the check runs: before, then the tree after each patch."""
    lines = [f'name = "check-{_digest(p.patches)}"',
             f'description = "dmaharness check of {len(p.patches)} patch(es)"', ""]
    lines += ["[[variants]]", 'name = "before"', 'role = "before"', "patches = []", ""]
    for k in range(1, len(p.patches) + 1):
        names = ", ".join(f'"{x.name}"' for x in p.patches[:k])
        lines += ["[[variants]]", f'name = "after-{k}"', 'role = "after"',
                  f"patches = [{names}]", ""]
    if p.workload == "catalogue":
        lines += ["[devices]", "catalogue = [" + ", ".join(f'"{d}"' for d in p.devices) + "]",
                  ""]
    lines += ["[expect]", "fixed = []", ""]
    return "\n".join(lines)


def write_case(p: Plan) -> Path:
    folder = paths.sub("checks") / f"{p.version}-{_digest(p.patches)}"
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    for x in p.patches:
        shutil.copyfile(x, folder / x.name)
    (folder / "case.toml").write_text(case_text(p))
    return folder


def run(req: CheckRequest, p: Plan, progress: Progress) -> caserun.CaseResult:
    """The verdict: the check's case run as `run --case` runs one."""
    folder = write_case(p)
    return caserun.run_case(caserun.CaseRequest(folder, req.variant, req.flags, runs=req.runs,
                                                parallel=req.parallel, run_dir=req.run_dir,
                                                catalogue=req.catalogue), progress)


def format_plan(p: Plan) -> str:
    out = [f"check on linux {p.version}: {len(p.patches)} patch(es)"]
    for t in p.touches:
        u = t.unit
        out.append(f"  {u.file}")
        out.append(f"    builds   {u.module or '-'}"
                   + (f" ({u.symbol}{', with ' + u.part_symbol if u.part_symbol else ''})"
                      if u.symbol else " (built in)" if u.module else ""))
        out.append(f"    reached  {t.reach.how}: {t.reach.detail}")
    out.append(f"  workload {p.workload}" + (f": {', '.join(p.devices)}" if p.devices else ""))
    for why in p.left_out:
        out.append(f"  not run  {why}")
    return "\n".join(out)


@dataclass(frozen=True)
class Change:
    """A title a patch brings in ("new") or takes out ("fixed"), against the
    tree just before it: after-K against after-(K-1), before for K = 1."""
    patch: str
    status: str
    diff: Any                       # the harness.checks.diff.Diff the row comes from
    row: Any                        # its harness.checks.diff.Row


def changes(outcome, patches: tuple[Path, ...]) -> list[Change]:
    """Each after variant was diffed against before; a title is present on a
    side when some run of it shows it, so what patch K changes is what is
    present after it and not before it (brought in), or the reverse."""
    out: list[Change] = []
    comps = outcome.comparisons
    if not comps:
        return out
    rows_of = [{r.title: r for r in c.diff.rows} for c in comps]
    present = [{t for t, r in rows_of[0].items() if any(r.before_counts)}] + \
        [{t for t, r in rows.items() if any(r.after_counts)} for rows in rows_of]
    for k, comp in enumerate(comps, 1):
        name = patches[k - 1].name if k <= len(patches) else comp.diff.after_label
        for t in sorted(present[k] - present[k - 1]):
            out.append(Change(name, "new", comp.diff, rows_of[k - 1][t]))
        for t in sorted(present[k - 1] - present[k]):
            src = k - 1 if t in rows_of[k - 1] else k - 2
            out.append(Change(name, "fixed", comps[src].diff, rows_of[src][t]))
    return out


def verdict_lines(outcome, patches: tuple[Path, ...]) -> list[str]:
    """What each patch brings in or takes out."""
    ch = changes(outcome, patches)
    out = []
    for p in patches:
        mine = [c for c in ch if c.patch == p.name]
        if not mine:
            out.append(f"  {p.name}: nothing new, nothing taken out")
        out += [f"  {p.name}: {'brings in' if c.status == 'new' else 'takes out'}   "
                f"{c.row.title}" for c in mine]
    return out


def verdict_text(outcome, patches: tuple[Path, ...]) -> str:
    """The verdict block `check` and a check campaign's `collect` print."""
    return ("verdict (each patch against the tree before it):\n"
            + "\n".join(verdict_lines(outcome, patches)))
