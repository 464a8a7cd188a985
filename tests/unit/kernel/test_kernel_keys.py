import tempfile
import unittest
from pathlib import Path
from unittest import mock

from harness.kernel import fragments, kbuild, seeding, series
from harness.errors import InputError

SRC = kbuild.Source("6.1", "6.1.192-3", Path("/usr/src/linux-source-6.1.tar.xz"))


class Keys(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        d = Path(self.tmp.name)
        (d / "a.config").write_text("CONFIG_A=y\n")
        (d / "b.config").write_text("CONFIG_B=y\n")
        (d / "1.patch").write_text("--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n")
        (d / "2.patch").write_text("--- a/y\n+++ b/y\n@@ -1 +1 @@\n-a\n+c\n")
        self.d = d
        self.frags = (fragments.parse_fragment(d / "a.config"), fragments.parse_fragment(d / "b.config"))
        self.p1 = series.Patch(d / "1.patch")
        self.p2 = series.Patch(d / "2.patch")
        patcher = mock.patch.object(kbuild, "compiler_version", return_value="gcc (Debian 12.2.0) 12.2.0")
        patcher.start()
        self.addCleanup(patcher.stop)

    def tearDown(self):
        self.tmp.cleanup()

    def key(self, patches=None, frags=None, src=SRC):
        return kbuild.Variant("6.1", tuple(patches if patches is not None else [self.p1]),
                              tuple(frags or self.frags)).key(src)

    def test_stable(self):
        self.assertEqual(self.key(), self.key())
        self.assertTrue(self.key().startswith("6.1-"))

    def test_patch_order_and_content_matter(self):
        k12 = self.key([self.p1, self.p2])
        self.assertNotEqual(k12, self.key([self.p2, self.p1]))
        self.assertNotEqual(k12, self.key([self.p1]))
        (self.d / "2.patch").write_text("--- a/y\n+++ b/y\n@@ -1 +1 @@\n-a\n+d\n")
        self.assertNotEqual(k12, self.key([self.p1, self.p2]))

    def test_strip_level_matters(self):
        self.assertNotEqual(self.key([self.p1]), self.key([series.Patch(self.p1.path, 0)]))

    def test_patch_location_does_not_matter_only_content(self):
        other = self.d / "moved"
        other.mkdir()
        (other / "1.patch").write_text((self.d / "1.patch").read_text())
        # the name is part of the key (it shows in reports), so a move is a new key...
        self.assertNotEqual(self.key([self.p1]), self.key([series.Patch(other / "1.patch")]))

    def test_fragment_content_and_debian_version_matter(self):
        k = self.key()
        (self.d / "b.config").write_text("CONFIG_B=m\n")
        frags = (self.frags[0], fragments.parse_fragment(self.d / "b.config"))
        self.assertNotEqual(k, self.key(frags=frags))
        self.assertNotEqual(k, self.key(src=kbuild.Source("6.1", "6.1.193-1", SRC.tarball)))

    def test_comments_change_no_key(self):
        k = self.key()
        (self.d / "c").mkdir()
        (self.d / "w").mkdir()
        text = self.frags[0].path.read_text()
        (self.d / "c" / "a.config").write_text("# why A\n\n" + text + "# trailing words\n")
        commented = fragments.parse_fragment(self.d / "c" / "a.config")
        self.assertEqual(k, self.key(frags=(commented, self.frags[1])))
        (self.d / "w" / "a.config").write_text("# where-defined: only some kernels\n" + text)
        w = fragments.parse_fragment(self.d / "w" / "a.config")
        self.assertIn(self.frags[0].options[0][0], w.where_defined)
        self.assertNotEqual(k, self.key(frags=(w, self.frags[1])))

    def test_compiler_matters(self):
        k = self.key()
        with mock.patch.object(kbuild, "compiler_version", return_value="gcc 13"):
            self.assertNotEqual(k, self.key())

    def test_key_material_is_pinned(self):
        """Refactors of kbuild.py must not change existing variant keys (cache hits)."""
        import hashlib
        import json
        m = kbuild.Variant("6.1", (self.p1,), (self.frags[0],)).key_material(SRC)
        self.assertEqual(sorted(m), ["arch", "cc", "deb_version", "format", "fragments",
                                     "patches", "version"])
        # the patch's name is its temporary path: pin everything else
        m["patches"] = [["1.patch", strip, digest] for _, strip, digest in m["patches"]]
        blob = json.dumps(m, sort_keys=True).encode()
        self.assertEqual(hashlib.sha256(blob).hexdigest()[:16], "e88e5911d25ce866")

    def test_version_form(self):
        kbuild.Variant("5.10", (), self.frags)      # a stock kernel needs no series
        for bad in ("5", "5.10.1", "../6.1", ""):
            with self.assertRaises(InputError):
                kbuild.Variant(bad, (), self.frags)

    def test_detector_needs_a_series(self):
        from harness import pipeline
        with self.assertRaises(InputError) as e:
            pipeline.target(pipeline.VariantSpec(kernel="5.10"))
        self.assertIn("no detector series", e.exception.message)
        t = pipeline.target(pipeline.VariantSpec(kernel="5.10", base_series=False))
        self.assertEqual(t.version, "5.10")
        names = {f.name for f in t.variant().fragments}
        self.assertFalse(names & set(kbuild.DETECTOR_FRAGMENTS), names)


class Trees(unittest.TestCase):
    """make_tree on a tiny fake pristine tree: patches apply, failures leave nothing."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        d = Path(self.tmp.name)
        pristine = d / "pristine"
        pristine.mkdir()
        (pristine / "x").write_text("a\n")
        (pristine / "y").write_text("a\n")
        (pristine / "x").chmod(0o444)
        (pristine / ".dmaharness-pristine").write_text("{}\n")
        self.d, self.pristine = d, pristine
        (d / "good.patch").write_text("--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n")
        (d / "bad.patch").write_text("--- a/y\n+++ b/y\n@@ -1 +1 @@\n-zzz\n+c\n")

    def tearDown(self):
        self.tmp.cleanup()

    def test_patch_applies_without_touching_pristine(self):
        kbuild.make_tree(self.pristine, self.d / "t", (series.Patch(self.d / "good.patch"),))
        self.assertEqual((self.d / "t" / "x").read_text(), "b\n")
        self.assertEqual((self.pristine / "x").read_text(), "a\n")
        # untouched files stay hard links of the pristine tree
        self.assertEqual((self.d / "t" / "y").stat().st_ino, (self.pristine / "y").stat().st_ino)
        self.assertFalse((self.d / "t" / ".dmaharness-pristine").exists())

    def test_failing_patch_names_hunk_and_leaves_nothing(self):
        with self.assertRaises(InputError) as cm:
            kbuild.make_tree(self.pristine, self.d / "t",
                             (series.Patch(self.d / "good.patch"), series.Patch(self.d / "bad.patch")))
        msg = cm.exception.message
        self.assertIn("bad.patch", msg)
        self.assertIn("hunk #1 FAILED", msg)
        self.assertFalse((self.d / "t").exists())
        self.assertEqual([p.name for p in self.d.iterdir() if p.name.startswith(".tmp")], [])
        self.assertEqual((self.pristine / "x").read_text(), "a\n")


if __name__ == "__main__":
    unittest.main()


class SeedTimestamps(unittest.TestCase):
    """A seeded build folder must see only the files whose content differs as new."""

    def test_same_content_takes_seed_mtime_different_content_is_fresh(self):
        import os
        import json
        import time
        with tempfile.TemporaryDirectory() as d:
            d = Path(d)
            pristine = d / "pristine"
            pristine.mkdir()
            (pristine / "untouched.c").write_text("u\n")
            seed, ours = d / "seed", d / "ours"
            for t in (seed, ours):
                t.mkdir()
                os.link(pristine / "untouched.c", t / "untouched.c")
                (t / "header.h").write_text("patched by the common patch\n")
            (seed / "driver.c").write_text("seed's version\n")
            (ours / "driver.c").write_text("our version\n")
            old = time.time() - 3600
            os.utime(seed / "header.h", (old, old))
            (d / "seed.json").write_text(json.dumps({"touched": [["header.h"], ["driver.c"]]}))
            (d / "p1.patch").write_text("--- a/header.h\n+++ b/header.h\n@@ -0,0 +1 @@\n+x\n")
            (d / "p2.patch").write_text("--- a/driver.c\n+++ b/driver.c\n@@ -0,0 +1 @@\n+x\n")
            v = kbuild.Variant("6.1", (series.Patch(d / "p1.patch"), series.Patch(d / "p2.patch")), ())
            before = time.time()
            differ = seeding.align_timestamps(seed, ours, v)
            self.assertEqual(differ, ["driver.c"])
            self.assertAlmostEqual((ours / "header.h").stat().st_mtime, old, delta=1)
            self.assertGreaterEqual((ours / "driver.c").stat().st_mtime, before - 1)
            self.assertEqual((ours / "driver.c").read_text(), "our version\n")
            # the pristine tree's inode was not touched
            self.assertEqual((ours / "untouched.c").stat().st_ino, (pristine / "untouched.c").stat().st_ino)


class SeedChoice(unittest.TestCase):
    """Of built trees with the same patches, the seed shares the most fragments."""

    def test_the_nearest_configuration_seeds(self):
        import json
        from harness import paths
        with tempfile.TemporaryDirectory() as d, \
                mock.patch.dict("os.environ", {"DMAHARNESS_CACHE": d}), \
                mock.patch.object(kbuild, "compiler_version", return_value="gcc 12"):
            d = Path(d)
            for n in "abcd":
                (d / f"{n}.config").write_text(f"CONFIG_{n.upper()}=y\n")
            fr = {n: fragments.parse_fragment(d / f"{n}.config") for n in "abcd"}
            work = paths.sub("work")
            for key, names in (("6.1-many", "abcd"), ("6.1-base", "a"), ("6.1-near", "ab")):
                (work / key / "_build").mkdir(parents=True)
                (work / key / "_build" / "vmlinux").write_text("")
                (work / f"{key}.json").write_text(json.dumps({
                    "key": key, "version": "6.1", "deb_version": SRC.deb_version, "cc": "gcc 12",
                    "built": True, "fragments_digest": key, "patches": [],
                    "fragments": [[fr[n].name, fr[n].digest()] for n in names]}))
            ours = kbuild.Variant("6.1", (), (fr["a"], fr["b"]))
            self.assertEqual(seeding.pick_seed(ours, SRC.deb_version, "gcc 12", "6.1-ours")[0].name, "6.1-near")
            ours = kbuild.Variant("6.1", (), (fr["a"], fr["b"], fr["c"]))
            self.assertEqual(seeding.pick_seed(ours, SRC.deb_version, "gcc 12", "6.1-ours")[0].name, "6.1-many")
            ours = kbuild.Variant("6.1", (), (fr["a"],))
            self.assertEqual(seeding.pick_seed(ours, SRC.deb_version, "gcc 12", "6.1-ours")[0].name, "6.1-base")

    def test_options_asked_weigh_more_than_fragments_shared(self):
        """A kernel one option away (the device profiles' fragment before a
        HID driver joined it) seeds, not the one that shares every fragment
        and adds 50 drivers (the USB sweep's)."""
        import json
        from harness import paths
        with tempfile.TemporaryDirectory() as d, \
                mock.patch.dict("os.environ", {"DMAHARNESS_CACHE": d}), \
                mock.patch.object(kbuild, "compiler_version", return_value="gcc 12"):
            d = Path(d)
            (d / "a.config").write_text("CONFIG_A=y\n")
            (d / "old").mkdir()
            (d / "old" / "b.config").write_text("CONFIG_B=y\n")
            (d / "b.config").write_text("CONFIG_B=y\nCONFIG_HID_CHERRY=m\n")
            (d / "huge.config").write_text("".join(f"CONFIG_X{i}=m\n" for i in range(50)))
            fa, fb_old, fb, fh = (fragments.parse_fragment(d / n) for n in
                                  ("a.config", "old/b.config", "b.config", "huge.config"))
            work = paths.sub("work")
            for key, frs in (("6.1-old", (fa, fb_old)), ("6.1-sweep", (fa, fb, fh))):
                (work / key / "_build").mkdir(parents=True)
                (work / key / "_build" / "vmlinux").write_text("")
                (work / f"{key}.json").write_text(json.dumps({
                    "key": key, "version": "6.1", "deb_version": SRC.deb_version, "cc": "gcc 12",
                    "built": True, "fragments_digest": key, "patches": [],
                    "fragments": [[f.name, f.digest()] for f in frs],
                    "options": sorted(seeding.asked(frs))}))
            ours = kbuild.Variant("6.1", (), (fa, fb))
            self.assertEqual(seeding.pick_seed(ours, SRC.deb_version, "gcc 12", "6.1-ours")[0].name, "6.1-old")
