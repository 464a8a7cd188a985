"""Turn `lsusb -v` text into a USB device profile (fake-device/profiles/FORMAT.md).

    python3 -m harness.devices.lsusb LISTING [-o FILE] [--name NAME] [--speed SPEED]
    python3 -m harness.devices.lsusb --regenerate      # every shipped profile

The listing's descriptor blocks (device, device qualifier, configuration,
interface association, interface, endpoint, the class-specific descriptors
of UVC, UAC 1, HID, DFU and CDC, SuperSpeed endpoint companions, BOS and
its capabilities, ``** UNRECOGNIZED:`` raw bytes) are rebuilt byte by byte
from their printed fields.  Every rebuilt descriptor is checked against the
listing's ``bLength`` and every configuration against its ``wTotalLength``;
a listing that does not add up is an error naming the file and the line
(`ListingError`).  lsusb prints nothing of some bytes; the converter
supplies them and says so in ``#`` comments of the profile:

- string 0 (the LANGID list): 0x0409;
- the 5-byte class-specific VideoControl interrupt endpoint descriptor
  (``05 25 03 wMaxTransferSize``), which lsusb never prints: its
  wMaxTransferSize is set to the endpoint's wMaxPacketSize;
- SuperSpeed endpoint companions, of which lsusb prints only bMaxBurst:
  bmAttributes 0 (or from MaxStreams/Mult when printed), wBytesPerInterval
  wMaxPacketSize x mult x (bMaxBurst+1) for periodic endpoints, 0 for bulk;
- bytes the listing prints beyond a descriptor that lsusb flags with
  ``Warning: Descriptor too short`` are dropped (the 11-byte UVC 1.0
  processing unit).

The answers of the class requests a capture asks (fake-device/src/plan.c,
plan_requests, in its order) are synthesized, marked ``# synthesized:``:
UVC GET_INFO/GET_LEN/GET_CUR/GET_MIN/GET_MAX/GET_RES/GET_DEF of every
control the descriptors announce (typical ranges of real cameras; extension
units GET_LEN 4 and zeros), the video probe control (from the first format,
its default frame and interval), HID report descriptors (shown
``** UNAVAILABLE **`` while usbhid is bound), CDC ACM GET_LINE_CODING
(115200 8N1).  The class defaults follow plan_defaults.  Vendor requests a
capture never sends (the PL2303's register reads) are written by hand per
device (`SHIPPED`), citing the driver.

The profile text is canonical: the statements, their order and the
descriptor comments are what fake-device's profile_write() prints; the
converter's own notes are extra ``#`` lines (`render(..., notes=False)`
leaves them out).
"""

from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from pathlib import Path

from ..errors import InputError

REPO = Path(__file__).resolve().parents[2]
PROFILES_DIR = REPO / "fake-device" / "profiles"
SOURCES_DIR = PROFILES_DIR / "sources"
LANGID = 0x0409
REGENERATE = "python3 -m harness.devices.lsusb --regenerate"


class ListingError(InputError):
    """A listing that cannot be turned into descriptors: 'FILE:LINE: what'."""

    def __init__(self, path: str, line: int | None, message: str):
        where = f"{path}:{line}" if line else path
        super().__init__(f"{where}: {message}", path=path)
        self.line = line


# ---- Reading the listing ------------------------------------------------------

@dataclass
class Line:
    no: int
    text: str


@dataclass
class Block:
    kind: str
    title: str
    header: Line
    lines: list[Line] = field(default_factory=list)
    too_short: Line | None = None        # "Warning: Descriptor too short"
    unavailable: bool = False            # "** UNAVAILABLE **" (HID reports)
    raw: bytes | None = None             # "** UNRECOGNIZED: ..."


# block headers: the line (stripped) -> kind
_HEADERS = {
    "Device Descriptor:": "device",
    "Configuration Descriptor:": "config",
    "Interface Association:": "iad",
    "Interface Descriptor:": "interface",
    "Endpoint Descriptor:": "endpoint",
    "VideoControl Interface Descriptor:": "vc",
    "VideoStreaming Interface Descriptor:": "vs",
    "VideoControl Endpoint Descriptor:": "vc_ep",
    "AudioControl Interface Descriptor:": "ac",
    "AudioStreaming Interface Descriptor:": "as",
    "AudioStreaming Endpoint Descriptor:": "audio_ep",
    "AudioControl Endpoint Descriptor:": "audio_ep",     # old lsusb's name for the same
    "HID Device Descriptor:": "hid",
    "Device Firmware Upgrade Interface Descriptor:": "dfu",
    "CDC Header:": "cdc_header",
    "CDC Call Management:": "cdc_call",
    "CDC ACM:": "cdc_acm",
    "CDC Union:": "cdc_union",
    "CDC Ethernet:": "cdc_ether",
    "Device Qualifier (for other device speed):": "qualifier",
    "Binary Object Store Descriptor:": "bos",
    "USB 2.0 Extension Device Capability:": "cap_usb2",
    "SuperSpeed USB Device Capability:": "cap_ss",
    "Platform Device Capability:": "cap_platform",
    "Container ID Device Capability:": "cap_container",
}
_IGNORED_SUBHEADERS = {"Report Descriptors:"}
_STATUS = re.compile(r"Device Status:\s+0x[0-9a-fA-F]+$")
_BUS = re.compile(r"Bus \d+ Device \d+: ID ([0-9a-fA-F]{4}):([0-9a-fA-F]{4})\b")
_LSUSB_MESSAGE = re.compile(r"(can't get |cannot get |Couldn't open device)")
_FIELD = re.compile(r"\s*([A-Za-z][A-Za-z0-9_]*(?:\(\s*\d+\s*\)|\[\s*\d+\s*\])?)\s+(\S.*)$")
_UNRECOGNIZED = re.compile(r"\*\* UNRECOGNIZED:\s*((?:[0-9a-fA-F]{2}\s*)+)$")


def _norm(name: str) -> str:
    return re.sub(r"\s+", "", name)


@dataclass
class Listing:
    path: str
    header: list[str]                    # the file's leading '#' lines
    blocks: list[Block]
    bus_id: tuple[int, int, int] | None  # (vid, pid, line) of the "Bus ... ID" line


def read_listing(text: str, path: str = "<listing>") -> Listing:
    """Split a listing into its descriptor blocks (nothing is decoded yet)."""
    header: list[str] = []
    blocks: list[Block] = []
    bus_id = None
    cur: Block | None = None
    lines = text.split("\n")
    i = 0
    while i < len(lines) and lines[i].startswith("#"):
        header.append(lines[i])
        i += 1
    for idx in range(i, len(lines)):
        no = idx + 1
        raw = lines[idx].rstrip("\r")
        if raw.endswith("=20"):                  # quoted-printable trailing blank (mail)
            raw = raw[:-3] + " "
        s = raw.strip()
        if not s:
            continue
        m = _BUS.match(s)
        if m:
            if bus_id is not None:
                raise ListingError(path, no, "a second device (one listing, one device)")
            bus_id = (int(m.group(1), 16), int(m.group(2), 16), no)
            continue
        if _LSUSB_MESSAGE.match(s):
            continue
        kind = _HEADERS.get(s)
        if kind is not None:
            if kind == "device" and any(b.kind == "device" for b in blocks):
                raise ListingError(path, no, "a second Device Descriptor (one listing, one device)")
            cur = Block(kind, s.rstrip(":"), Line(no, raw))
            blocks.append(cur)
            continue
        if _STATUS.match(s):
            cur = Block("status", "Device Status", Line(no, raw))
            blocks.append(cur)
            continue
        m = _UNRECOGNIZED.match(s)
        if m:
            b = Block("raw", "UNRECOGNIZED", Line(no, raw),
                      raw=bytes(int(x, 16) for x in m.group(1).split()))
            blocks.append(b)
            continue
        if cur is None:
            raise ListingError(path, no, f"{s!r} before any descriptor: not lsusb -v output")
        if s == "Warning: Descriptor too short":
            cur.too_short = Line(no, raw)
            continue
        if s == "** UNAVAILABLE **":
            cur.unavailable = True
            continue
        if s in _IGNORED_SUBHEADERS:
            continue
        if s.endswith(":"):
            raise ListingError(path, no, f"unknown descriptor block {s!r}")
        cur.lines.append(Line(no, raw))
    if not any(b.kind == "device" for b in blocks):
        raise ListingError(path, None, "no 'Device Descriptor:' block: not lsusb -v output")
    return Listing(path, header, blocks, bus_id)


