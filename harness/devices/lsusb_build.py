"""A decoded listing made into a profile: descriptors, strings in a
capture's order, the synthesized answers of every request a capture asks
(harness/devices/lsusb.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .lsusb_answers import (HID_REPORTS, LANGID, XU_LEN, Get, Set, _ct_control, _fields,
                            _intervals, _probe, _pu_control, _uvc_stream_info, _vc_clock,
                            hid_check)
from .lsusb_listing import ListingError
from .lsusb_parse import Parsed
from .lsusb_plan import (UVC_GETS, Req, _le16, descriptors, plan_defaults, plan_requests,
                         string_order)
from .lsusb_shipped import REGENERATE, Shipped, _rel


# ---- Building the profile --------------------------------------------------------------

@dataclass
class Profile:
    name: str
    description: str | None
    sources: list[str]
    speed: str
    device: bytes
    qualifier: bytes | None
    configs: list[bytes]
    bos: bytes | None
    strings: list[tuple[int, str]]           # (index, text), in order; language LANGID
    captured_strings: int                    # the first N are those a capture reads
    gets: list[Get]
    sets: list[Set]
    interrupts: list[tuple[int, str]]
    summary: list[str] = field(default_factory=list)
    config_notes: dict[int, list[str]] = field(default_factory=dict)
    string_notes: list[str] = field(default_factory=list)


def infer_speed(dev: bytes, qualifier: bytes | None, configs: list[bytes]) -> str:
    """The speed a listing's device ran at; lsusb -v does not print it."""
    usb = _le16(dev[2:4])
    if usb >= 0x0300:
        return "super"
    eps = [d for c in configs for d in descriptors(c) if d[1] == 0x05 and d[0] >= 7]
    if qualifier is not None or any(_le16(d[4:6]) >> 11 & 3 or
                                    (d[3] & 3 == 1 and _le16(d[4:6]) & 0x7ff > 1023) for d in eps):
        return "high"
    if dev[7] == 8 and usb <= 0x0110 and all(d[3] & 3 == 3 and _le16(d[4:6]) <= 8 for d in eps):
        return "low"
    return "full"


def build(parsed: Parsed, name: str, *, description: str | None = None,
          sources: list[str] | None = None, speed: str | None = None,
          shipped: Shipped | None = None) -> Profile:
    """The profile of a decoded listing, with the synthesized answers."""
    configs = [b"".join(d.data for d in cfg) for cfg in parsed.configs]
    bos = b"".join(d.data for d in parsed.bos) if parsed.bos else None
    speed = speed or (shipped.speed if shipped else None) or infer_speed(
        parsed.device, parsed.qualifier, configs)
    order = string_order(parsed.device, configs)
    extra = [i for i in sorted(parsed.strings) if i not in order]
    strings = [(i, parsed.strings[i]) for i in order + extra if i in parsed.strings]
    for i in order:
        if i not in parsed.strings:
            raise ListingError(parsed.path, None, f"string {i} is named by a descriptor but "
                               "the listing does not show it")
    gets = _answers(parsed, configs, shipped)
    sets_, ints = plan_defaults(configs, gets)
    sets = [Set(t, r, None, None, s) for t, r, s in sets_]
    if shipped:
        for comment, g in shipped.vendor_gets:
            gets.append(Get(g.type, g.req, g.value, g.index, g.data, list(comment), hand=True))
        for comment, s in shipped.vendor_sets:
            sets.append(Set(s.type, s.req, s.value, s.index, s.store, list(comment), hand=True))
    notes = [n for ns in parsed.notes.values() for n in ns]
    summary = [f"Rebuilt by harness/devices/lsusb.py from {_rel(parsed.path)}; regenerate it with "
               f"{REGENERATE} (edit the converter, not this file).",
               "lsusb cannot show every byte; this profile supplies:",
               f"  - string 0, the LANGID list: 0x{LANGID:04x};"]
    if any("class-specific VideoControl interrupt" in n for n in notes):
        summary.append("  - the 5-byte class-specific VideoControl interrupt endpoint "
                       "descriptor (the configuration's notes say which value);")
    if any("SuperSpeed companion" in n for n in notes):
        summary.append("  - the SuperSpeed endpoint companions' bmAttributes and "
                       "wBytesPerInterval (the configurations' notes);")
    if any(g.comment and g.comment[0].startswith("synthesized") for g in gets):
        summary.append("  - the answers marked 'synthesized:', exactly the requests a capture "
                       "asks (fake-device/src/plan.c), in its order.")
    if any(g.comment and g.comment[0].startswith("synthesized: extension unit") for g in gets):
        summary.append("Extension unit controls: their lengths and meanings are the vendor's; "
                       f"each answers GET_LEN {XU_LEN} and zero values (uvcvideo asks them only "
                       "when a control is used).")
    if shipped and (shipped.vendor_gets or shipped.vendor_sets):
        summary.append("Lines marked 'hand-written:' answer requests a capture never sends "
                       "(FORMAT.md); a capture of the replay does not give them back.")
    if shipped:
        summary.append(f"Target driver: {shipped.driver}.")
        summary.extend(shipped.notes)
    if not (shipped and shipped.speed):
        summary.append(f"Speed {speed}: inferred from the descriptors (lsusb -v does not "
                       "print it).")
    string_notes = [f"synthesized: string 0 is 0x{LANGID:04x}; every string below is as lsusb "
                    "printed it"]
    if shipped:
        string_notes.extend(shipped.string_notes)
    return Profile(name, description, sources or [], speed, parsed.device, parsed.qualifier,
                   configs, bos, strings, len(order), gets, sets, ints, summary,
                   {i: list(n) for i, n in parsed.notes.items() if n}, string_notes)


