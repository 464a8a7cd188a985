"""The sweep: catalogue validation, placement, planning, site folding and the
baseline diff (issue #14).  The real boots are tests/integration/test_sweep.py."""

import json
import subprocess
import tempfile
import unittest
from pathlib import Path
from types import SimpleNamespace as NS

from harness.devices import catalogue
from harness.reports import frames, layout
from harness.checks import sweep, sweeptable
from harness.errors import InputError

ROOT = Path(__file__).resolve().parents[3]
KUNIT_LOG = ROOT / "tests" / "fixtures" / "sweep" / "real-6.12-kunit-detector.log"

GOOD = """
version = 1
[helpers]
sh = "say() { echo \\"$*\\"; }"

[device.virtio-blk]
description = "virtio block"
class = "virtio"
qemu_devices = ["virtio-blk-pci"]
qemu = ["-drive", "if=none,id={id}-d,file={image:disk},format=raw",
        "-device", "virtio-blk-pci,drive={id}-d,iommu_platform=on"]
images = { disk = "16M" }
kconfig = ["CONFIG_VIRTIO_BLK=m"]
modules = ["virtio_blk"]
workload = "dd if=/dev/vda of=/dev/null bs=4k count=1"

[device.e1000]
description = "two e1000 on a hub"
class = "network"
qemu_devices = ["e1000"]
qemu = ["-netdev", "hubport,id={id}-a,hubid={hub}", "-device", "e1000,netdev={id}-a"]
kconfig = ["CONFIG_E1000=m"]
modules = ["e1000"]
workload = "arping -c 1 -I eth0 10.0.0.2"

[device.usb-mtp]
description = "MTP"
class = "usb"
skip = "no kernel driver: MTP is spoken by userspace"
"""


def parse(text):
    return catalogue.parse(text, Path("cat.toml"))


