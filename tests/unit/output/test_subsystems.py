"""MAINTAINERS read as get_maintainer.pl reads it, and the table of what
the subsystems' profiles ask of checkpatch.pl (issue #43)."""

import tempfile
import unittest
from pathlib import Path

from harness.output import subsystems

ROOT = Path(__file__).resolve().parents[3]
TREE_7_3 = Path.home() / ".cache/dmaharness/src/linux-7.3.4-1~bpo13+1"

EXCERPT = """\
Descriptions of section entries and preferred order
---------------------------------------------------

\tF: *Files* and directories wildcard patterns.
\tP: *Subsystem Profile document* for more details submitting

Maintainers List
----------------

MEDIA INPUT INFRASTRUCTURE (V4L/DVB)
M:\tMauro Carvalho Chehab <mchehab@kernel.org>
L:\tlinux-media@vger.kernel.org
S:\tMaintained
P:\tDocumentation/driver-api/media/maintainer-entry-profile.rst
F:\tdrivers/media/
F:\tinclude/uapi/linux/v4l2-*

USB VIDEO CLASS
M:\tLaurent Pinchart <laurent.pinchart@ideasonboard.com>
S:\tMaintained
F:\tdrivers/media/usb/uvc/
X:\tdrivers/media/usb/uvc/uvc_debugfs.c

SCSI SUBSYSTEM
S:\tMaintained
F:\tdrivers/scsi/
N:\tvirtio_scsi

ONE FILE
S:\tMaintained
F:\tkernel/dma/debug*.c

DOC
S:\tMaintained
F:\tDocumentation/**/media/*.rst

THE REST
S:\tBuried alive in reporters
F:\t*
F:\t*/
"""

PATCH = """\
Subject: [PATCH] media: uvcvideo: x

Why.
---
diff --git a/drivers/media/usb/uvc/uvc_ctrl.c b/drivers/media/usb/uvc/uvc_ctrl.c
--- a/drivers/media/usb/uvc/uvc_ctrl.c
+++ b/drivers/media/usb/uvc/uvc_ctrl.c
"""


def names(sections):
    return [s.name for s in sections]


class Parse(unittest.TestCase):
    def setUp(self):
        self.sections = subsystems.parse(EXCERPT)

    def test_sections_with_their_fields(self):
        self.assertEqual(names(self.sections), ["MEDIA INPUT INFRASTRUCTURE (V4L/DVB)",
                                                "USB VIDEO CLASS", "SCSI SUBSYSTEM", "ONE FILE",
                                                "DOC", "THE REST"])
        media, uvc, scsi = self.sections[:3]
        self.assertEqual(media.profiles,
                         ("Documentation/driver-api/media/maintainer-entry-profile.rst",))
        self.assertEqual(media.files, ("drivers/media/", "include/uapi/linux/v4l2-*"))
        self.assertEqual(uvc.excludes, ("drivers/media/usb/uvc/uvc_debugfs.c",))
        self.assertEqual(scsi.regexes, ("virtio_scsi",))

    def test_the_preamble_is_no_section(self):
        self.assertNotIn("Maintainers List", names(self.sections))

    def test_patterns_as_get_maintainer(self):
        m = subsystems.file_matches
        self.assertTrue(m("drivers/media/usb/uvc/uvc_ctrl.c", "drivers/media/"))
        self.assertTrue(m("include/uapi/linux/v4l2-controls.h", "include/uapi/linux/v4l2-*"))
        self.assertTrue(m("kernel/dma/debug_cacheline.c", "kernel/dma/debug*.c"))
        # without a trailing slash a pattern takes files of its own depth only
        self.assertFalse(m("kernel/dma/sub/debug.c", "kernel/dma/debug*.c"))
        self.assertFalse(m("kernel/dma/debugXc", "kernel/dma/debug*.c"))     # '.' is a dot
        self.assertTrue(m("Documentation/driver-api/media/x.rst", "Documentation/**/media/*.rst"))
        self.assertTrue(m("MAINTAINERS", "*"))
        self.assertFalse(m("drivers/x.c", "*"))
        self.assertTrue(m("drivers/x.c", "*/"))

    def test_a_folder_of_the_tree_without_its_slash(self):
        with tempfile.TemporaryDirectory() as d:
            (Path(d) / "drivers/media").mkdir(parents=True)
            self.assertTrue(subsystems.file_matches("drivers/media/usb/a.c", "drivers/media", Path(d)))
        self.assertFalse(subsystems.file_matches("drivers/media/usb/a.c", "drivers/media"))

    def test_sections_of_files(self):
        got = names(subsystems.sections_for(["drivers/media/usb/uvc/uvc_ctrl.c"], self.sections))
        self.assertEqual(got, ["MEDIA INPUT INFRASTRUCTURE (V4L/DVB)", "USB VIDEO CLASS",
                               "THE REST"])
        got = names(subsystems.sections_for(["drivers/media/usb/uvc/uvc_debugfs.c"],
                                            self.sections))
        self.assertNotIn("USB VIDEO CLASS", got)                         # X: wins
        got = names(subsystems.sections_for(["drivers/virtio/virtio_scsi_x.c"], self.sections))
        self.assertIn("SCSI SUBSYSTEM", got)                             # N:

    def test_touched(self):
        self.assertEqual(subsystems.touched(PATCH), ("drivers/media/usb/uvc/uvc_ctrl.c",))


