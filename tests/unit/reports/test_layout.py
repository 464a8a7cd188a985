"""harness.reports.layout: the structure around a detector report's DMA buffer."""

import json
import os
import shutil
import tempfile
import unittest
from pathlib import Path

from harness.reports import layout, structs
from harness.kernel import recompile
from harness.reports.engine import parse

ROOT = Path(__file__).resolve().parents[3]
FIX = ROOT / "tests" / "fixtures" / "layout"

SHARING = ("DMA-API: xhci_hcd 0000:00:01.0: device driver maps a buffer that shares a "
           "cache line with other data of its object [object offset=977] [object size=2048] "
           "[cache=kmalloc-2k] [buffer size=16] [shared bytes before=81 after=31] "
           "[line size=128] [DMA_FROM_DEVICE]")
OWNED = ("DMA-API: xhci_hcd 0000:00:01.0: the device owns this byte: it shares a 128-byte "
         "cache line with a buffer mapped for DMA [object offset=977] [object size=2048] "
         "[cache=kmalloc-2k] [buffer size=16] [access offset=968] [DMA_FROM_DEVICE]")
OVERFLOW = ("DMA-API: xhci_hcd 0000:00:01.0: device driver maps memory past the end of its "
            "object [object offset=24] [object size=32] [cache=kmalloc-32] [mapping size=16] "
            "[overflow=8 bytes] [DMA_FROM_DEVICE]")


def pahole_structs():
    return structs.parse_pahole((FIX / "pahole-uvc_v4l2-6.1.txt").read_text())


class ParseFacts(unittest.TestCase):
    def test_sharing(self):
        f = layout.parse_facts(SHARING)
        self.assertEqual((f.rule, f.offset, f.length, f.object_size, f.cache, f.line_size),
                         ("sharing", 977, 16, 2048, "kmalloc-2k", 128))
        self.assertEqual((f.before, f.after, f.direction), (81, 31, "DMA_FROM_DEVICE"))

    def test_owned_with_kasan_access_size(self):
        f = layout.parse_facts(["Read of size 8 at addr ffff888003a333c8 by task x/35", OWNED])
        self.assertEqual((f.rule, f.access_offset, f.access_size, f.line_size),
                         ("owned", 968, 8, 128))

    def test_overflow(self):
        f = layout.parse_facts(OVERFLOW)
        self.assertEqual((f.rule, f.offset, f.length, f.line_size_given), ("overflow", 24, 16, False))

    def test_not_a_detector_line(self):
        self.assertIsNone(layout.parse_facts("DMA-API: xhci_hcd: device driver frees DMA memory "
                                             "with wrong function [device address=0x1]"))

    def test_requested_size(self):
        f = layout.parse_facts(SHARING.replace("[object offset=977] [object size=2048] "
                                               "[cache=kmalloc-2k] [buffer size=16] "
                                               "[shared bytes before=81 after=31]",
                                               "[object offset=0] [object size=32] "
                                               "[cache=kmalloc-32] [buffer size=4] "
                                               "[shared bytes before=0 after=21]"))
        self.assertEqual(layout.requested_size(f), 25)
        self.assertIsNone(layout.requested_size(layout.parse_facts(SHARING)))   # line end


class ParsePahole(unittest.TestCase):
    def test_uvc_device(self):
        s = pahole_structs()["uvc_device"]
        self.assertEqual((s.kind, s.size), ("struct", 1144))
        by = {m.name: m for m in s.members}
        self.assertEqual((by["status[16]"].offset, by["status[16]"].size, by["status[16]"].type),
                         (977, 16, "u8"))
        self.assertEqual((by["flush_status"].offset, by["flush_status"].type), (976, "bool"))
        self.assertEqual(by["info"].type, "const struct uvc_device_info *")
        self.assertEqual(by["int_urb"].decl, "struct urb *int_urb")
        self.assertEqual(len(s.members), 26)

    def test_anonymous_unions_nest_with_absolute_offsets(self):
        q = pahole_structs()["qspinlock"]
        self.assertEqual(len(q.members), 1)
        u = q.members[0]
        self.assertEqual((u.type, u.name, u.size), ("union", "", 4))
        inner = [c for c in u.children if c.type == "struct"]
        self.assertEqual([c.name for c in inner[1].children], ["locked_pending", "tail"])
        self.assertEqual(inner[1].children[1].offset, 2)

    def test_bitfields_function_pointers_flexible_arrays(self):
        st = pahole_structs()
        bf = {m.name: m for m in st["user_desc"].members}
        self.assertEqual((bf["contents"].offset, bf["contents"].bit_offset, bf["contents"].bits),
                         (12, 1, 2))
        cb = {m.name: m for m in st["callback_head"].members}
        self.assertIn("(*func)(struct callback_head *)", cb)
        self.assertEqual(st["callback_head"].size, 16)
        self.assertTrue(st["urb"].flexible)
        self.assertFalse(st["uvc_device"].flexible)


