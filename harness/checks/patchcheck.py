"""`dmaharness check PATCH...`: what a patch brings in or takes out (issue #42).

For the patches given (files, or an mbox of a series as git am takes it):

1. the files each touches, the objects and Kconfig symbols they build into
   (harness.kernel.kmodules, from the tree's Makefiles) and how the harness
   reaches each (harness.devices.reach: the camera, shared code of a class,
   a catalogue entry, an ID table, or nothing);
2. the workload that reaches them: the fake camera (uvcvideo, USB core,
   the DMA layer), the catalogue's QEMU devices (their [devices] table), or
   for USB and HID drivers a device served over usb-redir (``usb``): a
   shipped profile whose interface classes or IDs bind the driver, else a
   device made from the driver's own ID table (harness.devices.usbgen, from
   the before kernel's modules.alias) with the try a cached USB sweep bound
   it with, else its plan's first try; the kernel is the profile's with the
   device profiles' fragment and the driver's own Kconfig symbols
   (``kernel.config`` of the check's case); the device is flooded, its bulk
   IN reads answered, its nodes held open (harness.devices.usbdevices), and
   a driver the device did not bind in the before runs makes the check
   "not reached", never "unchanged";
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
import json
import tomllib
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Optional

from .. import errors, files, jsonout, paths
from ..devices import catalogue as catalogue_mod, reach as reach_mod, usbdevices, usbgen
from ..kernel import fragments, kbuild, kmodules, series
from .. import pipeline
from ..boot import settings
from ..boot.settings import BootSettings, FloodSettings
from ..devices.camera import Flood
from ..pipeline import VariantSpec, target
from ..progress import Progress
from . import case as case_mod, caserun, sweep, usbsweep

MAX_PATCHES = 50
UNREACHED = "nothing the patches touch is reached by a device of the harness"
_MAIL_START = re.compile(r"^From [0-9a-f]{40} ", re.M)
_DIFF = re.compile(r"^(?:diff --git |--- \S.*\n\+\+\+ )", re.M)


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
class UsbDevice:
    """The device that reaches a USB or HID driver in a check."""
    module: str                     # as the Makefile names it (cdc-acm)
    bus: str                        # usb or hid: the driver's ID table
    profile: Optional[str] = None   # a shipped profile that binds it; None: made from its table
    attempt: Optional[str] = None   # the try of its plan a cached USB sweep bound it with
    source: str = ""                # where the device comes from, in words

    @property
    def modules(self) -> tuple[str, ...]:
        """What the guest loads: the driver (under usbhid for a HID driver)."""
        return (self.module,) + (("usbhid",) if self.bus == "hid" else ())

    def to_json(self) -> dict:
        return {"module": self.module, "bus": self.bus, "profile": self.profile,
                "attempt": self.attempt, "source": self.source}


@dataclass(frozen=True)
class Plan:
    version: str
    patches: tuple[Path, ...]
    touches: tuple[Touch, ...]
    workload: str                   # "camera", "catalogue", "usb" or "none"
    devices: tuple[str, ...]        # the catalogue's entries, for "catalogue"
    left_out: tuple[str, ...]       # objects the workload does not reach, with why
    usb: tuple[UsbDevice, ...] = ()     # for "usb": a device a driver
    config: tuple[str, ...] = ()        # CONFIG_X=m the drivers need beyond the profile's
    depends: tuple[str, ...] = ()       # what those plainly depend on, asked best effort
    run: Mapping[str, Any] = field(default_factory=dict)   # a case's [run] table, as written
    from_case: str = ""                 # the in-tree case whose workload it is

    @property
    def reachable(self) -> bool:
        return self.workload != "none"

    def to_json(self) -> dict:
        return {"kernel": self.version, "patches": [str(p) for p in self.patches],
                "touched": [t.to_json() for t in self.touches], "workload": self.workload,
                "devices": list(self.devices), "left_out": list(self.left_out),
                "usb_devices": [d.to_json() for d in self.usb], "config": list(self.config),
                "config_depends": list(self.depends),
                "workload_from_case": self.from_case or None, "run": dict(self.run)}


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
            if not _DIFF.search(text[a:b]):
                line = text.count("\n", 0, a) + 1
                raise errors.InputError(f"check: {p}: mail {i + 1} of {len(starts)} (line "
                                        f"{line}) holds no diff: not a series as git "
                                        "format-patch --stdout writes one", path=str(p))
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


# the USB devices of one check: each is its own fake-uvc over usb-redir
MAX_USB_DRIVERS = 4


def _usb_touches(touches: list[Touch]) -> list[Touch]:
    """The touches a device made for their driver reaches: USB and HID
    drivers with an ID table, one touch per module, at most MAX_USB_DRIVERS."""
    out, seen = [], set()
    for t in touches:
        m = t.unit.module
        if t.reach.how == "id-table" and m and _norm(m) not in seen \
                and len(seen) < MAX_USB_DRIVERS:
            seen.add(_norm(m))
            out.append(t)
    return out


def _norm(name: str) -> str:
    return name.replace("-", "_")


def _choose(touches: list[Touch], cat: catalogue_mod.Catalogue
            ) -> tuple[str, tuple[str, ...], tuple[str, ...]]:
    """The workload, its catalogue devices, and what it leaves out (with why)."""
    camera = [t for t in touches if t.reach.how == "camera"
              or (t.reach.how == "class" and t.reach.devices[:1] in
                  tuple((c,) for c in CAMERA_CLASSES))]
    by_cat = {id(t): _catalogue_devices(t, cat) for t in touches}
    devs = tuple(dict.fromkeys(d for t in touches for d in by_cat[id(t)]))
    usb = _usb_touches(touches)
    if camera:
        workload, devices = "camera", ()
        reached = set(map(id, camera))
    elif devs:
        workload, devices = "catalogue", devs
        reached = {i for i, d in by_cat.items() if d}
    elif usb:
        workload, devices = "usb", ()
        mods = {_norm(t.unit.module) for t in usb}
        reached = {id(t) for t in touches if t.unit.module and _norm(t.unit.module) in mods}
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
    run, from_case = {}, ""
    found = workload_case(t.version, pats)
    if found is not None and workload in ("camera", "catalogue"):
        case, raw = found
        if (workload == "catalogue") == bool(case.catalogue):
            run, from_case = raw, case.name
            devices = case.catalogue or devices
    usb: tuple[UsbDevice, ...] = ()
    config: tuple[str, ...] = ()
    depends: tuple[str, ...] = ()
    if workload == "usb":
        usb = tuple(usb_device(x, t.version) for x in _usb_touches(touches))
        config, depends = _config(tree, t.version, _usb_touches(touches), t.frags
                                  + (fragments.parse_fragment(usbdevices.FRAGMENT),))
    return Plan(t.version, pats, tuple(touches), workload, devices, left, usb, config,
                depends if workload == "usb" else (), run, from_case)


# [run] settings a case's own folder gives meaning to: not carried over
_CASE_LOCAL = ("devices", "capture", "usb_host")


def workload_case(version: str, patches: tuple[Path, ...]
                  ) -> Optional[tuple[case_mod.Case, dict[str, Any]]]:
    """The in-tree case (patches/<version>/cases/*) one of whose variants
    applies one of these patches (the same diff: harness.kernel.series.Patch
    .digest), and its [run] table as written: a fix for a deadlock the
    default workload never provokes is checked under the workload its case
    found it with.  None when no case has one of them."""
    want = {series.Patch(p).digest() for p in patches}
    for toml in sorted((paths.REPO / "patches" / version / "cases").glob("*/case.toml")):
        try:
            case = case_mod.load_case(toml)
            raw = tomllib.loads(toml.read_text()).get("run") or {}
        except (errors.HarnessError, tomllib.TOMLDecodeError, OSError):
            continue
        if any(x.digest() in want for v in case.variants for x in v.patches):
            return case, {k: v for k, v in raw.items() if k not in _CASE_LOCAL}
    return None


def usb_device(t: Touch, version: str) -> UsbDevice:
    """The device for a touched USB/HID driver: a shipped profile that binds
    it, else one made from its ID table at run time, with the try a cached
    USB sweep of this kernel bound it with when there is one."""
    mod, bus = t.unit.module or "", (t.reach.devices or ("usb",))[0]
    shipped = usbdevices.shipped_for(mod)
    if shipped:
        return UsbDevice(mod, bus, profile=shipped,
                         source=f"the shipped profile {shipped} (its interfaces bind {mod})")
    attempt, where = sweep_try(version, mod)
    if attempt:
        return UsbDevice(mod, bus, attempt=attempt,
                         source=f"made from {mod}'s own {bus} ID table, try {attempt} (it "
                         f"bound {mod} in the USB sweep {where})")
    return UsbDevice(mod, bus, source=f"made from {mod}'s own {bus} ID table, its plan's "
                     "first try (no cached USB sweep of this kernel bound it: "
                     "`dmaharness sweep --usb-drivers --drivers " + _norm(mod) + "` finds one)")


def sweep_try(version: str, module: str) -> tuple[Optional[str], str]:
    """The try the newest cached USB sweep of `version` bound `module` with
    (its usb-sweep.json under <cache>/runs), and that file; (None, "")."""
    found = sorted(paths.sub("runs").glob("*usbsweep*/usb-sweep.json"),
                   key=lambda f: f.stat().st_mtime, reverse=True)
    for f in found[:50]:
        try:
            data = json.loads(files.read_text(f, "USB sweep result"))
        except (ValueError, errors.HarnessError):
            continue
        if not isinstance(data, dict) or data.get("kernel") != version:
            continue
        for d in data.get("drivers") or []:
            if isinstance(d, dict) and _norm(str(d.get("module"))) == _norm(module) \
                    and isinstance(d.get("bound_with"), str):
                return d["bound_with"], str(f)
    return None, ""


def _config(tree: Path, version: str, touches: list[Touch], frags
            ) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The drivers' own symbols (and the symbols that add the touched files
    to them) that the kernel's fragments do not set already, with what
    they plainly depend on (harness.kernel.fragments.needed) and a cached
    kernel of this version lacks."""
    asked = {o for f in frags for o, v in f.options if v in ("y", "m")}
    want: dict[str, str] = {}
    for t in touches:
        u = t.unit
        for sym in (u.symbol, u.part_symbol):
            # the driver's own symbols: unless the fragments ask for them (a
            # cached kernel that has them may be a check's own, with its config)
            if sym and sym not in asked and sym not in want:
                # a tristate with a prompt as a module; anything else (a bool
                # that adds a file to the module) as y: what does not stick
                # fails the build and says why
                want[sym] = "m" if u.settable and sym == u.symbol else "y"
    if not want:
        return (), ()
    need = fragments.needed(tree, want, asked | _reference(version))
    # the drivers' own symbols must stick; their dependencies are asked best
    # effort (a tristate asked as m may end up y: DVB_CORE under smsusb)
    return (tuple(f"{k}={v}" for k, v in want.items()),
            tuple(f"{k}={v}" for k, v in need.items() if k not in want))


def _reference(version: str) -> set[str]:
    """The symbols set (y or m) in the newest cached kernel of `version`
    built with the device profiles' fragment (else of any kernel of it) and
    no case's kernel.config: what the check's kernel will have without being
    asked, for the dependencies (fragments.needed) only."""
    metas = sorted(paths.sub("artifacts").glob(f"{version}-*/meta.json"),
                   key=lambda f: f.stat().st_mtime, reverse=True)[:200]
    # not a kernel a case's kernel.config made (a check's own): only what
    # the profile and the fragments give every kernel
    names = {}
    for m in metas:
        try:
            names[m] = {str(f[0]) for f in json.loads(m.read_text()).get("fragments") or []}
        except (OSError, ValueError, TypeError, IndexError):
            continue
    metas = [m for m in names if "kernel" not in names[m]]
    usb = [m for m in metas if usbdevices.FRAGMENT.stem in names[m]]
    for m in (usb or metas)[:1]:
        cfg = m.with_name("config")
        if cfg.is_file():
            return {k for k, v in fragments.read_config(cfg.read_text(errors="replace")).items()
                    if v in ("y", "m")}
    return set()


def _digest(patches: tuple[Path, ...]) -> str:
    h = hashlib.sha256()
    for p in patches:
        h.update(files.read_bytes(p, "patch"))
    return h.hexdigest()[:16]


# the USB workload's run settings: as the USB sweep floods its devices
# (harness.checks.usbsweep), a little longer
USB_RUN = {"flood": "control:200", "bulk_in": "random", "duration": "10s", "exercise": True}


def _toml_list(xs) -> str:
    return "[" + ", ".join(json.dumps(x) for x in xs) + "]"


def _toml_value(v: Any) -> str:
    """A [run] value as TOML: a case's table holds strings, numbers,
    booleans and lists of strings (harness.boot.settings)."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, list):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    return json.dumps(str(v))


