"""ccache's remote storage (--ccache-remote) and what one build took from the cache.

Remote storage: the builds of every worker of a campaign can share one
compiler cache through ccache's remote storage (ccache 4.4+; Debian 12 has
4.7): a local miss is looked up there, a compilation is written there.  The
URL reaches ccache as CCACHE_REMOTE_STORAGE in make's environment
(harness.kernel.kbuild.make_env); it changes no object, so no variant key.  Where
it comes from, first wins:

    --ccache-remote URL  >  $DMAHARNESS_CCACHE_REMOTE  >  the user's own
    $CCACHE_REMOTE_STORAGE (passed through untouched)  >  none

Statistics: ``ccache --print-stats`` (counter names and values, one a line,
tab-separated) read before and after a build's make, with make's
CCACHE_DIR; the difference is the build's own, as builds of one cache
folder take turns (the ``kbuild`` lock).
"""

from __future__ import annotations

import os
import re
import subprocess
from dataclasses import dataclass
from typing import Mapping

from ..errors import InputError

ENV = "DMAHARNESS_CCACHE_REMOTE"
FLAG = "--ccache-remote"
# what ccache 4.7 understands (its --version: "Features: file-storage
# http-storage redis+unix-storage redis-storage"); no https, no rediss
SCHEMES = ("redis://HOST[:PORT][/DB]", "redis+unix:/SOCKET", "http://HOST[:PORT][/PATH]",
           "file:/DIR")
# the user's own setting, and its older name (ccache < 4.4: secondary storage)
CCACHE_VARS = ("CCACHE_REMOTE_STORAGE", "CCACHE_SECONDARY_STORAGE")

_URL = re.compile(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*):(?P<rest>.*)", re.S)

_flag: str | None = None


def set_flag(url: str | None, environ: Mapping[str, str] | None = None) -> Remote:
    """What --ccache-remote said for this process (None: not given), and the
    remote storage that follows, checked now: a bad URL is bad input before
    any build (in `bisect-run`, an InputError of the build would skip the commit)."""
    global _flag
    remote = resolve(url, os.environ if environ is None else environ)
    _flag = url
    return remote


def check_url(text: str, where: str = FLAG) -> str:
    """The remote storage setting, checked: one URL or several (space-separated),
    each optionally followed by |attributes, as ccache takes them.

    InputError names ``where`` and the URL; ccache itself would stop every
    compilation ("unknown remote storage URL") or silently never connect.
    """
    entries = text.split()
    if not entries:
        raise InputError(f"{where} is empty: give a remote storage URL ("
                         + ", ".join(SCHEMES) + ")")
    for entry in entries:
        url = entry.split("|", 1)[0]
        m = _URL.fullmatch(url)
        scheme = m.group("scheme") if m else ""
        rest = m.group("rest") if m else ""
        if scheme in ("redis", "http"):
            ok = rest.startswith("//") and len(rest.split("/")[2].rsplit("@", 1)[-1]) > 0
        elif scheme in ("redis+unix", "file"):
            # a path (file:/dir, redis+unix:/run/redis.sock), or //[HOST]/path
            ok = rest.startswith("/") and len(rest.lstrip("/")) > 0
        else:
            ok = False
        if not ok:
            if scheme in ("redis", "http", "redis+unix", "file"):
                why = "not of the form ccache takes"
            elif scheme and rest.startswith("//"):
                why = f"ccache 4.7 has no {scheme}: remote storage"
            else:
                why = "not a remote storage URL"
            raise InputError(f"{where} {url!r}: {why}; use one of " + ", ".join(SCHEMES)
                             + " (several: separated by spaces; ccache attributes after |)")
    return " ".join(entries)


@dataclass(frozen=True)
class Remote:
    """The remote storage builds use: the value for CCACHE_REMOTE_STORAGE and its source."""
    url: str | None        # None: no remote storage
    source: str | None     # "--ccache-remote", "DMAHARNESS_CCACHE_REMOTE", "CCACHE_REMOTE_STORAGE"

    @property
    def ours(self) -> bool:
        """Whether the harness sets it (else it is the user's, passed through)."""
        return self.source in (FLAG, ENV)

    def shown(self) -> str | None:
        """The URL without passwords or bearer tokens, for results and progress."""
        return redact(self.url) if self.url else None


