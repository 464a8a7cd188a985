"""harness/reports/archlayout.py and its use by harness/reports/exposure.py:
the x86_64 layout's member found again in arm's layout (recorded pahole
output of linux-source-7.3's virtio_scsi.c from both compilers), the facts
and verdicts that follow, and what is said where no arm layout exists."""

import os
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from harness.kernel import crossbuild
from harness.reports import archlayout, exposure, layout
from harness.reports.structs import parse_pahole

FIX = Path(__file__).resolve().parents[2] / "fixtures"
ARM_GCC = "arm-linux-gnueabihf-gcc 12.2.0"
SRC = "drivers/scsi/virtio_scsi.c"
TREE = Path("/root/.cache/dmaharness/src/linux-7.3.4-1~bpo13+1")    # where they were recorded


def structs(name):
    return parse_pahole((FIX / "layout" / name).read_text())


def sweep_line(n):
    """A line of the recorded 7.3.4 sweep console (virtio-scsi)."""
    return (FIX / "sweep" / "real-7.3-sweep-virtio-scsi.log").read_text().splitlines()[n - 1]


# the real site: KASAN dma-owned on events[3] (2136) of struct virtio_scsi in
# Scsi_Host's hostdata[], the CPU at event_vq (2072)
OWNED = layout.parse_facts(sweep_line(309))


def x86_layout(f=OWNED):
    st = structs("pahole-I-virtio_scsi-7.3-x86_64.txt")
    st = archlayout._tree_relative(st, TREE)
    cand, best = layout.choose(st, f, SRC)
    assert cand is not None, best
    return layout.build_layout(f, cand, st, source=SRC, tool="pahole", others=best)


def arm_layout(lay):
    return archlayout.map_layout(lay, structs("pahole-I-virtio_scsi-7.3-arm.txt"), "arm", ARM_GCC)


class Mapping(unittest.TestCase):
    def test_the_x86_layout_records_the_member_path(self):
        lay = x86_layout()
        self.assertEqual(lay.struct, "Scsi_Host+virtio_scsi")
        self.assertEqual(lay.path, ["hostdata", "events[8]"])
        self.assertEqual((lay.element, lay.path_offset), (3, 2088))

    def test_events_move_on_arm(self):
        al = arm_layout(x86_layout())
        self.assertIsInstance(al, archlayout.ArchLayout)
        # Scsi_Host is 1000 bytes on arm (1624 on x86_64), struct virtio_scsi's
        # events group 256 into it (464): events[3] at 1000 + 256 + 3 * 16
        self.assertEqual((al.offset, al.length, al.size), (1304, 16, 1384))
        self.assertNotEqual(al.offset, OWNED.offset)
        self.assertEqual(al.buffer, "events[3] of events[8]")
        self.assertTrue(al.flexible)          # req_vqs[] follows
        self.assertEqual(al.to_json()["compiler"], ARM_GCC)

    def test_facts_on_arm_lines(self):
        al = arm_layout(x86_layout())
        f = al.facts(OWNED, 64)
        # line 1280..1343: events[1..2] before, events[4..5] after
        self.assertEqual((f.offset, f.before, f.after, f.object_size, f.cache),
                         (1304, 24, 24, 2048, "kmalloc-2k"))
        self.assertIn("events[4..5] (1320..1351)", al.neighbours(f))
        # events[0] at 1256 shares its 64-byte line with event_vq (1232..1239)
        lay0 = x86_layout(layout.DmaFacts("sharing", 2088, 16, 4096, "kmalloc-4k", 128))
        al0 = arm_layout(lay0)
        f0 = al0.facts(lay0.facts, 64)
        self.assertEqual((f0.offset, f0.before), (1256, 40))
        self.assertTrue(any(n.startswith("event_vq") for n in al0.neighbours(f0)))

    def test_a_structure_missing_there_is_a_reason(self):
        st = structs("pahole-I-virtio_scsi-7.3-arm.txt")
        del st["virtio_scsi"]
        self.assertEqual(archlayout.map_layout(x86_layout(), st, "arm", ARM_GCC),
                         "struct virtio_scsi is not in the object")
        self.assertEqual(archlayout.map_layout(layout.Layout(OWNED), st, "arm", ARM_GCC),
                         "no structure member holds the buffer on x86_64")

    def test_anonymous_union_on_the_path(self):
        # uvc_status's control block lies in an anonymous union
        f = layout.DmaFacts("sharing", 3, 13, 16, "kmalloc-16", 128, 3, 0)
        st = archlayout._tree_relative(structs("pahole-I-uvc_status-7.3-x86_64.txt"), TREE)
        cand, best = layout.choose(st, f, "drivers/media/usb/uvc/uvc_driver.c")
        lay = layout.build_layout(f, cand, st, others=best)
        self.assertEqual(lay.path, ["<union#0>", "control"])
        al = archlayout.map_layout(lay, structs("pahole-I-uvc_status-7.3-arm.txt"), "arm",
                                   ARM_GCC)
        self.assertEqual((al.offset, al.length, al.buffer), (3, 13, "control"))

    def test_declaration_files_made_tree_relative(self):
        st = structs("pahole-I-virtio_scsi-7.3-arm.txt")
        self.assertTrue(st["virtio_scsi"].decl_file.startswith("/root/.cache/"))
        st = archlayout._tree_relative(st, Path("/root/.cache/dmaharness/src/"
                                                "linux-7.3.4-1~bpo13+1"))
        self.assertEqual(st["virtio_scsi"].decl_file, SRC)
        self.assertEqual(st["Scsi_Host"].decl_file, "include/scsi/scsi_host.h")


