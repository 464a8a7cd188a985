"""A device's dmesg: clean, or the kernel lines and reports that complain.

A device's dmesg is clean (`dmesg_check`) when the run's console holds no
kernel report but the detector's cache-line sharing findings (those are
the tool's output, listed apart), and no kernel line about the device (by
its sysfs name, or its HID name 0003:VVVV:PPPP) says error, failed, unable,
invalid, too short, not supported or the like: a faithful profile binds its
driver without complaint.  It takes the console and the devices' results
(harness.devices.usbdevices.parse) and fills each result's ``dmesg``.
"""

from __future__ import annotations

import re

from ..devices.usbdevices import DeviceResult
from . import engine

# a kernel line that complains (matched case-blind, as whole words)
_COMPLAINT = re.compile(r"\b(errors?|fail(?:s|ed|ure)?|unable|can't|cannot|couldn't|invalid|bad|"
                        r"too (?:short|long|big|small)|not supported|unsupported|unexpected|"
                        r"timed? ?out|overflow|garbage|corrupt(?:ed)?|malformed|stall(?:ed)?|"
                        r"broken|refus(?:e|ed))\b", re.I)
_KMSG = re.compile(r"^\s*(?:<\d+>)?\[\s*\d+\.\d+\]\s*(?:\[\s*[TC]\d+\]\s*)?(.*)$")
SHARING = "shares a cache line with other data of its object"   # the detector's finding


def dmesg_check(console: str, results: list[DeviceResult]) -> dict:
    """Fill each result's `dmesg` with the kernel lines that complain about
    it; return the run's verdict: {"clean", "reports" (titles of the
    kernel reports that are not sharing findings), "sharing_findings"}."""
    found = engine.parse(console)
    other = [r for r in found if SHARING not in (r.message or "")]
    kmsg = [m.group(1) for ln in console.splitlines() if (m := _KMSG.match(ln))]
    for r in results:
        if not r.sysname:
            continue
        vid, pid = (int(x, 16) for x in r.id.split(":"))
        me = re.compile(rf"(?<![\w.-]){re.escape(r.sysname)}(?![\w.-])(?::\d+\.\d+)?"
                        rf"|\b0003:{vid:04X}:{pid:04X}\.")
        r.dmesg = [ln for ln in kmsg if me.search(ln) and _COMPLAINT.search(ln)][:30]
    return {"clean": not other and not any(r.dmesg for r in results),
            "reports": sorted({r.title for r in other}),
            "sharing_findings": sorted({r.title for r in found if r not in other})}