class Catalogue(unittest.TestCase):
    def test_good(self):
        cat = parse(GOOD)
        self.assertEqual([d.name for d in cat.devices], ["virtio-blk", "e1000", "usb-mtp"])
        blk = cat.by_name()["virtio-blk"]
        self.assertEqual(blk.images, (("disk", 16 << 20),))
        self.assertEqual(blk.kconfig, (("CONFIG_VIRTIO_BLK", "m"),))
        self.assertIn("say()", cat.helpers)
        self.assertEqual(cat.by_name()["usb-mtp"].skip, "no kernel driver: MTP is spoken by userspace")

    def test_select_by_name_and_class(self):
        cat = parse(GOOD)
        self.assertEqual([d.name for d in cat.select(["network"])], ["e1000"])
        self.assertEqual([d.name for d in cat.select(["e1000", "virtio-blk"])],
                         ["virtio-blk", "e1000"])     # catalogue order
        self.assertEqual(len(cat.select(None)), 3)
        with self.assertRaisesRegex(InputError, "no device 'nvme'.*known: e1000"):
            cat.select(["nvme"])

    def bad(self, text, pattern):
        with self.assertRaisesRegex(InputError, pattern):
            parse(text)

    def test_errors_name_the_entry_and_key(self):
        self.bad(GOOD.replace('class = "virtio"', 'class = "gpu"'),
                 r"cat.toml: \[device.virtio-blk\]: class must be one of")
        self.bad(GOOD.replace("{image:disk}", "{image:disc}"),
                 r"\[device.virtio-blk\]: \{image:disc\} names no image")
        self.bad(GOOD.replace("hubid={hub}", "hubid={port}"),
                 r"\[device.e1000\]: unknown placeholder \{port\}")
        self.bad(GOOD.replace('"CONFIG_E1000=m"', '"E1000=m"'),
                 r"\[device.e1000\]: kconfig 'E1000=m' is not")
        self.bad(GOOD.replace('disk = "16M"', 'disk = "16Q"'), r"images.disk: '16Q' is not a size")
        self.bad(GOOD.replace('disk = "16M"', 'disk = "4G"'), r"at most 1G")
        self.bad(GOOD.replace('workload = "arping -c 1 -I eth0 10.0.0.2"', ''),
                 r"\[device.e1000\]: workload must be a non-empty")
        self.bad(GOOD.replace('modules = ["e1000"]', 'modules = ["e1000; reboot"]'),
                 r"not module names")
        self.bad(GOOD.replace('description = "MTP"', 'description = "MTP"\nsize = 3'),
                 r"\[device.usb-mtp\]: unknown key\(s\) size")
        self.bad(GOOD.replace("[device.e1000]", "[device.E1000]"), r"lower-case")
        self.bad(GOOD.replace("version = 1", "version = 2"), "version must be 1")
        self.bad(GOOD + "\n[device.x\n", r"cat.toml: .*line \d+")
        self.bad("version = 1\n", r"no device entries")

    def test_load_missing_file(self):
        with self.assertRaisesRegex(InputError, "the device catalogue /nonexistent.*: no such file"):
            catalogue.load(Path("/nonexistent/cat.toml"))

    def test_ci_catalogue_is_the_shipped_entries(self):
        """The CI sweep (tests/integration/test_sweep.py) boots exactly the
        shipped entries, with a smaller subsystems fragment of its own."""
        ci = catalogue.load(ROOT / "tests" / "fixtures" / "sweep" / "ci" / "catalogue.toml")
        main = catalogue.load()
        self.assertEqual(ci.helpers, main.helpers)
        for d in ci.devices:
            self.assertEqual(d, main.by_name()[d.name])
        self.assertEqual(ci.subsystems.parent, ci.path.parent)
        self.assertEqual(main.subsystems, catalogue.PATH.parent / "subsystems.config")
        self.assertTrue(ci.subsystems.is_file() and main.subsystems.is_file())

    def test_subsystems_key(self):
        self.assertEqual(parse('subsystems = "small.config"\n' + GOOD).subsystems,
                         Path("small.config"))
        self.bad('subsystems = "../x.config"\n' + GOOD, "subsystems names a .config file")

    def test_shipped_catalogue_is_valid(self):
        cat = catalogue.load()
        self.assertGreater(len(cat.devices), 10)
        names = [d.name for d in cat.devices]
        self.assertEqual(len(names), len(set(names)))
        for d in cat.devices:
            if not d.skip:
                self.assertTrue(d.qemu_devices and d.qemu and d.workload, d.name)


