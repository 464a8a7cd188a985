"""`dmaharness check` (issue #42): a patch's files to the device that reaches
them, the case it runs, and exit 9 when nothing is reached.  The verdict's
runs are `run --case`'s (tests/integration cover those); here the plan and
the case are checked on a synthetic tree, nothing built."""

import json
import os
import shutil
import tempfile
import unittest
from pathlib import Path
from types import SimpleNamespace
from unittest import mock

from harness import errors
from harness.checks import patchcheck
from harness.checks.case import load_case
from harness.pipeline import VariantSpec
from harness.progress import Progress
from tests.unit.cli.test_main import run

DIFF = ("---\n diff | 1 +\n\ndiff --git a/{f} b/{f}\n--- a/{f}\n+++ b/{f}\n"
        "@@ -1 +1,2 @@\n x\n+y\n")


def mail(subject: str, f: str, sha: str = "0" * 40) -> str:
    return (f"From {sha} Mon Sep 17 00:00:00 2001\nSubject: [PATCH] {subject}\n\nWhy.\n"
            + DIFF.format(f=f))


class Check(unittest.TestCase):
    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp(prefix="dmaharness-check-"))
        self.addCleanup(shutil.rmtree, self.tmp)
        env = mock.patch.dict(os.environ, {"DMAHARNESS_CACHE": str(self.tmp / "cache")})
        env.start()
        self.addCleanup(env.stop)
        tree = self.tree = self.tmp / "linux"
        for folder, kconfig, makefile, sources in (
                ("drivers/media/usb/uvc", 'config USB_VIDEO_CLASS\n\ttristate "UVC"\n',
                 "uvcvideo-y := uvc_status.o\nobj-$(CONFIG_USB_VIDEO_CLASS) += uvcvideo.o\n",
                 {"uvc_status.c": "MODULE_DEVICE_TABLE(usb, uvc_ids);\n"}),
                ("drivers/scsi", 'config SCSI_VIRTIO\n\ttristate "virtio-scsi"\n',
                 "obj-$(CONFIG_SCSI_VIRTIO) += virtio_scsi.o\n", {"virtio_scsi.c": "\n"}),
                ("drivers/widget", 'config WIDGET\n\ttristate "W"\n',
                 "obj-$(CONFIG_WIDGET) += widget.o\n",
                 {"widget.c": "MODULE_DEVICE_TABLE(hid, ids);\n"})):
            (tree / folder).mkdir(parents=True)
            (tree / folder / "Kconfig").write_text(kconfig)
            (tree / folder / "Makefile").write_text(makefile)
            for n, text in sources.items():
                (tree / folder / n).write_text(text)
        for p in (mock.patch.object(patchcheck, "target",
                                    return_value=SimpleNamespace(version="7.3", checkout=None)),
                  mock.patch.object(patchcheck.sweep, "source_tree", return_value=tree)):
            p.start()
            self.addCleanup(p.stop)

    def patch(self, name: str, text: str) -> Path:
        f = self.tmp / name
        f.write_text(text)
        return f

    def plan(self, *patches):
        return patchcheck.plan(patchcheck.CheckRequest(tuple(patches), VariantSpec(), {}),
                               Progress(quiet=True))

    def test_the_camera_reaches_uvcvideo(self):
        p = self.plan(self.patch("a.patch", mail("media: uvcvideo: x",
                                                 "drivers/media/usb/uvc/uvc_status.c")))
        self.assertEqual((p.workload, p.touches[0].unit.module), ("camera", "uvcvideo"))
        self.assertEqual(p.touches[0].unit.symbol, "CONFIG_USB_VIDEO_CLASS")

    def test_a_catalogue_driver_gets_its_devices(self):
        p = self.plan(self.patch("s.patch", mail("scsi: x", "drivers/scsi/virtio_scsi.c")))
        self.assertEqual((p.workload, p.devices), ("catalogue", ("virtio-scsi",)))
        case = load_case(patchcheck.write_case(p))
        self.assertEqual(case.catalogue, ("virtio-scsi",))

    def test_virtios_core_gets_every_virtio_device_that_boots_with_others(self):
        (self.tree / "drivers/virtio").mkdir(parents=True)
        (self.tree / "drivers/virtio/Makefile").write_text(
            "obj-$(CONFIG_VIRTIO) += virtio.o virtio_ring.o\n")
        (self.tree / "drivers/virtio/virtio_ring.c").write_text("\n")
        p = self.plan(self.patch("v.patch", mail("virtio: x", "drivers/virtio/virtio_ring.c")))
        self.assertEqual(p.workload, "catalogue")
        self.assertIn("virtio-scsi", p.devices)
        self.assertTrue(all(d.startswith("virtio") for d in p.devices))

    def test_a_series_in_an_mbox_is_one_after_per_patch(self):
        box = self.patch("series.mbox", mail("scsi: one", "drivers/scsi/virtio_scsi.c", "a" * 40)
                         + mail("scsi: two", "drivers/scsi/virtio_scsi.c", "b" * 40))
        p = self.plan(box)
        self.assertEqual([x.name for x in p.patches], ["0001-scsi-one.patch",
                                                       "0002-scsi-two.patch"])
        case = load_case(patchcheck.write_case(p))
        self.assertEqual([v.name for v in case.afters], ["after-1", "after-2"])
        self.assertEqual([len(v.patches) for v in case.afters], [1, 2])
        self.assertEqual(case.expect.fixed, ())            # any new report is the verdict

    def test_nothing_reached_is_exit_9_and_says_why(self):
        for f in ("drivers/widget/widget.c", "Documentation/x.rst"):
            pf = self.patch("w.patch", mail("widget: x", f))
            code, out, err = run(["check", str(pf), "--json"])
            self.assertEqual(code, errors.EXIT_UNREACHABLE, err)
            obj = json.loads(out)
            self.assertFalse(obj["ok"])
            self.assertEqual(obj["workload"], "none")
            self.assertTrue(obj["left_out"])

    def test_the_dry_run_builds_nothing(self):
        pf = self.patch("a.patch", mail("media: uvcvideo: x", "drivers/media/usb/uvc/uvc_status.c"))
        with mock.patch.object(patchcheck.caserun, "run_case",
                               side_effect=AssertionError("ran")):
            code, out, err = run(["check", str(pf), "--dry-run"])
        self.assertEqual(code, 0, err)
        self.assertIn("workload camera", out)

    def test_each_patch_is_named_for_what_it_brings_in_or_takes_out(self):
        from harness.checks import diff

        def comp(label, rows):
            counts = {"new": ([0], [1]), "fixed": ([1], [0]), "unchanged": ([1], [1])}
            return diff.Comparison(diff.Diff("before", label, 1, 1, [
                diff.Row(t, "DMA-API", st, *counts[st]) for t, st in rows]),
                diff.Verdict(True, []))
        outcome = diff.Outcome([comp("after-1", [("A", "new"), ("B", "unchanged")]),
                                comp("after-2", [("A", "new"), ("B", "fixed")]),
                                comp("after-3", [("A", "new"), ("B", "fixed")]),
                                comp("after-4", [("B", "fixed")])])
        lines = patchcheck.verdict_lines(outcome, tuple(Path(f"{k}.patch")
                                                        for k in range(1, 5)))
        # each patch against the tree just before it: 4 takes out what 1 brought in
        self.assertEqual(lines, ["  1.patch: brings in   A", "  2.patch: takes out   B",
                                 "  3.patch: nothing new, nothing taken out",
                                 "  4.patch: takes out   A"])

    def test_not_a_patch(self):
        code, out, err = run(["check", str(self.patch("n.patch", "hello\n")), "--json"])
        self.assertEqual(code, errors.EXIT_INPUT, err)


if __name__ == "__main__":
    unittest.main()
