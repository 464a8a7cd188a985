"""`dmaharness sweep --usb-drivers`: every USB and HID driver of the tree,
bound by a device made from its own ID table, flooded, swept (issue #27).

The kernel: the target (the detector series, the profile), the fragment
of the device profiles (kconfig-fragments/usb/usb-profiles.config: USB,
xHCI, usbmon, HID, input, networking, media) and a generated best-effort
fragment (``<cache>/usbsweep/<digest>/usb-drivers.config``): the
subsystems USB drivers sit on (wireless, Bluetooth, CAN, NFC, sound,
TV...) and every tristate of the tree's USB driver folders, and of the
mixed folders every one that depends on USB, as a module.  What the
kernel could not build (a dependency this configuration lacks) is listed,
not an error; the built kernel's modules.alias says which drivers exist.

Then, round after round, each driver not bound yet gets its next try
(harness.devices.usbgen: a class driver's template, then the endpoint
layouts), up to ``per_boot`` devices a boot behind xHCI, each served by
fake-uvc over usb-redir, its interrupt IN endpoints flooded, the nodes
its driver makes held open (harness.devices.usbdevices); a driver is
bound when an interface of its device (or the HID device under it) has
it as driver.  Every boot's console goes into the sites table, as the
QEMU sweep's do (harness.checks.sweeptable).
"""

from __future__ import annotations

import os
import re
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Optional

from .. import errors, jsonout, pipeline
from ..boot.settings import BootSettings, FloodSettings
from ..devices.camera import Flood
from ..devices import usbdevices, usbgen
from ..kernel import fragments, kmodules
from ..pipeline import Target, VariantSpec
from ..progress import Progress
from . import sweep, sweeptable

# folders whose every tristate is a USB driver (or the menu above them)
MODULE_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")     # as modules.alias names them

USB_DIRS = ("drivers/usb/serial", "drivers/usb/misc", "drivers/usb/class", "drivers/usb/storage",
            "drivers/usb/image", "drivers/usb/atm", "drivers/net/usb", "drivers/media/usb",
            "sound/usb", "drivers/hid")
# folders of every bus, whose USB drivers depend on USB
MIXED_DIRS = ("drivers/input", "drivers/bluetooth", "drivers/net/wireless", "drivers/net/can",
              "drivers/nfc", "drivers/mmc", "drivers/i2c", "drivers/w1", "drivers/watchdog",
              "drivers/mfd", "drivers/iio", "drivers/gpio", "drivers/leds", "drivers/misc",
              "drivers/net/ieee802154", "drivers/platform", "drivers/char", "drivers/spi",
              "drivers/auxdisplay", "drivers/power", "drivers/hwmon", "drivers/comedi")
