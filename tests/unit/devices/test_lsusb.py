"""harness/devices/lsusb.py: lsusb -v listings -> device profiles (fake-device/profiles)."""

import atexit
import contextlib
import ctypes
import io
import re
import shutil
import subprocess
import tempfile
import unittest
from pathlib import Path

from harness.devices import (lsusb, lsusb_answers, lsusb_build, lsusb_listing, lsusb_parse,
                             lsusb_plan, lsusb_render, lsusb_shipped)

FAKE_DEVICE = lsusb_shipped.REPO / "fake-device"
FAKE_UVC = FAKE_DEVICE / "build" / "fake-uvc"
SRC = lsusb_shipped.SOURCES_DIR


def listing(name: str) -> str:
    return (SRC / lsusb_shipped.SHIPPED[name].listing).read_text(encoding="utf-8")


def parse(name: str) -> lsusb_parse.Parsed:
    return lsusb_parse.parse(listing(name), lsusb_shipped.SHIPPED[name].listing)


def printed_blengths(text: str) -> int:
    """The bLength values printed inside the configurations of a listing."""
    total, inside = 0, False
    for ln in text.splitlines():
        s = ln.replace("=20", " ").strip()
        if s == "Configuration Descriptor:":
            inside = True
        elif s.startswith(("Device Qualifier", "Binary Object Store", "Device Status")):
            inside = False
        elif inside and s.startswith("bLength"):
            total += int(s.split()[1])
    return total


class Rebuild(unittest.TestCase):
    def test_every_descriptor_matches_its_blength_and_the_totals_add_up(self):
        for name in lsusb_shipped.SHIPPED:
            with self.subTest(name):
                p = parse(name)
                self.assertEqual(len(p.configs), p.device[17])
                for cfg in p.configs:
                    for d in cfg:
                        self.assertEqual(len(d.data), d.data[0], (d.kind, d.line))
                    total = cfg[0].data[2] | cfg[0].data[3] << 8
                    self.assertEqual(sum(len(d.data) for d in cfg), total)
                    self.assertEqual(b"".join(d.data for d in cfg)[:2], b"\x09\x02")
                if p.bos:
                    self.assertEqual(sum(len(d.data) for d in p.bos),
                                     p.bos[0].data[2] | p.bos[0].data[3] << 8)

    def test_what_lsusb_does_not_print_is_exactly_what_is_supplied(self):
        # the cameras: the printed bLengths are 5 short of wTotalLength, the
        # class-specific VC interrupt endpoint descriptor the converter adds
        for name in ("logitech-c922", "sunplusit-hd-uvc15", "sonix-0c45-6353", "lifecam-nx6000"):
            with self.subTest(name):
                p, text = parse(name), listing(name)
                cfg = p.configs[0]
                supplied = [d for d in cfg if d.kind == "cs_ep" and d.data[2] == 0x03]
                self.assertEqual(len(supplied), 1)
                ep = cfg[cfg.index(supplied[0]) - 1].data
                self.assertEqual(supplied[0].data, bytes([5, 0x25, 3]) + ep[4:6])   # wMaxPacketSize
                self.assertEqual(printed_blengths(text) + 5, cfg[0].data[2] | cfg[0].data[3] << 8)
        # CDC functional descriptors (no bLength printed) and SuperSpeed companions
        p = parse("stm32-cdc-acm")
        self.assertEqual([len(d.data) for d in p.configs[0] if d.kind.startswith("cdc_")],
                         [5, 5, 4, 5])
        p = parse("rtl8153")
        comps = [d.data for cfg in p.configs for d in cfg if d.kind == "ss_companion"]
        self.assertEqual(len(comps), 6)
        self.assertIn(bytes.fromhex("06 30 00 00 02 00"), comps)    # int 0x83, 2 bytes
        self.assertIn(bytes.fromhex("06 30 00 00 10 00"), comps)    # int 0x83, 16 bytes
        self.assertIn(bytes.fromhex("06 30 03 00 00 00"), comps)    # bulk, bMaxBurst 3

    def test_fields_land_where_the_spec_puts_them(self):
        c922 = b"".join(d.data for d in parse("logitech-c922").configs[0])
        # the 11-byte UVC 1.0 processing unit: lsusb's bmVideoStandards line is dropped
        self.assertIn(bytes.fromhex("0b 24 05 03 01 00 40 02 5b 17 00 1b 24 06 06"), c922)
        # GUIDs are printed with their first three groups little-endian
        self.assertIn(bytes.fromhex("59 55 59 32 00 00 10 00 80 00 00 aa 00 38 9b 71"), c922)
        self.assertIn(bytes.fromhex("0d 24 01 00 01 d6 00 00 a3 e1 11 01 01"), c922)  # 300 MHz
        nx = b"".join(d.data for d in parse("lifecam-nx6000").configs[0])
        self.assertIn(bytes.fromhex("0e 24 01 01 27 01 81 00 03 00 00 00 01 0b"), nx)  # 295 kept
        self.assertIn(bytes.fromhex("0b 24 06 03 01 02 00 00 43 00 00"), nx)  # old bmaControls
        rtl = parse("rtl8153")
        self.assertEqual(rtl.configs[0][0].data[8], 36)          # 288 mA in 8 mA units
        self.assertEqual(rtl.device[7], 9)
        k120 = parse("logitech-k120")
        self.assertEqual(k120.configs[0][0].data[7:9], bytes([0xa0, 45]))
        self.assertEqual(parse("sunplusit-hd-uvc15").bos[-1].data,
                         bytes.fromhex("08 10 11 01 03 00 00 00"))    # ** UNRECOGNIZED

    def test_strings_are_kept_as_printed(self):
        self.assertEqual(parse("sonix-0c45-6353").strings[1], "USB film scanner ")
        nx = parse("lifecam-nx6000").strings
        self.assertEqual(nx[1], "")
        self.assertEqual(nx[2], "Microsoft\u00ae LifeCam NX-6000")
        self.assertEqual(parse("stm32-cdc-acm").strings[3], "204E37773453")   # '=20' undone
        self.assertEqual(parse("rtl8153").strings[3], "00E04C6B1289")          # iMACAddress

    def test_quirks_are_noted_not_fixed(self):
        notes = parse("lifecam-nx6000").notes[0]
        self.assertTrue(any("wTotalLength 295" in n and "301" in n for n in notes), notes)
        text = (lsusb_shipped.PROFILES_DIR / "lifecam-nx6000.profile").read_text(encoding="utf-8")
        self.assertIn("# note: kept as the device has it: the VideoStreaming input header says "
                      "wTotalLength 295", text)


