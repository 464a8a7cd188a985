"""--ccache-remote: the URL check, where it comes from, make's environment, the
variant key, and the per-build figures from `ccache --print-stats`."""

import json
import os
import shutil
import signal
import subprocess
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from harness.kernel import ccachestats, fragments, kbuild
from harness import errors
from harness.cli import main as cli
from harness.cli import common
from harness.cli import bisectrun
from harness.errors import InputError
from harness.progress import Progress

SRC = kbuild.Source("6.1", "6.1.192-3", Path("/usr/src/linux-source-6.1.tar.xz"))

# `ccache --print-stats` of ccache 4.7.5 (Debian 12), captured on a worker's own
# cache folder before and after a "build" of five files against a redis+unix
# remote storage that a first worker had filled with three of them; the fifth
# was in the local cache already, the fourth nowhere: 1 local hit, 3 remote
# hits, 1 miss.
BEFORE = (
    "autoconf_test\t0\n"
    "bad_compiler_arguments\t0\n"
    "bad_output_file\t0\n"
    "cache_miss\t1\n"
    "cache_size_kibibyte\t8\n"
    "called_for_link\t0\n"
    "called_for_preprocessing\t0\n"
    "cleanups_performed\t0\n"
    "compile_failed\t0\n"
    "compiler_check_failed\t0\n"
    "compiler_produced_empty_output\t0\n"
    "compiler_produced_no_output\t0\n"
    "compiler_produced_stdout\t0\n"
    "could_not_find_compiler\t0\n"
    "could_not_use_modules\t0\n"
    "could_not_use_precompiled_header\t0\n"
    "direct_cache_hit\t0\n"
    "direct_cache_miss\t1\n"
    "error_hashing_extra_file\t0\n"
    "files_in_cache\t2\n"
    "internal_error\t0\n"
    "local_storage_hit\t0\n"
    "local_storage_miss\t1\n"
    "local_storage_read_hit\t0\n"
    "local_storage_read_miss\t2\n"
    "local_storage_write\t2\n"
    "missing_cache_file\t0\n"
    "multiple_source_files\t0\n"
    "no_input_file\t0\n"
    "output_to_stdout\t0\n"
    "preprocessed_cache_hit\t0\n"
    "preprocessed_cache_miss\t1\n"
    "preprocessor_error\t0\n"
    "recache\t0\n"
    "remote_storage_error\t0\n"
    "remote_storage_hit\t0\n"
    "remote_storage_miss\t1\n"
    "remote_storage_read_hit\t0\n"
    "remote_storage_read_miss\t2\n"
    "remote_storage_timeout\t0\n"
    "remote_storage_write\t2\n"
    "stats_updated_timestamp\t1796452824\n"
    "stats_zeroed_timestamp\t0\n"
    "unsupported_code_directive\t0\n"
    "unsupported_compiler_option\t0\n"
    "unsupported_environment_variable\t0\n"
    "unsupported_source_language\t0\n"
)

AFTER = (
    "autoconf_test\t0\n"
    "bad_compiler_arguments\t0\n"
    "bad_output_file\t0\n"
    "cache_miss\t2\n"
    "cache_size_kibibyte\t40\n"
    "called_for_link\t0\n"
    "called_for_preprocessing\t0\n"
    "cleanups_performed\t0\n"
    "compile_failed\t0\n"
    "compiler_check_failed\t0\n"
    "compiler_produced_empty_output\t0\n"
    "compiler_produced_no_output\t0\n"
    "compiler_produced_stdout\t0\n"
    "could_not_find_compiler\t0\n"
    "could_not_use_modules\t0\n"
    "could_not_use_precompiled_header\t0\n"
    "direct_cache_hit\t4\n"
    "direct_cache_miss\t2\n"
    "error_hashing_extra_file\t0\n"
    "files_in_cache\t10\n"
    "internal_error\t0\n"
    "local_storage_hit\t1\n"
    "local_storage_miss\t5\n"
    "local_storage_read_hit\t2\n"
    "local_storage_read_miss\t10\n"
    "local_storage_write\t10\n"
    "missing_cache_file\t0\n"
    "multiple_source_files\t0\n"
    "no_input_file\t0\n"
    "output_to_stdout\t0\n"
    "preprocessed_cache_hit\t0\n"
    "preprocessed_cache_miss\t2\n"
    "preprocessor_error\t0\n"
    "recache\t0\n"
    "remote_storage_error\t0\n"
    "remote_storage_hit\t3\n"
    "remote_storage_miss\t2\n"
    "remote_storage_read_hit\t6\n"
    "remote_storage_read_miss\t4\n"
    "remote_storage_timeout\t0\n"
    "remote_storage_write\t4\n"
    "stats_updated_timestamp\t1796452824\n"
    "stats_zeroed_timestamp\t0\n"
    "unsupported_code_directive\t0\n"
    "unsupported_compiler_option\t0\n"
    "unsupported_environment_variable\t0\n"
    "unsupported_source_language\t0\n"
)