def resolve(flag: str | None, environ: Mapping[str, str]) -> Remote:
    """The remote storage: the flag, else $DMAHARNESS_CCACHE_REMOTE (both checked),
    else what the user's environment already gives ccache, else none."""
    if flag is not None:
        return Remote(check_url(flag, FLAG), FLAG)
    if environ.get(ENV, "").strip():
        return Remote(check_url(environ[ENV], ENV), ENV)
    for var in CCACHE_VARS:
        if environ.get(var, "").strip():
            return Remote(environ[var].strip(), var)
    return Remote(None, None)


def current(environ: Mapping[str, str]) -> Remote:
    """The remote storage of this process (--ccache-remote as set_flag() was told)."""
    return resolve(_flag, environ)


def apply(env: dict, remote: Remote) -> dict:
    """Make's environment with the harness's remote storage (the user's own is left alone)."""
    if remote.ours:
        for var in CCACHE_VARS:
            env.pop(var, None)
        env["CCACHE_REMOTE_STORAGE"] = remote.url
    return env


def redact(url: str) -> str:
    """Passwords (user:PASSWORD@, PASSWORD@) and bearer tokens replaced by ***."""
    out = []
    for entry in url.split():
        head, sep, attrs = entry.partition("|")
        head = re.sub(r"^([A-Za-z][A-Za-z0-9+.-]*://)([^/@]*)@",
                      lambda m: m.group(1) + (m.group(2).split(":", 1)[0] + ":***"
                                              if ":" in m.group(2) else "***") + "@", head)
        attrs = re.sub(r"(bearer-token=)[^|]*", r"\1***", attrs)
        out.append(head + sep + attrs)
    return " ".join(out)


# --- statistics ------------------------------------------------------------------

# figure: the ccache 4.7 --print-stats counters it sums.  A compilation found
# in the cache counts once as direct or preprocessed and once as local or
# remote; a miss also counts as a local (and remote) storage miss.
FIGURES = {
    "local_hits": ("local_storage_hit",),
    "remote_hits": ("remote_storage_hit",),
    "misses": ("cache_miss",),
    "direct_hits": ("direct_cache_hit",),
    "preprocessed_hits": ("preprocessed_cache_hit",),
    "remote_errors": ("remote_storage_error", "remote_storage_timeout"),
}


def parse_stats(text: str) -> dict[str, int]:
    """`ccache --print-stats` -> {counter: value}; lines not of that form are skipped."""
    out = {}
    for line in text.splitlines():
        parts = line.split("\t")
        if len(parts) == 2 and parts[1].strip().isdigit():
            out[parts[0].strip()] = int(parts[1])
    return out


def read_stats(env: Mapping[str, str]) -> dict[str, int] | None:
    """The counters of the cache env's CCACHE_DIR names; None when ccache cannot tell
    (statistics are a report: never a reason to fail a build)."""
    try:
        r = subprocess.run(["ccache", "--print-stats"], env=dict(env), capture_output=True,
                           text=True, timeout=120)
    except (OSError, subprocess.SubprocessError):
        return None
    stats = parse_stats(r.stdout) if r.returncode == 0 else {}
    return stats or None


def delta(before: Mapping[str, int] | None, after: Mapping[str, int] | None,
          remote: Remote) -> dict | None:
    """What one build took from the cache: FIGURES' counts between two readings,
    and the remote storage (redacted).  None when a reading is missing."""
    if before is None or after is None:
        return None
    out: dict = {name: sum(max(0, after.get(c, 0) - before.get(c, 0)) for c in counters)
                 for name, counters in FIGURES.items()}
    out["remote"] = remote.shown()
    return out


def describe(d: Mapping | None) -> str:
    """`ccache: 1200 local hits, 130 remote hits, 7 misses` for a progress line."""
    if not d:
        return ""
    text = f"ccache: {d['local_hits']} local hits"
    if d.get("remote"):
        text += f", {d['remote_hits']} remote hits"
    text += f", {d['misses']} misses"
    if d.get("remote_errors"):
        text += f", {d['remote_errors']} remote errors"
    return text
