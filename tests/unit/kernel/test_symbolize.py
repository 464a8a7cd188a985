"""harness.kernel.symbolize: frames to file:line against small ELF files built here."""

import glob
import json
import os
import shutil
import subprocess
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from harness.reports import engine
from harness.kernel import symbolize
from harness.reports.engine import Report

SOURCE = """\
/* test source for harness.kernel.symbolize */
static inline __attribute__((always_inline)) int helper(int x)
{
	return x * 3 + 1;
}

int first(int x)
{
	return x + 1;
}

int second(int x)
{
	int y = x * 2;
	return helper(y);
}

__attribute__((section(".init.text"))) int setup(int x)
{
	return x - 7;
}

int main(void)
{
	return first(1) + second(2) + setup(3);
}
"""
HELPER = range(3, 6)
FIRST = range(7, 11)
SECOND = range(12, 17)
SETUP = range(18, 22)

HAVE_TOOLS = all(shutil.which(t) for t in ("gcc", "ld", "nm", "addr2line"))


def build_artifacts(root: Path, *, debug: bool = True, config: str = "CONFIG_KASAN=y\n") -> Path:
    """A fake artifacts folder under `root`: root/tree/t.c (SOURCE) built as
    its vmlinux and, joined with another object, as module fake_mod."""
    tree = root / "tree"
    tree.mkdir(exist_ok=True)
    src = tree / "t.c"
    src.write_text(SOURCE)
    art = root / ("art-g" if debug else "art")
    mod = art / "modules" / "kernel" / "drivers" / "test"
    mod.mkdir(parents=True)
    g = ["-g"] if debug else []
    subprocess.run(["gcc", *g, "-O0", "-fno-pie", "-no-pie", "-o", str(art / "vmlinux"),
                    str(src)], check=True, cwd=root)
    # Like a real .ko: objects joined with ld -r, so t.c's code does
    # not start at offset 0 of its sections.
    pad = tree / "pad.c"
    pad.write_text("int pad_a(int x) { return x * 5 - 3; }\n"
                   "__attribute__((section(\".init.text\"))) int pad_b(int x) { return x; }\n")
    for c in (pad, src):
        subprocess.run(["gcc", *g, "-O0", "-c", "-o", str(root / (c.stem + ".o")), str(c)],
                       check=True, cwd=root)
    subprocess.run(["ld", "-r", "-o", str(mod / "fake-mod.ko"), str(root / "pad.o"),
                    str(root / "t.o")], check=True, cwd=root)
    (art / "config").write_text(config)
    (art / "meta.json").write_text(json.dumps({"tree": str(tree)}))
    return art


def _sizes(path: Path) -> dict[str, int]:
    out = subprocess.run(["nm", "-S", str(path)], capture_output=True, text=True).stdout
    res = {}
    for ln in out.splitlines():
        f = ln.split()
        if len(f) == 4:
            res[f[3]] = int(f[1], 16)
    return res


class ParseTest(unittest.TestCase):
    def test_frame_forms(self):
        f = symbolize.parse_frame("uvc_status_start+0x4f/0x70 [uvcvideo]")
        self.assertEqual((f.function, f.offset, f.size, f.module),
                         ("uvc_status_start", 0x4f, 0x70, "uvcvideo"))
        f = symbolize.parse_frame(" ? foo.isra.0+0x1a/0x200")
        self.assertEqual((f.function, f.offset, f.size, f.module), ("foo.isra.0", 0x1a, 0x200, None))
        f = symbolize.parse_frame("RIP: 0010:debug_dma_check_sharing+0x3a1/0x4d0")
        self.assertEqual((f.function, f.offset), ("debug_dma_check_sharing", 0x3a1))
        f = symbolize.parse_frame("[<ffffffffa0001234>] bar+0x4/0x20 [uvcvideo 0123abcd]")
        self.assertEqual((f.function, f.module), ("bar", "uvcvideo"))
        f = symbolize.parse_frame("<TASK>")
        self.assertIsNone(f.function)
        self.assertEqual(symbolize.format_frame(f), "<TASK>")

    def test_addr2line_output(self):
        out = ("0x0000000000000010\nhelper\n/t/a.c:4\nsecond\n/t/a.c:15 (discriminator 2)\n"
               "0x0000000000000020\n??\n??:0\n"
               "0x0000000000000030\nfirst\n/t/a.c:?\n")
        got = symbolize._parse_addr2line(out)
        self.assertEqual(got[0x10], (symbolize.Location("helper", "/t/a.c", 4),
                                     symbolize.Location("second", "/t/a.c", 15)))
        self.assertEqual(got[0x20], ())
        self.assertEqual(got[0x30], (symbolize.Location("first", "/t/a.c", None),))


