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
                 "uvcvideo-y := uvc_status.o uvc_ctrl.o uvc_v4l2.o\n"
                 "obj-$(CONFIG_USB_VIDEO_CLASS) += uvcvideo.o\n",
                 {"uvc_status.c": "MODULE_DEVICE_TABLE(usb, uvc_ids);\n", "uvc_ctrl.c": "\n",
                  "uvc_v4l2.c": "\n"}),
                ("drivers/scsi", 'config SCSI_VIRTIO\n\ttristate "virtio-scsi"\n',
                 "obj-$(CONFIG_SCSI_VIRTIO) += virtio_scsi.o\n", {"virtio_scsi.c": "\n"}),
                ("drivers/widget", 'config WIDGET\n\ttristate "W"\n',
                 "obj-$(CONFIG_WIDGET) += widget.o\n",
                 {"widget.c": "MODULE_DEVICE_TABLE(hid, ids);\n"}),
                ("drivers/usb/class", 'config USB_ACM\n\ttristate "ACM"\n',
                 "obj-$(CONFIG_USB_ACM) += cdc-acm.o\nobj-$(CONFIG_USB_TMC) += usbtmc.o\n",
                 {"cdc-acm.c": '#include "cdc-acm.h"\nMODULE_DEVICE_TABLE(usb, acm_ids);\n',
                  "cdc-acm.h": "struct acm;\n",
                  "usbtmc.c": "MODULE_DEVICE_TABLE(usb, usbtmc_devices);\n"}),
                ("drivers/gizmo", 'config GIZMO\n\ttristate "G"\n',
                 "obj-$(CONFIG_GIZMO) += gizmo.o\n", {"gizmo.c": "\n"})):
            (tree / folder).mkdir(parents=True)
            (tree / folder / "Kconfig").write_text(kconfig)
            (tree / folder / "Makefile").write_text(makefile)
            for n, text in sources.items():
                (tree / folder / n).write_text(text)
        for p in (mock.patch.object(patchcheck, "target",
                                    return_value=SimpleNamespace(version="7.3", checkout=None,
                                                                 frags=())),
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

    def test_a_usb_driver_gets_a_shipped_profile_that_binds_it(self):
        """cdc-acm: the header goes to the module whose source includes it
        (not to usbtmc beside it); the stm32 profile binds it; USB_ACM is
        in the device profiles' fragment already, so nothing is asked."""
        with mock.patch.object(patchcheck.fragments, "parse_fragment",
                               return_value=SimpleNamespace(options=(("CONFIG_USB_ACM", "m"),))):
            p = self.plan(self.patch("a.patch", mail("usb: cdc-acm: x",
                                                     "drivers/usb/class/cdc-acm.h")))
        self.assertEqual(p.workload, "usb")
        self.assertEqual([t.unit.module for t in p.touches], ["cdc-acm"])
        self.assertEqual([(d.module, d.profile) for d in p.usb], [("cdc-acm", "stm32-cdc-acm")])
        self.assertEqual(p.config, ())
        case = load_case(patchcheck.write_case(p))
        self.assertEqual(case.run["devices"], ("stm32-cdc-acm",))
        self.assertEqual(case.run["bulk_in"], "random")
        self.assertNotIn("modules", case.run)
        self.assertEqual(case.config, ())

    def test_a_driver_without_a_profile_gets_a_device_from_its_table(self):
        """usbtmc: its symbol is asked for; before the kernel is built the
        case attaches nothing; with the device made, the case names the file
        and the module the guest loads."""
        p = self.plan(self.patch("t.patch", mail("usb: usbtmc: x",
                                                 "drivers/usb/class/usbtmc.c")))
        self.assertEqual([(d.module, d.profile, d.bus) for d in p.usb], [("usbtmc", None, "usb")])
        self.assertIn("first try", p.usb[0].source)
        self.assertEqual(p.config, ("CONFIG_USB_TMC=y",))     # no Kconfig entry here: not m
        case = load_case(patchcheck.write_case(p))
        self.assertNotIn("devices", case.run)
        self.assertEqual(case.config, ("CONFIG_USB_TMC=y",))
        folder = patchcheck.write_case(p, {"usbtmc": "usbtmc-int-bulk.profile"},
                                       {"usbtmc-int-bulk.profile": "name x\n"})
        case = load_case(folder)
        self.assertEqual(case.run["devices"], (str(folder.resolve() / "usbtmc-int-bulk.profile"),))
        self.assertEqual(case.run["modules"], ("usbtmc",))

    def test_a_usb_sweep_that_bound_the_driver_gives_its_try(self):
        runs = self.tmp / "cache" / "runs" / "20261207-usbsweep-7.3-1"
        runs.mkdir(parents=True)
        (runs / "usb-sweep.json").write_text(json.dumps({"kernel": "7.3", "drivers": [
            {"module": "usbtmc", "bound_with": "int-bulk-2"}]}))
        self.assertEqual(patchcheck.sweep_try("7.3", "usbtmc")[0], "int-bulk-2")
        self.assertEqual(patchcheck.sweep_try("6.1", "usbtmc"), (None, ""))
        p = self.plan(self.patch("t.patch", mail("usb: usbtmc: x", "drivers/usb/class/usbtmc.c")))
        self.assertEqual(p.usb[0].attempt, "int-bulk-2")

    def test_a_driver_its_device_did_not_bind_is_said_so(self):
        p = self.plan(self.patch("a.patch", mail("usb: cdc-acm: x", "drivers/usb/class/cdc-acm.c")))
        run_dir = self.tmp / "run"
        for k, drivers in ((1, {"0": "none"}), (2, {"0": "usbfs"})):
            (run_dir / f"before-{k}").mkdir(parents=True)
            (run_dir / f"before-{k}" / "result.json").write_text(json.dumps(
                {"devices": [{"interfaces": drivers}]}))
        missed, ran = patchcheck.unbound(p, run_dir)
        self.assertEqual((len(missed), ran), (1, []))
        self.assertIn("did not bind", missed[0])
        self.assertIn("usbfs", missed[0])
        # a driver whose probe ran and failed is reached (its error path ran)
        (run_dir / "before-1" / "console.log").write_text(
            "[    3.38] cdc_acm 1-1:1.0: probe with driver cdc_acm failed with error -22\n")
        missed, ran = patchcheck.unbound(p, run_dir)
        self.assertEqual(missed, [])
        self.assertIn("error -22", ran[0])
        (run_dir / "before-2" / "result.json").write_text(json.dumps(
            {"devices": [{"interfaces": {"0": "cdc_acm"}}]}))
        self.assertEqual(patchcheck.unbound(p, run_dir), ([], []))

    def test_a_patch_of_an_in_tree_case_is_checked_under_that_cases_workload(self):
        """The subscribe deadlock's fix: the default camera workload never
        subscribes, so the check takes the case's [run] (the same diff,
        whatever the mail around it says); another uvcvideo patch does not."""
        case = (patchcheck.paths.REPO / "patches" / "7.3" / "cases" / "uvc-subscribe-deadlock")
        fix = next((case / "fix").glob("*.patch"))
        mine = self.patch("mine.patch", "Subject: [PATCH] my words\n\nOther text.\n---\n"
                          + fix.read_text()[fix.read_text().index("diff --git"):])
        for f in (fix, mine):
            p = self.plan(f)
            self.assertEqual((p.workload, p.from_case), ("camera", "uvc-subscribe-deadlock"))
            self.assertEqual(p.run["agent_args"], "--initial --hold none")
            c = load_case(patchcheck.write_case(p))
            self.assertEqual(c.run["cycle_hz"], 20)
            self.assertEqual(c.run["flood"].rate, "max")
        p = self.plan(self.patch("a.patch", mail("media: uvcvideo: x",
                                                 "drivers/media/usb/uvc/uvc_status.c")))
        self.assertEqual((p.from_case, p.run), ("", {}))
        self.assertNotIn("[run]", patchcheck.case_text(p))

    def test_a_probe_boot_finds_the_try_that_binds_each_driver(self):
        """Every try a device of its own, 8 a boot: the first try whose
        device has the driver is the one the check uses."""
        from harness.devices import usbgen
        plans = {p.module: p for p in usbgen.plan(usbgen.parse_aliases(
            "alias usb:v0781p0005d0005dc*dsc*dp*ic*isc*ip*in* ums_usbat\n"
            "alias usb:v1234p5678d*dc*dsc*dp*ic*isc*ip*in* other\n"))}
        self.assertGreater(len(plans["ums_usbat"].tries) + len(plans["other"].tries), 8)
        boots = []

        def flood(job, progress):
            boots.append(job)
            names = [Path(f).name for f in job.flood.devices]
            devs = [{"interfaces": {"0": "ums-usbat" if n == "ums_usbat-vendor.profile"
                                    else "none"}} for n in names]
            return SimpleNamespace(payload={"devices": devs})
        with mock.patch.object(patchcheck.pipeline, "flood_once", side_effect=flood):
            found = patchcheck.probe_tries(plans, SimpleNamespace(), self.tmp / "probe",
                                           patchcheck.BootSettings(), Progress(quiet=True))
        self.assertEqual(found, {"ums_usbat": "vendor"})        # "other" binds with none
        # 8 devices a boot; the second boot would hold only ums_usbat's
        # other tries, and it is bound already: not booted
        self.assertEqual([len(b.flood.devices) for b in boots], [8])
        self.assertIn("ums_usbat", boots[0].modules)

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
        for f in ("drivers/gizmo/gizmo.c", "Documentation/x.rst"):
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

    def test_a_mail_of_an_mbox_without_a_diff_is_refused_by_its_number(self):
        box = self.patch("bad.mbox", "From " + "a" * 40 + " Mon Sep 17 00:00:00 2001\n"
                         + mail("scsi: one", "drivers/scsi/virtio_scsi.c", "b" * 40))
        with self.assertRaises(errors.InputError) as cm:
            self.plan(box)
        self.assertIn("mail 1 of 2", cm.exception.message)

    def test_not_a_patch(self):
        code, out, err = run(["check", str(self.patch("n.patch", "hello\n")), "--json"])
        self.assertEqual(code, errors.EXIT_INPUT, err)


if __name__ == "__main__":
    unittest.main()
