"""Which subsystems a patch goes to, and the checkpatch.pl options their
maintainers ask for (issue #43: "each subsystem's rules, checked").

A tree's MAINTAINERS is read as scripts/get_maintainer.pl reads it:

- a section is a heading line followed by lines ``X:<tab>value``;
- ``F:`` and ``X:`` are path patterns: ``*`` any run of characters, ``?``
  one, ``**`` any run across folders; a pattern ending in ``/`` (or naming
  a folder of the tree) matches everything below it, any other pattern
  only files at its own depth (get_maintainer.pl, file_match_pattern());
- ``N:`` is a regular expression searched in the path;
- a section whose ``X:`` matches a file does not apply to it, whatever its
  ``F:`` say; every other section with a matching ``F:`` or ``N:`` does
  (get_maintainer.pl with its default --pattern-depth=0);
- ``P:`` names the section's "Maintainer Entry Profile"
  (Documentation/maintainer/maintainer-entry-profile.rst: "the
  subsystem-specific details of how to submit patches").

PROFILE_RULES is the table of what a profile document asks of
checkpatch.pl.  A row applies when a section of the patch names its
document with ``P:`` *and* the tree's copy of that document still holds
the row's ``cites`` text (so a profile that changes drops the rule rather
than keep one it no longer says).  Only options a profile states belong
here, each row with the sentence it stands on.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Optional

from .. import files as readfiles
from ..errors import InputError


@dataclass(frozen=True)
class ProfileRule:
    document: str            # the P: value, a path in the tree
    options: tuple[str, ...]  # checkpatch.pl options the document asks for
    cites: str               # text the document must hold for the row to apply
    sentence: str            # the sentence of the document the row stands on


PROFILE_RULES: tuple[ProfileRule, ...] = (
    ProfileRule(
        document="Documentation/driver-api/media/maintainer-entry-profile.rst",
        options=("--strict", "--max-line-length=80"),
        cites="./scripts/checkpatch.pl --strict --max-line-length=80",
        sentence="Coding Style Addendum: \"Media development uses ``checkpatch.pl`` on "
                 "strict mode to verify the code style, e.g.:: $ ./scripts/checkpatch.pl "
                 "--strict --max-line-length=80\""),
    ProfileRule(
        document="Documentation/process/maintainer-netdev.rst",
        options=("--strict",),
        cites="You can start with using ``checkpatch.pl``, perhaps even with",
        sentence="Preparing changes: \"You can start with using ``checkpatch.pl``, perhaps "
                 "even with the ``--strict`` flag.\""),
)


@dataclass(frozen=True)
class Section:
    name: str
    files: tuple[str, ...] = ()      # F: as written
    excludes: tuple[str, ...] = ()   # X: as written
    regexes: tuple[str, ...] = ()    # N: as written
    profiles: tuple[str, ...] = ()   # P: as written


@dataclass(frozen=True)
class Profile:
    """The subsystems of a set of files and what their profiles ask."""
    sections: tuple[Section, ...]
    rules: tuple[ProfileRule, ...]       # the rows that apply
    documents: tuple[str, ...]           # every P: of the sections (web pages too)

    @property
    def options(self) -> tuple[str, ...]:
        out: list[str] = []
        for r in self.rules:
            out += [o for o in r.options if o not in out]
        return tuple(out)


_TAG = re.compile(r"([A-Z]):\s*(.*)")


def parse(text: str) -> tuple[Section, ...]:
    """The sections of a MAINTAINERS text (name, F:, X:, N:, P:)."""
    out: list[Section] = []
    heading: Optional[str] = None
    fields: Optional[dict] = None
    prev = ""

    def close():
        if heading is not None and fields is not None:
            out.append(Section(heading, *(tuple(fields[k]) for k in "FXNP")))

    for line in text.splitlines():
        m = _TAG.fullmatch(line)
        if m:
            if fields is None:                     # the first tag line: the line above names it
                close()
                heading, fields = prev.strip(), {k: [] for k in "FXNP"}
            if m.group(1) in fields and m.group(2).strip():
                fields[m.group(1)].append(m.group(2).strip())
        elif fields is not None:                   # the section ends at its first other line
            close()
            heading, fields = None, None
        if line.strip():
            prev = line
    close()
    return tuple(s for s in out if s.name)


def read(tree: Path) -> tuple[Section, ...]:
    return parse(readfiles.read_text(tree / "MAINTAINERS", "MAINTAINERS", strict=False))


def _regex(pattern: str, tree: Optional[Path]) -> str:
    """get_maintainer.pl's conversion of an F:/X: value to a regular expression."""
    value = pattern.replace(".", r"\.").replace("**", "\0").replace("*", ".*")
    value = value.replace("?", ".").replace("\0", "(?:.*)")
    if tree is not None and not value.endswith("/") and (tree / pattern).is_dir():
        value += "/"
    return value


def file_matches(path: str, pattern: str, tree: Optional[Path] = None) -> bool:
    """Does an F:/X: pattern take ``path`` (get_maintainer.pl's file_match_pattern)?"""
    value = _regex(pattern, tree)
    try:
        if not re.match(value, path):
            return False
    except re.error:
        return False
    return value.endswith("/") or path.count("/") == value.count("/") or "(?:" in value


def applies(section: Section, path: str, tree: Optional[Path] = None) -> bool:
    if any(file_matches(path, x, tree) for x in section.excludes):
        return False
    if any(file_matches(path, f, tree) for f in section.files):
        return True
    for n in section.regexes:
        try:
            if re.search(n, path, re.X):
                return True
        except re.error:
            continue
    return False


def sections_for(paths: Iterable[str], sections: Iterable[Section],
                 tree: Optional[Path] = None) -> tuple[Section, ...]:
    """The sections that apply to any of ``paths``, in MAINTAINERS order."""
    paths = list(paths)
    return tuple(s for s in sections if any(applies(s, p, tree) for p in paths))


_DIFF = re.compile(r"diff --git a/(\S+) b/(\S+)$")


def touched(patch_text: str) -> tuple[str, ...]:
    """The files a git format-patch text changes (both names of a rename)."""
    out: list[str] = []
    for line in patch_text.splitlines():
        m = _DIFF.match(line)
        for p in m.groups() if m else ():
            if p not in out:
                out.append(p)
    return tuple(out)


def _normal(text: str) -> str:
    return " ".join(text.split())


def profile(sections: Iterable[Section], tree: Optional[Path],
            rules: tuple[ProfileRule, ...] = PROFILE_RULES) -> Profile:
    """The profile documents of ``sections`` and the rows of ``rules`` that
    apply: a row applies when a section names its document and the tree's
    copy of the document holds the row's ``cites`` (without a tree, naming
    it is enough)."""
    sections = tuple(sections)
    documents: list[str] = []
    for s in sections:
        documents += [p for p in s.profiles if p not in documents]
    used = []
    for rule in rules:
        if rule.document not in documents:
            continue
        if tree is not None:
            doc = tree / rule.document
            try:
                text = doc.read_text(errors="replace")
            except OSError:
                continue
            if _normal(rule.cites) not in _normal(text):
                continue
        used.append(rule)
    return Profile(sections, tuple(used), tuple(documents))


def of_patch(patch_text: str, tree: Path, what: str = "patch") -> Profile:
    """The profile of a patch against a kernel tree (its MAINTAINERS)."""
    paths = touched(patch_text)
    if not paths:
        raise InputError(f"{what}: changes no file (no 'diff --git' line)")
    return profile(sections_for(paths, read(tree), tree), tree)