class Broken(unittest.TestCase):
    def fails(self, text: str, line: int | None, *words: str) -> str:
        with self.assertRaises(lsusb_listing.ListingError) as cm:
            lsusb_parse.parse(text, "x.txt")
        msg = str(cm.exception)
        prefix = f"x.txt:{line}: " if line else "x.txt: "
        self.assertTrue(msg.startswith(prefix), msg)
        for w in words:
            self.assertIn(w, msg)
        return msg

    def line_of(self, text: str, pattern: str, nth: int = 0) -> int:
        """The line number of the nth line of the listing proper matching pattern."""
        hits = [i + 1 for i, ln in enumerate(text.split("\n"))
                if not ln.startswith("#") and re.search(pattern, ln)]
        return hits[nth]

    def test_truncated_in_a_block(self):
        text = listing("logitech-c922")
        cut = self.line_of(text, r"bEndpointAddress\s+0x81", 3)
        lines = text.split("\n")[:cut]               # the endpoint block loses its last lines
        self.fails("\n".join(lines), cut, "no bmAttributes line", "truncated")

    def test_truncated_between_blocks(self):
        text = listing("stm32-cdc-acm")
        cut = self.line_of(text, r"Interface Descriptor:", 1) - 1
        trimmed = "\n".join(text.split("\n")[:cut])
        self.fails(trimmed, self.line_of(text, r"Configuration Descriptor:"),
                   "configuration 1", "add up to 44 bytes but wTotalLength is 67")

    def test_missing_configuration(self):
        text = listing("rtl8153")
        cut = self.line_of(text, r"Configuration Descriptor:", 1) - 1
        self.fails("\n".join(text.split("\n")[:cut]), None, "bNumConfigurations is 2")

    def test_bad_values_name_their_line(self):
        text = listing("pl2303")
        no = self.line_of(text, r"bInterval\s+1$")
        lines = text.split("\n")
        for bad, words in (("x1", ("bInterval: 'x1' is not a number",)),
                           ("300", ("bInterval: 300 does not fit in 1 byte",))):
            with self.subTest(bad):
                changed = lines[:no - 1] + [lines[no - 1].replace(" 1", " " + bad)] + lines[no:]
                self.fails("\n".join(changed), no, *words)
        no = self.line_of(text, r"bcdUSB")
        changed = lines[:no - 1] + [lines[no - 1].replace("2.00", "two")] + lines[no:]
        self.fails("\n".join(changed), no, "bcdUSB: 'two' is not a BCD version")

    def test_blength_that_does_not_match_the_fields(self):
        text = listing("pl2303")
        lines = text.split("\n")
        no = self.line_of(text, r"Interface Descriptor:")
        changed = lines[:no] + [lines[no].replace(" 9", "10")] + lines[no + 1:]
        self.fails("\n".join(changed), no, "make 9 bytes but bLength is 10")

    def test_unknown_block_and_wrong_descriptor_type(self):
        text = listing("pl2303")
        self.fails(text.replace("Endpoint Descriptor:", "Billboard Capability:", 1),
                   self.line_of(text, "Endpoint Descriptor:"), "unknown descriptor block")
        self.fails(text.replace("Endpoint Descriptor:", "Endpoint Descriptor", 1),
                   self.line_of(text, r"^\s+bLength\s+7"), "a bLength line in the Interface "
                   "Descriptor of line", "header line missing")
        no = self.line_of(text, r"bDescriptorType\s+5")
        self.fails(re.sub(r"(bDescriptorType\s+)5", r"\g<1>6", text, count=1), no,
                   "bDescriptorType: 6, but a Endpoint Descriptor has 5")

    def test_not_a_listing(self):
        self.fails("hello\n", 1, "not lsusb -v output")
        self.fails("", None, "no 'Device Descriptor:'")

    def test_the_command_says_it_and_exits_4(self):
        with tempfile.TemporaryDirectory() as d:
            bad = Path(d, "bad.txt")
            bad.write_text(listing("pl2303").replace("wTotalLength           39",
                                                     "wTotalLength           40"))
            err = io.StringIO()
            with contextlib.redirect_stderr(err):
                rc = lsusb.main([str(bad)])
            self.assertEqual(rc, 4)
            self.assertRegex(err.getvalue(), r"bad\.txt:\d+: configuration 1: .*wTotalLength is 40")


