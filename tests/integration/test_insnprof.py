"""Integration: the instruction profiler (bench/insnprof) on a real camera flood.

The plugin is built against the installed QEMU's plugin API, loaded into
a real TCG boot (with the fake camera) of the default 6.1 harness kernel (cached from the boot
tests), and its counts are attributed to the variant's functions.
"""

import json
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

from harness.boot import insnprof

ROOT = Path(__file__).resolve().parents[2]
CLI = [sys.executable, str(ROOT / "dmaharness")]


class InsnProfile(unittest.TestCase):
    def test_flood_profile_names_kernel_functions(self):
        r = subprocess.run(CLI + ["run", "--kernel", "6.1", "--insn-profile", "--flood", "control:max",
                                  "--duration", "1s", "--json"], capture_output=True, text=True, timeout=3600)
        self.assertEqual(r.returncode, 0, f"{r.stdout}\n{r.stderr[-3000:]}")
        out = json.loads(r.stdout)
        self.assertEqual(out["accel"], "tcg")
        prof = out["insn_profile"]
        self.assertIsNotNone(prof, "QEMU wrote no profile at exit")
        full = insnprof.load(prof["file"])
        self.assertEqual(sum(full.values()), prof["instructions"])
        # a KASAN boot runs hundreds of millions of instructions
        self.assertGreater(prof["instructions"], 1e8)
        # init text, the init and the agent in user space
        for name in ("start_kernel", "kernel_init", insnprof.USER):
            self.assertGreater(full.get(name, 0), 0, name)
        # uvcvideo is a module: its functions are named from uvcvideo.ko and the
        # load address the init printed; its status handler ran for every status packet
        calls = insnprof.load(prof["file"], "calls")
        self.assertGreaterEqual(calls.get("uvc_status_complete [uvcvideo]", 0),
                                out["summary"]["guest_events_emitted"] // 2, calls)
        self.assertGreater(calls.get("uvc_ctrl_status_event_work [uvcvideo]", 0), 0)
        # the detector of the harness kernel checks the status URB's maps
        self.assertGreater(out["summary"]["guest_events_emitted"], 0)
        self.assertGreater(full.get("dma_debug_cl_check_map", 0), 0)
        self.assertGreater(full.get("kasan_check_range", 0), 0)
        # the top list is sorted and its shares add up to at most 1
        tops = [t["instructions"] for t in prof["top"]]
        self.assertEqual(tops, sorted(tops, reverse=True))
        self.assertLessEqual(sum(t["share"] for t in prof["top"]), 1.0)

    def test_plugin_refuses_an_unknown_argument(self):
        plugin = insnprof.build_plugin()
        with tempfile.TemporaryDirectory() as d:
            r = subprocess.run(["qemu-system-x86_64", "-machine", "none", "-display", "none",
                                "-plugin", f"{plugin},bogus=1,out={d}/p.txt"],
                               capture_output=True, text=True, timeout=60)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("insnprof: unknown argument 'bogus=1'", r.stderr)


if __name__ == "__main__":
    unittest.main()