class Verdicts(unittest.TestCase):
    def verdicts(self, arch_layouts):
        lay = x86_layout()
        lay.arch_layouts = arch_layouts
        return {v.arch: v for v in exposure.assess(OWNED, "7.3", lay=lay)}

    def test_arm_judged_on_its_own_layout_and_says_so(self):
        lay = x86_layout()
        v = self.verdicts({"arm": arm_layout(lay)})["arm"]
        self.assertEqual(v.verdict, exposure.CORRUPTS)
        self.assertIn("24 bytes before and 24 after it share its 64-byte lines", v.why)
        self.assertIn(f"layout from {ARM_GCC}: events[3] of events[8] at 1304..1319", v.why)

    def test_without_a_cross_layout_x86_is_assumed_and_said(self):
        vs = self.verdicts({"mips": "gcc-mips-linux-gnu is not installed"})
        self.assertIn("x86_64 layout assumed: gcc-mips-linux-gnu is not installed",
                      vs["mips"].why)
        self.assertIn("x86_64 layout assumed: no powerpc32 layout computed", vs["powerpc32"].why)
        self.assertEqual(vs["x86_64"].why, "DMA is cache-coherent")

    def test_arm_numbers_not_the_reports(self):
        # facts that say events[0] shares nothing (not the real report's):
        # judged on them where x86's layout is assumed, on arm's own
        # layout (events[0] at 1256, event_vq in its line) on arm
        f = layout.DmaFacts("sharing", 2088, 16, 4096, "kmalloc-4k", 128, 0, 0,
                            "DMA_FROM_DEVICE")
        lay = x86_layout(f)
        lay.arch_layouts = {"arm": arm_layout(lay)}
        vs = {v.arch: v for v in exposure.assess(f, "7.3", lay=lay)}
        self.assertEqual(vs["mips"].verdict, exposure.OWN_LINES, vs["mips"].why)
        self.assertEqual(vs["arm"].verdict, exposure.CORRUPTS, vs["arm"].why)
        self.assertIn("40 bytes before and 8 after", vs["arm"].why)
        self.assertIn("event_vq", vs["arm"].why)

    def test_layout_json_carries_them(self):
        lay = x86_layout()
        lay.arch_layouts = {"arm": arm_layout(lay), "mips": "no compiler"}
        j = lay.to_json()["arch_layouts"]
        self.assertEqual(j["arm"]["offset"], 1304)
        self.assertEqual(j["mips"], {"arch": "mips", "unavailable": "no compiler"})


class Selection(unittest.TestCase):
    def test_env(self):
        self.assertEqual(archlayout.selected({}), ["arm", "arm64", "mips", "powerpc32", "riscv"])
        self.assertEqual(archlayout.selected({archlayout.ENV: "none"}), [])
        self.assertEqual(archlayout.selected({archlayout.ENV: "mips, arm,nope"}), ["mips", "arm"])

    def test_for_layout_names_the_missing_package(self):
        with mock.patch.object(crossbuild.shutil, "which", return_value=None):
            out = archlayout.for_layout(x86_layout(), FIX, arches=["arm"])
        self.assertEqual(out, {"arm": "the kernel tree is gone (dmaharness cache prune)"})
        with tempfile.TemporaryDirectory() as d:
            (Path(d) / "drivers/scsi").mkdir(parents=True)
            (Path(d) / SRC).write_text("")
            with mock.patch.object(crossbuild.shutil, "which", return_value=None):
                out = archlayout.for_layout(x86_layout(), Path(d), arches=["arm", "powerpc32"])
        self.assertEqual(out, {"arm": "gcc-arm-linux-gnueabihf is not installed",
                               "powerpc32": "gcc-powerpc-linux-gnu is not installed"})
        self.assertEqual(archlayout.for_layout(layout.Layout(OWNED), Path("/")), {})


class Cache(unittest.TestCase):
    def test_pahole_output_is_kept_by_key(self):
        text = (FIX / "layout" / "pahole-I-virtio_scsi-7.3-arm.txt").read_text()
        with tempfile.TemporaryDirectory() as d:
            tree = Path(d) / "tree"
            (tree / "drivers/scsi").mkdir(parents=True)
            (tree / SRC).write_text("int x;\n")
            req = crossbuild.Request(tree, "arm", SRC)
            with mock.patch.dict(os.environ, {"DMAHARNESS_CACHE": str(Path(d) / "cache")}), \
                    mock.patch.object(crossbuild, "compiler",
                                      return_value="arm-linux-gnueabihf-gcc (Debian) 12.2.0"), \
                    mock.patch.object(crossbuild, "compile_debug",
                                      return_value=Path("/x.o")) as comp, \
                    mock.patch.object(archlayout, "pahole_text", return_value=text):
                archlayout._MEMO.clear()
                st, name = archlayout.arch_structs(req)
                archlayout._MEMO.clear()
                st2, _ = archlayout.arch_structs(req)       # from the file: no compile
                self.assertEqual(comp.call_count, 1)
                self.assertEqual(name, "arm-linux-gnueabihf-gcc 12.2.0")
                self.assertEqual(st2["virtio_scsi"].size, 384)
                (tree / "drivers/scsi/virtio_scsi.h").write_text("/* a header */\n")
                archlayout._MEMO.clear()
                archlayout.arch_structs(req)                 # its folder's header changed
                self.assertEqual(comp.call_count, 2)
            archlayout._MEMO.clear()


if __name__ == "__main__":
    unittest.main()