class ParseGdb(unittest.TestCase):
    def setUp(self):
        self.st = structs.parse_gdb_ptype((FIX / "gdb-ptype-uvc_v4l2-6.1.txt").read_text())

    def test_same_top_level_as_pahole(self):
        g, p = self.st["uvc_device"], pahole_structs()["uvc_device"]
        self.assertEqual(g.size, 1144)
        self.assertEqual([(m.offset, m.size, m.name) for m in g.members],
                         [(m.offset, m.size, m.name) for m in p.members])

    def test_nested_named_structs_expanded(self):
        by = {m.name: m for m in self.st["uvc_device"].members}
        self.assertEqual(by["lock"].type, "struct mutex")
        self.assertEqual([c.name for c in by["async_ctrl"].children][:2], ["work", "urb"])
        self.assertEqual(by["async_ctrl"].children[1].offset, 1104)

    def test_bitfields(self):
        bf = {m.name: m for m in self.st["user_desc"].members}
        self.assertEqual((bf["contents"].offset, bf["contents"].bits), (12, 2))
        self.assertEqual(self.st["user_desc"].size, 16)


class Choice(unittest.TestCase):
    def test_uvc_device_is_chosen(self):
        f = layout.parse_facts(SHARING)
        cand, best = layout.choose(pahole_structs(), f)
        self.assertEqual(cand.struct.name, "uvc_device")
        self.assertEqual((cand.fit, cand.exact_member), ("bucket", True))
        self.assertEqual(cand.path[-1].name, "status[16]")

    def test_size_must_fit_the_cache(self):
        f = layout.parse_facts(SHARING.replace("kmalloc-2k", "kmalloc-4k")
                               .replace("object size=2048", "object size=4096"))
        self.assertIsNone(layout.choose(pahole_structs(), f)[0])     # 1144 is not a 4k object

    def test_named_cache_needs_the_exact_size(self):
        f = layout.parse_facts(SHARING.replace("kmalloc-2k", "uvc_cache")
                               .replace("object size=2048", "object size=1144"))
        cand, _ = layout.choose(pahole_structs(), f)
        self.assertEqual((cand.struct.name, cand.fit), ("uvc_device", "exact"))

    def test_buffer_inside_a_nested_struct(self):
        # after=32: the line's bytes stop at the requested end, 1144
        f = layout.parse_facts(SHARING.replace("object offset=977", "object offset=1104")
                               .replace("buffer size=16", "buffer size=8")
                               .replace("after=31", "after=32"))
        self.assertEqual(layout.requested_size(f), 1144)
        cand, _ = layout.choose(pahole_structs(), f)
        self.assertEqual(cand.fit, "exact")
        self.assertEqual([m.name for m in cand.path], ["async_ctrl", "urb"])
        lay = layout.build_layout(f, cand, pahole_structs())
        rows = lay.rows[0]
        self.assertIn(("async_ctrl", "", 0), [(r.name, r.marker, r.depth) for r in rows])
        self.assertIn(("urb", "buffer", 1), [(r.name, r.marker, r.depth) for r in rows])

    def test_plain_buffer_fitting_many_structs_is_not_guessed(self):
        two = {"a": structs.Struct("struct", "a", 256, [structs.Member(0, 256, "u8", "x[256]")]),
               "b": structs.Struct("struct", "b", 256, [structs.Member(0, 256, "u32", "y[64]")])}
        f = layout.parse_facts(SHARING.replace("object offset=977", "object offset=0")
                               .replace("kmalloc-2k", "kmalloc-256")
                               .replace("object size=2048", "object size=256")
                               .replace("buffer size=16", "buffer size=255"))
        cand, best = layout.choose(two, f)
        self.assertIsNone(cand)
        self.assertEqual(len(best), 2)

    def test_structures_that_merely_fit_are_not_named(self):
        """usb_string()'s kmalloc buffer once came with struct _ymmh_state
        and struct maple_node, unrelated structures of the object's size:
        the finder says "a plain buffer" and names none of them."""
        same = {"_ymmh_state": structs.Struct("struct", "_ymmh_state", 256,
                                              [structs.Member(0, 256, "u8", "ymmh_space[256]")]),
                "maple_node": structs.Struct("struct", "maple_node", 256,
                                             [structs.Member(0, 256, "void *", "slot[32]")])}
        f = layout.parse_facts(SHARING.replace("object offset=977", "object offset=0")
                               .replace("kmalloc-2k", "kmalloc-256")
                               .replace("object size=2048", "object size=256")
                               .replace("buffer size=16", "buffer size=255"))

        class Finder(layout.LayoutFinder):
            def structs_of(self, source, facts):
                return same, "pahole"

            def source_text(self, source):
                return None

        lay = Finder("/nonexistent-art").layout(f, "usb_string", source="drivers/usb/core/message.c")
        self.assertFalse(lay.found)
        self.assertEqual(lay.candidates, [])
        self.assertIn("a plain buffer", lay.summary())
        self.assertNotIn("_ymmh_state", lay.summary())
        self.assertNotIn("maple_node", lay.format_text())

    def test_a_byte_wide_member_elsewhere_is_no_evidence(self):
        """airspy's 1-byte kmalloc buffer: structures of headers it includes
        that start with a u8 are not named; one the driver declares is."""
        f = _facts(0, 128, "kmalloc-128", 1, 0, 127)
        far = {"acpi_ibft_nic": structs.Struct("struct", "acpi_ibft_nic", 102, [
            structs.Member(0, 1, "u8", "flags"), structs.Member(1, 101, "u8", "rest[101]")],
            decl_file="include/acpi/actbl1.h")}

        class Finder(layout.LayoutFinder):
            def structs_of(self, source, facts):
                return far, "pahole"

            def source_text(self, source):
                return None

        lay = Finder("/nonexistent-art").layout(f, "airspy_ctrl_msg",
                                                source="drivers/media/usb/airspy/airspy.c")
        self.assertFalse(lay.found)
        self.assertIn("a plain buffer", lay.summary())
        self.assertNotIn("acpi_ibft_nic", lay.summary())

    def test_a_pointer_wide_member_of_a_header_struct_is_no_evidence(self):
        """hub.c's get_bMaxPacketSize0() reads 8 bytes into kmalloc(64): struct
        kobject (64 bytes, a pointer first) from the headers is no layout, and
        the site is a plain buffer (a dedicated allocation for allocrules);
        a structure the driver declares with a u64 first still is one."""
        f = _facts(0, 64, "kmalloc-64", 8, 0, 56)
        kobject = structs.Struct("struct", "kobject", 64, [
            structs.Member(0, 8, "const char *", "name"), structs.Member(8, 56, "u8", "rest[56]")],
            decl_file="include/linux/kobject.h")
        mine = structs.Struct("struct", "hub_buf", 64, [
            structs.Member(0, 8, "u64", "desc"), structs.Member(8, 56, "u8", "rest[56]")],
            decl_file="drivers/usb/core/hub.h")

        def finder(table):
            class Finder(layout.LayoutFinder):
                def structs_of(self, source, facts):
                    return table, "pahole"

                def source_text(self, source):
                    return None
            return Finder("/nonexistent-art")

        lay = finder({"kobject": kobject}).layout(f, "get_bMaxPacketSize0",
                                                  source="drivers/usb/core/hub.c")
        self.assertFalse(lay.found)
        self.assertTrue(lay.plain, lay.summary())
        self.assertNotIn("kobject", lay.summary())
        lay = finder({"kobject": kobject, "hub_buf": mine}).layout(
            f, "get_bMaxPacketSize0", source="drivers/usb/core/hub.c")
        self.assertTrue(lay.found, lay.summary())
        self.assertEqual(lay.struct, "hub_buf")


