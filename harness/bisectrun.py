"""dmaharness bisect-run: the `git bisect run` helper.

Run inside a user's own Linux git checkout (or ``--tree DIR``) at the
commit git bisect checked out, it builds that commit with our kconfig
fragments and the detector series, boots it with the fake cameras
flooding, looks for ``--signature`` among the kernel reports, and exits
with the code git bisect run reads:

  0    good: the signature did not show (often enough to trust it)
  1    bad: the signature showed
  125  skip: this commit cannot be tested here: the detector series or
       --series does not apply, a config option does not stick, the
       kernel does not build, or the guest failed in every run
  >=128  stop the bisection (git aborts on any code above 127):
       128 internal error, 129 usage error, 130 interrupted,
       131 environment (a tool or package is missing), 132 bad input
       that is not the commit's fault (not a kernel checkout, a
       --series or --fragment file missing)

The user's checkout is never written to.  The commit is built in a
mirror, ``<cache>/work/checkout-<hash of its real path>/``, that holds
hard links of the checkout's tracked files (``git ls-files``; copies when
the cache is on another filesystem), with the detector patches applied
there by GNU patch, which writes patched files anew and so breaks their
links.  Its O= folder ``_build/`` stays between steps, so each step is an
incremental build: untouched files keep the checkout's mtimes through the
links, and a file we own (patched, created by a patch, or copied) keeps
the mtime it had at the last step when its content is the same, so a
patched header does not rebuild everything that includes it at every
step.  ``<cache>/work/checkout-<hash>.mirror`` records those files.
"""

from __future__ import annotations

import argparse
import errno
import hashlib
import json
import os
import re
import shutil
import signal
import stat
import subprocess
import sys
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path

from . import bisect, errors, fragments, initramfs, kernel, paths, proc, series
from .errors import EnvError, HarnessError, InputError
from .progress import Progress, fmt_duration

JSON_VERSION = 1
MIRROR_FORMAT = 1

EXIT_GOOD, EXIT_BAD, EXIT_SKIP = 0, 1, 125
EXIT_INTERNAL = 128       # a bug in the harness: the traceback is printed
EXIT_USAGE = 129          # bad command line (argparse's own 2 would mean "bad")
EXIT_INTERRUPTED = 130    # Ctrl-C or SIGTERM
EXIT_ENV = 131            # a tool, package or the fake device's build is missing
EXIT_INPUT = 132          # not a kernel checkout, a --series/--fragment file is wrong
VERDICT_EXIT = {bisect.GOOD: EXIT_GOOD, bisect.BAD: EXIT_BAD, bisect.SKIP: EXIT_SKIP}

# fragments that only mean something with the detector series applied
DETECTOR_FRAGMENTS = ("detector", "kunit")


class Skip(Exception):
    """This commit cannot be tested: exit 125 (git bisect skips it)."""

    def __init__(self, message: str, detail: str = ""):
        super().__init__(message)
        self.message = message
        self.detail = detail


# --- the user's checkout ---------------------------------------------------------

def git(tree: Path, *args: str) -> bytes:
    """Run git in tree without taking optional locks (never writes the index)."""
    try:
        r = subprocess.run(["git", "--no-optional-locks", "-C", str(tree), *args],
                           capture_output=True)
    except OSError as e:
        raise EnvError(f"git is not usable ({e}); install git") from e
    if r.returncode != 0:
        raise InputError(f"`git {' '.join(args)}` failed in {tree}: "
                         f"{r.stderr.decode(errors='replace').strip()[-400:]}", path=str(tree))
    return r.stdout


@dataclass
class Checkout:
    path: Path           # the work tree's top level, real path
    commit: str
    dirty: str           # '' when the tracked files match HEAD, else a digest of the diff
    version: str         # "6.1", from the top Makefile

    @property
    def short(self) -> str:
        return self.commit[:12] + ("+dirty" if self.dirty else "")


def read_version(makefile_text: str) -> str:
    """VERSION.PATCHLEVEL of a kernel top Makefile ('' when it is not one)."""
    vals = {}
    for line in makefile_text.splitlines()[:20]:
        m = re.match(r"^(VERSION|PATCHLEVEL)\s*=\s*(\d+)\s*$", line)
        if m:
            vals[m.group(1)] = m.group(2)
    if "VERSION" in vals and "PATCHLEVEL" in vals:
        return f"{vals['VERSION']}.{vals['PATCHLEVEL']}"
    return ""