class Urls(unittest.TestCase):
    GOOD = ("redis://127.0.0.1:6379", "redis://cache.example.com", "redis://p4ss@h:6379/0",
            "redis://h|connect-timeout=50", "redis+unix:/run/redis.sock",
            "redis+unix:///run/redis.sock", "http://localhost:8080/cache|layout=flat",
            "file:/srv/ccache", "file:///srv/ccache", "redis://a file:/b|read-only")
    BAD = ("bogus://x", "https://h/cache", "rediss://h", "localhost:6379", "/srv/ccache",
           "redis:/h", "redis://", "http://", "file:srv", "redis+unix:", "REDIS://h")

    def test_what_ccache_4_7_takes_is_accepted(self):
        for url in self.GOOD:
            self.assertEqual(ccachestats.check_url(url), url)

    def test_anything_else_is_bad_input_naming_the_url_and_where_it_came_from(self):
        for url in self.BAD:
            with self.subTest(url=url), self.assertRaises(InputError) as e:
                ccachestats.check_url(url, "DMAHARNESS_CCACHE_REMOTE")
            self.assertEqual(e.exception.exit_code, errors.EXIT_INPUT)
            self.assertIn(f"DMAHARNESS_CCACHE_REMOTE {url!r}", e.exception.message)
            self.assertIn("redis://HOST", e.exception.message)

    def test_an_unknown_scheme_is_named(self):
        with self.assertRaises(InputError) as e:
            ccachestats.check_url("https://h/cache")
        self.assertIn("no https: remote storage", e.exception.message)

    def test_empty_is_bad_input(self):
        with self.assertRaises(InputError) as e:
            ccachestats.check_url("  ")
        self.assertIn("--ccache-remote is empty", e.exception.message)

    def test_passwords_and_tokens_are_not_shown(self):
        self.assertEqual(ccachestats.redact("redis://u:secret@h:1/0"), "redis://u:***@h:1/0")
        self.assertEqual(ccachestats.redact("redis://secret@h"), "redis://***@h")
        self.assertEqual(ccachestats.redact("http://h/c|bearer-token=tok|layout=flat"),
                         "http://h/c|bearer-token=***|layout=flat")
        self.assertEqual(ccachestats.redact("redis://h:6379"), "redis://h:6379")