class Synthesized(unittest.TestCase):
    def profile(self, name: str) -> lsusb_build.Profile:
        return lsusb.convert(SRC / lsusb_shipped.SHIPPED[name].listing, name)

    def test_plan_matches_the_capture_of_the_built_in_camera(self):
        # builtin-uvc.profile was written by the C capture (plan.c): the same
        # requests in the same order, the same defaults
        text = (lsusb_shipped.PROFILES_DIR / "builtin-uvc.profile").read_text()
        cfg = bytes.fromhex(" ".join(re.search(r"^config (.*?)\n(?=\S|\n)", text, re.S | re.M)
                                     .group(1).split()))
        got = [f"get 0x{r.type:02x} 0x{r.req:02x} 0x{r.value:04x} 0x{r.index:04x}"
               for r in lsusb_plan.plan_requests(cfg)]
        want = [" ".join(ln.split()[:5]) for ln in text.splitlines() if ln.startswith("get ")]
        self.assertEqual(got, want)
        sets, ints = lsusb_plan.plan_defaults([cfg])
        self.assertEqual(sets, [(0x21, 0x01, 0x81)])
        self.assertEqual(ints, [(0x83, "uvc-control")])

    def test_probe_control_length_follows_bcdUVC(self):
        for name, size, frame_size in (("logitech-c922", 26, 614400),
                                       ("sunplusit-hd-uvc15", 48, 1843200),
                                       ("sonix-0c45-6353", 26, 519168),
                                       ("lifecam-nx6000", 26, 202752)):
            with self.subTest(name):
                probe = [g for g in self.profile(name).gets if g.value == 0x0100 and g.index == 1]
                self.assertEqual([g.req for g in probe], [0x81, 0x82, 0x83, 0x87])
                cur = probe[0].data
                self.assertEqual(len(cur), size)
                self.assertEqual(cur[2:4], b"\x01\x01")                   # format 1, frame 1
                self.assertEqual(int.from_bytes(cur[18:22], "little"), frame_size)
                self.assertLessEqual(int.from_bytes(probe[1].data[4:8], "little"),
                                     int.from_bytes(probe[2].data[4:8], "little"))

    def test_every_announced_control_answers_with_its_size(self):
        p = self.profile("logitech-c922")
        by = {}
        for g in p.gets:
            by.setdefault((g.value, g.index), []).append(g)
        for (value, index), gs in by.items():
            if value == 0x0100 and index == 1:
                continue
            self.assertEqual([g.req for g in gs], [0x86, 0x85, 0x81, 0x82, 0x83, 0x84, 0x87])
            size = int.from_bytes(gs[1].data, "little")
            self.assertTrue(all(len(g.data) == size for g in gs[2:]), hex(value))
        # 7 camera terminal, 9 processing unit and 10+7+17+8+2+10 extension unit
        # controls: the bmControls bits (units 10 and 12 say bNumControls 7 and 11)
        self.assertEqual(len(by) - 1, 7 + 9 + 54)

    def test_hid_report_descriptors(self):
        p = self.profile("logitech-k120")
        hid = [g for g in p.gets if g.req == 0x06]
        self.assertEqual([(g.value, g.index, len(g.data)) for g in hid],
                         [(0x2200, 0, 65), (0x2200, 1, 159)])
        for g in hid:
            lsusb_answers.hid_check(g.data)
            self.assertTrue(g.comment[0].startswith("synthesized:"))

    def test_hid_endpoints_send_whole_input_reports(self):
        # plan_defaults (as plan.c's): hid where the report descriptor is known
        # and declares an input report that fits, random where it is not
        p = self.profile("logitech-k120")
        self.assertEqual(p.interrupts, [(0x81, "hid"), (0x82, "hid")])
        hid = {g.index: g.data for g in p.gets if g.req == 0x06}
        self.assertEqual(lsusb_plan.hid_input_reports(hid[0]), [(0, 8)])
        self.assertEqual(lsusb_plan.hid_input_reports(hid[1]), [(1, 4), (2, 2), (3, 3), (4, 4)])
        _, ints = lsusb_plan.plan_defaults(p.configs)
        self.assertEqual(ints, [(0x81, "random"), (0x82, "random")])
        stalled = [lsusb_answers.Get(g.type, g.req, g.value, g.index,
                                     None if g.index == 1 else g.data)
                   for g in p.gets]
        _, ints = lsusb_plan.plan_defaults(p.configs, stalled)
        self.assertEqual(ints, [(0x81, "hid"), (0x82, "random")])
        # Push/Pop, a long item skipped, malformed descriptors
        self.assertEqual(lsusb_plan.hid_input_reports(bytes.fromhex(
            "85 01 75 08 95 02 a4 85 02 95 05 81 02 b4 81 02")), [(2, 6), (1, 3)])
        self.assertEqual(lsusb_plan.hid_input_reports(bytes.fromhex(
            "75 08 95 04 fe 02 10 81 02 95 01 81 02")), [(0, 1)])
        for bad in ("75 08 95 01 81", "85 00 81 02", "b4", "a4 a4 a4 a4 a4", "fe 05 10 00"):
            self.assertIsNone(lsusb_plan.hid_input_reports(bytes.fromhex(bad)), bad)
        # longer than wMaxPacketSize: left out; full-size only when no report is longer
        self.assertEqual(lsusb_plan.hid_fitting([(1, 4), (2, 9), (3, 8), (4, 3)], 8),
                         [(1, 4), (4, 3)])
        self.assertEqual(lsusb_plan.hid_fitting([(1, 4), (3, 8)], 8), [(1, 4), (3, 8)])

    def test_a_report_descriptor_lsusb_printed_is_used(self):
        # newer lsusb, usbhid not bound: the items are printed; rebuild them
        report = lsusb_answers.HID_REPORTS["boot-keyboard-65"][0]()
        names = {(t, tag): n for t, m in lsusb_parse._HID_TAGS.items() for n, tag in m.items()}
        items, i = [], 0
        while i < len(report):
            b = report[i]
            n = (0, 1, 2, 4)[b & 3]
            data = report[i + 1:i + 1 + n]
            items.append(f"            Item({('Main', 'Global', 'Local')[b >> 2 & 3]:<6s}): "
                         f"{names[(b >> 2 & 3, b >> 4)]}, data="
                         + ("none" if not n else "[ " + " ".join(f"0x{x:02x}" for x in data)
                            + f" ] {int.from_bytes(data, 'little')}"))
            i += 1 + n
        head, sep, body = listing("logitech-k120").partition("# ---\n")
        text = head + sep + body.replace(
            "** UNAVAILABLE **", "Report Descriptor: (length is 65)\n" + "\n".join(items), 1)
        p = lsusb_build.build(lsusb_parse.parse(text, "k.txt"), "k")
        g = next(g for g in p.gets if (g.req, g.index) == (0x06, 0))
        self.assertEqual(g.data, report)
        self.assertFalse(g.comment[0].startswith("synthesized"))

    def test_cdc_and_vendor_answers(self):
        p = self.profile("stm32-cdc-acm")
        self.assertEqual([(g.type, g.req, g.data) for g in p.gets],
                         [(0xa1, 0x21, bytes.fromhex("00 c2 01 00 00 00 08"))])  # 115200 8N1
        self.assertEqual([(s.req, s.store) for s in p.sets], [(0x20, 0x21), (0x22, None),
                                                              (0x23, None)])
        p = self.profile("pl2303")
        self.assertTrue(all(g.hand for g in p.gets))
        self.assertEqual([g.value for g in p.gets if g.type == 0xc0],
                         [0x8080, 0x8484, 0x8383, 0x0080])
        self.assertEqual(p.interrupts, [(0x81, "random")])
        p = self.profile("rtl8153")
        self.assertEqual(p.interrupts, [(0x83, "random")])
        self.assertEqual([s.req for s in p.sets],
                         [0x40, 0x41, 0x42, 0x43, 0x44, 0x84, 0x86, 0x88, 0x8a])

    def test_every_answer_is_under_its_comment(self):
        for name in lsusb_shipped.SHIPPED:
            lines = ((lsusb_shipped.PROFILES_DIR / f"{name}.profile").read_text(encoding="utf-8")
                     .splitlines())
            for i, ln in enumerate(lines):
                hand_set = ln.startswith(("set 0x40", "set 0x21 0x2")) and name == "pl2303"
                if not ln.startswith("get ") and not hand_set:
                    continue
                above = next(x for x in reversed(lines[:i])
                             if not x.startswith(("get ", "set ", "\t")))
                with self.subTest(name, line=i + 1):
                    self.assertRegex(above, r"^# (synthesized|hand-written)")


