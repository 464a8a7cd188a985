"""harness/reports/allocrules.py: one test per rule, each citing the lines of
linux-source-7.3 (Debian's 7.3.4-1~bpo13+1, read for this test) it models;
and the read/write mark of a dma-owned report (issue #41)."""

import unittest

from harness.reports import allocrules, exposure, layout, structs


def facts(offset, length, size, cache=None, before=0, after=0, direction="DMA_FROM_DEVICE"):
    return layout.parse_facts(
        "DMA-API: x: device driver maps a buffer that shares a cache line with other data of "
        f"its object [object offset={offset}] [object size={size}] "
        f"[cache={cache or f'kmalloc-{size}'}] [buffer size={length}] "
        f"[shared bytes before={before} after={after}] [line size=128] [{direction}]")


def verdicts(f, version="7.3", **kw):
    return {v.arch: v for v in exposure.assess(f, version, **kw)}


PLAIN = "a plain buffer: no structure in drivers/usb/core/message.c has a member that is " \
        "exactly the buffer (2 merely fit a kmalloc-256 object)"

# pahole of a driver structure with a 7.x DMA group, as the detector's build
# lays it out on x86 (patch 0005: ____dma_from_device_aligned is 128 there)
GROUP_PAHOLE = """struct foo_dev {
	struct completion          done;                 /*     0    32 */
	unsigned int               state;                /*    32     4 */

	/* XXX 92 bytes hole, try to pack */

	__u8                       __cacheline_group_begin__bufs[0]; /*   128     0 */
	u8                         req[16];              /*   128    16 */
	u8                         resp[40];             /*   144    40 */

	/* XXX 72 bytes hole, try to pack */

	__u8                       __cacheline_group_end__bufs[0]; /*   256     0 */

	/* size: 256, cachelines: 4, members: 6 */
};
"""


class Devres(unittest.TestCase):
    """drivers/base/devres.c:19-30 (7.3): struct devres { struct devres_node node;
    dr_release_t release; u8 __aligned(ARCH_DMA_MINALIGN) data[]; }, with
    drivers/base/base.h:224-230 struct devres_node (five words): data at 56 on
    x86_64, on a line of its own where ARCH_DMA_MINALIGN is the line or more;
    devres.c:104-116 check_dr_size() rounds the allocation up to its kmalloc
    size (kmalloc_size_roundup)."""

    def test_devm_kmalloc_data_owns_its_lines(self):
        f = facts(56, 8, 64, before=56, after=0)       # devm_kmalloc(dev, 8): kmalloc-64
        v = verdicts(f)
        for arch in ("arm", "mips", "powerpc32"):
            self.assertEqual((v[arch].verdict, v[arch].rule), ("own-lines", "devres"), arch)
        self.assertIn("devres data is ARCH_DMA_MINALIGN (64) aligned on arm", v["arm"].why)
        self.assertEqual(v["x86_64"].verdict, "coherent")
        self.assertEqual(v["arm64"].verdict, "bounced")      # 8 bytes: bounced first
        self.assertEqual(exposure.status(list(v.values())), "x86 layout only")

    def test_6_1_data_starts_at_40(self):
        # 6.1's drivers/base/devres.c:19-36: devres_node of four words, data
        # __aligned(ARCH_KMALLOC_MINALIGN): at 40 on x86_64
        self.assertEqual(verdicts(facts(40, 24, 64, before=40), "6.1")["arm"].rule, "devres")
        self.assertIsNone(verdicts(facts(56, 8, 64, before=56), "6.1")["arm"].rule)

    def test_more_data_after_the_buffer_still_counts(self):
        # 56 + 4 fits kmalloc-64, the object is kmalloc-96: the data holds more
        # than the buffer; the header is out of its lines, what follows is not
        f = facts(56, 4, 96, before=56, after=36)
        v = verdicts(f)["arm"]
        self.assertEqual(v.verdict, "corrupts")
        self.assertIn("0 bytes before", v.why)
        self.assertIn("devres data", v.why)

    def test_allocation_stack_decides(self):
        f = facts(56, 8, 64, before=56)
        not_devres = ["kasan_save_stack", "__kmalloc_noprof", "foo_probe"]
        self.assertEqual(verdicts(f, alloc_stack=not_devres)["arm"].verdict, "corrupts")
        devres = ["kasan_save_stack", "__kmalloc_node_track_caller_noprof",
                  "devm_kmalloc+0x5a/0x120", "foo_probe"]
        self.assertEqual(verdicts(f, alloc_stack=devres)["arm"].rule, "devres")
        # a structure of the driver found at the offset: not devres data
        lay = layout.Layout(f, struct="foo", buffer="buf[8]")
        self.assertEqual(verdicts(f, lay=lay)["arm"].verdict, "corrupts")


