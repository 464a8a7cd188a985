#!/usr/bin/env python3
"""Write the seed corpus of fuzz-pdevice (fuzz/fuzz_pdevice.c) to
fuzz/seeds-pdevice/: one options byte, then usb-guest usbredir messages
(64-bit ids) that enumerate, configure, flood, and hold/cancel bulk reads.

usage: fuzz/pdevice_seeds.py   (from fake-device/; rewrites the directory)
"""
import os
import struct

CONTROL, BULK = 100, 101
SET_CONFIG, GET_CONFIG, SET_ALT, GET_ALT = 6, 7, 9, 10
START_ISO, START_IRQ, STOP_IRQ, CANCEL, RESET = 12, 15, 16, 21, 3

ids = iter(range(1, 1 << 30))


def msg(typ, hdr=b"", data=b"", id_=None):
    return struct.pack("<IIQ", typ, len(hdr) + len(data),
                       next(ids) if id_ is None else id_) + hdr + data


def ctl(rtype, req, value, index, length, data=b""):
    ep = rtype & 0x80
    return msg(CONTROL, struct.pack("<BBBBHHH", ep, req, rtype, 0, value, index,
                                    length), data)


def bulk(ep, length, data=b"", id_=None):
    return msg(BULK, struct.pack("<BBHIH", ep, 0, length & 0xffff, 0, length >> 16),
               data, id_)


def enumerate_all():
    s = ctl(0x80, 6, 0x0100, 0, 64) + ctl(0x80, 6, 0x0200, 0, 9)
    s += ctl(0x80, 6, 0x0200, 0, 0xffff) + ctl(0x80, 6, 0x0201, 0, 0xffff)
    s += ctl(0x80, 6, 0x0300, 0, 255) + ctl(0x80, 6, 0x0302, 0x0409, 255)
    s += ctl(0x80, 6, 0x0302, 0x0407, 255) + ctl(0x80, 6, 0x0600, 0, 10)
    s += ctl(0x80, 6, 0x0700, 0, 0xffff) + ctl(0x80, 6, 0x0f00, 0, 255)
    s += ctl(0x80, 0, 0, 0, 2) + ctl(0x80, 8, 0, 0, 1)
    s += msg(SET_CONFIG, bytes([1])) + msg(GET_CONFIG)
    s += ctl(0x00, 9, 2, 0, 0) + ctl(0x00, 9, 1, 0, 0)
    s += ctl(0x81, 6, 0x2200, 3, 0x45) + ctl(0x81, 0x0a, 0, 2, 1)
    s += ctl(0x01, 0x0b, 1, 2, 0) + msg(SET_ALT, bytes([4, 1])) + msg(GET_ALT, bytes([4]))
    return s


def class_requests():
    s = ctl(0xa1, 0x81, 0x0200, 0x0100, 2) + ctl(0xa1, 0x87, 0x1234, 0x0100, 2)
    s += ctl(0xa1, 0x84, 0x0200, 0x0300, 2) + ctl(0xa1, 0x82, 0x0200, 0x0100, 2)
    s += ctl(0x21, 0x01, 0x0500, 0x0100, 3, b"\x0a\x0b\x0c")
    s += ctl(0xa1, 0x81, 0x0500, 0x0100, 3)
    s += ctl(0x21, 0x01, 0x0100, 0x0001, 34, bytes(range(34)))
    s += ctl(0xa1, 0x81, 0x0100, 0x0001, 34)
    s += ctl(0x21, 0x09, 0x0200, 0x0003, 1, b"\x01") + ctl(0x21, 0x0a, 0, 3, 0)
    s += ctl(0xc0, 0x05, 0, 1, 4) + ctl(0x40, 0x07, 1, 2, 0) + ctl(0xe0, 0, 0, 0, 4)
    return s


def flood(eps):
    s = msg(SET_CONFIG, bytes([1]))
    for ep in eps:
        s += msg(START_IRQ, bytes([ep]))
    return s


def bulk_hold():
    s = msg(SET_CONFIG, bytes([1])) + msg(SET_ALT, bytes([4, 1]))
    s += bulk(0x82, 64, id_=1000) + bulk(0x82, 512, id_=1001)
    s += bulk(0x02, 4, b"\x01\x02\x03\x04") + bulk(0x83, 8)
    s += msg(CANCEL, id_=1000) + msg(CANCEL, id_=1000) + msg(CANCEL, id_=77)
    s += msg(START_ISO, bytes([0x81, 8, 4])) + msg(RESET)
    s += msg(SET_ALT, bytes([4, 0])) + msg(CANCEL, id_=1001)
    return s


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    out = os.path.join(here, "seeds-pdevice")
    os.makedirs(out, exist_ok=True)
    for name in os.listdir(out):
        os.unlink(os.path.join(out, name))
    seeds = {
        "builtin-enumerate": b"\x00" + enumerate_all() + class_requests(),
        "builtin-flood": b"\x00" + flood([0x83]),
        "builtin-hotplug": b"\x82" + flood([0x83]),
        "composite-enumerate": b"\x01" + enumerate_all() + class_requests(),
        "composite-flood": b"\x01" + flood(range(0x83, 0x8b)),
        "composite-count": b"\x43" + flood([0x84, 0x85, 0x88]),
        "composite-bulk": b"\x01" + bulk_hold(),
        "composite-hotplug": b"\x81" + bulk_hold() + flood([0x86]),
    }
    for name, data in seeds.items():
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
