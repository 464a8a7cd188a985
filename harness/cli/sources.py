"""`sources`: the linux-source versions Debian offers, which are here, which have a series."""

from __future__ import annotations


from .. import errors
from ..kernel import debsource, kbuild, series
from ..progress import Progress
from .common import add_command, emit, kernel_version, output_group


def cmd_sources(a) -> int:
    prog = Progress(quiet=a.quiet)
    fetched_now = None
    if a.fetch:
        fetched_now = debsource.fetch(a.fetch, prog, refresh=not a.offline)
    # --fetch refreshed the lists already
    offers = debsource.offered(prog, refresh=not a.offline and not a.fetch)
    versions = sorted({o.version for o in offers} | set(series.SUPPORTED)
                      | {f.version for f in debsource.fetched()}, key=series.version_key)
    rows, lines = [], []
    lines.append(f"{'version':8} {'Debian offers (newest)':44} {'here':28} series")
    for v in versions:
        offer = [o for o in offers if o.version == v]
        local = kbuild.local_source(v)
        cached = [f.deb_version for f in debsource.fetched(v)]
        own = v in series.SUPPORTED
        near = None if own or not series.SUPPORTED else series.series_order(v)[0]
        rows.append({"version": v, "offered": [o.to_json() for o in offer],
                     "installed": (local.deb_version if local and
                                   str(local.tarball).startswith("/usr/src/") else None),
                     "fetched": cached, "used": local.deb_version if local else None,
                     "series": f"patches/{v}/series" if own else None,
                     "nearest_series": near})
        off = "-"
        if offer:
            best = debsource.newest([o.deb_version for o in offer])
            where = sorted({o.suite for o in offer if o.deb_version == best})
            off = f"{best} {'/'.join(where)}" + (f" (+{len(offer) - 1})" if len(offer) > 1 else "")
        here = (local.deb_version + (" /usr/src" if str(local.tarball).startswith("/usr/src/")
                                     else " cache")) if local else "-"
        ser = f"patches/{v}/series" if own else (f"none (nearest {near})" if near else "none")
        lines.append(f"{v:8} {off[:44]:44} {here[:28]:28} {ser}")
    lines.append("")
    lines.append("here: the tarball a build uses (`make deps` installs 6.1 and 6.12 in /usr/src; "
                 "others are fetched into the cache on first use, or with --fetch X.Y)")
    if fetched_now:
        lines.insert(0, f"fetched linux-source-{fetched_now.version} {fetched_now.deb_version} "
                        f"-> {fetched_now.tarball}")
    emit(a, {"command": "sources", "ok": True, "suites": list(debsource.SUITES),
             "mirror": debsource.system_mirror(), "versions": rows,
             "fetched": fetched_now.to_json() if fetched_now else None}, "\n".join(lines))
    return errors.EXIT_OK


def add_parsers(sub) -> None:
    sp = add_command(
        sub, "sources", cmd_sources, "Debian's linux-source versions: here, with a detector",
        "Lists Debian's linux-source-X.Y packages: those the system's apt sources "
                    "offer (Debian 12: 6.1, 6.12) and those in the newer suites "
                    f"({', '.join(debsource.SUITES)}), read through dmaharness's own apt "
                    "configuration in the cache folder (apt/): the system's sources are never "
                    "changed and nothing is installed.  For each version: what the archive "
                    "offers, which tarball a build would use, and whether this checkout has a "
                    "detector series for it (patches/X.Y/series) or which is nearest.  "
                    "--fetch X.Y downloads the newest X.Y into the cache now (a build fetches "
                    "it by itself when none is here); a newer point release is a new Debian "
                    "version, so every variant built from it has a new key.",
        examples=("dmaharness sources",
                  "# download 7.3's source now rather than at its first build",
                  "dmaharness sources --fetch 7.3",
                  "dmaharness sources --offline --json"),
        codes=(errors.EXIT_INPUT,),
        meaning={errors.EXIT_ENV: "environment: apt cannot read the archive, the download "
                 "failed, the cache folder is unusable, standard output is closed or full"})
    sp.add_argument("--fetch", type=kernel_version, metavar="X.Y",
                    help="download the newest linux-source-X.Y the archive offers")
    sp.add_argument("--offline", action="store_true",
                    help="do not refresh the package lists: use those already in the cache")
    output_group(sp)
