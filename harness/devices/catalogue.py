"""The sweep's device catalogue: QEMU device models whose drivers do DMA.

The catalogue is data (``kconfig-fragments/sweep/catalogue.toml``, README
there): one ``[device.NAME]`` table per device model with the QEMU
arguments that attach it, the kconfig symbols and modules of its Linux
driver, and a guest workload (busybox ``sh``) that drives its DMA paths.
This module reads and checks it, and turns an entry into the arguments and
shell of one boot; :mod:`harness.checks.sweep` runs it.

Placeholders in an entry's ``qemu`` arguments: ``{id}`` (a short id of the
device's instance in its boot, for naming drives, netdevs, audiodevs and
chardevs), ``{hub}`` (an integer unique to the instance, for a QEMU hub
that only its own NICs join) and ``{image:NAME}`` (the path of the
zero-filled image ``NAME`` of its ``images`` table, made in the run
folder).  Nothing else in braces is allowed.
"""

from __future__ import annotations

import re
import subprocess
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Mapping, Optional, Sequence

from .. import files
from ..errors import EnvError, InputError
from ..paths import FRAGMENTS, in_checkout

FORMAT = 1
PATH = FRAGMENTS / "sweep" / "catalogue.toml"
SUBSYSTEMS = "subsystems.config"     # default fragment of a catalogue, next to it
CLASSES = ("virtio", "storage", "network", "sound", "usb", "misc")

_NAME = re.compile(r"^[a-z0-9][a-z0-9-]*$")
_MODULE = re.compile(r"^[A-Za-z0-9_-]+$")
_KCONFIG = re.compile(r"^(CONFIG_[A-Za-z0-9_]+)=(y|m|n|[0-9]+|\"[^\"]*\")$")
_PLACEHOLDER = re.compile(r"\{([^{}]*)\}")
_IMAGE = re.compile(r"^image:([a-z0-9_-]+)$")
_SIZE = re.compile(r"^([0-9]+)([KMG]?)$")
_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
_MAX_IMAGE = 1 << 30
_KEYS = {"description", "class", "qemu_devices", "qemu", "images", "kconfig", "modules",
         "workload", "alone", "skip"}


@dataclass(frozen=True)
class Device:
    """One catalogue entry."""
    name: str
    description: str
    klass: str                                   # one of CLASSES
    qemu_devices: tuple[str, ...]                # models that `-device help` must list
    qemu: tuple[str, ...]                        # arguments, with placeholders
    images: tuple[tuple[str, int], ...] = ()     # (name, bytes)
    kconfig: tuple[tuple[str, str], ...] = ()    # (CONFIG_X, value)
    modules: tuple[str, ...] = ()
    workload: str = ""
    alone: bool = False
    skip: str = ""                               # always skipped, for this reason

    def symbols(self) -> list[str]:
        return [s for s, _ in self.kconfig]

    def to_json(self) -> dict:
        return {"name": self.name, "class": self.klass, "description": self.description,
                "qemu_devices": list(self.qemu_devices), "kconfig": [f"{s}={v}" for s, v in
                                                                       self.kconfig],
                "modules": list(self.modules)}


@dataclass(frozen=True)
class Catalogue:
    path: Path
    helpers: str
    devices: tuple[Device, ...]
    subsystems: Path                  # the fragment the drivers sit on (built in)

    def by_name(self) -> dict[str, Device]:
        return {d.name: d for d in self.devices}

    def select(self, names: Optional[Sequence[str]]) -> list[Device]:
        """The devices named (catalogue order kept), or all; an unknown name
        is an error that lists the known ones."""
        if not names:
            return list(self.devices)
        known = self.by_name()
        wanted = []
        for n in names:
            if n in CLASSES:     # a class name selects its devices
                wanted += [d.name for d in self.devices if d.klass == n]
            elif n in known:
                wanted.append(n)
            else:
                raise InputError(f"--qemu-devices: no device {n!r} in {self.path} (known: "
                                 f"{', '.join(sorted(known))}; or a class: {', '.join(CLASSES)})")
        return [d for d in self.devices if d.name in set(wanted)]


def _err(path: Path, where: str, what: str) -> InputError:
    return InputError(f"{path}: {where}: {what}", path=str(path))


def _strings(path: Path, where: str, value, key: str, *, allow_empty: bool = True
             ) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise _err(path, where, f"{key} must be a list of strings")
    if not allow_empty and not value:
        raise _err(path, where, f"{key} must not be empty")
    return tuple(value)


