"""A real site's structure laid out by the real arm compiler (issue #41).

The 7.3.4 sweep's virtio-scsi site: KASAN's dma-owned report on the
event buffer events[3] at offset 2136 of a kmalloc-4k object, struct
virtio_scsi in struct Scsi_Host's hostdata[] (the recorded console in
tests/fixtures/sweep/).  harness.kernel.crossbuild compiles
drivers/scsi/virtio_scsi.c of linux-source-7.3 with arm-linux-gnueabihf-gcc
in a prepared O= folder under the cache (the pristine tree is never
written), on the configuration of the harness's fragments with the
driver's Kconfig symbol and its dependencies added by crossbuild itself.
x86_64's side is the host gcc's pahole output of the same file of the same
tree, recorded (tests/fixtures/layout/): its layout must put events[3]
where the sweep's kernel did; arm's, with 4-byte pointers and longs in
Scsi_Host and in the event nodes before it, somewhere else, and exposure
must judge arm on it.

Cold (no cross folder yet, the tree already unpacked by the 7.3 builds)
this is allnoconfig (twice: the first leaves virtio-scsi without a virtio
transport on arm) + prepare + one compile, about 25 s; warm, no compile at
all (the pahole output is kept by key).  Needs gcc-arm-linux-gnueabihf
and pahole (`make deps-test`)."""

import shutil
import time
import unittest
from pathlib import Path

from harness.kernel import crossbuild, fragments, kbuild
from harness.progress import Progress
from harness.reports import archlayout, exposure, layout
from harness.reports.structs import parse_pahole

ROOT = Path(__file__).resolve().parents[2]
SRC = "drivers/scsi/virtio_scsi.c"
RECORDED_IN = Path("/root/.cache/dmaharness/src/linux-7.3.4-1~bpo13+1")   # the fixture's tree
FIXTURES = ROOT / "tests" / "fixtures"
SWEEP_LOG = FIXTURES / "sweep" / "real-7.3-sweep-virtio-scsi.log"


def base_config() -> str:
    """The options the harness's fragments ask for (what every variant has)."""
    opts = fragments.requested(fragments.default_fragments())
    return "".join(f"# {o} is not set\n" if v == "n" else f"{o}={v}\n"
                   for o, (v, _) in opts.items())


class CrossLayout(unittest.TestCase):
    def setUp(self):
        for tool, pkg in (("arm-linux-gnueabihf-gcc", "gcc-arm-linux-gnueabihf"),
                          ("pahole", "dwarves")):
            if shutil.which(tool) is None:
                self.skipTest(f"{tool} is not installed ({pkg}: make deps-test)")

    def test_virtio_scsi_events_on_arm(self):
        tree = kbuild.pristine_tree(kbuild.find_source("7.3"), Progress(quiet=True))
        base = base_config()
        # x86_64's side as the host's gcc gave it for the same file of the
        # same tree (recorded: a second prepare would double the test's time)
        x86 = parse_pahole((FIXTURES / "layout" / "pahole-I-virtio_scsi-7.3-x86_64.txt")
                           .read_text())
        x86_gcc = "gcc 12.2.0"
        t0 = time.monotonic()
        arm, arm_gcc = archlayout.arch_structs(crossbuild.Request(tree, "arm", SRC, base),
                                               Progress())
        took = time.monotonic() - t0
        self.assertTrue(arm_gcc.startswith("arm-linux-gnueabihf-gcc "), arm_gcc)
        self.assertFalse((tree / ".config").exists(), "the tree was written")

        # pointers and longs: 8 bytes on x86_64, 4 on arm
        node = {m.name: m for m in arm["virtio_scsi_event_node"].members}
        self.assertEqual((node["vscsi"].size, node["event"].offset), (4, 4))
        node = {m.name: m for m in x86["virtio_scsi_event_node"].members}
        self.assertEqual((node["vscsi"].size, node["event"].offset), (8, 8))
        self.assertLess(arm["Scsi_Host"].size, x86["Scsi_Host"].size)

        # the sweep's report, placed on x86_64 as the sweep's kernel placed it
        facts = layout.parse_facts(SWEEP_LOG.read_text().splitlines()[308])
        self.assertEqual((facts.offset, facts.length), (2136, 16))
        # the site's structures only: which of every structure of the object
        # the finder picks is tests/unit/reports/test_layout.py's business
        # (here task_struct fits the 16 bytes at 2136 of a 4k object too)
        x86 = {k: v for k, v in archlayout._tree_relative(x86, RECORDED_IN).items()
               if k == "Scsi_Host" or k.startswith("virtio_scsi")}
        cand, best = layout.choose(x86, facts, SRC, (tree / SRC).read_text())
        self.assertIsNotNone(cand, [c.struct.name for c in best])
        lay = layout.build_layout(facts, cand, x86, source=SRC, tool="pahole", others=best)
        self.assertEqual((lay.struct, lay.path, lay.element),
                         ("Scsi_Host+virtio_scsi", ["hostdata", "events[8]"], 3))

        al = archlayout.map_layout(lay, arm, "arm", arm_gcc)
        self.assertIsInstance(al, archlayout.ArchLayout, al)
        hostdata = arm["Scsi_Host"].members[-1].offset
        events = next(m for m in arm["virtio_scsi"].members if m.name == "events[8]").offset
        self.assertEqual(al.offset, hostdata + events + 3 * 16)
        self.assertNotEqual(al.offset, facts.offset)
        self.assertLess(al.offset, facts.offset)

        lay.arch_layouts = {"arm": al}
        v = next(v for v in exposure.assess(facts, "7.3", lay=lay) if v.arch == "arm")
        self.assertIn(f"layout from {arm_gcc}", v.why)
        print(f"\n  cross layouts in {took:.1f}s: events[3] at {facts.offset} on x86_64 "
              f"({x86_gcc}), {al.offset} on arm; arm: {v.verdict}: {v.why}")


if __name__ == "__main__":
    unittest.main()