def case_text(p: Plan, made: Optional[Mapping[str, str]] = None) -> str:
    """The case the check runs: before, then the tree after each patch.
    ``made``: the file name of each USB driver's device made from its ID
    table, by module (None: not made yet, the case attaches no device)."""
    lines = [f'name = "check-{_digest(p.patches)}"',
             f'description = "dmaharness check of {len(p.patches)} patch(es)"', ""]
    if p.run:
        lines += ["[run]"] + [f"{k} = {_toml_value(v)}" for k, v in p.run.items()] + [""]
    if p.workload == "usb":
        if made is not None:
            devs = [d.profile or made[d.module] for d in p.usb]
            mods = [m for d in p.usb if d.profile is None for m in d.modules]
            lines += ["[run]"] + [f"{k} = {_toml_value(v)}" for k, v in USB_RUN.items()]
            lines += [f"devices = {_toml_list(devs)}"]
            lines += [f"modules = {_toml_list(mods)}"] if mods else []
            lines += [""]
        if p.config:
            lines += ["[kernel]", f"config = {_toml_list(p.config)}"]
            lines += [f"depends = {_toml_list(p.depends)}"] if p.depends else []
            lines += [""]
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


def write_case(p: Plan, made: Optional[Mapping[str, str]] = None,
               texts: Mapping[str, str] = {}) -> Path:
    """The check's case folder in the cache: its patches, the devices made
    for it (``texts``: file name -> profile text) and case.toml."""
    folder = paths.sub("checks") / f"{p.version}-{_digest(p.patches)}"
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    for x in p.patches:
        shutil.copyfile(x, folder / x.name)
    for name, text in texts.items():
        jsonout.write_text(folder / name, text)
    if made is None and not any(d.profile is None for d in p.usb):
        made = {}
    (folder / "case.toml").write_text(case_text(p, made))
    return folder


