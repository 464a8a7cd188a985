"""Run settings: how a boot is made and how the cameras stress the driver.

One type per group, one set of defaults, one precedence rule for every
command (`run`, `run --case`, `bisect`, `bisect-run`, and what comes later):

    defaults (the dataclasses below)  <  a case's [run] table  <  flags

A layer only holds the settings it names: the command line turns the
flags that were given into a ``dict`` of overrides, a case's ``[run]``
table is checked into another, and :func:`resolve` applies them in order.
Every setting has one row in :data:`SETTINGS`: its group, its type, how a
case file or a flag spells its value, and its help text.
"""

from __future__ import annotations

import math
import re
import shlex
from dataclasses import dataclass, fields, replace
from typing import Any, Callable, Mapping

from ..errors import InputError
from ..kernel import profiles
from ..devices import usbhost
from ..devices.camera import MAX_USB_DEVICES, Flood
from . import qemurules


def parse_duration(text: str) -> float:
    """`20`, `20s`, `500ms`, `2m` -> seconds."""
    m = re.fullmatch(r"(\d+(?:\.\d+)?)(ms|s|m)?", str(text).strip())
    if not m:
        raise InputError(f"{text!r} is not a duration (20, 20s, 500ms, 2m)")
    v = float(m.group(1))
    return _finite({"ms": v / 1000, "m": v * 60}.get(m.group(2) or "s", v), text, MAX_SECONDS)


# the longest time any setting may name (a duration, a timeout, a hotplug
# period): a week; and the largest rate or count
MAX_SECONDS = 7 * 86400.0
MAX_NUMBER = 1e6


def _finite(n: float, given: Any, limit: float = MAX_NUMBER) -> float:
    """A number that time, sleep and JSON can carry: not nan, not infinite, not huge."""
    if not math.isfinite(n):
        raise InputError(f"{given!r} is not a usable number (nan or infinite)")
    if abs(n) > limit:
        raise InputError(f"{given!r} is too large (at most {int(limit)})")
    return n


@dataclass(frozen=True)
class BootSettings:
    """How QEMU runs the guest."""
    accel: str = "auto"          # auto | tcg | kvm
    timeout: float = 120.0       # seconds allowed beyond the flood's duration (`boot`: the whole boot)
    # seconds without console output that count as a hang: above the kernel's
    # hung-task report (qemu.HUNG_TASK_TIMEOUT + HUNG_TASK_CHECK = 40 s), so a
    # blocked task's stacks reach the console first; below any quiet stretch a
    # healthy guest has (the agent prints every second)
    silence: float = 60.0
    memory: int = 1024           # MiB
    smp: int = 1                 # one vCPU: under TCG on 2 host cores, -smp 2 halves the rate
    append: str = ""             # extra kernel command line
    qemu_opts: tuple[str, ...] = ()
    insn_profile: bool = False   # the QEMU TCG plugin counting guest instructions
    console: bool = False        # copy the console to stderr live


@dataclass(frozen=True)
class FloodSettings:
    """What the fake cameras and the guest agent do during a run."""
    flood: Flood = Flood()       # control:max
    duration: float = 20.0       # seconds
    cycle_hz: float = 0.0        # agent close/open cycles per second
    phys_hz: float = 0.0         # agent EVIOCGPHYS reads per second
    cameras: int = 1
    hotplug: float = 0.0         # replug each camera every S seconds (0: never)
    seed: int = 1                # seed of the random/malformed patterns
    agent_args: str = ""         # more arguments for the guest agent
    fail_nth: tuple[str, ...] = ()   # after the flood: fail-nth on the driver's probe/disconnect
    fail_nth_max: int = 400      # at most this many steps per path
    devices: tuple[str, ...] = ()    # USB device profiles served instead of the cameras
    capture: bool = False        # read each device back in the guest (the round trip)
    usb_host: tuple[str, ...] = ()   # real USB devices of this host passed through (VID:PID|BUS-DEV)
    bulk_in: str = "hold"        # profile devices' bulk IN reads: hold, random, zero
    modules: tuple[str, ...] = ()    # with devices: more modules the guest loads first
    exercise: bool = False       # with devices: each used as its class's users use it


@dataclass(frozen=True)
class Setting:
    name: str
    group: str                           # "boot" | "flood" | "variant" (which kernel)
    parse: Callable[[Any], Any]          # a case value or a flag's text -> the typed value
    help: str
    in_case: bool = True                 # may a case's [run] table set it?
    # what a file's layer (a case's [run], a profile's run table) may not
    # ask although a flag may: applied by check() to the parsed value
    case_rule: Callable[[Any], Any] | None = None