class Placement(unittest.TestCase):
    def test_instances_and_images(self):
        cat = parse(GOOD)
        with tempfile.TemporaryDirectory() as tmp:
            insts = catalogue.place(cat.select(["virtio-blk", "e1000"]), Path(tmp), first=3)
            blk, nic = insts
            self.assertEqual((blk.id, nic.id, nic.hub), ("d3", "d4", 5))
            img = blk.images["disk"]
            self.assertEqual(img.stat().st_size, 16 << 20)
            self.assertLess(img.stat().st_blocks * 512, 1 << 20)     # sparse
            self.assertEqual(blk.qemu_args()[1], f"if=none,id=d3-d,file={img},format=raw")
            self.assertEqual(nic.qemu_args(), ["-netdev", "hubport,id=d4-a,hubid=5",
                                               "-device", "e1000,netdev=d4-a"])

    def test_guest_script_and_markers(self):
        cat = parse(GOOD)
        with tempfile.TemporaryDirectory() as tmp:
            insts = catalogue.place(cat.select(["virtio-blk"]), Path(tmp))
        script = catalogue.guest_script(cat.helpers, insts)
        self.assertTrue(script.startswith("say() {"))
        self.assertIn(f"{catalogue.BEGIN} virtio-blk", script)
        self.assertIn("dd if=/dev/vda", script)
        self.assertIn("exit $sweep_status", script)
        console = (f"[ 1.0] {catalogue.BEGIN} virtio-blk\n[ 2.0] {catalogue.END} virtio-blk "
                   f"status=0\n[ 3.0] {catalogue.END} e1000 status=1\n")
        self.assertEqual(catalogue.workload_status(console), {"virtio-blk": 0, "e1000": 1})
        failed = (f"{catalogue.BEGIN} nvme\n{catalogue.FAIL} no nvme disk\n{catalogue.END} nvme "
                  f"status=1\n{catalogue.BEGIN} ahci\n{catalogue.FAIL} other\n")
        self.assertEqual(catalogue.workload_failure(failed, "nvme"), "no nvme disk")
        self.assertEqual(catalogue.workload_failure(failed, "e1000"), "")

    def test_guest_script_runs_in_sh(self):
        """The script itself: a failing workload's status is the boot's, the
        markers frame each device (run with /bin/sh, /dev/console replaced)."""
        text = GOOD.replace('workload = "dd if=/dev/vda of=/dev/null bs=4k count=1"',
                            'workload = "say hello; false"')
        cat = parse(text)
        with tempfile.TemporaryDirectory() as tmp:
            insts = catalogue.place(cat.select(["virtio-blk", "e1000"]), Path(tmp))
            out = Path(tmp) / "console"
            script = catalogue.guest_script(cat.helpers, insts).replace("/dev/console", str(out))
            script = script.replace("arping -c 1 -I eth0 10.0.0.2", "true")
            rc = subprocess.run(["sh", "-c", script], capture_output=True).returncode
            log = out.read_text()
        self.assertEqual(rc, 1)
        self.assertIn("hello", log)
        self.assertEqual(catalogue.workload_status(log), {"virtio-blk": 1, "e1000": 0})


class Planning(unittest.TestCase):
    def test_skip_reasons(self):
        cat = parse(GOOD)
        run, skipped = sweep.plan(cat.devices, {"e1000": "CONFIG_E1000 not in this kernel's Kconfig"},
                                  {"virtio-blk-pci", "e1000"}, {"CONFIG_VIRTIO_BLK=m"})
        self.assertEqual([d.name for d in run], ["virtio-blk"])
        why = {s.device: s.reason for s in skipped}
        self.assertIn("not in this kernel's Kconfig", why["e1000"])
        self.assertIn("userspace", why["usb-mtp"])
        run, skipped = sweep.plan(cat.devices, {}, {"e1000"}, {"CONFIG_E1000=y"})
        why = {s.device: s.reason for s in skipped}
        self.assertEqual(run, [])
        self.assertIn("this QEMU has no virtio-blk-pci", why["virtio-blk"])
        self.assertIn("CONFIG_E1000=m did not stick", why["e1000"])

    def test_device_fragment_leaves_out_absent_symbols(self):
        cat = parse(GOOD)
        with tempfile.TemporaryDirectory() as tmp:
            (Path(tmp) / "drivers").mkdir()
            (Path(tmp) / "drivers" / "Kconfig").write_text(
                "config VIRTIO_BLK\n\ttristate \"virtio block\"\n")
            text, absent = sweep.device_fragment(cat.devices, Path(tmp))
        self.assertIn("CONFIG_VIRTIO_BLK=m", text.splitlines())
        self.assertNotIn("CONFIG_E1000=m", text)
        self.assertEqual(list(absent), ["e1000"])
        self.assertIn("CONFIG_E1000", absent["e1000"])


class Transport(unittest.TestCase):
    def test_driver_frame_skips_transports(self):
        stack = ["dma_map_page_attrs", "vring_map_one_sg", "virtqueue_add_sgs", "virtblk_add_req",
                 "virtio_queue_rq", "blk_mq_dispatch_rq_list"]
        self.assertEqual(frames.dma_site_frame(stack), "virtblk_add_req")
        stack = ["usb_hcd_map_urb_for_dma", "usb_hcd_submit_urb", "usb_start_wait_urb",
                 "usb_control_msg", "usb_get_string", "usb_string_sub", "usb_string"]
        self.assertEqual(frames.dma_site_frame(stack), "usb_string")
        self.assertFalse(frames.is_transport("virtio_queue_rq"))   # virtio_blk's own
        self.assertTrue(frames.is_transport("blk_mq_dispatch_rq_list"))


