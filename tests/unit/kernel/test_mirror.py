"""--tree and bisect-run: the mirror of a user's checkout, version detection, exit codes.

The mirror tests use a tiny git repository as the "user's checkout" and
check the promises that matter to git bisect: the checkout is never
written to (not even a chmod or utime through a hard link), files no
longer tracked disappear, and a patched file whose content did not change
keeps its mtime, so the next make does not rebuild what includes it.
"""

import contextlib
import hashlib
import io
import json
import os
import subprocess
import tempfile
import time
import unittest
from pathlib import Path
from unittest import mock

from harness.checks import bisect, bisectjob
from harness.kernel import checkout, kbuild, mirror, series
from harness.cli import main as cli
from harness.cli import bisectrun
from harness.errors import ConfigError, EnvError, InputError

GIT_ID = ["-c", "user.name=t", "-c", "user.email=t@t.invalid"]


def git(repo, *args):
    return subprocess.run(["git", "-C", str(repo), *GIT_ID, *args], check=True,
                          capture_output=True, text=True).stdout


def snapshot(tree: Path) -> dict:
    """Everything about the user's files that must never change."""
    out = {}
    for dirpath, dirnames, files in os.walk(tree):
        dirnames[:] = [d for d in dirnames if d != ".git"]
        for f in files:
            p = os.path.join(dirpath, f)
            st = os.lstat(p)
            data = os.readlink(p).encode() if os.path.islink(p) else open(p, "rb").read()
            out[os.path.relpath(p, tree)] = (st.st_ino, st.st_mode, st.st_mtime_ns,
                                             hashlib.sha256(data).hexdigest())
    return out


def rewrite(path: Path, text: str, mtime: float | None = None):
    """Change a file the way git checkout does: a new file in its place."""
    path.unlink()
    path.write_text(text)
    if mtime is not None:
        os.utime(path, (mtime, mtime))


class MirrorFixture(unittest.TestCase):
    """A tiny git checkout (the user's), a patch that applies and one that does not."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        d = Path(self.tmp.name)
        self.d = d
        self.user = d / "user"
        u = self.user
        (u / "drivers" / "x").mkdir(parents=True)
        (u / "Makefile").write_text("VERSION = 6\nPATCHLEVEL = 1\nSUBLEVEL = 0\n")
        (u / "drivers" / "x" / "x.c").write_text('#include "x.h"\nint x;\n')
        (u / "drivers" / "x" / "x.h").write_text("struct x {\n\tint a;\n};\n")
        (u / "drivers" / "x" / "old.c").write_text("gone soon\n")
        (u / "Kconfig").write_text("config X\n\tbool\n")
        (u / "script.sh").write_text("#!/bin/sh\n")
        (u / "script.sh").chmod(0o755)
        os.symlink("drivers/x/x.h", u / "link.h")
        git(u, "init", "-q")
        git(u, "add", "-A")
        git(u, "commit", "-q", "-m", "one")
        old = time.time() - 3600          # files older than any build, as in a real checkout
        for dirpath, _, files in os.walk(u):
            if ".git" not in dirpath:
                for f in files:
                    os.utime(os.path.join(dirpath, f), (old, old), follow_symlinks=False)
        self.root = d / "cache" / "work" / "checkout-test"
        self.root.parent.mkdir(parents=True)
        # a patch in the detector's place: changes x.h and creates a new file
        (d / "p.patch").write_text(
            "--- a/drivers/x/x.h\n+++ b/drivers/x/x.h\n@@ -1,3 +1,4 @@\n struct x {\n"
            " \tint a;\n+\tint detector;\n };\n"
            "--- /dev/null\n+++ b/drivers/x/new.c\n@@ -0,0 +1 @@\n+int created_by_patch;\n")
        (d / "bad.patch").write_text(
            "--- a/drivers/x/x.c\n+++ b/drivers/x/x.c\n@@ -1,2 +1,2 @@\n"
            ' #include "x.h"\n-int x;\n+int y;\n'
            "--- a/drivers/x/x.h\n+++ b/drivers/x/x.h\n@@ -1,1 +1,1 @@\n-no such line\n+z\n")
        self.patch = series.Patch(d / "p.patch")
        self.bad = series.Patch(d / "bad.patch")

    def tearDown(self):
        self.tmp.cleanup()

    def mirror(self):
        return mirror.Mirror(self.user, self.root)

    def step(self, patches=()):
        """One bisect step's mirror work: sync, patches, settle (a fresh Mirror each time)."""
        m = self.mirror()
        tracked = checkout.tracked_files(self.user)
        stats = m.sync(tracked)
        m.apply(patches)
        m.settle(stats)
        return m, stats

    def ino(self, p):
        return os.lstat(p).st_ino