def open_checkout(where: Path) -> Checkout:
    top = git(Path(where), "rev-parse", "--show-toplevel").decode().strip()
    if not top:
        raise InputError(f"{where} is not inside a git work tree (a bare repository?)")
    top_path = Path(os.path.realpath(top))
    commit = git(top_path, "rev-parse", "--verify", "HEAD").decode().strip()
    status = git(top_path, "status", "--porcelain", "-z", "--untracked-files=no")
    dirty = ""
    if status.strip(b"\0"):
        diff = git(top_path, "diff", "HEAD", "--binary", "--no-ext-diff", "--no-textconv")
        dirty = hashlib.sha256(diff).hexdigest()[:16]
    mk = top_path / "Makefile"
    version = read_version(mk.read_text(errors="replace")) if mk.is_file() else ""
    if not version:
        raise InputError(f"{top_path} is not a Linux kernel checkout: its Makefile has no "
                         "VERSION/PATCHLEVEL", path=str(mk))
    return Checkout(top_path, commit, dirty, version)


def tracked_files(tree: Path) -> list[str]:
    out = git(tree, "ls-files", "-z")
    return [os.fsdecode(p) for p in out.split(b"\0") if p]


def series_order(version: str) -> list[str]:
    """The detector series to try for a kernel version: its own, else the nearest first."""
    if version in kernel.SUPPORTED:
        return [version]

    def num(v: str) -> int:
        major, minor = v.split(".")
        return int(major) * 1000 + int(minor)

    return sorted(kernel.SUPPORTED, key=lambda v: (abs(num(v) - num(version)), -num(v)))


# --- the mirror ----------------------------------------------------------------------

def mirror_root(checkout: Path) -> Path:
    h = hashlib.sha256(os.fsencode(os.path.realpath(checkout))).hexdigest()[:16]
    return paths.cache_dir() / "work" / f"checkout-{h}"