def _runs(*devices):
    return [NS(device=d, console=KUNIT_LOG) for d in devices]


class Folding(unittest.TestCase):
    def test_sites_deduped_across_boots(self):
        t = sweeptable.fold(_runs("a", "b"))
        keys = [s.key for s in t.sites]
        self.assertEqual(len(keys), len(set(keys)))
        for s in t.sites:
            self.assertEqual(s.devices, ["a", "b"])
            self.assertEqual(s.boots, 2)
            self.assertTrue(s.excerpt and s.stack and s.console, s.key)
        self.assertEqual(len(t.sites), len(sweeptable.fold(_runs("a")).sites))

    def test_dma_owned_marks_its_mapping_site_first(self):
        t = sweeptable.fold(_runs("a", "b"))
        first = t.sites[0]
        self.assertEqual(first.frame, "cl_map")
        self.assertEqual(first.caller, "cl_owned_neighbour_write_reported")
        self.assertEqual((first.facts.cache, first.facts.offset, first.facts.length,
                          first.facts.direction), ("kmalloc-32", 8, 16, "DMA_FROM_DEVICE"))
        self.assertEqual(first.owned, ["KASAN: dma-owned Write in cl_owned_neighbour_write_reported"])
        self.assertEqual(first.owned_boots, 2)
        self.assertFalse([s for s in t.sites[1:] if s.owned])
        # the evidence says whether the CPU wrote or read the device's bytes
        self.assertIn("[DMA-OWNED WRITE]  real on arm, mips, powerpc32",
                      sweeptable.format_text(t, details=False).splitlines()[0])
        self.assertEqual(first.to_json()["dma_owned_access"], "write")

    def test_dma_owned_report_with_a_device_name_marks_its_site(self):
        log = KUNIT_LOG.with_name("real-6.12-sweep-virtio-rng.log")
        t = sweeptable.fold([NS(device="virtio-rng", console=log)])
        owned = [s for s in t.sites if s.owned]
        self.assertEqual(len(owned), 1, [s.key for s in t.sites])
        s = owned[0]
        self.assertEqual((s.frame, s.facts.cache, s.facts.offset, s.facts.length),
                         ("request_entropy", "kmalloc-512", 272, 64))
        self.assertEqual(s.owned, ["KASAN: dma-owned Read in virtio_read"])
        self.assertFalse([x for x in t.other if "owns this byte" in x], t.other)

    def test_a_site_seen_only_through_its_dma_owned_report_carries_its_evidence(self):
        # 7.3's virtio_scsi maps its events with DMA_ATTR_DEBUGGING_IGNORE_CACHELINES:
        # no sharing report, only the CPU writing event_vq's lock in the line
        log = KUNIT_LOG.with_name("real-7.3-sweep-virtio-scsi.log")
        t = sweeptable.fold([NS(device="virtio-scsi", console=log)], version="7.3")
        s = t.sites[0]
        self.assertEqual(s.key, "virtscsi_kick_event sharing kmalloc-4k+2136:16 DMA_FROM_DEVICE")
        self.assertEqual(s.owned, ["KASAN: dma-owned Write in virtscsi_kick_event"])
        self.assertEqual((s.boots, s.owned_boots, s.devices), (1, 1, ["virtio-scsi"]))
        # the owned report's mapping stack, its place in the console, its caller
        self.assertIn("virtscsi_kick_event", s.stack)
        self.assertEqual(s.caller, "virtscsi_probe")
        self.assertEqual(s.console, str(log))
        self.assertTrue(s.first_line > 0 and s.excerpt)
        self.assertEqual([x.verdict for x in s.exposure() if x.arch in ("arm", "arm64")],
                         ["bounced", "corrupts"])

    def test_every_site_says_where_it_corrupts(self):
        # virtio-rng's 64-byte buffer at offset 272 of a kmalloc-512 object: shares its
        # 128-byte model line; in place on arm64 (kmalloc size 64, a whole line) and
        # sharing its 64-byte line there only if the object's data sits beside it
        log = KUNIT_LOG.with_name("real-6.12-sweep-virtio-rng.log")
        t = sweeptable.fold([NS(device="virtio-rng", console=log)], version="6.12")
        (s,) = [s for s in t.sites if s.owned]
        j = s.to_json()
        self.assertEqual([r["arch"] for r in j["exposure"]],
                         ["x86_64", "arm64", "riscv", "arm", "mips", "powerpc32"])
        self.assertEqual(j["exposure"][0]["verdict"], "coherent")
        self.assertTrue(j["exposure_summary"])
        text = sweeptable.format_text(t)
        self.assertIn("   exposure: " + j["exposure_summary"], text)
        # a site whose layout (from enrichment) carries the line prints it once
        s.layout = layout.Layout(s.facts, note="x", exposure_summary=j["exposure_summary"])
        self.assertEqual(sweeptable.format_text(t).count(j["exposure_summary"]), 1)
        # the kunit sites' 16-byte buffers: bounced on arm64 since 6.5, not on 6.1
        k = sweeptable.fold(_runs("a"), version="7.3").sites[0].exposure()
        self.assertEqual({v.arch: v.verdict for v in k}["arm64"], "bounced")
        k = sweeptable.fold(_runs("a"), version="6.1").sites[0].exposure()
        self.assertEqual({v.arch: v.verdict for v in k}["arm64"], "corrupts")

    def test_overflow_is_its_own_rule(self):
        t = sweeptable.fold(_runs("a"))
        self.assertTrue([s for s in t.sites if s.rule == "overflow"])
        self.assertTrue([s for s in t.sites if s.rule == "sharing"])

    def test_missing_console_is_no_site(self):
        t = sweeptable.fold([NS(device="x", console=None), NS(device="y", console="/nonexistent")])
        self.assertEqual(t.sites, [])