class MirrorTest(MirrorFixture):
    def test_untouched_files_are_hard_links_symlinks_replicated(self):
        before = snapshot(self.user)
        self.step()
        for rel in ("Makefile", "drivers/x/x.c", "drivers/x/x.h", "script.sh"):
            self.assertEqual(self.ino(self.root / rel), self.ino(self.user / rel), rel)
        self.assertEqual(os.readlink(self.root / "link.h"), "drivers/x/x.h")
        self.assertEqual(snapshot(self.user), before)
        # a second sync with nothing changed does nothing
        _, stats = self.step()
        self.assertEqual((stats.linked, stats.copied, stats.removed), (0, 0, 0))

    def test_patch_breaks_the_link_and_leaves_the_users_file_alone(self):
        before = snapshot(self.user)
        self.step([self.patch])
        self.assertIn("int detector;", (self.root / "drivers/x/x.h").read_text())
        self.assertNotEqual(self.ino(self.root / "drivers/x/x.h"), self.ino(self.user / "drivers/x/x.h"))
        self.assertEqual(os.lstat(self.root / "drivers/x/x.h").st_nlink, 1)
        self.assertTrue((self.root / "drivers/x/new.c").is_file())
        self.assertFalse((self.user / "drivers/x/new.c").exists())
        # unpatched files are still links
        self.assertEqual(self.ino(self.root / "drivers/x/x.c"), self.ino(self.user / "drivers/x/x.c"))
        self.assertEqual(snapshot(self.user), before)
        # and after more steps, too
        self.step([self.patch])
        self.step()
        self.assertEqual(snapshot(self.user), before)

    def test_patched_file_keeps_its_mtime_while_its_content_is_the_same(self):
        self.step([self.patch])
        h, new = self.root / "drivers/x/x.h", self.root / "drivers/x/new.c"
        old = time.time() - 100
        # pretend the last step's make ran after the patch: its mtime is what make saw
        for p in (h, new):
            os.utime(p, (old, old))
        m = self.mirror()
        m.state["owned"]["drivers/x/x.h"][1] = os.stat(h).st_mtime_ns
        m.state["owned"]["drivers/x/new.c"][1] = os.stat(new).st_mtime_ns
        m.save()
        mt = (os.stat(h).st_mtime_ns, os.stat(new).st_mtime_ns)
        time.sleep(0.01)
        _, stats = self.step([self.patch])
        self.assertEqual((os.stat(h).st_mtime_ns, os.stat(new).st_mtime_ns), mt)
        self.assertEqual(stats.kept, 2)
        # the user's header changes (a new commit): ours changes, with a new mtime
        rewrite(self.user / "drivers/x/x.h", "/* new */\nstruct x {\n\tint a;\n};\n")
        t = time.time_ns()
        _, stats = self.step([self.patch])
        self.assertIn("/* new */", h.read_text())
        self.assertIn("int detector;", h.read_text())
        self.assertGreaterEqual(os.stat(h).st_mtime_ns, t - 10**9)
        self.assertEqual(os.stat(new).st_mtime_ns, mt[1])       # unchanged: kept
        self.assertEqual(stats.changed, 1)

    def test_file_no_longer_patched_gets_a_new_mtime(self):
        self.step([self.patch])
        h = self.root / "drivers/x/x.h"
        t = time.time_ns()
        time.sleep(0.01)
        self.step([])           # e.g. a later step without that series
        self.assertNotIn("detector", h.read_text())
        self.assertGreater(os.stat(h).st_mtime_ns, t)      # make must rebuild what includes it
        self.assertFalse((self.root / "drivers/x/new.c").exists())
        self.assertEqual(os.lstat(h).st_nlink, 1)          # ours now, never the user's inode

    def test_removed_files_and_empty_folders_go(self):
        self.step([self.patch])
        git(self.user, "rm", "-q", "drivers/x/old.c", "link.h")
        (self.user / "sub" / "deep").mkdir(parents=True)
        (self.user / "sub" / "deep" / "f.c").write_text("x\n")
        git(self.user, "add", "sub")
        git(self.user, "commit", "-q", "-m", "two")
        self.step([self.patch])
        self.assertFalse(os.path.lexists(self.root / "drivers/x/old.c"))
        self.assertFalse(os.path.lexists(self.root / "link.h"))
        self.assertTrue((self.root / "sub/deep/f.c").is_file())
        git(self.user, "rm", "-q", "-r", "sub")
        git(self.user, "commit", "-q", "-m", "three")
        self.step()
        self.assertFalse((self.root / "sub").exists())
        # the build folder is never touched
        (self.root / "_build").mkdir()
        (self.root / "_build" / "vmlinux").write_text("elf\n")
        self.step()
        self.assertTrue((self.root / "_build" / "vmlinux").is_file())

    def test_untracked_user_files_are_not_mirrored(self):
        (self.user / ".config").write_text("CONFIG_FROM_AN_IN_TREE_BUILD=y\n")
        self.step()
        self.assertFalse((self.root / ".config").exists())

    def test_local_changes_are_mirrored(self):
        (self.user / "drivers/x/x.c").write_text("int changed_in_place;\n")   # an editor
        self.step()
        self.assertEqual((self.root / "drivers/x/x.c").read_text(), "int changed_in_place;\n")

    def test_failed_patch_then_resync_restores_the_checkout_content(self):
        m = self.mirror()
        tracked = checkout.tracked_files(self.user)
        m.sync(tracked)
        with self.assertRaises(InputError) as cm:
            m.apply([self.bad])
        self.assertIn("hunk #1 FAILED", cm.exception.message)
        self.assertIn("bad.patch", cm.exception.message)
        m.sync(tracked)
        for rel in ("drivers/x/x.c", "drivers/x/x.h"):
            self.assertEqual(self.ino(self.root / rel), self.ino(self.user / rel), rel)
        self.assertEqual((self.user / "drivers/x/x.c").read_text(), '#include "x.h"\nint x;\n')

    def test_changed_file_with_an_old_mtime_becomes_ours_with_a_new_one(self):
        self.step()
        m = self.mirror()
        synced = m.state["synced_at"]
        # replaced by a tool that keeps old mtimes (cp -p, tar): a link would hide it from make
        rewrite(self.user / "drivers/x/x.c", "int restored;\n", mtime=synced / 1e9 - 600)
        self.step()
        p = self.root / "drivers/x/x.c"
        self.assertEqual(p.read_text(), "int restored;\n")
        self.assertNotEqual(self.ino(p), self.ino(self.user / "drivers/x/x.c"))
        self.assertGreater(os.stat(p).st_mtime_ns, synced)

    def test_copy_mode_quick_check(self):
        before = snapshot(self.user)
        with mock.patch("os.link", side_effect=OSError(18, "Invalid cross-device link")):
            self.step([self.patch])
            p = self.root / "drivers/x/x.c"
            ino = self.ino(p)
            self.assertNotEqual(ino, self.ino(self.user / "drivers/x/x.c"))
            self.assertEqual(os.stat(p).st_mtime_ns, os.stat(self.user / "drivers/x/x.c").st_mtime_ns)
            self.step([self.patch])
            self.assertEqual(self.ino(p), ino)      # unchanged: not copied again
            rewrite(self.user / "drivers/x/x.c", "int y;\n")
            self.step([self.patch])
            self.assertEqual(p.read_text(), "int y;\n")
        self.assertEqual({k: v for k, v in snapshot(self.user).items() if k != "drivers/x/x.c"},
                         {k: v for k, v in before.items() if k != "drivers/x/x.c"})

    def test_git_checkout_of_another_commit_is_followed(self):
        one = git(self.user, "rev-parse", "HEAD").strip()
        rewrite(self.user / "drivers/x/x.c", "int two;\n")
        git(self.user, "commit", "-q", "-a", "-m", "two")
        self.step([self.patch])
        self.assertEqual((self.root / "drivers/x/x.c").read_text(), "int two;\n")
        git(self.user, "checkout", "-q", one)
        self.step([self.patch])
        self.assertEqual((self.root / "drivers/x/x.c").read_text(), '#include "x.h"\nint x;\n')
        self.assertEqual(self.ino(self.root / "drivers/x/x.c"), self.ino(self.user / "drivers/x/x.c"))
        self.assertEqual(git(self.user, "status", "--porcelain"), "")

    def test_config_digest_follows_kconfig_only(self):
        m, _ = self.step([self.patch])
        tracked = checkout.tracked_files(self.user)
        d0 = mirror.config_digest(m, tracked, "frags")
        rewrite(self.user / "drivers/x/x.c", "int other;\n")
        m, _ = self.step([self.patch])
        self.assertEqual(mirror.config_digest(m, tracked, "frags"), d0)
        self.assertNotEqual(mirror.config_digest(m, tracked, "other frags"), d0)
        rewrite(self.user / "Kconfig", "config X\n\tbool \"x\"\n")
        m, _ = self.step([self.patch])
        self.assertNotEqual(mirror.config_digest(m, tracked, "frags"), d0)

    def test_checkout_identity_and_dirty_state(self):
        co = checkout.open_checkout(self.user / "drivers")
        self.assertEqual(co.path, Path(os.path.realpath(self.user)))
        self.assertEqual(co.version, "6.1")
        self.assertEqual(co.dirty, "")
        self.assertEqual(co.commit, git(self.user, "rev-parse", "HEAD").strip())
        (self.user / "untracked.c").write_text("not ours\n")
        self.assertEqual(checkout.open_checkout(self.user).dirty, "")
        (self.user / "drivers/x/x.c").write_text("int local;\n")
        d1 = checkout.open_checkout(self.user).dirty
        self.assertTrue(d1)
        (self.user / "drivers/x/x.c").write_text("int other;\n")
        self.assertNotIn(checkout.open_checkout(self.user).dirty, ("", d1))
        # the index was not written (git status with --no-optional-locks)
        self.assertFalse((self.user / ".git" / "index.lock").exists())

    def test_mirror_path_is_keyed_by_the_real_path(self):
        os.symlink(self.user, self.d / "alias")
        with mock.patch.dict(os.environ, {"DMAHARNESS_CACHE": str(self.d / "cache")}):
            a = mirror.mirror_root(self.user)
            self.assertEqual(a, mirror.mirror_root(self.d / "alias"))
            self.assertEqual(a.parent, (self.d / "cache" / "work").resolve())
            self.assertTrue(a.name.startswith("checkout-"))