USB_DEPENDS = r"\bUSB"
# what they sit on, asked for as well (best effort: a kernel without one only
# loses the drivers above it)
SUBSYSTEMS = (
    "CONFIG_INPUT_JOYSTICK=y", "CONFIG_INPUT_TABLET=y", "CONFIG_INPUT_MISC=y",
    "CONFIG_INPUT_MOUSE=y", "CONFIG_INPUT_TOUCHSCREEN=y", "CONFIG_WIRELESS=y", "CONFIG_WLAN=y",
    "CONFIG_CFG80211=m", "CONFIG_MAC80211=m", "CONFIG_BT=m", "CONFIG_CAN=m", "CONFIG_CAN_DEV=m",
    "CONFIG_NFC=m", "CONFIG_MMC=y", "CONFIG_I2C=y", "CONFIG_W1=m", "CONFIG_WATCHDOG=y",
    "CONFIG_IIO=m", "CONFIG_GPIOLIB=y", "CONFIG_NEW_LEDS=y", "CONFIG_LEDS_CLASS=m",
    "CONFIG_SPI=y", "CONFIG_COMEDI=m", "CONFIG_COMEDI_USB_DRIVERS=m", "CONFIG_SOUND=y",
    "CONFIG_SND=y", "CONFIG_SND_USB=y", "CONFIG_MEDIA_ANALOG_TV_SUPPORT=y",
    "CONFIG_MEDIA_DIGITAL_TV_SUPPORT=y", "CONFIG_MEDIA_RADIO_SUPPORT=y",
    "CONFIG_MEDIA_SDR_SUPPORT=y", "CONFIG_DVB_CORE=y", "CONFIG_USB_SERIAL=m",
    "CONFIG_USB_NET_DRIVERS=y", "CONFIG_USB_USBNET=m", "CONFIG_ATM=m", "CONFIG_USB_ATM=m",
    "CONFIG_IEEE802154=m", "CONFIG_MAC802154=m", "CONFIG_IEEE802154_DRIVERS=m",
    "CONFIG_RFKILL=m", "CONFIG_HIDRAW=y", "CONFIG_TTY=y",
    # cores of driver families whose own entries do not depend on USB: SCSI
    # (usb-storage, uas), RC (dvb-usb, em28xx's remote), the wireless chips'
    "CONFIG_BLOCK=y", "CONFIG_SCSI=y", "CONFIG_BLK_DEV_SD=y", "CONFIG_RC_CORE=m", "CONFIG_RT2X00=m",
    "CONFIG_RTW88=m", "CONFIG_RTW89=m", "CONFIG_ATH10K=m", "CONFIG_NFC_DIGITAL=m",
    "CONFIG_WLAN_VENDOR_ATH=y", "CONFIG_WLAN_VENDOR_RALINK=y", "CONFIG_WLAN_VENDOR_REALTEK=y",
    # INPUT_MOUSE's default PS/2 mouse, and hid-rmi (through RMI4_F03), select
    # SERIO, which usb-uvc.config turns off: the sweep goes without them
    "CONFIG_MOUSE_PS2=n", "CONFIG_HID_RMI=n")
# the menus that gate USB drivers and that SUBSYSTEMS leaves off, each with
# the 7.3.4 Kconfig line that gates them: without one, its whole family is
# never built (what every driver with a USB or HID ID table needs beyond
# its own symbol; the symbols themselves come from the tables: fragment_text)
GATES = (
    ("CONFIG_RC_DEVICES=y", "drivers/media/rc/Kconfig: menuconfig RC_DEVICES (mceusb, "
     "streamzap, imon, ...)"),
    ("CONFIG_RADIO_ADAPTERS=m", "drivers/media/radio/Kconfig: menuconfig RADIO_ADAPTERS "
     "(si470x, dsbr100, shark, ...)"),
    ("CONFIG_GPIB=m", "drivers/gpib/Kconfig: menuconfig GPIB (ni_usb, agilent_82357a, lpvo)"),
    ("CONFIG_DRM=m", "drivers/gpu/drm/Kconfig: menuconfig DRM (udl, gm12u320, gud, "
     "appletbdrm: depends on DRM && USB)"),
    ("CONFIG_FB=m", "drivers/video/fbdev/Kconfig: menuconfig FB (udlfb, smscufx: depends on "
     "FB && USB)"),
    ("CONFIG_FB_DEVICE=y", "drivers/video/fbdev/core/Kconfig: FB_DEVICE (FB_UDL depends "
     "on it)"),
    ("CONFIG_GNSS=m", "drivers/gnss/Kconfig: menuconfig GNSS (gnss-usb)"),
    ("CONFIG_GREYBUS=m", "drivers/greybus/Kconfig: menuconfig GREYBUS (es2)"),
    ("CONFIG_MCTP=y", "net/mctp/Kconfig: menuconfig MCTP (drivers/net/mctp: if MCTP, "
     "mctp-usb)"),
    ("CONFIG_PHYLIB=m", "drivers/net/phy/Kconfig: PHYLIB, above drivers/net/mdio "
     "(mdio-mvusb)"),
    ("CONFIG_WLAN_VENDOR_BROADCOM=y", "drivers/net/wireless/broadcom/Kconfig (brcmfmac)"),
    ("CONFIG_BRCMFMAC_USB=y", "drivers/net/wireless/broadcom/brcm80211/brcmfmac/Kconfig: "
     "brcmfmac's USB bus (its ID table)"),
)
DURATION = 8.0          # seconds each boot's devices are flooded and held open
# packets a second on each interrupt IN endpoint, and bulk IN answers a
# second, of each device: at each endpoint's ceiling (1000/s), eight devices
# kept a KASAN guest's CPU in URB completions, and usbmon's reader in the
# guest never ran (the 7.3.4 sweep counted completions for 37 of 254 drivers)
RATE = 200