def _driver_plans(p: Plan, build: kbuild.BuildResult) -> dict[str, usbgen.DriverPlan]:
    """The plan (harness.devices.usbgen) of each driver without a shipped
    profile, from the built kernel's modules.alias; an error when one has
    nothing to try."""
    alias = usbgen.find_alias(Path(build.artifacts.modules))
    plans = {_norm(x.module): x for x in usbgen.plan(usbgen.parse_aliases(
        alias.read_text(errors="replace"), str(alias)))}
    out = {}
    for d in p.usb:
        if d.profile is not None:
            continue
        dp = plans.get(_norm(d.module))
        if dp is None or dp.match is None or not dp.tries:
            why = dp.reason if dp is not None else f"not in {alias}"
            raise errors.InputError(f"check: {d.module}: no device can be made from its ID "
                                    f"table ({why})", path=str(alias))
        out[d.module] = dp
    return out


# a probe boot: each try of each driver as its own device, a few seconds
PROBE_SECONDS = 4.0


def probe_tries(plans: dict[str, usbgen.DriverPlan], build: kbuild.BuildResult,
                folder: Path, boot: BootSettings, progress: Progress) -> dict[str, str]:
    """The first try of each driver's plan that binds it, found as the USB
    sweep finds it but in one go: every try a device of its own (8 a
    boot), on the check's before kernel, for PROBE_SECONDS.  Drivers no
    try binds are left out (the check then says they were not bound)."""
    todo = [(m, t) for m, dp in plans.items() for t in dp.tries]
    found: dict[str, str] = {}
    for b in range(0, len(todo), 8):
        batch = [(m, t) for m, t in todo[b:b + 8] if m not in found]
        if not batch:
            continue
        where = folder / f"probe-{b // 8 + 1}"
        files_ = []
        for i, (m, t) in enumerate(batch):
            f = where / "profiles" / f"{_norm(m)}-{t.replace(':', '-')}.profile"
            f.parent.mkdir(parents=True, exist_ok=True)
            jsonout.write_text(f, usbgen.device_text(plans[m], t, usbdevices.PROFILES_DIR,
                                                     open_pid=0x1000 + i))
            files_.append(str(f))
        mods = tuple(dict.fromkeys(x for m, _ in batch for x in (
            (m, "usbhid") if plans[m].match.bus == "hid" else (m,))))
        progress.note(f"[check] probe boot {b // 8 + 1}: {len(batch)} tries of "
                      f"{', '.join(dict.fromkeys(m for m, _ in batch))}")
        fr = pipeline.flood_once(pipeline.FloodJob(
            build, where, boot, FloodSettings(flood=Flood(rate="200"), duration=PROBE_SECONDS,
                                              devices=tuple(files_), bulk_in="random"),
            "check", modules=mods), progress)
        devs = fr.payload.get("devices") or []
        for i, (m, t) in enumerate(batch):
            if m not in found and i < len(devs) and _norm(m) in usbsweep.drivers_of(devs[i]):
                found[m] = t
    return found


