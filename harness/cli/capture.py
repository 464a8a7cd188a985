"""`capture`: a USB device read with libusb into a profile (fake-device/capture/).

The options, output and exit codes are the C tool's own.  Its --help is
read out of the tool's source (cap_usage() in fake-device/capture/cli.c,
the one copy of that text) rather than from the built binary, so that
`dmaharness capture --help` builds nothing and works without make or a
compiler.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

from .. import errors
from ..errors import HarnessError
from ..devices import usbdevices
from . import helptext

USAGE_SOURCE = usbdevices.CAPTURE_DIR / "cli.c"

_ESCAPES = {"n": "\n", "t": "\t", '"': '"', "\\": "\\", "'": "'"}
_LITERAL = re.compile(r'"((?:[^"\\\n]|\\.)*)"')

# what `dmaharness capture` adds to the tool's text
WRAPPER = (
    "\n`dmaharness capture` runs this tool (fake-device/capture/), built on first\n"
    "use; its options, output and exit codes are the tool's.  The wrapper adds:\n\n"
    + helptext.examples((
        "dmaharness capture --device 046d:0825 -o my-camera.profile",
        "# then serve it to a guest, with the device's driver (capture's --device",
        "# is the real device, VID:PID; run's --usb-device the profile it becomes)",
        "dmaharness run --usb-device ./my-camera.profile",
        "# the device at lsusb's Bus 001 Device 004, its drivers detached meanwhile",
        "sudo dmaharness capture --bus 1 --address 4 --detach -o cam.profile"))
    + "\n\n"
    + helptext.table((errors.EXIT_ENV, errors.EXIT_BUILD, errors.EXIT_INTERNAL,
                      errors.EXIT_INTERRUPTED),
                     {errors.EXIT_ENV: "(also) make or a compiler is missing to build the "
                                       "tool, or standard output is closed",
                      errors.EXIT_BUILD: "the tool failed to build (make's last lines are "
                                         "printed)"},
                     header="exit codes of the wrapper, before the tool runs:")
    + "\n")


def usage_text(source: Path | None = None) -> str | None:
    """The tool's --help: the string literals of cap_usage() in its C
    source, joined and unescaped as the compiler would; None when the
    source is not there or not in the shape this reader knows (then the
    tool is built and asked)."""
    try:
        text = (source or USAGE_SOURCE).read_text()
    except (OSError, UnicodeDecodeError):
        return None
    m = re.search(r"void cap_usage\(FILE \*f\)\s*\{\s*fputs\((.*?), f\);\s*\}", text, re.S)
    if not m:
        return None
    body = m.group(1)
    if _LITERAL.sub("", body).strip():          # anything but literals: a macro, a variable
        return None
    out = []
    for lit in _LITERAL.findall(body):
        parts = re.split(r"\\(.)", lit)
        for i, part in enumerate(parts):
            if i % 2 == 0:
                out.append(part)
            elif part in _ESCAPES:
                out.append(_ESCAPES[part])
            else:                               # \x.., \0..: not a help text's
                return None
    usage = "".join(out)
    return usage if usage.startswith("Usage: dmaharness-capture") else None


def wants_help(argv: list[str]) -> bool:
    """Only -h/--help: what the tool answers with its usage text alone."""
    return bool(argv) and all(a in ("-h", "--help") for a in argv)


def capture(argv: list[str]) -> int:
    """`dmaharness capture ...`: the C tool (fake-device/capture/, libusb),
    built on first use; its options, output and exit codes are its own
    (`dmaharness capture --help`, which builds nothing)."""
    if wants_help(argv):
        usage = usage_text()
        if usage is not None:
            sys.stdout.write(usage + WRAPPER)
            return errors.EXIT_OK
    try:
        binary = usbdevices.build_capture()
    except HarnessError as e:
        sys.stderr.write(f"dmaharness capture: error: {e.message}\n")
        return e.exit_code
    sys.stdout.flush()
    os.execv(str(binary), [str(binary), *argv])
    return 1       # not reached