SYNTH = [NS(device="usb-a", console=KUNIT_LOG.with_name("synthetic-7.3-usb-sweep-a.log")),
         NS(device="usb-b", console=KUNIT_LOG.with_name("synthetic-7.3-usb-sweep-b.log"))]


class Triage(unittest.TestCase):
    """Issue #41 on the synthetic USB sweep consoles (tests/fixtures/sweep/README.md):
    10 rows, all 'corrupts on arm, mips, powerpc32' before; 4 sites after."""

    def test_rows_of_one_buffer_fold(self):
        t = sweeptable.fold(SYNTH, version="7.3")
        self.assertEqual(len(t.sites), 4)
        ring = t.sites[0]
        # rtl_usb's usb_data[] of u32 slots, mapped 1, 2 or 4 bytes at a time
        self.assertEqual(ring.key, "_usbctrl_vendorreq_sync sharing kmalloc-512+4n:* DMA_FROM_DEVICE")
        j = ring.to_json()["folded"]
        self.assertEqual((j["rows"], j["offsets"], j["lengths"]),
                         (6, [0, 4, 8, 12, 132, 388], [1, 2, 4]))
        # one buffer whose offset moved with the device's configuration
        (cfg,) = [s for s in t.sites if s.frame == "synth_cfg_read"]
        self.assertEqual(cfg.key, "synth_cfg_read sharing kmalloc-128+*:8 DMA_FROM_DEVICE")
        self.assertEqual((cfg.devices, cfg.boots), (["usb-a", "usb-b"], 2))
        # the same offsets in one boot are two buffers, not one that moved
        with tempfile.TemporaryDirectory() as d:
            both = Path(d) / "console.log"
            both.write_text(SYNTH[0].console.read_text() + SYNTH[1].console.read_text())
            one = sweeptable.fold([NS(device="usb-ab", console=both)], version="7.3")
        self.assertEqual(len([s for s in one.sites if s.frame == "synth_cfg_read"]), 2)

    def test_verdicts_and_ranking(self):
        t = sweeptable.fold(SYNTH, version="7.3")
        by = {s.frame: s for s in t.sites}
        self.assertEqual(by["synth_devm_get_status"].status(), "x86 layout only")
        self.assertEqual(by["_usbctrl_vendorreq_sync"].status(), "real on arm, mips, powerpc32")
        # usb_string's buffer is its kmalloc(256) alone once the layout says so
        s = by["usb_string"]
        self.assertEqual(s.status(), "real on arm64, riscv, arm, mips, powerpc32")
        s.layout = layout.Layout(s.facts, note="a plain buffer: no structure in "
                                 "drivers/usb/core/message.c has a member that is exactly it")
        self.assertEqual(s.status(), "x86 layout only")
        self.assertEqual(s.to_json()["placement"]["dedicated"], True)
        self.assertEqual(s.to_json()["status"], "x86 layout only")
        # real sites first, the rest after
        ranked = sweeptable.rank(t.sites)
        self.assertEqual([x.frame for x in ranked][-2:], ["synth_devm_get_status", "usb_string"])
        text = sweeptable.format_text(sweeptable.Table(ranked, {}), details=False)
        self.assertIn("6 rows of one buffer folded: offsets 0, 4, 8, 12, 132, 388", text)

    def test_writes_before_reads(self):
        rng = sweeptable.fold([NS(device="rng", console=KUNIT_LOG.with_name(
            "real-6.12-sweep-virtio-rng.log"))], version="6.12").sites[0]
        k = sweeptable.fold(_runs("a"), version="6.12").sites[0]
        self.assertEqual((rng.access, k.access), ("read", "write"))
        self.assertEqual([x.frame for x in sweeptable.rank([rng, k])], ["cl_map", "request_entropy"])


