"""An `lsusb -v` listing split into its descriptor blocks, and the reader
that takes one block's printed fields back to bytes (harness/devices/lsusb.py).

`read_listing` finds the blocks (nothing is decoded yet); a `Reader`
takes a block's fields in order by name and writes them little-endian;
`_finish` checks the rebuilt bytes against the block's bLength.  Every
problem is a `ListingError` naming the file and the line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation

from ..errors import InputError


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