def _positive(kind, limit: float = MAX_NUMBER):
    def parse(v: Any):
        if isinstance(v, bool) or (kind is int and isinstance(v, float) and not v.is_integer()):
            raise InputError(f"{v!r} is not a {'whole ' if kind is int else ''}number")
        try:
            n = kind(v)
        except (TypeError, ValueError):
            raise InputError(f"{v!r} is not a {'whole ' if kind is int else ''}number") from None
        if n <= 0:
            raise InputError(f"{v!r} must be more than 0")
        return _finite(n, v, limit)
    return parse


def _non_negative(v: Any, limit: float = MAX_NUMBER) -> float:
    if isinstance(v, bool):
        raise InputError(f"{v!r} is not a number")
    try:
        n = float(v)
    except (TypeError, ValueError):
        raise InputError(f"{v!r} is not a number") from None
    if n < 0:
        raise InputError(f"{v!r} must be 0 or more")
    return _finite(n, v, limit)


def _seconds(v: Any) -> float:
    return _non_negative(v, MAX_SECONDS)


def _whole(v: Any) -> int:
    if isinstance(v, bool) or (isinstance(v, float) and not v.is_integer()):
        raise InputError(f"{v!r} is not a whole number")
    try:
        return int(v)
    except (TypeError, ValueError):
        raise InputError(f"{v!r} is not a whole number") from None


def _seed(v: Any) -> int:
    n = _whole(v)
    if not 0 <= n < 1 << 32:
        raise InputError(f"{v!r} is not a seed from 0 to {(1 << 32) - 1}")
    return n


def _string(v: Any) -> str:
    if not isinstance(v, str):
        raise InputError(f"{v!r} is not a string")
    return v


def _duration(v: Any) -> float:
    if isinstance(v, bool) or not isinstance(v, (str, int, float)):
        raise InputError(f"{v!r} is not a duration like \"20s\"")
    d = parse_duration(str(v))
    if d <= 0:
        raise InputError(f"{v!r} must be longer than 0 s")
    return d


def _flood(v: Any) -> Flood:
    try:
        return Flood.parse(_string(v))
    except InputError as e:
        raise InputError(e.message.removeprefix("--flood ")) from None


def _words(v: Any) -> tuple[str, ...]:
    if isinstance(v, (list, tuple)) and all(isinstance(w, str) for w in v):
        return tuple(v)
    try:
        return tuple(shlex.split(_string(v)))
    except ValueError as e:
        raise InputError(f"cannot split {v!r}: {e}") from None


# the paths the guest's dmaharness-failnth walks (harness/guest/failnth.h)
FAIL_NTH_PATHS = ("probe", "disconnect")


def _fail_paths(v: Any) -> tuple[str, ...]:
    """`probe,disconnect`, `probe`, `none` (or a list of them) -> the paths, in order."""
    words = v if isinstance(v, (list, tuple)) else [w for w in _string(v).split(",") if w.strip()]
    out = []
    for w in words:
        w = _string(w).strip()
        if w == "none":
            continue
        if w not in FAIL_NTH_PATHS:
            raise InputError(f"{w!r} is not a fail-nth path (probe, disconnect, none)")
        out.append(w)
    return tuple(p for p in FAIL_NTH_PATHS if p in out)


def _devices(v: Any) -> tuple[str, ...]:
    """Profile names or files (harness.devices.usbdevices resolves them at run time)."""
    words = v if isinstance(v, (list, tuple)) else [v]
    out = tuple(_string(w).strip() for w in words)
    if any(not w for w in out):
        raise InputError("an empty device profile name")
    return out


def _usb_hosts(v: Any) -> tuple[str, ...]:
    """VID:PID or BUS-DEV words (harness.devices.usbhost finds the devices at run time)."""
    words = v if isinstance(v, (list, tuple)) else [v]
    out = tuple(_string(w).strip() for w in words)
    for w in out:
        usbhost.parse_spec(w)
    return out


MODULE_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")      # as modules.alias names them
MAX_MODULES = 16


def _modules(v: Any) -> tuple[str, ...]:
    """Module names (a comma-separated flag, or a case's list); never a path."""
    words = v if isinstance(v, (list, tuple)) else [w for w in _string(v).split(",")]
    out = tuple(dict.fromkeys(_string(w).strip() for w in words))
    for w in out:
        if not MODULE_NAME.fullmatch(w):
            raise InputError(f"{w[:80]!r} is not a module name (letters, digits, '_' and '-')")
    if len(out) > MAX_MODULES:
        raise InputError(f"{len(out)} modules; at most {MAX_MODULES}")
    return out