# ---- Decoding one block ---------------------------------------------------------

class Reader:
    """The fields of one block, taken in order by name, written little-endian."""

    def __init__(self, path: str, block: Block):
        self.path, self.block = path, block
        self.items: list[tuple[str, str, Line]] = []
        for ln in block.lines:
            m = _FIELD.match(ln.text)
            if m:
                self.items.append((_norm(m.group(1)), m.group(2), ln))
        self.pos = 0
        self.out = bytearray()
        self.strings: dict[int, tuple[str, int]] = {}
        self.last_line = block.header.no

    def err(self, line: int | None, msg: str) -> ListingError:
        return ListingError(self.path, line or self.block.header.no, msg)

    def has(self, *names: str) -> bool:
        return any(n in names for n, _, _ in self.items[self.pos:])

    def find(self, *names: str, optional: bool = False) -> tuple[str, Line] | None:
        for i in range(self.pos, len(self.items)):
            n, v, ln = self.items[i]
            if n in names:
                self.pos = i + 1
                self.last_line = ln.no
                return v, ln
        if optional:
            return None
        raise self.err(self.last_line, f"{self.block.title} (line {self.block.header.no}): "
                       f"no {names[0]} line where one is expected (truncated listing?)")

    def done(self) -> None:
        """No second descriptor hides in the block (a header line missing)."""
        for n, _, ln in self.items[self.pos:]:
            if n in ("bLength", "bDescriptorType", "bDescriptorSubtype"):
                raise self.err(ln.no, f"a {n} line in the {self.block.title} of line "
                               f"{self.block.header.no} after its fields: is a descriptor's "
                               "header line missing?")

    def all_named(self, prefix: str) -> list[tuple[str, str, Line]]:
        """Every remaining field whose name is prefix(N) (taken)."""
        got = [(n, v, ln) for n, v, ln in self.items[self.pos:]
               if re.fullmatch(re.escape(prefix) + r"[(\[]\d+[)\]]", n)]
        if got:
            self.pos = self.items.index(got[-1]) + 1
        return got

    # value parsers ------------------------------------------------------------
    def number(self, name: str, value: str, line: Line) -> int:
        tok = value.split()[0]
        try:
            if tok.lower().startswith("0x"):
                return int(tok, 16)
            if tok.isdigit():
                return int(tok)
        except ValueError:
            pass
        raise self.err(line.no, f"{name}: {tok!r} is not a number")

    def put(self, name: str, v: int, size: int, line: Line, signed: bool = False) -> int:
        lo, hi = (-(1 << (8 * size - 1)), (1 << (8 * size - 1)) - 1) if signed else (0, (1 << 8 * size) - 1)
        if not lo <= v <= hi:
            raise self.err(line.no, f"{name}: {v} does not fit in {size} byte{'s' * (size > 1)}")
        self.out += (v & ((1 << 8 * size) - 1)).to_bytes(size, "little")
        return v

    def int(self, size: int, *names: str, expect: int | None = None) -> int:
        value, line = self.find(*names)
        v = self.number(names[0], value, line)
        if expect is not None and v != expect:
            raise self.err(line.no, f"{names[0]}: {v}, but a {self.block.title} has {expect}")
        return self.put(names[0], v, size, line)

    def u8(self, *names: str, expect: int | None = None) -> int:
        return self.int(1, *names, expect=expect)

    def u16(self, *names: str) -> int:
        return self.int(2, *names)

    def u24(self, *names: str) -> int:
        return self.int(3, *names)

    def u32(self, *names: str) -> int:
        return self.int(4, *names)

    def bcd(self, *names: str) -> int:
        value, line = self.find(*names)
        m = re.fullmatch(r"([0-9a-fA-F]{1,2})\.([0-9a-fA-F]{2})", value.split()[0])
        if not m:
            raise self.err(line.no, f"{names[0]}: {value.split()[0]!r} is not a BCD version (like 2.00)")
        return self.put(names[0], int(m.group(1), 16) << 8 | int(m.group(2), 16), 2, line)

    def string(self, *names: str) -> int:
        """A string index; the text lsusb printed after it is remembered."""
        value, line = self.find(*names)
        m = re.fullmatch(r"(\d+)(?: (.*))?", value, re.S)
        if not m:
            raise self.err(line.no, f"{names[0]}: {value.split()[0]!r} is not a string index")
        idx = self.put(names[0], int(m.group(1)), 1, line)
        if idx:
            self.strings[idx] = (m.group(2) or "", line.no)
        return idx

    def guid(self, *names: str) -> bytes:
        value, line = self.find(*names)
        m = re.fullmatch(r"\{([0-9a-fA-F]{8})-([0-9a-fA-F]{4})-([0-9a-fA-F]{4})-"
                         r"([0-9a-fA-F]{4})-([0-9a-fA-F]{12})\}", value.split()[0])
        if not m:
            raise self.err(line.no, f"{names[0]}: {value.split()[0]!r} is not a GUID")
        # lsusb prints the first three groups little-endian (the Microsoft GUID layout)
        b = (int(m.group(1), 16).to_bytes(4, "little") + int(m.group(2), 16).to_bytes(2, "little")
             + int(m.group(3), 16).to_bytes(2, "little") + bytes.fromhex(m.group(4) + m.group(5)))
        self.out += b
        return b

    def power(self, name: str, unit: int) -> int:
        value, line = self.find(name, "bMaxPower")
        m = re.fullmatch(r"(\d+)\s*mA", value.strip())
        if not m or int(m.group(1)) % unit:
            raise self.err(line.no, f"{name}: {value.strip()!r} is not a power in {unit} mA units")
        return self.put(name, int(m.group(1)) // unit, 1, line)

    def clock(self, name: str) -> int:
        value, line = self.find(name)
        m = re.fullmatch(r"(\d+(?:\.\d+)?)\s*MHz", value.strip())
        try:
            hz = Decimal(m.group(1)) * 1000000 if m else None
        except InvalidOperation:
            hz = None
        if hz is None or hz != hz.to_integral_value():
            raise self.err(line.no, f"{name}: {value.strip()!r} is not a frequency in MHz")
        return self.put(name, int(hz), 4, line)

    def raw_byte(self, b: int) -> None:
        self.out.append(b & 0xff)

    def control_bits(self, n: int, *names: str) -> int:
        """bmControls printed as one number (0x%08x) of n bytes."""
        value, line = self.find(*names)
        return self.put(names[0], self.number(names[0], value, line), n, line)


# ---- The descriptors ----------------------------------------------------------------

@dataclass
class Desc:
    kind: str
    data: bytes
    line: int
    note: str = ""            # what was supplied or dropped, for the profile's comments


def _finish(r: Reader, allow_short: bool = True) -> bytes:
    """Check the rebuilt bytes against the listing's bLength."""
    data = bytes(r.out)
    blen = data[0]
    if len(data) > blen and r.block.too_short and allow_short:
        return data[:blen]
    if len(data) != blen:
        raise r.err(r.block.header.no, f"{r.block.title}: the printed fields make {len(data)} "
                    f"bytes but bLength is {blen}")
    return data


def _vc(r: Reader) -> tuple[bytes, int]:
    r.u8("bLength")
    r.u8("bDescriptorType", expect=0x24)
    sub = r.u8("bDescriptorSubtype")
    if sub == 0x01:                                          # header
        r.bcd("bcdUVC")
        r.u16("wTotalLength")
        r.clock("dwClockFrequency")
        n = r.u8("bInCollection")
        for i in range(n):
            r.u8(f"baInterfaceNr({i})")
    elif sub == 0x02:                                        # input terminal
        r.u8("bTerminalID")
        ttype = r.u16("wTerminalType")
        r.u8("bAssocTerminal")
        r.string("iTerminal")
        if ttype == 0x0201:                                  # camera
            r.u16("wObjectiveFocalLengthMin")
            r.u16("wObjectiveFocalLengthMax")
            r.u16("wOcularFocalLength")
            n = r.u8("bControlSize")
            r.control_bits(n, "bmControls")
    elif sub == 0x03:                                        # output terminal
        r.u8("bTerminalID")
        r.u16("wTerminalType")
        r.u8("bAssocTerminal")
        r.u8("bSourceID")
        r.string("iTerminal")
    elif sub == 0x04:                                        # selector unit
        r.u8("bUnitID")
        p = r.u8("bNrInPins")
        for i in range(p):
            r.u8(f"baSource({i})", f"baSourceID({i})")
        r.string("iSelector")
    elif sub == 0x05:                                        # processing unit
        r.u8("bUnitID")
        r.u8("bSourceID")
        r.u16("wMaxMultiplier")
        n = r.u8("bControlSize")
        r.control_bits(n, "bmControls")
        r.string("iProcessing")
        if r.has("bmVideoStandards"):
            r.u8("bmVideoStandards")
    elif sub == 0x06:                                        # extension unit
        r.u8("bUnitID")
        r.guid("guidExtensionCode")
        r.u8("bNumControls", "bNumControl")
        p = r.u8("bNrInPins", "bNrPins")
        for i in range(p):
            r.u8(f"baSourceID({i})", f"baSource({i})")
        n = r.u8("bControlSize")
        for i in range(n):
            r.u8(f"bmControls({i})")
        r.string("iExtension")
    else:
        raise r.err(r.last_line, f"VideoControl descriptor subtype {sub}: not supported")
    return _finish(r), sub


def _frame_intervals(r: Reader) -> None:
    t = r.u8("bFrameIntervalType")
    if t == 0:
        r.u32("dwMinFrameInterval")
        r.u32("dwMaxFrameInterval")
        r.u32("dwFrameIntervalStep")
    for i in range(t):
        r.u32(f"dwFrameInterval({i})")


def _vs(r: Reader) -> tuple[bytes, int]:
    r.u8("bLength")
    r.u8("bDescriptorType", expect=0x24)
    sub = r.u8("bDescriptorSubtype")
    if sub == 0x01:                                          # input header
        p = r.u8("bNumFormats")
        r.u16("wTotalLength")
        r.u8("bEndpointAddress", "bEndPointAddress")
        r.u8("bmInfo")
        r.u8("bTerminalLink")
        r.u8("bStillCaptureMethod")
        r.u8("bTriggerSupport")
        r.u8("bTriggerUsage")
        n = r.u8("bControlSize")
        for i in range(p):
            r.int(n, f"bmaControls({i})")
    elif sub == 0x03:                                        # still image frame
        r.u8("bEndpointAddress", "bEndPointAddress")
        n = r.u8("bNumImageSizePatterns")
        for i in range(n):
            r.u16(f"wWidth({i})")
            r.u16(f"wHeight({i})")
        c = r.u8("bNumCompressionPatterns")
        for i in range(c):
            r.u8(f"bCompression({i})")
    elif sub == 0x04:                                        # uncompressed format
        r.u8("bFormatIndex")
        r.u8("bNumFrameDescriptors")
        r.guid("guidFormat")
        r.u8("bBitsPerPixel")
        r.u8("bDefaultFrameIndex")
        r.u8("bAspectRatioX")
        r.u8("bAspectRatioY")
        r.u8("bmInterlaceFlags")
        r.u8("bCopyProtect")
    elif sub in (0x05, 0x07):                                # uncompressed / MJPEG frame
        r.u8("bFrameIndex")
        r.u8("bmCapabilities")
        r.u16("wWidth")
        r.u16("wHeight")
        r.u32("dwMinBitRate")
        r.u32("dwMaxBitRate")
        r.u32("dwMaxVideoFrameBufferSize")
        r.u32("dwDefaultFrameInterval")
        _frame_intervals(r)
    elif sub == 0x06:                                        # MJPEG format
        r.u8("bFormatIndex")
        r.u8("bNumFrameDescriptors")
        r.u8("bFlags")
        r.u8("bDefaultFrameIndex")
        r.u8("bAspectRatioX")
        r.u8("bAspectRatioY")
        r.u8("bmInterlaceFlags")
        r.u8("bCopyProtect")
    elif sub == 0x0d:                                        # color matching
        r.u8("bColorPrimaries")
        r.u8("bTransferCharacteristics")
        r.u8("bMatrixCoefficients")
    else:
        raise r.err(r.last_line, f"VideoStreaming descriptor subtype {sub}: not supported")
    return _finish(r), sub


def _ac(r: Reader) -> bytes:
    blen = r.u8("bLength")
    r.u8("bDescriptorType", expect=0x24)
    sub = r.u8("bDescriptorSubtype")
    if sub == 0x01:                                          # header (UAC 1)
        r.bcd("bcdADC")
        r.u16("wTotalLength")
        n = r.u8("bInCollection")
        for i in range(n):
            r.u8(f"baInterfaceNr({i})")
    elif sub == 0x02:                                        # input terminal
        r.u8("bTerminalID")
        r.u16("wTerminalType")
        r.u8("bAssocTerminal")
        r.u8("bNrChannels")
        r.u16("wChannelConfig")
        r.string("iChannelNames")
        r.string("iTerminal")
    elif sub == 0x03:                                        # output terminal
        r.u8("bTerminalID")
        r.u16("wTerminalType")
        r.u8("bAssocTerminal")
        r.u8("bSourceID")
        r.string("iTerminal")
    elif sub == 0x06:                                        # feature unit
        r.u8("bUnitID")
        r.u8("bSourceID")
        n = r.u8("bControlSize")
        if n == 0 or blen < 7 or (blen - 7) % n:
            raise r.err(r.last_line, f"feature unit: bControlSize {n} does not divide bLength {blen} - 7")
        count = (blen - 7) // n
        got = r.all_named("bmaControls")
        if len(got) == count:                                # one line per control
            for name, v, ln in got:
                r.put(name, r.number(name, v, ln), n, ln)
        elif len(got) == count * n:                          # old lsusb: one line per byte
            for name, v, ln in got:
                r.put(name, r.number(name, v, ln), 1, ln)
        else:
            raise r.err(r.last_line, f"feature unit: {len(got)} bmaControls lines for {count} "
                        f"controls of {n} bytes")
        r.string("iFeature")
    else:
        raise r.err(r.last_line, f"AudioControl descriptor subtype {sub}: not supported")
    return _finish(r)


def _as(r: Reader) -> bytes:
    r.u8("bLength")
    r.u8("bDescriptorType", expect=0x24)
    sub = r.u8("bDescriptorSubtype")
    if sub == 0x01:                                          # AS_GENERAL
        r.u8("bTerminalLink")
        r.u8("bDelay")
        r.u16("wFormatTag")
    elif sub == 0x02:                                        # FORMAT_TYPE
        ftype = r.u8("bFormatType")
        if ftype != 1:
            raise r.err(r.last_line, f"audio format type {ftype}: not supported")
        r.u8("bNrChannels")
        r.u8("bSubframeSize")
        r.u8("bBitResolution")
        n = r.u8("bSamFreqType")
        if n == 0:
            r.u24("tLowerSamFreq")
            r.u24("tUpperSamFreq")
        for i in range(n):
            r.u24(f"tSamFreq[{i}]")
    else:
        raise r.err(r.last_line, f"AudioStreaming descriptor subtype {sub}: not supported")
    return _finish(r)


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


# ---- What a capture asks (fake-device/src/plan.c) --------------------------------

# plan.c ct_bits / pu_bits: bmControls bit -> (selector, size); None = reserved
CT_BITS = [(0x01, 1), (0x02, 1), (0x03, 1), (0x04, 4), (0x05, 1), (0x06, 2), (0x07, 2),
           (0x09, 2), (0x0a, 1), (0x0b, 2), (0x0c, 3), (0x0d, 8), (0x0e, 4), (0x0f, 2),
           (0x10, 2), None, None, (0x08, 1), (0x11, 1), (0x12, 1), (0x13, 12), (0x14, 10)]
PU_BITS = [(0x02, 2), (0x03, 2), (0x06, 2), (0x07, 2), (0x08, 2), (0x09, 2), (0x0a, 2),
           (0x0c, 4), (0x01, 2), (0x04, 2), (0x05, 1), (0x10, 1), (0x0b, 1), (0x0d, 1),
           (0x0e, 2), (0x0f, 2), (0x11, 1), (0x12, 1), (0x13, 1)]
UVC_GETS = (0x81, 0x82, 0x83, 0x84, 0x87)       # CUR MIN MAX RES DEF


@dataclass
class Req:
    type: int
    req: int
    value: int
    index: int
    length: int                  # 0: the length GET_LEN answered (extension units)
    kind: str                    # ct | pu | xu | probe | hid | acm | ncm
    entity: int = 0
    selector: int = 0
    size: int = 0


def descriptors(blob: bytes):
    i = 0
    while i + 2 <= len(blob) and blob[i] >= 2 and i + blob[i] <= len(blob):
        yield blob[i:i + blob[i]]
        i += blob[i]


def _le16(b: bytes) -> int:
    return b[0] | b[1] << 8


def plan_requests(config: bytes) -> list[Req]:
    """plan.c plan_requests(): the class GETs of the first configuration, in order."""
    out: list[Req] = []
    cls = sub = iface = alt = -1
    bcd_uvc = 0x0100

    def entity(vc: int, eid: int, bm: bytes, bits, kind: str) -> None:
        for b in range(len(bm) * 8):
            if not bm[b // 8] & (1 << (b % 8)):
                continue
            if bits is not None:
                if b >= len(bits) or bits[b] is None:
                    continue
                sel, size = bits[b]
            else:
                sel, size = b + 1, 0
            value, index = sel << 8, eid << 8 | vc
            out.append(Req(0xa1, 0x86, value, index, 1, kind, eid, sel, size))
            out.append(Req(0xa1, 0x85, value, index, 2, kind, eid, sel, size))
            for q in UVC_GETS:
                out.append(Req(0xa1, q, value, index, size, kind, eid, sel, size))

    for d in descriptors(config):
        if d[1] == 0x04 and d[0] >= 9:
            iface, alt, cls, sub = d[2], d[3], d[5], d[6]
            if alt != 0:
                continue
            if (cls, sub) == (0x02, 0x02):
                out.append(Req(0xa1, 0x21, 0, iface, 7, "acm"))
            elif (cls, sub) == (0x02, 0x0d):
                out.append(Req(0xa1, 0x80, 0, iface, 28, "ncm"))
            elif (cls, sub) == (0x0e, 0x02):
                n = 48 if bcd_uvc >= 0x0150 else 34 if bcd_uvc >= 0x0110 else 26
                for q in (0x81, 0x82, 0x83, 0x87):
                    out.append(Req(0xa1, q, 0x0100, iface, n, "probe", size=n))
            continue
        if alt != 0:
            continue
        if cls == 0x03 and d[1] == 0x21 and d[0] >= 9:
            k = nr = 0                      # numbered among the report descriptors only
            while k < d[5] and 6 + 3 * k + 2 < d[0]:
                e = d[6 + 3 * k:]
                if e[0] == 0x22:
                    out.append(Req(0x81, 0x06, 0x2200 | nr, iface, _le16(e[1:3]), "hid"))
                    nr += 1
                k += 1
            continue
        if cls != 0x0e or sub != 0x01 or d[1] != 0x24 or d[0] < 3:
            continue
        if d[2] == 0x01 and d[0] >= 5:
            bcd_uvc = _le16(d[3:5])
        elif d[2] == 0x02:
            if d[0] >= 15 and _le16(d[4:6]) == 0x0201 and d[14] and 15 + d[14] <= d[0]:
                entity(iface, d[3], d[15:15 + d[14]], CT_BITS, "ct")
        elif d[2] == 0x05:
            if d[0] >= 8 and d[7] and 8 + d[7] <= d[0]:
                entity(iface, d[3], d[8:8 + d[7]], PU_BITS, "pu")
        elif d[2] == 0x06:
            pins = d[21] if d[0] >= 22 else 0
            at = 22 + pins
            if d[0] > at and d[at] and at + 1 + d[at] <= d[0]:
                entity(iface, d[3], d[at + 1:at + 1 + d[at]], None, "xu")
    return out


# HID report descriptors: what fake-device's pattern hid sends (profile.c).
HID_STACK = 4                    # Linux's HID_GLOBAL_STACK_SIZE
HID_MAX_BITS = 1 << 40           # Input bits of one report are counted up to here


def hid_input_reports(desc: bytes) -> list[tuple[int, int]] | None:
    """profile.c profile_hid_input_reports(): the input reports of a report
    descriptor as (Report ID or 0, bytes with the ID byte), in the order of
    their first Input item; None when it is malformed the way Linux refuses
    (an item past the end, Report ID 0, Push/Pop beyond the stack)."""
    size = count = rid = 0
    stack: list[tuple[int, int, int]] = []
    bits: dict[int, int] = {}                # insertion order: first Input item
    i = 0
    while i < len(desc):
        b = desc[i]
        if b == 0xfe:                        # long item: bDataSize, bLongItemTag, data
            if len(desc) - i < 3 or len(desc) - i - 3 < desc[i + 1]:
                return None
            i += 3 + desc[i + 1]
            continue
        n = (0, 1, 2, 4)[b & 3]
        if len(desc) - i - 1 < n:
            return None
        v = int.from_bytes(desc[i + 1:i + 1 + n], "little")
        i += 1 + n
        tag = b & 0xfc
        if tag == 0x74:                      # Report Size
            size = v
        elif tag == 0x94:                    # Report Count
            count = v
        elif tag == 0x84:                    # Report ID
            if not 1 <= v <= 255:
                return None
            rid = v
        elif tag == 0xa4:                    # Push
            if len(stack) == HID_STACK:
                return None
            stack.append((size, count, rid))
        elif tag == 0xb4:                    # Pop
            if not stack:
                return None
            size, count, rid = stack.pop()
        elif tag == 0x80:                    # Input (Output, Feature: not sent)
            bits[rid] = min(bits.get(rid, 0) + size * count, HID_MAX_BITS)
    return [(r, (n + 7) // 8 + (1 if r else 0)) for r, n in bits.items()]


def hid_fitting(reports: list[tuple[int, int]], maxpacket: int) -> list[tuple[int, int]]:
    """profile.c profile_hid_fitting(): the reports sent on an endpoint of
    `maxpacket` bytes; a full-size one only when no report is longer (usbhid's
    URB, the longest input report, is then one packet long)."""
    longest = max((n for _, n in reports), default=0)
    return [(r, n) for r, n in reports
            if 0 < n < maxpacket or (n == maxpacket and longest <= maxpacket)]


def hid_reports(configs: list[bytes], gets, ep: int) -> list[tuple[int, int]]:
    """profile.c profile_hid_reports(): what pattern hid sends on interrupt IN
    endpoint `ep`; empty when its interface (the first descriptor of `ep`) is
    not HID, has no report descriptor `get` (first match, wildcards too; not a
    stall, not empty) or declares no input report that fits."""
    iface = None
    for cfg in configs:
        intf = None
        for d in descriptors(cfg):
            if d[1] == 0x04 and d[0] >= 9:
                intf = d
            if (iface is None and intf is not None and d[1] == 0x05 and d[0] >= 7
                    and d[2] == ep and d[3] & 3 == 3):
                iface = (intf[2], intf[5])
    if iface is None or iface[1] != 0x03:
        return []
    mps = min(_le16(d[4:6]) & 0x7ff for cfg in configs for d in descriptors(cfg)
              if d[1] == 0x05 and d[0] >= 7 and d[2] == ep and d[3] & 3 == 3)
    rule = next((g for g in gets if (g.type, g.req) == (0x81, 0x06)
                 and g.value in (None, 0x2200) and g.index in (None, iface[0])), None)
    if rule is None or not rule.data:
        return []
    reports = hid_input_reports(rule.data)
    return hid_fitting(reports, mps) if reports else []


def plan_defaults(configs: list[bytes], gets=()) -> tuple[list[tuple[int, int, int | None]], list[tuple[int, str]]]:
    """plan.c plan_defaults(): the class `set` lines (type, req, store_req or
    None for ack) and one interrupt pattern per interrupt IN endpoint; `gets`
    are the profile's `get` lines so far (a capture's planned answers): a HID
    interface's endpoint gets `hid` when its report descriptor is among them
    and declares an input report that fits (hid_reports)."""
    sets: list[tuple[int, int, int | None]] = []
    ints: list[tuple[int, str]] = []

    def add_set(req: int, store: int | None) -> None:
        if not any(s[0] == 0x21 and s[1] == req for s in sets):
            sets.append((0x21, req, store))

    for cfg in configs:
        cls = sub = -1
        for d in descriptors(cfg):
            if d[1] == 0x04 and d[0] >= 9:
                cls, sub = d[5], d[6]
                if cls == 0x0e:
                    add_set(0x01, 0x81)
                elif cls == 0x03:
                    for r in (0x09, 0x0a, 0x0b):
                        add_set(r, None)
                elif (cls, sub) == (0x02, 0x02):
                    add_set(0x20, 0x21)
                    add_set(0x22, None)
                    add_set(0x23, None)
                elif cls == 0x02 and sub in (0x06, 0x0d):
                    for r in (0x40, 0x41, 0x42, 0x43, 0x44, 0x84, 0x86, 0x88, 0x8a):
                        add_set(r, None)
                continue
            if (d[1] != 0x05 or d[0] < 7 or not d[2] & 0x80 or d[3] & 3 != 3
                    or _le16(d[4:6]) & 0x7ff < 2):
                continue
            if not any(e == d[2] for e, _ in ints):
                if (cls, sub) == (0x0e, 0x01):
                    pat = "uvc-control"
                elif cls == 0x03 and hid_reports(configs, gets, d[2]):
                    pat = "hid"
                else:
                    pat = "random"
                ints.append((d[2], pat))
    return sets, ints


def string_order(device: bytes, configs: list[bytes]) -> list[int]:
    """plan.c string_indexes(): the string indexes a capture reads, in order
    (those of the device, configuration, interface, interface association and
    CDC Ethernet descriptors)."""
    seen: list[int] = []

    def note(i: int) -> None:
        if i and i not in seen:
            seen.append(i)

    for i in (14, 15, 16):
        note(device[i])
    for cfg in configs:
        for d in descriptors(cfg):
            if d[1] == 0x02 and d[0] >= 9:
                note(d[6])
            elif d[1] == 0x04 and d[0] >= 9:
                note(d[8])
            elif d[1] == 0x0b and d[0] >= 8:
                note(d[7])
            elif d[1] == 0x24 and d[0] >= 13 and d[2] == 0x0f:
                note(d[3])                  # CDC Ethernet iMACAddress (cdc_ether reads it)
    return seen


# ---- Synthesized answers ---------------------------------------------------------

def _v(size: int, *vals: int) -> bytes:
    """Values of `size` bytes each, little-endian, two's complement."""
    return b"".join((v & ((1 << 8 * size) - 1)).to_bytes(size, "little") for v in vals)


def _fields(*pairs: tuple[int, int]) -> bytes:
    return b"".join((v & ((1 << 8 * n) - 1)).to_bytes(n, "little") for n, v in pairs)


# selector -> (name, GET_INFO, (CUR, MIN, MAX, RES, DEF) as bytes, range for the comment).
# Typical values of real cameras (uvcvideo's v4l2 ranges of Logitech and generic
# Sonix/Sunplus cameras); multi-field controls give every field.
def _ct_control(sel: int, size: int, frame: tuple[int, int]) -> tuple[str, int, list[bytes], str]:
    w, h = frame
    t = {
        0x01: ("scanning mode", 0x03, _v(1, 0, 0, 1, 1, 0), "0..1, default 0 (progressive)"),
        0x02: ("auto-exposure mode", 0x03, _v(1, 8, 1, 8, 9, 8),
               "bitmap, GET_RES 0x09 (manual, aperture priority), default 0x08"),
        0x03: ("auto-exposure priority", 0x03, _v(1, 0, 0, 1, 1, 0), "0..1, default 0"),
        0x04: ("exposure time (absolute)", 0x0b, _v(4, 250, 3, 2047, 1, 250),
               "3..2047 (100 us), default 250"),
        0x05: ("exposure time (relative)", 0x03, _v(1, 0, -1, 1, 1, 0), "-1..1, default 0"),
        0x06: ("focus (absolute)", 0x0b, _v(2, 0, 0, 250, 5, 0), "0..250 step 5, default 0"),
        0x07: ("focus (relative)", 0x03, _v(1, 0, 1, -1, 1, 1, 1, 1, 1, 0, 1),
               "focus -1..1, speed 1"),
        0x08: ("focus, auto", 0x03, _v(1, 1, 0, 1, 1, 1), "0..1, default 1"),
        0x09: ("iris (absolute)", 0x03, _v(2, 200, 100, 1600, 100, 200),
               "100..1600 (f-stop x 100), default 200"),
        0x0a: ("iris (relative)", 0x03, _v(1, 0, -1, 1, 1, 0), "-1..1, default 0"),
        0x0b: ("zoom (absolute)", 0x03, _v(2, 100, 100, 500, 1, 100), "100..500, default 100"),
        0x0c: ("zoom (relative)", 0x03,
               _v(1, 0, 0, 1, -1, 0, 1, 1, 1, 7, 1, 1, 1, 0, 0, 1),
               "zoom -1..1, digital 0..1, speed 1..7"),
        0x0d: ("pan/tilt (absolute)", 0x03,
               _v(4, 0, 0, -36000, -36000, 36000, 36000, 3600, 3600, 0, 0),
               "pan and tilt -36000..36000 step 3600 (arc second), default 0"),
        0x0e: ("pan/tilt (relative)", 0x03,
               _v(1, 0, 1, 0, 1, -1, 1, -1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 0, 1),
               "pan and tilt -1..1, speed 1"),
        0x0f: ("roll (absolute)", 0x03, _v(2, 0, -180, 180, 1, 0), "-180..180 degrees, default 0"),
        0x10: ("roll (relative)", 0x03, _v(1, 0, 1, -1, 1, 1, 1, 1, 1, 0, 1), "roll -1..1, speed 1"),
        0x11: ("privacy", 0x03, _v(1, 0, 0, 1, 1, 0), "0..1, default 0"),
        0x12: ("focus, simple", 0x03, _v(1, 0, 0, 3, 1, 0), "0..3, default 0 (full range)"),
        0x13: ("window", 0x03, b"".join([
            _v(2, 0, 0, h - 1, w - 1, 1, 0), _v(2, 0, 0, 0, 0, 1, 0),
            _v(2, h - 1, w - 1, h - 1, w - 1, 1, 0), _v(2, 1, 1, 1, 1, 1, 0),
            _v(2, 0, 0, h - 1, w - 1, 1, 0)]), f"the whole {w}x{h} frame"),
        0x14: ("region of interest", 0x03, b"".join([
            _v(2, 0, 0, h - 1, w - 1, 1), _v(2, 0, 0, 0, 0, 0),
            _v(2, h - 1, w - 1, h - 1, w - 1, 0xff), _v(2, 1, 1, 1, 1, 1),
            _v(2, 0, 0, h - 1, w - 1, 1)]),
            f"the whole {w}x{h} frame, bmAutoControls 0x0001 (auto exposure)"),
    }[sel]
    name, info, blob, rng = t
    return name, info, [blob[i * size:(i + 1) * size] for i in range(5)], rng


def _pu_control(sel: int, size: int) -> tuple[str, int, list[bytes], str]:
    t = {
        0x01: ("backlight compensation", 0x03, _v(2, 0, 0, 1, 1, 0), "0..1, default 0"),
        0x02: ("brightness", 0x03, _v(2, 0, -64, 64, 1, 0), "-64..64, default 0"),
        0x03: ("contrast", 0x03, _v(2, 32, 0, 64, 1, 32), "0..64, default 32"),
        0x04: ("gain", 0x03, _v(2, 0, 0, 100, 1, 0), "0..100, default 0"),
        0x05: ("power line frequency", 0x03, _v(1, 1, 0, 2, 1, 1), "0..2, default 1 (50 Hz)"),
        0x06: ("hue", 0x03, _v(2, 0, -40, 40, 1, 0), "-40..40, default 0"),
        0x07: ("saturation", 0x03, _v(2, 64, 0, 128, 1, 64), "0..128, default 64"),
        0x08: ("sharpness", 0x03, _v(2, 3, 0, 7, 1, 3), "0..7, default 3"),
        0x09: ("gamma", 0x03, _v(2, 100, 72, 500, 1, 100), "72..500, default 100"),
        0x0a: ("white balance temperature", 0x0b, _v(2, 4600, 2800, 6500, 1, 4600),
               "2800..6500 K, default 4600"),
        0x0b: ("white balance temperature, auto", 0x03, _v(1, 1, 0, 1, 1, 1), "0..1, default 1"),
        0x0c: ("white balance component", 0x0b,
               _v(2, 512, 512, 0, 0, 1023, 1023, 1, 1, 512, 512), "blue and red 0..1023, default 512"),
        0x0d: ("white balance component, auto", 0x03, _v(1, 1, 0, 1, 1, 1), "0..1, default 1"),
        0x0e: ("digital multiplier", 0x03, _v(2, 100, 100, 400, 1, 100), "100..400, default 100"),
        0x0f: ("digital multiplier limit", 0x03, _v(2, 400, 100, 400, 1, 400), "100..400, default 400"),
        0x10: ("hue, auto", 0x03, _v(1, 0, 0, 1, 1, 0), "0..1, default 0"),
        0x11: ("analog video standard", 0x01, _v(1, 0, 0, 0, 1, 0), "read-only, 0 (none)"),
        0x12: ("analog video lock status", 0x01, _v(1, 0, 0, 1, 1, 0), "read-only, 0 (locked)"),
        0x13: ("contrast, auto", 0x03, _v(1, 0, 0, 1, 1, 0), "0..1, default 0"),
    }[sel]
    name, info, blob, rng = t
    return name, info, [blob[i * size:(i + 1) * size] for i in range(5)], rng


XU_LEN = 4


@dataclass
class Get:
    type: int
    req: int
    value: int | None
    index: int | None
    data: bytes | None           # None: stall
    comment: list[str] = field(default_factory=list)   # extra '#' lines above it
    hand: bool = False           # hand-written: a capture does not ask it


@dataclass
class Set:
    type: int
    req: int
    value: int | None
    index: int | None
    store: int | None
    comment: list[str] = field(default_factory=list)
    hand: bool = False           # hand-written: not a plan_defaults() line


def _uvc_stream_info(config: bytes, iface: int) -> dict:
    """The first format of VS interface `iface` (alt 0), its default frame,
    and the largest isochronous payload of its alternate settings."""
    cur_if = alt = -1
    fmt = None
    frames: list[bytes] = []
    payload = 0
    for d in descriptors(config):
        if d[1] == 0x04:
            cur_if, alt = d[2], d[3]
            continue
        if cur_if != iface:
            continue
        if d[1] == 0x24 and alt == 0:
            if d[2] in (0x04, 0x06) and fmt is None:
                fmt = d
            elif d[2] in (0x05, 0x07) and fmt is not None and len(frames) < fmt[4]:
                frames.append(d)
        elif d[1] == 0x05 and d[3] & 3 == 1 and d[2] & 0x80:
            mps = _le16(d[4:6])
            payload = max(payload, (mps & 0x7ff) * (((mps >> 11) & 3) + 1))
    if fmt is None or not frames:
        return {}
    default = fmt[6] if fmt[2] == 0x06 else fmt[22]        # bDefaultFrameIndex
    frame = next((f for f in frames if f[3] == default), frames[0])
    return {"format": fmt, "frame": frame, "payload": payload}


def _intervals(frame: bytes) -> list[int]:
    n = frame[25]
    if n == 0:
        return [int.from_bytes(frame[26:30], "little"), int.from_bytes(frame[30:34], "little")]
    return [int.from_bytes(frame[26 + 4 * i:30 + 4 * i], "little") for i in range(n)]


def _probe(info: dict, size: int, interval: int, clock: int) -> bytes:
    fmt, frame = info["format"], info["frame"]
    data = _fields((2, 0), (1, fmt[3]), (1, frame[3]), (4, interval), (2, 0), (2, 0), (2, 0),
                   (2, 0), (2, 50), (4, int.from_bytes(frame[17:21], "little")),
                   (4, info["payload"]))
    if size >= 34:
        data += _fields((4, clock), (1, 0x03), (1, 1), (1, 1), (1, 1))
    if size >= 48:
        data += bytes(14)
    return data


def _vc_clock(config: bytes) -> int:
    cls = sub = -1
    for d in descriptors(config):
        if d[1] == 0x04:
            cls, sub = d[5], d[6]
        elif (cls, sub) == (0x0e, 0x01) and d[1] == 0x24 and d[2] == 0x01 and d[0] >= 11:
            return int.from_bytes(d[7:11], "little")
    return 0


# HID report descriptors for interfaces lsusb showed as UNAVAILABLE, by length.
# Each: the bytes, and what they are.
def _hid_boot_keyboard_65() -> bytes:
    return bytes.fromhex(
        "05 01 09 06 a1 01"             # Generic Desktop, Keyboard, Collection (Application)
        " 05 07 19 e0 29 e7 15 00 25 01 75 01 95 08 81 02"   # 8 modifier bits
        " 95 01 75 08 81 01"            # reserved byte
        " 95 05 75 01 05 08 19 01 29 05 91 02"               # 5 LEDs
        " 95 01 75 03 91 01"            # LED padding
        " 95 06 75 08 15 00 26 ff 00 05 07 19 00 2a ff 00 81 00"   # 6 key codes 0..255
        " c0")


def _hid_consumer_system_159() -> bytes:
    media = ["09 e2", "09 e9", "09 ea", "09 cd", "09 b7", "09 b6", "09 b5", "09 b8", "09 b3",
             "09 b4", "09 30",
             "0a 83 01", "0a 8a 01", "0a 92 01", "0a 94 01", "0a 96 01", "0a a7 01",
             "0a 21 02", "0a 23 02", "0a 24 02", "0a 25 02", "0a 26 02", "0a 27 02", "0a 2a 02"]
    return bytes.fromhex(
        # report 1: 24 consumer keys, one bit each (mute, volume, transport, launch, browser)
        "05 0c 09 01 a1 01 85 01 15 00 25 01 75 01 95 18 " + " ".join(media) + " 81 02 c0"
        # report 2: system power down, sleep, wake up
        " 05 01 09 80 a1 01 85 02 19 81 29 83 15 00 25 01 75 01 95 03 81 02 95 05 81 01 c0"
        # report 3: one consumer usage 0..0x23c, 16 bits
        " 05 0c 09 01 a1 01 85 03 19 00 2a 3c 02 15 00 26 3c 02 95 01 75 10 81 00 c0"
        # report 4: vendor page 0xff00, 3 bytes in, 3 bytes out
        " 06 00 ff 09 01 a1 01 85 04 15 00 26 ff 00 75 08 95 03 09 01 81 02 09 01 91 02 c0")


HID_REPORTS = {
    "boot-keyboard-65": (_hid_boot_keyboard_65,
                         "the standard boot keyboard report descriptor (HID 1.11 appendix B.1 "
                         "layout with key codes 0..255): 8 modifier bits, a reserved byte, 5 LED "
                         "outputs, 6 key codes"),
    "consumer-system-159": (_hid_consumer_system_159,
                            "not the K120's own bytes (never published): report 1, 24 consumer "
                            "keys as bits; report 2, system power down/sleep/wake up; report 3, "
                            "one 16-bit consumer usage; report 4, vendor page 0xff00 (3 bytes in "
                            "and out); inputs fit the endpoint's 4 bytes"),
}


def hid_check(desc: bytes) -> None:
    """A report descriptor's items are whole and its collections balanced."""
    i = depth = 0
    while i < len(desc):
        b = desc[i]
        if b == 0xfe:
            raise ValueError("long items are not used here")
        n = (0, 1, 2, 4)[b & 3]
        if i + 1 + n > len(desc):
            raise ValueError(f"item at {i} runs past the end")
        if b & 0xfc == 0xa0:
            depth += 1
        elif b & 0xfc == 0xc0:
            depth -= 1
            if depth < 0:
                raise ValueError(f"End Collection at {i} without a Collection")
        i += 1 + n
    if depth:
        raise ValueError("a Collection is not closed")


# ---- The shipped profiles ------------------------------------------------------------

@dataclass(frozen=True)
class Shipped:
    listing: str
    description: str
    source: str
    driver: str
    speed: str | None = None                 # None: inferred
    hid: dict = field(default_factory=dict)  # iface -> HID_REPORTS key
    vendor_gets: tuple = ()                  # (comment lines, Get...) hand-written
    vendor_sets: tuple = ()
    notes: tuple = ()                        # extra lines for the profile's summary
    string_notes: tuple = ()


_PL2303 = "drivers/usb/serial/pl2303.c (Linux 6.1 and 6.12, same line numbers)"

SHIPPED: dict[str, Shipped] = {
    "logitech-c922": Shipped(
        "01-logitech-c922.lsusb.txt",
        "Logitech C922 Pro Stream Webcam (046d:085c): UVC 1.00 + USB audio, six Logitech "
        "extension units, an 11-byte UVC 1.0 processing unit; uvcvideo applies "
        "UVC_QUIRK_INVALID_DEVICE_SOF",
        "https://lore.kernel.org/all/20220920-resend-hwtimestamp-v1-4-e9c14b258404@chromium.org/",
        "uvcvideo (interfaces 0-1; the audio interfaces 2-3 are snd-usb-audio's, no UAC answers)"),
    "sunplusit-hd-uvc15": Shipped(
        "02-sunplusit-hd-camera-uvc15.lsusb.txt",
        "SunplusIT HD Camera (2b7e:b752): UVC 1.50 (interface protocol 1, 48-byte probe "
        "control), two extension units, region-of-interest control, a DFU interface, "
        "BOS with a platform capability",
        "https://lore.kernel.org/linux-media/20231028-uvc-power-v1-1-fa5c376abe78@chromium.org/",
        "uvcvideo (interfaces 0-1; the DFU interface 2 has no driver)"),
    "sonix-0c45-6353": Shipped(
        "03-sonix-film-scanner-0c45-6353.lsusb.txt",
        "Sonix USB film scanner (0c45:6353, Ion Slides Forever): UVC 1.00 with the output "
        "terminal and extension unit before the input terminal, still-image method 2 and "
        "a hardware trigger button (uvcvideo registers an input device)",
        "https://lore.kernel.org/linux-media/687d087b-ae4c-6242-2991-800876d74cc4@sorcerersisle.com/",
        "uvcvideo"),
    "lifecam-nx6000": Shipped(
        "04-microsoft-lifecam-nx6000.lsusb.txt",
        "Microsoft LifeCam NX-6000 (045e:00f8): UVC 1.00 + USB audio, a selector unit, an "
        "8-byte status endpoint, a VideoStreaming header total that leaves out its "
        "color-matching descriptor; uvcvideo applies UVC_QUIRK_PROBE_MINMAX",
        "video4linux-list mail, Gregor Jasny, 2008-06-26, Message-ID "
        "<20080626194804.GB18818@vidsoft.de> (no web address known)",
        "uvcvideo (interfaces 0-1; the audio interfaces 2-3 are snd-usb-audio's, no UAC answers)"),
    "logitech-k120": Shipped(
        "05-logitech-k120-keyboard.lsusb.txt",
        "Logitech Keyboard K120 (046d:c31c): low-speed HID, a boot keyboard (interface 0) and "
        "consumer/system controls (interface 1); the report descriptors are reconstructions "
        "of the listing's lengths (lsusb showed them UNAVAILABLE)",
        "https://mailman.alsa-project.org/hyperkitty/list/alsa-devel@alsa-project.org/message/"
        "QOQNQN4WL2I2PP2U7FFNRJAS5H6HDHGN/",
        "usbhid (hid-generic)", speed="low",
        hid={0: "boot-keyboard-65", 1: "consumer-system-159"}),
    "stm32-cdc-acm": Shipped(
        "06-stm32-virtual-com-port-cdc-acm.lsusb.txt",
        "STMicroelectronics STM32 Virtual ComPort (0483:5740): full-speed CDC ACM with header, "
        "call management, ACM and union functional descriptors",
        "https://bugzilla.kernel.org/show_bug.cgi?id=212751",
        "cdc_acm"),
    "rtl8153": Shipped(
        "07-realtek-rtl8153-ethernet.lsusb.txt",
        "Realtek RTL8153 Gigabit Ethernet (0bda:8153): SuperSpeed, configuration 1 vendor "
        "(r8152), configuration 2 CDC ECM; replayed as an ECM device: r8152's vendor register "
        "reads stall, so Linux keeps configuration 2 and an ECM driver binds",
        "blog post by Bart Prokop, \"Saturday, 19th October 2024\" (a Markdown file in a public "
        "GitHub repository; no web address known)",
        "r8153_ecm (configuration 2, CDC ECM through cdc_ether's usbnet_cdc_bind); cdc_ether "
        "itself on 6.1 built without r8152",
        vendor_gets=((
            ["hand-written: r8152's version read (drivers/net/usb/r8152.c __rtl_get_hw_ver: "
             "RTL8152_REQ_GET_REGS, PLA_TCR0 0xe610, MCU_TYPE_PLA 0x0100) stalls, as an "
             "ECM-only RTL8153 would: r8152-cfgselector (6.1 and 6.12) then leaves the device "
             "in its CDC configuration and r8153_ecm's probe goes on (each logs \"Unknown "
             "version 0x0000\", KERN_INFO); r8152 itself needs the vendor configuration"],
            Get(0xc0, 0x05, 0xe610, 0x0100, None)),),
        notes=("Linux picks configuration 2 (CDC ECM): usb_choose_configuration() prefers the "
               "first configuration whose first interface is not vendor-specific, and "
               "r8152-cfgselector does not switch to configuration 1 when the version read "
               "fails; with CONFIG_USB_RTL8152 set, cdc_ether leaves 0bda:8153 to r8153_ecm "
               "(CONFIG_USB_RTL8153_ECM)",),
        string_notes=("string 3 is the CDC Ethernet iMACAddress: usbnet_cdc_bind() needs it "
                      "(usbnet_get_ethernet_addr: 12 hex digits)",)),
    "pl2303": Shipped(
        "08-prolific-pl2303.lsusb.txt",
        "Prolific PL2303 USB-serial adapter (067b:2303, bcdDevice 3.00: pl2303 detects a "
        "PL2303TA): full speed, one vendor-class interface; pl2303's vendor register reads "
        "answered by hand",
        "https://lore.kernel.org/linux-usb/"
        "CADuz4ON8Jj5unz_eeD--7n5kp2uQmqeyM_2-DTrTFKFwFtoudw@mail.gmail.com/",
        "pl2303 (usb-serial)",
        vendor_gets=(
            ([f"hand-written, {_PL2303}: pl2303_detect_type() (line 403) sees bDeviceClass 0, "
              "bMaxPacketSize0 64, bcdUSB 2.00, bcdDevice 3.00 and asks "
              "pl2303_supports_hx_status() (line 391) for register 0x8080: an answer makes it "
              "a TA (a stall, a GT of the HXN family)"],
             Get(0xc0, 0x01, 0x8080, 0x0000, b"\x00")),
            (["hand-written: pl2303_startup() (line 472) reads 0x8484 and 0x8383 through "
              "pl2303_vendor_read() (line 243, one byte, dev_err unless exactly one) and "
              "only logs them (dev_dbg)"],
             Get(0xc0, 0x01, 0x8484, 0x0000, b"\x00")),
            ([], Get(0xc0, 0x01, 0x8383, 0x0000, b"\x00")),
            (["hand-written: opening the port, pl2303_set_termios() (line 794) reads the line "
              "settings (pl2303_get_line_request(), line 727: 7 bytes or dev_err): 9600 8N1 "
              "until a SET_LINE_REQUEST stores others (set below)"],
             Get(0xa1, 0x21, 0x0000, 0x0000, bytes.fromhex("80 25 00 00 00 00 08"))),
            (["hand-written: ... and pl2303_update_reg() (line 299) reads flow-control "
              "register 0 as 0x0080 (line 930) before writing it"],
             Get(0xc0, 0x01, 0x0080, 0x0000, b"\x00")),
        ),
        vendor_sets=(
            (["hand-written: pl2303_vendor_write() (line 273; 0x40 0x01, dev_err unless "
              "accepted): startup writes 0x0404, 0x0000, 0x0001, 0x0002; open writes 8 and 9 "
              "(line 977) and the flow-control register"],
             Set(0x40, 0x01, None, None, None)),
            (["hand-written: class requests on the vendor interface when the port opens: "
              "SET_LINE_REQUEST (line 750, kept for the GET above), SET_CONTROL_REQUEST "
              "(line 555, DTR/RTS), BREAK_REQUEST (line 1066, on close)"],
             Set(0x21, 0x20, None, None, 0x21)),
            ([], Set(0x21, 0x22, None, None, None)),
            ([], Set(0x21, 0x23, None, None, None)),
        )),
}


# ---- Building and writing the profile --------------------------------------------------

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


def _rel(path: str) -> str:
    p = Path(path).resolve()
    try:
        return str(p.relative_to(REPO))
    except ValueError:
        return path


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


# ---- Entry points ------------------------------------------------------------------------

def source_url(header: list[str]) -> str | None:
    for ln in header:
        m = re.search(r"https?://\S+", ln)
        if m:
            return m.group(0)
    return None


def convert(path: Path, name: str | None = None, *, speed: str | None = None,
            description: str | None = None, source: str | None = None) -> Profile:
    """A listing file -> its profile (the shipped metadata when it is a shipped listing)."""
    text = path.read_text(encoding="utf-8")
    parsed = parse(text, _rel(str(path)))
    shipped_name = next((n for n, s in SHIPPED.items() if s.listing == path.name), None)
    shipped = SHIPPED.get(shipped_name) if shipped_name else None
    if name is None:
        name = shipped_name or re.sub(r"[^a-z0-9-]+", "-", path.name.split(".")[0].lower()).strip("-")
        name = re.sub(r"^[0-9]+-", "", name) if not shipped_name else name
    if not re.fullmatch(r"[a-z0-9][a-z0-9-]{0,39}", name):
        raise InputError(f"profile name {name!r}: [a-z0-9][a-z0-9-]*, at most 40 characters")
    sources = []
    if source or (shipped and shipped.source) or source_url(parsed.header):
        sources.append(source or (shipped.source if shipped else source_url(parsed.header)))
    sources.append(f"{_rel(str(path))} (lsusb -v), converted by harness/devices/lsusb.py")
    return build(parsed, name, description=description or (shipped.description if shipped else None),
                 sources=sources, speed=speed, shipped=shipped)


def shipped_paths() -> dict[str, tuple[Path, Path]]:
    """name -> (listing, profile) of every shipped profile."""
    return {n: (SOURCES_DIR / s.listing, PROFILES_DIR / f"{n}.profile") for n, s in SHIPPED.items()}


HELP = """\
Rebuild a USB device from `lsusb -v` text and write it as a device profile
(fake-device/profiles/FORMAT.md) that fake-uvc --profile replays.

Every descriptor is rebuilt from its printed fields and checked against the
listing's bLength and wTotalLength; an error names FILE:LINE.

What lsusb cannot show, and this converter supplies ('#' comments in the
profile say where):
  - string 0: LANGID 0x0409;
  - the 5-byte class-specific UVC VideoControl interrupt endpoint descriptor,
    never printed by lsusb: wMaxTransferSize = the endpoint's wMaxPacketSize;
  - SuperSpeed endpoint companions (lsusb prints only bMaxBurst):
    wBytesPerInterval from wMaxPacketSize for periodic endpoints, 0 for bulk;
  - the answers a capture would read (fake-device/src/plan.c), marked
    '# synthesized:': UVC GET_INFO/GET_LEN/GET_CUR/MIN/MAX/RES/DEF of every
    announced control (typical camera ranges; extension units GET_LEN 4 and
    zeros), the video probe control (first format, its default frame and
    interval; 26/34/48 bytes by bcdUVC), HID report descriptors (known
    reconstructions by length, else a stall), CDC ACM GET_LINE_CODING
    (115200 8N1);
  - the class defaults of plan_defaults() (set lines, one interrupt pattern
    per interrupt IN endpoint).
For the shipped listings (fake-device/profiles/sources/) the converter also
adds their hand-written vendor answers (PL2303 registers, RTL8153) and their
description and source.
"""


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python3 -m harness.devices.lsusb", description=HELP,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("listing", nargs="?", type=Path, help="lsusb -v text of one device")
    ap.add_argument("-o", "--output", type=Path, help="write the profile here (default: stdout)")
    ap.add_argument("--name", help="the profile's name (default: the shipped name, or the file's)")
    ap.add_argument("--speed", choices=("low", "full", "high", "super"),
                    help="the device's speed (default: inferred)")
    ap.add_argument("--description", help="the profile's description")
    ap.add_argument("--source", help="the profile's first source line (default: the URL in the "
                    "listing's '#' header)")
    ap.add_argument("--regenerate", action="store_true",
                    help="rewrite every shipped profile from its listing")
    a = ap.parse_args(argv)
    try:
        if a.regenerate:
            if a.listing or a.output:
                ap.error("--regenerate takes no listing or --output")
            for name, (src, dst) in shipped_paths().items():
                dst.write_text(render(convert(src, name)), encoding="utf-8")
                print(f"wrote {_rel(str(dst))}")
            return 0
        if a.listing is None:
            ap.error("a listing (or --regenerate) is needed")
        prof = convert(a.listing, a.name, speed=a.speed, description=a.description,
                       source=a.source)
        text = render(prof)
        if a.output:
            a.output.write_text(text, encoding="utf-8")
        else:
            sys.stdout.write(text)
        return 0
    except InputError as e:
        print(f"lsusb: {e.message}", file=sys.stderr)
        return e.exit_code
    except OSError as e:
        print(f"lsusb: {e}", file=sys.stderr)
        return 4


if __name__ == "__main__":
    sys.exit(main())
