"""C structures of an object file: the model, read from pahole or gdb, and its walks.

:class:`Struct` and :class:`Member` trees come from ``pahole -I``
(:func:`parse_pahole`: anonymous structs and unions inline, with absolute
offsets; the file that declares each struct) or from gdb's ``ptype /o``
(:func:`parse_gdb_ptype`: nested structs inline); :func:`structs_pahole`
and :func:`structs_gdb` run the tools on an object (gdb: ``sizeof`` of
every struct ``info types`` lists, then ``ptype /o`` of those whose size
fits).  The walks of a tree find the members, outermost first, down to the
deepest one holding a byte range, expanding a named struct member from its
own definition and an array of records into the element that holds it.

:mod:`harness.reports.layout` chooses the structure a detector report's
object is, and shows the part of it around the buffer.
"""

from __future__ import annotations

import os
import re
import subprocess
import tempfile
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Mapping, Optional, Sequence


# --------------------------------------------------------------------------
# Structures: the model and the two parsers


@dataclass
class Member:
    offset: int                # bytes from the start of the outermost struct
    size: int
    type: str                  # "u8", "struct urb *", "union" (anonymous)
    name: str                  # "status[16]", "" for an anonymous struct/union
    bit_offset: Optional[int] = None
    bits: Optional[int] = None
    children: list["Member"] = field(default_factory=list)
    index: Optional[int] = None    # one element of an array member ("event_list[3]")

    @property
    def end(self) -> int:
        return self.offset + self.size

    @property
    def decl(self) -> str:
        if not self.name:
            return f"{self.type} {{...}}"
        if self.name.startswith("("):          # function pointer: "(*f)(args)"
            return f"{self.type} {self.name}"
        sep = "" if self.type.endswith("*") else " "
        bits = f":{self.bits}" if self.bits is not None else ""
        return f"{self.type}{sep}{self.name}{bits}"

    def shifted(self, by: int) -> "Member":
        return replace(self, offset=self.offset + by,
                       children=[c.shifted(by) for c in self.children])


@dataclass
class Struct:
    kind: str                  # "struct" or "union"
    name: str
    size: int
    members: list[Member]
    decl_file: str = ""        # where it is declared, tree-relative ("" unknown)

    @property
    def flexible(self) -> bool:
        """Ends in a flexible array member (more data may follow it)."""
        return bool(self.members) and self.members[-1].size == 0 and "[]" in self.members[-1].name


_PAHOLE_MEMBER = re.compile(
    r"^(?P<decl>.*?);\s*/\*\s*(?P<off>\d+)(?::\s*(?P<bit>\d+))?\s+(?P<size>\d+)\s*\*/\s*$")
_PAHOLE_START = re.compile(r"^(struct|union) ([A-Za-z_]\w*) \{\s*$")
_PAHOLE_SIZE = re.compile(r"/\*\s*size:\s*(\d+)")
# pahole -I: "/* <1b797> ../drivers/virtio/virtio_input.c:12 */" before a struct
_PAHOLE_DECL = re.compile(r"^/\*\s*<[0-9a-f]+>\s+(\S+?):\d+\s*\*/\s*$")


def _tree_path(path: str) -> str:
    """A DWARF file name made tree-relative: ../drivers/x.c, ./../include/y.h."""
    while True:
        for p in ("./", "../"):
            if path.startswith(p):
                path = path[len(p):]
                break
        else:
            return path
_ATTR = re.compile(r"\s*__attribute__\(\(.*?\)\)\)?")


def _split_decl(decl: str) -> tuple[str, str, Optional[int]]:
    """``const struct x  * info`` -> ("const struct x *", "info", None)."""
    decl = _ATTR.sub("", decl).strip()
    decl = re.sub(r"\s+", " ", decl)
    m = re.search(r"\(\s*\*+\s*(\w+)\s*\)\s*\(.*\)$", decl)
    if m:                                    # function pointer
        return decl[:m.start()].strip(), decl[m.start():], None
    bits = None
    mb = re.search(r"\s*:\s*(\d+)$", decl)
    if mb:
        bits = int(mb.group(1))
        decl = decl[:mb.start()]
    m = re.search(r"(\w+)((?:\s*\[[^\]]*\])*)$", decl)
    if not m:
        return decl, "", bits
    name = m.group(1) + m.group(2).replace(" ", "")
    typ = decl[:m.start()].strip()
    typ = re.sub(r"\s*\*", " *", typ).replace("* *", "**").strip()
    typ = re.sub(r"\* \*", "**", typ)
    return typ, name, bits


