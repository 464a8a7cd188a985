"""harness/insnprof: the TCG plugin's block counts turned into instructions per function."""

import shutil
import subprocess
import tempfile
import unittest
from unittest import mock
from pathlib import Path
from types import SimpleNamespace

from harness import errors, pipeline
from harness.cli import main as cli
from harness.cli import common
from harness.cli import build as clibuild
from harness.boot import initramfs, insnprof, settings

SYSTEM_MAP = """\
0000000000000000 D __per_cpu_start
ffffffff81000000 T _stext
ffffffff81000000 T startup_64
ffffffff81001000 t unwind_next_frame
ffffffff81001400 T kmem_obj_find
ffffffff81001480 W weak_helper
ffffffff81002000 T _etext
ffffffff81800000 D some_data
ffffffff81f00000 T _sinittext
ffffffff81f00010 t start_kernel
ffffffff81f10000 T _einittext
"""


class Profile(unittest.TestCase):
    def setUp(self):
        self.dir = Path(tempfile.mkdtemp())
        (self.dir / "System.map").write_text(SYSTEM_MAP)
        self.syms = insnprof.Symbols.from_system_map(self.dir / "System.map")

    def write(self, name, text):
        p = self.dir / name
        p.write_text(text)
        return p

    def test_addresses_name_their_function_or_bucket(self):
        name = self.syms.name
        self.assertEqual(name(0xffffffff81001000), "unwind_next_frame")
        self.assertEqual(name(0xffffffff810013ff), "unwind_next_frame")
        self.assertEqual(name(0xffffffff81001400), "kmem_obj_find")
        self.assertEqual(name(0xffffffff81001490), "weak_helper")
        self.assertEqual(name(0xffffffff81f00020), "start_kernel")     # init text
        self.assertEqual(name(0x401000), insnprof.USER)
        self.assertEqual(name(0xffffffffa0001234), insnprof.MODULES)
        self.assertEqual(name(0xffffffff81800010), insnprof.KERNEL_OTHER)  # data, not text
        self.assertNotIn("some_data", self.syms.names)

    def test_instructions_are_block_length_times_executions(self):
        raw = self.write("p.txt", "ffffffff81001000 10 5\nffffffff81001010 3 2\n"
                                  "ffffffff81001400 4 1\n401000 7 100\n")
        prof = insnprof.by_symbol(insnprof.read_profile(raw), self.syms)
        self.assertEqual(prof, {"unwind_next_frame": 56, "kmem_obj_find": 4, insnprof.USER: 700})
        self.assertEqual(insnprof.total(prof), 760)

    def test_calls_count_entries_at_a_function_start_only(self):
        raw = self.write("p.txt", "ffffffff81001000 10 5\nffffffff81001000 2 1\n"
                                  "ffffffff81001010 3 9\nffffffff81001400 4 7\n")
        self.assertEqual(insnprof.calls(insnprof.read_profile(raw), self.syms),
                         {"unwind_next_frame": 6, "kmem_obj_find": 7})

    def test_malformed_line_names_file_and_line(self):
        raw = self.write("bad.txt", "ffffffff81001000 10 5\nffffffff81001000 ten 5\n")
        with self.assertRaises(errors.InputError) as e:
            insnprof.read_profile(raw)
        self.assertIn("bad.txt:2", str(e.exception))

    def test_map_without_text_symbols_is_refused(self):
        with self.assertRaises(errors.InputError):
            insnprof.Symbols.from_system_map(self.write("empty.map", "0 D x\n"))

    def test_per_event_cancels_what_both_runs_share(self):
        short = {"boot": 1000, "irq": 300, "gone": 5}
        long = {"boot": 1000, "irq": 900, "new": 60}
        pe = insnprof.per_event(short, long, 3)
        self.assertEqual(pe, {"boot": 0, "irq": 200, "gone": -5 / 3, "new": 20})
        with self.assertRaises(errors.InputError):
            insnprof.per_event(short, long, 0)

    def test_summarize_writes_every_function_and_returns_the_top(self):
        raw = self.write("insnprof.txt", "ffffffff81001000 10 5\nffffffff81001400 4 1\n401000 1 1\n")
        s = insnprof.summarize(raw, self.dir, top=2)
        self.assertEqual(s["instructions"], 55)
        self.assertEqual([t["symbol"] for t in s["top"]], ["unwind_next_frame", "kmem_obj_find"])
        self.assertAlmostEqual(s["top"][0]["share"], 50 / 55, places=3)
        self.assertEqual(insnprof.load(s["file"]), {"unwind_next_frame": 50, "kmem_obj_find": 4,
                                                     insnprof.USER: 1})
        self.assertEqual(insnprof.load(s["file"], "calls"), {"unwind_next_frame": 5, "kmem_obj_find": 1})
        with self.assertRaises(errors.InputError):
            insnprof.load(self.write("old.json", '{"f": 1}'), "calls")
        self.assertIsNone(insnprof.summarize(self.dir / "missing.txt", self.dir))

    @unittest.skipUnless(shutil.which("cc"), "needs a C compiler to make a module")
    def test_module_code_is_named_from_its_ko_and_load_address(self):
        ko = self.dir / "modules" / "kernel" / "drivers" / "my-mod.ko"
        ko.parent.mkdir(parents=True)
        src = self.dir / "m.c"
        src.write_text("int first(int x) { return x * 3 + 1; }\n"
                       "int second(int x) { return x * x - 7; }\n")
        subprocess.run(["cc", "-O2", "-c", "-o", str(ko), str(src)], check=True)
        nm = subprocess.run(["nm", str(ko)], capture_output=True, text=True, check=True).stdout
        off = {line.split()[2]: int(line.split()[0], 16) for line in nm.splitlines()
               if line.split()[1:2] == ["T"]}
        base = 0xffffffffa0002000
        console = f"boot...\nDMAHARNESS-INIT module-text my_mod=0x{base:x} gone=0xffffffffa0100000\n"
        self.syms.add_modules(console, self.dir)
        self.assertEqual(self.syms.name(base + off["first"]), "first [my_mod]")
        self.assertEqual(self.syms.name(base + off["second"] + 2), "second [my_mod]")
        self.assertEqual(self.syms.name(base + 0x10000), insnprof.MODULES)     # past its .text
        self.assertEqual(self.syms.name(0xffffffffa0100000), insnprof.MODULES)  # no .ko for it
        # and through summarize(), with the console of the boot
        raw = self.write("insnprof.txt", f"{base + off['second']:x} 5 2\n")
        (self.dir / "console.log").write_text(console)
        s = insnprof.summarize(raw, self.dir, self.dir / "console.log")
        self.assertEqual(s["top"][0]["symbol"], "second [my_mod]")
        self.assertEqual(insnprof.load(s["file"], "calls"), {"second [my_mod]": 2})

    def test_comma_in_output_path_is_refused(self):
        """QEMU splits -plugin's argument at commas."""
        with self.assertRaises(errors.InputError):
            insnprof.qemu_opts(Path("/tmp/a,b/insnprof.txt"))
        self.assertEqual(insnprof.qemu_opts(Path("/r/insnprof.txt"))[1].split(",")[1], "out=/r/insnprof.txt")


