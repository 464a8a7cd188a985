"""Which modules and Kconfig symbols a patch's files build into (issue #42).

Read from the tree's own kbuild Makefiles, as kbuild reads them
(Documentation/kbuild/makefiles.rst, "Built-in object goals" and
"Loadable module goals")::

    obj-$(CONFIG_FOO) += foo.o        foo.c is module foo, built when FOO is y or m
    foo-y := a.o b.o                  module foo is made of a.c and b.c
    foo-objs := a.o b.o               (the older spelling of the same)
    foo-$(CONFIG_BAR) += c.o          ... and of c.c when BAR is set too
    obj-y += foo.o                    built in, whatever the configuration
    obj-$(CONFIG_FOO) += sub/         a folder kbuild descends into when FOO is set

Lines continued with a backslash are joined; conditional blocks (ifdef,
ifeq) are read as if every branch were taken, so a file may be found in
more than one place: that is a superset, never a miss.  A header belongs
to every module of its folder's Makefile (a guess, and each unit says so);
a file no Makefile names is said to be so, never guessed.

``units(tree, files)`` gives one :class:`Unit` per file and module.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from . import fragments

_ASSIGN = re.compile(r"^\s*([A-Za-z0-9_.-]+?)-(\$\((CONFIG_[A-Za-z0-9_]+)\)|y|m|objs|[A-Za-z0-9_]+)"
                     r"\s*(?::=|\+=|=)\s*(.*)$")
_WORD = re.compile(r"[A-Za-z0-9_./-]+")
_ID_TABLE = re.compile(rb"MODULE_DEVICE_TABLE\s*\(\s*(usb|hid)\s*,")
# where the tree's USB and HID drivers live (every file with such a table in 7.3.4)
DRIVER_TOPS = ("drivers", "sound", "net")


@dataclass(frozen=True)
class Rule:
    """One goal line of a Makefile: ``target`` (obj, or a composite module's
    name) gets ``objects`` when ``symbol`` is set (None: always)."""
    target: str
    symbol: Optional[str]
    objects: tuple[str, ...]


@dataclass(frozen=True)
class Unit:
    file: str                       # the file, relative to the tree
    module: Optional[str]           # the object it builds into (a module when tristate)
    symbol: Optional[str]           # the CONFIG_ symbol that builds it; None: built in always
    part_symbol: Optional[str]      # the symbol that adds the file to a composite object
    settable: bool                  # a tristate with a prompt: a fragment can ask for it as m
    how: str                        # how it was found, in words
    folder: str = ""                # the folder of the Makefile that names it
    sources: tuple[str, ...] = ()   # the object's source files (.c), relative to the tree

    def to_json(self) -> dict:
        return {"file": self.file, "module": self.module, "symbol": self.symbol,
                "part_symbol": self.part_symbol, "settable": self.settable, "how": self.how,
                "sources": list(self.sources)}


def _lines(makefile: Path) -> list[str]:
    try:
        text = makefile.read_text(errors="replace")
    except OSError:
        return []
    return text.replace("\\\n", " ").splitlines()


def rules(makefile: Path) -> list[Rule]:
    """The goal lines of a kbuild Makefile (its obj- and composite lines)."""
    out = []
    for ln in _lines(makefile):
        ln = ln.split("#", 1)[0]
        m = _ASSIGN.match(ln)
        if not m:
            continue
        target, cond, symbol, rhs = m.group(1), m.group(2), m.group(3), m.group(4)
        if not symbol and cond not in ("y", "m", "objs"):
            continue                        # ccflags-y, subdir-ccflags-$(...) and the like
        if target.endswith(("flags", "FLAGS")) or target in ("subdir", "always", "targets",
                                                            "extra", "hostprogs", "clean"):
            continue
        objs = tuple(w for w in _WORD.findall(rhs) if w.endswith((".o", "/")))
        if objs:
            out.append(Rule(target, symbol, objs))
    return out


def _symbol_of(obj: str, rs: list[Rule]) -> tuple[Optional[str], bool]:
    """(the symbol of the obj- line naming ``obj``, whether one was found)."""
    for r in rs:
        if r.target == "obj" and obj in r.objects:
            return r.symbol, True
    return None, False


def _sources(folder: str, obj: str, rs: list[Rule]) -> tuple[str, ...]:
    """The .c files object ``obj`` is made of: its composite lines' objects,
    or itself."""
    parts = [o for r in rs if r.target == obj for o in r.objects if o.endswith(".o")]
    return tuple(dict.fromkeys(f"{folder}/{o[:-2]}.c" for o in parts or [f"{obj}.o"]))


@functools.lru_cache(maxsize=4096)
def _kconfig_tristates(tree: Path, kconfig: str) -> frozenset[str]:
    """The tristates with a prompt of one Kconfig file (parsed once)."""
    return frozenset(f"CONFIG_{s}" for s, rel, kind in fragments.tristates(tree, (kconfig,))
                     if kind == "tristate" and rel == kconfig)


def _tristates(tree: Path, folder: str) -> set[str]:
    """The tristate symbols defined in the Kconfig files of ``folder`` and of
    the two folders above it."""
    out: set[str] = set()
    parts = folder.split("/")
    for n in range(len(parts), max(len(parts) - 3, 0), -1):
        d = "/".join(parts[:n])
        for k in sorted((tree / d).glob("Kconfig*")) if (tree / d).is_dir() else []:
            out |= _kconfig_tristates(tree, f"{d}/{k.name}")
    return out


def _in_folder(tree: Path, rel: str) -> list[Unit]:
    """A .c (or .S) file: the module it is, or is part of, in its folder's
    Makefile or in the Makefile above that names it by sub-path."""
    path = Path(rel)
    for depth in (0, 1, 2):
        folder = path.parents[depth] if depth < len(path.parents) else None
        if folder is None or str(folder) == ".":
            break
        name = str(path.relative_to(folder).with_suffix(".o"))
        rs = rules(tree / folder / "Makefile")
        if not rs:
            continue
        tri = _tristates(tree, str(folder))
        out = []
        sym, found = _symbol_of(name, rs)
        if found:
            out.append(Unit(rel, Path(name).stem, sym, None, sym in tri,
                            f"obj-{'$(' + sym + ')' if sym else 'y'} += {name} in "
                            f"{folder}/Makefile", str(folder),
                            _sources(str(folder), Path(name).stem, rs)))
        for r in rs:
            if r.target != "obj" and name in r.objects:
                csym, cfound = _symbol_of(f"{r.target}.o", rs)
                out.append(Unit(rel, r.target, csym, r.symbol, csym in tri,
                                f"part of {r.target}.o ({r.target}-"
                                f"{'$(' + r.symbol + ')' if r.symbol else 'y'} in "
                                f"{folder}/Makefile)" + ("" if cfound else
                                                         ", whose own goal line is elsewhere"),
                                str(folder), _sources(str(folder), r.target, rs)))
        if out:
            return out
    return []


def _includes(tree: Path, sources: tuple[str, ...], header: str) -> bool:
    """Does one of the sources include the header by its own name
    (#include "cdc-acm.h", as a driver includes its folder's header)?"""
    pat = re.compile(rb'^\s*#\s*include\s+"(?:[^"]*/)?' + re.escape(header.encode()) + rb'"',
                     re.M)
    for src in sources:
        try:
            if pat.search((tree / src).read_bytes()):
                return True
        except OSError:
            continue
    return False


def _header(tree: Path, rel: str) -> list[Unit]:
    """A header of a driver folder: the objects of its Makefile whose
    sources include it by name; when none does (a header included through
    another header, or by path from elsewhere), every object of the folder."""
    folder = str(Path(rel).parent)
    rs = rules(tree / folder / "Makefile")
    tri = _tristates(tree, folder)
    objs = [(r, o) for r in rs if r.target == "obj" for o in r.objects if o.endswith(".o")]
    mine = [(r, o) for r, o in objs
            if _includes(tree, _sources(folder, Path(o).stem, rs), Path(rel).name)]
    how = (f"a header its sources include, in {folder}/Makefile" if mine else
           f"a header: every object of {folder}/Makefile")
    return [Unit(rel, Path(o).stem, r.symbol, None, r.symbol in tri,
                 f"{how} (obj-{'$(' + r.symbol + ')' if r.symbol else 'y'} += {o})", folder,
                 _sources(folder, Path(o).stem, rs))
            for r, o in (mine or objs)]


# a public header included by more sources than this is shared code (a
# class, a subsystem), not a driver's: left to the shared-code rules
MAX_INCLUDERS = 12


def _public_header(tree: Path, rel: str) -> list[Unit]:
    """A header under include/ (include/linux/mfd/viperboard.h): the
    modules of the driver sources that include it by that path
    (<linux/mfd/viperboard.h>), when at most MAX_INCLUDERS do."""
    name = rel.removeprefix("include/")
    if name == rel or name.startswith("uapi/"):
        return []
    pat = re.compile(rb"^\s*#\s*include\s+[<\"]" + re.escape(name.encode()) + rb"[>\"]", re.M)
    hits = []
    for src, data in _driver_sources(tree):
        if name.encode() in data and pat.search(data):
            hits.append(src)
            if len(hits) > MAX_INCLUDERS:
                return [Unit(rel, None, None, None, False,
                             f"a header more than {MAX_INCLUDERS} driver sources include "
                             "(shared code: its users are not looked for one by one)")]
    out = []
    for src in hits:
        for u in _in_folder(tree, src):
            out.append(Unit(rel, u.module, u.symbol, u.part_symbol, u.settable,
                            f"a header {src} includes; {u.how}", u.folder, u.sources))
    return out


def units(tree: Path, files: list[str]) -> list[Unit]:
    """One Unit per (file, object it builds into); a file nothing builds gets
    a Unit with no module, saying why."""
    out: list[Unit] = []
    for rel in dict.fromkeys(files):
        if rel.endswith((".c", ".S")):
            found = _in_folder(tree, rel)
        elif rel.endswith(".h"):
            found = _public_header(tree, rel) if rel.startswith("include/") \
                else _header(tree, rel)
        else:
            found = []
        out += found or [Unit(rel, None, None, None, False,
                              "not a source file a kbuild Makefile names (documentation, "
                              "Kconfig, a script) or not found in the Makefiles above it")]
    return out


def _driver_sources(tree: Path, tops: tuple[str, ...] = DRIVER_TOPS):
    """Every .c file under the tree's driver folders, in order: (path
    relative to the tree, its bytes)."""
    for top in tops:
        for p in sorted((tree / top).rglob("*.c")) if (tree / top).is_dir() else []:
            try:
                yield str(p.relative_to(tree)), p.read_bytes()
            except OSError:
                continue


def id_table_files(tree: Path, tops: tuple[str, ...] = DRIVER_TOPS) -> list[str]:
    """The source files of the tree that declare a USB or HID ID table
    (MODULE_DEVICE_TABLE(usb|hid, ...)): its USB and HID drivers."""
    return [src for src, data in _driver_sources(tree, tops)
            if b"MODULE_DEVICE_TABLE" in data and _ID_TABLE.search(data)]