def parse_pahole(text: str) -> dict[str, Struct]:
    """pahole's output (with or without -I) -> name -> Struct (unions too)."""
    out: dict[str, Struct] = {}
    cur: Optional[Struct] = None
    stack: list[tuple[str, list[Member]]] = []    # nested anonymous blocks
    decl = ""
    for raw in text.splitlines():
        line = raw.rstrip()
        if cur is None:
            m = _PAHOLE_START.match(line)
            if m:
                cur = Struct(m.group(1), m.group(2), 0, [], decl)
                stack = []
            else:
                d = _PAHOLE_DECL.match(line)
                decl = _tree_path(d.group(1)) if d else decl if line.startswith("/*") else ""
            continue
        s = line.strip()
        if line.startswith("}"):
            out.setdefault(cur.name, cur)
            cur = None
            decl = ""
            continue
        if s.startswith("/*"):
            m = _PAHOLE_SIZE.match(s)
            if m and not stack:
                cur.size = int(m.group(1))
            continue
        if s in ("union {", "struct {") or re.fullmatch(r"(union|struct) \{", s):
            stack.append((s.split()[0], []))
            continue
        m = _PAHOLE_MEMBER.match(s)
        if m is None:
            continue
        off, size = int(m.group("off")), int(m.group("size"))
        decl = m.group("decl")
        if decl.startswith("}"):               # end of an anonymous block
            if not stack:
                continue
            kind, kids = stack.pop()
            mem = Member(off, size, kind, "", children=kids)
        else:
            typ, name, bits = _split_decl(decl)
            bit = int(m.group("bit")) if m.group("bit") is not None else None
            mem = Member(off, size, typ, name, bit, bits if bit is not None or bits else None)
        (stack[-1][1] if stack else cur.members).append(mem)
    return out


_GDB_LINE = re.compile(
    r"^/\*\s*(?P<off>\d+)(?::\s*(?P<bit>\d+))?\s*\|\s*(?P<size>\d+)\s*\*/\s*(?P<rest>.*)$")
_GDB_TOTAL = re.compile(r"/\*\s*total size \(bytes\):\s*(\d+)\s*\*/")
_GDB_START = re.compile(r"type = (struct|union) ([A-Za-z_]\w*) \{")


def parse_gdb_ptype(text: str) -> dict[str, Struct]:
    """Output of one or more ``ptype /o struct X`` -> name -> Struct.

    gdb expands nested structs inline with absolute offsets; the nested
    struct's name comes on its closing ``} name;`` line.
    """
    out: dict[str, Struct] = {}
    cur: Optional[Struct] = None
    stack: list[Member] = []                  # open nested members
    for raw in text.splitlines():
        line = raw.rstrip()
        if cur is None:
            m = _GDB_START.search(line)
            if m:
                cur = Struct(m.group(1), m.group(2), 0, [])
                stack = []
            continue
        s = line.strip()
        m = _GDB_LINE.match(s)
        if m:
            rest = m.group("rest").strip()
            off, size = int(m.group("off")), int(m.group("size"))
            if rest.endswith("{"):
                typ = rest[:-1].strip()
                mem = Member(off, size, typ, "")
                (stack[-1].children if stack else cur.members).append(mem)
                stack.append(mem)
                continue
            typ, name, bits = _split_decl(rest.rstrip(";"))
            bit = int(m.group("bit")) if m.group("bit") is not None else None
            mem = Member(off, size, typ, name, bit, bits)
            (stack[-1].children if stack else cur.members).append(mem)
            continue
        mt = _GDB_TOTAL.search(s)
        if mt and not stack:
            cur.size = int(mt.group(1))
            continue
        if s.startswith("}"):
            if stack:
                mem = stack.pop()
                name = s[1:].strip().rstrip(";").strip()
                mem.name = re.sub(r"\s+", "", name)
                if mem.type in ("struct", "union") and not mem.name:
                    pass
                continue
            out.setdefault(cur.name, cur)
            cur = None
    return out


# --------------------------------------------------------------------------
# Reading the structures of an object


class LayoutError(Exception):
    """pahole failed on an object."""


def pahole_text(obj: Path, pahole: str = "pahole") -> str:
    """``pahole -I`` of an object (every structure, each with its declaration)."""
    try:
        r = subprocess.run([pahole, "-I", str(obj)], capture_output=True, text=True,
                           timeout=300)
    except OSError as e:
        raise LayoutError(f"pahole failed on {obj}: {e}") from None
    if r.returncode != 0:
        raise LayoutError(f"pahole failed on {obj}: {r.stderr.strip()[:200]}")
    return r.stdout