@unittest.skipUnless(HAVE_TOOLS, "gcc and addr2line needed")
class SymbolizeTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.root = Path(self.tmp.name)
        self.notes = []

    def tearDown(self):
        self.tmp.cleanup()

    def artifacts(self, *, debug: bool = True, config: str = "CONFIG_KASAN=y\n") -> Path:
        return build_artifacts(self.root, debug=debug, config=config)

    def sym(self, art: Path) -> symbolize.Symbolizer:
        return symbolize.Symbolizer(art, warn=self.notes.append)

    def assertIn_(self, frame, func: str, lines: range):
        self.assertEqual(frame.file, "t.c", frame)
        self.assertIn(frame.line, lines, frame)
        self.assertEqual(frame.inlined[-1].function, func)

    def test_builtin_frames(self):
        art = self.artifacts()
        sz = _sizes(art / "vmlinux")
        s = self.sym(art)
        self.assertTrue(s.available, s.reason)
        frames = s.symbolize([f"second+0x4/{sz['second']:#x}", f"first+0x4/{sz['first']:#x}",
                              "no_such_function+0x4/0x20", "<TASK>"])
        self.assertIn_(frames[0], "second", SECOND)
        self.assertIn_(frames[1], "first", FIRST)
        self.assertIsNone(frames[2].file)
        self.assertEqual(frames[2].text, "no_such_function+0x4/0x20")
        self.assertIsNone(frames[3].file)
        self.assertIn("t.c:", symbolize.format_frame(frames[0]))
        self.assertEqual(self.notes, [])

    def test_module_frames_use_sections(self):
        art = self.artifacts()
        ko = art / "modules" / "kernel" / "drivers" / "test" / "fake-mod.ko"
        sz = _sizes(ko)
        s = self.sym(art)
        # setup() is in .init.text, second() in .text, both after pad.c's
        # code: only section-relative look-ups of the symbol values work.
        frames = s.symbolize([f"setup+0x4/{sz['setup']:#x} [fake_mod]",
                              f"second+0x4/{sz['second']:#x} [fake_mod]",
                              "second+0x4/0x20 [not_loaded]"])
        self.assertIn_(frames[0], "setup", SETUP)
        self.assertIn_(frames[1], "second", SECOND)
        self.assertIsNone(frames[2].file)

    def test_inlined_and_batched(self):
        art = self.artifacts()
        size = _sizes(art / "vmlinux")["second"]
        s = self.sym(art)
        calls = []
        real = subprocess.run

        def counting(cmd, *a, **kw):
            calls.append(cmd)
            return real(cmd, *a, **kw)

        lines = [f"second+{off:#x}/{size:#x}" for off in range(1, size)]
        with mock.patch("harness.kernel.symbolize.subprocess.run", counting):
            frames = s.symbolize(lines)
            again = s.symbolize(lines)       # cached: no new process
        self.assertEqual(len(calls), 1)
        self.assertEqual(frames, again)
        chains = [[l.function for l in f.inlined] for f in frames]
        self.assertIn(["helper", "second"], chains)
        f = frames[[i for i, c in enumerate(chains) if c == ["helper", "second"]][0]]
        self.assertIn(f.line, HELPER)
        self.assertIn("inlined into second", symbolize.format_frame(f))

    def test_report_rip_is_exact(self):
        art = self.artifacts()
        size = _sizes(art / "vmlinux")["first"]
        s = self.sym(art)
        r = Report(kind="WARNING", title="WARNING in first", guilty_frame="first", stack=["first"],
                   raw=[f"RIP: 0010:first+0x4/{size:#x}"], first_line=1,
                   stack_lines=[f"first+0x4/{size:#x}", f"second+0x4/{size:#x}"])
        with mock.patch.object(s, "symbolize", wraps=s.symbolize) as spy:
            frames = s.symbolize_report(r)
            self.assertTrue(spy.call_args.kwargs["exact_first"])
            r.raw = ["Call Trace:"]
            s.symbolize_report(r)
            self.assertFalse(spy.call_args.kwargs["exact_first"])
        self.assertIn_(frames[0], "first", FIRST)
        # Without a RIP the first frame is a return address: offset - 1.
        self.assertEqual(s._target(symbolize.parse_frame("first+0x4/0x10"), False)[2]
                         - s._target(symbolize.parse_frame("first+0x4/0x10"), True)[2], -1)

    def test_no_debug_info(self):
        art = self.artifacts(debug=False)
        s = self.sym(art)
        self.assertFalse(s.available)
        self.assertIn("no debug info", s.reason)
        with mock.patch("harness.kernel.symbolize.subprocess.run", side_effect=AssertionError):
            a = s.symbolize(["second+0x4/0x20", "first+0x4/0x20 [fake_mod]"])
            s.symbolize(["second+0x4/0x20"])
        self.assertEqual([f.file for f in a], [None, None])
        self.assertEqual([f.text for f in a], ["second+0x4/0x20", "first+0x4/0x20 [fake_mod]"])
        self.assertEqual(len(self.notes), 1)

    def test_debug_info_none_config(self):
        art = self.artifacts(config="CONFIG_DEBUG_INFO_NONE=y\n")
        s = self.sym(art)
        self.assertFalse(s.available)
        self.assertIn("CONFIG_DEBUG_INFO_NONE", s.reason)
        self.assertIn(symbolize.DEBUG_CONFIG, s.reason)
        # the tree it would recompile in has no build folder (pruned): said so
        self.assertIn("cache prune", s.reason)
        self.assertIsNone(s.symbolize(["second+0x4/0x20"])[0].file)

    def test_missing_artifacts(self):
        s = self.sym(self.root / "nowhere")
        self.assertFalse(s.available)
        self.assertEqual(s.symbolize(["x+0x1/0x2"])[0].text, "x+0x1/0x2")
        self.assertEqual(len(self.notes), 1)