def fragment_text(srctree: Path, given: frozenset[str] = frozenset()) -> tuple[str, int]:
    """The generated fragment and how many driver symbols it asks for;
    ``given``: the symbols the kernel's other fragments set (never asked
    again here: USB core's table must not turn CONFIG_USB=y into m)."""
    syms = fragments.tristates(srctree, USB_DIRS) + \
        fragments.tristates(srctree, MIXED_DIRS, USB_DEPENDS)
    lines = ["# best-effort: generated by dmaharness sweep --usb-drivers from the tree's "
             "Kconfig files;", "# what a dependency keeps out is listed by the sweep, "
             "not an error", "# the subsystems"]
    lines += [f"# {o.split('=')[0]} is not set" if o.endswith("=n") else o for o in SUBSYSTEMS]
    lines.append("# the menus that gate USB drivers")
    lines += [o for o, _ in GATES]
    lines.append("# every USB driver (and its menu) of the tree")
    have = {s.split("=")[0] for s in SUBSYSTEMS} | {o.split("=")[0] for o, _ in GATES} | given
    asked = [f"CONFIG_{s}" for s, _, _ in syms]
    lines += [f"CONFIG_{s}={'m' if kind == 'tristate' else 'y'}" for s, _, kind in syms
              if f"CONFIG_{s}" not in have]
    # every driver with a USB or HID ID table, whatever menu or dependency it
    # sits under (CAN's "CAN USB interfaces" menu, comedi's if-block, HID
    # hwmon drivers): its own symbol, as a module
    table = sorted({u.symbol for f in kmodules.id_table_files(srctree)
                    for u in kmodules.units(srctree, [f]) if u.symbol and u.settable}
                   - have - set(asked))
    lines.append("# the symbols of the drivers with a USB or HID ID table not asked for above")
    lines += [f"{s}=m" for s in table]
    return "\n".join(lines) + "\n", len(syms) + len(table)


def usb_target(spec: VariantSpec, progress: Progress,
               generate: bool = True) -> tuple[Target, Optional[Path]]:
    """The USB sweep kernel of `spec`, and its generated fragment's path
    (None with `generate` off: the drivers the profile and the device
    profiles' fragment already build, --as-configured)."""
    if spec.series:
        raise errors.InputError("sweep --usb-drivers runs the stock kernel with the detector "
                                "only: drop --series")
    t = pipeline.target(spec)
    frags = t.frags + (fragments.parse_fragment(usbdevices.FRAGMENT),)
    if not generate:
        return replace(t, frags=frags), None
    text, _ = fragment_text(sweep.source_tree(t, progress),
                            frozenset(o for f in frags for o, _ in f.options))
    gen = sweep.generated_fragment("usbsweep", "usb-drivers.config", text)
    return replace(t, frags=frags + (fragments.parse_fragment(gen),)), gen


def not_built(config_text: str, gen: Path) -> list[str]:
    """The options of the generated fragment that the built .config lacks."""
    have = fragments.read_config(config_text)
    return [o for o, v in fragments.parse_fragment(gen).options if have.get(o, "n") != v]


# --- the drivers ----------------------------------------------------------------------

def _norm(name: str) -> str:
    return name.replace("-", "_")