class Cli(unittest.TestCase):
    def test_option_parsed_and_refused_with_kvm(self):
        a = cli.parser().parse_args(["boot", "--kernel", "6.1", "--insn-count", "--accel", "kvm"])
        self.assertTrue(a.insn_profile)             # the run setting keeps its name
        self.assertEqual(common.flags(a)["insn_profile"], True)
        self.assertFalse(settings.resolve(common.flags(
            cli.parser().parse_args(["run", "--kernel", "6.1"])))[0].insn_profile)
        b = settings.resolve(common.flags(a))[0]
        res = SimpleNamespace(artifacts=SimpleNamespace(config=Path("/nonexistent/config")))
        job = pipeline.BootJob(res, Path("/tmp"), initramfs.RunConfig(), b, "boot")
        with mock.patch.object(pipeline, "initrd_for", return_value=Path("/tmp/initrd")), \
                self.assertRaises(errors.InputError) as e:
            pipeline.boot(job, None)
        self.assertIn("TCG", str(e.exception))

    def test_profile_lines(self):
        self.assertEqual(clibuild._profile_lines({}), "")
        self.assertIn("none", clibuild._profile_lines({"insn_profile": None}))
        text = clibuild._profile_lines({"insn_profile": {"instructions": 1234, "file": "/r/insnprof.json",
                                                    "top": [{"symbol": "f", "share": 0.5}]}})
        self.assertIn("1,234", text)
        self.assertIn("f 50.0%", text)
        self.assertIn("/r/insnprof.json", text)


if __name__ == "__main__":
    unittest.main()