class TreeBuildErrors(MirrorFixture):
    """kbuild.build of a checkout's variant up to make: which series applies, what fails."""

    def variant(self, candidates, extra=()):
        co = checkout.Checkout(Path(os.path.realpath(self.user)), "0" * 40, "", "6.5")
        return kbuild.TreeVariant(co, tuple((v, tuple(ps)) for v, ps in candidates),
                                  tuple(extra), ())

    def build(self, variant):
        with mock.patch.dict(os.environ, {"DMAHARNESS_CACHE": str(self.d / "cache")}), \
                mock.patch.object(kbuild, "compiler_version", return_value="gcc 12"), \
                mock.patch.object(kbuild, "check_tools"), \
                mock.patch.object(kbuild, "configure",
                                  side_effect=InputError("CONFIG_X=y ended up not set")) as cfg:
            try:
                kbuild.build(variant, progress=mock.Mock())
            except InputError as e:
                return e, cfg
        self.fail("no error")

    def test_no_series_applies(self):
        before = snapshot(self.user)
        e, cfg = self.build(self.variant([("6.1", [self.bad]), ("6.12", [self.bad])]))
        self.assertIn("detector series does not apply", e.message)
        self.assertIn("patches/6.1/series", e.message)
        self.assertIn("patches/6.12/series", e.message)
        self.assertIn("bad.patch", e.message)
        self.assertIn("hunk #1 FAILED", e.message)
        cfg.assert_not_called()
        self.assertEqual(snapshot(self.user), before)

    def test_nearest_that_applies_then_a_lost_option(self):
        before = snapshot(self.user)
        e, cfg = self.build(self.variant([("6.1", [self.bad]), ("6.12", [self.patch])]))
        self.assertIn("CONFIG_X=y ended up not set", e.message)
        cfg.assert_called_once()
        with mock.patch.dict(os.environ, {"DMAHARNESS_CACHE": str(self.d / "cache")}):
            root = mirror.mirror_root(self.user)
        self.assertIn("int detector;", (root / "drivers/x/x.h").read_text())
        # the half-applied 6.1 attempt was undone: x.c is the checkout's again
        self.assertEqual(os.lstat(root / "drivers/x/x.c").st_ino,
                         os.lstat(self.user / "drivers/x/x.c").st_ino)
        self.assertEqual(snapshot(self.user), before)

    def test_extra_series_that_does_not_apply(self):
        e, _ = self.build(self.variant([("6.1", [self.patch])], [self.bad]))
        self.assertIn("bad.patch does not apply", e.message)