def _facts(offset, size, cache, length, before, after):
    return layout.parse_facts(
        "DMA-API: virtio-pci 0000:00:02.0: device driver maps a buffer that shares a cache "
        f"line with other data of its object [object offset={offset}] [object size={size}] "
        f"[cache={cache}] [buffer size={length}] [shared bytes before={before} "
        f"after={after}] [line size=128] [DMA_FROM_DEVICE]")


class DriversOwn(unittest.TestCase):
    """Real 6.12 reports of the sweep, against pahole -I of the driver's
    object: the candidates that once won by name (device_link, shrinker:
    headers every object includes) lose to the driver's own structures."""

    def structs(self, name):
        return structs.parse_pahole((FIX / f"pahole-I-{name}-6.12.txt").read_text())

    def test_decl_file_is_tree_relative(self):
        st = self.structs("virtio_input")
        self.assertEqual(st["virtio_input"].decl_file, "drivers/virtio/virtio_input.c")
        self.assertEqual(st["list_head"].decl_file, "include/linux/types.h")
        self.assertEqual(structs.parse_pahole("struct a {\n\tint x; /* 0 4 */\n};\n")["a"]
                         .decl_file, "")

    def test_array_element_of_the_drivers_struct(self):
        st = self.structs("virtio_input")
        f = _facts(224, 1024, "kmalloc-1k", 8, 96, 24)
        src = "drivers/virtio/virtio_input.c"
        cand, _ = layout.choose(st, f, src)
        self.assertEqual(cand.struct.name, "virtio_input")
        self.assertEqual(cand.element, 0)
        lay = layout.build_layout(f, cand, st, source=src)
        self.assertEqual(lay.buffer, "evts[0] of evts[64]")
        names = [r.name for r in lay.sharing]
        self.assertIn("evts[1..3]", names)           # the rest of the line: 232..255
        self.assertIn("sts", names)
        rows = [(r.name, r.marker) for r in lay.rows[0]]
        self.assertIn(("evts[0]", "buffer"), rows)
        self.assertIn(("evts[64]", ""), rows)
        self.assertIn("evts[1..3] (232..255)", lay.summary())
        # without the source, the old tie: device_link.next is exactly 8 bytes too
        cand, best = layout.choose(st, f)
        self.assertGreater(len(best), 1)

    def test_local_struct_wins_a_tie_of_exact_members(self):
        st = self.structs("virtio_crypto_core")
        f = _facts(72, 128, "kmalloc-128", 16, 72, 40)
        cand, best = layout.choose(st, f, "drivers/crypto/virtio/virtio_crypto_core.c")
        self.assertEqual(cand.struct.name, "virtio_crypto_ctrl_request")
        self.assertEqual([c.struct.name for c in best], ["virtio_crypto_ctrl_request"])
        self.assertEqual(cand.path[-1].name, "input")
        # seen from a file that declares neither, a header's exact member is
        # no evidence: no guess, both listed
        cand, best = layout.choose(st, f, "kernel/other/file.c")
        self.assertIsNone(cand)
        self.assertEqual(sorted(c.struct.name for c in best),
                         ["shrinker", "virtio_crypto_ctrl_request"])
        # without declaration files (gdb, old pahole output) the old rule stays
        plain = {k: structs.Struct(s.kind, s.name, s.size, s.members) for k, s in st.items()}
        cand, _ = layout.choose(plain, f, "kernel/other/file.c")
        self.assertEqual(cand.struct.name, "shrinker")   # alphabetical

    def test_locality_never_makes_a_plain_buffer_guess(self):
        a = structs.Struct("struct", "mine", 192, [structs.Member(0, 192, "u8", "x[192]")],
                          "drivers/d/own.h")
        b = structs.Struct("struct", "theirs", 192, [structs.Member(0, 192, "u8", "y[192]")],
                          "include/linux/x.h")
        f = _facts(72, 192, "kmalloc-192", 1, 72, 55)
        cand, best = layout.choose({"mine": a, "theirs": b}, f, "drivers/d/own.c")
        self.assertIsNone(cand)
        self.assertEqual(len(best), 2)

    def test_the_drivers_struct_in_its_containers_private_area(self):
        # virtio_scsi's event_list[0].event inside struct Scsi_Host's
        # hostdata[] (shost_priv): a kmalloc-4k object, the buffer at 1576
        st = self.structs("virtio_scsi")
        f = _facts(1576, 4096, "kmalloc-4k", 16, 40, 72)
        src = "drivers/scsi/virtio_scsi.c"
        cand, _ = layout.choose(st, f, src)
        self.assertEqual(cand.struct.name, "Scsi_Host+virtio_scsi")
        self.assertEqual([m.name for m in cand.path],
                         ["hostdata", "event_list[8]", "event_list[0]", "event"])
        lay = layout.build_layout(f, cand, st, source=src)
        names = [r.name for r in lay.sharing]
        for n in ("rpm_autosuspend_delay", "vdev", "vscsi", "work", "event_list[1]"):
            self.assertIn(n, names)
        # a structure of drivers/scsi/ but not of this file (sd.h's scsi_disk,
        # whose kobject's list_head is 16 bytes there too) does not win
        self.assertNotIn("scsi_disk", cand.struct.name)
        # elsewhere, no private area is guessed
        cand, _ = layout.choose(st, f, "fs/x.c")
        self.assertTrue(cand is None or "+" not in cand.struct.name)

    def test_only_private_areas_the_source_names(self):
        st = self.structs("virtio_scsi")
        f = _facts(1576, 4096, "kmalloc-4k", 16, 40, 72)
        src = "drivers/scsi/virtio_scsi.c"
        # a file that never says struct Scsi_Host: no container is guessed
        cand, _ = layout.choose(st, f, src, "static int x;\n")
        self.assertTrue(cand is None or "+" not in cand.struct.name)
        cand, _ = layout.choose(st, f, src, "struct Scsi_Host *shost = ...;\n")
        self.assertEqual(cand.struct.name, "Scsi_Host+virtio_scsi")
        # a trailing array that is no private area (struct pid's numbers[])
        pid = structs.Struct("struct", "pid", 1560, [
            structs.Member(0, 1560, "u8", "pad[1560]"),
            structs.Member(1560, 0, "struct upid", "numbers[]")], "include/linux/pid.h")
        cands = layout._private_candidates({"pid": pid, "virtio_scsi": st["virtio_scsi"]}, f,
                                           src, "struct pid *p;")
        self.assertEqual(cands, [])

    def test_a_byte_of_a_char_array_is_no_element(self):
        s = structs.Struct("struct", "t", 128, [structs.Member(0, 128, "char", "name[128]")])
        self.assertIsNone(structs._element(s.members[0], 32, 33))

    def test_member_inside_an_array_of_records(self):
        node = structs.Struct("struct", "node", 24, [
            structs.Member(0, 8, "struct owner *", "owner"),
            structs.Member(8, 16, "struct event", "event")], "drivers/s/v.c")
        top = structs.Struct("struct", "top", 200, [
            structs.Member(0, 8, "void *", "p"),
            structs.Member(8, 192, "struct node", "list[8]")], "drivers/s/v.c")
        st = {"node": node, "top": top}
        f = _facts(8 + 24 * 2 + 8, 256, "kmalloc-256", 16, 64, 48)
        cand, _ = layout.choose(st, f, "drivers/s/v.c")
        self.assertEqual([m.name for m in cand.path], ["list[8]", "list[2]", "event"])
        lay = layout.build_layout(f, cand, st, source="drivers/s/v.c")
        rows = [(r.name, r.marker) for r in lay.rows[0]]
        self.assertIn(("event", "buffer"), rows)
        self.assertIn(("owner", "shares line"), rows)
        self.assertIn(("list[0..1]", "shares line"), rows)
        self.assertIn(("list[3..4]", "shares line"), rows)     # 80..127: the line ends at 127


