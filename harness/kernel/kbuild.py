"""Kernel trees, variants, builds and the artifact cache.

Layout of the cache folder (see docs/layout.md, "Where things live"):

  src/linux-<debver>/        pristine tree unpacked from Debian's
                             linux-source package; read-only, never modified
  work/<key>/                a variant's tree: a hard-link copy of the
                             pristine tree with the variant's patches applied
  work/<key>/_build/         its O= build folder (a direct child of the tree,
                             so kbuild records relative paths and a build
                             folder can seed another variant's)
  work/<key>.json            what the work folder holds, for seeding
  work/checkout-<hash>/      the mirror of a user's checkout (--tree; see
                             harness/kernel/mirror.py), its _build/ kept between
                             builds; checkout-<hash>.mirror its state
  artifacts/<key>/           published results: bzImage, vmlinux, config,
                             System.map, modules/, gen_init_cpio, build.log,
                             meta.json; published by one rename
  ccache/                    the compiler cache
  locks/                     flock files

A variant (Variant: Debian's tree; TreeVariant: a checkout) is built by
one function, build(): cache lookup, locks, the tree, configure and
verify, make, publish.  A variant's key hashes everything that decides its
output: the kernel version and Debian package version (or the commit and
a digest of local changes), the fragments' content, each applied
patch's content and strip level, the compiler version and the version of
this build procedure.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import re
import shutil
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator, Union

from .. import paths, proc
from ..errors import BuildError, ConfigError, EnvError, InputError
from ..progress import Progress, fmt_duration
from . import ccachestats
from . import debsource
from . import fragments as fragmod
from . import mirror as mirrormod
from . import seeding
from .checkout import Checkout, tracked_files
from .series import Patch, base_series, parse_series, series_order
from .series import apply as apply_patch

# Bump when the build procedure changes what lands in the artifacts.
BUILD_FORMAT = 1
ARCH = "x86_64"
# Fixed build identity: reproducible objects, better ccache hit rates.
BUILD_ENV = {
    "KBUILD_BUILD_TIMESTAMP": "Thu Jan  1 00:00:00 UTC 2026",
    "KBUILD_BUILD_USER": "dmaharness",
    "KBUILD_BUILD_HOST": "dmaharness",
    "KBUILD_BUILD_VERSION": "1",
}


# --- sources -----------------------------------------------------------------

@dataclass(frozen=True)
class Source:
    version: str        # "6.1"
    deb_version: str    # "6.1.192-3"
    tarball: Path


@functools.lru_cache(maxsize=None)
def _system_source(version: str) -> Source | None:
    """The system's package (/usr/src, installed by `make deps`): dpkg is asked
    once per process."""
    tarball = Path(f"/usr/src/linux-source-{version}.tar.xz")
    if not tarball.is_file():
        return None
    try:
        deb = subprocess.run(["dpkg-query", "-W", "-f=${Version}", f"linux-source-{version}"],
                             capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        # not a dpkg system, or a hand-placed tarball: fall back to its mtime/size
        st = tarball.stat()
        deb = f"unpackaged-{st.st_size}-{int(st.st_mtime)}"
    return Source(version, deb, tarball)


def local_source(version: str) -> Source | None:
    """The package's tarball on this machine, without fetching: the system's
    package when it is there, else the newest version fetched into the cache
    (harness/kernel/debsource.py)."""
    debsource.check_version(version)
    src = _system_source(version)
    if src is not None:
        return src
    have = debsource.fetched(version)
    if not have:
        return None
    best = debsource.newest([f.deb_version for f in have])
    return Source(version, best, next(f.tarball for f in have if f.deb_version == best))


@functools.lru_cache(maxsize=None)
def find_source(version: str) -> Source:
    """Debian's linux-source-X.Y package: its tarball and package version;
    fetched through the private apt configuration when this machine has none.
    Asked for every variant key (each bisection step, each build): looked up
    once per process."""
    src = local_source(version)
    if src is not None:
        return src
    try:
        got = debsource.fetch(version, Progress())
    except EnvError as e:
        raise EnvError(f"no linux-source-{version}: not installed (/usr/src/linux-source-"
                       f"{version}.tar.xz is missing) and not fetched: {e.message}",
                       detail=e.detail, path=e.path) from e
    return Source(version, got.deb_version, got.tarball)


@functools.lru_cache(maxsize=None)
def compiler_version(cc: str = "gcc") -> str:
    try:
        out = subprocess.run([cc, "--version"], capture_output=True, text=True, check=True)
    except (OSError, subprocess.CalledProcessError) as e:
        raise EnvError(f"the C compiler {cc} is not usable ({e}); run `make deps`") from e
    return out.stdout.splitlines()[0].strip()


def pristine_tree(src: Source, progress: Progress) -> Path:
    """The unpacked, read-only tree of a source package (unpacked once)."""
    root = paths.sub("src")
    final = root / f"linux-{src.deb_version}"
    done = final / ".dmaharness-pristine"
    if done.is_file():
        return final
    with paths.locked(f"src-{src.deb_version}",
                      wait_message=f"waiting for another run unpacking {src.tarball}"):
        if done.is_file():
            return final
        progress.note(f"[unpack] {src.tarball} -> {final}")
        tmp = root / f".tmp-{src.deb_version}-{os.getpid()}"
        shutil.rmtree(tmp, ignore_errors=True)
        if final.exists():  # a half-finished earlier attempt
            shutil.rmtree(final)
        tmp.mkdir(parents=True)
        t0 = time.monotonic()
        r = subprocess.run(["tar", "-xf", str(src.tarball), "-C", str(tmp),
                            "--strip-components=1"], capture_output=True, text=True)
        if r.returncode != 0:
            shutil.rmtree(tmp, ignore_errors=True)
            raise EnvError(f"cannot unpack {src.tarball}: {r.stderr.strip()[-500:]}",
                           path=str(src.tarball))
        # Read-only files: a tool that writes in place into a variant's
        # hard-linked copy fails loudly instead of changing every variant.
        for dirpath, _, files in os.walk(tmp):
            for f in files:
                p = os.path.join(dirpath, f)
                if not os.path.islink(p):
                    os.chmod(p, os.stat(p).st_mode & ~0o222)
        (tmp / ".dmaharness-pristine").write_text(json.dumps(
            {"deb_version": src.deb_version, "tarball": str(src.tarball)}) + "\n")
        tmp.rename(final)
        progress.note(f"[unpack] done in {fmt_duration(time.monotonic() - t0)}")
    return final


# --- variants ------------------------------------------------------------------

def fragments_digest(frags) -> str:
    h = hashlib.sha256()
    for f in frags:
        h.update(f"{f.name}\0{f.digest()}\n".encode())
    return h.hexdigest()


@dataclass(frozen=True)
class Variant:
    version: str
    patches: tuple[Patch, ...]
    fragments: tuple[fragmod.Fragment, ...]

    def __post_init__(self):
        debsource.check_version(self.version)

    def fragments_digest(self) -> str:
        return fragments_digest(self.fragments)

    def patch_ids(self) -> list[list]:
        return [[p.name, p.strip, p.digest()] for p in self.patches]

    def key_material(self, src: Source) -> dict:
        return {
            "format": BUILD_FORMAT,
            "arch": ARCH,
            "version": self.version,
            "deb_version": src.deb_version,
            "fragments": [[f.name, f.digest()] for f in self.fragments],
            "patches": self.patch_ids(),
            "cc": compiler_version(),
        }

    def key(self, src: Source) -> str:
        blob = json.dumps(self.key_material(src), sort_keys=True).encode()
        return f"{self.version}-{hashlib.sha256(blob).hexdigest()[:16]}"


@dataclass
class Artifacts:
    key: str
    dir: Path
    meta: dict = field(default_factory=dict)

    @property
    def bzimage(self) -> Path:
        return self.dir / "bzImage"

    @property
    def vmlinux(self) -> Path:
        return self.dir / "vmlinux"

    @property
    def modules(self) -> Path:
        return self.dir / "modules"

    @property
    def config(self) -> Path:
        return self.dir / "config"

    @property
    def build_log(self) -> Path:
        return self.dir / "build.log"

    @property
    def gen_init_cpio(self) -> Path:
        return self.dir / "gen_init_cpio"

    @property
    def release(self) -> str:
        return self.meta.get("kernelrelease", "")


@dataclass
class BuildResult:
    artifacts: Artifacts
    cached: bool
    seconds: float
    seeded_from: str | None = None
    steps: int = 0
    ccache: dict | None = None      # this build's make: harness.kernel.ccachestats.delta()

    def to_json(self) -> dict:
        return {
            "key": self.artifacts.key,
            "cached": self.cached,
            "seconds": round(self.seconds, 2),
            "seeded_from": self.seeded_from,
            "steps": self.steps,
            "ccache": self.ccache,
            "artifacts": str(self.artifacts.dir),
            "bzImage": str(self.artifacts.bzimage),
            "vmlinux": str(self.artifacts.vmlinux),
            "build_log": str(self.artifacts.build_log),
            "kernelrelease": self.artifacts.release,
            "patches": [p[0] for p in self.artifacts.meta.get("patches", [])],
        }


def _touch(path: Path) -> None:
    try:
        os.utime(path)
    except OSError:
        pass     # a read-only cache folder still serves builds


def load_artifacts(key: str) -> Artifacts | None:
    d = paths.cache_dir() / "artifacts" / key
    meta = d / "meta.json"
    if not meta.is_file():
        return None
    try:
        m = json.loads(meta.read_text())
    except (OSError, ValueError, RecursionError) as e:
        m = e
    if not isinstance(m, dict) or not isinstance(m.get("patches", []), list):
        why = str(m)[:80] if isinstance(m, Exception) else "not the meta a build writes"
        raise EnvError(f"{meta}: a corrupt cache entry ({why}); remove {d} (or rebuild "
                       "with --force)", path=str(meta))
    return Artifacts(key, d, m)


# --- trees -------------------------------------------------------------------

def make_tree(pristine: Path, dest: Path, patches: tuple[Patch, ...]) -> None:
    """Create dest as a hard-link copy of pristine with patches applied.

    Built in a temporary folder and renamed into place, so a patch that
    fails leaves nothing behind.
    """
    tmp = dest.parent / f".tmp-{dest.name}-{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    r = subprocess.run(["cp", "-al", str(pristine), str(tmp)], capture_output=True, text=True)
    if r.returncode != 0:
        shutil.rmtree(tmp, ignore_errors=True)
        raise EnvError(f"cannot copy {pristine} to {tmp}: {r.stderr.strip()}")
    try:
        (tmp / ".dmaharness-pristine").unlink()
        for p in patches:
            apply_patch(p, tmp)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    tmp.rename(dest)


# --- building ------------------------------------------------------------------

BUILD_TOOLS = ("make", "patch", "flex", "bison", "bc", "ccache", "depmod", "perl")


def check_tools() -> None:
    """EnvError naming the first tool a kernel build needs that is missing."""
    for tool in BUILD_TOOLS:
        if not shutil.which(tool) and not os.path.exists(f"/sbin/{tool}"):
            raise EnvError(f"`{tool}` is not installed; run `make deps`")


_STEP = re.compile(r"^  ([A-Z][A-Z0-9_]*(?: \[M\])?)\s+(\S+)")


def make_env(environ: dict | None = None) -> dict:
    """The environment of a kernel make: the fixed build identity, the cache
    folder's ccache, and the remote storage (harness.kernel.ccachestats; not part of
    any key: it changes where objects come from, not what they are)."""
    env = dict(os.environ if environ is None else environ)
    remote = ccachestats.current(env)
    env.update(BUILD_ENV)
    env["CCACHE_DIR"] = str(paths.sub("ccache"))
    env["CCACHE_BASEDIR"] = str(paths.cache_dir() / "work")
    env["CCACHE_NOHASHDIR"] = "1"
    env["CCACHE_MAXSIZE"] = env.get("CCACHE_MAXSIZE", "8G")
    return ccachestats.apply(env, remote)


def _make(tree: Path, args: list[str], log, progress: Progress, label: str,
          expected: int | None) -> int:
    """Run make in the tree, output to the log, one progress line; return steps."""
    env = make_env()
    cmd = ["make", "-C", str(tree), "O=_build", f"ARCH={ARCH}", "CC=ccache gcc",
           "HOSTCC=gcc"] + args
    log.write(f"$ {' '.join(cmd)}\n")
    log.flush()
    t0 = time.monotonic()
    steps = 0
    p = proc.spawn(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env,
                   text=True, errors="replace", bufsize=1)
    try:
        assert p.stdout is not None
        for line in p.stdout:
            log.write(line)
            m = _STEP.match(line)
            if m:
                steps += 1
                el = fmt_duration(time.monotonic() - t0)
                if expected:
                    pct = min(99, 100 * steps // max(expected, 1))
                    head = f"[{label}] {pct:3d}% {steps}/~{expected}"
                else:
                    head = f"[{label}] {steps} steps"
                progress.update(f"{head} {el} {m.group(1).strip()} {m.group(2)}")
        rc = p.wait()
    except BaseException:
        # make deletes half-written targets on SIGINT (.DELETE_ON_ERROR)
        proc.stop(p, sig=2, grace=15)
        log.write("\n*** interrupted ***\n")
        raise
    finally:
        log.flush()
    progress.end_line()
    if rc != 0:
        raise BuildError(f"`make {' '.join(args)}` failed for {label} (exit {rc}); "
                         f"full log: {log.name}", detail=_log_errors(Path(log.name)),
                         path=log.name)
    return steps


def _log_errors(log: Path) -> str:
    lines = log.read_text(errors="replace").splitlines()
    errs = [l for l in lines if "error:" in l or l.startswith("make") and "Error" in l]
    return "\n".join((errs or lines)[-15:])


def configure(tree: Path, fragments, version: str, log, progress: Progress, label: str) -> str:
    """tinyconfig + fragments (merge_config.sh) + olddefconfig, then verify.

    ``tree`` is any kernel tree with its O= folder at ``tree/_build`` (a
    variant's, or bisect-run's mirror of a user's checkout); ``version``
    ("6.1") only words the explanation of an option that did not stick.
    Raises InputError, listing the lost options and why, and leaves the
    config as ``_build/.config.rejected``.
    """
    build = tree / "_build"
    progress.note(f"[{label}] configure: tinyconfig + {', '.join(f.name for f in fragments)}")
    _make(tree, ["tinyconfig"], log, Progress(quiet=True), label, None)
    frags = [str(f.path) for f in fragments]
    cmd = [str(tree / "scripts/kconfig/merge_config.sh"), "-m", "-O", str(build),
           str(build / ".config")] + frags
    env = dict(os.environ, ARCH=ARCH)
    r = subprocess.run(cmd, cwd=tree, capture_output=True, text=True, env=env)
    log.write(f"$ {' '.join(cmd)}\n{r.stdout}{r.stderr}")
    if r.returncode != 0:
        raise ConfigError(f"merge_config.sh failed for {label}: {r.stderr.strip()[-400:]}")
    _make(tree, ["olddefconfig"], log, Progress(quiet=True), label, None)
    text = (build / ".config").read_text()
    bad = fragmod.verify(text, list(fragments))
    if bad:
        bad = fragmod.explain(tree, text, bad, version)
        ok = fragmod.excused(bad, fragments)
        for m in ok:
            progress.note(f"[{label}] {m.option} is unknown to linux {version}; "
                          f"{m.fragment}.config asks for it only where defined")
        bad = [m for m in bad if m not in ok]
    if bad:
        listing = "\n".join("  " + m.describe() for m in bad)
        (build / ".config").rename(build / ".config.rejected")
        raise InputError(f"{len(bad)} config option(s) did not stick for {label} "
                         f"(the kernel would lose them silently):\n{listing}",
                         path=str(build / ".config.rejected"))
    return text


def has_tree(key: str) -> bool:
    """Whether a variant's work tree is there, built (`dmaharness cache prune` removes them)."""
    return (paths.cache_dir() / "work" / key / "_build" / "Makefile").is_file()


# --- variants of a user's checkout -----------------------------------------------

# fragments that only mean something with the detector series applied
DETECTOR_FRAGMENTS = ("detector", "kunit")


def variant_fragments(frags, *, detector: bool, given: bool) -> tuple:
    """A variant's fragments: without the detector series its fragments could
    not stick, so they are left out, unless they were chosen by hand."""
    if detector or given:
        return tuple(frags)
    return tuple(f for f in frags if f.name not in DETECTOR_FRAGMENTS)


@dataclass(frozen=True)
class TreeVariant:
    """A variant of a user's own checkout, built in its mirror (harness.kernel.mirror).

    ``candidates`` are the detector series to try, in order (the first that
    applies is used; none: build without the detector); ``patches`` come
    after it (a case's patches, --series).
    """
    checkout: Checkout
    candidates: tuple[tuple[str, tuple[Patch, ...]], ...]
    patches: tuple[Patch, ...]
    fragments: tuple[fragmod.Fragment, ...]

    @property
    def version(self) -> str:
        return self.checkout.version

    def fragments_digest(self) -> str:
        return fragments_digest(self.fragments)

    def key_material(self) -> dict:
        return {
            "format": BUILD_FORMAT,
            "mirror_format": mirrormod.MIRROR_FORMAT,
            "arch": ARCH,
            "version": self.checkout.version,
            "commit": self.checkout.commit,
            "dirty": self.checkout.dirty,
            "fragments": [[f.name, f.digest()] for f in self.fragments],
            "detector": [[ver, [[p.name, p.strip, p.digest()] for p in ps]]
                         for ver, ps in self.candidates],
            "patches": [[p.name, p.strip, p.digest()] for p in self.patches],
            "cc": compiler_version(),
        }

    def key(self) -> str:
        blob = json.dumps(self.key_material(), sort_keys=True).encode()
        c = self.checkout
        return f"git-{c.version}-{c.commit[:12]}-{hashlib.sha256(blob).hexdigest()[:16]}"


def tree_variant(checkout: Checkout, patches=(), fragments=(), *, detector: bool = True,
                 fragments_given: bool = False) -> TreeVariant:
    """A checkout's variant: the detector series nearest its version, then ``patches``.

    Without the detector, the detector and kunit fragments are left out
    unless the fragments were chosen by hand (``fragments_given``).
    """
    cands = tuple((ver, tuple(parse_series(base_series(ver))))
                  for ver in series_order(checkout.version)) if detector else ()
    frags = variant_fragments(fragments, detector=detector, given=fragments_given)
    return TreeVariant(checkout, cands, tuple(patches), frags)


AnyVariant = Union[Variant, TreeVariant]


def variant_key(variant: AnyVariant) -> str:
    if isinstance(variant, TreeVariant):
        return variant.key()
    return variant.key(find_source(variant.version))


def _mirror_holds(variant: TreeVariant, key: str) -> bool:
    """Whether the checkout's mirror was last built as this variant (its tree is ours)."""
    m = mirrormod.Mirror(variant.checkout.path)
    return m.state.get("built_key") == key and (m.root / "_build" / "Makefile").is_file()


def tree_ready(variant: AnyVariant, key: str) -> bool:
    if isinstance(variant, TreeVariant):
        return _mirror_holds(variant, key)
    return has_tree(key)


# --- building ------------------------------------------------------------------

def build(variant: AnyVariant, *, jobs: int | None = None, progress: Progress | None = None,
          force: bool = False, need_tree: bool = False, background: bool = False) -> BuildResult:
    """Build a variant (of Debian's tree, or of a user's checkout), or return its cached artifacts.

    ``background``: make runs beside other builds instead of after them
    (not under the one-build-at-a-time lock; the caller has lowered its
    CPU priority); a run that needs the same variant waits for it.

    ``need_tree``: the caller also needs the variant's built work tree (file:line
    by recompiling a source file, structure layouts); a cached variant whose
    tree was pruned (or, for a checkout, whose mirror was since built as
    another variant) is built again, incrementally, and keeps its artifacts.
    """
    progress = progress or Progress()
    t0 = time.monotonic()
    remote = ccachestats.current(os.environ)     # a bad --ccache-remote fails before anything
    key = variant_key(variant)
    label = f"build {variant.version}" if isinstance(variant, Variant) \
        else f"build {variant.checkout.short}"
    if not force:
        art = load_artifacts(key)
        if art and (not need_tree or tree_ready(variant, key)):
            _touch(art.dir / "meta.json")     # last use, for `dmaharness cache`
            return BuildResult(art, True, time.monotonic() - t0)
    check_tools()
    with paths.locked(f"variant-{key}", wait_message=f"[{label}] waiting for another run building {key}"):
        art = None if force else load_artifacts(key)
        if art and not force and (not need_tree or tree_ready(variant, key)):
            return BuildResult(art, True, time.monotonic() - t0)
        keep = art if art and not force else None       # only the tree is missing
        if keep:
            progress.note(f"[{label}] {key}: its work tree is gone or holds another variant; "
                          "building it again for file:line and layouts (the artifacts stay)")
        opener = _tree_work if isinstance(variant, TreeVariant) else _debian_work
        with opener(variant, key, label, progress) as w:
            build_dir = w.tree / "_build"
            with open(build_dir / "build.log", "w") as log:
                progress.note(f"[{label}] full log: {log.name}")
                if w.needs_configure():
                    configure(w.tree, variant.fragments, variant.version, log, progress, label)
                    w.configured()
                jobs = jobs or os.cpu_count() or 2
                with (contextlib.nullcontext() if background else
                      paths.locked("kbuild", wait_message=f"[{label}] waiting for another kernel build")):
                    if remote.url:
                        progress.note(f"[{label}] ccache remote storage {remote.shown()} "
                                      f"({remote.source})")
                    before = ccachestats.read_stats(make_env())
                    steps = _make(w.tree, [f"-j{jobs}", "bzImage", "modules"], log, progress,
                                  label, w.expected)
                    cc = ccachestats.delta(before, ccachestats.read_stats(make_env()), remote)
                art = keep or publish(w.tree, key, w.material, label, log, steps,
                                      time.monotonic() - t0, w.seeded)
            w.built()
        el = time.monotonic() - t0
        progress.note(f"[{label}] done in {fmt_duration(el)} ({steps} steps"
                      + (f", seeded from {w.seeded}" if w.seeded else "")
                      + (f"; {ccachestats.describe(cc)}" if cc else "") + f"): {art.dir}")
        return BuildResult(art, False, el, w.seeded, steps, cc)


@dataclass
class _Work:
    """A prepared tree for one build: where, and how to know it is configured."""
    tree: Path
    material: dict                       # what the key hashes: starts meta.json
    expected: int | None                 # make steps expected (progress), None: unknown
    seeded: str | None
    needs_configure: Callable[[], bool]
    configured: Callable[[], None]
    built: Callable[[], None]


@contextlib.contextmanager
def _debian_work(variant: Variant, key: str, label: str, progress: Progress) -> Iterator[_Work]:
    """A variant's own hard-link tree of the pristine source, its _build seeded from the nearest."""
    src = find_source(variant.version)
    pristine = pristine_tree(src, progress)
    work = paths.sub("work")
    tree = work / key
    state_file = work / f"{key}.json"
    state = {
        "key": key, "version": variant.version, "deb_version": src.deb_version,
        "cc": compiler_version(), "fragments_digest": variant.fragments_digest(),
        "fragments": [[f.name, f.digest()] for f in variant.fragments],
        "options": sorted(seeding.asked(variant.fragments)),
        "patches": variant.patch_ids(),
        "touched": [p.touched_files() for p in variant.patches],
        "built": False,
    }
    try:   # a forced or interrupted rebuild leaves a usable seed behind
        state["built"] = json.loads(state_file.read_text()).get("built") is True
    except (OSError, ValueError, AttributeError, RecursionError):    # a corrupt one is rewritten
        pass
    if not tree.is_dir():
        progress.note(f"[{label}] tree {tree} ({len(variant.patches)} patches)")
        make_tree(pristine, tree, variant.patches)
    seeded = None
    build_dir = tree / "_build"
    if not build_dir.exists():
        seeded = _seed_build(variant, src, key, tree, label, progress)
    state_file.write_text(json.dumps(state, indent=1) + "\n")
    configured = build_dir / ".dmaharness-configured"

    def needs_configure() -> bool:
        if not configured.is_file() or not (build_dir / ".config").is_file():
            return True
        bad = fragmod.drifted((build_dir / ".config").read_text(), list(variant.fragments))
        if bad:
            configured.unlink()
            raise InputError(f"{build_dir}/.config lost {bad[0].option}; rerun to reconfigure")
        return False

    def built() -> None:
        state["built"] = True
        state_file.write_text(json.dumps(state, indent=1) + "\n")

    with paths.locked(f"variant-{key}-build"):
        yield _Work(tree, variant.key_material(src),
                    None if seeded else _expected_steps(variant.version), seeded,
                    needs_configure,
                    lambda: configured.write_text(variant.fragments_digest() + "\n"), built)


def _seed_build(variant: Variant, src: Source, key: str, tree: Path, label: str,
                progress: Progress) -> str | None:
    """Copy the nearest built variant's _build into tree (or start an empty one)."""
    build_dir = tree / "_build"
    seed = seeding.pick_seed(variant, src.deb_version, compiler_version(), key)
    if not seed:
        build_dir.mkdir()
        return None
    seed_tree, seed_state = seed
    progress.note(f"[{label}] seeding the build folder from {seed_tree.name}")
    with paths.locked(f"variant-{seed_tree.name}-build", shared=True):
        if not (seed_tree / "_build").is_dir():     # pruned meanwhile
            raise EnvError(f"the seed {seed_tree} was removed while this build "
                           "waited for it (dmaharness cache prune?); rerun")
        tmp = tree / "_build.tmp"
        shutil.rmtree(tmp, ignore_errors=True)
        r = subprocess.run(["cp", "-a", str(seed_tree / "_build"), str(tmp)],
                           capture_output=True, text=True)
        if r.returncode != 0:
            shutil.rmtree(tmp, ignore_errors=True)
            raise EnvError(f"cannot copy build folder: {r.stderr.strip()}")
        differ = seeding.align_timestamps(seed_tree, tree, variant)
        seeding.relocate(tmp, seed_tree, tree)
        tmp.rename(build_dir)
    same_config = (seed_state.get("fragments_digest") == variant.fragments_digest()
                   and not any(os.path.basename(f).startswith("Kconfig") for f in differ))
    if not same_config:
        (build_dir / ".dmaharness-configured").unlink(missing_ok=True)
    return seed_tree.name


@contextlib.contextmanager
def _tree_work(variant: TreeVariant, key: str, label: str, progress: Progress) -> Iterator[_Work]:
    """The checkout's mirror, synced to its tracked files, with the variant's patches."""
    co = variant.checkout
    root = mirrormod.mirror_root(co.path)
    with paths.locked(f"mirror-{root.name}",
                      wait_message=f"[{label}] waiting for another build of this checkout"):
        mirror = mirrormod.Mirror(co.path)
        tracked = tracked_files(co.path)
        stats = mirror.sync(tracked)
        applied, failures = None, []
        for ver, patches in variant.candidates:
            try:
                mirror.apply(patches)
                applied = ver
                break
            except InputError as e:
                failures.append(f"patches/{ver}/series: {e.message}")
                stats = mirror.sync(tracked)     # undo the partial series
        if variant.candidates and applied is None:
            raise InputError(f"the detector series does not apply to {co.path} at {co.short} "
                             "(--no-detector builds without it): " + " | ".join(failures))
        mirror.apply(variant.patches)
        mirror.state.pop("built_key", None)
        mirror.settle(stats)
        progress.note(f"[{label}] mirror: {mirror.root} ({stats.files} files; {stats.linked} "
                      f"linked, {stats.copied} copied, {stats.removed} removed; {stats.changed} "
                      f"of our files changed, {stats.kept} kept their mtime) in "
                      f"{stats.seconds:.1f}s"
                      + (" (copies: the cache is on another filesystem)" if mirror.copy_mode else "")
                      + (f"; detector patches/{applied}/series" if applied else "; no detector"))
        build_dir = mirror.root / "_build"
        if mirror.fresh and build_dir.exists():
            # the record of our files' mtimes is gone: make could trust stale objects
            progress.note(f"[{label}] no record of the mirror's patched files; starting "
                          f"{build_dir} afresh")
            shutil.rmtree(build_dir)
        first = not (build_dir / "vmlinux").is_file()
        build_dir.mkdir(exist_ok=True)
        # no "-g<sha>" from setlocalversion if the cache is inside some git repository
        os.environ["GIT_CEILING_DIRECTORIES"] = str(mirror.root.parent)
        marker = build_dir / ".dmaharness-configured"
        digest = mirrormod.config_digest(mirror, tracked, hashlib.sha256(json.dumps(
            [[f.name, f.digest()] for f in variant.fragments]).encode()).hexdigest()
            + "\0" + compiler_version())

        def needs_configure() -> bool:
            config = build_dir / ".config"
            if (marker.is_file() and marker.read_text().strip() == digest and config.is_file()
                    and not fragmod.drifted(config.read_text(), list(variant.fragments))):
                return False
            marker.unlink(missing_ok=True)
            return True

        def built() -> None:
            mirror.state["built_key"] = key
            mirror.save()

        material = variant.key_material()
        material.update({"tree_source": str(co.path), "detector_series": applied,
                         "mirror": str(mirror.root)})
        yield _Work(mirror.root, material, _expected_steps(co.version) if first else None, None,
                    needs_configure, lambda: marker.write_text(digest + "\n"), built)


def _expected_steps(version: str) -> int | None:
    best = None
    for meta in (paths.cache_dir() / "artifacts").glob(f"{version}-*/meta.json"):
        try:
            m = json.loads(meta.read_text())
        except (OSError, ValueError, RecursionError):
            continue
        if (isinstance(m, dict) and not m.get("seeded_from") and isinstance(m.get("steps"), int)
                and m["steps"] > 0):
            best = max(best or 0, m["steps"])
    return best


def publish(tree: Path, key: str, material: dict, label: str, log, steps: int,
            seconds: float, seeded: str | None) -> Artifacts:
    """Copy the results of tree/_build into artifacts/<key> with one atomic rename.

    ``material`` (what the key hashes) starts meta.json.
    """
    build = tree / "_build"
    root = paths.sub("artifacts")
    tmp = root / f".tmp-{key}-{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir()
    try:
        stage = tmp / "modroot"
        _make(tree, [f"INSTALL_MOD_PATH={stage}", "DEPMOD=/sbin/depmod", "modules_install"],
              log, Progress(quiet=True), label, None)
        release = (build / "include/config/kernel.release").read_text().strip()
        moddir = stage / "lib" / "modules" / release
        for link in ("build", "source"):
            (moddir / link).unlink(missing_ok=True)
        moddir.rename(tmp / "modules")
        shutil.rmtree(stage)
        shutil.copy2(build / "arch/x86/boot/bzImage", tmp / "bzImage")
        shutil.copy2(build / "vmlinux", tmp / "vmlinux")
        shutil.copy2(build / "System.map", tmp / "System.map")
        shutil.copy2(build / ".config", tmp / "config")
        gic = build / "usr" / "gen_init_cpio"
        if gic.is_file():
            shutil.copy2(gic, tmp / "gen_init_cpio")
        log.flush()
        shutil.copy2(log.name, tmp / "build.log")
        meta = dict(material)
        meta.update({"key": key, "kernelrelease": release, "steps": steps,
                     "seconds": round(seconds, 1), "seeded_from": seeded,
                     "built_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                     "tree": str(tree)})
        (tmp / "meta.json").write_text(json.dumps(meta, indent=1) + "\n")
        final = root / key
        if final.exists():
            shutil.rmtree(final)
        tmp.rename(final)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return Artifacts(key, final, meta)