def _accel(v: Any) -> str:
    v = _string(v)
    if v not in ("auto", "tcg", "kvm"):
        raise InputError(f"{v!r} is not one of auto, tcg, kvm")
    return v


def _bulk_in(v: Any) -> str:
    v = _string(v)
    if v not in ("hold", "random", "zero"):
        raise InputError(f"{v!r} is not one of hold, random, zero")
    return v


def _flag(v: Any) -> bool:
    if not isinstance(v, bool):
        raise InputError(f"{v!r} is not true or false")
    return v


SETTINGS: dict[str, Setting] = {s.name: s for s in (
    Setting("profile", "variant", profiles.check_name,
            "debug profile of the kernel: " + ", ".join(profiles.names())
            + " (kconfig-fragments/profiles/profiles.toml)"),
    Setting("accel", "boot", _accel, "auto: KVM only when a real kernel runs on it, else TCG",
            in_case=False),
    Setting("timeout", "boot", _positive(float, MAX_SECONDS), "wall-clock limit in seconds (for runs: "
            "allowed beyond the duration)"),
    Setting("silence", "boot", _positive(float, MAX_SECONDS),
            "seconds without console output that count as a hang"),
    Setting("memory", "boot", _positive(int, 1 << 20), "guest memory in MiB"),
    Setting("smp", "boot", _positive(int, 256), "guest CPUs"),
    Setting("append", "boot", _string, "extra kernel command line"),
    Setting("qemu_opts", "boot", _words, "more QEMU options, split like a shell would "
            "(yours are free; a case's or a campaign job's may set only "
            + qemurules.allowed() + ": harness/boot/qemurules.py)",
            case_rule=qemurules.check),
    Setting("insn_profile", "boot", _flag, "count guest instructions per kernel function",
            in_case=False),
    Setting("console", "boot", _flag, "copy the console to stderr live", in_case=False),
    Setting("flood", "flood", _flood, "PATTERN[:RATE]: control, button, mixed, malformed or "
            "random; RATE per second or max"),
    Setting("duration", "flood", _duration, "flood and agent run time (20, 20s, 500ms, 2m)"),
    Setting("cycle_hz", "flood", _non_negative, "agent close/open cycles per second"),
    Setting("phys_hz", "flood", _non_negative, "agent EVIOCGPHYS reads per second"),
    Setting("cameras", "flood", _positive(int, MAX_USB_DEVICES),
            f"fake cameras, one usb-redir each (at most {MAX_USB_DEVICES}, the guest agent's "
            "limit, with --usb-device and --usb-host devices counted in)"),
    Setting("hotplug", "flood", _seconds, "unplug and replug each camera every S seconds "
            "(0: never)"),
    Setting("seed", "flood", _seed, "seed of the random/malformed patterns (0 to 2^32-1; "
            "camera N gets SEED+N)"),
    Setting("agent_args", "flood", _string, "more arguments for the guest agent"),
    Setting("fail_nth", "flood", _fail_paths,
            "after the flood, make every error path of uvcvideo's probe (and/or disconnect) "
            "run once: for N = 1, 2, ... unbind and bind the camera through sysfs with the Nth "
            "slab/page allocation of the binding task failing, until a bind no longer reaches "
            "the Nth (needs --profile full; PATHS: probe,disconnect)"),
    Setting("fail_nth_max", "flood", _positive(int), "fail-nth: at most N steps per path"),
    Setting("devices", "flood", _devices,
            "a USB device profile to attach instead of the built-in cameras (repeatable): a "
            "shipped profile's name (fake-device/profiles/NAME.profile) or a profile file; "
            "each is served by its own fake-uvc --profile, the guest holds the nodes its "
            "drivers create open for --duration, and usbmon counts each interrupt IN "
            "endpoint's completions"),
    Setting("bulk_in", "flood", _bulk_in,
            "with --usb-device: what each device answers to the guest's bulk IN reads: hold (a "
            "quiet device: reads stay in flight), random or zero (one packet each, paced by "
            "the flood's rate; sweep --usb-drivers floods with random)"),
    Setting("modules", "flood", _modules,
            "with --usb-device: more kernel modules the guest loads before the devices attach "
            "(comma-separated), for a driver the profile's interface classes do not name: a "
            "device made from a driver's own ID table (usb-drivers, check) needs its driver"),
    Setting("exercise", "flood", _flag,
            "with --usb-device: use each device as its class's users do for the run, beside the "
            "flood: ttys written with termios changes, network links addressed, pinged and "
            "switched to promiscuous and multicast, input LEDs set, hidraw, MIDI, lirc and "
            "other nodes read and written, disks read (harness/devices/usbwork.py); the "
            "result counts each node's rounds"),
    Setting("capture", "flood", _flag,
            "with --usb-device: first read each device back in the guest with dmaharness-capture "
            "(static, on usbfs, --detach) and compare the capture with its profile "
            "(fake-uvc --compare-capture: what a capture can give back); a difference fails "
            "the run"),
    Setting("usb_host", "flood", _usb_hosts,
            "pass a real USB device of this machine through to the guest (repeatable): VID:PID "
            "or BUS-DEV as lsusb prints them. Debian's usbredirect exports it over usbredir "
            "for the run (the host's drivers let go of it meanwhile); you need read-write "
            "access to its /dev/bus/usb node (a udev rule), not root. The guest loads the "
            "drivers its interface classes name and counts its interrupt IN endpoints, as "
            "for --usb-device", in_case=False),
)}