class Shipped(unittest.TestCase):
    def test_profiles_are_what_the_converter_makes_today(self):
        for name, (src, dst) in lsusb_shipped.shipped_paths().items():
            with self.subTest(name):
                self.assertTrue(dst.is_file(), f"{dst} is missing; run {lsusb_shipped.REGENERATE}")
                want = lsusb_render.render(lsusb.convert(src, name))
                self.assertTrue(dst.read_text(encoding="utf-8") == want,
                                f"{dst.name} is not what harness/devices/lsusb.py makes of "
                                f"{src.name}: run {lsusb_shipped.REGENERATE} and review the diff")

    def test_the_command(self):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            self.assertEqual(lsusb.main([str(SRC / lsusb_shipped.SHIPPED["pl2303"].listing)]), 0)
        self.assertEqual(out.getvalue(),
                         (lsusb_shipped.PROFILES_DIR / "pl2303.profile").read_text())
        with tempfile.TemporaryDirectory() as d:
            dst = Path(d, "x.profile")
            self.assertEqual(lsusb.main([str(SRC / lsusb_shipped.SHIPPED["pl2303"].listing), "-o",
                                         str(dst), "--name", "my-pl2303"]), 0)
            self.assertIn("\nname my-pl2303\n", dst.read_text())
        r = subprocess.run(["python3", "-m", "harness.devices.lsusb", "--help"],
                           cwd=lsusb_shipped.REPO, capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 0)
        self.assertIn("synthesized", r.stdout)
        self.assertIn("wMaxTransferSize", r.stdout)

    def test_fake_uvc_accepts_every_shipped_profile(self):
        if not FAKE_UVC.is_file():
            r = subprocess.run(["nice", "make", "-C", str(FAKE_DEVICE)], capture_output=True,
                               text=True, timeout=600)
            if r.returncode != 0 or not FAKE_UVC.is_file():
                self.skipTest(f"fake-device/build/fake-uvc cannot be built: {r.stderr[-300:]}")
        for name, (_, dst) in lsusb_shipped.shipped_paths().items():
            with self.subTest(name):
                r = subprocess.run([str(FAKE_UVC), "--check-profile", str(dst)],
                                   capture_output=True, text=True, timeout=60)
                self.assertEqual(r.returncode, 0, r.stderr)


