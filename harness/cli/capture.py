"""`capture`: a USB device read with libusb into a profile (fake-device/capture/)."""

from __future__ import annotations

import os
import sys

from ..errors import HarnessError
from ..devices import usbdevices


def capture(argv: list[str]) -> int:
    """`dmaharness capture ...`: the C tool (fake-device/capture/, libusb),
    built on first use; its options, output and exit codes are its own
    (`dmaharness capture --help`)."""
    try:
        binary = usbdevices.build_capture()
    except HarnessError as e:
        sys.stderr.write(f"dmaharness capture: error: {e.message}\n")
        return e.exit_code
    os.execv(str(binary), [str(binary), *argv])
    return 1       # not reached