class Lines(unittest.TestCase):
    def test_kmalloc_pow2_lines_at_multiples(self):
        f = layout.parse_facts(SHARING)
        self.assertEqual(layout.touched_lines(f, 1144), [(896, 1023)])
        f64 = layout.parse_facts(SHARING.replace("line size=128", "line size=64"))
        self.assertEqual(layout.touched_lines(f64, 1144), [(960, 1023)])
        f32 = layout.parse_facts(SHARING.replace("line size=128", "line size=32"))
        self.assertEqual(layout.touched_lines(f32, 1144), [(960, 991), (992, 1023)])

    def test_other_caches_use_before(self):
        f = layout.parse_facts(SHARING.replace("kmalloc-2k", "uvc_cache")
                               .replace("before=81", "before=17"))
        self.assertEqual(layout.touched_lines(f, 1144), [(960, 1087)])

    def test_clipped_to_the_struct(self):
        f = layout.parse_facts(SHARING.replace("object offset=977", "object offset=1136")
                               .replace("buffer size=16", "buffer size=8"))
        self.assertEqual(layout.touched_lines(f, 1144), [(1024, 1143)])


class View(unittest.TestCase):
    def layout(self, text=SHARING):
        f = layout.parse_facts(text)
        cand, best = layout.choose(pahole_structs(), f)
        return layout.build_layout(f, cand, pahole_structs(), source="drivers/x.c",
                                   tool="pahole", others=best)

    def test_markers(self):
        lay = self.layout()
        marks = {r.name: r.marker for r in lay.rows[0]}
        self.assertEqual(marks["status[16]"], "buffer")
        self.assertEqual(marks["flush_status"], "shares line")
        self.assertEqual(marks["input_phys[64]"], "shares line")
        self.assertEqual(marks["uvc_version"], "shares line")
        self.assertNotIn("vdev", marks)            # ends at 895, before the line
        self.assertNotIn("async_ctrl", marks)      # starts at 1072, after it
        holes = [(r.offset, r.size) for r in lay.rows[0] if r.marker == "hole"]
        self.assertIn((993, 7), holes)

    def test_summary(self):
        s = self.layout().summary()
        self.assertTrue(s.startswith("status[16] at 977..992 shares line 896..1023 with "), s)
        self.assertIn("flush_status (976)", s)
        self.assertIn("input_phys (1008..1071)", s)
        self.assertIn("more", s)

    def test_owned_marks_the_access(self):
        lay = self.layout(OWNED)
        marks = {r.name: r.marker for r in lay.rows[0]}
        self.assertEqual(marks["int_urb"], "accessed")

    def test_text(self):
        text = self.layout().format_text()
        self.assertIn("struct uvc_device: 1144 bytes in a kmalloc-2k object (2048), "
                      "128-byte model lines; from drivers/x.c (pahole)", text)
        self.assertIn("/* --- line 896..1023 --- */", text)
        self.assertRegex(text, r"977\s+16  u8 status\[16\];  <== buffer \(DMA_FROM_DEVICE\)")
        self.assertRegex(text, r"976\s+1  bool flush_status;  <-- shares the line")
        self.assertIn("/* XXX 7 bytes hole */", text)

    def test_json(self):
        j = json.loads(json.dumps(self.layout().to_json()))
        self.assertEqual((j["version"], j["found"], j["struct"], j["size"], j["buffer"]),
                         (1, True, "uvc_device", 1144, "status[16]"))
        self.assertEqual((j["lines"][0]["start"], j["lines"][0]["end"]), (896, 1023))
        self.assertIn("flush_status", [m["name"] for m in j["sharing"]])
        self.assertEqual(j["facts"]["offset"], 977)

    def test_html_escapes(self):
        h = self.layout().format_html()
        self.assertIn("&lt;== buffer", h)
        self.assertIn('class="buf"', h)
        self.assertNotIn("<==", h)

    def test_not_found(self):
        lay = layout.Layout(layout.parse_facts(SHARING), note="no <struct>")
        self.assertFalse(lay.found)
        self.assertIn("no structure layout", lay.format_text())
        self.assertIn("&lt;struct&gt;", lay.format_html())
        self.assertFalse(lay.to_json()["found"])


