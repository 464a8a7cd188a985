"""One sweep site as the mail a maintainer wants (`dmaharness site-report`).

From a sweep's JSON (sweep.json or `sweep --json`), one site: a subject,
then what maps what, the structure layout around the line, the mapping
stack, the CPU's access to the device-owned bytes with its stack (from the
boot's console, when that console lies inside the sweep's folder), on which
real machines it corrupts (harness.reports.exposure), the kernel and
package version, how to reproduce it with dmaharness, and the fix patch
when one is given.

The JSON is input from anywhere: every field is checked for its type and
a missing one is said, not guessed; a console path is followed only inside
the folder of the JSON, and nothing is written but the report.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

from .. import files, paths
from ..checks import case as caselib, sitekeys
from ..errors import InputError
from ..reports import engine, exposure, layout
from . import mail
from .sweephtml import layout_from_json

MAX_STACK = 24
_ROW = re.compile(r"[0-9]{1,9}")
_VERSION = re.compile(r"[0-9]{1,2}\.[0-9]{1,3}")   # harness.kernel.debsource's MAJOR.MINOR


@dataclass(frozen=True)
class SiteMail:
    subject: str
    body: str
    key: str
    sender: Optional[mail.Identity] = None     # who sends it (git's identity), when known

    def text(self) -> str:
        return (f"From: {self.sender.line()}\n" if self.sender else "") + \
            f"Subject: {self.subject}\n\n{self.body}"

    def to_json(self) -> dict:
        return {"command": "site-report", "ok": True, "key": self.key,
                "from": self.sender.line() if self.sender else None,
                "subject": self.subject, "body": self.body}


def _str(v: Any, default: str = "") -> str:
    return v if isinstance(v, str) else default


def _int(v: Any) -> Optional[int]:
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def _strs(v: Any) -> list[str]:
    return [x for x in v if isinstance(x, str)] if isinstance(v, list) else []


def pick(sites: list, which: str, path: Path) -> tuple[int, dict]:
    """(1-based row, site) named by a row number, a key or a function name."""
    rows = [s for s in sites if isinstance(s, dict)]
    if _ROW.fullmatch(which):           # ASCII digits only: int() takes '²' and 5000 digits badly
        n = int(which)
        if not 1 <= n <= len(rows):
            raise InputError(f"{path}: no site {n} (it has {len(rows)})", path=str(path))
        return n, rows[n - 1]
    by_key = [(i, s) for i, s in enumerate(rows, 1) if _str(s.get("key")) == which]
    if by_key:
        return by_key[0]
    by_fn = [(i, s) for i, s in enumerate(rows, 1) if _str(s.get("function")) == which]
    if len(by_fn) == 1:
        return by_fn[0]
    if by_fn:
        keys = "; ".join(_str(s.get("key")) for _, s in by_fn)
        raise InputError(f"{path}: {len(by_fn)} sites map in {which}: give a row number or "
                         f"a key ({keys})", path=str(path))
    raise InputError(f"{path}: no site numbered, keyed or mapping in {which!r}", path=str(path))


def _facts(site: dict) -> Optional[layout.DmaFacts]:
    """The site's buffer facts: its layout's (with the line phase), else its own fields."""
    lay = site.get("layout")
    if isinstance(lay, dict) and isinstance(lay.get("facts"), dict):
        try:
            return layout.DmaFacts(**lay["facts"])
        except TypeError:
            pass
    off, length, size = _int(site.get("offset")), _int(site.get("length")), \
        _int(site.get("object_size"))
    if off is None or length is None or size is None or off < 0 or length <= 0:
        return None
    return layout.DmaFacts(_str(site.get("rule"), "sharing"), off, length, size,
                           _str(site.get("cache"), "?"), 128,
                           direction=_str(site.get("direction")) or None)


def _site_verdicts(site: dict) -> list[exposure.Verdict]:
    """The sweep's own verdicts of the site (made with its layout and its
    allocation stack: harness.reports.allocrules), when the JSON holds them
    whole and well typed; else [] (then assessed from the facts alone)."""
    rows = site.get("exposure")
    if not isinstance(rows, list) or not rows:
        return []
    out = []
    for r in rows:
        if not (isinstance(r, dict) and all(isinstance(r.get(k), str)
                                            for k in ("arch", "verdict", "why"))
                and _int(r.get("line")) is not None and r["verdict"] in exposure.VERDICTS
                and r["arch"] in {a.name for a in exposure.ARCHES}):
            return []
        out.append(exposure.Verdict(r["arch"], r["verdict"], r["line"], r["why"][:300],
                                    _str(r.get("rule"))[:40] or None))
    return out


def _inside(folder: Path, p: Path) -> bool:
    try:
        p.resolve().relative_to(folder.resolve())
        return True
    except (ValueError, OSError):
        return False


def _owned_reports(site: dict, folder: Path) -> list[engine.Report]:
    """The site's dma-owned reports, from its boot's console when the console
    is inside the sweep's folder (the JSON names it; nothing else is read)."""
    ev = site.get("evidence") if isinstance(site.get("evidence"), dict) else {}
    console = _str(ev.get("console"))
    titles = set(_strs(site.get("dma_owned_titles")))
    if not console or not titles:
        return []
    p = Path(console)
    if not p.is_absolute():
        p = folder / p
    if not _inside(folder, p) or not p.is_file():
        return []
    text = files.read_text(p, "the site's console", strict=False)
    return [r for r in engine.parse(text) if r.title in titles]