# ---- Against fake-device's own C (profile.c, plan.c), loaded with ctypes ---------

XFER = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_uint8, ctypes.c_uint8,
                        ctypes.c_uint16, ctypes.c_uint16, ctypes.POINTER(ctypes.c_uint8),
                        ctypes.c_uint16, ctypes.c_char_p, ctypes.c_size_t)
_LIB: list = []


def c_library():
    """fake-device/src/profile.c and plan.c as a shared library (built once)."""
    if _LIB:
        return _LIB[0]
    cc = shutil.which("cc") or shutil.which("gcc")
    if not cc:
        _LIB.append(None)
        return None
    d = tempfile.mkdtemp(prefix="test-lsusb-")
    atexit.register(shutil.rmtree, d, True)
    so = Path(d, "libprofile.so")
    r = subprocess.run([cc, "-shared", "-fPIC", "-O1", "-std=c11", "-D_GNU_SOURCE",
                        str(FAKE_DEVICE / "src" / "profile.c"), str(FAKE_DEVICE / "src" / "plan.c"),
                        "-o", str(so)], capture_output=True, text=True, timeout=300)
    lib = ctypes.CDLL(str(so)) if r.returncode == 0 else None
    if lib is not None:
        lib.profile_load_file.argtypes = [ctypes.c_char_p, ctypes.c_void_p, ctypes.c_char_p,
                                          ctypes.c_size_t]
        lib.profile_parse.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_char_p,
                                      ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t]
        lib.profile_write.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
        lib.profile_free.argtypes = [ctypes.c_void_p]
        lib.plan_capture.argtypes = [ctypes.c_void_p, XFER, ctypes.c_void_p, ctypes.c_void_p,
                                     ctypes.c_char_p, ctypes.c_size_t]
    _LIB.append(lib)
    return lib