def _answers(parsed: Parsed, configs: list[bytes], shipped: Shipped | None) -> list[Get]:
    """The answer (or stall) of every request plan_requests() asks, in order."""
    gets: list[Get] = []
    if not configs:
        return gets
    cfg = configs[0]
    reqs = plan_requests(cfg)
    clock = _vc_clock(cfg)
    frame = (640, 480)                      # window / region of interest: the default frame
    vs = next((d[2] for d in descriptors(cfg) if d[1] == 0x04 and d[0] >= 9
               and (d[5], d[6], d[3]) == (0x0e, 0x02, 0)), None)
    info = _uvc_stream_info(cfg, vs) if vs is not None else {}
    if info:
        frame = (_le16(info["frame"][5:7]), _le16(info["frame"][7:9]))
    i = 0
    while i < len(reqs):
        r = reqs[i]
        if r.kind in ("ct", "pu", "xu"):
            group = reqs[i:i + 7]
            gets.extend(_control(group, frame))
            i += 7
            continue
        if r.kind == "probe":
            group = reqs[i:i + 4]
            gets.extend(_probe_gets(group, cfg, clock))
            i += 4
            continue
        if r.kind == "hid":
            gets.append(_hid_get(r, parsed, shipped))
        elif r.kind == "acm":
            gets.append(Get(r.type, r.req, r.value, r.index, bytes.fromhex("00 c2 01 00 00 00 08"),
                            ["synthesized: GET_LINE_CODING of the CDC ACM interface: 115200 baud, "
                             "1 stop bit, no parity, 8 data bits"]))
        elif r.kind == "ncm":
            ntb = _fields((2, 28), (2, 0x0001), (4, 16384), (2, 4), (2, 0), (2, 4), (2, 0),
                          (4, 16384), (2, 4), (2, 0), (2, 4), (2, 0))
            gets.append(Get(r.type, r.req, r.value, r.index, ntb,
                            ["synthesized: GET_NTB_PARAMETERS of the CDC NCM interface: NTB-16 "
                             "only, 16384-byte NTBs both ways, divisor 4, alignment 4"]))
        i += 1
    return gets


