"""Quilt-style series files and the patches they name.

A series file lists one patch a line, relative to the series file's
folder; '#' starts a comment (at the start of a line or after
whitespace); an optional '-pN' after the name gives the strip level
(default 1), as quilt writes it.  Blank lines are ignored.
"""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

from .. import files
from ..errors import InputError
from ..paths import PATCHES, REPO

_STRIP = re.compile(r"^-p(\d+)$")


def version_key(version: str) -> tuple[int, int]:
    """A MAJOR.MINOR version as numbers, to order versions (6.12 after 6.9)."""
    major, minor = version.split(".")
    return int(major), int(minor)


def _with_series() -> tuple[str, ...]:
    """The kernel versions with a detector series of their own: patches/<X.Y>/series."""
    found = []
    for d in PATCHES.iterdir() if PATCHES.is_dir() else ():
        if re.fullmatch(r"[0-9]+\.[0-9]+", d.name) and (d / "series").is_file():
            found.append(d.name)
    return tuple(sorted(found, key=version_key))


# the kernel versions with a detector series (patches/<version>/series)
SUPPORTED = _with_series()


def unsupported(version: str) -> InputError:
    """The error for a kernel version with no series: the nearest, and how to add one."""
    near = series_order(version)[0] if SUPPORTED else None
    how = (f"the nearest series is patches/{near}/series; to add one, fetch the source "
           f"(`dmaharness sources --fetch {version}`), port patches/{near}/ to it "
           f"(patches/README-detector.md) as patches/{version}/series" if near else
           f"add patches/{version}/series (patches/README-detector.md)")
    return InputError(f"linux {version} has no detector series in this checkout "
                      f"(series exist for {', '.join(SUPPORTED) or 'none'}): {how}, or build "
                      f"without the detector (--no-detector)")


# the first line of a patch's diff: a git header, or a plain diff's "--- a/x"
# followed by its "+++ b/x"
_DIFF_START = re.compile(rb"^(diff --git |--- \S.*\n\+\+\+ )", re.M)


@dataclass(frozen=True)
class Patch:
    path: Path          # absolute
    strip: int = 1
    origin: str = ""    # "series:line" that named it

    @property
    def name(self) -> str:
        try:
            return str(self.path.relative_to(REPO))
        except ValueError:
            return str(self.path)

    def digest(self) -> str:
        """What `patch` applies of it: from its first diff header on.  The
        mail around the diff (subject, changelog, trailers, the notes below
        '---') changes no build, so editing it rebuilds no kernel."""
        data = self.path.read_bytes()
        m = _DIFF_START.search(data)
        return hashlib.sha256(data[m.start():] if m else data).hexdigest()

    def touched_files(self) -> list[str]:
        """Paths (after stripping) that this patch creates, changes or deletes."""
        out: list[str] = []
        for line in self.path.read_text(errors="replace").splitlines():
            if line.startswith(("--- ", "+++ ")):
                name = line[4:].split("\t")[0].strip()
                if name == "/dev/null":
                    continue
                parts = name.split("/")
                rel = "/".join(parts[self.strip:])
                if rel and rel not in out:
                    out.append(rel)
        return out


def parse_series(path: Path) -> list[Patch]:
    """Read a series file; every patch it names must exist."""
    path = Path(path)
    patches: list[Patch] = []
    base = path.parent
    for lineno, raw in enumerate(files.read_text(path, "series file").splitlines(), 1):
        line = re.sub(r"(^|\s)#.*$", "", raw).strip()
        if not line:
            continue
        fields = line.split()
        strip = 1
        for opt in fields[1:]:
            m = _STRIP.match(opt)
            if not m:
                raise InputError(f"{path}:{lineno}: unknown option {opt!r} "
                                 "(only -pN is understood)", path=str(path))
            strip = int(m.group(1))
        target = files.resolve(base / fields[0], f"{path}:{lineno}: patch")
        if not os.path.exists(target):      # False too for a name too long for a path
            raise InputError(f"{path}:{lineno}: patch {fields[0][:200]} does not exist "
                             f"(looked for {str(target)[:300]})", path=str(path))
        try:
            files.check_file(target, "patch")
        except InputError as e:
            raise InputError(f"{path}:{lineno}: patch {fields[0][:200]}: {e.message}",
                             path=str(path)) from None
        patches.append(Patch(target, strip, f"{path}:{lineno}"))
    return patches


def base_series(version: str) -> Path:
    return PATCHES / version / "series"


def variant_patches(version: str, extra: list[Path] | None = None,
                    prefix: int | None = None, with_base: bool = True) -> list[Patch]:
    """The ordered patch list of a variant.

    The version's own series (the detector) always comes first; then the
    extra series (a case, a user's series) in the order given, of which
    only the first `prefix` patches are kept when `prefix` is set.
    """
    patches = parse_series(base_series(version)) if with_base else []
    extras: list[Patch] = []
    for s in extra or []:
        extras.extend(parse_series(s))
    if prefix is not None:
        if prefix < 0 or prefix > len(extras):
            raise InputError(f"--prefix {prefix} is out of range: the extra series "
                             f"have {len(extras)} patches")
        extras = extras[:prefix]
    return patches + extras