CASE_KEYS = tuple(n for n, s in SETTINGS.items() if s.in_case)


def default(name: str) -> Any:
    """The default of a setting, for --help."""
    if SETTINGS[name].group == "variant":
        return profiles.DEFAULT
    obj = BootSettings() if SETTINGS[name].group == "boot" else FloodSettings()
    v = getattr(obj, name)
    if isinstance(v, Flood):
        return f"{v.pattern}:{v.rate}"
    if isinstance(v, tuple):
        return " ".join(v) or "none"
    if isinstance(v, float) and v.is_integer():
        return int(v)
    return v if v != "" else "none"


def check(overrides: Mapping[str, Any], where: str = "") -> dict[str, Any]:
    """Parse the raw values of a file's layer (a case's [run] table, a
    profile's run table) into typed overrides, with each setting's
    ``case_rule`` (what a case may not ask: harness.boot.qemurules).

    InputError names the key; ``where`` prefixes it (``case.toml: run.``).
    """
    out = {}
    for k, v in overrides.items():
        s = SETTINGS.get(k)
        if s is None:
            raise InputError(f"{where}{k}: unknown setting (known: {', '.join(SETTINGS)})")
        try:
            out[k] = s.parse(v)
            if s.case_rule is not None:
                out[k] = s.case_rule(out[k])
        except InputError as e:
            raise InputError(f"{where}{k}: {e.message}") from None
    return out


def resolve(*layers: Mapping[str, Any], boot: BootSettings | None = None
            ) -> tuple[BootSettings, FloodSettings]:
    """The settings after applying typed override layers in order (later wins).

    ``boot`` replaces the boot defaults (a command whose default differs, such
    as `boot`'s 300 s timeout for a whole boot).  The profile named by the
    last layer that names one (harness.kernel.profiles) puts its ``run`` table
    right above the defaults.
    """
    b, f = boot or BootSettings(), FloodSettings()
    bn = {x.name for x in fields(BootSettings)}
    fn = {x.name for x in fields(FloodSettings)}
    prof = profile_of(*layers)
    first = check(profiles.get(prof).run, where=f"{profiles.TABLE}: [{prof}.run] ")
    for layer in (first,) + layers:
        b = replace(b, **{k: v for k, v in layer.items() if k in bn})
        f = replace(f, **{k: v for k, v in layer.items() if k in fn})
    return b, f


def profile_of(*layers: Mapping[str, Any]) -> str:
    """The profile the layers choose (later wins), else the default."""
    prof = profiles.DEFAULT
    for layer in layers:
        prof = layer.get("profile") or prof
    return prof


def flood_json(f: FloodSettings) -> dict:
    return {"pattern": f.flood.pattern, "rate": f.flood.rate, "duration_s": f.duration,
            "cycle_hz": f.cycle_hz, "phys_hz": f.phys_hz, "cameras": f.cameras,
            "hotplug": f.hotplug, "seed": f.seed, "agent_args": f.agent_args,
            "fail_nth": list(f.fail_nth), "fail_nth_max": f.fail_nth_max,
            "devices": list(f.devices), "capture": f.capture, "usb_host": list(f.usb_host),
            "modules": list(f.modules), "exercise": f.exercise}
