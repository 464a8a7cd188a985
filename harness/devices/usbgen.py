"""A USB device per driver, made from the kernel's own match tables.

The kernel's ``modules.alias`` (what depmod writes from every module's
``MODULE_DEVICE_TABLE``) lists, for each USB and HID driver, the devices
it matches, as scripts/mod/file2alias.c writes them::

    alias usb:v046Dp0825d*dc*dsc*dp*ic0Eisc01ip00in* uvcvideo
    alias hid:b0003g*v0000046Dp0000C52B logitech_dj

A USB entry names a vendor and product, a bcdDevice range, the device's
class/subclass/protocol and an interface's class/subclass/protocol and
number, each hexadecimal or ``*`` (any); a HID entry a bus (0003: USB), a
group and a vendor and product.  :func:`parse_aliases` reads them into
:class:`Match` values; :func:`profile` turns one into a device profile
(fake-device/profiles/FORMAT.md) that the driver should bind to: the IDs
and classes the entry asks for, at the level it asks for them (device or
interface), an interface at the number it names, and the endpoints of one
:data:`LAYOUTS` shape.  A driver that does not bind with the first
layout is tried with the next (the probe search), as syzkaller's
syz-usbgen-made devices are.

What an entry leaves open is filled the same way every time: vendor
0x1209 (pid.codes, the vendor ID set aside for open and test devices) and
product 0x0001 when the entry matches by class only, bcdDevice the
lowest value its range admits, class 0xff (vendor specific) for an
interface whose class is open.  A HID entry becomes a USB HID interface
(class 3) with a boot keyboard's report descriptor, which usbhid binds
and HID core hands to the driver whose table names the IDs.

Generated profiles are data of the cache, keyed by the kernel; nothing
here is committed but the code (and a few examples in
fake-device/profiles/examples/ that show the shapes).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Optional

from ..errors import InputError
from .lsusb_answers import Get, Set, _hid_boot_keyboard_65
from .lsusb_build import Profile
from .lsusb_plan import plan_defaults
from .lsusb_render import render

OPEN_VENDOR = 0x1209          # pid.codes: IDs for open-source and test devices
OPEN_PRODUCT = 0x0001
HID_BUS_USB = 0x0003

# usb:v%04Xp%04Xd<bcd>dc%02Xdsc%02Xdp%02Xic%02Xisc%02Xip%02Xin%02X (file2alias.c)
_USB = re.compile(r"usb:v(?P<v>[0-9A-F]{4}|\*)p(?P<p>[0-9A-F]{4}|\*)d(?P<d>[0-9A-F\[\]\-*]*?)"
                  r"dc(?P<dc>[0-9A-F]{2}|\*)dsc(?P<dsc>[0-9A-F]{2}|\*)dp(?P<dp>[0-9A-F]{2}|\*)"
                  r"ic(?P<ic>[0-9A-F]{2}|\*)isc(?P<isc>[0-9A-F]{2}|\*)ip(?P<ip>[0-9A-F]{2}|\*)"
                  r"in(?P<in>[0-9A-F]{2}|\*)\*?$")     # add_wildcard()'s closing '*'

# hid:b%04Xg%04Xv%08Xp%08X
_HID = re.compile(r"hid:b(?P<b>[0-9A-F]{4}|\*)g(?P<g>[0-9A-F]{4}|\*)v(?P<v>[0-9A-F]{8}|\*)"
                  r"p(?P<p>[0-9A-F]{8}|\*)\*?$")
_MODULE = re.compile(r"[A-Za-z0-9_-]{1,64}")


@dataclass(frozen=True)
class Match:
    """One modules.alias entry of a USB or HID driver (None: any)."""
    module: str
    bus: str                                  # "usb" | "hid"
    alias: str
    vid: Optional[int] = None
    pid: Optional[int] = None
    bcd: Optional[int] = None                 # the lowest bcdDevice the entry admits
    dev_class: Optional[int] = None
    dev_subclass: Optional[int] = None
    dev_protocol: Optional[int] = None
    if_class: Optional[int] = None
    if_subclass: Optional[int] = None
    if_protocol: Optional[int] = None
    if_number: Optional[int] = None
    hid_group: Optional[int] = None

    @property
    def catch_all(self) -> bool:
        """An entry that matches every device (hid_generic's hid:b*g*v*p*)."""
        return self.vid is None and self.pid is None and self.dev_class is None \
            and self.hid_group is None and (self.bus == "hid" or self.if_class is None)


def _hex(s: str) -> Optional[int]:
    return None if s == "*" else int(s, 16)


def lowest_bcd(pattern: str) -> Optional[int]:
    """The lowest bcdDevice a file2alias range pattern admits ("*": any,
    "0[0-2]*", "0100", "01[0-9A-F]"): each bracket's lowest digit, '*' as 0,
    up to four digits; None when the pattern says nothing."""
    if pattern in ("", "*"):
        return None
    digits, i = [], 0
    while i < len(pattern) and len(digits) < 4:
        c = pattern[i]
        if c == "[":
            j = pattern.find("]", i)
            if j < 0:
                raise ValueError(f"unclosed range in {pattern!r}")
            body = pattern[i + 1:j]
            digits.append(min(body.replace("-", "")))
            i = j + 1
        elif c == "*":
            break
        else:
            digits.append(c)
            i += 1
    digits += ["0"] * (4 - len(digits))
    return int("".join(digits), 16)


def parse_alias(line: str) -> Optional[Match]:
    """One `alias usb:... MODULE` or `alias hid:... MODULE` line; None for
    other buses and comments; ValueError for a USB/HID line it cannot read."""
    words = line.split()
    if len(words) != 3 or words[0] != "alias" or not words[1].startswith(("usb:", "hid:")):
        return None
    alias, module = words[1], words[2]
    if not _MODULE.fullmatch(module):
        raise ValueError(f"{module!r} is not a module name")
    m = _USB.match(alias)
    if m is not None:
        return Match(module, "usb", alias, _hex(m["v"]), _hex(m["p"]), lowest_bcd(m["d"]),
                     _hex(m["dc"]), _hex(m["dsc"]), _hex(m["dp"]), _hex(m["ic"]),
                     _hex(m["isc"]), _hex(m["ip"]), _hex(m["in"]))
    m = _HID.match(alias)
    if m is not None:
        bus = _hex(m["b"])
        if bus is not None and bus != HID_BUS_USB:
            return None                       # Bluetooth, I2C, ...: no USB device for it
        vid, pid = _hex(m["v"]), _hex(m["p"])
        return Match(module, "hid", alias, None if vid is None else vid & 0xffff,
                     None if pid is None else pid & 0xffff, hid_group=_hex(m["g"]),
                     if_class=0x03)
    raise ValueError(f"{alias!r} is not a usb: or hid: alias as file2alias writes them")


def find_alias(path: Path) -> Path:
    """A modules.alias, or the one in a folder (a build's artifacts/modules)."""
    if path.is_dir():
        found = sorted(path.rglob("modules.alias"))
        if not found:
            raise InputError(f"{path}: a folder without a modules.alias", path=str(path))
        return found[0]
    return path


def parse_aliases(text: str, path: str = "modules.alias") -> dict[str, list[Match]]:
    """Every USB and HID driver of a modules.alias and its entries, in file
    order; an unreadable entry names the file and the line."""
    out: dict[str, list[Match]] = {}
    for n, line in enumerate(text.splitlines(), 1):
        try:
            m = parse_alias(line)
        except ValueError as e:
            raise InputError(f"{path}:{n}: {e}", path=path) from None
        if m is not None:
            out.setdefault(m.module, []).append(m)
    return out


# --- the devices ---------------------------------------------------------------------

# endpoint shapes, tried in turn: (transfer type, direction IN?) per endpoint
LAYOUTS: dict[str, tuple[tuple[str, bool], ...]] = {
    "int-bulk": (("int", True), ("bulk", True), ("bulk", False)),
    # int-bulk, answering every vendor request (VENDOR_ZEROS): a device
    # that reads back zeros from any register instead of stalling what it
    # does not know (-EPIPE, the probe error of 39 drivers of the 7.3.4 sweep)
    "vendor": (("int", True), ("bulk", True), ("bulk", False)),
    "bulk": (("bulk", True), ("bulk", False)),
    "int": (("int", True),),
    "int-int": (("int", True), ("int", False)),
    # many of each, for drivers that want several ports' or channels' worth
    # (mos7840's four bulk pairs, digi_acceleport's five, microtek's three
    # bulk endpoints); in the 7.3.4 sweep a layout without endpoints bound
    # no driver that the four above had not, and this one took its place
    "multi": (("int", True), ("bulk", True), ("bulk", False), ("bulk", True), ("bulk", False),
              ("bulk", True), ("bulk", False), ("bulk", True), ("bulk", False),
              ("bulk", True), ("bulk", False), ("int", False)),
}
VENDOR_ZEROS = 64       # bytes of zeros a vendor IN request reads (at most its wLength)
# a HID entry's device is a HID interface whatever the layout: what binds
# its driver is the report descriptor, and only an interrupt OUT endpoint
# (int-int) is another device to it
HID_LAYOUTS = ("int-bulk", "int-int")
_TYPE = {"int": 3, "bulk": 2}


def _endpoints(layout: str) -> bytes:
    out = b""
    for i, (kind, is_in) in enumerate(LAYOUTS[layout], 1):
        size = 64 if kind == "int" else 512
        out += bytes([7, 5, (0x80 if is_in else 0) | i, _TYPE[kind], size & 0xff, size >> 8,
                      4 if kind == "int" else 0])
    return out


def _interface(number: int, cls: int, sub: int, proto: int, eps: bytes, extra: bytes = b""
               ) -> bytes:
    return bytes([9, 4, number, 0, len(eps) // 7, cls, sub, proto, 0]) + extra + eps


HID_GROUP_REPORTS = {
    # HID_GROUP_SENSOR_HUB: an accelerometer's collection, one 16-bit axis
    0x0003: bytes.fromhex("05 20 09 01 a1 01 09 73 a1 00 0a 53 04 16 01 80 26 ff 7f"
                          " 75 10 95 01 81 02 c0 c0"),
    # HID_GROUP_MULTITOUCH: a touch screen's finger (tip switch, contact
    # identifier, X and Y) and the contact count
    0x0004: bytes.fromhex("05 0d 09 04 a1 01 09 22 a1 02 09 42 15 00 25 01 75 01 95 01 81 02"
                          " 95 07 81 01 09 51 25 7f 75 08 95 01 81 02"
                          " 05 01 09 30 09 31 26 ff 0f 75 10 95 02 81 02 c0"
                          " 05 0d 09 54 25 7f 75 08 95 01 81 02 c0"),
}


def _hid_descriptor(report_len: int) -> bytes:
    return bytes([9, 0x21, 0x11, 0x01, 0, 1, 0x22, report_len & 0xff, report_len >> 8])


def name_of(m: Match, layout: str, n: int = 0) -> str:
    """A profile name (FORMAT.md: [a-z0-9][a-z0-9-]*, at most 40)."""
    mod = re.sub(r"[^a-z0-9]+", "-", m.module.lower()).strip("-")[:24] or "driver"
    return f"{mod}-{n}-{layout}"[:40]


def profile(m: Match, layout: str = "int-bulk", n: int = 0, open_pid: int = OPEN_PRODUCT
            ) -> Profile:
    """The device of entry `m` with endpoint shape `layout` (n numbers the
    entry among its driver's, for the name); `open_pid`, the product ID
    under the open vendor ID when the entry names none (a sweep gives each
    such device its own, so that the guest tells them apart)."""
    if layout not in LAYOUTS:
        raise InputError(f"no endpoint layout {layout!r} (known: {', '.join(LAYOUTS)})")
    vid = OPEN_VENDOR if m.vid is None else m.vid
    pid = (open_pid if m.vid is None else 0) if m.pid is None else m.pid
    bcd = 0x0100 if m.bcd is None else m.bcd
    device = bytes([18, 1, 0x00, 0x02, m.dev_class or 0, m.dev_subclass or 0,
                    m.dev_protocol or 0, 64, vid & 0xff, vid >> 8, pid & 0xff, pid >> 8,
                    bcd & 0xff, bcd >> 8, 1, 2, 3, 1])
    number = m.if_number or 0
    # the entry's class at the interface; at the device only, the interface
    # follows the device's (a hub, a vendor device matched by dc)
    cls = m.if_class if m.if_class is not None else (
        m.dev_class if m.dev_class not in (None, 0) else 0xff)
    sub = m.if_subclass if m.if_subclass is not None else (
        m.dev_subclass or 0 if m.if_class is None and m.dev_class else 0)
    proto = m.if_protocol if m.if_protocol is not None else (
        m.dev_protocol or 0 if m.if_class is None and m.dev_class else 0)
    gets: list[Get] = []
    ifaces = b""
    for k in range(number):               # interfaces before the one the entry names
        ifaces += _interface(k, 0xff, 0, 0, b"")
    extra = b""
    eps = _endpoints(layout)
    if cls == 0x03:
        # a HID group the entry asks for is HID core's verdict on the report
        # descriptor: hid-multitouch's needs a contact identifier, the sensor
        # hub's a collection of the sensor page
        report = HID_GROUP_REPORTS.get(m.hid_group or 0) or _hid_boot_keyboard_65()
        extra = _hid_descriptor(len(report))
        if not eps:
            eps = _endpoints("int")
        gets.append(Get(0x81, 0x06, 0x2200, number, report,
                        ["the report descriptor: a boot keyboard's"], hand=True))
    ifaces += _interface(number, cls, sub, proto, eps, extra)
    total = 9 + len(ifaces)
    config = bytes([9, 2, total & 0xff, total >> 8, number + 1, 1, 0, 0x80, 50]) + ifaces
    set_rules, ints = plan_defaults([config], gets)
    sets = [Set(t, r, None, None, st, []) for t, r, st in set_rules]
    if layout == "vendor":      # every vendor request, to the device or an interface
        gets += [Get(t, r, None, None, bytes(VENDOR_ZEROS),
                     ["every vendor read answers zeros"] if (t, r) == (0xc0, 0) else [], hand=True)
                 for t in (0xc0, 0xc1) for r in range(256)]
        sets += [Set(t, r, None, None, None, ["every vendor write is taken"]
                     if (t, r) == (0x40, 0) else [], hand=True)
                 for t in (0x40, 0x41) for r in range(256)]
    return Profile(name=name_of(m, layout, n),
                   description=f"generated for {m.module} from {m.alias}",
                   sources=[f"dmaharness usbgen: modules.alias entry {m.alias} {m.module}, "
                            f"layout {layout}"],
                   speed="high", device=device, qualifier=None, configs=[config], bos=None,
                   strings=[(1, "dmaharness"), (2, f"{m.module} ({layout})"), (3, f"{n:08d}")],
                   captured_strings=3, gets=gets, sets=sets, interrupts=ints)


def profile_text(m: Match, layout: str = "int-bulk", n: int = 0,
                 open_pid: int = OPEN_PRODUCT) -> str:
    return render(profile(m, layout, n, open_pid))


# --- class drivers: a shipped profile with the entry's IDs -------------------------------

# (interface class, subclass, protocol or None: any) -> the shipped profile whose
# class-specific descriptors and answers the driver parses (uvcvideo's VC/VS
# descriptors and probe/commit, snd-usb-audio's UAC descriptors, CDC's
# functional descriptors)
TEMPLATES: dict[tuple[int, Optional[int], Optional[int]], str] = {
    (0x0e, None, 0x01): "sunplusit-hd-uvc15",
    (0x0e, None, None): "builtin-uvc",
    (0x01, None, None): "lifecam-nx6000",
    (0x02, 0x02, None): "stm32-cdc-acm",
    (0x02, 0x06, None): "rtl8153",
}


def template_for(m: Match) -> Optional[str]:
    """The shipped profile a class entry is made from, or None."""
    if m.if_class is None or m.bus != "usb":
        return None
    for (c, sub, proto), name in TEMPLATES.items():
        if c == m.if_class and sub in (None, m.if_subclass) and proto in (None, m.if_protocol):
            return name
    return None


def _hexlines(keyword: str, data: bytes) -> str:
    rows = [" ".join(f"{b:02x}" for b in data[k:k + 16]) for k in range(0, len(data), 16)]
    return f"{keyword} " + "\n\t".join(rows) + "\n"


def _replace_statements(text: str, keyword: str, edit) -> str:
    """The profile text with each `keyword` statement's bytes passed through
    edit(bytes) -> bytes (continuation lines included)."""
    lines = text.split("\n")
    out: list[str] = []
    i = 0
    while i < len(lines):
        words = lines[i].split("#", 1)[0].split()
        if not words or words[0] != keyword:
            out.append(lines[i])
            i += 1
            continue
        hexes = words[1:]
        i += 1
        while i < len(lines) and lines[i][:1] in (" ", "\t"):
            hexes += lines[i].split("#", 1)[0].split()
            i += 1
        out.append(_hexlines(keyword, edit(bytes(int(x, 16) for x in hexes))).rstrip("\n"))
    return "\n".join(out)


def from_template(m: Match, template: str, text: str, n: int = 0,
                  open_pid: Optional[int] = None) -> str:
    """Shipped profile `template` (its text) as the device of entry `m`: the
    entry's vendor, product and bcdDevice in the device descriptor, its
    interface protocol on the interfaces of its class and subclass."""
    def device(d: bytes) -> bytes:
        d = bytearray(d)
        if m.vid is not None:
            d[8:10] = m.vid.to_bytes(2, "little")
            d[10:12] = (m.pid or 0).to_bytes(2, "little")
        elif open_pid is not None:
            d[8:10] = OPEN_VENDOR.to_bytes(2, "little")
            d[10:12] = open_pid.to_bytes(2, "little")
        if m.bcd is not None:
            d[12:14] = m.bcd.to_bytes(2, "little")
        return bytes(d)

    def config(c: bytes) -> bytes:
        c = bytearray(c)
        i = 0
        while i + 9 <= len(c) and c[i] >= 2:
            if c[i + 1] == 4 and c[i] >= 9 and c[i + 5] == m.if_class and (
                    m.if_subclass is None or c[i + 6] == m.if_subclass) \
                    and m.if_protocol is not None:
                c[i + 7] = m.if_protocol
            i += c[i]
        return bytes(c)

    out = _replace_statements(text, "device", device)
    out = _replace_statements(out, "config", config)
    note = (f"# generated for {m.module} from {m.alias}: the shipped profile {template} with "
            "the entry's IDs\n# (the '#' comments below are the template's)")
    return re.sub(r"(?m)^name .*$", f"name {name_of(m, 'tpl', n)}\n{note}", out, count=1)


def choose(entries: Iterable[Match], shared: frozenset = frozenset()) -> Optional[Match]:
    """The entry a driver's first device is made from: the first that names
    a device (IDs or classes), not a catch-all, and not in another driver's
    table too (`shared`: hid-apple's first entry is the Touch Bar backlight
    that hid-appletb-bl drives) when it has such an entry."""
    named = [e for e in entries if not e.catch_all]
    return next((e for e in named if e.alias not in shared), named[0] if named else None)


# --- a driver's plan: which devices to try, in order --------------------------------------

@dataclass(frozen=True)
class DriverPlan:
    module: str
    entries: int                         # its modules.alias entries
    match: Optional[Match]               # the entry its devices are made from
    tries: tuple[str, ...]               # layouts, or "tpl:NAME" for a shipped template
    reason: str = ""                     # why there is nothing to try
    # the entry a template try is made from, when not `match`: a class
    # driver whose first entry is a vendor quirk (cdc_acm's first is a
    # modem without the CDC class) is still tried with its class's template
    tpl_match: Optional[Match] = None

    def to_json(self) -> dict:
        m = self.match
        return {"module": self.module, "entries": self.entries,
                "alias": m.alias if m else None, "bus": m.bus if m else None,
                "tries": list(self.tries), "reason": self.reason or None,
                "template_alias": self.tpl_match.alias if self.tpl_match else None}


def plan(aliases: dict[str, list[Match]]) -> list[DriverPlan]:
    """Every driver's devices, in the order the probe search tries them:
    a class driver's shipped template first, then the endpoint layouts."""
    out = []
    seen = Counter(e.alias for entries in aliases.values() for e in set(entries))
    shared = frozenset(a for a, n in seen.items() if n > 1)
    for module, entries in sorted(aliases.items()):
        m = choose(entries, shared)
        if m is None:
            out.append(DriverPlan(module, len(entries), None, (),
                                  "matches every device (a catch-all such as hid_generic): "
                                  "it binds to the other drivers' HID devices"))
            continue
        t, tm = template_for(m), None
        if t is None:
            tm = next((e for e in entries if not e.catch_all and template_for(e)), None)
            t = template_for(tm) if tm else None
        tries = ((f"tpl:{t}",) if t else ()) + (HID_LAYOUTS if m.bus == "hid" else tuple(LAYOUTS))
        out.append(DriverPlan(module, len(entries), m, tries, tpl_match=tm))
    return out


def device_text(p: DriverPlan, attempt: str, templates_dir, open_pid: Optional[int] = None
                ) -> str:
    """The profile text of one try of a driver's plan (`open_pid`: see profile())."""
    if p.match is None:
        raise InputError(f"{p.module}: nothing to try ({p.reason})")
    if attempt.startswith("tpl:"):
        name = attempt[4:]
        text = (templates_dir / f"{name}.profile").read_text()
        return from_template(p.tpl_match or p.match, name, text, open_pid=open_pid)
    return profile_text(p.match, attempt, open_pid=OPEN_PRODUCT if open_pid is None else open_pid)


__all__ = ["HID_LAYOUTS", "LAYOUTS", "find_alias", "DriverPlan", "Match", "choose", "device_text", "plan", "lowest_bcd", "parse_alias", "parse_aliases",
           "profile", "profile_text"]
