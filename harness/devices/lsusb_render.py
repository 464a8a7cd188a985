"""A profile's text: what fake-device's profile_write() prints, plus the
converter's '#' notes (harness/devices/lsusb.py).
"""

from __future__ import annotations

from .lsusb_answers import LANGID
from .lsusb_build import Profile
from .lsusb_plan import _le16


# ---- The canonical text (profile.c profile_write) -------------------------------------

_CLASS = {0x00: "per interface", 0x01: "audio", 0x02: "CDC", 0x03: "HID", 0x05: "physical",
          0x06: "still image", 0x07: "printer", 0x08: "mass storage", 0x09: "hub",
          0x0a: "CDC data", 0x0b: "smart card", 0x0d: "content security", 0x0e: "video",
          0x0f: "personal healthcare", 0x10: "audio/video", 0x11: "billboard",
          0xdc: "diagnostic", 0xe0: "wireless controller", 0xef: "miscellaneous",
          0xfe: "application specific", 0xff: "vendor specific"}
_VC = [None, "VC header", "VC input terminal", "VC output terminal", "VC selector unit",
       "VC processing unit", "VC extension unit", "VC encoding unit"]
_VS = [None, "VS input header", "VS output header", "VS still image frame",
       "VS uncompressed format", "VS uncompressed frame", "VS MJPEG format", "VS MJPEG frame",
       None, None, "VS MPEG-2 TS format", None, "VS DV format", "VS color matching", None, None,
       "VS frame-based format", "VS frame-based frame", "VS stream-based format"]
_CDC = ["CDC header", "CDC call management", "CDC ACM", None, None, None, "CDC union"]
_XFER = ["control", "isochronous", "bulk", "interrupt"]


def _cls(c: int, s: int, p: int) -> str:
    n = _CLASS.get(c)
    return f"class 0x{c:02x}" + (f" ({n})" if n else "") + f" subclass 0x{s:02x} protocol 0x{p:02x}"


def _cs_name(cls: int, sub: int, st: int) -> str | None:
    if cls == 0x0e and sub == 0x01 and st < len(_VC):
        return _VC[st]
    if cls == 0x0e and sub == 0x02 and st < len(_VS):
        return _VS[st]
    if cls == 0x02 and st < len(_CDC):
        return _CDC[st]
    if cls == 0x02 and st == 0x0f:
        return "CDC ethernet networking"
    if cls == 0x02 and st == 0x1a:
        return "CDC NCM"
    return None


def _bcd(v: int) -> str:
    return f"{v >> 8:x}.{v & 0xff:02x}"


def _bytes(b: bytes) -> str:
    out = []
    for i, x in enumerate(b):
        out.append((" " if i == 0 or i % 16 else "\n\t") + f"{x:02x}")
    return "".join(out) + "\n"


def _quoted(s: str) -> str:
    out = ['"']
    for c in s:
        if c in '"\\':
            out.append("\\" + c)
        elif ord(c) < 0x20 or ord(c) == 0x7f:
            out.append(f"\\x{ord(c):02x}")
        else:
            out.append(c)               # UTF-8 as it is, like write_quoted()
    return "".join(out) + '"'


def _num(v: int | None) -> str:
    return " *" if v is None else f" 0x{v & 0xffff:04x}"


def _comment_config(cfg: bytes, speed: str) -> str:
    out = []
    cls = sub = 0
    off = 0
    while off < len(cfg):
        if len(cfg) - off < 2 or cfg[off] < 2 or cfg[off] > len(cfg) - off:
            out.append(f"# (malformed: the descriptor at offset {off} runs past the end or "
                       "has bLength below 2)\n")
            break
        d = cfg[off:off + cfg[off]]
        off += d[0]
        t = d[1]
        if t == 0x02 and d[0] >= 9:
            line = (f"# configuration {d[5]}: {d[4]} interface{'' if d[4] == 1 else 's'}, "
                    f"bmAttributes 0x{d[7]:02x}, bMaxPower {d[8] * (8 if speed == 'super' else 2)} mA, "
                    f"wTotalLength {_le16(d[2:4])}")
            if d[6]:
                line += f", iConfiguration {d[6]}"
            out.append(line + "\n")
            continue
        if t == 0x0b and d[0] >= 8:
            out.append(f"# interface association: interfaces {d[2]}-{d[2] + (d[3] - 1 if d[3] else 0)}, "
                       + _cls(d[4], d[5], d[6]) + "\n")
            continue
        if t == 0x04 and d[0] >= 9:
            cls, sub = d[5], d[6]
            line = (f"# interface {d[2]} alt {d[3]}: " + _cls(d[5], d[6], d[7])
                    + f", {d[4]} endpoint{'' if d[4] == 1 else 's'}")
            if d[8]:
                line += f", iInterface {d[8]}"
            out.append(line + "\n")
            continue
        if t == 0x05 and d[0] >= 7:
            mps = _le16(d[4:6])
            line = (f"# endpoint 0x{d[2]:02x} {_XFER[d[3] & 3]} {'IN' if d[2] & 0x80 else 'OUT'}, "
                    f"wMaxPacketSize {mps & 0x7ff}")
            if mps >> 11 & 3:
                line += f" x{(mps >> 11 & 3) + 1}"
            out.append(line + f", bInterval {d[6]}\n")
            continue
        if t == 0x24:
            n = _cs_name(cls, sub, d[2]) if d[0] >= 3 else None
            if n and d[0] >= 4 and cls == 0x0e and sub == 0x01 and d[2] >= 2:
                out.append(f"#   {n} {d[3]}, {d[0]} bytes\n")
                continue
            if n:
                out.append(f"#   {n}, {d[0]} bytes\n")
                continue
            if d[0] >= 3:
                out.append(f"#   class-specific interface descriptor, subtype 0x{d[2]:02x}, "
                           f"{d[0]} bytes\n")
                continue
        elif t == 0x25:
            if d[0] >= 3:
                out.append(f"#   class-specific endpoint descriptor, subtype 0x{d[2]:02x}, "
                           f"{d[0]} bytes\n")
                continue
        elif t == 0x21:
            out.append(f"#   HID descriptor, {d[0]} bytes\n")
            continue
        out.append(f"# descriptor type 0x{t:02x}, {d[0]} bytes\n")
    return "".join(out)