@dataclass
class DriverRun:
    module: str
    plan: usbgen.DriverPlan
    tries: list[dict] = field(default_factory=list)   # {attempt, boot, bound, drivers, why}
    bound_with: Optional[str] = None
    why: str = ""                                      # not bound: the last try's reason

    @property
    def state(self) -> str:
        if self.plan.match is None:
            return "no-device"
        if not self.tries:
            return "planned"                # --list: nothing booted
        return "bound" if self.bound_with else ("firmware" if "firmware" in self.why
                                                 else "unbound")

    def to_json(self) -> dict:
        return {"module": self.module, "state": self.state, "bound_with": self.bound_with,
                "why": self.why or self.plan.reason or None, "alias": self.plan.match.alias
                if self.plan.match else None, "tries": self.tries}


# "<drv> <dev>: probe with driver <drv> failed with error -N" (6.x/7.x),
# "<drv>: probe of <dev> failed with error -N" (older)
_PROBE = re.compile(r"(?:(?P<drv>[\w-]+) (?P<dev>\S+): probe with driver (?P<drv2>[\w-]+)|"
                    r"(?P<drv3>[\w-]+):? probe of (?P<dev3>\S+)) failed with error (?P<err>-?\d+)")
# "<drv> <dev>: Direct firmware load for <file> failed with error -N"
_FIRMWARE = re.compile(r"(?P<drv>[\w-]+) (?P<dev>\S+): Direct firmware load for (?P<fw>\S+) "
                       r"failed with error (?P<err>-?\d+)")


def drivers_of(res: dict) -> set[str]:
    """The drivers a device's interfaces and HID devices have (a device
    result's JSON), each by its name and by its module's: hid-cherry's
    driver is "cherry", hid-logitech-dj's "logitech-djreceiver"."""
    names = [*(res.get("interfaces") or {}).values(), *(res.get("hid") or {}).values()]
    mods = res.get("modules") or {}
    return {_norm(n) for n in names} | {_norm(mods[n]) for n in names if n in mods}


def _ours(drv: str, dev: str, module: str, sysname: Optional[str]) -> bool:
    """Is a kernel line of driver `drv` about device `dev` one of this module's device?"""
    return _norm(drv) == _norm(module) or bool(sysname) and (
        dev == sysname or dev.startswith(f"{sysname}:"))


def why_unbound(console: str, module: str, sysname: Optional[str]) -> str:
    """A reason from the kernel log: a failed probe of the device's
    interfaces, a firmware file the driver asked for and did not get, or
    nothing said."""
    for m in _FIRMWARE.finditer(console):
        if _ours(m["drv"], m["dev"], module, sysname):
            return f"firmware missing: {m['fw']}"
    for m in _PROBE.finditer(console):
        drv, dev = (m["drv"] or m["drv3"]), (m["dev"] or m["dev3"])
        if _ours(drv, dev, module, sysname):
            return f"probe failed with error {m['err']} ({m.group(0)})"
    said = _complaint(console, module, sysname)
    if said:
        return f"the kernel said: {said}"
    return "no interface took it (the device does not match, or probe declined silently)"


# what every device's enumeration and every module's load print: not a reason
_CHATTER = re.compile(r"new (?:low|full|high|super)[-+\w]* USB device|New USB device|"
                      r"Product:|Manufacturer:|SerialNumber:|registered new |Modules linked in|"
                      r"USB disconnect|DMA-API|KASAN|dmaharness|DMAHARNESS|: \[|cl_report|"
                      r"converter detected|support registered|Mass Storage device detected|"
                      r"has invalid maxpacket|\+0x[0-9a-f]+/0x[0-9a-f]+")


def _complaint(console: str, module: str, sysname: Optional[str]) -> str:
    """The first kernel line about the driver or its device that is not
    enumeration chatter: the driver's own word on why it declined (ath9k_htc's
    "Device endpoint numbers are not the expected ones")."""
    mod = _norm(module)
    dev = re.compile(rf"\b{re.escape(sysname)}(?::[\d.]+)?[: ]") if sysname else None
    for line in console.splitlines():
        text = re.sub(r"^\[\s*[\d.]+\]\s*", "", line)
        if _CHATTER.search(text) or not text:
            continue
        if mod in _norm(text) or (dev and dev.search(text)):
            return text[:200]
    return ""


