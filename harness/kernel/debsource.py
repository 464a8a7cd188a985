"""Debian's linux-source-X.Y packages, fetched through apt with a private configuration.

Debian 12's own archive carries linux-source-6.1 and linux-source-6.12
(`make deps` installs them into /usr/src).  The kernels upstream takes
patches for (7.x) are in newer suites: trixie-backports, sid.  They are
fetched by apt itself, with a configuration of our own under the cache:

  apt/apt.conf            the private configuration (APT_CONFIG)
  apt/sources.list        the suites that carry linux-source-7.x, on the
                          mirror the system's own sources name, signed by
                          the system's Debian archive keyring
  apt/lists/, apt/cache/  apt's own lists and archives; apt/status is empty
  apt/src/linux-source-X.Y_<debver>.tar.xz   the package's tarball
  apt/src/linux-source-X.Y_<debver>.json     where it came from

The system's apt sources, lists and dpkg database are never written and
nothing is installed: `apt-get download` fetches the .deb (apt checks it
against the signed Release file), and its tarball is taken out with
dpkg-deb.  A fetched package version stays until the cache is pruned; a
newer point release is fetched by `dmaharness sources --fetch X.Y`, and,
being another Debian version, gives every variant a new key.
"""

from __future__ import annotations

import functools
import json
import os
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

from .. import paths
from ..errors import EnvError, InputError
from ..progress import Progress

# Suites searched besides the system's own: where Debian carries linux-source-7.x.
SUITES = ("trixie-backports", "sid")
KEYRING = Path("/usr/share/keyrings/debian-archive-keyring.gpg")
DEFAULT_MIRROR = "http://deb.debian.org/debian"
_VERSION = re.compile(r"[0-9]{1,2}\.[0-9]{1,3}")
_PKG = re.compile(r"linux-source-([0-9]+\.[0-9]+)")


@dataclass(frozen=True)
class Offer:
    """A linux-source package version that an archive offers."""
    version: str         # "7.3"
    deb_version: str     # "7.3.4-1~bpo13+1"
    suite: str           # "trixie-backports", or "system" for the system's own sources

    def to_json(self) -> dict:
        return {"version": self.version, "deb_version": self.deb_version, "suite": self.suite}


@dataclass(frozen=True)
class Fetched:
    """A package version whose tarball is in the cache."""
    version: str
    deb_version: str
    tarball: Path
    suite: str

    def to_json(self) -> dict:
        return {"version": self.version, "deb_version": self.deb_version,
                "tarball": str(self.tarball), "suite": self.suite}


def check_version(version: str) -> str:
    if not isinstance(version, str) or not _VERSION.fullmatch(version):
        raise InputError(f"kernel version {version!r} is not of the form MAJOR.MINOR (e.g. 7.3)")
    return version


# --- the private configuration ---------------------------------------------------------

def system_mirror(sources: tuple[Path, ...] = (Path("/etc/apt/sources.list"),
                                               Path("/etc/apt/sources.list.d"))) -> str:
    """The Debian mirror the system's apt sources name ($DMAHARNESS_DEBIAN_MIRROR wins)."""
    env = os.environ.get("DMAHARNESS_DEBIAN_MIRROR")
    if env:
        if not re.fullmatch(r"(https?|file)://[^\s\]\[]+", env):
            raise InputError(f"DMAHARNESS_DEBIAN_MIRROR={env!r} is not an http(s):// or "
                             "file:// address")
        return env.rstrip("/")
    texts: list[str] = []
    for s in sources:
        try:
            if s.is_dir():
                texts += [f.read_text(errors="replace") for f in sorted(s.iterdir())
                          if f.suffix in (".list", ".sources") and f.is_file()]
            elif s.is_file():
                texts.append(s.read_text(errors="replace"))
        except OSError:
            continue
    for text in texts:
        for m in re.finditer(r"(?m)^\s*(?:deb\s+(?:\[[^\]]*\]\s+)?|URIs:\s*)(\S+)", text):
            uri = m.group(1).rstrip("/")
            if re.fullmatch(r"https?://[^\s]+/debian", uri):
                return uri
    return DEFAULT_MIRROR


def apt_root() -> Path:
    return paths.sub("apt")


