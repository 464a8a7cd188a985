"""Debug profiles (harness/kernel/profiles.py): the table, the fragments, the precedence."""

import contextlib
import io
import os
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from harness.checks import caserun
from harness import errors, pipeline
from harness.cli import main as cli
from harness.cli import common
from harness.kernel import fragments, kbuild, profiles, series
from harness.boot import settings

CASE = """\
name = "prof"
[run]
profile = "full"
cycle_hz = 3
[[variants]]
name = "before"
role = "before"
patches = ["0001-x.patch"]
[[variants]]
name = "after"
role = "after"
patches = []
[expect]
fixed = ["x"]
"""


class Table(unittest.TestCase):
    def test_shipped_table(self):
        t = profiles.table()
        self.assertEqual(list(t)[0], "dma")
        for name in ("dma", "full", "fast", "race"):
            self.assertIn(name, t)
            self.assertTrue(t[name].description and t[name].finds and t[name].costs, name)
            t[name].fragments()             # every fragment parses
            settings.check(t[name].run)     # every run default is a real setting

    def test_dma_is_the_default_set(self):
        # the dma profile must keep the cache keys of variants built before profiles
        self.assertEqual(profiles.get(None).fragments(), fragments.default_fragments())
        self.assertEqual(profiles.get("dma").patches("6.1"), [])

    def test_profiles_add_and_drop(self):
        full = [f.name for f in profiles.get("full").fragments()]
        self.assertEqual(full[:-1], [f.name for f in fragments.default_fragments()])
        self.assertEqual(full[-1], "full")
        for name in ("fast", "race"):
            names = [f.name for f in profiles.get(name).fragments()]
            self.assertNotIn("kasan", names)
            self.assertEqual(names[-1], name)
        # the race profile has its delay series for both kernels
        for ver in series.SUPPORTED:
            self.assertTrue(profiles.get("race").patches(ver), ver)

    def test_unknown_profile(self):
        with self.assertRaises(errors.InputError) as cm:
            profiles.get("deep")
        self.assertIn("dma", cm.exception.message)

    def test_bad_tables(self):
        ok = {"dma": {"description": "d"}}
        profiles.parse_table(ok)
        for data, words in (
                ({"full": {"add": ["full"]}}, "default profile"),
                ({**ok, "x": {"adds": ["full"]}}, "unknown key"),
                ({"dma": {"add": ["full"]}}, "takes no"),
                ({**ok, "x": {"drop": "kasan"}}, "list of names"),
                ({**ok, "x": {"run": {"profile": "dma"}}}, "cannot name a profile"),
                ({**ok, "x": 3}, "must be a table")):
            with self.assertRaises(errors.InputError, msg=str(data)) as cm:
                profiles.parse_table(data)
            self.assertIn(words, cm.exception.message)
        bad = profiles.parse_table({**ok, "x": {"drop": ["kasn"]}})["x"]
        with self.assertRaises(errors.InputError) as cm:
            bad.fragments()
        self.assertIn("'kasn'", cm.exception.message)


class Layers(unittest.TestCase):
    def test_profile_run_is_below_case_and_flags(self):
        race = settings.check(profiles.get("race").run)
        self.assertIn("smp", race)
        b, f = settings.resolve({"profile": "race"})
        self.assertEqual(b.smp, race["smp"])
        self.assertEqual(b.smp, 2)
        b, _ = settings.resolve({"profile": "race", "smp": 3})          # a case
        self.assertEqual(b.smp, 3)
        b, _ = settings.resolve({"profile": "race", "smp": 3}, {"smp": 1})   # a flag
        self.assertEqual(b.smp, 1)
        b, _ = settings.resolve({"smp": 3}, {"profile": "race"})       # a flag's profile
        self.assertEqual(b.smp, 3)
        b, _ = settings.resolve()
        self.assertEqual(b.smp, 1)

    def test_fragment_and_profile_conflict(self):
        with self.assertRaises(errors.InputError) as cm:
            pipeline.target(pipeline.VariantSpec(kernel="6.1", fragments=("base",), profile="full"))
        self.assertIn("give one", cm.exception.message)


