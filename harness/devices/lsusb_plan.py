"""What a capture asks of a device (fake-device/src/plan.c) and what
fake-device's pattern hid sends (profile.c), from its raw descriptors:
the class requests in order, the class defaults, the string indexes
(harness/devices/lsusb.py).
"""

from __future__ import annotations

from dataclasses import dataclass


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
