import re
import tempfile
import unittest
from pathlib import Path

from harness.kernel import fragments
from harness.errors import InputError

ROOT = Path(__file__).resolve().parents[3]


def _write(folder: Path, name: str, text: str) -> Path:
    p = folder / name
    p.write_text(text)
    return p


class FragmentParsing(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = Path(self.tmp.name)

    def tearDown(self):
        self.tmp.cleanup()

    def test_values_and_not_set(self):
        f = fragments.parse_fragment(_write(self.dir, "a.config",
                                            "# comment\nCONFIG_A=y\n\n# CONFIG_B is not set\n"
                                            "CONFIG_C=\"str\"\nCONFIG_D=128\n"))
        self.assertEqual(dict(f.options), {"CONFIG_A": "y", "CONFIG_B": "n",
                                           "CONFIG_C": '"str"', "CONFIG_D": "128"})
        self.assertEqual(f.name, "a")

    def test_garbage_line_names_file_and_line(self):
        p = _write(self.dir, "bad.config", "CONFIG_A=y\nKASAN=y\n")
        with self.assertRaises(InputError) as cm:
            fragments.parse_fragment(p)
        self.assertIn("bad.config:2", cm.exception.message)

    def test_missing_fragment(self):
        with self.assertRaises(InputError):
            fragments.parse_fragment(self.dir / "nope.config")

    def test_later_fragment_wins(self):
        a = fragments.parse_fragment(_write(self.dir, "a.config", "CONFIG_X=y\nCONFIG_Y=y\n"))
        b = fragments.parse_fragment(_write(self.dir, "b.config", "# CONFIG_X is not set\n"))
        req = fragments.requested([a, b])
        self.assertEqual(req["CONFIG_X"], ("n", "b"))
        self.assertEqual(req["CONFIG_Y"], ("y", "a"))

    def test_verify_finds_lost_and_changed_options(self):
        a = fragments.parse_fragment(_write(self.dir, "a.config",
                                            "CONFIG_KASAN=y\nCONFIG_DMA_API_DEBUG=y\n"
                                            "# CONFIG_GONE is not set\nCONFIG_NR=4\n"))
        config = ("CONFIG_KASAN=y\n# CONFIG_DMA_API_DEBUG is not set\nCONFIG_NR=8\n")
        bad = {m.option: m for m in fragments.verify(config, [a])}
        self.assertEqual(set(bad), {"CONFIG_DMA_API_DEBUG", "CONFIG_NR"})
        self.assertEqual(bad["CONFIG_DMA_API_DEBUG"].got, "n")
        self.assertEqual(bad["CONFIG_NR"].got, "8")
        self.assertIn("from a.config", bad["CONFIG_NR"].describe())

    def test_a_best_effort_fragment_asks_and_does_not_require(self):
        a = fragments.parse_fragment(_write(self.dir, "a.config", "CONFIG_USB=y\nCONFIG_X=m\n"))
        b = fragments.parse_fragment(_write(self.dir, "b.config",
                                            "# best-effort: candidates\nCONFIG_DRV=m\n"
                                            "CONFIG_USB=y\nCONFIG_X=y\n"))
        self.assertTrue(b.best_effort and not a.best_effort)
        self.assertNotEqual(b.digest(), fragments.parse_fragment(_write(
            self.dir, "c.config", "CONFIG_DRV=m\nCONFIG_USB=y\nCONFIG_X=y\n")).digest())
        # CONFIG_DRV lost: fine; CONFIG_USB still required (a asks it plainly);
        # CONFIG_X: b's later value differs from a's, so neither is required
        self.assertEqual(fragments.verify("CONFIG_X=y\n", [a, b])[0].option, "CONFIG_USB")
        self.assertEqual(fragments.verify("CONFIG_USB=y\n", [a, b]), [])
        self.assertEqual(fragments.drifted("CONFIG_USB=y\n", [a, b]), [])

    def test_tristates_of_a_tree(self):
        root = self.dir / "tree"
        (root / "drivers" / "usb" / "serial").mkdir(parents=True)
        (root / "drivers" / "input").mkdir(parents=True)
        (root / "drivers" / "usb" / "serial" / "Kconfig").write_text(
            "menuconfig USB_SERIAL\n\ttristate \"USB Serial\"\n\tdepends on USB\n"
            "if USB_SERIAL\nconfig USB_SERIAL_FTDI_SIO\n\ttristate \"FTDI\"\n"
            "\thelp\n\t  config FAKE\n\t  tristate \"in a help text\"\n"
            "config USB_SERIAL_GENERIC\n\tbool \"generic\"\n"
            "config USB_SERIAL_WWAN\n\ttristate\nendif\n")
        (root / "drivers" / "input" / "Kconfig").write_text(
            "menuconfig INPUT_TABLET\n\tbool \"Tablets\"\nif INPUT_TABLET\n"
            "config TABLET_USB_ACECAD\n\ttristate \"Acecad\"\n\tdepends on USB_ARCH_HAS_HCD\n"
            "config TABLET_SERIAL_WACOM4\n\ttristate \"serial\"\n\tdepends on SERIO\nendif\n")
        self.assertEqual([s for s, *_ in fragments.tristates(root, ("drivers/usb/serial",))],
                         ["USB_SERIAL", "USB_SERIAL_FTDI_SIO"])    # no bool, no promptless
        self.assertEqual([s for s, *_ in fragments.tristates(root, ("drivers/input",), r"\bUSB")],
                         ["TABLET_USB_ACECAD"])
        self.assertEqual(fragments.tristates(root, ("drivers/nothing",)), [])
        self.assertEqual([k for *_, k in fragments.tristates(root, ("drivers/usb/serial",))],
                         ["tristate", "tristate"])

    def test_verify_clean(self):
        a = fragments.parse_fragment(_write(self.dir, "a.config", "CONFIG_A=m\n"))
        self.assertEqual(fragments.verify("CONFIG_A=m\n", [a]), [])

    def test_repository_fragments_parse(self):
        names = [f.name for f in fragments.default_fragments()]
        self.assertEqual(names[0], "base")
        for n in ("kasan", "dma-debug", "usb-uvc"):
            self.assertIn(n, names)
        req = fragments.requested(fragments.default_fragments())
        self.assertEqual(req["CONFIG_KASAN"][0], "y")
        self.assertEqual(req["CONFIG_DMA_API_DEBUG"][0], "y")
        self.assertEqual(req["CONFIG_USB_VIDEO_CLASS"][0], "m")


class Explain(unittest.TestCase):
    """Why an option did not stick, read from a small fake Kconfig tree."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        root = Path(self.tmp.name)
        (root / "lib").mkdir()
        (root / "lib" / "Kconfig.debug").write_text(
            "config FOO\n\tbool \"Foo\"\n\tdepends on BAR && !BAZ\n\thelp\n\t  config text\n\n"
            "config HIDDEN\n\tbool\n\tdefault n\n\n"
            "menuconfig BAR\n\tbool \"Bar\"\n\tselect HIDDEN\n\nconfig SEL2\n\tbool \"s\"\n\tselect FOO\n")
        (root / "lib" / "Kconfig.kasan").write_text(
            "menuconfig KASAN\n\tbool \"KASAN\"\n\thelp\n\t  if you enable this\n\t  config text\n\n"
            "if KASAN\n\nconfig KASAN_INLINE\n\tbool \"inline\"\n\tdepends on !ARCH_NO_INLINE\n\n"
            "endif # KASAN\n\nconfig AFTER\n\tbool \"after\"\n")
        (root / "arch" / "arm").mkdir(parents=True)
        (root / "arch" / "arm" / "Kconfig").write_text("config ARMONLY\n\tbool \"arm\"\n")
        self.root = root

    def tearDown(self):
        self.tmp.cleanup()

    def test_reasons(self):
        mism = [fragments.Mismatch("CONFIG_FOO", "y", "n", "x"),
                fragments.Mismatch("CONFIG_HIDDEN", "y", "n", "x"),
                fragments.Mismatch("CONFIG_NOPE", "y", "n", "x"),
                fragments.Mismatch("CONFIG_ARMONLY", "y", "n", "x")]
        out = {m.option: m.why for m in fragments.explain(self.root, "# CONFIG_BAR is not set\n",
                                                           mism, "6.1")}
        self.assertIn("depends on BAR && !BAZ", out["CONFIG_FOO"])
        self.assertIn("not set here: BAR", out["CONFIG_FOO"])
        self.assertNotIn("BAZ,", out["CONFIG_FOO"])
        self.assertIn("lib/Kconfig.debug", out["CONFIG_FOO"])
        self.assertIn("no prompt", out["CONFIG_HIDDEN"])
        self.assertIn("unknown to linux 6.1", out["CONFIG_NOPE"])
        # another architecture's Kconfig does not count as defining it
        self.assertIn("unknown", out["CONFIG_ARMONLY"])

    def test_enclosing_if_block_is_a_dependency(self):
        mism = [fragments.Mismatch("CONFIG_KASAN_INLINE", "y", "n", "x"),
                fragments.Mismatch("CONFIG_AFTER", "y", "n", "x")]
        out = {m.option: m.why for m in fragments.explain(self.root, "# CONFIG_KASAN is not set\n",
                                                           mism, "6.1")}
        self.assertIn("not set here: KASAN", out["CONFIG_KASAN_INLINE"])
        self.assertIn("!ARCH_NO_INLINE", out["CONFIG_KASAN_INLINE"])
        # the help text's "if you enable this" opened no block; endif closed it
        self.assertNotIn("KASAN", out["CONFIG_AFTER"])

    def test_selected_option_names_its_selector(self):
        mism = [fragments.Mismatch("CONFIG_FOO", "n", "y", "x")]
        out = fragments.explain(self.root, "CONFIG_SEL2=y\nCONFIG_BAR=y\n", mism, "6.1")[0].why
        self.assertIn("selected by SEL2", out)
        self.assertNotIn("depends on", out)

    def test_where_defined_excuses_only_an_unknown_symbol(self):
        tmp = Path(self.tmp.name)
        frag = fragments.parse_fragment(_write(tmp, "w.config",
                                               "# where-defined: new in 6.2\nCONFIG_NOPE=y\n"
                                               "# where-defined: defined here, so it must stick\n"
                                               "CONFIG_FOO=y\nCONFIG_GONE=y\n"))
        self.assertEqual(frag.where_defined, {"CONFIG_NOPE", "CONFIG_FOO"})
        config = "# CONFIG_BAR is not set\n"
        bad = fragments.explain(self.root, config, fragments.verify(config, [frag]), "6.1")
        ok = fragments.excused(bad, [frag])
        # NOPE is unknown to the tree: excused; FOO is defined (its dependency
        # is off): not excused; GONE is unknown but asked plainly: not excused
        self.assertEqual([m.option for m in ok], ["CONFIG_NOPE"])
        self.assertEqual({m.option for m in bad} - {m.option for m in ok},
                         {"CONFIG_FOO", "CONFIG_GONE"})
        # a later fragment asking plainly for the same option takes the excuse away
        plain = fragments.parse_fragment(_write(tmp, "p.config", "CONFIG_NOPE=y\n"))
        bad = fragments.explain(self.root, config, fragments.verify(config, [frag, plain]), "6.1")
        self.assertNotIn("CONFIG_NOPE", [m.option for m in fragments.excused(bad, [frag, plain])])

    def test_an_excused_option_is_no_drift_when_the_tree_is_built_again(self):
        """A configured 7.x tree lacks DMA_API_DEBUG_SG: checking its .config
        again before the next build must not call that a lost option."""
        tmp = Path(self.tmp.name)
        frag = fragments.parse_fragment(_write(tmp, "d.config",
                                               "# where-defined: gone in 7.x\nCONFIG_SG=y\n"
                                               "CONFIG_PLAIN=y\n"))
        self.assertEqual(fragments.drifted("CONFIG_PLAIN=y\n", [frag]), [])
        # a value that changed is drift, where-defined or not
        self.assertEqual([m.option for m in fragments.drifted("CONFIG_PLAIN=y\nCONFIG_SG=m\n",
                                                              [frag])], ["CONFIG_SG"])
        self.assertEqual([m.option for m in fragments.drifted("CONFIG_SG=y\n", [frag])],
                         ["CONFIG_PLAIN"])

    def test_where_defined_must_be_followed_by_its_option(self):
        tmp = Path(self.tmp.name)
        for text, line in (("# where-defined: x\n# other\nCONFIG_A=y\n", ":1:"),
                           ("CONFIG_A=y\n\n# where-defined: x\n", ":3:")):
            with self.assertRaises(InputError) as cm:
                fragments.parse_fragment(_write(tmp, "bad.config", text))
            self.assertIn("bad.config" + line, cm.exception.message)

    def test_shipped_usb_profiles_fragment_serves_6_1(self):
        from harness.devices import usbdevices
        frag = fragments.parse_fragment(usbdevices.FRAGMENT)
        self.assertIn("CONFIG_HID_SUPPORT", frag.where_defined)
        self.assertEqual(dict(frag.options)["CONFIG_HID_SUPPORT"], "y")


class Needed(unittest.TestCase):
    """fragments.needed: a driver's symbol with what it plainly depends on."""

    def setUp(self):
        import tempfile
        self.tmp = tempfile.TemporaryDirectory()
        self.tree = Path(self.tmp.name)
        (self.tree / "drivers").mkdir()
        (self.tree / "drivers" / "Kconfig").write_text(
            'config SCSI\n\ttristate "SCSI"\n\tdepends on BLOCK\n'
            'config BLOCK\n\tbool "block"\n'
            'config USB_STORAGE\n\ttristate "storage"\n\tdepends on USB && SCSI\n'
            'if USB_STORAGE\n'
            'config USB_STORAGE_USBAT\n\ttristate "usbat"\n'
            'config USB_STORAGE_ODD\n\ttristate "odd"\n\tdepends on PCI || OF\n'
            'endif\n'
            'config HIDDEN\n\ttristate\n'
            'config NEEDS_HIDDEN\n\ttristate "n"\n\tdepends on HIDDEN\n')

    def tearDown(self):
        self.tmp.cleanup()

    def test_plain_dependencies_are_added_as_their_type_allows(self):
        got = fragments.needed(self.tree, {"CONFIG_USB_STORAGE_USBAT": "m"}, {"CONFIG_USB"})
        self.assertEqual(got, {"CONFIG_USB_STORAGE_USBAT": "m", "CONFIG_USB_STORAGE": "m",
                               "CONFIG_SCSI": "m", "CONFIG_BLOCK": "y"})

    def test_what_is_set_a_choice_or_a_symbol_without_prompt_is_not_asked(self):
        have = {"CONFIG_USB", "CONFIG_SCSI"}
        self.assertEqual(fragments.needed(self.tree, {"CONFIG_USB_STORAGE_USBAT": "m"}, have),
                         {"CONFIG_USB_STORAGE_USBAT": "m", "CONFIG_USB_STORAGE": "m"})
        self.assertEqual(fragments.needed(self.tree, {"CONFIG_USB_STORAGE_ODD": "m"},
                                          {"CONFIG_USB_STORAGE"}),
                         {"CONFIG_USB_STORAGE_ODD": "m"})        # PCI || OF: not ours to pick
        self.assertEqual(fragments.needed(self.tree, {"CONFIG_NEEDS_HIDDEN": "m"}, set()),
                         {"CONFIG_NEEDS_HIDDEN": "m"})           # HIDDEN is selected, not set


if __name__ == "__main__":
    unittest.main()


class ExtraFragments(unittest.TestCase):
    """$DMAHARNESS_EXTRA_FRAGMENTS, and CI's one 7.3 configuration."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.frag = Path(self.tmp.name) / "extra.config"
        self.frag.write_text("CONFIG_BLOCK=y\n")

    def tearDown(self):
        self.tmp.cleanup()

    def test_by_version_or_for_every_version(self):
        env = {fragments.EXTRA_ENV: f"7.3={self.frag}"}
        self.assertEqual([f.options for f in fragments.extra_fragments("7.3", env)],
                         [(("CONFIG_BLOCK", "y"),)])
        self.assertEqual(fragments.extra_fragments("6.1", env), [])
        env = {fragments.EXTRA_ENV: f" {self.frag} ,"}
        self.assertEqual(len(fragments.extra_fragments("6.1", env)), 1)
        self.assertEqual(fragments.extra_fragments("6.1", {}), [])

    def test_bad_values_name_the_variable(self):
        for spec in (f"x.y={self.frag}", f"7.3={self.frag}.missing", str(self.tmp.name)):
            with self.assertRaises(InputError) as e:
                fragments.extra_fragments("7.3", {fragments.EXTRA_ENV: spec})
            self.assertIn(fragments.EXTRA_ENV, str(e.exception))

    def test_ci_fragment_holds_every_option_of_the_kernels_it_joins(self):
        """Every option CI's sweep kernel and the device profiles' kernel add to
        the dma profile is in tests/fixtures/kernel/ci-7.3.config with the same
        value: else those kernels are not one configuration and CI builds 7.3
        cold more than once."""
        ci = dict(fragments.parse_fragment(ROOT / "tests/fixtures/kernel/ci-7.3.config").options)
        sweep_ci = ROOT / "tests" / "fixtures" / "sweep" / "ci"
        want = dict(fragments.parse_fragment(sweep_ci / "subsystems.config").options)
        want.update(fragments.parse_fragment(
            ROOT / "kconfig-fragments" / "usb" / "usb-profiles.config").options)
        cat = (sweep_ci / "catalogue.toml").read_text()
        for opt in re.findall(r'"(CONFIG_\w+=\w+)"', cat):
            k, v = opt.split("=")
            want[k] = v
        self.assertGreater(len(want), 20)
        self.assertEqual({k: ci.get(k) for k in want}, want)
