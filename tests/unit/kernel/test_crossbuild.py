"""harness/kernel/crossbuild.py without a compiler: its table, the error
that names the package, folders and keys, and the driver's symbols and
their dependencies read from a small tree."""

import os
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from harness.kernel import crossbuild


def small_tree(root: Path) -> Path:
    t = root / "linux"
    (t / "drivers/foo").mkdir(parents=True)
    (t / "Makefile").write_text("all:\n")
    (t / "Kconfig").write_text('source "drivers/foo/Kconfig"\n')
    (t / "drivers/foo/Makefile").write_text("obj-$(CONFIG_FOO) += foo.o\n")
    (t / "drivers/foo/Kconfig").write_text(
        "config FOO\n\ttristate \"foo\"\n\tdepends on BAR && USB\n\n"
        "config BAR\n\tbool \"bar\"\n\nconfig USB\n\ttristate\n\n"
        "config USB_HOST\n\tbool \"host\"\n\tselect USB\n")
    (t / "drivers/foo/foo.c").write_text("int foo;\n")
    (t / "drivers/foo/foo.h").write_text("struct foo { int a; };\n")
    return t


class Table(unittest.TestCase):
    def test_every_exposure_architecture_has_a_row(self):
        names = [c.arch for c in crossbuild.CROSSES]
        self.assertEqual(sorted(names),
                         sorted(["x86_64", "arm64", "riscv", "arm", "mips", "powerpc32"]))
        self.assertEqual(crossbuild.cross("powerpc32").karch, "powerpc")
        self.assertIn("CONFIG_ARCH_MULTI_V7=y", crossbuild.cross("arm").options)

    def test_missing_compiler_names_the_package(self):
        with mock.patch.object(crossbuild.shutil, "which", return_value=None):
            with self.assertRaises(crossbuild.CrossError) as e:
                crossbuild.compiler("mips")
        self.assertIn("gcc-mips-linux-gnu", str(e.exception))
        self.assertIn("make deps", str(e.exception))
        with self.assertRaises(crossbuild.CrossError):
            crossbuild.cross("sparc")

    def test_compiler_name(self):
        self.assertEqual(crossbuild.compiler_name(
            "arm-linux-gnueabihf-gcc (Debian 12.2.0-14) 12.2.0"), "arm-linux-gnueabihf-gcc 12.2.0")


class Keys(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.d = Path(self.tmp.name)
        self.tree = small_tree(self.d)
        env = mock.patch.dict(os.environ, {"DMAHARNESS_CACHE": str(self.d / "cache")})
        comp = mock.patch.object(crossbuild, "compiler", return_value="arm-gcc 12")
        for p in (env, comp):
            p.start()
            self.addCleanup(p.stop)
        self.addCleanup(self.tmp.cleanup)

    def test_folder_per_tree_arch_and_config(self):
        a = crossbuild.Request(self.tree, "arm", "drivers/foo/foo.c", "CONFIG_X=y\n")
        b = crossbuild.Request(self.tree, "arm", "drivers/foo/foo.c", "CONFIG_X=n\n")
        fa, fb = crossbuild.folder(a), crossbuild.folder(b)
        self.assertNotEqual(fa, fb)
        self.assertEqual(fa.parent, fb.parent)             # one tree
        self.assertTrue(str(fa).startswith(str(self.d / "cache" / "scratch" / "cross")))
        self.assertNotIn(str(self.tree), str(fa))          # never inside the tree
        self.assertTrue(fa.name.startswith("arm-"))

    def test_result_key_follows_the_files_content(self):
        r = crossbuild.Request(self.tree, "arm", "drivers/foo/foo.c")
        k = crossbuild.result_key(r)
        self.assertEqual(k, crossbuild.result_key(r))
        (self.tree / "drivers/foo/foo.h").write_text("struct foo { long a; };\n")
        k2 = crossbuild.result_key(r)
        self.assertNotEqual(k, k2)
        self.assertNotEqual(k2, crossbuild.result_key(
            crossbuild.Request(self.tree, "mips", "drivers/foo/foo.c")))

    def test_symbols_and_dependencies(self):
        self.assertEqual(crossbuild.driver_symbols(self.tree, "drivers/foo/foo.c"),
                         ["CONFIG_FOO"])
        # BAR has a prompt; USB is hidden: the symbol that selects it
        self.assertEqual(crossbuild._dependencies(self.tree, ["CONFIG_FOO"]),
                         ["CONFIG_BAR", "CONFIG_USB_HOST"])

    def test_not_a_tree(self):
        (self.d / "empty").mkdir()
        with self.assertRaises(crossbuild.CrossError) as e:
            crossbuild.prepare(crossbuild.Request(self.d / "empty", "arm", "a.c"))
        self.assertIn("not a linux source tree", str(e.exception))


if __name__ == "__main__":
    unittest.main()
