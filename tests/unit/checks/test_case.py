"""harness.checks.case: loading and validating case.toml files."""

import tempfile
import textwrap
import unittest
from pathlib import Path

from harness.boot import settings
from harness.checks.case import load_case
from harness.errors import InputError

GOOD = """\
name = "uvc-status-buffer"
description = "status[] shares cache lines with struct uvc_device"
seed = "a31a4055473b"
[run]
flood = "control:max"
duration = "20s"
cycle_hz = 2
phys_hz = 200
[[variants]]
name = "before"
role = "before"
patches = ["0001-x.patch"]
[[variants]]
name = "fix"
role = "after"
patches = ["0001-x.patch", "fix/0002-y.patch"]
[[variants]]
name = "fix-aligned"
role = "after"
patches = ["0001-x.patch"]
[expect]
fixed = ["^DMA-API: .* in uvc_status_start$"]
new_allowed = []
"""


class CaseTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = Path(self.tmp.name) / "cases" / "uvc"
        (self.dir / "fix").mkdir(parents=True)
        (self.dir / "0001-x.patch").write_text("x\n")
        (self.dir / "fix" / "0002-y.patch").write_text("y\n")

    def tearDown(self):
        self.tmp.cleanup()

    def write(self, text: str) -> Path:
        p = self.dir / "case.toml"
        p.write_text(textwrap.dedent(text))
        return p

    def error(self, text: str) -> str:
        p = self.write(text)
        with self.assertRaises(InputError) as cm:
            load_case(p)
        self.assertIn(str(p), cm.exception.message)
        return cm.exception.message

    def test_good_case(self):
        c = load_case(self.write(GOOD))
        self.assertEqual(c.name, "uvc-status-buffer")
        self.assertEqual(c.seed, "a31a4055473b")
        self.assertEqual(c.run["flood"].pattern, "control")
        self.assertEqual(c.run["flood"].rate, "max")
        self.assertEqual(c.run["duration"], 20.0)
        self.assertEqual(c.run["cycle_hz"], 2.0)
        self.assertEqual(c.before.name, "before")
        self.assertEqual([v.name for v in c.afters], ["fix", "fix-aligned"])
        fix = c.variant("fix")
        self.assertEqual([p.path for p in fix.patches],
                         [(self.dir / "0001-x.patch").resolve(),
                          (self.dir / "fix" / "0002-y.patch").resolve()])
        self.assertTrue(all(p.path.is_absolute() for p in fix.patches))
        self.assertIn("variants[1].patches[1]", fix.patches[1].origin)
        self.assertTrue(c.expect.fixed[0].search(
            "DMA-API: mapping shares a cache line with CPU-owned data in uvc_status_start"))
        self.assertFalse(c.expect.fixed[0].search("DMA-API: x in uvc_status_stop"))
        self.assertEqual(c.expect.new_allowed, ())

    def test_folder_accepted(self):
        self.write(GOOD)
        self.assertEqual(load_case(self.dir).name, "uvc-status-buffer")

    def test_run_defaults(self):
        text = GOOD.split("[run]")[0] + "[[variants]]" + GOOD.split("[[variants]]", 1)[1]
        c = load_case(self.write(text))
        self.assertEqual(c.run, {})
        b, f = settings.resolve(c.run)
        self.assertEqual((f.duration, f.flood.pattern, f.cycle_hz), (20.0, "control", 0.0))

    def test_run_takes_every_run_setting(self):
        c = load_case(self.write(GOOD.replace('phys_hz = 200\n', 'phys_hz = 200\nhotplug = 3\n'
                                              'cameras = 2\nseed = 7\nsmp = 2\n'
                                              'append = "kasan_multi_shot"\n'
                                              'agent_args = "--batch 2"\n')))
        b, f = settings.resolve(c.run)
        self.assertEqual((f.hotplug, f.cameras, f.seed, f.agent_args), (3.0, 2, 7, "--batch 2"))
        self.assertEqual((b.smp, b.append), (2, "kasan_multi_shot"))

    def test_flags_win_over_the_case_and_the_case_over_defaults(self):
        c = load_case(self.write(GOOD))
        b, f = settings.resolve(c.run, {"duration": 4.0, "smp": 2})
        self.assertEqual((f.duration, f.flood.rate, f.phys_hz, b.smp), (4.0, "max", 200.0, 2))

    def test_bad_run_values_name_the_key(self):
        for bad, key in (('cameras = 0', "run.cameras"), ('seed = "x"', "run.seed"),
                         ('smp = 1.5', "run.smp"), ('duration = "soon"\nflood = "x"', "run."),
                         ('hotplug = -1', "run.hotplug"), ('accel = "kvm"', "run.accel")):
            text = GOOD.replace('flood = "control:max"\nduration = "20s"\n', '') \
                if bad.startswith("duration") else GOOD
            msg = self.error(text.replace('cycle_hz = 2\n', bad + '\n'))
            self.assertIn(key, msg)
        msg = self.error(GOOD.replace('"control:max"', '"nope"'))
        self.assertIn("run.flood", msg)
        self.assertIn("unknown pattern", msg)

    def test_kernel_config_asks_options_that_must_be_named_plainly(self):
        case = load_case(self.write(GOOD + '[kernel]\nconfig = ["CONFIG_USB_ACM=m", '
                                    '"CONFIG_FOO=n"]\n'))
        self.assertEqual(case.config, ("CONFIG_USB_ACM=m", "CONFIG_FOO=n"))
        from harness.checks.case import config_fragment_text
        text = config_fragment_text(case)
        self.assertIn("\nCONFIG_USB_ACM=m\n", text)
        self.assertIn("# CONFIG_FOO is not set", text)
        for bad in ('"CONFIG_X=maybe"', '"usb_acm=m"', '"CONFIG_X=m\\nCONFIG_Y=y"',
                    '"CONFIG_X=m", "CONFIG_X=y"', '"$(shell id)"'):
            self.assertIn("kernel", self.error(GOOD + f"[kernel]\nconfig = [{bad}]\n"))
        self.assertIn("kernel.cfg", self.error(GOOD + '[kernel]\ncfg = []\nconfig = []\n'))
        self.assertIn("twice", self.error(GOOD + '[kernel]\nconfig = ["CONFIG_A=m"]\n'
                                          'depends = ["CONFIG_A=y"]\n'))
        case = load_case(self.write(GOOD + '[kernel]\nconfig = ["CONFIG_A=m"]\n'
                                    'depends = ["CONFIG_B=m"]\n'))
        self.assertEqual((case.config, case.depends), (("CONFIG_A=m",), ("CONFIG_B=m",)))
        dep = config_fragment_text(case, depends=True)
        self.assertTrue(dep.startswith("# best-effort"))
        self.assertIn("\nCONFIG_B=m\n", dep)

    def test_the_kernel_of_a_case_with_devices_and_config(self):
        """A case with device profiles builds what `run --device` builds (the
        profiles' fragment), then its own kernel.config; without either, the
        profile's kernel unchanged."""
        import os
        from unittest import mock
        from harness import pipeline
        from harness.checks import caserun
        from harness.devices import usbdevices
        with mock.patch.dict(os.environ, {"DMAHARNESS_CACHE": str(Path(self.tmp.name) / "c")}):
            t = pipeline.target(pipeline.VariantSpec(kernel="7.3"))
            plain = load_case(self.write(GOOD))
            self.assertEqual(caserun.case_kernel(plain, t, usb=False).frags, t.frags)
            case = load_case(self.write(GOOD + '[kernel]\nconfig = ["CONFIG_USB_TMC=m"]\n'
                                        'depends = ["CONFIG_USB_SERIAL=m"]\n'))
            got = caserun.case_kernel(case, t, usb=True).frags
        self.assertEqual(got[:len(t.frags)], t.frags)
        self.assertEqual(got[len(t.frags)].path, usbdevices.FRAGMENT)
        self.assertEqual(dict(got[-2].options), {"CONFIG_USB_SERIAL": "m"})
        self.assertTrue(got[-2].best_effort)            # a dependency: asked
        self.assertEqual(dict(got[-1].options), {"CONFIG_USB_TMC": "m"})
        self.assertFalse(got[-1].best_effort)           # the driver: it must stick

    def test_modules_are_module_names_only(self):
        case = load_case(self.write(GOOD.replace('cycle_hz = 2\n',
                                                 'modules = ["usbtmc", "cdc-acm"]\n')))
        self.assertEqual(case.run["modules"], ("usbtmc", "cdc-acm"))
        for bad in ('["../x"]', '["a b"]', '["/lib/modules/x.ko"]', '[""]'):
            self.assertIn("run.", self.error(GOOD.replace('cycle_hz = 2\n',
                                                          f'modules = {bad}\n')))

    def test_patch_outside_the_case_folder_is_refused(self):
        outside = Path(self.tmp.name) / "elsewhere.patch"
        outside.write_text("x\n")
        msg = self.error(GOOD.replace('"fix/0002-y.patch"', '"../../elsewhere.patch"'))
        self.assertIn("outside the case's folder", msg)
        self.assertIn("variants[1].patches[1]", msg)

    def test_missing_file(self):
        with self.assertRaises(InputError) as cm:
            load_case(self.dir / "nope.toml")
        self.assertIn("nope.toml", cm.exception.message)

    def test_bad_toml(self):
        self.assertIn("not valid TOML", self.error("name = \n"))

    def test_bad_regex(self):
        msg = self.error(GOOD.replace('fixed = ["^DMA', 'fixed = ["(DMA'))
        self.assertIn("expect.fixed[0]", msg)
        self.assertIn("bad regular expression", msg)

    def test_no_before(self):
        msg = self.error(GOOD.replace('role = "before"', 'role = "after"'))
        self.assertIn("variants", msg)
        self.assertIn("before", msg)

    def test_two_befores(self):
        msg = self.error(GOOD.replace('name = "fix"\nrole = "after"', 'name = "fix"\nrole = "before"'))
        self.assertIn("found 2", msg)

    def test_no_after(self):
        text = GOOD.split("[[variants]]\nname = \"fix\"")[0] + "[expect]\nfixed = []\n"
        self.assertIn("after", self.error(text))

    def test_bad_role(self):
        msg = self.error(GOOD.replace('role = "before"', 'role = "baseline"'))
        self.assertIn("variants[0].role", msg)

    def test_missing_patch(self):
        msg = self.error(GOOD.replace("fix/0002-y.patch", "fix/0003-z.patch"))
        self.assertIn("variants[1].patches[1]", msg)
        self.assertIn("0003-z.patch", msg)

    def test_unknown_keys(self):
        self.assertIn("colour", self.error("colour = 1\n" + GOOD))
        self.assertIn("run.flod", self.error(GOOD.replace("flood =", "flod =")))
        self.assertIn("variants[0].patch", self.error(GOOD.replace(
            'patches = ["0001-x.patch"]\n[[variants]]\nname = "fix"',
            'patch = ["0001-x.patch"]\n[[variants]]\nname = "fix"')))
        self.assertIn("expect.allowed", self.error(GOOD.replace("new_allowed", "allowed")))

    def test_missing_keys(self):
        self.assertIn("name: missing", self.error(GOOD.replace('name = "uvc-status-buffer"\n', "")))
        self.assertIn("expect", self.error(GOOD.split("[expect]")[0]))

    def test_bad_run_values(self):
        self.assertIn("run.flood", self.error(GOOD.replace("control:max", "lava:max")))
        self.assertIn("run.duration", self.error(GOOD.replace('"20s"', '"soon"')))
        self.assertIn("run.cycle_hz", self.error(GOOD.replace("cycle_hz = 2", "cycle_hz = -1")))

    def test_names_that_would_make_a_path_are_refused(self):
        """A case travels by mail: its names become run folders, so none may escape."""
        for bad in ("/../../../../elsewhere/ESCAPED", "..", "a/b", "", " x", "x\\u0000", "-x",
                    "x" * 129):
            msg = self.error(GOOD.replace('name = "uvc-status-buffer"', f"name = {bad!r}"
                                          .replace("'", '"')))
            self.assertIn("name", msg, bad)
            msg = self.error(GOOD.replace('name = "fix-aligned"', f"name = {bad!r}".replace("'", '"')))
            self.assertIn("variants[2].name", msg, bad)

    def test_non_finite_and_huge_numbers_are_refused(self):
        for key, bad in (("cycle_hz", "nan"), ("cycle_hz", "inf"), ("cycle_hz", "1e309"),
                         ("phys_hz", "+inf")):
            msg = self.error(GOOD.replace("cycle_hz = 2", f"{key} = {bad}")
                             .replace("phys_hz = 200\n", "") if key == "phys_hz" else
                             GOOD.replace("cycle_hz = 2", f"{key} = {bad}"))
            self.assertIn(f"run.{key}", msg, bad)
        for flag in ("duration", "timeout", "silence", "hotplug", "cycle_hz"):
            for bad in ("nan", "inf", "1e309", "9" * 400):
                with self.assertRaises(InputError, msg=f"--{flag} {bad}"):
                    settings.SETTINGS[flag].parse(bad)

    def test_duplicate_variant(self):
        msg = self.error(GOOD.replace('name = "fix-aligned"', 'name = "fix"'))
        self.assertIn("duplicate", msg)

    def test_unknown_variant_lookup(self):
        c = load_case(self.write(GOOD))
        with self.assertRaises(InputError):
            c.variant("fix-coherent")

    # --- [devices] catalogue and expect.sites (issue #26) ---------------------------

    DEVICES = GOOD.split("[run]")[0] + textwrap.dedent("""\
        [run]
        duration = "10s"
        timeout = 90
        [devices]
        catalogue = ["virtio-scsi", "virtio-blk"]
        """) + "[[variants]]" + GOOD.split("[[variants]]", 1)[1].replace(
        "new_allowed = []", 'new_allowed = []\nsites = ["virtscsi_kick_event sharing '
        'kmalloc-4k+2168:16 DMA_FROM_DEVICE"]')

    def test_devices_and_sites(self):
        c = load_case(self.write(self.DEVICES))
        self.assertEqual(c.catalogue, ("virtio-scsi", "virtio-blk"))
        self.assertEqual(c.expect.sites,
                         ("virtscsi_kick_event sharing kmalloc-4k+2168:16 DMA_FROM_DEVICE",))
        self.assertEqual(load_case(self.write(GOOD)).catalogue, ())

    def test_devices_refuse_the_camera_settings(self):
        msg = self.error(self.DEVICES.replace('timeout = 90', 'timeout = 90\ncycle_hz = 2'))
        self.assertIn("run.cycle_hz", msg)
        self.assertIn("not the cameras", msg)

    def test_bad_devices(self):
        for table, word in (('catalogue = []', "at least one"),
                            ('catalogue = ["../x"]', "not a catalogue entry"),
                            ('catalogue = ["a", "a"]', "twice"),
                            ('catalogue = "virtio-scsi"', "list of strings"),
                            ('names = ["x"]', "unknown key"),
                            ('', "devices.catalogue: missing")):
            text = self.DEVICES.replace('catalogue = ["virtio-scsi", "virtio-blk"]', table)
            self.assertIn(word, self.error(text), table)

    def test_bad_site_key(self):
        msg = self.error(self.DEVICES.replace("kmalloc-4k+2168:16 DMA_FROM_DEVICE", "x"))
        self.assertIn("expect.sites[0]", msg)
        self.assertIn("not a site key", msg)


if __name__ == "__main__":
    unittest.main()
