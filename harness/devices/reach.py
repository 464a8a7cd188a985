"""How a module a patch touches is reached by a device the harness has (issue #42).

For each unit (harness.kernel.kmodules: a file and the object it builds
into), the first row of this order that applies:

  camera      uvcvideo: the fake UVC camera over usb-redir, flooding its
              status endpoint while the guest agent drives the driver
              (the seed case's workload)
  class       shared code (USB core and host controllers, HID core, virtio's
              core and ring, the DMA mapping layer): every device of the
              class, and the reason
  catalogue   a QEMU device model of the sweep's catalogue whose modules
              or Kconfig symbols name it, with that entry's workload
  id-table    a USB or HID driver (MODULE_DEVICE_TABLE(usb|hid, ...) in its
              sources): a shipped device profile that binds it, else a
              device made from its own ID table (harness.devices.usbgen, as
              `usb-drivers` and the USB sweep make them)
  none        nothing the harness attaches reaches it, and why (a library
              module that other drivers select, rtl_usb for rtl8192cu, is
              "none" here: the drivers that select it are not looked for yet)

``reach(tree, unit, catalogue)`` says which, with the words for people.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from ..kernel.kmodules import Unit
from .catalogue import Catalogue

CAMERA_MODULES = ("uvcvideo",)
_TABLE = re.compile(r"MODULE_DEVICE_TABLE\s*\(\s*(usb|hid)\s*,")

# shared code: every device of a class reaches it (path prefix, class, why)
SHARED: tuple[tuple[str, str, str], ...] = (
    ("drivers/usb/core/", "usb", "USB core: every USB device (the camera, profiles, the USB "
     "sweep's devices) goes through it"),
    ("drivers/usb/host/", "usb", "the host controllers: the guest's xHCI carries every USB "
     "device"),
    ("drivers/hid/hid-core.c", "hid", "HID core: every HID device (the camera's button, the "
     "USB sweep's HID devices)"),
    ("drivers/virtio/", "virtio", "virtio's core and ring: every virtio device of the "
     "catalogue"),
    ("kernel/dma/", "dma", "the DMA mapping layer and dma-debug: every device that does DMA"),
    ("include/linux/dma-", "dma", "the DMA mapping headers: every device that does DMA"),
)


@dataclass(frozen=True)
class Reach:
    how: str                        # camera, catalogue, id-table, class, none
    detail: str                     # in words
    devices: tuple[str, ...] = ()   # catalogue entries, or the id table's bus

    def to_json(self) -> dict:
        return {"how": self.how, "detail": self.detail, "devices": list(self.devices)}


def _id_tables(tree: Path, sources: tuple[str, ...]) -> list[str]:
    buses = []
    for rel in sources:
        try:
            text = (tree / rel).read_text(errors="replace")
        except OSError:
            continue
        buses += [m.group(1) for m in _TABLE.finditer(text)]
    return sorted(set(buses))


def _shared(path: str) -> Optional[tuple[str, str]]:
    for prefix, klass, why in SHARED:
        if path.startswith(prefix):
            return klass, why
    return None


def reach(tree: Path, unit: Unit, cat: Optional[Catalogue]) -> Reach:
    if unit.module in CAMERA_MODULES:
        return Reach("camera", "the fake UVC camera (fake-device/) flooding the status "
                     "endpoint while the guest agent drives uvcvideo")
    shared = _shared(unit.file)
    if shared is not None:
        return Reach("class", shared[1], (shared[0],))
    if cat is not None and unit.module is not None:
        names = tuple(d.name for d in cat.devices if not d.skip and (
            unit.module in d.modules or unit.module.replace("-", "_") in d.modules
            or (unit.symbol is not None and unit.symbol.removeprefix("CONFIG_") in
                {s.removeprefix("CONFIG_") for s in d.symbols()})))
        if names:
            return Reach("catalogue", f"QEMU device model(s) of {cat.path.name}: "
                         f"{', '.join(names)}, with their workloads", names)
    buses = _id_tables(tree, unit.sources) if unit.module is not None else []
    if buses:
        return Reach("id-table", f"a USB device over usb-redir that its own {'/'.join(buses)} "
                     "ID table matches (a shipped profile that binds it, else one made from "
                     "the table as usb-drivers and the USB sweep make them)", tuple(buses))
    if unit.module is None:
        return Reach("none", unit.how)
    return Reach("none", f"{unit.module}: no device of the harness binds it (not the "
                 "camera, no catalogue entry, no USB or HID ID table)")