class FailNthSetting(unittest.TestCase):
    def test_paths(self):
        parse = settings.SETTINGS["fail_nth"].parse
        self.assertEqual(parse("disconnect,probe"), ("probe", "disconnect"))
        self.assertEqual(parse(["disconnect"]), ("disconnect",))
        self.assertEqual(parse("none"), ())
        with self.assertRaises(errors.InputError) as cm:
            parse("probe,remove")
        self.assertIn("'remove'", cm.exception.message)

    def test_flag_without_paths_means_both(self):
        a = cli.parser().parse_args(["run", "--fail-nth"])
        self.assertEqual(common.flags(a)["fail_nth"], ("probe", "disconnect"))
        a = cli.parser().parse_args(["run"])
        self.assertNotIn("fail_nth", common.flags(a))
        _, f = settings.resolve(common.flags(a))
        self.assertEqual(f.fail_nth, ())


class FailNthNeedsFaultInjection(unittest.TestCase):
    def test_refused_before_boot_without_fault_injection(self):
        with tempfile.TemporaryDirectory() as tmp:
            art = kbuild.Artifacts("6.1-x", Path(tmp))
            (Path(tmp) / "config").write_text("CONFIG_KASAN=y\nCONFIG_FAULT_INJECTION=y\n")
            with self.assertRaises(errors.InputError) as cm:
                pipeline.check_fail_nth(art)
            self.assertIn("CONFIG_FAILSLAB", cm.exception.message)
            self.assertIn("--profile full", cm.exception.message)
            self.assertNotIn("CONFIG_FAULT_INJECTION,", cm.exception.message)
            (Path(tmp) / "config").write_text("\n".join(pipeline.FAIL_NTH_NEEDS) + "\n")
            pipeline.check_fail_nth(art)      # the full profile's kernel passes

    def test_refused_with_hotplug(self):
        with tempfile.TemporaryDirectory() as tmp:
            job = pipeline.FloodJob(mock.Mock(), Path(tmp), settings.BootSettings(),
                                    settings.FloodSettings(fail_nth=("probe",), hotplug=5.0))
            with self.assertRaises(errors.InputError) as cm:
                pipeline.flood_once(job, mock.Mock())
            self.assertIn("--hotplug", cm.exception.message)

    def test_full_profile_has_what_fail_nth_needs(self):
        opts = dict(o for f in profiles.get("full").fragments() for o in f.options)
        for need in pipeline.FAIL_NTH_NEEDS:
            name, value = need.split("=")
            self.assertEqual(opts.get(name), value, name)


class Keys(unittest.TestCase):
    def setUp(self):
        for p in (mock.patch.object(kbuild, "find_source",
                                    return_value=kbuild.Source("6.1", "6.1.0-test", Path("/x"))),
                  mock.patch.object(kbuild, "compiler_version", return_value="gcc 12")):
            p.start()
            self.addCleanup(p.stop)

    def key(self, **kw):
        return kbuild.variant_key(pipeline.target(pipeline.VariantSpec(kernel="6.1", **kw)).variant())

    def test_each_profile_is_its_own_variant(self):
        keys = {p: self.key(profile=p) for p in ("dma", "full", "fast", "race")}
        self.assertEqual(len(set(keys.values())), 4)
        self.assertEqual(keys["dma"], self.key())
        t = pipeline.target(pipeline.VariantSpec(kernel="6.1", profile="full"))
        self.assertEqual(t.name, "6.1-full")
        self.assertEqual(t.to_json()["profile"], "full")
        race = pipeline.target(pipeline.VariantSpec(kernel="6.1", profile="race")).variant()
        own = profiles.get("race").patches("6.1")
        # after the detector series, before any --series patch
        self.assertEqual([p.name for p in race.patches[-len(own):]], [p.name for p in own])

    def test_case_chooses_the_profile_unless_a_flag_does(self):
        with tempfile.TemporaryDirectory() as tmp:
            case = Path(tmp) / "cases" / "prof"
            case.mkdir(parents=True)
            (case / "0001-x.patch").write_text("--- a/x\n+++ b/x\n")
            (case / "case.toml").write_text(CASE)
            for extra, want in (([], "full"), (["--profile", "dma"], "dma")):
                built = []

                def fake_build(variant, **k):
                    built.append(variant)
                    raise errors.BuildError("stop here")

                with mock.patch.dict(os.environ, {"DMAHARNESS_CACHE": str(Path(tmp) / "c")}), \
                        mock.patch.object(caserun.kbuild, "build", side_effect=fake_build), \
                        contextlib.redirect_stderr(io.StringIO()), \
                        contextlib.redirect_stdout(io.StringIO()):
                    code = cli.main(["run", "--kernel", "6.1", "--case", str(case), *extra])
                self.assertEqual(code, errors.EXIT_BUILD)
                names = [f.name for f in built[0].fragments]
                self.assertEqual("full" in names, want == "full", (extra, names))


if __name__ == "__main__":
    unittest.main()
