"""`cache` and `profiles`: what the cache folder holds, and the debug profiles."""

from __future__ import annotations

import argparse
import math
import time

from .. import errors, paths
from ..progress import Progress
from ..kernel import cache, profiles, series
from .common import add_command, emit, output_group, whole_number


def days(text: str) -> float:
    """argparse type: an age in days, 0 or more and finite (nan, -1 or inf would
    remove every run folder, or none, without saying so)."""
    try:
        n = float(text)
    except ValueError:
        n = -1.0
    if not math.isfinite(n) or n < 0 or n > 100 * 365:
        raise argparse.ArgumentTypeError(f"not an age in days (0 to 36500): {text!r}")
    return n


def _mib(n: int) -> str:
    return f"{n / 2**20:,.0f} MiB"

def cmd_cache(a) -> int:
    prog = Progress(quiet=a.quiet)
    base = paths.cache_dir()
    if a.action == "prune":
        res = cache.prune(a.keep, a.runs_older_than, dry_run=a.dry_run, progress=prog)
        verb = "would free" if a.dry_run else "freed"
        emit(a, {"command": "cache", "action": "prune", "ok": True, "cache": str(base), **res},
              f"{base}: {len(res['removed'])} work tree(s) and {len(res['runs_removed'])} run folder(s) "
              f"{'to remove' if a.dry_run else 'removed'}, {verb} {_mib(res['freed_bytes'])}"
              + (f"; {len(res['in_use'])} in use, kept" if res["in_use"] else ""))
        return errors.EXIT_OK
    prog.note(f"[cache] measuring {base}")
    parts = cache.usage()
    trees = cache.trees()
    lines = [f"{base}: {_mib(sum(parts.values()))}"]
    lines += [f"  {k + '/':11} {_mib(v):>12}" for k, v in parts.items()]
    lines.append(f"work trees, most recently used first ({len(trees)}):")
    for t in trees:
        lines.append(f"  {t.key:24} {t.patches:3} patches  {_mib(t.size):>10}  "
                     f"{'built' if t.built else 'not built'}, last used "
                     f"{time.strftime('%Y-%m-%d %H:%M', time.localtime(t.last_used))}")
    emit(a, {"command": "cache", "action": "list", "ok": True, "cache": str(base),
              "parts_bytes": parts, "trees": [t.to_json() for t in trees]}, "\n".join(lines))
    return errors.EXIT_OK

def cmd_profiles(a) -> int:
    out, lines = [], []
    for prof in profiles.table().values():
        frags = [f.name for f in prof.fragments()]
        series_ = {v: str(f.relative_to(paths.REPO)) for v in series.SUPPORTED
                   if (f := prof.series_file(v))}
        out.append({"name": prof.name, "description": prof.description, "finds": prof.finds,
                    "costs": prof.costs, "fragments": frags, "series": series_,
                    "run": dict(prof.run)})
        lines.append(f"{prof.name}{' (default)' if prof.name == profiles.DEFAULT else ''}:"
                     f" {prof.description}")
        lines.append(f"  finds:     {prof.finds}")
        lines.append(f"  costs:     {prof.costs}")
        lines.append(f"  fragments: {', '.join(frags)}")
        if series_:
            lines.append("  series:    " + ", ".join(series_.values()))
        if prof.run:
            lines.append("  run:       " + ", ".join(f"{k}={v}" for k, v in prof.run.items()))
    emit(a, {"command": "profiles", "ok": True, "profiles": out}, "\n".join(lines))
    return errors.EXIT_OK


def add_parsers(sub) -> None:
    """cache, profiles."""
    cp = add_command(
        sub, "cache", cmd_cache, "what the cache folder holds; prune work trees and old runs",
        "Without an action: the cache folder's size by part, and every variant's "
                    "work tree (its _build folder's size, when it was last used).  'prune' "
                    "removes the work trees of all but the --keep most recently used built "
                    "variants of each kernel version (their artifacts stay, so boots and "
                    "cached builds still work; a pruned variant rebuilds incrementally from a "
                    "kept one), and with --runs-older-than the run folders older than that.  "
                    "A tree that a build is using is left alone.",
        examples=("dmaharness cache",
                  "# what a prune would free, then the prune",
                  "dmaharness cache prune --keep 2 --runs-older-than 14 --dry-run",
                  "dmaharness cache prune --keep 2 --runs-older-than 14"),
        codes=(errors.EXIT_INPUT,))
    cp.add_argument("action", nargs="?", choices=("list", "prune"), default="list")
    cp.add_argument("--keep", type=whole_number, default=1, metavar="N",
                    help="prune: work trees kept per kernel version, most recently used first (1)")
    cp.add_argument("--runs-older-than", type=days, metavar="DAYS",
                    help="prune: also remove run folders (runs/) older than DAYS")
    cp.add_argument("--dry-run", action="store_true", help="prune: say what would go, remove nothing")
    output_group(cp)

    pp = add_command(
        sub, "profiles", cmd_profiles, "the debug profiles (--profile): what each finds and "
        "costs",
        "The kernel's debug profiles, from kconfig-fragments/profiles/profiles.toml: "
                    "each one's fragments (verified like every fragment), its patch series, "
                    "its run-setting defaults, what it finds and what it costs (measured by "
                    "bench/profiles).  Choose one with --profile on any command that builds, or "
                    "`profile = \"NAME\"` in a case's [run] table.",
        examples=("dmaharness profiles",
                  "# then one of them",
                  "dmaharness run --profile fast --flood control:max --duration 10s",
                  "dmaharness profiles --json"),
        codes=(errors.EXIT_INPUT,),
        meaning={errors.EXIT_INPUT: "bad input: a profile, its fragments or its series are "
                 "wrong (profiles.toml)"})
    output_group(pp)