class Precedence(unittest.TestCase):
    def tearDown(self):
        ccachestats.set_flag(None, {})

    def test_the_flag_wins_over_both_variables(self):
        r = ccachestats.resolve("redis://flag", {"DMAHARNESS_CCACHE_REMOTE": "redis://env",
                                                 "CCACHE_REMOTE_STORAGE": "redis://user"})
        self.assertEqual((r.url, r.source, r.ours), ("redis://flag", "--ccache-remote", True))

    def test_then_the_harness_variable(self):
        r = ccachestats.resolve(None, {"DMAHARNESS_CCACHE_REMOTE": " redis://env ",
                                       "CCACHE_REMOTE_STORAGE": "redis://user"})
        self.assertEqual((r.url, r.source, r.ours), ("redis://env", "DMAHARNESS_CCACHE_REMOTE", True))

    def test_then_the_users_own_ccache_setting_untouched(self):
        for var in ("CCACHE_REMOTE_STORAGE", "CCACHE_SECONDARY_STORAGE"):
            r = ccachestats.resolve(None, {"DMAHARNESS_CCACHE_REMOTE": "", var: "file:/nfs"})
            self.assertEqual((r.url, r.source, r.ours), ("file:/nfs", var, False))

    def test_else_none(self):
        r = ccachestats.resolve(None, {"PATH": "/bin"})
        self.assertEqual((r.url, r.source, r.shown()), (None, None, None))

    def test_a_bad_variable_is_bad_input_unless_the_flag_overrides_it(self):
        with self.assertRaises(InputError) as e:
            ccachestats.resolve(None, {"DMAHARNESS_CCACHE_REMOTE": "redis:/x"})
        self.assertIn("DMAHARNESS_CCACHE_REMOTE 'redis:/x'", e.exception.message)
        self.assertEqual(ccachestats.resolve("redis://h", {"DMAHARNESS_CCACHE_REMOTE": "x"}).url,
                         "redis://h")

    def test_the_flag_is_remembered_for_the_process(self):
        ccachestats.set_flag("redis://flag", {})
        self.assertEqual(ccachestats.current({"DMAHARNESS_CCACHE_REMOTE": "redis://env"}).url,
                         "redis://flag")
        ccachestats.set_flag(None, {})
        self.assertEqual(ccachestats.current({"DMAHARNESS_CCACHE_REMOTE": "redis://env"}).url,
                         "redis://env")

    def test_a_bad_flag_is_not_remembered(self):
        with self.assertRaises(InputError):
            ccachestats.set_flag("bogus://x", {})
        self.assertIsNone(ccachestats.current({}).url)


class CommandLine(unittest.TestCase):
    def tearDown(self):
        ccachestats.set_flag(None, {})

    def test_every_building_command_takes_the_flag(self):
        p = cli.parser()
        for argv in (["build"], ["boot"], ["kunit"], ["run"], ["sweep"],
                     ["bisect", "--series", "s", "--signature", "x"]):
            a = p.parse_args(argv + ["--ccache-remote", "redis://h:1"])
            self.assertEqual(a.ccache_remote, "redis://h:1", argv)
        a = bisectrun.bisect_run_args(["--signature", "x", "--ccache-remote", "redis://h:1"])
        self.assertEqual(a.ccache_remote, "redis://h:1")

    def test_variant_spec_sets_it(self):
        a = cli.parser().parse_args(["build", "--ccache-remote", "redis://h:1"])
        with mock.patch.dict(os.environ, {"DMAHARNESS_CCACHE_REMOTE": "redis://env"}):
            common.variant_spec(a)
            self.assertEqual(ccachestats.current(os.environ).url, "redis://h:1")

    def test_a_bad_url_exits_4_before_any_build(self):
        self.addCleanup(signal.signal, signal.SIGTERM, signal.getsignal(signal.SIGTERM))
        with mock.patch.object(kbuild, "build", side_effect=AssertionError("built")), \
                mock.patch("sys.stderr"), mock.patch("sys.stdout"):
            self.assertEqual(cli.main(["build", "--ccache-remote", "bogus://x", "-q"]),
                             errors.EXIT_INPUT)
            with mock.patch.dict(os.environ, {"DMAHARNESS_CCACHE_REMOTE": "https://x"}):
                self.assertEqual(cli.main(["build", "-q"]), errors.EXIT_INPUT)

    def test_help_says_the_users_own_setting_is_honoured(self):
        text = cli.parser()._subparsers._group_actions[0].choices["build"].format_help()
        self.assertIn("--ccache-remote URL", text)
        self.assertIn("$DMAHARNESS_CCACHE_REMOTE", text)
        self.assertIn("CCACHE_REMOTE_STORAGE of your environment is used", " ".join(text.split()))