def parse_size(text: str) -> int:
    """Bytes of an image size: 512, 64K, 16M, 1G."""
    m = _SIZE.match(text.strip()) if isinstance(text, str) else None
    if not m:
        raise ValueError(f"{text!r} is not a size like 16M")
    n = int(m.group(1)) * _UNITS[m.group(2)]
    if not 0 < n <= _MAX_IMAGE:
        raise ValueError(f"{text!r} must be more than 0 and at most 1G")
    return n


def _device(path: Path, name: str, raw) -> Device:
    where = f"[device.{name}]"
    if not _NAME.match(name):
        raise _err(path, where, "a device name is lower-case letters, digits and '-'")
    if not isinstance(raw, dict):
        raise _err(path, where, "must be a table")
    unknown = sorted(set(raw) - _KEYS)
    if unknown:
        raise _err(path, where, f"unknown key(s) {', '.join(unknown)} (known: "
                                f"{', '.join(sorted(_KEYS))})")
    skip = raw.get("skip", "")
    if not isinstance(skip, str):
        raise _err(path, where, "skip must be a string (the reason)")
    klass = raw.get("class")
    if klass not in CLASSES:
        raise _err(path, where, f"class must be one of {', '.join(CLASSES)}, not {klass!r}")
    desc = raw.get("description", "")
    if not isinstance(desc, str) or not desc.strip():
        raise _err(path, where, "description must be a non-empty string")
    models = _strings(path, where, raw.get("qemu_devices", []), "qemu_devices",
                      allow_empty=bool(skip))
    qemu_args = _strings(path, where, raw.get("qemu", []), "qemu", allow_empty=bool(skip))
    images_raw = raw.get("images", {})
    if not isinstance(images_raw, dict):
        raise _err(path, where, "images must be a table of NAME = \"SIZE\"")
    images = []
    for iname, size in images_raw.items():
        if not re.match(r"^[a-z0-9_-]+$", iname):
            raise _err(path, where, f"image name {iname!r}: lower-case letters, digits, '_', '-'")
        try:
            images.append((iname, parse_size(size)))
        except ValueError as e:
            raise _err(path, where, f"images.{iname}: {e}") from None
    for arg in qemu_args:
        for ph in _PLACEHOLDER.findall(arg):
            m = _IMAGE.match(ph)
            if ph in ("id", "hub"):
                continue
            if m and m.group(1) in images_raw:
                continue
            if m:
                raise _err(path, where, f"{{{ph}}} names no image of its images table")
            raise _err(path, where, f"unknown placeholder {{{ph}}} in {arg!r} (known: {{id}}, "
                                    "{hub}, {image:NAME})")
        if arg.count("{") != arg.count("}"):
            raise _err(path, where, f"unbalanced braces in {arg!r}")
    kconfig = []
    for line in _strings(path, where, raw.get("kconfig", []), "kconfig"):
        m = _KCONFIG.match(line)
        if not m:
            raise _err(path, where, f"kconfig {line!r} is not CONFIG_X=y|m|n|<number>|\"str\"")
        kconfig.append((m.group(1), m.group(2)))
    modules = _strings(path, where, raw.get("modules", []), "modules")
    bad = [m for m in modules if not _MODULE.match(m)]
    if bad:
        raise _err(path, where, f"module name(s) {', '.join(map(repr, bad))} are not module names")
    workload = raw.get("workload", "")
    if not isinstance(workload, str) or (not skip and not workload.strip()):
        raise _err(path, where, "workload must be a non-empty shell snippet (or give skip)")
    alone = raw.get("alone", False)
    if not isinstance(alone, bool):
        raise _err(path, where, "alone must be true or false")
    return Device(name, desc.strip(), klass, models, qemu_args, tuple(images), tuple(kconfig),
                  modules, workload, alone, skip.strip())


