"""Debug profiles: named sets of kconfig fragments (and patches, and run defaults).

A profile says how deep a kernel looks, at what cost: ``dma`` (the
default: every kconfig-fragments/*.config, i.e. KASAN + DMA-API debug + the
detector), ``full`` (plus lockdep, kmemleak, debug objects, UBSAN, fault
injection, hung tasks), ``fast`` (the detector without KASAN, for the
flood rate), ``race`` (KCSAN, lockdep, an SMP guest, random delays where
deferred work starts).  The table is data:
kconfig-fragments/profiles/profiles.toml, one table per profile::

    [full]
    description = "one line"
    finds = "what it finds"
    costs = "what it costs"
    drop = ["kasan"]          # fragments of the default set left out
    add = ["full"]            # kconfig-fragments/profiles/<name>.config, after the set
    series = "race"           # patches/<version>/profiles/<series>/series (optional)
    [full.run]                # run-setting defaults (harness.boot.settings), below a case's [run]
    smp = 2

Chosen with ``--profile NAME`` on every command that builds, or
``profile = "NAME"`` in a case's ``[run]`` table.  Each profile is its own
variant in the build cache (its fragments and patches are in the key);
``dma`` keeps the keys variants had before profiles existed.
"""

from __future__ import annotations

import functools
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from ..errors import InputError
from ..paths import FRAGMENTS, PATCHES
from . import fragments as fragmod
from .series import Patch, parse_series, series_order

DEFAULT = "dma"
FOLDER = FRAGMENTS / "profiles"
TABLE = FOLDER / "profiles.toml"
_KEYS = {"description", "finds", "costs", "drop", "add", "series", "run"}


@dataclass(frozen=True)
class Profile:
    name: str
    description: str
    finds: str
    costs: str
    drop: tuple[str, ...]
    add: tuple[str, ...]
    series: str | None
    run: Mapping[str, Any]          # raw values; harness.boot.settings checks them

    def fragments(self) -> list[fragmod.Fragment]:
        """The default set without ``drop``, then the profile's own fragments."""
        base = fragmod.default_fragments()
        names = {f.name for f in base}
        for d in self.drop:
            if d not in names:
                raise InputError(f"{TABLE}: [{self.name}] drop: {d!r} is not a fragment of "
                                 f"kconfig-fragments/ (have {', '.join(sorted(names))})",
                                 path=str(TABLE))
        return [f for f in base if f.name not in self.drop] + \
            [fragmod.parse_fragment(FOLDER / f"{a}.config") for a in self.add]

    def series_file(self, version: str) -> Path | None:
        """patches/<version>/profiles/<series>/series, else the nearest version's."""
        if not self.series:
            return None
        for ver in series_order(version):
            p = PATCHES / ver / "profiles" / self.series / "series"
            if p.is_file():
                return p
        raise InputError(f"profile {self.name}: no patches/<version>/profiles/{self.series}/series "
                         f"for linux {version}", path=str(TABLE))

    def patches(self, version: str) -> list[Patch]:
        f = self.series_file(version)
        return parse_series(f) if f else []


def _strings(name: str, key: str, v: Any) -> tuple[str, ...]:
    if not isinstance(v, list) or not all(isinstance(x, str) and x for x in v):
        raise InputError(f"{TABLE}: [{name}] {key} must be a list of names", path=str(TABLE))
    return tuple(v)


def _text(name: str, key: str, v: Any) -> str:
    if not isinstance(v, str):
        raise InputError(f"{TABLE}: [{name}] {key} must be a string", path=str(TABLE))
    return v


def parse_table(data: Mapping[str, Any]) -> dict[str, Profile]:
    out: dict[str, Profile] = {}
    for name, t in data.items():
        if not isinstance(t, dict):
            raise InputError(f"{TABLE}: {name} must be a table ([{name}])", path=str(TABLE))
        unknown = set(t) - _KEYS
        if unknown:
            raise InputError(f"{TABLE}: [{name}] unknown key(s) {', '.join(sorted(unknown))} "
                             f"(known: {', '.join(sorted(_KEYS))})", path=str(TABLE))
        run = t.get("run", {})
        if not isinstance(run, dict):
            raise InputError(f"{TABLE}: [{name}.run] must be a table", path=str(TABLE))
        if "profile" in run:
            raise InputError(f"{TABLE}: [{name}.run] cannot name a profile", path=str(TABLE))
        out[name] = Profile(name, _text(name, "description", t.get("description", "")),
                            _text(name, "finds", t.get("finds", "")),
                            _text(name, "costs", t.get("costs", "")),
                            _strings(name, "drop", t.get("drop", [])),
                            _strings(name, "add", t.get("add", [])),
                            _text(name, "series", t["series"]) if "series" in t else None,
                            run)
    if DEFAULT not in out:
        raise InputError(f"{TABLE}: the default profile [{DEFAULT}] is missing", path=str(TABLE))
    d = out[DEFAULT]
    if d.drop or d.add or d.series or d.run:
        raise InputError(f"{TABLE}: [{DEFAULT}] is every kconfig-fragments/*.config as it "
                         "is: it takes no drop, add, series or run", path=str(TABLE))
    return out


@functools.lru_cache(maxsize=None)
def table() -> dict[str, Profile]:
    try:
        data = tomllib.loads(TABLE.read_text())
    except OSError as e:
        raise InputError(f"cannot read the profile table {TABLE}: {e.strerror}",
                         path=str(TABLE)) from None
    except tomllib.TOMLDecodeError as e:
        raise InputError(f"{TABLE}: {e}", path=str(TABLE)) from None
    return parse_table(data)


def names() -> list[str]:
    return list(table())


def get(name: str | None) -> Profile:
    name = name or DEFAULT
    t = table()
    if name not in t:
        raise InputError(f"unknown profile {name!r} (known: {', '.join(t)}; "
                         f"see kconfig-fragments/profiles/profiles.toml)")
    return t[name]


def check_name(v: Any) -> str:
    """A profile name from a flag or a case (for harness.boot.settings)."""
    if not isinstance(v, str) or not v:
        raise InputError(f"{v!r} is not a profile name")
    return get(v).name