class ReportLayout(unittest.TestCase):
    """report_layout: a report's facts, guilty frame and module to the finder."""

    LOG = ("[    1.000000] ------------[ cut here ]------------\n"
           f"[    1.000001] {SHARING}\n"
           "[    1.000002] WARNING: CPU: 0 PID: 13 at kernel/dma/debug_cacheline.c:160 "
           "cl_report+0x106/0x117\n"
           "[    1.000003] Call Trace:\n"
           "[    1.000004]  <TASK>\n"
           "[    1.000005]  cl_report+0x106/0x117\n"
           "[    1.000006]  usb_hcd_submit_urb+0x111c/0x12e1\n"
           "[    1.000007]  uvc_v4l2_open+0x1b7/0x327 [uvcvideo]\n"
           "[    1.000008]  v4l2_open+0x184/0x239\n"
           "[    1.000009]  </TASK>\n"
           "[    1.000010] ---[ end trace 0000000000000000 ]---\n")

    def test_finder_asked_for_the_guilty_frame_and_module(self):
        reps = parse(self.LOG)
        self.assertEqual(reps[0].guilty_frame, "uvc_v4l2_open")
        self.assertEqual(layout._guilty_module(reps[0]), "uvcvideo")
        seen = []

        class FakeFinder:
            def layout(self, facts, func, module=None, source=None):
                seen.append((func, module))
                return layout.Layout(facts, note="fake")

        old = dict(layout._FINDERS)
        try:
            layout._FINDERS[str(Path("/nonexistent-art").resolve())] = FakeFinder()
            lay = layout.report_layout(reps[0], "/nonexistent-art")
            self.assertIsNone(layout.report_layout(parse(self.LOG.replace(
                "[object offset=977]", ""))[0], "/nonexistent-art"))   # not the detector's numbers
        finally:
            layout._FINDERS.clear()
            layout._FINDERS.update(old)
        self.assertEqual(seen, [("uvc_v4l2_open", "uvcvideo")])
        self.assertEqual((lay.note, lay.facts.offset), ("fake", 977))


