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

The converter's modules, in the order the data flows: `lsusb_listing`
(the listing's blocks, the field reader), `lsusb_uvc_uac` (UVC and UAC 1
class-specific descriptors), `lsusb_parse` (every descriptor, the
configurations' totals), `lsusb_plan` (what a capture asks, plan.c),
`lsusb_answers` (the synthesized answers), `lsusb_shipped` (the shipped
profiles), `lsusb_build` (the profile) and `lsusb_render` (its text).
This module is the command.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from ..errors import InputError
from .lsusb_build import Profile, build
from .lsusb_parse import parse
from .lsusb_render import render
from .lsusb_shipped import SHIPPED, _rel, shipped_paths


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
    ap = argparse.ArgumentParser(prog="python3 -m harness.devices.lsusb", allow_abbrev=False, description=HELP,
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