def _comment_bos(bos: bytes) -> str:
    out = []
    off = 0
    while off < len(bos):
        if len(bos) - off < 2 or bos[off] < 2 or bos[off] > len(bos) - off:
            out.append(f"# (malformed at offset {off})\n")
            break
        d = bos[off:off + bos[off]]
        off += d[0]
        if d[1] == 0x0f and d[0] >= 5:
            out.append(f"# BOS: {d[4]} capabilit{'y' if d[4] == 1 else 'ies'}, "
                       f"wTotalLength {_le16(d[2:4])}\n")
        elif d[1] == 0x10 and d[0] >= 3:
            n = {2: " (USB 2.0 extension)", 3: " (SuperSpeed)", 5: " (platform)"}.get(d[2], "")
            out.append(f"#   device capability 0x{d[2]:02x}{n}, {d[0]} bytes\n")
        else:
            out.append(f"# descriptor type 0x{d[1]:02x}, {d[0]} bytes\n")
    return "".join(out)


def _note_lines(lines: list[str], prefix: str = "# ") -> str:
    return "".join(prefix + ln + "\n" for ln in lines)


def render(p: Profile, notes: bool = True, capturable: bool = False) -> str:
    """The profile's text: profile_write()'s canonical text, plus (notes=True)
    the converter's '#' lines.  capturable=True leaves out what a capture of
    the replayed profile cannot give back (hand-written lines, strings no
    standard descriptor names): what fake-device's plan_capture() writes."""
    strings = p.strings[:p.captured_strings] if capturable else p.strings
    gets = [g for g in p.gets if not (capturable and g.hand)]
    sets = [s for s in p.sets if not (capturable and s.hand)]
    o = ["dmaharness-usb-profile 1\n", f"name {p.name}\n"]
    if p.description is not None:
        o.append(f"description {_quoted(p.description)}\n")
    for s in p.sources:
        o.append(f"source {_quoted(s)}\n")
    o.append(f"speed {p.speed}\n")
    if notes and p.summary:
        o.append("\n" + _note_lines(p.summary))
    d = p.device
    o.append(f"\n# device: USB {_bcd(_le16(d[2:4]))}, {_cls(d[4], d[5], d[6])}, ep0 {d[7]} bytes, "
             f"{_le16(d[8:10]):04x}:{_le16(d[10:12]):04x} bcdDevice {_bcd(_le16(d[12:14]))}, "
             f"strings {d[14]}/{d[15]}/{d[16]}, {d[17]} configuration{'' if d[17] == 1 else 's'}\n")
    o.append("device" + _bytes(p.device))
    if p.qualifier is not None:
        o.append("qualifier" + _bytes(p.qualifier))
    for i, c in enumerate(p.configs):
        o.append("\n" + _comment_config(c, p.speed))
        if notes and p.config_notes.get(i):
            o.append(_note_lines(p.config_notes[i], "# note: "))
        o.append("config" + _bytes(c))
    if p.bos is not None:
        o.append("\n" + _comment_bos(p.bos) + "bos" + _bytes(p.bos))
    if strings:
        o.append("\n")
        if notes:
            o.append(_note_lines(p.string_notes))
        o.append("string 0" + _bytes(LANGID.to_bytes(2, "little")))
        for idx, text in strings:
            o.append(f"string 0x{LANGID:04x} {idx} {_quoted(text)}\n")
    if gets or sets:
        o.append("\n")
    for g in gets:
        if notes:
            o.append(_note_lines(g.comment))
        o.append(f"get 0x{g.type:02x} 0x{g.req:02x}{_num(g.value)}{_num(g.index)}")
        o.append(" stall\n" if g.data is None else " =" + _bytes(g.data))
    for s in sets:
        if notes:
            o.append(_note_lines(s.comment))
        o.append(f"set 0x{s.type:02x} 0x{s.req:02x}{_num(s.value)}{_num(s.index)}")
        o.append(f" store 0x{s.store:02x}\n" if s.store is not None else " ack\n")
    if p.interrupts:
        o.append("\n")
    for ep, pat in p.interrupts:
        o.append(f"interrupt 0x{ep:02x} pattern {pat}\n")
    return "".join(o)
