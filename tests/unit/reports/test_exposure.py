"""harness/reports/exposure.py: one test per row of the architecture table,
and the seed site's row as the issue states it (arm64 bounces uvcvideo's
16-byte status buffer, 32-bit ARM, MIPS and PowerPC corrupt)."""

import unittest

from harness.reports import exposure, layout

SEED = ("DMA-API: usb 1-1: device driver maps a buffer that shares a cache line with other "
        "data of its object [object offset=977] [object size=2048] [cache=kmalloc-2k] "
        "[buffer size=16] [shared bytes before=81 after=31] [line size=128] [DMA_FROM_DEVICE]")


def facts(offset, length, size=2048, cache="kmalloc-2k", direction="DMA_FROM_DEVICE",
          before=64, after=64):
    return layout.parse_facts(
        "DMA-API: x: device driver maps a buffer that shares a cache line with other data of "
        f"its object [object offset={offset}] [object size={size}] [cache={cache}] "
        f"[buffer size={length}] [shared bytes before={before} after={after}] [line size=128] "
        f"[{direction}]")


def verdicts(f, version=None):
    return {v.arch: v.verdict for v in exposure.assess(f, version)}


class Rows(unittest.TestCase):
    def test_table_has_the_architectures(self):
        self.assertEqual([a.name for a in exposure.ARCHES],
                         ["x86_64", "arm64", "riscv", "arm", "mips", "powerpc32"])
        self.assertIn("arm64", exposure.table_text())

    def test_x86_64_is_coherent(self):
        self.assertEqual(verdicts(facts(977, 16))["x86_64"], exposure.COHERENT)

    def test_arm64_bounces_small_unaligned_mappings_since_6_5(self):
        self.assertEqual(verdicts(facts(977, 16), "7.3")["arm64"], exposure.BOUNCED)
        self.assertEqual(verdicts(facts(977, 16), "6.5")["arm64"], exposure.BOUNCED)
        self.assertEqual(verdicts(facts(977, 16), "6.1")["arm64"], exposure.CORRUPTS)
        # kmalloc_size_roundup(64) = 64, a whole line: mapped in place, and it shares
        self.assertEqual(verdicts(facts(970, 64), "7.3")["arm64"], exposure.CORRUPTS)
        # 96 is not a multiple of 64: bounced; 256 bytes and more never are
        self.assertEqual(verdicts(facts(970, 90), "7.3")["arm64"], exposure.BOUNCED)
        self.assertEqual(verdicts(facts(970, 300), "7.3")["arm64"], exposure.CORRUPTS)

    def test_riscv_bounces_below_twice_its_64_byte_minalign(self):
        self.assertEqual(verdicts(facts(977, 16), "7.3")["riscv"], exposure.BOUNCED)
        # 100 -> kmalloc-128, a multiple of the line: in place, shares
        self.assertEqual(verdicts(facts(970, 100), "7.3")["riscv"], exposure.CORRUPTS)
        # 130 is not below 2 x 64
        self.assertEqual(verdicts(facts(970, 130), "7.3")["riscv"], exposure.CORRUPTS)

    def test_arm_never_bounces(self):
        self.assertEqual(verdicts(facts(977, 16), "7.3")["arm"], exposure.CORRUPTS)
        # a buffer that fills its 64-byte lines is safe there, not on a 128-byte model
        self.assertEqual(verdicts(facts(64, 64), "7.3")["arm"], exposure.OWN_LINES)

    def test_mips_and_powerpc32_have_32_byte_lines(self):
        v = verdicts(facts(32, 32), "7.3")
        self.assertEqual((v["mips"], v["powerpc32"]), (exposure.OWN_LINES, exposure.OWN_LINES))
        self.assertEqual(v["arm"], exposure.CORRUPTS)        # its 64-byte line is shared
        v = verdicts(facts(977, 16), "7.3")
        self.assertEqual((v["mips"], v["powerpc32"]), (exposure.CORRUPTS, exposure.CORRUPTS))

    def test_to_device_never_corrupts(self):
        v = verdicts(facts(977, 16, direction="DMA_TO_DEVICE"), "7.3")
        self.assertEqual(set(v.values()), {exposure.TO_DEVICE, exposure.COHERENT})

    def test_a_buffer_at_the_objects_end_shares_nothing_after_it(self):
        # the last 16 bytes of a 2 KiB object: nothing of the object after it
        self.assertEqual(exposure.shared_bytes(facts(2032, 16, before=112, after=0), 32), (16, 0))

    def test_only_the_data_the_detector_counted_is_shared(self):
        # __uvc_query_ctrl's 4 bytes at 0 of a kmalloc-32 object whose request
        # ends 2 bytes after the buffer: 2 bytes shared, not the 28 of slack
        f = facts(0, 4, size=32, cache="kmalloc-32", before=0, after=2)
        self.assertEqual(exposure.shared_bytes(f, 32), (0, 2))
        # a request that ends with the buffer shares nothing on any real line
        f = facts(0, 4, size=32, cache="kmalloc-32", before=0, after=0)
        self.assertEqual(verdicts(f, "6.1")["arm"], exposure.OWN_LINES)

    def test_kmalloc_size_roundup(self):
        self.assertEqual([exposure.kmalloc_size_roundup(n) for n in (1, 9, 33, 65, 97, 129, 193,
                                                                      257, 600)],
                         [8, 16, 64, 96, 128, 192, 256, 512, 1024])


class SeedSite(unittest.TestCase):
    def test_uvcvideo_status_buffer(self):
        f = layout.parse_facts(SEED)
        v = verdicts(f, "7.3")
        self.assertEqual(v["arm64"], exposure.BOUNCED)
        for arch in ("arm", "mips", "powerpc32"):
            self.assertEqual(v[arch], exposure.CORRUPTS, arch)
        self.assertEqual(exposure.summary(exposure.assess(f, "7.3")),
                         "corrupts on arm, mips, powerpc32; bounced (masked) on arm64, riscv; "
                         "coherent on x86_64")
        # before arm64 bounced (6.1's own kernel), it corrupted there too
        self.assertEqual(verdicts(f, "6.1")["arm64"], exposure.CORRUPTS)


if __name__ == "__main__":
    unittest.main()