class Versions(unittest.TestCase):
    def test_read_version(self):
        mk = "# SPDX\nVERSION = 6\nPATCHLEVEL = 12\nSUBLEVEL = 3\nEXTRAVERSION =\nNAME = x\n"
        self.assertEqual(checkout.read_version(mk), "6.12")
        self.assertEqual(checkout.read_version("all:\n\ttrue\n"), "")

    def test_series_order_nearest_first(self):
        self.assertEqual(series.series_order("6.1"), ["6.1"])
        self.assertEqual(series.series_order("6.12"), ["6.12"])
        self.assertEqual(series.series_order("7.3"), ["7.3"])
        self.assertEqual(series.series_order("6.5"), ["6.1", "6.12", "7.3"])
        self.assertEqual(series.series_order("6.9"), ["6.12", "6.1", "7.3"])
        self.assertEqual(series.series_order("7.0"), ["7.3", "6.12", "6.1"])
        self.assertEqual(series.series_order("7.2"), ["7.3", "6.12", "6.1"])
        self.assertEqual(series.series_order("5.15"), ["6.1", "6.12", "7.3"])


class ExitCodes(unittest.TestCase):
    """What git bisect run sees: 0, 1, 125, or >= 128 to stop."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        d = Path(self.tmp.name)
        self.repo = d / "linux"
        self.repo.mkdir()
        (self.repo / "Makefile").write_text("VERSION = 6\nPATCHLEVEL = 1\n")
        git(self.repo, "init", "-q")
        git(self.repo, "add", "-A")
        git(self.repo, "commit", "-q", "-m", "x")
        for p in (mock.patch.dict(os.environ, {"DMAHARNESS_CACHE": str(d / "cache")}),
                  mock.patch.object(kbuild, "compiler_version", return_value="gcc 12"),
                  mock.patch.object(bisectjob.initramfs, "build_agent",
                                    return_value=Path("/bin/true"))):
            p.start()
            self.addCleanup(p.stop)

    def tearDown(self):
        self.tmp.cleanup()

    def main(self, *args, build=None, run=None):
        """bisectrun.bisect_run with the build and the runs' verdict replaced."""
        out, err = io.StringIO(), io.StringIO()
        built = mock.Mock(cached=True, to_json=lambda: {"key": "k"},
                          artifacts=mock.Mock(dir=Path("/nonexistent"), meta={}))
        with mock.patch.object(bisectjob.kbuild, "build", side_effect=build, return_value=built), \
                mock.patch.object(bisectjob.FloodRunner, "run",
                                  return_value=[bisect.RunOutcome(bisect.CLEAN)] * 2), \
                mock.patch.object(bisectjob.bisect, "decide", side_effect=run), \
                contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = cli.main(["bisect-run", *args])
        return code, out.getvalue(), err.getvalue()

    def verdict(self, v):
        return lambda *a, **k: (v, "because")

    def test_argparse_errors_stop_the_bisection(self):
        for args in ([], ["--signature"], ["--signature", "x", "--no-such-flag"],
                     ["--signature", "x", "--runs", "zero"], ["--signature", "x", "--runs", "0"],
                     ["--signature", "x", "--repro-chance", "1.5"]):
            code, _, err = self.main(*args)
            self.assertEqual(code, bisectrun.BR_USAGE, args)
            self.assertGreaterEqual(code, 128)
            self.assertIn("error", err)

    def test_help_is_zero_and_shows_the_git_line(self):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            self.assertEqual(cli.main(["bisect-run", "--help"]), 0)
        text = out.getvalue()
        self.assertIn("git bisect run /path/to/dmaharness bisect-run --signature", text)
        for code in ("125", "129", "130", "131", "132"):
            self.assertIn(code, text)

    def test_verdicts(self):
        tree = ["--signature", "x", "--tree", str(self.repo)]
        self.assertEqual(self.main(*tree, run=self.verdict(bisect.GOOD))[0], 0)
        self.assertEqual(self.main(*tree, run=self.verdict(bisect.BAD))[0], 1)
        self.assertEqual(self.main(*tree, run=self.verdict(bisect.SKIP))[0], 125)

    def test_skip_stop_and_internal_errors(self):
        tree = ["--signature", "x", "--tree", str(self.repo)]
        cases = [
            (InputError("patch does not apply"), 125),          # the commit's fault: skip
            (ConfigError("merge_config.sh failed"), bisectrun.BR_INPUT),   # ours: stop
            (kbuild.BuildError("x.c:1: error"), 125),
            (EnvError("`flex` is not installed"), bisectrun.BR_ENV),
            (KeyboardInterrupt(), bisectrun.BR_INTERRUPTED),
            (RuntimeError("a bug"), bisectrun.BR_INTERNAL),
        ]
        for exc, want in cases:
            code, _, err = self.main(*tree, build=exc)
            self.assertEqual(code, want, (exc, err))
            self.assertIn(f"exit {want}", err.splitlines()[-1])
        code, _, err = self.main(*tree, build=RuntimeError("a bug"))
        self.assertIn("Traceback", err)
        # a file of ours that is wrong is not the commit's fault: stop
        code, _, err = self.main(*tree, "--fragment", str(Path(self.tmp.name) / "nope.config"))
        self.assertEqual(code, bisectrun.BR_INPUT, err)

    def test_not_a_checkout_or_not_a_kernel_stops(self):
        code, _, _ = self.main("--signature", "x", "--tree", self.tmp.name)
        self.assertEqual(code, bisectrun.BR_INPUT)
        (self.repo / "Makefile").write_text("all:\n")
        code, _, err = self.main("--signature", "x", "--tree", str(self.repo))
        self.assertEqual(code, bisectrun.BR_INPUT)
        self.assertIn("not a Linux kernel checkout", err)

    def test_json_is_one_object(self):
        code, out, _ = self.main("--signature", "x", "--tree", str(self.repo), "--json",
                                 build=kbuild.BuildError("the kernel does not build",
                                                         detail="x.c:1: error"))
        self.assertEqual(code, 125)
        d = json.loads(out)
        self.assertEqual((d["version"], d["verdict"], d["exit_code"]), (1, "skip", 125))
        self.assertEqual(d["commit"], git(self.repo, "rev-parse", "HEAD").strip())
        self.assertEqual(d["kernel_version"], "6.1")
        self.assertIn("x.c:1: error", d["detail"])

    def test_key_depends_on_commit_dirty_state_and_detector(self):
        co = checkout.open_checkout(self.repo)
        k = kbuild.tree_variant(co).key()
        self.assertTrue(k.startswith(f"git-6.1-{co.commit[:12]}-"))
        self.assertEqual(k, kbuild.tree_variant(co).key())
        co2 = checkout.Checkout(co.path, co.commit, "abc", co.version)
        self.assertNotEqual(k, kbuild.tree_variant(co2).key())
        frags = tuple(kbuild.fragmod.resolve_fragments([]))
        nd = kbuild.tree_variant(co, (), frags, detector=False)
        self.assertNotEqual(k, nd.key())
        self.assertEqual(nd.candidates, ())
        self.assertNotIn("detector", [f.name for f in nd.fragments])
        self.assertNotIn("kunit", [f.name for f in nd.fragments])
        self.assertIn("detector", [f.name for f in kbuild.tree_variant(co, (), frags).fragments])


if __name__ == "__main__":
    unittest.main()