class Baseline(unittest.TestCase):
    def payload(self, devices):
        t = sweeptable.fold(_runs(*devices))
        return {"version": 1, "command": "sweep", **t.to_json()}

    def test_diff(self):
        new = self.payload(["a"])
        old = json.loads(json.dumps(new))
        gone = old["sites"].pop(0)
        old["sites"].append({**gone, "key": "something_else sharing kmalloc-8+0:1 DMA_TO_DEVICE"})
        d = sweeptable.diff(old["sites"], new["sites"])
        self.assertEqual([s["key"] for s in d.new], [gone["key"]])
        self.assertEqual([s["key"] for s in d.gone],
                         ["something_else sharing kmalloc-8+0:1 DMA_TO_DEVICE"])
        self.assertEqual(len(d.unchanged), len(new["sites"]) - 1)
        self.assertTrue(d.differs)
        self.assertFalse(sweeptable.diff(new["sites"], new["sites"]).differs)
        self.assertIn("1 new, 1 gone", d.format_text())

    def test_load_sites(self):
        with tempfile.TemporaryDirectory() as tmp:
            p = Path(tmp) / "s.json"
            p.write_text(json.dumps(self.payload(["a"])))
            self.assertTrue(sweeptable.load_sites(p))
            p.write_text("{")
            with self.assertRaisesRegex(InputError, "not JSON"):
                sweeptable.load_sites(p)
            p.write_text(json.dumps({"version": 1, "command": "run"}))
            with self.assertRaisesRegex(InputError, "not the JSON of a sweep"):
                sweeptable.load_sites(p)
            p.write_text(json.dumps({"version": 9, "command": "sweep", "sites": []}))
            with self.assertRaisesRegex(InputError, "JSON version 9"):
                sweeptable.load_sites(p)
        with self.assertRaisesRegex(InputError, "the baseline .*: no such file"):
            sweeptable.load_sites(Path("/nonexistent.json"))


if __name__ == "__main__":
    unittest.main()