def before_artifacts():
    """A cached, built 6.1 'before' variant of the seed case with its work tree, or None."""
    base = Path(os.environ.get("DMAHARNESS_CACHE", Path.home() / ".cache" / "dmaharness"))
    arts = base / "artifacts"
    if not arts.is_dir():
        return None
    for d in sorted(arts.glob("6.1-*")):
        try:
            meta = json.loads((d / "meta.json").read_text())
        except (OSError, ValueError):
            continue
        pats = [p[0] if isinstance(p, list) else p for p in meta.get("patches", [])]
        frags = {f[0] if isinstance(f, list) else f for f in meta.get("fragments", [])}
        if frags & {"full", "fast", "race"}:
            continue        # a debug profile's layout (lockdep's larger mutexes) is another
        if pats and "Embed-the-status-URB-buffer" in str(pats[-1]) \
                and recompile.build_dir(d) is not None:
            return d
    return None


class RealVariant(unittest.TestCase):
    """Against a real built 6.1 'before' variant of the seed case, when cached."""

    def setUp(self):
        if not shutil.which("gcc") or not (shutil.which("pahole") or shutil.which("gdb")):
            self.skipTest("gcc and pahole (or gdb) needed")
        self.art = before_artifacts()
        if self.art is None:
            self.skipTest("no built 6.1 variant ending in the seed case's 'Embed the status URB "
                          "buffer' patch in the cache (run `make run` once)")

    def test_uvc_device_status_shares_a_line(self):
        with tempfile.TemporaryDirectory() as tmp:
            build = recompile.build_dir(self.art)
            before = {p: p.stat().st_mtime for p in (build / "drivers/media/usb/uvc").iterdir()}
            fnd = layout.LayoutFinder(self.art, scratch=Path(tmp))
            f = layout.parse_facts(SHARING)
            # the offset of status[] depends on the variant's patch: read it from the struct
            structs, tool = fnd.structs_of("drivers/media/usb/uvc/uvc_v4l2.c", f)
            self.assertIsNotNone(structs, tool)
            st = structs["uvc_device"]
            status = next(m for m in st.members if m.name.startswith("status["))
            text = SHARING.replace("object offset=977", f"object offset={status.offset}")
            lay = fnd.layout(layout.parse_facts(text), "uvc_status_start", "uvcvideo")
            self.assertTrue(lay.found, lay.note)
            self.assertEqual(lay.struct, "uvc_device")
            self.assertEqual(lay.buffer, status.name)
            shared = {r.name.split("[")[0] for r in lay.sharing}
            self.assertTrue(shared & {"flush_status", "input_phys"}, shared)
            self.assertTrue(any(p.suffix == ".o" for p in Path(tmp).rglob("*.g.o")))
            after = {p: p.stat().st_mtime for p in (build / "drivers/media/usb/uvc").iterdir()}
            self.assertEqual(before, after)          # nothing written in the build folder


if __name__ == "__main__":
    unittest.main()
