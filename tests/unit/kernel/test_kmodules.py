"""Which module, Kconfig symbol and device a patch's file comes to (issue #42's
first step): kbuild Makefiles read as kbuild reads them, and the reach of
each module by the harness's devices."""

import shutil
import tempfile
import unittest
from pathlib import Path

from harness.devices import catalogue, reach
from harness.kernel import kmodules

REAL = next(iter(sorted((Path.home() / ".cache/dmaharness/src").glob("linux-7.3*"))), None) \
    if (Path.home() / ".cache/dmaharness/src").is_dir() else None


class Synthetic(unittest.TestCase):
    def setUp(self):
        self.tree = Path(tempfile.mkdtemp(prefix="dmaharness-kmod-"))
        self.addCleanup(shutil.rmtree, self.tree)
        d = self.tree / "drivers" / "widget"
        d.mkdir(parents=True)
        (d / "Kconfig").write_text(
            'config WIDGET\n\ttristate "Widgets"\n\tdepends on USB\n\n'
            'config WIDGET_EXTRA\n\tbool "More"\n\tdepends on WIDGET\n\n'
            'config WIDGET_LIB\n\ttristate\n')
        (d / "Makefile").write_text(
            "# SPDX\nccflags-y += -DDEBUG\n"
            "obj-$(CONFIG_WIDGET) += widget.o\n"
            "widget-y := core.o \\\n\tio.o\n"
            "widget-$(CONFIG_WIDGET_EXTRA) += extra.o\n"
            "obj-$(CONFIG_WIDGET_LIB) += wlib.o\n"
            "obj-y += always.o\n")
        (d / "core.c").write_text("static const struct usb_device_id ids[] = {};\n"
                                  "MODULE_DEVICE_TABLE(usb, ids);\n")
        for n in ("io.c", "extra.c", "wlib.c", "always.c", "widget.h"):
            (d / n).write_text("\n")

    def unit(self, rel):
        us = kmodules.units(self.tree, [rel])
        self.assertEqual(len(us), 1, us)
        return us[0]

    def test_a_part_of_a_composite_module(self):
        u = self.unit("drivers/widget/io.c")
        self.assertEqual((u.module, u.symbol, u.part_symbol, u.settable),
                         ("widget", "CONFIG_WIDGET", None, True))
        self.assertEqual(u.sources, ("drivers/widget/core.c", "drivers/widget/io.c",
                                     "drivers/widget/extra.c"))
        u = self.unit("drivers/widget/extra.c")
        self.assertEqual((u.module, u.part_symbol), ("widget", "CONFIG_WIDGET_EXTRA"))

    def test_an_object_of_its_own_and_a_built_in_one(self):
        u = self.unit("drivers/widget/wlib.c")
        self.assertEqual((u.module, u.symbol, u.settable), ("wlib", "CONFIG_WIDGET_LIB", False))
        u = self.unit("drivers/widget/always.c")
        self.assertEqual((u.module, u.symbol), ("always", None))

    def test_a_header_belongs_to_every_object_of_its_folder(self):
        us = kmodules.units(self.tree, ["drivers/widget/widget.h"])
        self.assertEqual({u.module for u in us}, {"widget", "wlib", "always"})
        self.assertTrue(all("a header" in u.how for u in us))

    def test_a_header_its_sources_include_belongs_to_their_objects_only(self):
        (self.tree / "drivers/widget/wlib.c").write_text('#include "widget.h"\n')
        us = kmodules.units(self.tree, ["drivers/widget/widget.h"])
        self.assertEqual([u.module for u in us], ["wlib"])
        self.assertIn("include", us[0].how)

    def test_a_public_header_belongs_to_the_drivers_that_include_it(self):
        (self.tree / "include/linux/mfd").mkdir(parents=True)
        (self.tree / "include/linux/mfd/widget.h").write_text("struct w;\n")
        (self.tree / "drivers/widget/io.c").write_text("#include <linux/mfd/widget.h>\n")
        us = kmodules.units(self.tree, ["include/linux/mfd/widget.h"])
        self.assertEqual([(u.module, u.symbol) for u in us], [("widget", "CONFIG_WIDGET")])
        self.assertIn("drivers/widget/io.c includes", us[0].how)
        for n in range(kmodules.MAX_INCLUDERS + 1):
            (self.tree / f"drivers/widget/x{n}.c").write_text("#include <linux/mfd/widget.h>\n")
        (u,) = kmodules.units(self.tree, ["include/linux/mfd/widget.h"])
        self.assertIsNone(u.module)
        self.assertIn("shared code", u.how)

    def test_what_no_makefile_builds_is_said_so(self):
        for rel in ("Documentation/widget.rst", "drivers/widget/orphan.c"):
            u = self.unit(rel)
            self.assertIsNone(u.module)
            self.assertIn("not", u.how)

    def test_reach_by_id_table_class_and_none(self):
        cat = catalogue.load(None)
        self.assertEqual(reach.reach(self.tree, self.unit("drivers/widget/io.c"), cat).how,
                         "id-table")                    # core.c has the USB table
        self.assertEqual(reach.reach(self.tree, self.unit("drivers/widget/wlib.c"), cat).how,
                         "none")


@unittest.skipUnless(REAL, "Debian's linux-source-7.3 is not unpacked in the cache folder")
class Real73(unittest.TestCase):
    """The 7.3.4 tree's own Makefiles: the files of this project's fix patches."""

    def test_the_fix_patches_files(self):
        cat = catalogue.load(None)
        want = {
            "drivers/media/usb/uvc/uvc_status.c": ("uvcvideo", "CONFIG_USB_VIDEO_CLASS",
                                                   "camera"),
            "drivers/media/usb/uvc/uvcvideo.h": ("uvcvideo", "CONFIG_USB_VIDEO_CLASS", "camera"),
            "drivers/scsi/virtio_scsi.c": ("virtio_scsi", "CONFIG_SCSI_VIRTIO", "catalogue"),
            "drivers/gpu/drm/virtio/virtgpu_vq.c": ("virtio-gpu", "CONFIG_DRM_VIRTIO_GPU",
                                                    "catalogue"),
            "drivers/net/usb/asix_devices.c": ("asix", "CONFIG_USB_NET_AX8817X", "id-table"),
            "drivers/usb/core/hcd.c": ("usbcore", "CONFIG_USB", "class"),
            "kernel/dma/debug.c": ("debug", "CONFIG_DMA_API_DEBUG", "class"),
        }
        for rel, (module, symbol, how) in want.items():
            with self.subTest(rel=rel):
                u = kmodules.units(REAL, [rel])[0]
                self.assertEqual((u.module, u.symbol), (module, symbol))
                self.assertEqual(reach.reach(REAL, u, cat).how, how)


if __name__ == "__main__":
    unittest.main()