def _control(group: list[Req], frame: tuple[int, int]) -> list[Get]:
    r = group[0]
    what = {"ct": "camera terminal", "pu": "processing unit", "xu": "extension unit"}[r.kind]
    head = f"synthesized: {what} {r.entity}"
    if r.kind == "xu":
        size = XU_LEN
        comment = f"{head} control {r.selector}: GET_INFO 0x03, GET_LEN {size}, values 0"
        info, vals = 0x03, [bytes(size)] * 5
    else:
        fn = _ct_control if r.kind == "ct" else _pu_control
        name, info, vals, rng = (fn(r.selector, r.size, frame) if r.kind == "ct"
                                 else fn(r.selector, r.size))
        size = r.size
        comment = (f"{head} {name} (selector 0x{r.selector:02x}, {size} byte"
                   f"{'s' * (size > 1)}): GET_INFO 0x{info:02x}, {rng}")
    out = [Get(0xa1, 0x86, r.value, r.index, bytes([info]), [comment]),
           Get(0xa1, 0x85, r.value, r.index, size.to_bytes(2, "little"))]
    for q, v in zip(UVC_GETS, vals):
        assert len(v) == size
        out.append(Get(0xa1, q, r.value, r.index, v))
    return out


def _probe_gets(group: list[Req], cfg: bytes, clock: int) -> list[Get]:
    r = group[0]
    info = _uvc_stream_info(cfg, r.index)
    if not info:
        return [Get(q.type, q.req, q.value, q.index, None,
                    ["synthesized: no format in the streaming interface: the probe control stalls"]
                    if k == 0 else []) for k, q in enumerate(group)]
    frame = info["frame"]
    ivs = _intervals(frame)
    default = int.from_bytes(frame[21:25], "little")
    size = r.length
    uvc = {26: "1.00", 34: "1.10", 48: "1.50"}[size]
    cur = _probe(info, size, default, clock)
    by = {0x81: cur, 0x82: _probe(info, size, min(ivs), clock),
          0x83: _probe(info, size, max(ivs), clock), 0x87: cur}
    w, h = _le16(frame[5:7]), _le16(frame[7:9])
    comment = (f"synthesized: video probe control of interface {r.index} ({size} bytes, the "
               f"length for UVC {uvc}): format {info['format'][3]}, frame {frame[3]} ({w}x{h}), "
               f"interval {default}, dwMaxVideoFrameSize {int.from_bytes(frame[17:21], 'little')}, "
               f"dwMaxPayloadTransferSize {info['payload']} (the largest isochronous packet), "
               f"wDelay 50" + (f", dwClockFrequency {clock}, bmFramingInfo 3, versions 1"
                               if size >= 34 else "")
               + f"; GET_MIN and GET_MAX carry the shortest ({min(ivs)}) and longest "
               f"({max(ivs)}) interval")
    return [Get(q.type, q.req, q.value, q.index, by[q.req], [comment] if k == 0 else [])
            for k, q in enumerate(group)]


def _hid_get(r: Req, parsed: Parsed, shipped: Shipped | None) -> Get:
    printed = parsed.hid_reports.get((0, r.index)) if r.value == 0x2200 else None
    if printed is not None:
        return Get(r.type, r.req, r.value, r.index, printed,
                   [f"the report descriptor of HID interface {r.index}, from the items lsusb printed"])
    key = shipped.hid.get(r.index) if shipped else None
    if key is None and r.length == 65:
        key = "boot-keyboard-65"
    if key is None:
        return Get(r.type, r.req, r.value, r.index, None,
                   [f"synthesized: the {r.length}-byte report descriptor of interface {r.index} "
                    "is not in the listing and no reconstruction of that length is known: it stalls"])
    fn, what = HID_REPORTS[key]
    data = fn()
    hid_check(data)
    if len(data) != r.length:
        raise ListingError(parsed.path, None, f"HID interface {r.index}: wDescriptorLength "
                           f"{r.length} but the reconstruction {key!r} has {len(data)} bytes")
    return Get(r.type, r.req, r.value, r.index, data,
               [f"synthesized: the report descriptor of HID interface {r.index} ({r.length} bytes, "
                f"the listing's wDescriptorLength; lsusb showed it UNAVAILABLE): {what}"])