def made_devices(p: Plan, plans: dict[str, usbgen.DriverPlan], tries: Mapping[str, str]
                 ) -> dict[str, tuple[str, str]]:
    """Each driver without a shipped profile: the file name and text of its
    device, with the try that binds it (`tries`: a cached sweep's or a
    probe's), else its plan's first."""
    out = {}
    for i, d in enumerate(x for x in p.usb if x.profile is None):
        dp = plans[d.module]
        attempt = next((a for a in (tries.get(d.module), d.attempt) if a in dp.tries),
                       dp.tries[0])
        name = f"{_norm(d.module)}-{attempt.replace(':', '-')}.profile"
        out[d.module] = (name, usbgen.device_text(dp, attempt, usbdevices.PROFILES_DIR,
                                                  open_pid=0x1000 + i))
    return out


def run(req: CheckRequest, p: Plan, progress: Progress
        ) -> tuple[caserun.CaseResult, dict[str, str]]:
    """The verdict: the check's case run as `run --case` runs one, and the
    tries a probe boot found (module -> try).  A USB driver's device made
    from its ID table needs the before kernel's modules.alias: that kernel
    is built first (the case's run reuses it)."""
    made: dict[str, tuple[str, str]] = {}
    tries: dict[str, str] = {}
    if any(d.profile is None for d in p.usb):
        folder = write_case(p)
        creq = caserun.CaseRequest(folder, req.variant, req.flags, catalogue=req.catalogue)
        t = caserun.case_target(creq, progress, usb=True)
        b = kbuild.build(t.variant(()), jobs=req.variant.jobs, progress=progress,
                         force=req.variant.force)
        plans = _driver_plans(p, b)
        # a driver no cached sweep bound: a probe boot finds the try that binds it
        unknown = {m: dp for m, dp in plans.items()
                   if not any(d.module == m and d.attempt in dp.tries for d in p.usb)}
        tries = probe_tries(unknown, b, pipeline.new_run_dir(f"check-probe-{p.version}"),
                            settings.resolve(req.flags)[0], progress) if unknown else {}
        made = made_devices(p, plans, tries)
    folder = write_case(p, {m: n for m, (n, _) in made.items()} if p.usb else None,
                        dict(made.values()))
    return caserun.run_case(caserun.CaseRequest(folder, req.variant, req.flags, runs=req.runs,
                                                parallel=req.parallel, run_dir=req.run_dir,
                                                catalogue=req.catalogue), progress), tries