@dataclass(frozen=True)
class UsbSweepRequest:
    variant: VariantSpec
    boot: BootSettings
    drivers: tuple[str, ...] = ()         # modules; () = every USB/HID driver built
    per_boot: int = 8
    duration: float = DURATION
    parallel: int = 0                     # boots at once; 0 = one per core
    max_tries: int = 0                    # tries per driver; 0 = its whole plan
    run_dir: Optional[Path] = None
    plan_only: bool = False               # build and plan, boot nothing (--list)
    as_configured: bool = False           # no generated fragment: the drivers already built
    # a campaign's job (`plan sweep --usb-drivers`): the K-th of N shares of
    # the drivers (every N-th from the K-th); its boots are named bK-..., and
    # its JSON carries each boot's console whole, for `collect` to fold
    batch: Optional[tuple[int, int]] = None
    layouts: tuple[str, ...] = ()         # only these tries ("tpl" for a template); () = all
    exercise: bool = True                 # each bound device used by its class workload


@dataclass
class UsbSweepResult:
    target: Target
    build: object
    run_dir: Optional[Path]
    drivers: list[DriverRun]
    table: sweeptable.Table
    missing: list[str]                    # asked, not built
    boots: int = 0
    wall: float = 0.0
    boot_drivers: dict[str, list[str]] = field(default_factory=dict)   # boot label -> modules
    runs: list = field(default_factory=list)                           # sweep.DeviceRun a boot
    consoles: bool = False                # the boots' consoles in the JSON (a campaign job)
    deps: dict = field(default_factory=dict)                           # modules.dep

    def figures(self) -> dict:
        return figures([d.state for d in self.drivers], self.boots, len(self.table.sites),
                       self.wall, [d.to_json() for d in self.drivers],
                       self.table.to_json().get("sites"))

    def to_json(self) -> dict:
        boots = []
        for r in self.runs:
            b = {**r.to_json(), "drivers": self.boot_drivers.get(r.device, [])}
            if self.consoles:
                b["console_text"] = r.console.read_text(errors="replace") \
                    if r.console and r.console.is_file() else ""
            boots.append(b)
        return {"command": "sweep", "usb_drivers": True, "ok": True, **self.target.to_json(),
                "build": self.build.to_json(), "run_dir": str(self.run_dir) if self.run_dir
                else None, "figures": self.figures(), "not_built": self.missing,
                "drivers": [d.to_json() for d in self.drivers], "boots": boots,
                **attribute(self.table.to_json(), self.boot_drivers, self.deps)}


def figures(states: list[str], boots: int, sites: int, wall: float,
            drivers: Optional[list[dict]] = None,
            site_rows: Optional[list[dict]] = None) -> dict:
    """The sweep's figures from its drivers' states (a sweep's, or a
    campaign's drivers put together by collect); with the drivers' JSON,
    how many bound ones had their class workload run, and per class."""
    count = {s: states.count(s) for s in ("bound", "unbound", "firmware", "no-device", "planned")}
    tried = len(states) - count["no-device"] - count["planned"]
    out = {"drivers": len(states), **count, "boots": boots, "sites": sites,
           "wall_seconds": round(wall, 1), "bound_share_of_tried_without_firmware": round(
               count["bound"] / max(1, tried - count["firmware"]), 3)}
    if drivers is not None:
        out.update(workload_figures(drivers))
    if site_rows is not None:
        out.update(site_figures(site_rows))
    return out


def site_figures(sites: list[dict]) -> dict:
    """The sites that corrupt, per architecture (their exposure's verdict),
    and those with dma-owned evidence (a CPU access seen in a device-owned
    line), and of those the writes."""
    real: dict[str, int] = {}
    for site in sites:
        for v in site.get("exposure") or []:
            if v.get("verdict") == "corrupts":
                real[v["arch"]] = real.get(v["arch"], 0) + 1
    owned = [x for x in sites if x.get("dma_owned")]
    return {"sites_real": dict(sorted(real.items())), "sites_dma_owned": len(owned),
            "sites_dma_owned_write": sum(1 for x in owned if x.get("dma_owned_access") == "write")}