def _sha(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


@dataclass
class SyncStats:
    files: int = 0
    linked: int = 0        # (re)linked: new or changed in the checkout
    copied: int = 0        # copies: ours (patched) or across filesystems
    removed: int = 0       # no longer tracked
    kept: int = 0          # our files whose content did not change: old mtime back
    changed: int = 0       # our files whose content changed: new mtime
    seconds: float = 0.0

    def to_json(self) -> dict:
        return {k: (round(v, 2) if isinstance(v, float) else v) for k, v in self.__dict__.items()}


class Mirror:
    """A build copy of a checkout's work tree, never writing to the checkout.

    Invariants: a mirror file is either a hard link of the checkout's file
    (same inode; never written, chmod'ed or utime'd here), or *ours*: a
    file with one link (st_nlink == 1) that we wrote.  Ours are the files
    a patch touched, and once ours a path stays ours (rewritten from the
    checkout at every sync) so that its mtime can always be managed: the
    state file records each one's sha256 and mtime, and a file whose
    content is the same as at the last sync gets that mtime back.
    """

    RESERVED = ("_build",)       # top-level entries that are not the checkout's

    def __init__(self, checkout: Path, root: Path | None = None):
        self.checkout = Path(checkout)
        self.root = root or mirror_root(checkout)
        self.state_file = self.root.parent / f"{self.root.name}.mirror"
        self.fresh = False           # no usable state: _build may not match the tree
        self.state = self._load()
        self.copy_mode = False
        self.touched: set[str] = set()
        self.forced: set[str] = set()

    def _load(self) -> dict:
        try:
            st = json.loads(self.state_file.read_text())
            if st.get("format") == MIRROR_FORMAT and st.get("checkout") == str(self.checkout):
                return st
        except (OSError, ValueError):
            pass
        self.fresh = True
        return {"format": MIRROR_FORMAT, "checkout": str(self.checkout), "owned": {},
                "synced_at": 0}

    def _save(self) -> None:
        tmp = self.state_file.with_name(self.state_file.name + f".tmp-{os.getpid()}")
        tmp.write_text(json.dumps(self.state, indent=0, sort_keys=True) + "\n")
        tmp.rename(self.state_file)

    # -- sync ---------------------------------------------------------------
    def sync(self, tracked: list[str]) -> SyncStats:
        """Make the mirror hold exactly the checkout's tracked work-tree files.

        Also undoes whatever patches did since the last sync: a patched file
        is not the checkout's inode (relinked) or is ours (rewritten), and a
        file a patch created is not tracked (removed).
        """
        t0 = time.monotonic()
        stats = SyncStats(files=len(tracked))
        self.root.mkdir(parents=True, exist_ok=True)
        undo = self.touched          # patched since the last sync (a series that failed)
        self.touched, self.forced = set(), set()
        wanted = set(tracked)
        stats.removed = self._remove_untracked(wanted)
        owned = self.state["owned"]
        synced_at = int(self.state.get("synced_at", 0))
        made_dirs: set[str] = set()
        for rel in tracked:
            src = self.checkout / rel
            dst = self.root / rel
            try:
                s = os.lstat(src)
            except FileNotFoundError:        # deleted in the work tree, still in the index
                self._unlink(dst)
                continue
            parent = os.path.dirname(rel)
            if parent not in made_dirs:
                self._ensure_dir(parent)
                made_dirs.add(parent)
            try:
                d = os.lstat(dst)
                if stat.S_ISDIR(d.st_mode):      # a folder where the checkout has a file
                    shutil.rmtree(dst)
                    d = None
            except FileNotFoundError:
                d = None
            if stat.S_ISLNK(s.st_mode):
                target = os.readlink(src)
                if not (os.path.islink(dst) and os.readlink(dst) == target):
                    self._replace(dst, lambda tmp: os.symlink(target, tmp))
                    stats.linked += 1
                continue
            if not stat.S_ISREG(s.st_mode):    # a submodule's folder, a fifo: not ours to build
                continue
            if rel in owned:
                self._replace(dst, lambda tmp: self._copy(src, tmp, s))
                stats.copied += 1
                continue
            if d is not None and (d.st_dev, d.st_ino) == (s.st_dev, s.st_ino):
                continue
            if (d is not None and stat.S_ISREG(d.st_mode) and d.st_nlink == 1
                    and d.st_size == s.st_size and d.st_mtime_ns == s.st_mtime_ns):
                continue       # our copy (the cache is on another filesystem), up to date
            if d is not None and rel not in undo and s.st_mtime_ns <= synced_at:
                # a changed file that is not newer than our last build (cp -p, tar):
                # make would miss it through a link; ours, it gets a new mtime
                self._replace(dst, lambda tmp: self._copy(src, tmp, s))
                self.forced.add(rel)
                stats.copied += 1
                continue
            self._replace(dst, lambda tmp: self._link_or_copy(src, tmp, s))
            stats.linked += 1
        stats.seconds = time.monotonic() - t0
        return stats

    def _remove_untracked(self, wanted: set[str]) -> int:
        removed = 0
        emptied: set[str] = set()
        for dirpath, dirnames, filenames in os.walk(self.root, topdown=True):
            rel_dir = os.path.relpath(dirpath, self.root)
            if rel_dir == ".":
                dirnames[:] = [d for d in dirnames if d not in self.RESERVED]
                rel_dir = ""
            keep_dirs = []
            for d in dirnames:
                p = os.path.join(dirpath, d)
                if os.path.islink(p):          # a symlink to a folder: an entry like a file
                    if os.path.join(rel_dir, d) not in wanted:
                        os.unlink(p)
                        removed += 1
                        emptied.add(rel_dir)
                else:
                    keep_dirs.append(d)
            dirnames[:] = keep_dirs
            for f in filenames:
                rel = os.path.join(rel_dir, f)
                if rel not in wanted:
                    os.unlink(os.path.join(dirpath, f))
                    removed += 1
                    emptied.add(rel_dir)
        # folders that removals left empty, deepest first, and their parents
        for rel_dir in sorted(emptied, key=lambda r: -r.count("/")):
            while rel_dir:
                try:
                    os.rmdir(self.root / rel_dir)
                except OSError:
                    break
                rel_dir = os.path.dirname(rel_dir)
        return removed

    def _ensure_dir(self, rel_dir: str) -> None:
        """Create root/rel_dir, replacing files or symlinks in the way (a type change)."""
        try:
            os.makedirs(self.root / rel_dir, exist_ok=True)
            if not os.path.islink(self.root / rel_dir):
                return
        except (FileExistsError, NotADirectoryError):
            pass
        p = self.root
        for part in Path(rel_dir).parts:
            p = p / part
            if os.path.lexists(p) and (os.path.islink(p) or not os.path.isdir(p)):
                os.unlink(p)
            p.mkdir(exist_ok=True)

    @staticmethod
    def _unlink(p: Path) -> None:
        try:
            os.unlink(p)
        except FileNotFoundError:
            pass
        except IsADirectoryError:
            shutil.rmtree(p)

    @staticmethod
    def _replace(dst: Path, make) -> None:
        """Create the new entry beside dst, then rename it over dst (never write through)."""
        tmp = dst.with_name(dst.name + ".dmaharness-tmp")
        Mirror._unlink(tmp)
        make(tmp)
        os.rename(tmp, dst)

    @staticmethod
    def _copy(src: Path, tmp: Path, s: os.stat_result) -> None:
        shutil.copyfile(src, tmp, follow_symlinks=False)
        os.chmod(tmp, s.st_mode & 0o7777 | 0o200)    # ours: writable, for patch

    def _link_or_copy(self, src: Path, tmp: Path, s: os.stat_result) -> None:
        if not self.copy_mode:
            try:
                os.link(src, tmp, follow_symlinks=False)
                return
            except OSError as e:
                if e.errno not in (errno.EXDEV, errno.EPERM, errno.EMLINK):
                    raise
                self.copy_mode = True
        shutil.copy2(src, tmp, follow_symlinks=False)   # keeps the mtime: quick check later

    # -- patches ------------------------------------------------------------
    def apply(self, patches) -> None:
        """Apply patches (GNU patch, no fuzz); InputError names the patch and hunk."""
        for p in patches:
            self.touched.update(p.touched_files())
            kernel._apply(p, self.root)

    # -- mtimes -------------------------------------------------------------
    def settle(self, stats: SyncStats | None = None) -> SyncStats:
        """Record our files; those whose content did not change get their old mtime.

        Call after the patches, before make.
        """
        stats = stats or SyncStats()
        old = self.state["owned"]
        new: dict[str, list] = {}
        for rel in sorted(set(old) | self.touched | self.forced):
            dst = self.root / rel
            try:
                d = os.lstat(dst)
            except FileNotFoundError:
                continue
            if not stat.S_ISREG(d.st_mode) or d.st_nlink != 1:
                continue        # a link of the checkout's file: never ours to touch
            try:
                s = os.lstat(self.checkout / rel)
                if (s.st_dev, s.st_ino) == (d.st_dev, d.st_ino):
                    continue
            except FileNotFoundError:
                pass
            sha = _sha(dst)
            prev = old.get(rel)
            if prev and prev[0] == sha:
                os.utime(dst, ns=(prev[1], prev[1]))
                new[rel] = prev
                stats.kept += 1
            else:
                new[rel] = [sha, d.st_mtime_ns]
                stats.changed += 1
        self.state["owned"] = new
        self.state["synced_at"] = time.time_ns()
        self._save()
        return stats


def config_inputs(rel: str) -> bool:
    """Whether a tracked file can change what tinyconfig + olddefconfig produce."""
    base = os.path.basename(rel)
    return (base.startswith("Kconfig") or rel.startswith("scripts/") or rel == "Makefile"
            or os.path.basename(os.path.dirname(rel)) == "configs")


def config_digest(mirror: Mirror, tracked: list[str], fragments_digest: str) -> str:
    """What the last configure of the mirror depended on.

    A file is identified by its inode, size and mtime when it is a link
    (git writes a changed file anew), by its content when it is ours.
    """
    h = hashlib.sha256(f"{fragments_digest}\0{kernel.compiler_version()}\n".encode())
    owned = mirror.state["owned"]
    for rel in tracked:
        if not config_inputs(rel):
            continue
        if rel in owned:
            h.update(f"{rel}\0{owned[rel][0]}\n".encode())
            continue
        try:
            d = os.lstat(mirror.root / rel)
        except FileNotFoundError:
            continue
        h.update(f"{rel}\0{d.st_ino}\0{d.st_size}\0{d.st_mtime_ns}\n".encode())
    for rel in sorted(owned):     # files created by patches (new Kconfig files)
        if config_inputs(rel):
            h.update(f"{rel}\0{owned[rel][0]}\n".encode())
    return h.hexdigest()


# --- the step -------------------------------------------------------------------------

@dataclass
class Plan:
    """What is built for a checkout's commit."""
    checkout: Checkout
    candidates: list[tuple[str, list[series.Patch]]]   # detector series to try, in order
    extra: list[series.Patch]
    frags: list[fragments.Fragment]

    def key_material(self) -> dict:
        return {
            "format": kernel.BUILD_FORMAT,
            "mirror_format": MIRROR_FORMAT,
            "arch": kernel.ARCH,
            "version": self.checkout.version,
            "commit": self.checkout.commit,
            "dirty": self.checkout.dirty,
            "fragments": [[f.name, f.digest()] for f in self.frags],
            "detector": [[ver, [[p.name, p.strip, p.digest()] for p in ps]]
                         for ver, ps in self.candidates],
            "patches": [[p.name, p.strip, p.digest()] for p in self.extra],
            "cc": kernel.compiler_version(),
        }

    def key(self) -> str:
        blob = json.dumps(self.key_material(), sort_keys=True).encode()
        c = self.checkout
        return f"git-{c.version}-{c.commit[:12]}-{hashlib.sha256(blob).hexdigest()[:16]}"


def make_plan(a, checkout: Checkout) -> Plan:
    cands = []
    if not a.no_detector:
        for ver in series_order(checkout.version):
            cands.append((ver, series.parse_series(series.base_series(ver))))
    extra: list[series.Patch] = []
    for s in a.series:
        extra.extend(series.parse_series(s))
    frags = fragments.resolve_fragments(a.fragment)
    if a.no_detector and not a.fragment:
        frags = [f for f in frags if f.name not in DETECTOR_FRAGMENTS]
    return Plan(checkout, cands, extra, frags)


@dataclass
class StepBuild:
    result: kernel.BuildResult
    detector: str | None          # the series applied ("6.1"), None without
    mirror: dict = field(default_factory=dict)


def build_step(a, plan: Plan, note, prog: Progress) -> StepBuild:
    """Build the checkout's commit in its mirror, or take it from the cache."""
    t0 = time.monotonic()
    key = plan.key()
    art = None if a.force else kernel.load_artifacts(key)
    if art:
        note(f"build: cached {art.dir}")
        return StepBuild(kernel.BuildResult(art, True, time.monotonic() - t0),
                         art.meta.get("detector_series"))
    kernel.check_tools()
    co = plan.checkout
    label = f"bisect-run {co.short}"
    with paths.locked(f"mirror-{mirror_root(co.path).name}",
                      wait_message=f"[{label}] waiting for another bisect-run on this checkout"):
        mirror = Mirror(co.path)
        tracked = tracked_files(co.path)
        stats = mirror.sync(tracked)
        applied, failures = None, []
        for ver, patches in plan.candidates:
            try:
                mirror.apply(patches)
                applied = ver
                break
            except InputError as e:
                failures.append(f"patches/{ver}/series: {e.message}")
                stats = mirror.sync(tracked)     # undo the partial series
        if plan.candidates and applied is None:
            raise Skip("the detector series does not apply (use --no-detector to build "
                       "without it): " + " | ".join(failures))
        try:
            mirror.apply(plan.extra)
        except InputError as e:
            raise Skip(f"--series: {e.message}") from None
        mirror.settle(stats)
        note(f"mirror: {mirror.root} ({stats.files} files; {stats.linked} linked, "
             f"{stats.copied} copied, {stats.removed} removed; {stats.changed} of our files "
             f"changed, {stats.kept} kept their mtime) in {stats.seconds:.1f}s"
             + (" (copies: the cache is on another filesystem)" if mirror.copy_mode else "")
             + (f"; detector patches/{applied}/series" if applied else "; no detector"))
        build_dir = mirror.root / "_build"
        if mirror.fresh and build_dir.exists():
            # the record of our files' mtimes is gone: make could trust stale objects
            note(f"mirror: no record of its patched files; starting {build_dir} afresh")
            shutil.rmtree(build_dir)
        first = not (build_dir / "vmlinux").is_file()
        build_dir.mkdir(exist_ok=True)
        # no "-g<sha>" from setlocalversion if the cache is inside some git repository
        os.environ["GIT_CEILING_DIRECTORIES"] = str(mirror.root.parent)
        log_path = build_dir / "build.log"
        marker = build_dir / ".dmaharness-configured"
        digest = config_digest(mirror, tracked, hashlib.sha256(
            json.dumps([[f.name, f.digest()] for f in plan.frags]).encode()).hexdigest())
        with open(log_path, "w") as log:
            config = build_dir / ".config"
            if (marker.is_file() and marker.read_text().strip() == digest and config.is_file()
                    and not fragments.verify(config.read_text(), plan.frags)):
                log.write("# no Kconfig file, config script or fragment changed since the "
                          "last configure: .config kept\n")
            else:
                marker.unlink(missing_ok=True)
                try:
                    kernel.configure(mirror.root, plan.frags, co.version, log,
                                     Progress(quiet=True), label)
                except InputError as e:
                    raise Skip(e.message) from None
                marker.write_text(digest + "\n")
            jobs = a.jobs or os.cpu_count() or 2
            expected = kernel._expected_steps(co.version) if first else None
            tb = time.monotonic()
            try:
                with paths.locked("kbuild", wait_message=f"[{label}] waiting for another "
                                                         "kernel build"):
                    steps = kernel._make(mirror.root, [f"-j{jobs}", "bzImage", "modules"], log,
                                         prog, label, expected)
            except errors.BuildError as e:
                raise Skip(f"the kernel does not build: {e.message}", e.detail) from None
            material = plan.key_material()
            material.update({"tree": str(co.path), "detector_series": applied,
                             "mirror": str(mirror.root), "make_seconds": round(time.monotonic() - tb, 1)})
            try:
                art = kernel.publish(mirror.root, key, material, label, log, steps,
                                     time.monotonic() - t0, None)
            except errors.BuildError as e:
                raise Skip(f"modules_install failed: {e.message}", e.detail) from None
    el = time.monotonic() - t0
    note(f"build: {steps} make steps in {fmt_duration(el)}"
         + (" (first build of this mirror)" if first else "") + f": {art.dir}")
    return StepBuild(kernel.BuildResult(art, False, el, None, steps), applied, stats.to_json())


def flood_namespace(a, version: str) -> argparse.Namespace:
    """The options cli.flood_once reads, from ours."""
    return argparse.Namespace(
        command="bisect-run", kernel=version, cameras=a.cameras, agent_args=a.agent_args,
        seed=a.seed, hotplug=a.hotplug, timeout=a.timeout, silence=a.silence, quiet=True,
        jobs=a.jobs, force=False, run_dir=None, append=a.append, memory=a.memory, smp=a.smp,
        accel=a.accel, console=False)


def run_step(a, build: kernel.BuildResult, version: str, matcher: bisect.Matcher,
             folder: Path, note) -> tuple[str, str, list[bisect.RunOutcome]]:
    """Boot in batches until bisect.decide() gives a verdict."""
    from . import cli     # cli imports this module lazily; import it back on use
    policy = bisect.Policy(max_runs=a.runs, batch=a.parallel, min_hits=1, max_miss=a.max_miss)
    fa = flood_namespace(a, version)
    runner = cli.FloodRunner(fa, None, matcher, a.settings, folder, Progress(quiet=True),
                             name_fmt="run-{n}")
    runner.builds[0] = build
    runs: list[bisect.RunOutcome] = []
    while True:
        n = min(policy.batch, policy.max_runs - len(runs))
        first = len(runs) + 1
        t0 = time.monotonic()
        batch = runner.run(0, len(runs), n)
        runs += batch
        c = bisect.counts(batch)
        note(f"runs {first}..{first + n - 1}: {c[bisect.HIT]} hit, {c[bisect.CLEAN]} clean, "
             f"{c[bisect.FAILED] + c[bisect.INFRA]} failed in {time.monotonic() - t0:.0f}s")
        verdict, reason = bisect.decide(runs, policy, a.repro_chance)
        if verdict:
            return verdict, reason, runs


# --- command line ------------------------------------------------------------------------

DESCRIPTION = """\
Test the commit checked out in your own Linux git checkout, for `git bisect run`:
build it out of tree with dmaharness's kconfig fragments and detector series,
boot it in QEMU with fake UVC cameras flooding the status endpoint, and look
for --signature among the kernel's reports.

  git bisect start BAD GOOD
  git bisect run /path/to/dmaharness bisect-run --signature 'TITLE|REGEX'

Your checkout is never written to: the commit is built in a mirror in the
cache (hard links of the tracked files, the detector patches applied there),
<cache>/work/checkout-<hash>/, whose _build/ folder is kept between steps, so
every step after the first is an incremental build.  Artifacts are cached by
commit (and local changes, fragments, patches), so a commit seen before is
not rebuilt.

The detector series is patches/X.Y/series for the checkout's version; other
versions try 6.1 and 6.12, nearest first.  When none applies the commit is
skipped (--no-detector builds without it)."""

EPILOG = """\
exit codes (what git bisect run reads):
  0    good: no run showed the signature, and a bad kernel would have shown it
       with chance >= 1 - --max-miss given --repro-chance
  1    bad: a run showed the signature
  125  skip: the detector series or --series does not apply, a config option
       of the fragments does not stick, the kernel does not build, or the
       guest failed in every run
  128  internal error (a harness bug; traceback on stderr)   } git bisect run
  129  usage error (bad command line)                         } stops the
  130  interrupted (Ctrl-C, SIGTERM)                          } bisection on
  131  environment: a tool or package is missing (make deps)  } any code
  132  bad input: not a kernel checkout, a --series or        } above 127
       --fragment file is missing or wrong

verdict: runs are booted --parallel at a time (2) until harness/bisect.py's
decide() is decisive: bad after one run with the signature; good once
(1 - repro-chance)^clean_runs <= --max-miss (with the default 0.8 and 0.05:
2 clean runs; with 0.4: 6); skip when every run of a batch failed; at most
--runs runs.  --repro-chance is the chance that one run of a bad kernel shows
the signature: 0.8 is what a deterministic one gets in `dmaharness bisect`
(4 hits of 4 runs at the bad end, 4/5); lower it for a flaky signature.

The cache folder is $DMAHARNESS_CACHE, else ~/.cache/dmaharness.
"""


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")


def parser() -> argparse.ArgumentParser:
    p = _Parser(prog="dmaharness bisect-run", description=DESCRIPTION, epilog=EPILOG,
                formatter_class=argparse.RawDescriptionHelpFormatter)
    g = p.add_argument_group("what to look for")
    g.add_argument("--signature", required=True, metavar="TITLE|REGEX",
                   help="a report title as `dmaharness reports` prints it, or a Python regex "
                        "searched in titles")
    g.add_argument("--tree", type=Path, default=None, metavar="DIR",
                   help="the checkout (default: the current folder)")
    g = p.add_argument_group("what to build")
    g.add_argument("--no-detector", action="store_true",
                   help="do not apply the detector series (and leave out the detector and "
                        "kunit fragments unless --fragment is given)")
    g.add_argument("--series", action="append", type=Path, default=[], metavar="FILE",
                   help="a quilt series applied after the detector (repeatable); when it "
                        "does not apply, the commit is skipped")
    g.add_argument("--fragment", action="append", default=[], metavar="NAME|FILE",
                   help="kconfig fragment(s) instead of all of kconfig-fragments/")
    g.add_argument("-j", "--jobs", type=int, help="make -j (default: number of CPUs)")
    g.add_argument("--force", action="store_true", help="rebuild even when cached")
    g = p.add_argument_group("verdict")
    g.add_argument("--repro-chance", type=float, default=0.8, metavar="P",
                   help="chance that one run of a bad kernel shows the signature (0.8)")
    g.add_argument("--max-miss", type=float, default=0.05,
                   help="accepted chance that a good verdict misses a bad kernel (0.05)")
    g.add_argument("--runs", type=int, default=6, help="most runs per step (6)")
    g.add_argument("--parallel", type=int, default=2, help="runs booted at once (2)")
    g = p.add_argument_group("flood (as `dmaharness bisect`; default: the --case's [run] table, "
                             "else control:100 for 10s, cycle 2/s, phys 200/s)")
    g.add_argument("--flood", default=None, help="PATTERN[:RATE]")
    g.add_argument("--duration", default=None, help="flood and agent run time per boot")
    g.add_argument("--cycle-hz", type=float, default=None, help="agent close/open rate")
    g.add_argument("--phys-hz", type=float, default=None, help="agent EVIOCGPHYS rate")
    g.add_argument("--cameras", type=int, default=1, help="fake cameras (1)")
    g.add_argument("--case", type=Path, metavar="DIR|case.toml",
                   help="take the flood settings from a case's [run] table (flags win)")
    g.add_argument("--hotplug", type=float, default=0, help="replug every S seconds (0)")
    g.add_argument("--seed", type=int, default=1, help="seed of random/malformed patterns (1)")
    g.add_argument("--agent-args", default="", help="more arguments for the guest agent")
    g = p.add_argument_group("boot")
    g.add_argument("--accel", choices=("auto", "tcg", "kvm"), default="auto",
                   help="auto: KVM only when a real kernel runs on it, else TCG")
    g.add_argument("--timeout", type=float, default=120,
                   help="seconds allowed beyond --duration (120)")
    g.add_argument("--silence", type=float, default=60,
                   help="seconds without console output that count as a hang (60)")
    g.add_argument("--memory", type=int, default=1024, help="guest memory in MiB (1024)")
    g.add_argument("--smp", type=int, default=1, help="guest CPUs (1)")
    g.add_argument("--append", default="", help="extra kernel command line")
    p.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    p.add_argument("-q", "--quiet", action="store_true",
                   help="only the verdict line on stderr")
    return p


def parse_args(argv: list[str]) -> argparse.Namespace:
    """Parse, mapping every argparse exit but --help's 0 to EXIT_USAGE."""
    p = parser()
    try:
        a = p.parse_args(argv)
    except SystemExit as e:            # --help (0), or anything else argparse rejects
        raise SystemExit(0 if e.code in (0, None) else EXIT_USAGE) from None
    from . import cli     # cli imports this module lazily; import it back on use
    a.settings = cli.run_settings(a)     # the case's [run] table, then the flags
    bad = []
    if not 0 < a.repro_chance <= 1:
        bad.append("--repro-chance must be in (0, 1]")
    if not 0 < a.max_miss < 1:
        bad.append("--max-miss must be between 0 and 1 (exclusive)")
    if a.runs < 1 or a.parallel < 1 or a.cameras < 1:
        bad.append("--runs, --parallel and --cameras must be >= 1")
    if bad:
        p.error("; ".join(bad))
    return a


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        a = parse_args(argv)
    except SystemExit as e:
        return e.code if isinstance(e.code, int) else EXIT_USAGE
    except HarnessError as e:          # --case that does not load, a bad flood
        sys.stderr.write(f"dmaharness bisect-run: error: {e.message}\n")
        return EXIT_INPUT
    old_term = signal.signal(signal.SIGTERM, _on_sigterm)
    t0 = time.monotonic()
    payload: dict = {"command": "bisect-run", "signature": a.signature}
    prog = Progress(quiet=a.quiet)
    head = ["bisect-run"]

    def note(msg: str) -> None:
        prog.note(f"[{' '.join(head)}] {msg}")

    code, verdict, reason, detail = EXIT_INTERNAL, "error", "", ""
    try:
        matcher = bisect.Matcher(a.signature)
        co = open_checkout(a.tree or Path.cwd())
        head.append(co.short)
        payload.update({"tree": str(co.path), "commit": co.commit, "dirty": bool(co.dirty),
                        "kernel_version": co.version})
        plan = make_plan(a, co)
        payload["key"] = plan.key()
        try:
            agent = initramfs.build_agent()
        except errors.BuildError as e:
            raise EnvError(e.message, detail=e.detail) from None
        if agent is None:
            raise EnvError("the guest agent (harness/guest) is missing")
        note(f"linux {co.version} in {co.path}; signature {a.signature!r}")
        sb = build_step(a, plan, note, prog)
        payload.update({"build": sb.result.to_json(), "detector_series": sb.detector,
                        "mirror": sb.mirror})
        folder = paths.sub("runs") / (time.strftime("%Y%m%d-%H%M%S")
                                      + f"-bisect-run-{co.commit[:12]}-{os.getpid()}")
        folder.mkdir(parents=True, exist_ok=True)
        payload["run_dir"] = str(folder)
        verdict, reason, runs = run_step(a, sb.result, co.version, matcher, folder, note)
        payload["runs"] = [r.to_json() for r in runs]
        code = VERDICT_EXIT[verdict]
    except Skip as s:
        verdict, reason, detail, code = bisect.SKIP, s.message, s.detail, EXIT_SKIP
    except KeyboardInterrupt:
        proc.stop_all()
        verdict, reason, code = "abort", "interrupted; nothing is left running and your " \
                                         "checkout is untouched", EXIT_INTERRUPTED
    except EnvError as e:
        verdict, reason, detail, code = "abort", e.message, e.detail, EXIT_ENV
    except HarnessError as e:
        verdict, reason, detail, code = "abort", e.message, e.detail, EXIT_INPUT
    except Exception:
        proc.stop_all()
        verdict, reason, code = "abort", "internal error (a dmaharness bug)", EXIT_INTERNAL
        detail = traceback.format_exc()
    finally:
        signal.signal(signal.SIGTERM, old_term)
    payload.update({"ok": code in (EXIT_GOOD, EXIT_BAD, EXIT_SKIP), "verdict": verdict,
                    "exit_code": code, "reason": reason,
                    "seconds": round(time.monotonic() - t0, 1)})
    if detail:
        payload["detail"] = detail[-4000:]
    if a.json:
        print(json.dumps({"version": JSON_VERSION, **payload}, indent=1))
    if detail and (code >= 128 or not a.quiet):
        sys.stderr.write(detail.rstrip() + "\n")
    what = {0: "good", 1: "bad", 125: "skip"}.get(code, "stop the bisection")
    sys.stderr.write(f"bisect-run: {payload.get('commit', '?')[:12]}"
                     f"{'+dirty' if payload.get('dirty') else ''} {verdict}: {reason} "
                     f"-> exit {code} ({what}) in {fmt_duration(time.monotonic() - t0)}\n")
    return code


def _on_sigterm(signum, frame):
    raise KeyboardInterrupt