def _write_config(root: Path, mirror: str) -> Path:
    for d in ("lists/partial", "cache/archives/partial", "etc/apt.conf.d",
              "etc/preferences.d", "etc/sources.list.d", "src"):
        (root / d).mkdir(parents=True, exist_ok=True)
    status = root / "status"
    if not status.exists():
        status.write_text("")
    # Signatures are checked against the system keyring; Valid-Until is not,
    # because a mirror may serve a snapshot older than the Release file's window.
    opts = f"signed-by={KEYRING} check-valid-until=no"
    (root / "sources.list").write_text(
        "# dmaharness's own apt sources (harness/kernel/debsource.py); the system's are not used\n"
        + "".join(f"deb [{opts}] {mirror} {s} main\n" for s in SUITES))
    conf = root / "apt.conf"
    q = lambda p: '"' + str(p).replace('"', "") + '"'
    lines = [
        f"Dir::State {q(root)};",
        f"Dir::State::lists {q(root / 'lists')};",
        f"Dir::State::status {q(status)};",
        f"Dir::Cache {q(root / 'cache')};",
        f"Dir::Cache::archives {q(root / 'cache' / 'archives')};",
        f"Dir::Etc::SourceList {q(root / 'sources.list')};",
        f"Dir::Etc::SourceParts {q(root / 'etc' / 'sources.list.d')};",
        f"Dir::Etc::Preferences {q(root / 'etc' / 'preferences')};",
        f"Dir::Etc::PreferencesParts {q(root / 'etc' / 'preferences.d')};",
        f"Dir::Etc::Parts {q(root / 'etc' / 'apt.conf.d')};",
        'Acquire::Languages "none";',
        'Acquire::IndexTargets::deb::Contents-deb::DefaultEnabled "false";',
        'APT::Get::List-Cleanup "true";',
    ]
    if os.geteuid() == 0:
        # apt drops to _apt for downloads, which cannot write a user's cache folder
        lines.append('APT::Sandbox::User "root";')
    conf.write_text("\n".join(lines) + "\n")
    return conf


def _apt(args: list[str], conf: Path | None, *, cwd: Path | None = None,
         what: str) -> str:
    env = dict(os.environ, LC_ALL="C")
    if conf is not None:
        env["APT_CONFIG"] = str(conf)
    try:
        r = subprocess.run(args, capture_output=True, text=True, env=env, cwd=cwd)
    except OSError as e:
        raise EnvError(f"{what}: cannot run {args[0]} ({e}); this needs Debian's apt") from e
    if r.returncode != 0 or re.search(r"(?m)^(E|Err):", r.stderr):
        err = [l for l in r.stderr.splitlines() if l.startswith(("E:", "Err:", "W:"))]
        raise EnvError(f"{what} failed: " + ("; ".join(err[:3]) or r.stderr.strip()[-300:]),
                       detail=(r.stdout + r.stderr)[-3000:], path=str(conf) if conf else None)
    return r.stdout


def update(progress: Progress) -> Path:
    """Refresh the private lists; returns the configuration to pass as APT_CONFIG."""
    root = apt_root()
    with paths.locked("apt", wait_message="waiting for another run using the private apt lists"):
        mirror = system_mirror()
        conf = _write_config(root, mirror)
        progress.note(f"[sources] apt-get update ({', '.join(SUITES)} from {mirror}; "
                      f"private configuration {conf})")
        _apt(["apt-get", "update", "-q"], conf, what="apt-get update (private configuration)")
    return conf


# --- what is offered ------------------------------------------------------------------------

def _madison(conf: Path | None, system: bool) -> list[Offer]:
    names = _apt(["apt-cache", "pkgnames", "linux-source-"], conf,
                 what="apt-cache pkgnames").split()
    names = sorted(n for n in names if _PKG.fullmatch(n))
    if not names:
        return []
    out = _apt(["apt-cache", "madison", *names], conf, what="apt-cache madison")
    offers = []
    for line in out.splitlines():
        parts = [p.strip() for p in line.split("|")]
        if len(parts) < 3 or not (m := _PKG.fullmatch(parts[0])):
            continue
        archive = parts[2].split()
        suite = archive[1].split("/")[0] if len(archive) > 1 else "?"
        offers.append(Offer(m.group(1), parts[1], "system:" + suite if system else suite))
    return offers


def _config(progress: Progress, refresh: bool) -> Path | None:
    """The private configuration, its lists refreshed first when asked; None
    when not asked and never made (nothing of the newer suites is known)."""
    if refresh:
        return update(progress)
    conf = apt_root() / "apt.conf"
    return conf if conf.is_file() else None