def _ran(console: str, module: str) -> bool:
    """Did the driver run in this boot: a kernel line of its own
    ("smsusb:smsusb_probe: ...", "ums-usbat 1-1:1.0: ..."), or a frame of a
    report in its module ("[smsusb]")?"""
    names = {module, module.replace("-", "_"), module.replace("_", "-")}
    alt = "|".join(map(re.escape, sorted(names)))
    return bool(re.search(rf"(?m)^\[\s*[\d.]+\]\s*(?:{alt})[: ]|\[(?:{alt})\]", console))


def unbound(p: Plan, folder: Path) -> tuple[list[str], list[str]]:
    """The USB drivers their device did not reach in any before run: not
    bound (its result.json: the drivers of the device's interfaces and HID
    devices) and no kernel line of theirs; and, as notes, those that ran but
    did not stay bound (a probe that failed: its error paths are reached)."""
    results, consoles = [], []
    for f in sorted(folder.glob("before-*/result.json")):
        try:
            results.append(json.loads(files.read_text(f, "run result")))
        except (ValueError, errors.HarnessError):
            continue
        c = f.with_name("console.log")
        consoles.append(c.read_text(errors="replace") if c.is_file() else "")
    missed, notes = [], []
    for i, d in enumerate(p.usb):
        devs = [(r.get("devices") or [])[i] for r in results
                if isinstance(r, dict) and len(r.get("devices") or []) > i]
        if any(_norm(d.module) in usbsweep.drivers_of(x) for x in devs if isinstance(x, dict)):
            continue
        if any(_ran(c, d.module) for c in consoles):
            sysname = next((x.get("sysname") for x in devs if isinstance(x, dict)), None)
            why = usbsweep.why_unbound(consoles[0], d.module, sysname) if consoles else ""
            notes.append(f"{d.module}: ran, and did not stay bound ({why})")
            continue
        seen = sorted({n for x in devs if isinstance(x, dict) for n in usbsweep.drivers_of(x)}
                      - {"none"})
        missed.append(f"{d.module}: its device ({d.source}) did not bind it in the before runs"
                      + (f" (bound: {', '.join(seen)})" if seen else
                         " (no interface took it)" if devs else " (no run result)"))
    return missed, notes


def format_plan(p: Plan) -> str:
    out = [f"check on linux {p.version}: {len(p.patches)} patch(es)"]
    for t in p.touches:
        u = t.unit
        out.append(f"  {u.file}")
        out.append(f"    builds   {u.module or '-'}"
                   + (f" ({u.symbol}{', with ' + u.part_symbol if u.part_symbol else ''})"
                      if u.symbol else " (built in)" if u.module else ""))
        out.append(f"    reached  {t.reach.how}: {t.reach.detail}")
    out.append(f"  workload {p.workload}" + (f": {', '.join(p.devices)}" if p.devices else "")
               + (f" (the run settings of case {p.from_case}, which applies this patch)"
                  if p.from_case else ""))
    for d in p.usb:
        out.append(f"  device   {d.module}: {d.source}")
    if p.config:
        out.append(f"  config   {' '.join(p.config)} (beyond the profile and the device "
                   "profiles' fragment)")
    if p.depends:
        out.append(f"  depends  {' '.join(p.depends)} (what they plainly depend on, asked "
                   "best effort)")
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
