"""Case files: a before variant, one or more after variants, an expectation.

A case lives in ``patches/<ver>/cases/<name>/case.toml``; its patches are
named relative to that folder.  The format (every key not marked optional
is required; any other key is an error)::

    name = "uvc-status-buffer"
    description = "..."                 # optional
    seed = "a31a4055473b"                # optional: the upstream commit
    [run]                                # optional: any run setting (below)
    flood = "control:100"                # pattern[:rate], as `run --flood`
    duration = "10s"                     # as `run --duration`
    cycle_hz = 2                         # agent close/open cycles per second
    phys_hz = 200                        # agent EVIOCGPHYS reads per second
    [[variants]]
    name = "before"
    role = "before"                      # exactly one "before"
    patches = ["0001-x.patch"]           # in order, relative to the folder
    [[variants]]
    name = "fix"
    role = "after"                       # one or more "after"
    patches = ["0001-x.patch", "fix/0002-y.patch"]
    [devices]                            # optional: instead of the cameras
    catalogue = ["virtio-scsi"]          # sweep catalogue entries, with their workloads
    [kernel]                             # optional: options beyond the profile's
    config = ["CONFIG_USB_SERIAL_FTDI_SIO=m"]   # CONFIG_NAME=y|m|n, each must stick
    depends = ["CONFIG_USB_SERIAL=m"]    # optional: asked first, best effort
    [expect]
    fixed = ["^DMA-API: .* in uvc_status_start$"]
    new_allowed = []                     # optional
    sites = ["virtscsi_kick_event sharing kmalloc-4k+2168:16 DMA_FROM_DEVICE"]  # optional

``[run]`` takes every setting of :mod:`harness.boot.settings` that a case may
fix (flood, duration, cycle_hz, phys_hz, cameras, hotplug, seed,
agent_args, smp, memory, append, qemu_opts, timeout, silence), spelled as
the flag without its dashes and with ``_`` for ``-``; a setting it leaves
out keeps its default, and a flag given on the command line wins over it.
Patches must stay inside the case's folder.

What a case attaches: by default the fake cameras under the flood (the
``[run]`` settings above), or USB device profiles (``run.devices``);
with ``[devices] catalogue``, QEMU device models of the sweep's catalogue
(harness.devices.catalogue): each boot attaches them all and runs their
workloads, the kernel is the sweep kernel (the catalogue's drivers
built in) with the variant's patches, and a workload that fails fails
the run (the fix must not break the driver).  The camera settings do not
apply to such a case and are refused in its ``[run]``.

``kernel.config`` asks the case's kernel for options its profile does not
set (a driver the case's devices need): a fragment made of them goes after
the profile's (and after the device profiles' fragment, which a case with
``run.devices`` gets as `run --usb-device` does); an option that does not stick
fails the build and says why, as any fragment's would.

``expect.sites`` names sweep sites (the keys of ``dmaharness sweep``'s
table, harness.checks.sitekeys; ``*`` matches any text, for an offset
that moves with the configuration): each must be in every before run and
in no after run.

``expect.fixed`` and ``expect.new_allowed`` are Python regular expressions
searched (``re.search``) in report titles; anchor them with ``^``/``$`` to
match whole titles.  Every problem raises :class:`harness.errors.InputError`
naming the file and the key.
"""

from __future__ import annotations

import os
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import files, paths
from ..errors import InputError
from ..kernel.series import Patch
from ..boot import settings
from ..devices import usbdevices

CASE_FILE = "case.toml"
ROLES = ("before", "after")

_TOP_KEYS = {"name": True, "description": False, "seed": False, "run": False,
             "devices": False, "kernel": False, "variants": True, "expect": True}
_KERNEL_KEYS = {"config": True, "depends": False}
CONFIG_OPTION = re.compile(r"CONFIG_[A-Z0-9_]{1,100}=[ymn]")
MAX_CONFIG = 64
_DEVICES_KEYS = {"catalogue": True}
_VARIANT_KEYS = {"name": True, "role": True, "patches": True}
_EXPECT_KEYS = {"fixed": True, "new_allowed": False, "sites": False}