class RecompileRealTest(unittest.TestCase):
    """Without debug info, file:line from the frame's file recompiled with -g
    (needs a seed-case run in the cache; skipped otherwise)."""

    def setUp(self):
        runs = sorted(glob.glob(os.path.expanduser(
            os.environ.get("DMAHARNESS_CACHE", "~/.cache/dmaharness")
            + "/runs/*case-uvc-status-buffer-6.1-*/before-1/result.json")))
        for r in reversed(runs):
            art = json.loads(Path(r).read_text())["build"].get("artifacts")
            if art and os.path.isdir(art) and os.path.isfile(os.path.join(os.path.dirname(r), "console.log")):
                self.art, self.console = art, os.path.join(os.path.dirname(r), "console.log")
                tree = json.loads(Path(art, "meta.json").read_text()).get("tree", "")
                if not os.path.isfile(os.path.join(tree, "_build", "Makefile")):
                    self.skipTest(f"the seed-case variant's work tree {tree} was pruned "
                                  "(the integration seed case builds it again)")
                return
        self.skipTest("no 6.1 seed-case run with its artifacts in the cache")

    def test_driver_frames_get_file_and_line(self):
        s = symbolize.Symbolizer(self.art, warn=lambda m: None)
        self.assertFalse(s.available)            # no debug info in the build
        reps = {r.title: r for r in engine.parse(Path(self.console).read_text(errors="replace"))}
        rep = next(r for t, r in reps.items() if "in uvc_ctrl_status_event_work" in t
                   or "in uvc_v4l2_open" in t)
        frames = s.symbolize_report(rep)
        loc = symbolize.guilty_location(frames, rep.guilty_frame)
        self.assertIsNotNone(loc, [f.text for f in frames])
        self.assertRegex(loc, r"^drivers/media/usb/uvc/uvc_(ctrl|v4l2)\.c:\d+$")
        # the size guard: a frame whose printed size is not the function's is left alone
        bad = [f.text.replace("/0x", "/0x1") for f in frames if f.where][:1]
        self.assertEqual([f.where for f in s.symbolize(bad, want={rep.guilty_frame})], [None])

    def test_can_be_switched_off(self):
        os.environ["DMAHARNESS_NO_RECOMPILE"] = "1"
        try:
            s = symbolize.Symbolizer(self.art, warn=lambda m: None)
            self.assertEqual(s._recompile, 0)
        finally:
            del os.environ["DMAHARNESS_NO_RECOMPILE"]


if __name__ == "__main__":
    unittest.main()
