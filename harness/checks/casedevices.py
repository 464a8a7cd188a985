"""A case that attaches device models of the sweep catalogue (``[devices] catalogue``).

Its kernel is the sweep kernel (harness.checks.sweep.sweep_target: the
detector series, the profile, the catalogue's subsystems and driver
fragments) with the variant's patches, so that a case's before variant is
the very kernel a sweep built and booted, and each after variant is an
incremental build of it.  Each boot attaches every device the case names
and runs their workloads (harness.devices.catalogue), as a sweep boots
one device; a workload that fails fails the run, since a fix that breaks
its driver is no fix.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from .. import errors, pipeline
from ..boot import qemu
from ..boot.settings import BootSettings
from ..devices import catalogue
from ..devices.catalogue import Catalogue, Device
from ..kernel import kbuild
from ..pipeline import Target, VariantSpec
from ..progress import Progress
from . import sweep
from .case import Case


@dataclass(frozen=True)
class CaseDevices:
    catalogue: Catalogue
    devices: tuple[Device, ...]
    absent: dict[str, str]          # entries whose driver this tree cannot build: why


def prepare(case: Case, spec: VariantSpec, catalogue_path: Optional[Path],
            progress: Progress) -> tuple[Target, CaseDevices]:
    """The case's sweep target and its devices; an entry the catalogue does
    not have is an error naming both files, before anything is built."""
    cat = catalogue.load(catalogue_path)
    known = cat.by_name()
    unknown = [n for n in case.catalogue if n not in known]
    if unknown:
        raise errors.InputError(f"{case.path}: devices.catalogue: {', '.join(map(repr, unknown))} "
                                f"not in the catalogue {cat.path} (it has "
                                f"{', '.join(sorted(known))})", path=str(case.path))
    if spec.series:
        raise errors.InputError(f"case {case.name} attaches catalogue devices: its kernel is the "
                                "sweep kernel with the case's patches; drop --series")
    # the kernel the case is written for (patches/<X.Y>/cases/NAME), before the
    # sweep target unpacks (or downloads) a source tree of the wrong one
    ver = case.folder.parent.parent.name if case.folder.parent.name == "cases" else None
    chosen = pipeline.target(spec)          # its version and series; nothing unpacked
    if ver and re.fullmatch(r"\d+\.\d+", ver) and ver != chosen.version:
        raise errors.InputError(f"case {case.folder} is for linux {ver}, not linux "
                                f"{chosen.version}: its devices are those of the {ver} sweep "
                                f"(catalogue {cat.path})", path=str(case.path))
    t, absent = sweep.sweep_target(spec, cat, progress)
    return t, CaseDevices(cat, tuple(known[n] for n in case.catalogue), absent)


def check_built(cd: CaseDevices, build: kbuild.BuildResult) -> None:
    """Every device of the case can boot with this kernel and this QEMU;
    otherwise the case cannot run, and says which device and why."""
    cfg = build.artifacts.config
    config = set(cfg.read_text().splitlines()) if cfg.is_file() else set()
    _, skipped = sweep.plan(cd.devices, cd.absent, catalogue.qemu_models(qemu.qemu_binary()),
                            config)
    if skipped:
        raise errors.InputError("the case's devices cannot run: " + "; ".join(
            f"{s.device}: {s.reason}" for s in skipped))


def boot(cd: CaseDevices, build: kbuild.BuildResult, folder: Path, boot_: BootSettings,
         progress: Progress) -> sweep.DeviceRun:
    """One boot with all the case's devices attached, their workloads run."""
    label = "+".join(d.name for d in cd.devices)
    return sweep.boot_devices(build, cd.catalogue, cd.devices, label, "case", folder, boot_, progress)
