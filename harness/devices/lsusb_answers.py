"""The answers the converter supplies where a listing has none: string 0,
typical UVC control values, the video probe control, HID report
descriptor reconstructions; and the `get`/`set` lines of a profile
(harness/devices/lsusb.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .lsusb_plan import _le16, descriptors


LANGID = 0x0409


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
