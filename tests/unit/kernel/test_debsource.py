"""harness/kernel/debsource: linux-source packages through a private apt configuration.

The real fetch (apt-get update/download from Debian's archive) runs in the
integration tests that build 7.3; these check the parts that decide what
is fetched, from where, and what a hand-edited cache may make of them."""

import json
import os
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from harness import paths
from harness.errors import InputError
from harness.kernel import debsource, kbuild, series


class Base(unittest.TestCase):
    def setUp(self):
        self.base = Path(tempfile.mkdtemp())
        p = mock.patch.dict(os.environ, {"DMAHARNESS_CACHE": str(self.base)})
        p.start()
        self.addCleanup(p.stop)


class Mirror(Base):
    def write(self, name, text):
        d = self.base / "etc"
        d.mkdir(exist_ok=True)
        (d / name).write_text(text)
        return d / name

    def test_deb822_sources_name_the_mirror(self):
        f = self.write("debian.sources", "Types: deb\nURIs: http://mirror.example/debian\n"
                       "Suites: bookworm\nComponents: main\n")
        self.assertEqual(debsource.system_mirror((f,)), "http://mirror.example/debian")

    def test_one_line_sources_with_options(self):
        f = self.write("sources.list", "# comment\ndeb [arch=amd64 signed-by=/k.gpg] "
                       "http://m.example/debian/ bookworm main\n")
        self.assertEqual(debsource.system_mirror((f,)), "http://m.example/debian")

    def test_security_and_other_archives_are_not_the_mirror(self):
        f = self.write("x.list", "deb http://deb.debian.org/debian-security bookworm-security main\n"
                       "deb https://packages.cloud.google.com/apt cloud-sdk main\n")
        self.assertEqual(debsource.system_mirror((f,)), debsource.DEFAULT_MIRROR)

    def test_environment_wins_and_is_checked(self):
        with mock.patch.dict(os.environ, {"DMAHARNESS_DEBIAN_MIRROR": "http://x.example/debian/"}):
            self.assertEqual(debsource.system_mirror(()), "http://x.example/debian")
        for bad in ("ftp://x/debian", "http://x/debian main\ndeb http://evil", "http://[x"):
            with mock.patch.dict(os.environ, {"DMAHARNESS_DEBIAN_MIRROR": bad}):
                with self.assertRaises(InputError):
                    debsource.system_mirror(())


class Config(Base):
    def test_private_configuration_stays_in_the_cache(self):
        conf = debsource._write_config(debsource.apt_root(), "http://m.example/debian")
        text = conf.read_text()
        for line in text.splitlines():
            if line.startswith("Dir::"):
                path = line.split('"')[1]
                self.assertTrue(Path(path).is_relative_to(self.base), line)
        self.assertNotIn('"/etc/apt', text)
        sources = (debsource.apt_root() / "sources.list").read_text()
        for suite in debsource.SUITES:
            self.assertIn(f"http://m.example/debian {suite} main", sources)
        self.assertIn(f"signed-by={debsource.KEYRING}", sources)
        self.assertEqual((debsource.apt_root() / "status").read_text(), "")


class Fetched(Base):
    def put(self, ver, deb, meta=None, tarball=True):
        src = debsource.apt_root() / "src"
        src.mkdir(parents=True, exist_ok=True)
        name = f"linux-source-{ver}_{deb}"
        (src / f"{name}.json").write_text(json.dumps(
            meta if meta is not None else {"version": ver, "deb_version": deb, "suite": "s"}))
        if tarball:
            (src / f"{name}.tar.xz").write_bytes(b"x")

    def test_newest_point_release_is_used(self):
        self.put("7.3", "7.3.4-1~bpo13+1")
        self.put("7.3", "7.3.10-1~bpo13+1")
        self.put("7.2", "7.2.13-1")
        self.assertEqual(sorted(f.deb_version for f in debsource.fetched("7.3")),
                         ["7.3.10-1~bpo13+1", "7.3.4-1~bpo13+1"])
        with mock.patch.object(kbuild.Path, "is_file", autospec=True,
                               side_effect=lambda p: not str(p).startswith("/usr/src/")
                               and os.path.isfile(p)):
            src = kbuild.local_source("7.3")
        self.assertEqual(src.deb_version, "7.3.10-1~bpo13+1")   # dpkg order, not text order

    def test_hand_edited_state_is_ignored(self):
        self.put("7.3", "7.3.4-1", tarball=False)                              # no tarball
        self.put("7.3", "7.3.5-1", meta={"version": "7.3", "deb_version": "7.3.6-1"})  # name lies
        self.put("7.3", "7.3.7-1", meta=["not", "a", "dict"])
        self.put("7.3", "7.3.8-1", meta={"version": "../../x", "deb_version": "7.3.8-1"})
        (debsource.apt_root() / "src" / "linux-source-7.3_bad.json").write_text("{")
        self.assertEqual(debsource.fetched("7.3"), [])

    def test_version_form_is_checked(self):
        for bad in ("7", "7.3.4", "../7.3", "", "7.x"):
            with self.assertRaises(InputError):
                debsource.check_version(bad)


class Unsupported(unittest.TestCase):
    def test_names_the_nearest_series_and_how_to_add_one(self):
        e = series.unsupported("9.9")
        self.assertIn("linux 9.9 has no detector series", e.message)
        near = series.series_order("9.9")[0]
        self.assertIn(f"patches/{near}/series", e.message)
        self.assertIn("dmaharness sources --fetch 9.9", e.message)
        self.assertIn("--no-detector", e.message)

    def test_supported_is_read_from_the_patches_folder(self):
        for v in series.SUPPORTED:
            self.assertTrue((paths.PATCHES / v / "series").is_file())
        self.assertIn("6.1", series.SUPPORTED)


if __name__ == "__main__":
    unittest.main()
