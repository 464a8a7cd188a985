import re
import shlex
import subprocess
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from harness.boot import initramfs
from harness.errors import BuildError, InputError
from harness.kernel.kbuild import Artifacts

# the guest's shell when the host has it, else the host's sh
GUEST_SH = ["/bin/busybox", "sh"] if Path("/bin/busybox").is_file() else ["sh"]


class Spec(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        d = Path(self.tmp.name)
        mods = d / "art" / "modules"
        (mods / "kernel" / "drivers" / "media").mkdir(parents=True)
        (mods / "kernel" / "drivers" / "media" / "uvcvideo.ko").write_bytes(b"\x7fELF")
        (mods / "modules.dep").write_text("kernel/drivers/media/uvcvideo.ko:\n")
        self.art = Artifacts("6.1-x", d / "art", {"kernelrelease": "6.1.192"})
        p = mock.patch.object(initramfs, "_busybox_applets", return_value=["bin/sh", "sbin/modprobe"])
        p.start()
        self.addCleanup(p.stop)

    def tearDown(self):
        self.tmp.cleanup()

    def test_spec_has_init_busybox_links_modules(self):
        lines = initramfs.spec(self.art, Path("/x/dmaharness-agent"))
        self.assertIn(f"file /init {initramfs.INIT} 0755 0 0", lines)
        self.assertIn("slink /bin/sh ../bin/busybox 0777 0 0", lines)
        self.assertIn("slink /sbin/modprobe ../bin/busybox 0777 0 0", lines)
        self.assertIn("nod /dev/console 0600 0 0 c 5 1", lines)
        self.assertIn("file /bin/dmaharness-agent /x/dmaharness-agent 0755 0 0", lines)
        mod = [l for l in lines if l.endswith("uvcvideo.ko 0644 0 0")]
        self.assertEqual(len(mod), 1)
        self.assertTrue(mod[0].startswith("file /lib/modules/6.1.192/kernel/drivers/media/uvcvideo.ko "))
        self.assertIn("dir /lib/modules/6.1.192/kernel/drivers 0755 0 0", lines)
        # directories come before the files inside them
        i_dir = lines.index("dir /lib/modules/6.1.192/kernel/drivers/media 0755 0 0")
        self.assertLess(i_dir, lines.index(mod[0]))

    def test_spec_has_failnth_next_to_the_agent(self):
        tools = Path(self.tmp.name) / "tools"
        tools.mkdir()
        (tools / "dmaharness-agent").write_bytes(b"\x7fELF agent")
        lines = initramfs.spec(self.art, tools / "dmaharness-agent")
        self.assertNotIn("dmaharness-failnth", "\n".join(lines))
        (tools / "dmaharness-failnth").write_bytes(b"\x7fELF failnth")
        lines = initramfs.spec(self.art, tools / "dmaharness-agent")
        self.assertIn(f"file /bin/dmaharness-failnth {tools / 'dmaharness-failnth'} 0755 0 0", lines)
        self.assertIn(f"file /bin/dmaharness-agent {tools / 'dmaharness-agent'} 0755 0 0", lines)
        # no agent, no guest tools at all
        self.assertNotIn("dmaharness-failnth", "\n".join(initramfs.spec(self.art, None)))

    def test_digest_follows_content(self):
        lines = initramfs.spec(self.art, None)
        a = initramfs._digest(lines)
        (self.art.modules / "modules.dep").write_text("changed\n")
        self.assertNotEqual(a, initramfs._digest(lines))

    def test_run_config_is_safe_shell(self):
        cfg = initramfs.RunConfig(modules=("uvcvideo", "evdev"), workload="shell-cmd",
                                  workload_cmd="echo 'a b' $HOME; exit 7", settle=1.5)
        text = cfg.render()
        out = subprocess.run(["sh", "-c", text + 'printf "%s|%s|%s|%s" "$MODULES" "$WORKLOAD" "$WORKLOAD_CMD" "$SETTLE"'],
                             capture_output=True, text=True).stdout
        self.assertEqual(out, "uvcvideo evdev|shell-cmd|echo 'a b' $HOME; exit 7|1.5")


class Config(unittest.TestCase):
    def test_defaults_render_what_they_did_before(self):
        cfg = initramfs.RunConfig(modules=("uvcvideo",), workload="agent", agent_args="--duration 5")
        self.assertEqual(cfg.render(), "MODULES=uvcvideo\nWORKLOAD=agent\nAGENT_ARGS='--duration 5'\n"
                                       "WORKLOAD_CMD=''\nSETTLE=0\n")
        # fail-nth settings without a driver render nothing either
        self.assertEqual(initramfs.RunConfig(fail_nth_paths=("probe",), fail_nth_max=3).render(),
                         initramfs.RunConfig().render())

    def _shell_vars(self, cfg, names):
        script = cfg.render() + "printf '%s|' " + " ".join(f'"${n}"' for n in names)
        return subprocess.run(["sh", "-c", script], capture_output=True, text=True,
                              check=True).stdout.split("|")[:-1]

    def test_fail_nth_and_kmemleak_render(self):
        cfg = initramfs.RunConfig(modules=("uvcvideo",), kmemleak="off", fail_nth_driver="uvcvideo",
                                  fail_nth_paths=("disconnect", "probe"), fail_nth_max=40)
        self.assertEqual(self._shell_vars(cfg, ["KMEMLEAK", "FAIL_NTH_DRIVER", "FAIL_NTH_PATHS", "FAIL_NTH_MAX"]),
                         ["off", "uvcvideo", "disconnect probe", "40"])
        self.assertTrue(cfg.needs_guest_tools)
        self.assertFalse(initramfs.RunConfig(workload="none").needs_guest_tools)
        self.assertTrue(initramfs.RunConfig(workload="agent").needs_guest_tools)

    def test_bad_settings_are_input_errors(self):
        u = {"fail_nth_driver": "uvcvideo"}
        for kw in ({"kmemleak": "on"}, {**u, "fail_nth_paths": ("probe", "resume")},
                   {**u, "fail_nth_paths": ()}, {**u, "fail_nth_paths": ("probe", "probe")},
                   {**u, "fail_nth_max": 0}, {"fail_nth_driver": "../x"},
                   {"fail_nth_driver": "uvc video"}):
            with self.subTest(kw=kw), self.assertRaises(InputError):
                initramfs.RunConfig(**kw)
        # without a driver the fail-nth settings are not used, nor judged
        self.assertEqual(initramfs.RunConfig(fail_nth_paths=(), fail_nth_max=0).render(),
                         initramfs.RunConfig().render())

    def test_init_defaults_match_the_config(self):
        """The init's own defaults are RunConfig's: a conf without the variables means the same."""
        init = initramfs.INIT.read_text()
        d = initramfs.RunConfig()
        self.assertIn(f'KMEMLEAK={d.kmemleak}\n', init)
        self.assertIn(f'FAIL_NTH_PATHS="{" ".join(d.fail_nth_paths)}"\n', init)
        self.assertIn(f'FAIL_NTH_MAX={d.fail_nth_max}\n', init)
        self.assertIn('FAIL_NTH_DRIVER=""\n', init)

    def test_build_agent_wants_both_tools(self):
        with tempfile.TemporaryDirectory() as d:
            agent, failnth = Path(d) / "dmaharness-agent", Path(d) / "dmaharness-failnth"
            agent.write_bytes(b"x")
            with mock.patch.object(initramfs.proc, "make", return_value=agent) as make, \
                    mock.patch.object(initramfs, "AGENT", agent), \
                    mock.patch.object(initramfs, "FAILNTH", failnth):
                with self.assertRaises(BuildError) as e:
                    initramfs.build_agent()
                self.assertIn("dmaharness-failnth", e.exception.message)
                failnth.write_bytes(b"y")
                self.assertEqual(initramfs.build_agent(), agent)
                self.assertEqual(initramfs.guest_tools(initramfs.RunConfig(fail_nth_driver="uvcvideo")), agent)
                self.assertIsNone(initramfs.guest_tools(initramfs.RunConfig()))
                self.assertEqual(make.call_count, 3)


def init_functions(*names: str) -> str:
    """The shell text of these functions of the guest init."""
    text = initramfs.INIT.read_text()
    out = []
    for name in names:
        m = re.search(rf"^{name}\(\) \{{.*?^\}}\n|^{name}\(\) \{{[^\n]*\}}\n", text, re.M | re.S)
        if not m:
            raise AssertionError(f"no function {name} in {initramfs.INIT}")
        out.append(m.group(0))
    return "".join(out)


class InitKmemleak(unittest.TestCase):
    """The init's kmemleak steps, run by the guest's shell with kmemleak's
    control file, sleep and the clock replaced."""

    LEAKS = (
        'unreferenced object 0xffff888005a1c000 (size 64):\n'
        '  comm "dmaharness-fail", pid 93, jiffies 4294937296\n'
        '  hex dump (first 32 bytes):\n'
        '    00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00  ................\n'
        '  backtrace:\n'
        '    [<ffffffff81234567>] __kmalloc+0x4a/0x90\n'
        '    [<ffffffffc0012345>] uvc_parse_control+0x1a2/0x2f0 [uvcvideo]\n'
        'unreferenced object 0xffff888005a1c400 (size 32):\n'
        '  comm "modprobe", pid 71, jiffies 4294937000\n'
        '  backtrace:\n'
        '    [<ffffffff81234567>] __kmalloc+0x4a/0x90\n'
    )

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.d = Path(self.tmp.name)
        self.addCleanup(self.tmp.cleanup)

    def run_sh(self, body: str, *, uptime_cs: int = 1000, kml_text: str = "", cmd_fails: str = "") -> tuple[str, list[str]]:
        (self.d / "kmemleak").write_text(kml_text)
        log = self.d / "log"
        for f in (log, self.d / "copy"):
            f.unlink(missing_ok=True)
        script = "\n".join([
            init_functions("say", "first_line", "uptime_cs", "sleep_until", "kmemleak_forget",
                           "kmemleak_report"),
            # the console is this shell's stdout (a pipe: each open writes on)
            "console=/dev/stdout",
            f"kml={shlex.quote(str(self.d / 'kmemleak'))}",
            f"kml_copy={shlex.quote(str(self.d / 'copy'))}",
            f"log={shlex.quote(str(log))}",
            # the clock stands still at uptime_cs; sleep and commands are logged
            f"uptime_cs() {{ cs={uptime_cs}; }}",
            'sleep() { echo "sleep $1" >> $log; }',
            f'kml_cmd() {{ echo "$1" >> $log; case " {cmd_fails} " in *" $1 "*) return 1;; esac; }}',
            body,
        ])
        r = subprocess.run(GUEST_SH + ["-c", script], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        return r.stdout, log.read_text().split("\n")[:-1] if log.exists() else []

    def test_uptime_in_centiseconds(self):
        for text, cs in (("123.05 456.78", 12305), ("7.50 1.00", 750), ("0.00 0.00", 0), ("12.10 3", 1210)):
            (self.d / "uptime").write_text(text + "\n")
            script = init_functions("first_line", "uptime_cs") + f'uptime_cs {shlex.quote(str(self.d / "uptime"))}; echo "$cs"'
            out = subprocess.run(GUEST_SH + ["-c", script], capture_output=True, text=True).stdout
            self.assertEqual(out.strip(), str(cs), text)

    def test_sleep_until(self):
        for now, want in ((1200, ["sleep 3.00"]), (1495, ["sleep 0.05"]), (1490, ["sleep 0.10"]),
                          (1500, []), (1600, [])):
            _, log = self.run_sh("sleep_until 1000 500", uptime_cs=now)
            self.assertEqual(log, want, now)

    def test_forget_scans_then_clears(self):
        console, log = self.run_sh("kmemleak_forget 800 && echo ok", uptime_cs=1000)
        self.assertEqual(log, ["sleep 3.00", "scan", "clear"])
        self.assertEqual(console, "DMAHARNESS-INIT kmemleak cleared\nok\n")
        console, log = self.run_sh("kmemleak_forget 0 || echo off", cmd_fails="clear")
        self.assertEqual(log, ["scan", "clear"])
        self.assertEqual(console, "DMAHARNESS-INIT kmemleak clear failed (disabled at run time?)\noff\n")

    def test_report_with_leaks(self):
        console, log = self.run_sh("kmemleak_report 800", uptime_cs=1000, kml_text=self.LEAKS)
        # scan, wait for 5 s of age, scan, read; found some: a second, scan, read
        self.assertEqual(log, ["scan", "sleep 3.00", "scan", "sleep 1", "scan"])
        self.assertEqual(console, "DMAHARNESS-KMEMLEAK begin\n" + self.LEAKS
                         + "DMAHARNESS-KMEMLEAK end leaks=2\n")

    def test_report_without_leaks(self):
        console, log = self.run_sh("kmemleak_report 200", uptime_cs=1000)
        self.assertEqual(log, ["scan", "scan"])
        self.assertEqual(console, "DMAHARNESS-KMEMLEAK begin\nDMAHARNESS-KMEMLEAK end leaks=0\n")

    def test_report_names_a_failed_scan(self):
        console, _ = self.run_sh("kmemleak_report 200", cmd_fails="scan", kml_text=self.LEAKS)
        self.assertTrue(console.endswith("DMAHARNESS-KMEMLEAK end leaks=2 error=scan-failed\n"), console)


if __name__ == "__main__":
    unittest.main()