def workload_figures(drivers: list[dict]) -> dict:
    """Of the bound drivers: those whose device's class workload ran a
    round on a node (`workload_ran`), those whose drivers made no node
    (`workload_no_node`), and the drivers per class of node."""
    ran, none, per = 0, 0, {}
    for d in drivers:
        if d.get("state") != "bound":
            continue
        bound = [t for t in d.get("tries") or [] if t.get("bound")]
        w = (bound[-1].get("workloads") if bound else None) or {}
        classes = [c for c, rounds in w.items() if c != "none" and rounds > 0]
        ran += bool(classes)
        none += "none" in w and not classes
        for c in classes:
            per[c] = per.get(c, 0) + 1
    return {"workload_ran": ran, "workload_no_node": none,
            "workload_classes": dict(sorted(per.items()))}


def module_deps(modules_dir: Path) -> dict[str, set[str]]:
    """modules.dep of a build (beside its modules.alias): each module, by
    name with '-' as '_', and the modules it needs; {} without one."""
    try:
        text = usbgen.find_alias(Path(modules_dir)).with_name("modules.dep").read_text()
    except (OSError, errors.HarnessError):
        return {}
    out: dict[str, set[str]] = {}
    for line in text.splitlines():
        mod, _, need = line.partition(":")
        out[_norm(Path(mod).name.split(".")[0])] = {_norm(Path(x).name.split(".")[0])
                                                  for x in need.split()}
    return out


# a stack frame in a module: "_usbctrl_vendorreq_sync+0x9e/0x144 [rtl_usb]"
_FRAME_MODULE = re.compile(r"^\s*[\w.]+\+0x[0-9a-f]+/0x[0-9a-f]+ \[(\w+)\]\s*$")


def attribute(table: dict, boot_drivers: dict[str, list[str]],
              deps: Optional[dict[str, set[str]]] = None) -> dict:
    """Each site with the drivers it is one of (`drivers`), among those of
    the boots it was seen in: the driver whose module a frame of its stack
    is in, or that needs that module (rtl8192cu for a frame in rtl_usb,
    by modules.dep); else the driver whose source file it is in (ftdi_sio
    for drivers/usb/serial/ftdi_sio.c); else, seen in at most two boots,
    every driver of those boots; else none (a site of USB core, the hub or
    the host controller, which every boot's devices go through)."""
    deps = deps or {}
    for site in table.get("sites", []):
        boots = [b for b in site.get("devices", []) if b in boot_drivers]
        mods = list(dict.fromkeys(m for b in boots for m in boot_drivers[b]))
        excerpt = (site.get("evidence") or {}).get("excerpt") or []
        framed = {m.group(1) for m in map(_FRAME_MODULE.match, excerpt) if m}
        by_stack = [m for m in mods if _norm(m) in framed or deps.get(_norm(m), set()) & framed]
        where = str(site.get("location") or "").split(":")[0]
        stem = _norm(Path(where).stem) if where else ""
        own = [m for m in mods if stem and _norm(m) == stem]
        site["drivers"] = by_stack or own or (mods if len(boots) <= 2 else [])
        site["drivers_from"] = ("stack" if by_stack else "source file" if own else
                                "boots" if site["drivers"] else
                                f"none: seen in {len(boots)} boots (USB core, hub or xHCI)")
    return table