@dataclass(frozen=True)
class CaseVariant:
    name: str
    role: str                      # "before" or "after"
    patches: tuple[Patch, ...]     # absolute paths, in order


@dataclass(frozen=True)
class Expect:
    fixed: tuple[re.Pattern[str], ...]
    new_allowed: tuple[re.Pattern[str], ...] = ()
    sites: tuple[str, ...] = ()    # sweep site keys: in every before run, in no after run


@dataclass(frozen=True)
class Case:
    name: str
    description: str
    seed: str
    path: Path                      # the case.toml file, absolute
    run: dict[str, Any]             # the [run] table's settings, typed (harness.boot.settings)
    variants: tuple[CaseVariant, ...]
    expect: Expect
    catalogue: tuple[str, ...] = ()   # [devices] catalogue: sweep catalogue entries
    config: tuple[str, ...] = ()      # [kernel] config: CONFIG_X=y|m|n beyond the profile
    depends: tuple[str, ...] = ()     # [kernel] depends: asked, best effort (what config needs)

    @property
    def folder(self) -> Path:
        return self.path.parent

    @property
    def before(self) -> CaseVariant:
        return next(v for v in self.variants if v.role == "before")

    @property
    def afters(self) -> list[CaseVariant]:
        return [v for v in self.variants if v.role == "after"]

    def variant(self, name: str) -> CaseVariant:
        for v in self.variants:
            if v.name == name:
                return v
        raise InputError(f"{self.path}: case {self.name!r} has no variant {name!r} "
                         f"(it has {', '.join(v.name for v in self.variants)})",
                         path=str(self.path))


def _err(path: Path, key: str, what: str) -> InputError:
    return InputError(f"{path}: {key}: {what}", path=str(path))


def _check_keys(path: Path, where: str, table: Any, spec: dict) -> None:
    if not isinstance(table, dict):
        raise _err(path, where or "(top level)", "must be a table")
    prefix = f"{where}." if where else ""
    for k in table:
        if k not in spec:
            raise _err(path, prefix + k, f"unknown key (known: {', '.join(spec)})")
    for k, required in spec.items():
        if required is True and k not in table:
            raise _err(path, prefix + k, "missing")


def _string(path: Path, key: str, value: Any, *, empty_ok: bool = False) -> str:
    if not isinstance(value, str):
        raise _err(path, key, f"must be a string, not {type(value).__name__}")
    if not empty_ok and not value.strip():
        raise _err(path, key, "must not be empty")
    return value


def _strings(path: Path, key: str, value: Any) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise _err(path, key, "must be a list of strings")
    return value


def _regexes(path: Path, key: str, value: Any) -> tuple[re.Pattern[str], ...]:
    out = []
    for i, text in enumerate(_strings(path, key, value)):
        try:
            out.append(re.compile(text))
        except re.error as e:
            raise _err(path, f"{key}[{i}]", f"bad regular expression {text!r}: {e}") from None
    return tuple(out)


def _run(path: Path, table: Any) -> dict[str, Any]:
    if table is None:
        return {}
    _check_keys(path, "run", table, {k: False for k in settings.CASE_KEYS})
    try:
        run = settings.check(table, where="run.")
    except InputError as e:
        raise InputError(f"{path}: {e.message}", path=str(path)) from None
    if "devices" in run:
        run["devices"] = tuple(_device(path, f"run.devices[{i}]", d)
                               for i, d in enumerate(run["devices"]))
    return run