def c_write(lib, prof) -> str:
    libc = ctypes.CDLL(None)
    libc.fopen.restype = ctypes.c_void_p
    libc.fopen.argtypes = [ctypes.c_char_p, ctypes.c_char_p]
    libc.fclose.argtypes = [ctypes.c_void_p]
    with tempfile.TemporaryDirectory() as d:
        path = Path(d, "out.profile")
        f = libc.fopen(str(path).encode(), b"w")
        lib.profile_write(f, prof)
        libc.fclose(f)
        return path.read_text(encoding="utf-8")


def speed_offset(lib) -> int:
    """Where struct profile keeps its speed: the one int that is 0..3 in four
    profiles that differ only in their speed line."""
    bufs = []
    for speed in ("low", "full", "high", "super"):
        text = (f"dmaharness-usb-profile 1\nname x\nspeed {speed}\n"
                "device 12 01 00 02 00 00 00 40 00 00 00 00 00 00 00 00 00 01\n"
                "config 09 02 09 00 00 01 00 80 32\n").encode()
        buf, err = ctypes.create_string_buffer(1 << 16), ctypes.create_string_buffer(256)
        assert lib.profile_parse(text, len(text), b"x", buf, err, 256) == 0, err.value
        bufs.append(buf.raw)
        lib.profile_free(buf)
    hits = [o for o in range(0, 4096, 4)
            if [int.from_bytes(b[o:o + 4], "little") for b in bufs] == [0, 1, 2, 3]]
    assert len(hits) == 1, hits
    return hits[0]