def offered(progress: Progress, *, refresh: bool = True) -> list[Offer]:
    """Every linux-source-X.Y version the private suites and the system's sources offer."""
    conf = _config(progress, refresh)
    private = []
    if conf is not None:
        with paths.locked("apt", shared=True):
            private = _madison(conf, False)
    try:
        system = _madison(None, True)
    except EnvError:
        system = []
    return private + system


# --- fetched tarballs -----------------------------------------------------------------------------

def _compare(a: str, b: str) -> int:
    """dpkg's order of two Debian versions."""
    for op, res in (("lt", -1), ("gt", 1)):
        if subprocess.run(["dpkg", "--compare-versions", a, op, b]).returncode == 0:
            return res
    return 0


def newest(versions: list[str]) -> str:
    return sorted(versions, key=functools.cmp_to_key(_compare))[-1]


def fetched(version: str | None = None) -> list[Fetched]:
    """The package versions whose tarballs are in the cache (oldest first per version)."""
    src = apt_root() / "src"
    out = []
    for meta in sorted(src.glob("linux-source-*.json")) if src.is_dir() else ():
        try:
            d = json.loads(meta.read_text())
            ver, deb, suite = d["version"], d["deb_version"], d.get("suite", "?")
        except (OSError, ValueError, KeyError, TypeError):
            continue
        tarball = src / f"linux-source-{ver}_{deb}.tar.xz"
        if (isinstance(ver, str) and _VERSION.fullmatch(ver) and isinstance(deb, str)
                and meta.name == f"linux-source-{ver}_{deb}.json" and tarball.is_file()
                and (version is None or ver == version)):
            out.append(Fetched(ver, deb, tarball, str(suite)))
    return out


def fetch(version: str, progress: Progress, *, refresh: bool = True) -> Fetched:
    """Download the newest linux-source-<version> the private suites offer; keep its tarball."""
    check_version(version)
    pkg = f"linux-source-{version}"
    conf = _config(progress, refresh) or update(progress)
    offers = [o for o in _madison(conf, False) if o.version == version]
    if not offers:
        raise EnvError(f"Debian's archive offers no {pkg} in {', '.join(SUITES)} "
                       f"(see `dmaharness sources` for the versions it has)", path=str(conf))
    best = newest([o.deb_version for o in offers])
    suite = next(o.suite for o in offers if o.deb_version == best)
    src = apt_root() / "src"
    final = src / f"{pkg}_{best}.tar.xz"
    meta = src / f"{pkg}_{best}.json"
    with paths.locked(f"fetch-{pkg}", wait_message=f"waiting for another run fetching {pkg}"):
        if final.is_file() and meta.is_file():
            return Fetched(version, best, final, suite)
        archives = apt_root() / "cache" / "archives"
        progress.note(f"[sources] apt-get download {pkg}={best} ({suite})")
        with paths.locked("apt", shared=True):
            _apt(["apt-get", "download", "-q", f"{pkg}={best}"], conf, cwd=archives,
                 what=f"apt-get download {pkg}={best}")
        debs = [d for d in archives.glob(f"{pkg}_*.deb")
                if d.name.startswith(f"{pkg}_{best.split(':')[-1]}_")]
        if not debs:
            raise EnvError(f"apt-get download {pkg}={best} left no .deb in {archives}",
                           path=str(archives))
        deb = debs[0]
        tmp = src / f".tmp-{pkg}-{os.getpid()}"
        tmp.mkdir(exist_ok=True)
        try:
            member = f"./usr/src/{pkg}.tar.xz"
            p1 = subprocess.Popen(["dpkg-deb", "--fsys-tarfile", str(deb)],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            r = subprocess.run(["tar", "-x", "-C", str(tmp), member], stdin=p1.stdout,
                               capture_output=True, text=True)
            p1.stdout.close()
            err1 = p1.stderr.read().decode(errors="replace")
            p1.wait()
            got = tmp / member
            if p1.returncode != 0 or r.returncode != 0 or not got.is_file():
                raise EnvError(f"{deb} holds no {member[1:]}: "
                               f"{(err1 + r.stderr).strip()[-300:]}", path=str(deb))
            os.replace(got, final)
            meta.write_text(json.dumps({"version": version, "deb_version": best,
                                        "package": pkg, "suite": suite,
                                        "deb": deb.name}, indent=1) + "\n")
        finally:
            subprocess.run(["rm", "-rf", "--", str(tmp)])
            deb.unlink(missing_ok=True)
        progress.note(f"[sources] {final} ({final.stat().st_size >> 20} MiB)")
    return Fetched(version, best, final, suite)
