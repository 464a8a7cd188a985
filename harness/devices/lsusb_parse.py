"""A listing decoded into descriptors: every block rebuilt byte by byte,
what lsusb does not print supplied, each configuration checked against
its wTotalLength (harness/devices/lsusb.py).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .lsusb_answers import hid_check
from .lsusb_listing import Block, ListingError, Reader, _finish, read_listing
from .lsusb_uvc_uac import _ac, _as, _vc, _vs


# ---- The descriptors ----------------------------------------------------------------

@dataclass
class Desc:
    kind: str
    data: bytes
    line: int
    note: str = ""            # what was supplied or dropped, for the profile's comments


@dataclass
class Parsed:
    """A listing decoded into descriptors, before any profile is made of it."""
    path: str
    header: list[str]
    device: bytes
    qualifier: bytes | None
    configs: list[list[Desc]]
    bos: list[Desc] | None
    strings: dict[int, str]
    hid_reports: dict[tuple[int, int], bytes]     # (config, iface) -> report descriptor lsusb printed
    notes: dict[int, list[str]]                    # config index -> notes for its comment


# lsusb's names of HID short items (HID 1.11, 6.2.2.4-6.2.2.8): type -> name -> tag
_HID_TAGS = {
    0: {"Input": 0x8, "Output": 0x9, "Collection": 0xa, "Feature": 0xb, "End Collection": 0xc},
    1: {"Usage Page": 0x0, "Logical Minimum": 0x1, "Logical Maximum": 0x2,
        "Physical Minimum": 0x3, "Physical Maximum": 0x4, "Unit Exponent": 0x5, "Unit": 0x6,
        "Report Size": 0x7, "Report ID": 0x8, "Report Count": 0x9, "Push": 0xa, "Pop": 0xb},
    2: {"Usage": 0x0, "Usage Minimum": 0x1, "Usage Maximum": 0x2, "Designator Index": 0x3,
        "Designator Minimum": 0x4, "Designator Maximum": 0x5, "String Index": 0x7,
        "String Minimum": 0x8, "String Maximum": 0x9, "Delimiter": 0xa},
}
_HID_ITEM = re.compile(r"\s*Item\((Main|Global|Local)\s*\):\s*(.+?),\s*data=\s*"
                       r"(none|\[((?:\s*0x[0-9a-fA-F]{2})*)\s*\])")


def _hid_items(path: str, blk: Block) -> bytes | None:
    """The report descriptor of a HID block whose items lsusb printed."""
    out = bytearray()
    for ln in blk.lines:
        m = _HID_ITEM.match(ln.text)
        if not m:
            continue
        t = ("Main", "Global", "Local").index(m.group(1))
        tag = _HID_TAGS[t].get(m.group(2).strip())
        if tag is None:
            raise ListingError(path, ln.no, f"HID item {m.group(2).strip()!r}: unknown")
        data = bytes(int(x, 16) for x in (m.group(4) or "").split())
        if len(data) not in (0, 1, 2, 4):
            raise ListingError(path, ln.no, f"HID item with {len(data)} data bytes")
        out += bytes([tag << 4 | t << 2 | {0: 0, 1: 1, 2: 2, 4: 3}[len(data)]]) + data
    return bytes(out) if out else None


def _endpoint(r: Reader) -> list[Desc]:
    blen = r.u8("bLength")
    r.u8("bDescriptorType", expect=0x05)
    addr = r.u8("bEndpointAddress")
    attr = r.u8("bmAttributes")
    mps = r.u16("wMaxPacketSize")
    r.u8("bInterval")
    if blen >= 9:                                            # audio endpoint
        r.u8("bRefresh")
        r.u8("bSynchAddress")
    burst = r.find("bMaxBurst", optional=True)
    out = [Desc("endpoint", _finish(r), r.block.header.no)]
    if burst is None:
        return out
    value, line = burst
    b = r.number("bMaxBurst", value, line)
    sattr, how = 0, "bmAttributes 0"
    ms, mult = r.find("MaxStreams", optional=True), r.find("Mult", optional=True)
    if ms is not None:
        n = r.number("MaxStreams", *ms)
        sattr, how = max(n.bit_length() - 1, 0), f"bmAttributes {max(n.bit_length() - 1, 0)} (MaxStreams {n})"
    if mult is not None:
        n = r.number("Mult", *mult)
        sattr, how = n - 1, f"bmAttributes {n - 1} (Mult {n})"
    xfer = attr & 3
    bpi = (mps & 0x7ff) * (b + 1) * ((sattr & 3) + 1 if xfer == 1 else 1) if xfer in (1, 3) else 0
    comp = bytes([6, 0x30, b, sattr]) + bpi.to_bytes(2, "little")
    out.append(Desc("ss_companion", comp, line.no,
                    f"endpoint 0x{addr:02x}: SuperSpeed companion {comp.hex(' ')} (lsusb printed "
                    f"bMaxBurst {b} only: {how}, wBytesPerInterval {bpi})"))
    return out


def parse(text: str, path: str = "<listing>") -> Parsed:
    """Decode a listing; raises ListingError naming the line of the first problem."""
    lst = read_listing(text, path)
    blocks = lst.blocks
    strings: dict[int, tuple[str, int]] = {}
    device = qualifier = None
    configs: list[list[Desc]] = []
    notes: dict[int, list[str]] = {}
    bos: list[Desc] | None = None
    hid_reports: dict[tuple[int, int], bytes] = {}
    cls = sub = iface = -1
    ss = False                               # SuperSpeed: MaxPower in 8 mA units
    where = "device"                         # device | config | qualifier | bos | status

    def keep_strings(r: Reader) -> None:
        for idx, (text_, no) in r.strings.items():
            old = strings.get(idx)
            if old is not None and old[0] != text_:
                raise ListingError(path, no, f"string {idx} is {text_!r} here but {old[0]!r} "
                                   f"on line {old[1]}")
            strings.setdefault(idx, (text_, no))

    r = None
    for blk in blocks:
        if r is not None:
            r.done()
        r = Reader(path, blk)
        k = blk.kind
        if k == "device":
            r.u8("bLength")
            r.u8("bDescriptorType", expect=1)
            usb = r.bcd("bcdUSB")
            ss = usb >= 0x0300
            r.u8("bDeviceClass")
            r.u8("bDeviceSubClass")
            r.u8("bDeviceProtocol")
            r.u8("bMaxPacketSize0")
            vid = r.u16("idVendor")
            pid = r.u16("idProduct")
            r.bcd("bcdDevice")
            r.string("iManufacturer")
            r.string("iProduct")
            r.string("iSerial", "iSerialNumber")
            r.u8("bNumConfigurations")
            device = _finish(r, allow_short=False)
            keep_strings(r)
            if lst.bus_id and lst.bus_id[:2] != (vid, pid):
                raise ListingError(path, lst.bus_id[2], f"the Bus line says {lst.bus_id[0]:04x}:"
                                   f"{lst.bus_id[1]:04x} but the device descriptor {vid:04x}:{pid:04x}")
            continue
        if k == "config":
            where = "config"
            r.u8("bLength")
            r.u8("bDescriptorType", expect=2)
            r.u16("wTotalLength")
            r.u8("bNumInterfaces")
            r.u8("bConfigurationValue")
            r.string("iConfiguration")
            r.u8("bmAttributes")
            r.power("MaxPower", 8 if ss else 2)
            configs.append([Desc("config", _finish(r, allow_short=False), blk.header.no)])
            keep_strings(r)
            cls = sub = iface = -1
            continue
        if k == "qualifier":
            where = "qualifier"
            r.u8("bLength")
            r.u8("bDescriptorType", expect=6)
            r.bcd("bcdUSB")
            r.u8("bDeviceClass")
            r.u8("bDeviceSubClass")
            r.u8("bDeviceProtocol")
            r.u8("bMaxPacketSize0")
            r.u8("bNumConfigurations")
            r.raw_byte(0)                                    # bReserved
            qualifier = _finish(r, allow_short=False)
            continue
        if k == "bos":
            where = "bos"
            r.u8("bLength")
            r.u8("bDescriptorType", expect=0x0f)
            r.u16("wTotalLength")
            r.u8("bNumDeviceCaps")
            bos = [Desc("bos", _finish(r, allow_short=False), blk.header.no)]
            continue
        if k == "status":
            where = "status"
            continue
        if k.startswith("cap_") or (k == "raw" and where == "bos"):
            if where != "bos" or bos is None:
                raise ListingError(path, blk.header.no, f"{blk.title} outside a Binary Object Store")
            if k == "raw":
                data = blk.raw
            else:
                r.u8("bLength")
                r.u8("bDescriptorType", expect=0x10)
                ctype = r.u8("bDevCapabilityType")
                if k == "cap_usb2":
                    r.u32("bmAttributes")
                elif k == "cap_ss":
                    r.u8("bmAttributes")
                    r.u16("wSpeedsSupported")
                    r.u8("bFunctionalitySupport")
                    r.u8("bU1DevExitLat")
                    r.u16("bU2DevExitLat")
                elif k == "cap_platform":
                    r.u8("bReserved")
                    r.guid("PlatformCapabilityUUID")
                    for name, v, ln in r.all_named("CapabilityData"):
                        r.put(name, r.number(name, v, ln), 1, ln)
                elif k == "cap_container":
                    r.u8("bReserved")
                    r.guid("ContainerID")
                data = _finish(r, allow_short=False)
                if (k, ctype) not in (("cap_usb2", 2), ("cap_ss", 3), ("cap_platform", 5),
                                      ("cap_container", 4)):
                    raise ListingError(path, blk.header.no, f"{blk.title}: bDevCapabilityType {ctype}")
            if len(data) < 2 or data[0] != len(data):
                raise ListingError(path, blk.header.no, f"raw descriptor {data.hex(' ')}: its "
                                   f"bLength is not its length")
            bos.append(Desc(k, data, blk.header.no))
            continue
        # everything else lives in a configuration
        if where != "config" or not configs:
            raise ListingError(path, blk.header.no, f"{blk.title} outside a configuration")
        cfg = configs[-1]
        if k == "raw":
            if len(blk.raw) < 2 or blk.raw[0] != len(blk.raw):
                raise ListingError(path, blk.header.no, f"raw descriptor {blk.raw.hex(' ')}: its "
                                   f"bLength is not its length")
            cfg.append(Desc("raw", blk.raw, blk.header.no))
        elif k == "iad":
            r.u8("bLength")
            r.u8("bDescriptorType", expect=0x0b)
            for name in ("bFirstInterface", "bInterfaceCount", "bFunctionClass",
                         "bFunctionSubClass", "bFunctionProtocol"):
                r.u8(name)
            r.string("iFunction")
            cfg.append(Desc("iad", _finish(r, allow_short=False), blk.header.no))
        elif k == "interface":
            r.u8("bLength")
            r.u8("bDescriptorType", expect=4)
            iface = r.u8("bInterfaceNumber")
            r.u8("bAlternateSetting")
            r.u8("bNumEndpoints")
            cls = r.u8("bInterfaceClass")
            sub = r.u8("bInterfaceSubClass")
            r.u8("bInterfaceProtocol")
            r.string("iInterface")
            cfg.append(Desc("interface", _finish(r, allow_short=False), blk.header.no))
        elif k == "endpoint":
            cfg.extend(_endpoint(r))
        elif k == "vc":
            if (cls, sub) != (0x0e, 0x01):
                raise ListingError(path, blk.header.no,
                                   "VideoControl descriptor outside a VideoControl interface")
            data, subtype = _vc(r)
            note = ""
            if r.block.too_short and data[2] == 0x05:
                note = (f"processing unit {data[3]} has bLength {data[0]} (UVC 1.0, no "
                        f"bmVideoStandards); the bmVideoStandards line lsusb printed after "
                        f"'Warning: Descriptor too short' is not part of it")
            cfg.append(Desc("vc", data, blk.header.no, note))
        elif k == "vs":
            if (cls, sub) != (0x0e, 0x02):
                raise ListingError(path, blk.header.no,
                                   "VideoStreaming descriptor outside a VideoStreaming interface")
            data, _ = _vs(r)
            cfg.append(Desc("vs", data, blk.header.no))
        elif k == "vc_ep":
            r.u8("bLength")
            r.u8("bDescriptorType", expect=0x25)
            r.u8("bDescriptorSubtype")
            r.u16("wMaxTransferSize")
            cfg.append(Desc("cs_ep", _finish(r), blk.header.no))
        elif k == "ac":
            cfg.append(Desc("ac", _ac(r), blk.header.no))
        elif k == "as":
            cfg.append(Desc("as", _as(r), blk.header.no))
        elif k == "audio_ep":
            r.u8("bLength")
            r.u8("bDescriptorType", expect=0x25)
            r.u8("bDescriptorSubtype")
            r.u8("bmAttributes")
            r.u8("bLockDelayUnits")
            r.u16("wLockDelay")
            cfg.append(Desc("cs_ep", _finish(r), blk.header.no))
        elif k == "hid":
            r.u8("bLength")
            r.u8("bDescriptorType", expect=0x21)
            r.bcd("bcdHID")
            r.u8("bCountryCode")
            n = r.u8("bNumDescriptors")
            lengths = []
            for _ in range(n):
                if r.u8("bDescriptorType") == 0x22:
                    lengths.append(r.u16("wDescriptorLength"))
                else:
                    r.u16("wDescriptorLength")
            cfg.append(Desc("hid", _finish(r, allow_short=False), blk.header.no))
            report = None if blk.unavailable else _hid_items(path, blk)
            if report is not None:
                if len(lengths) != 1 or len(report) != lengths[0]:
                    raise ListingError(path, blk.header.no, f"HID report descriptor: the printed "
                                       f"items make {len(report)} bytes, wDescriptorLength says "
                                       f"{lengths[0] if lengths else 0}")
                try:
                    hid_check(report)
                except ValueError as e:
                    raise ListingError(path, blk.header.no, f"HID report descriptor: {e}") from None
                hid_reports[(len(configs) - 1, iface)] = report
        elif k == "dfu":
            blen = r.u8("bLength")
            r.u8("bDescriptorType", expect=0x21)
            r.u8("bmAttributes")
            r.u16("wDetachTimeout")
            r.u16("wTransferSize")
            if blen >= 9:
                r.bcd("bcdDFUVersion")
            cfg.append(Desc("dfu", _finish(r, allow_short=False), blk.header.no))
        elif k.startswith("cdc_"):
            if cls != 0x02:
                raise ListingError(path, blk.header.no, f"{blk.title} outside a Communications interface")
            if k == "cdc_header":
                r.raw_byte(5), r.raw_byte(0x24), r.raw_byte(0x00)
                r.bcd("bcdCDC")
            elif k == "cdc_call":
                r.raw_byte(5), r.raw_byte(0x24), r.raw_byte(0x01)
                r.u8("bmCapabilities")
                r.u8("bDataInterface")
            elif k == "cdc_acm":
                r.raw_byte(4), r.raw_byte(0x24), r.raw_byte(0x02)
                r.u8("bmCapabilities")
            elif k == "cdc_union":
                r.raw_byte(0), r.raw_byte(0x24), r.raw_byte(0x06)
                r.u8("bMasterInterface")
                value, line = r.find("bSlaveInterface")
                for tok in value.split():
                    r.put("bSlaveInterface", r.number("bSlaveInterface", tok, line), 1, line)
                r.out[0] = len(r.out)
            elif k == "cdc_ether":
                r.raw_byte(13), r.raw_byte(0x24), r.raw_byte(0x0f)
                r.string("iMacAddress", "iMACAddress")
                r.u32("bmEthernetStatistics")
                r.u16("wMaxSegmentSize")
                r.u16("wNumberMCFilters")
                r.u8("bNumberPowerFilters")
            cfg.append(Desc(k, _finish(r, allow_short=False), blk.header.no))
        else:                                                # pragma: no cover
            raise ListingError(path, blk.header.no, f"{blk.title}: not handled")
        keep_strings(r)

    if r is not None:
        r.done()
    if device is None:                                       # pragma: no cover (read_listing)
        raise ListingError(path, None, "no device descriptor")
    if len(configs) != device[17]:
        raise ListingError(path, None, f"bNumConfigurations is {device[17]} but the listing has "
                           f"{len(configs)} configuration{'s' * (len(configs) != 1)} (truncated?)")
    out_cfgs = []
    for ci, cfg in enumerate(configs):
        out_cfgs.append(_complete_config(path, ci, cfg, notes.setdefault(ci, [])))
    if bos is not None:
        total = sum(len(d.data) for d in bos)
        want = bos[0].data[2] | bos[0].data[3] << 8
        if total != want:
            raise ListingError(path, bos[0].line, f"Binary Object Store: the capabilities rebuilt "
                               f"from the listing add up to {total} bytes but wTotalLength is {want}")
        if len(bos) - 1 != bos[0].data[4]:
            raise ListingError(path, bos[0].line, f"Binary Object Store: bNumDeviceCaps is "
                               f"{bos[0].data[4]} but the listing has {len(bos) - 1}")
    return Parsed(path, lst.header, device, qualifier, out_cfgs, bos,
                  {k: v[0] for k, v in strings.items()}, hid_reports, notes)


def _complete_config(path: str, ci: int, cfg: list[Desc], notes: list[str]) -> list[Desc]:
    """Add what lsusb does not print, then check the total against wTotalLength."""
    out: list[Desc] = []
    cls = sub = -1
    for i, d in enumerate(cfg):
        out.append(d)
        if d.note:
            notes.append(d.note)
        if d.kind == "interface":
            cls, sub = d.data[5], d.data[6]
        nxt = cfg[i + 1] if i + 1 < len(cfg) else None
        if (d.kind == "endpoint" and (cls, sub) == (0x0e, 0x01) and d.data[2] & 0x80
                and d.data[3] & 3 == 3 and (nxt is None or nxt.kind != "cs_ep")):
            mps = d.data[4] | d.data[5] << 8
            cs = bytes([5, 0x25, 0x03]) + mps.to_bytes(2, "little")
            out.append(Desc("cs_ep", cs, d.line))
            notes.append(f"the class-specific VideoControl interrupt endpoint descriptor after "
                         f"endpoint 0x{d.data[2]:02x} ({cs.hex(' ')}) is not in the listing "
                         f"(lsusb does not print it); its wMaxTransferSize is set to the "
                         f"endpoint's wMaxPacketSize, {mps}")
    total = sum(len(d.data) for d in out)
    head = out[0].data
    want = head[2] | head[3] << 8
    if total != want:
        raise ListingError(path, out[0].line, f"configuration {head[5]}: the descriptors rebuilt "
                           f"from the listing add up to {total} bytes but wTotalLength is {want} "
                           f"(truncated listing, or a descriptor lsusb did not print)")
    notes.extend(_header_totals(out))
    return out


def _header_totals(cfg: list[Desc]) -> list[str]:
    """Class-specific header totals that differ from what follows them: a
    quirk of the real device, kept (noted in the profile)."""
    notes = []
    i = 0
    while i < len(cfg):
        d = cfg[i]
        kind = {("vc", 1): "VideoControl header", ("vs", 1): "VideoStreaming input header",
                ("ac", 1): "AudioControl header"}.get((d.kind, d.data[2] if len(d.data) > 2 else -1))
        if kind is None:
            i += 1
            continue
        off = 4 if d.kind == "vs" else 5                     # wTotalLength
        claimed = d.data[off] | d.data[off + 1] << 8
        span = len(d.data)
        j = i + 1
        while j < len(cfg) and cfg[j].kind == d.kind:
            span += len(cfg[j].data)
            j += 1
        if d.kind == "vs" and claimed != span:
            notes.append(f"kept as the device has it: the {kind} says wTotalLength {claimed} but "
                         f"its class-specific descriptors add up to {span}")
        elif d.kind != "vs" and claimed != span:
            notes.append(f"kept as the device has it: the {kind} says wTotalLength {claimed} but "
                         f"the descriptors it covers add up to {span}")
        i = j
    return notes