def _device(path: Path, key: str, spec: str) -> str:
    """A case's USB device profile: a shipped profile's name, or a file of
    the case's own folder (as its patches are), made absolute."""
    if re.fullmatch(r"[a-z0-9][a-z0-9-]{0,100}", spec) and \
            os.path.isfile(usbdevices.PROFILES_DIR / f"{spec}.profile"):
        return spec
    folder = path.parent
    if Path(spec).is_absolute():
        raise _err(path, key, f"{spec!r}: a shipped profile's name, or a profile file "
                   f"relative to {folder}")
    target = files.resolve(folder / spec, f"{path}: {key}")
    if folder.resolve() not in target.parents:
        raise _err(path, key, f"{spec!r} is outside the case's folder {folder}: a case names "
                   "only its own profiles")
    files.check_file(target, f"{path}: {key}: profile")
    return str(target)


def _variants(path: Path, value: Any) -> tuple[CaseVariant, ...]:
    if not isinstance(value, list) or not value:
        raise _err(path, "variants", "must be a non-empty array of tables ([[variants]])")
    folder = path.parent
    seen: set[str] = set()
    out = []
    for i, t in enumerate(value):
        where = f"variants[{i}]"
        _check_keys(path, where, t, _VARIANT_KEYS)
        name = _string(path, f"{where}.name", t["name"])
        if not paths.is_safe_name(name):
            raise _err(path, f"{where}.name", f"{name!r}: use letters, digits, '.', '_' and '-' "
                       "(starting with a letter or a digit, at most 128)")
        if name in seen:
            raise _err(path, f"{where}.name", f"duplicate variant name {name!r}")
        seen.add(name)
        role = _string(path, f"{where}.role", t["role"])
        if role not in ROLES:
            raise _err(path, f"{where}.role", f"{role!r} is not one of {', '.join(ROLES)}")
        patches = []
        for j, rel in enumerate(_strings(path, f"{where}.patches", t["patches"])):
            key = f"{where}.patches[{j}]"
            if not rel.strip() or Path(rel).is_absolute():
                raise _err(path, key, f"{rel!r}: name a patch relative to {folder}")
            target = files.resolve(folder / rel, f"{path}: {key}")
            if folder.resolve() not in target.parents:
                raise _err(path, key, f"{rel!r} is outside the case's folder {folder}: a case "
                           "names only its own patches")
            if not os.path.isfile(target):
                raise _err(path, key, f"patch {rel} does not exist (looked for {target})")
            patches.append(Patch(target, 1, f"{path}:{key}"))
        out.append(CaseVariant(name, role, tuple(patches)))
    befores = [v.name for v in out if v.role == "before"]
    if len(befores) != 1:
        raise _err(path, "variants", f"exactly one variant needs role = \"before\" "
                   f"(found {len(befores)}{': ' + ', '.join(befores) if befores else ''})")
    if not any(v.role == "after" for v in out):
        raise _err(path, "variants", "no variant has role = \"after\"")
    return tuple(out)


def _expect(path: Path, table: Any) -> Expect:
    _check_keys(path, "expect", table, _EXPECT_KEYS)
    fixed = _regexes(path, "expect.fixed", table["fixed"])
    allowed = _regexes(path, "expect.new_allowed", table.get("new_allowed", []))
    sites = _strings(path, "expect.sites", table.get("sites", []))
    for i, key in enumerate(sites):
        if len(key.split()) != 4:
            raise _err(path, f"expect.sites[{i}]", f"{key!r} is not a site key (FUNCTION RULE "
                       "CACHE+OFFSET:LENGTH DIRECTION, as `dmaharness sweep` prints it)")
    return Expect(fixed, allowed, tuple(sites))


# the [run] settings that drive the cameras and the agent: a case that
# attaches catalogue devices runs their workloads instead
CAMERA_SETTINGS = ("flood", "cycle_hz", "phys_hz", "cameras", "hotplug", "seed", "agent_args",
                   "fail_nth", "fail_nth_max", "devices", "capture", "usb_host")