class AgainstTheC(unittest.TestCase):
    def setUp(self):
        self.lib = c_library()
        if self.lib is None:
            self.skipTest("fake-device/src/profile.c and plan.c cannot be built here (no cc?)")

    def test_text_is_what_profile_write_prints(self):
        for name, (_, dst) in lsusb_shipped.shipped_paths().items():
            with self.subTest(name):
                buf, err = ctypes.create_string_buffer(1 << 20), ctypes.create_string_buffer(512)
                self.assertEqual(self.lib.profile_load_file(str(dst).encode(), buf, err, 512), 0,
                                 err.value)
                canonical = c_write(self.lib, buf)
                self.lib.profile_free(buf)
                prof = lsusb.convert(SRC / lsusb_shipped.SHIPPED[name].listing, name)
                self.assertEqual(lsusb_render.render(prof, notes=False), canonical)

    def test_a_capture_of_the_replay_gives_the_profile_back(self):
        off = speed_offset(self.lib)
        speeds = {"low": 0, "full": 1, "high": 2, "super": 3}
        for name in lsusb_shipped.SHIPPED:
            with self.subTest(name):
                prof = lsusb.convert(SRC / lsusb_shipped.SHIPPED[name].listing, name)
                cb = XFER(lambda ctx, t, q, v, i, buf, n, why, wsz, p=prof:
                          self.answer(p, t, q, v, i, buf, n))
                cap = ctypes.create_string_buffer(1 << 20)
                ctypes.memmove(ctypes.addressof(cap) + off, speeds[prof.speed].to_bytes(4, "little"), 4)
                rep, err = ctypes.create_string_buffer(1 << 14), ctypes.create_string_buffer(512)
                self.assertEqual(self.lib.plan_capture(cap, cb, None, rep, err, 512), 0, err.value)
                got = c_write(self.lib, cap)
                self.lib.profile_free(cap)
                want = lsusb_render.render(prof, notes=False, capturable=True)
                self.assertEqual(got[got.index("\n# device"):], want[want.index("\n# device"):])

    @staticmethod
    def answer(p: lsusb_build.Profile, typ, req, value, index, buf, length) -> int:
        """The replayed device: its descriptors, strings and `get` lines."""
        data = None
        if (typ, req) == (0x80, 0x06):
            kind, idx = value >> 8, value & 0xff
            if kind == 1:
                data = p.device
            elif kind == 2 and idx < len(p.configs):
                data = p.configs[idx]
            elif kind == 6:
                data = p.qualifier
            elif kind == 0x0f:
                data = p.bos
            elif kind == 3 and idx == 0:
                data = bytes([4, 3]) + lsusb_answers.LANGID.to_bytes(2, "little")
            elif kind == 3:
                text = dict(p.strings).get(idx)
                if text is not None and index == lsusb_answers.LANGID:
                    u = text.encode("utf-16-le")
                    data = bytes([2 + len(u), 3]) + u
        else:
            for g in p.gets:
                if ((g.type, g.req) == (typ, req) and g.value in (None, value)
                        and g.index in (None, index)):
                    data = g.data
                    break
        if data is None:
            return -1                                        # PLAN_STALL
        n = min(length, len(data))
        for k in range(n):
            buf[k] = data[k]
        return n


if __name__ == "__main__":
    unittest.main()