class MakeEnv(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.cache = Path(self.tmp.name) / "cache"
        patcher = mock.patch.dict(os.environ, {"DMAHARNESS_CACHE": str(self.cache)})
        patcher.start()
        self.addCleanup(patcher.stop)
        self.addCleanup(self.tmp.cleanup)
        self.addCleanup(ccachestats.set_flag, None, {})

    def env(self, **extra):
        return kbuild.make_env({"PATH": "/usr/bin", **extra})

    def test_the_flag_becomes_ccache_remote_storage(self):
        ccachestats.set_flag("redis://127.0.0.1:6379", {})
        env = self.env(CCACHE_REMOTE_STORAGE="file:/user", CCACHE_SECONDARY_STORAGE="file:/old",
                       DMAHARNESS_CCACHE_REMOTE="redis://env")
        self.assertEqual(env["CCACHE_REMOTE_STORAGE"], "redis://127.0.0.1:6379")
        self.assertNotIn("CCACHE_SECONDARY_STORAGE", env)
        self.assertEqual(env["CCACHE_DIR"], str(self.cache.resolve() / "ccache"))
        self.assertEqual(env["CCACHE_BASEDIR"], str(self.cache.resolve() / "work"))
        self.assertEqual(env["CCACHE_NOHASHDIR"], "1")
        self.assertEqual(env["KBUILD_BUILD_USER"], "dmaharness")

    def test_the_variable_without_the_flag(self):
        env = self.env(DMAHARNESS_CCACHE_REMOTE="redis+unix:/run/r.sock")
        self.assertEqual(env["CCACHE_REMOTE_STORAGE"], "redis+unix:/run/r.sock")

    def test_the_users_own_setting_passes_through(self):
        env = self.env(CCACHE_REMOTE_STORAGE="file:/nfs|read-only", CCACHE_RESHARE="1")
        self.assertEqual(env["CCACHE_REMOTE_STORAGE"], "file:/nfs|read-only")
        self.assertEqual(env["CCACHE_RESHARE"], "1")

    def test_none_without_any(self):
        self.assertNotIn("CCACHE_REMOTE_STORAGE", self.env())

    def test_make_is_spawned_with_it(self):
        ccachestats.set_flag("redis://h:6379", {})
        seen = {}

        class Make:
            stdout = iter(["  CC      init/main.o\n", "  LD      vmlinux\n"])
            pid = 0

            def wait(self):
                return 0

        def spawn(cmd, **kw):
            seen["cmd"], seen["env"] = cmd, kw["env"]
            return Make()

        log = open(Path(self.tmp.name) / "build.log", "w")
        self.addCleanup(log.close)
        with mock.patch.object(kbuild.proc, "spawn", spawn):
            steps = kbuild._make(Path(self.tmp.name), ["bzImage"], log, Progress(quiet=True),
                                 "build 6.1", None)
        self.assertEqual(steps, 2)
        self.assertIn("CC=ccache gcc", seen["cmd"])
        self.assertEqual(seen["env"]["CCACHE_REMOTE_STORAGE"], "redis://h:6379")
        self.assertEqual(seen["env"]["CCACHE_DIR"], str(self.cache.resolve() / "ccache"))


class Key(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        (Path(self.tmp.name) / "a.config").write_text("CONFIG_A=y\n")
        for patcher in (mock.patch.object(kbuild, "compiler_version", return_value="gcc 12"),
                        mock.patch.dict(os.environ)):
            patcher.start()
            self.addCleanup(patcher.stop)
        self.addCleanup(ccachestats.set_flag, None, {})
        os.environ.pop("DMAHARNESS_CCACHE_REMOTE", None)

    def test_the_remote_storage_is_not_part_of_the_key(self):
        v = kbuild.Variant("6.1", (), (fragments.parse_fragment(Path(self.tmp.name) / "a.config"),))
        plain = v.key(SRC)
        ccachestats.set_flag("redis://h:6379")
        self.assertEqual(v.key(SRC), plain)
        ccachestats.set_flag(None)
        os.environ["DMAHARNESS_CCACHE_REMOTE"] = "file:/x"
        os.environ["CCACHE_REMOTE_STORAGE"] = "file:/y"
        self.assertEqual(v.key(SRC), plain)
        self.assertNotIn("file:/", json.dumps(v.key_material(SRC)))


class Stats(unittest.TestCase):
    def test_print_stats_is_parsed(self):
        s = ccachestats.parse_stats(AFTER)
        self.assertEqual(len(s), 47)
        self.assertEqual((s["local_storage_hit"], s["remote_storage_hit"], s["cache_miss"],
                          s["direct_cache_hit"]), (1, 3, 2, 4))
        self.assertEqual(ccachestats.parse_stats("junk\nx\ty\n\ncache_miss\t7\n"),
                         {"cache_miss": 7})

    def test_the_counters_named_exist_in_ccache_4_7(self):
        s = ccachestats.parse_stats(AFTER)
        for name, counters in ccachestats.FIGURES.items():
            for c in counters:
                self.assertIn(c, s, name)

    def test_the_delta_is_the_builds_own(self):
        remote = ccachestats.Remote("redis://u:pw@h:6379", "--ccache-remote")
        d = ccachestats.delta(ccachestats.parse_stats(BEFORE), ccachestats.parse_stats(AFTER),
                              remote)
        self.assertEqual(d, {"local_hits": 1, "remote_hits": 3, "misses": 1, "direct_hits": 4,
                             "preprocessed_hits": 0, "remote_errors": 0,
                             "remote": "redis://u:***@h:6379"})
        self.assertEqual(ccachestats.describe(d),
                         "ccache: 1 local hits, 3 remote hits, 1 misses")

    def test_without_remote_storage(self):
        d = ccachestats.delta({"local_storage_hit": 5, "cache_miss": 2},
                              {"local_storage_hit": 9, "cache_miss": 3, "remote_storage_error": 4},
                              ccachestats.Remote(None, None))
        self.assertEqual((d["local_hits"], d["misses"], d["remote"]), (4, 1, None))
        self.assertEqual(ccachestats.describe(d), "ccache: 4 local hits, 1 misses, 4 remote errors")

    def test_a_missing_reading_gives_no_figures(self):
        r = ccachestats.Remote(None, None)
        self.assertIsNone(ccachestats.delta(None, {"cache_miss": 1}, r))
        self.assertIsNone(ccachestats.delta({}, None, r))
        self.assertEqual(ccachestats.describe(None), "")

    def test_counters_cleared_meanwhile_do_not_go_negative(self):
        d = ccachestats.delta({"cache_miss": 10}, {"cache_miss": 3}, ccachestats.Remote(None, None))
        self.assertEqual(d["misses"], 0)

    def test_no_ccache_no_figures(self):
        with mock.patch.object(subprocess, "run", side_effect=FileNotFoundError("ccache")):
            self.assertIsNone(ccachestats.read_stats({}))

    @unittest.skipUnless(shutil.which("ccache"), "ccache is not installed")
    def test_a_real_ccache_reads_its_own_folder(self):
        with tempfile.TemporaryDirectory() as d:
            s = ccachestats.read_stats({**os.environ, "CCACHE_DIR": d})
        self.assertIsNotNone(s)
        self.assertEqual(s["cache_miss"], 0)
        self.assertIn("remote_storage_hit", s)

    def test_the_build_result_carries_them(self):
        art = kbuild.Artifacts("6.1-x", Path("/nowhere"))
        fig = {"local_hits": 1, "remote_hits": 2, "misses": 3, "remote": None}
        self.assertEqual(kbuild.BuildResult(art, False, 1.0, None, 5, fig).to_json()["ccache"], fig)
        self.assertIsNone(kbuild.BuildResult(art, True, 0.0).to_json()["ccache"])


if __name__ == "__main__":
    unittest.main()