def _devices(path: Path, table: Any, run: dict[str, Any]) -> tuple[str, ...]:
    if table is None:
        return ()
    _check_keys(path, "devices", table, _DEVICES_KEYS)
    names = _strings(path, "devices.catalogue", table["catalogue"])
    if not names:
        raise _err(path, "devices.catalogue", "must name at least one entry of the catalogue")
    for i, n in enumerate(names):
        if not paths.is_safe_name(n):
            raise _err(path, f"devices.catalogue[{i}]", f"{n!r} is not a catalogue entry's name")
    if len(set(names)) != len(names):
        raise _err(path, "devices.catalogue", "names an entry twice")
    clash = [k for k in CAMERA_SETTINGS if k in run]
    if clash:
        raise _err(path, f"run.{clash[0]}", "a case with [devices] catalogue runs the entries' "
                   "workloads, not the cameras: drop " + ", ".join(f"run.{k}" for k in clash))
    return tuple(names)


def _kernel(path: Path, table: Any) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """[kernel] config and depends (each CONFIG_NAME=y|m|n, no name twice)."""
    if table is None:
        return (), ()
    _check_keys(path, "kernel", table, _KERNEL_KEYS)
    out = []
    for key in ("config", "depends"):
        opts = _strings(path, f"kernel.{key}", table.get(key, []))
        if len(opts) > MAX_CONFIG:
            raise _err(path, f"kernel.{key}", f"{len(opts)} options; at most {MAX_CONFIG}")
        for i, o in enumerate(opts):
            if not CONFIG_OPTION.fullmatch(o):
                raise _err(path, f"kernel.{key}[{i}]", f"{o[:120]!r} is not CONFIG_NAME=y|m|n")
        out.append(tuple(opts))
    names = [o.split("=")[0] for o in out[0] + out[1]]
    if len(set(names)) != len(names):
        raise _err(path, "kernel", "names an option twice")
    return out[0], out[1]


def config_fragment_text(case: Case, depends: bool = False) -> str:
    """The fragment of a case's kernel.config (a `# CONFIG_X is not set` for
    n), or of its kernel.depends: best effort (harness.kernel.fragments: asked,
    not required to stick; a dependency asked as m may end up y)."""
    opts = case.depends if depends else case.config
    lines = ([f"# best-effort: kernel.depends of case {case.name} ({case.path})"] if depends
             else [f"# kernel.config of case {case.name} ({case.path})"])
    lines += [f"# {o[:-2]} is not set" if o.endswith("=n") else o for o in opts]
    return "\n".join(lines) + "\n"


def load_case(path: Path | str) -> Case:
    """Read and validate a case file (or the folder holding case.toml)."""
    path = files.resolve(path, "case")
    if path.is_dir():
        path = path / CASE_FILE
    if not path.exists():
        raise InputError(f"case file {path} does not exist", path=str(path))
    try:
        data = tomllib.loads(files.read_text(path, "case file"))
    except tomllib.TOMLDecodeError as e:
        raise InputError(f"{path}: not valid TOML: {e}", path=str(path)) from None
    except RecursionError:              # arrays or tables nested thousands deep
        raise InputError(f"{path}: not valid TOML: nested too deeply", path=str(path)) from None
    _check_keys(path, "", data, _TOP_KEYS)
    name = _string(path, "name", data["name"])
    if not paths.is_safe_name(name):          # it names the case's run folders
        raise _err(path, "name", f"{name!r}: use letters, digits, '.', '_' and '-' "
                   "(starting with a letter or a digit, at most 128)")
    description = _string(path, "description", data.get("description", ""), empty_ok=True)
    seed = _string(path, "seed", data.get("seed", ""), empty_ok=True)
    run = _run(path, data.get("run"))
    kernel = _kernel(path, data.get("kernel"))
    return Case(name=name, description=description, seed=seed, path=path, run=run,
                variants=_variants(path, data["variants"]), expect=_expect(path, data["expect"]),
                catalogue=_devices(path, data.get("devices"), run),
                config=kernel[0], depends=kernel[1])