def fix_cases(key: str, version: Optional[str]) -> list[str]:
    """The cases of this checkout for `version` that expect site `key` fixed
    (their expect.sites), as paths relative to the checkout."""
    if not version or not key:
        return []
    folder = paths.PATCHES / version / "cases"
    out = []
    for toml in sorted(folder.glob(f"*/{caselib.CASE_FILE}")) if folder.is_dir() else []:
        try:
            c = caselib.load_case(toml)
        except InputError:
            continue            # a broken case names no site
        if any(sitekeys.matching(p, [key]) for p in c.expect.sites):
            out.append(str(c.folder.relative_to(paths.REPO)))
    return out


def render(payload: dict, which: str, path: Path, fix: Optional[Path] = None,
           sender: Optional[mail.Identity] = None) -> SiteMail:
    """The mail for site `which` of the sweep JSON `payload` read from `path`,
    from ``sender``; a ``fix`` goes in as ``sender``'s mail (harness.output.mail),
    so it needs one."""
    if payload.get("command") != "sweep" or not isinstance(payload.get("sites"), list):
        raise InputError(f"{path}: not the JSON of a sweep (no \"command\": \"sweep\" with "
                         "sites)", path=str(path))
    n, site = pick(payload["sites"], which, path)
    key = _str(site.get("key"))
    fn = _str(site.get("function"), "?")
    version = _str(payload.get("kernel")) or None
    if version is not None and not _VERSION.fullmatch(version):
        version = None                  # not MAJOR.MINOR ("6.1.5", "../x"): unknown
    f = _facts(site)
    struct, member = _str(site.get("struct")), _str(site.get("member"))
    member = member.split(" of ")[0]            # "events[0] of events[8]"
    what = f"{struct}.{member}" if struct and member else (
        f"a {f.length}-byte buffer" if f else "a buffer")
    neighbours = _strs(site.get("neighbours"))
    owned = _strs(site.get("dma_owned_titles"))
    subject = (f"[BUG] {fn}: " + (f"DMA buffer {what}" if struct and member else
                                  f"{what} mapped for DMA") + " shares a cache line"
               + (f" with {', '.join(neighbours[:3])}" if neighbours else "")
               + ("; the CPU writes it while the device owns it"
                  if any(" Write in " in t for t in owned) else ""))
    out: list[str] = []
    where = _str(site.get("location"))
    place = (f"{f.length} bytes at offset {f.offset} of a {f.object_size}-byte {f.cache} "
             f"object, {f.direction or 'direction unknown'}" if f else "buffer facts missing")
    out.append(f"{fn}()" + (f" ({where})" if where else "") + f" maps {what} ({place}) for "
               "DMA. The buffer shares a cache line with other data of the same object. On a "
               "machine whose DMA is not cache-coherent, the CPU's cache maintenance for the "
               "mapping and the CPU's own accesses to that data race with the device: a "
               "write-back of the line can overwrite what the device wrote, and an invalidate "
               "can throw away what the CPU wrote next to the buffer.")
    out.append("")
    caller = _str(site.get("caller"))
    if caller:
        out.append(f"Called from {caller}(). Seen on: {', '.join(_strs(site.get('devices')))} "
                   f"({_int(site.get('boots')) or 0} boot(s)).")
        out.append("")
    out.append("Structure layout around the line (pahole of the driver's object):")
    lay = layout_from_json(site.get("layout"))
    lay_text = lay.format_text("  ") if lay is not None else \
        f"  {_str(site.get('layout_summary'), 'no structure layout')}\n"
    out.append(lay_text.rstrip("\n"))
    out.append("")
    ev = site.get("evidence") if isinstance(site.get("evidence"), dict) else {}
    stack = _strs(ev.get("stack"))[:MAX_STACK]
    out.append("The mapping (the detector's report, first seen at "
               f"{_str(ev.get('console'), '?')}:{_int(ev.get('first_line')) or 0}):")
    msg = next((x for x in _strs(ev.get("excerpt")) if "[object offset=" in x), "")
    if msg:
        out.append(f"  {msg}")
    out += [f"   {x}" for x in stack] or ["  (no stack in the JSON)"]
    out.append("")
    if owned:
        out.append("The CPU touching the device-owned bytes while the buffer is mapped "
                   "(KASAN's report, with the detector's numbers):")
        folder = path.parent
        reps = _owned_reports(site, folder)
        for t in owned:
            out.append(f"  {t}")
            r = next((r for r in reps if r.title == t), None)
            if r is not None:
                out += [f"   {x.strip()}" for x in r.stack_lines[:MAX_STACK]]
        if not reps:
            out.append("  (the stacks are in the boot's console: not inside this sweep's "
                       "folder, or gone)")
        out.append("")
    else:
        out.append("No CPU access to the device-owned bytes was seen while the buffer was "
                   "mapped: the sharing is latent (harmless until the CPU touches those bytes "
                   "during a transfer).")
        out.append("")
    out.append("Where it corrupts (harness/reports/exposure.py of dmaharness):")
    if f is not None:
        verdicts = _site_verdicts(site) or exposure.assess(f, version)
        for v in verdicts:
            out.append(f"  {v.arch:10} {v.verdict:9} {v.why}")
        out.append(f"  in short: {exposure.summary(verdicts)}")
    else:
        out.append("  (the JSON lacks the buffer's facts)")
    out.append("")
    pkg, pkgv = _str(payload.get("package")), _str(payload.get("package_version"))
    build = payload.get("build") if isinstance(payload.get("build"), dict) else {}
    out.append(f"Kernel: Linux {version or '?'}"
               + (f" (Debian {pkg} {pkgv})" if pkg and pkgv else "")
               + (f", dmaharness build {_str(build.get('key'))}" if build.get("key") else "")
               + ", with dmaharness's detector series (patches/<version>/series), KASAN and "
                 "DMA-API debugging, under QEMU (x86_64, TCG).")
    devs = [d for d in _strs(site.get("devices")) if d and not d.startswith("(")]
    out.append("Reproduce:")
    out.append(f"  ./dmaharness sweep --kernel {version or 'X.Y'}"
               + (f" --qemu-devices {','.join(devs)}" if devs else ""))
    out.append(f"  (site {n} of that sweep: key \"{key}\")")
    for c in fix_cases(key, version):
        out.append("Verify the fix (before: stock, after: the fix; the site gone, nothing new):")
        out.append(f"  ./dmaharness run --case {c}")
    out.append("")
    if fix is not None:
        if sender is None:
            raise InputError("--fix: a fix goes out signed off by its sender: give one")
        patch = mail.mail_of(fix, sender)
        subj = next((x[len("Subject: "):] for x in patch.splitlines() if x.startswith("Subject: ")),
                    fix.name)
        out.append(f"A fix is attached: {subj}")
        out.append("")
        out.append(patch.rstrip("\n"))
    else:
        out.append("No fix is attached yet.")
    return SiteMail(subject, "\n".join(out) + "\n", key, sender)