def parse(text: str, path: Path) -> Catalogue:
    """A catalogue from its text; InputError names the file, the entry and
    the key (tomllib's own errors carry the line)."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise InputError(f"{path}: {e}", path=str(path)) from None
    except RecursionError:              # arrays or tables nested thousands deep
        raise InputError(f"{path}: not valid TOML: nested too deeply", path=str(path)) from None
    unknown = sorted(set(data) - {"version", "helpers", "device", "subsystems"})
    if unknown:
        raise _err(path, "top level", f"unknown key(s) {', '.join(unknown)}")
    if data.get("version") != FORMAT:
        raise _err(path, "top level", f"version must be {FORMAT}, not {data.get('version')!r}")
    helpers = data.get("helpers", {})
    if not isinstance(helpers, dict) or set(helpers) - {"sh"} or \
            not isinstance(helpers.get("sh", ""), str):
        raise _err(path, "[helpers]", "holds one key, sh, a string of shell functions")
    devices = data.get("device", {})
    if not isinstance(devices, dict) or not devices:
        raise _err(path, "[device]", "no device entries")
    sub = data.get("subsystems", SUBSYSTEMS)
    if not isinstance(sub, str) or not sub.endswith(".config") or "/" in sub:
        raise _err(path, "top level", "subsystems names a .config file next to the catalogue")
    return Catalogue(path, helpers.get("sh", ""),
                     tuple(_device(path, n, raw) for n, raw in devices.items()),
                     Path(path).parent / sub)


def load(path: Path | None = None) -> Catalogue:
    # a sweep campaign's job names an in-tree catalogue by its checkout path
    p = in_checkout(Path(path)) if path else PATH
    return parse(files.read_text(p, "the device catalogue"), files.resolve(p, "catalogue"))


# --- one instance in one boot ------------------------------------------------------------

@dataclass(frozen=True)
class Instance:
    """A device placed in a boot: its id, hub number and image files."""
    device: Device
    id: str
    hub: int
    images: Mapping[str, Path] = field(default_factory=dict)

    def qemu_args(self) -> list[str]:
        def sub(m: re.Match[str]) -> str:
            ph = m.group(1)
            if ph == "id":
                return self.id
            if ph == "hub":
                return str(self.hub)
            return str(self.images[ph[len("image:"):]])
        return [_PLACEHOLDER.sub(sub, a) for a in self.device.qemu]


def place(devices: Sequence[Device], run_dir: Path, first: int = 0) -> list[Instance]:
    """Instances of `devices` for one boot: ids d0, d1, ..., hubs first+0, +1,
    ..., and their images made (zero-filled, sparse) in `run_dir`."""
    out = []
    for i, d in enumerate(devices):
        ident = f"d{first + i}"
        imgs = {}
        for name, size in d.images:
            p = run_dir / f"{ident}-{name}.img"
            with open(p, "wb") as f:
                f.truncate(size)
            imgs[name] = p
        out.append(Instance(d, ident, first + i + 1, imgs))
    return out


BEGIN = "DMAHARNESS-SWEEP begin"
END = "DMAHARNESS-SWEEP end"


def guest_script(helpers: str, instances: Sequence[Instance]) -> str:
    """The shell the guest init runs: the helpers once, then each device's
    workload in a subshell between markers that carry its name and exit
    status (the boot's status is the first failure)."""
    parts = [helpers.rstrip(), "sweep_status=0"]
    for inst in instances:
        name = inst.device.name
        parts.append(
            f"echo '{BEGIN} {name}' >> /dev/console\n"
            f"( {inst.device.workload.strip()}\n) >> /dev/console 2>&1\n"
            f"rc=$?\n"
            f"echo \"{END} {name} status=$rc\" >> /dev/console\n"
            f"[ $rc != 0 ] && [ $sweep_status = 0 ] && sweep_status=$rc")
    parts.append("exit $sweep_status")
    return "\n".join(p for p in parts if p) + "\n"


_END_RE = re.compile(re.escape(END) + r" (\S+) status=(\d+)")
FAIL = "DMAHARNESS-SWEEP FAIL"


def workload_failure(console: str, name: str) -> str:
    """What a device's workload said when it gave up (the helpers' sweep_fail
    prints a FAIL line between its markers), or ''."""
    begin = console.find(f"{BEGIN} {name}")
    if begin < 0:
        return ""
    end = console.find(f"{END} {name} ", begin)
    part = console[begin:end if end > 0 else len(console)]
    fails = [line.split(FAIL, 1)[1].strip() for line in part.splitlines() if FAIL in line]
    return "; ".join(fails)


def workload_status(console: str) -> dict[str, int]:
    """Device name -> its workload's exit status, from the markers."""
    return {m.group(1): int(m.group(2)) for m in _END_RE.finditer(console)}


# --- what this QEMU and this kernel offer -------------------------------------------------

_MODEL = re.compile(r'^name "([^"]+)"', re.M)


def qemu_models(qemu_binary: str) -> set[str]:
    """Device model names this QEMU knows (`-device help`)."""
    try:
        r = subprocess.run([qemu_binary, "-device", "help"], capture_output=True, text=True,
                           timeout=60)
    except OSError as e:
        raise EnvError(f"cannot run {qemu_binary}: {e.strerror} (make deps)") from None
    if r.returncode != 0:
        raise EnvError(f"{qemu_binary} -device help failed: {r.stderr.strip()[-300:]}")
    return set(_MODEL.findall(r.stdout))


def missing_models(device: Device, models: Iterable[str]) -> list[str]:
    have = set(models)
    return [m for m in device.qemu_devices if m not in have]