def structs_pahole(obj: Path, pahole: str = "pahole") -> dict[str, Struct]:
    return parse_pahole(pahole_text(obj, pahole))


_GDB_TYPE = re.compile(r"^\d*:?\s*(struct|union) ([A-Za-z_]\w*);\s*$")


def structs_gdb(obj: Path, fits, gdb: str = "gdb") -> dict[str, Struct]:
    """Via gdb: sizes of every struct first, then ``ptype /o`` of those
    for which ``fits(size)`` holds."""
    def batch(commands: list[str]) -> str:
        with tempfile.NamedTemporaryFile("w", suffix=".gdb", delete=False) as fh:
            fh.write("set pagination off\nset width 0\n" + "\n".join(commands) + "\n")
            name = fh.name
        try:
            r = subprocess.run([gdb, "-nx", "-batch", "-x", name, str(obj)],
                               capture_output=True, text=True, timeout=300)
            return r.stdout
        finally:
            os.unlink(name)

    names = []
    for ln in batch(["info types"]).splitlines():
        m = _GDB_TYPE.match(ln.strip())
        if m and (m.group(1), m.group(2)) not in names:
            names.append((m.group(1), m.group(2)))
    sizes = batch([f'printf "SZ {k} {n} %d\\n", sizeof({k} {n})' for k, n in names])
    keep = []
    for ln in sizes.splitlines():
        p = ln.split()
        if len(p) == 4 and p[0] == "SZ" and p[3].isdigit() and fits(int(p[3])):
            keep.append((p[1], p[2]))
    if not keep:
        return {}
    return parse_gdb_ptype(batch([f"ptype /o {k} {n}" for k, n in keep]))


# --------------------------------------------------------------------------
# Where the buffer is in a structure


def _expand(m: Member, structs: Mapping[str, Struct]) -> list[Member]:
    """Children of a member: inline ones, or its named struct's members."""
    if m.children:
        return m.children
    t = m.type.replace("const ", "").replace("volatile ", "").strip()
    mt = re.fullmatch(r"(struct|union) (\w+)", t)
    if mt and ("[" not in m.name or m.index is not None):
        inner = structs.get(mt.group(2))
        if inner is not None and inner.size == m.size:
            return [c.shifted(m.offset) for c in inner.members]
    return []


def _path_to(members: Sequence[Member], start: int, end: int,
             structs: Mapping[str, Struct], depth: int = 0) -> Optional[list[Member]]:
    """Members, outermost first, down to the deepest one holding [start, end)."""
    for m in members:
        if m.size and m.offset <= start and end <= m.end and m.bits is None:
            el = _element_holding(m, start, end)
            if el is not None and depth < 8:
                # inside one record of an array of records: that record's members
                inner = _path_to([el], start, end, structs, depth + 1)
                if inner and len(inner) > 1:
                    return [m] + inner
            if depth < 8:
                inner = _path_to(_expand(m, structs), start, end, structs, depth + 1)
                if inner:
                    return [m] + inner
            return [m]
    return None


def _spans_members(members: Sequence[Member], start: int, end: int) -> bool:
    starts = {m.offset for m in members}
    ends = {m.end for m in members}
    return start in starts and end in ends and start < end


def _array_len(name: str) -> Optional[int]:
    """N of a one-dimensional array member "evts[64]"."""
    m = re.fullmatch(r"\w+\[(\d+)\]", name)
    return int(m.group(1)) if m and int(m.group(1)) > 0 else None


def _element(m: Member, start: int, end: int) -> Optional[int]:
    """The index of the array element of `m` that is exactly [start, end)."""
    n = _array_len(m.name)
    if n is None or m.size % n or not re.match(r"(struct|union) ", m.type):
        return None          # a byte of a char[] is no record of its own
    size = m.size // n
    if end - start != size or (start - m.offset) % size:
        return None
    return (start - m.offset) // size


def _element_holding(m: Member, start: int, end: int) -> Optional[Member]:
    """The element of the array of records `m` that holds [start, end), as a
    member of its own, when [start, end) is within one element but not all of it."""
    n = _array_len(m.name)
    if n is None or m.size % n or m.index is not None \
            or not re.match(r"(struct|union) \w+$", m.type):
        return None
    size = m.size // n
    i = (start - m.offset) // size
    lo = m.offset + i * size
    if end > lo + size or (start, end) == (lo, lo + size):
        return None
    return Member(lo, size, m.type, f"{m.name.split('[')[0]}[{i}]", index=i)