def _profiles(runs: list[DriverRun], r: int, folder: Path) -> list[tuple[DriverRun, str, Path]]:
    """Each driver's try `r` as a profile file in `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    out = []
    for i, d in enumerate(runs):
        attempt = d.plan.tries[r]
        p = folder / f"{d.module}-{attempt.replace(':', '-')}.profile"
        jsonout.write_text(p, usbgen.device_text(d.plan, attempt, usbdevices.PROFILES_DIR,
                                                 open_pid=0x1000 + i))
        out.append((d, attempt, p))
    return out


def usb_sweep(req: UsbSweepRequest, progress: Progress) -> UsbSweepResult:
    t0 = time.monotonic()
    bad = [x for x in req.layouts if x != "tpl" and x not in usbgen.LAYOUTS]
    if bad:         # before the build
        raise errors.InputError(f"--layouts: {', '.join(bad)}: not a layout (tpl, "
                                f"{', '.join(usbgen.LAYOUTS)})")
    # before the build too: a name's syntax (a module name is never a path);
    # whether the tree has it, the built kernel's modules.alias says below
    # (cheap when the sweep kernel is cached: Kconfig names options, not modules)
    odd = [d for d in req.drivers if not MODULE_NAME.fullmatch(d)]
    if odd:
        raise errors.InputError(f"--drivers: {odd[0][:80]!r} is not a module name (letters, "
                                "digits, '_' and '-')")
    if not 1 <= req.per_boot <= 8 or req.max_tries < 0:
        raise errors.InputError("--per-boot is 1 to 8 (the xHCI ports a boot has); --tries >= 0")
    t, gen = usb_target(req.variant, progress, generate=not req.as_configured)
    build = pipeline.build(t, progress=progress)
    art = build.artifacts
    config = art.config.read_text() if art.config.is_file() else ""
    missing = not_built(config, gen) if gen else []
    alias = usbgen.find_alias(Path(art.modules))
    plans = usbgen.plan(usbgen.parse_aliases(alias.read_text(errors="replace"), str(alias)))
    if req.drivers:
        known = {p.module for p in plans}
        unknown = [d for d in req.drivers if d not in known]
        if unknown:
            raise errors.InputError(f"--drivers: {', '.join(unknown)} not among the {len(known)} "
                                    f"USB/HID drivers of {alias}")
        plans = [p for p in plans if p.module in req.drivers]
    if req.layouts:
        plans = [replace(p, tries=tuple(t for t in p.tries if t in req.layouts or (
            t.startswith("tpl:") and "tpl" in req.layouts))) for p in plans]
    if req.batch:
        k, n = req.batch
        plans = plans[k - 1::n]
    prefix = f"b{req.batch[0]}-" if req.batch else ""
    drivers = [DriverRun(p.module, p) for p in plans]
    if req.plan_only:
        return UsbSweepResult(t, build, None, drivers, sweeptable.Table([], {}), missing,
                              0, time.monotonic() - t0)
    run_dir = req.run_dir or pipeline.new_run_dir(f"usbsweep-{t.name}")
    boots: list[sweep.DeviceRun] = []
    boot_drivers: dict[str, list[str]] = {}
    parallel = req.parallel or os.cpu_count() or 1
    limit = req.max_tries or max((len(p.tries) for p in plans), default=0)
    for r in range(limit):
        todo = [d for d in drivers if not d.bound_with and r < len(d.plan.tries)]
        if not todo:
            break
        batches = [todo[i:i + req.per_boot] for i in range(0, len(todo), req.per_boot)]
        progress.note(f"[usb-sweep] try {r + 1}: {len(todo)} driver(s), {len(batches)} boot(s)")

        def one(job):
            k, batch = job
            folder = run_dir / f"{prefix}try{r + 1}-boot{k + 1}"
            profs = _profiles(batch, r, folder / "profiles")
            mods = []
            for d, _, _ in profs:
                mods += ([d.module, "usbhid"] if d.plan.match.bus == "hid" else [d.module])
            flood = FloodSettings(flood=Flood(rate=str(RATE)), duration=req.duration,
                                  devices=tuple(str(p) for _, _, p in profs), bulk_in="random",
                                  exercise=req.exercise)
            fr = pipeline.flood_once(pipeline.FloodJob(build, folder, req.boot, flood, "sweep",
                                                       modules=tuple(dict.fromkeys(mods))),
                                     progress)
            return k, profs, fr
        for k, profs, fr in pipeline.run_parallel(list(enumerate(batches)), one, parallel):
            console = fr.result.console.read_text(errors="replace") \
                if fr.result.console.is_file() else ""
            label = f"{prefix}try{r + 1}-boot{k + 1}"
            boot_drivers[label] = [d.module for d, _, _ in profs]
            boots.append(sweep.DeviceRun(
                label, "usb", "ran" if fr.result.ok else "failed",
                ("" if fr.result.ok else fr.result.describe() + "; ")
                + "drivers: " + ", ".join(boot_drivers[label]), fr.run_dir,
                fr.result.console, fr.result.outcome))
            devs = fr.payload.get("devices") or []
            for i, (d, attempt, _) in enumerate(profs):
                res = devs[i] if i < len(devs) else {}
                drv = drivers_of(res)
                bound = _norm(d.module) in drv
                why = "" if bound else (
                    "the device never appeared in the guest" if not res.get("found") else
                    why_unbound(console, d.module, res.get("sysname")))
                d.tries.append({"attempt": attempt, "boot": label, "bound": bound,
                                "drivers": sorted(drv - {"none"}), "why": why or None,
                                # usbmon's count of its interrupt and bulk IN
                                # completions: the flood reached the driver
                                "completions": sum((res.get("interrupt_completions")
                                                    or {}).values()),
                                "bulk_completions": sum((res.get("bulk_completions")
                                                         or {}).values()),
                                # the class workload's nodes: class -> rounds
                                "workloads": {c: sum(n["rounds"] for n in nodes.values())
                                              for c, nodes in (res.get("workloads")
                                                               or {}).items()}})
                if bound:
                    d.bound_with, d.why = attempt, ""
                else:
                    d.why = why
        progress.note(f"[usb-sweep] try {r + 1} done: {sum(1 for d in drivers if d.bound_with)} "
                      f"bound so far, {len(boots)} boot(s)")
    table = sweeptable.fold(boots, art.dir, version=t.version)
    res = UsbSweepResult(t, build, run_dir, drivers, table, missing, len(boots),
                         time.monotonic() - t0, boot_drivers, boots, consoles=bool(req.batch),
                         deps=module_deps(Path(art.modules)))
    jsonout.write(run_dir / "usb-sweep.json", res.to_json())
    return res


def summary(key: str, f: dict) -> str:
    """The figures in a line."""
    return (f"{key}: {f['drivers']} USB/HID driver(s) with an ID table built; "
            f"{f['bound']} bound, {f['unbound']} unbound, {f['firmware']} need firmware, "
            f"{f['no-device']} catch-all; {f['boots']} boot(s)"
            + (f", {f['wall_seconds']:.0f} s" if f["wall_seconds"] else "")
            + f"; bound {100 * f['bound_share_of_tried_without_firmware']:.0f}% of those "
            "tried without firmware"
            + (f"; sites that corrupt: {', '.join(f'{a} {n}' for a, n in f['sites_real'].items()) or 'none'}"
               f", with dma-owned evidence {f['sites_dma_owned']} ({f['sites_dma_owned_write']} "
               "writes)" if "sites_real" in f else "")
            + (f"; class workload ran for {f['workload_ran']}, no node for "
               f"{f['workload_no_node']} ({', '.join(f'{c} {n}' for c, n in f['workload_classes'].items()) or 'no class'})"
               if "workload_ran" in f else ""))


def format_text(res: UsbSweepResult) -> str:
    out = [summary(res.build.artifacts.key, res.figures())]
    if res.missing:
        out.append(f"  {len(res.missing)} option(s) asked and not built (a dependency this "
                   f"configuration lacks): {', '.join(res.missing[:12])}"
                   + (" ..." if len(res.missing) > 12 else ""))
    for d in res.drivers:
        out.append(f"  {d.state:9} {d.module:<24} "
                   + (f"with {d.bound_with}" if d.bound_with else (d.why or d.plan.reason)))
    out.append("")
    out.append(sweeptable.format_text(res.table, details=False))
    sites = attribute(res.table.to_json(), res.boot_drivers, res.deps)["sites"]
    if sites:
        out.append("the drivers of each site:")
        out += [f"  {s['key']}: " + (", ".join(s["drivers"]) + f" (by {s['drivers_from']})"
                                     if s["drivers"] else s["drivers_from"]) for s in sites]
    return "\n".join(out)