class Dedicated(unittest.TestCase):
    """include/linux/slab.h:616-617 (7.3): ARCH_KMALLOC_MINALIGN is
    ARCH_DMA_MINALIGN when that is above 8 (arm, mips, powerpc32);
    slab.h:1007-1010: kmalloc() of a power-of-two size is aligned to the
    size, of another size to its largest power-of-two divisor;
    arch/arm64/include/asm/cache.h:36 ARCH_KMALLOC_MINALIGN (8)."""

    def test_usb_string_owns_its_object(self):
        # drivers/usb/core/message.c usb_string(): kmalloc(256), 255 bytes mapped
        f = facts(0, 255, 256, before=0, after=1)
        self.assertEqual(verdicts(f)["arm"].verdict, "corrupts")        # no evidence
        v = verdicts(f, lay=layout.Layout(f, note=PLAIN))
        for arch in ("arm64", "riscv", "arm", "mips", "powerpc32"):
            self.assertEqual((v[arch].verdict, v[arch].rule), ("own-lines", "dedicated"), arch)
        self.assertIn("a dedicated kmalloc object, 256-byte aligned on arm", v["arm"].why)

    def test_a_struct_is_not_dedicated(self):
        f = facts(0, 255, 256, before=0, after=1)
        lay = layout.Layout(f, struct="foo", buffer="buf[255]")
        self.assertEqual(verdicts(f, lay=lay)["arm"].verdict, "corrupts")

    def test_kmalloc_96_is_only_32_aligned_on_arm64(self):
        # 60 bytes: kmalloc size 64, a whole arm64 line, so mapped in place
        f = facts(0, 60, 96, before=0, after=24)
        v = verdicts(f, lay=layout.Layout(f, note=PLAIN))
        self.assertEqual(v["arm"].rule, "dedicated")          # ARCH_KMALLOC_MINALIGN 64
        self.assertEqual(v["arm64"].verdict, "corrupts")      # 8, and 96 = 32 x 3
        self.assertEqual(verdicts(f, "6.1", lay=layout.Layout(f, note=PLAIN))["arm64"].rule,
                         "dedicated")                         # 128 before 6.5


class Group(unittest.TestCase):
    """include/linux/dma-mapping.h:740-749 (7.3): __dma_from_device_group_begin(G)
    is __cacheline_group_begin(G) ____dma_from_device_aligned, that is
    __aligned(ARCH_DMA_MINALIGN) with ARCH_HAS_DMA_MINALIGN;
    include/linux/cache.h:108-114: the zero-length members
    __cacheline_group_begin__G[0] and __cacheline_group_end__G[0]."""

    def layout(self, f):
        st = structs.parse_pahole(GROUP_PAHOLE)
        cand, best = layout.choose(st, f)
        return layout.build_layout(f, cand, st, others=best)

    def test_a_member_of_a_group_owns_the_groups_lines(self):
        f = facts(144, 40, 256, before=16, after=72)
        lay = self.layout(f)
        self.assertEqual((lay.struct, lay.buffer, lay.group), ("foo_dev", "resp[40]", "bufs"))
        v = verdicts(f, lay=lay)
        for arch in ("arm64", "riscv", "arm", "mips", "powerpc32"):
            self.assertEqual((v[arch].verdict, v[arch].rule), ("own-lines", "group"), arch)
        self.assertIn("the DMA group bufs is ARCH_DMA_MINALIGN (128) aligned on arm64", v["arm64"].why)
        self.assertEqual(lay.to_json()["group"], "bufs")

    def test_outside_the_group_or_in_a_containers_tail(self):
        f = facts(32, 4, 256, before=32, after=92)
        self.assertIsNone(self.layout(f).group)
        g = facts(144, 40, 256, before=16, after=72)
        lay = self.layout(g)
        lay.struct = "Scsi_Host+foo_dev"      # hostdata[] is only unsigned long aligned
        self.assertEqual(verdicts(g, lay=lay)["arm"].verdict, "corrupts")


class Coherent(unittest.TestCase):
    """kernel/dma/mapping.c:633 dma_alloc_attrs(), mm/dmapool.c:407
    dma_pool_alloc() (7.3): coherent memory, never a streaming mapping."""

    def test_coherent_allocation(self):
        f = facts(8, 16, 64, before=8, after=40)
        v = verdicts(f, alloc_stack=["dma_pool_alloc+0x10/0x200", "foo_submit"])
        for arch in ("arm64", "riscv", "arm", "mips", "powerpc32"):
            self.assertEqual((v[arch].verdict, v[arch].rule), ("coherent-alloc", "coherent"))
        self.assertEqual(v["x86_64"].verdict, "coherent")
        self.assertIn("coherent allocation on arm64", exposure.summary(list(v.values())))


class Table(unittest.TestCase):
    def test_every_rule_has_its_source(self):
        self.assertEqual([r.name for r in allocrules.RULES],
                         ["coherent", "group", "devres", "dedicated"])
        for r in allocrules.RULES:
            self.assertRegex(r.source, r"^[\w/.-]+\.[ch]: ", r.name)
        self.assertIn("devres.c", allocrules.table_text())

    def test_owned_access_read_or_write(self):
        base = ("DMA-API: x: the device owns this byte: it shares a 128-byte cache line with a "
                "buffer mapped for DMA [object offset=8] [object size=32] [cache=kmalloc-32] "
                "[buffer size=16] [access offset=0] [DMA_FROM_DEVICE]")
        w = layout.parse_facts(["BUG: KASAN: dma-owned in f", "Write of size 4 at addr x", base])
        r = layout.parse_facts(["BUG: KASAN: dma-owned in f", "Read of size 1 at addr x", base])
        self.assertEqual((w.access, w.access_size, r.access), ("write", 4, "read"))
        self.assertEqual(w.to_json()["access"], "write")


if __name__ == "__main__":
    unittest.main()