class Profiles(unittest.TestCase):
    def setUp(self):
        self.sections = subsystems.parse(EXCERPT)

    def test_every_row_cites_its_document(self):
        for rule in subsystems.PROFILE_RULES:
            with self.subTest(document=rule.document):
                self.assertTrue(rule.document.startswith("Documentation/"))
                self.assertTrue(rule.options)
                for o in rule.options:
                    self.assertIn(o.split("=")[0].lstrip("-"), rule.sentence + rule.cites)

    def test_media_asks_for_80_columns(self):
        secs = subsystems.sections_for(["drivers/media/usb/uvc/uvc_ctrl.c"], self.sections)
        p = subsystems.profile(secs, None)
        self.assertEqual(p.options, ("--strict", "--max-line-length=80"))
        p = subsystems.profile(subsystems.sections_for(["drivers/scsi/sd.c"], self.sections), None)
        self.assertEqual((p.options, p.documents), ((), ()))

    def test_a_rule_its_document_no_longer_says_is_dropped(self):
        secs = subsystems.sections_for(["drivers/media/usb/uvc/uvc_ctrl.c"], self.sections)
        with tempfile.TemporaryDirectory() as d:
            doc = Path(d) / "Documentation/driver-api/media/maintainer-entry-profile.rst"
            doc.parent.mkdir(parents=True)
            doc.write_text("Media development uses checkpatch.pl, e.g.::\n\n"
                           "\t$ ./scripts/checkpatch.pl --strict\n")
            self.assertEqual(subsystems.profile(secs, Path(d)).options, ())
            doc.write_text("e.g.::\n\n\t$ ./scripts/checkpatch.pl   --strict\n"
                           "  --max-line-length=80\n")
            self.assertEqual(subsystems.profile(secs, Path(d)).options,
                             ("--strict", "--max-line-length=80"))


@unittest.skipUnless((TREE_7_3 / "MAINTAINERS").is_file(), "no unpacked linux-source-7.3")
class RealTree(unittest.TestCase):
    def test_the_7_3_tree(self):
        sections = subsystems.read(TREE_7_3)
        self.assertGreater(len(sections), 2000)
        uvc = subsystems.of_patch(PATCH, TREE_7_3)
        self.assertEqual(names(uvc.sections), ["MEDIA INPUT INFRASTRUCTURE (V4L/DVB)",
                                               "USB VIDEO CLASS", "THE REST"])
        self.assertEqual(uvc.options, ("--strict", "--max-line-length=80"))
        scsi = subsystems.of_patch(PATCH.replace("media/usb/uvc/uvc_ctrl", "scsi/virtio_scsi"),
                                   TREE_7_3)
        self.assertIn("VIRTIO BLOCK AND SCSI DRIVERS", names(scsi.sections))
        self.assertEqual(scsi.options, ())


if __name__ == "__main__":
    unittest.main()