def subject(patch: Patch) -> str:
    """A format-patch mail's subject without the [PATCH n/m] tag ('' if none)."""
    lines = patch.path.read_text(errors="replace").splitlines()
    for i, line in enumerate(lines):
        if line.startswith("diff ") or line.startswith("--- "):
            break
        if line.lower().startswith("subject:"):
            text = line[8:].strip()
            for cont in lines[i + 1:]:          # RFC 822 folding
                if not cont[:1].isspace():
                    break
                text += " " + cont.strip()
            return re.sub(r"^\[[^\]]*\]\s*", "", text)
    return ""


@dataclass(frozen=True)
class Hunk:
    file: str           # path after stripping
    context: str        # the text after the second @@ (diff's function heading)
    changed: tuple[str, ...]   # the + and - lines, marker included
    functions: tuple[str, ...]  # functions whose lines the hunk changes


_DEF = re.compile(r"^[A-Za-z_][\w\s\*,]*?\b([A-Za-z_]\w*)\s*\((?!.*;\s*$)")


def _defines(text: str):
    """The function a line at column 0 starts to define, if it looks like one."""
    m = _DEF.match(text)
    if not m or text.startswith(("struct ", "enum ", "union ", "typedef ")) and "(" not in text:
        return None
    return m.group(1)


def hunks(patch: Patch) -> list[Hunk]:
    """The hunks of a unified diff, by file, with the functions they change.

    The function of a changed line is the last definition seen at column 0
    before it: in the hunk's own lines, else diff's function heading.
    """
    out: list[Hunk] = []
    file, current = "", None
    old_left = new_left = 0
    hunk = None
    for line in patch.path.read_text(errors="replace").splitlines():
        if hunk is not None:
            tag = line[:1]
            if tag in " +-" or line == "":
                body = line[1:]
                f = _defines(body)
                if f:
                    current = f
                if tag in "+-":
                    hunk[1].append(line)
                    if current and current not in hunk[2]:
                        hunk[2].append(current)
                old_left -= tag in " -" or line == ""
                new_left -= tag in " +" or line == ""
                if old_left <= 0 and new_left <= 0:
                    out.append(Hunk(file, hunk[0], tuple(hunk[1]), tuple(hunk[2])))
                    hunk = None
                continue
            if tag == "\\":            # "\ No newline at end of file"
                continue
            out.append(Hunk(file, hunk[0], tuple(hunk[1]), tuple(hunk[2])))
            hunk = None
        if line.startswith("+++ "):
            name = line[4:].split("\t")[0].strip()
            file = "/".join(name.split("/")[patch.strip:]) if name != "/dev/null" else ""
        m = re.match(r"@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@ ?(.*)$", line)
        if m:
            old_left = int(m.group(1)) if m.group(1) is not None else 1
            new_left = int(m.group(2)) if m.group(2) is not None else 1
            hunk = (m.group(3), [], [])
            current = _defines(m.group(3))
    if hunk is not None:
        out.append(Hunk(file, hunk[0], tuple(hunk[1]), tuple(hunk[2])))
    return out


def touches_function(patch: Patch, name: str) -> bool:
    """Does a hunk change lines of function `name` (its definition or body)?"""
    return any(name in h.functions for h in hunks(patch))


def touches_struct(patch: Patch, name: str) -> bool:
    """Does a hunk change the definition of `struct name`?"""
    head = re.compile(r"\bstruct\s+" + re.escape(name) + r"\s*\{")
    return any(head.search(h.context) or any(head.search(l) for l in h.changed)
               for h in hunks(patch))


def series_order(version: str) -> list[str]:
    """The detector series to try for a kernel version: its own, else the nearest first."""
    if version in SUPPORTED:
        return [version]

    def num(v: str) -> int:
        major, minor = version_key(v)
        return major * 1000 + minor

    return sorted(SUPPORTED, key=lambda v: (abs(num(v) - num(version)), -num(v)))


_HUNK_FAIL = re.compile(r"Hunk #(\d+) FAILED at (\d+)")


def apply(patch: Patch, tree: Path) -> None:
    """Apply a patch to a tree with GNU patch, no fuzz; InputError names the patch and hunk."""
    r = subprocess.run(["patch", f"-p{patch.strip}", "-N", "--fuzz=0",
                        "--no-backup-if-mismatch", "-r", "-", "-d", str(tree),
                        "-i", str(patch.path)], capture_output=True, text=True)
    if r.returncode == 0:
        return
    out = (r.stdout + r.stderr).strip()
    fails = []
    current = None
    for line in out.splitlines():
        m = re.match(r"(?:patching|checking) file (.+)", line)
        if m:
            current = m.group(1)
        for h in _HUNK_FAIL.finditer(line):
            fails.append(f"{current or '?'}: hunk #{h.group(1)} FAILED at line {h.group(2)}")
    if not fails:
        fails = [l for l in out.splitlines() if l.strip()][:6]
    raise InputError(f"patch {patch.name} does not apply ({patch.origin}): " + "; ".join(fails),
                     detail=out[-2000:], path=str(patch.path))
