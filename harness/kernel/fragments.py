"""Kconfig fragments: parse them, and check that a .config honours them.

A fragment is what scripts/kconfig/merge_config.sh takes: lines
`CONFIG_FOO=value` and `# CONFIG_FOO is not set`, other comments free.
After olddefconfig, every option a fragment asks for must have the value
asked; when one did not stick, `explain` reads the tree's Kconfig files to
say why (the option is unknown to this kernel, has no prompt, or depends on
something that is off).

A comment line `# where-defined: REASON` makes the option on the next line
required only by kernels whose Kconfig defines it: one fragment can then
serve 6.1 and 6.12 when a symbol exists in only one of them (HID_SUPPORT,
the "HID bus support" menu, is new in 6.2). Where the symbol is defined,
the option must stick as any other.
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from .. import files
from ..errors import InputError
from ..paths import FRAGMENTS

_SET = re.compile(r"^(CONFIG_[A-Za-z0-9_]+)=(.*)$")
_UNSET = re.compile(r"^# (CONFIG_[A-Za-z0-9_]+) is not set$")


@dataclass(frozen=True)
class Fragment:
    path: Path
    options: tuple[tuple[str, str], ...]   # (CONFIG_X, value); 'n' for "is not set"
    where_defined: frozenset[str] = frozenset()   # options after `# where-defined:`
    # `# best-effort` (a generated fragment of candidates, such as every USB
    # driver of a tree): its options are asked for, and those whose
    # dependencies this kernel lacks are dropped, not errors; what was built
    # is what the .config (and modules.alias) says
    best_effort: bool = False

    @property
    def name(self) -> str:
        return self.path.stem

    def digest(self) -> str:
        """What the fragment asks, in order, and which options only where defined:
        a comment or a blank line changes no kernel, so it changes no key."""
        h = hashlib.sha256()
        for opt, val in self.options:
            h.update(f"{opt}={val}{' where-defined' if opt in self.where_defined else ''}\n"
                     .encode())
        if self.best_effort:
            h.update(b"best-effort\n")
        return h.hexdigest()


@dataclass(frozen=True)
class Mismatch:
    option: str
    wanted: str
    got: str          # 'n' when absent or not set
    fragment: str
    why: str = ""
    unknown: bool = False   # no Kconfig file of the tree defines the symbol

    def describe(self) -> str:
        got = "not set" if self.got == "n" else self.got
        text = f"{self.option}={self.wanted} (from {self.fragment}.config) ended up {got}"
        return f"{text}: {self.why}" if self.why else text


def _option(line: str) -> tuple[str, str] | None:
    """(CONFIG_X, value) of a `CONFIG_X=v` or `# CONFIG_X is not set` line."""
    m = _SET.match(line)
    if m:
        return m.group(1), m.group(2)
    m = _UNSET.match(line)
    if m:
        return m.group(1), "n"
    return None


def parse_fragment(path: Path) -> Fragment:
    path = Path(path)
    if not os.path.exists(path):        # False too for a name too long for a path
        raise InputError(f"fragment {str(path)[:300]} does not exist", path=str(path))
    opts: dict[str, str] = {}
    where: set[str] = set()
    pending = 0          # line of a `# where-defined:` waiting for its option
    best_effort = False
    for lineno, raw in enumerate(files.read_text(path, "fragment").splitlines(), 1):
        line = raw.strip()
        if not line:
            continue
        opt = _option(line)
        if opt:
            opts[opt[0]] = opt[1]
            if pending:
                where.add(opt[0])
                pending = 0
            continue
        if not line.startswith("#"):
            raise InputError(f"{path}:{lineno}: not a Kconfig fragment line: {raw!r}",
                             path=str(path))
        if pending:
            raise InputError(f"{path}:{pending}: `# where-defined:` must be followed by the "
                             f"option it is about, not by another comment", path=str(path))
        if re.match(r"#\s*where-defined\s*:", line):
            pending = lineno
        elif re.fullmatch(r"#\s*best-effort\b.*", line):
            best_effort = True
    if pending:
        raise InputError(f"{path}:{pending}: `# where-defined:` ends the file: it needs an "
                         f"option on the next line", path=str(path))
    return Fragment(path, tuple(opts.items()), frozenset(where), best_effort)


def default_fragments() -> list[Fragment]:
    """Every kconfig-fragments/*.config, in name order (base first)."""
    files = sorted(FRAGMENTS.glob("*.config"), key=lambda p: (p.stem != "base", p.name))
    return [parse_fragment(p) for p in files]


def resolve_fragments(names: list[str] | None) -> list[Fragment]:
    """Fragments by name (kconfig-fragments/NAME.config) or path; None = all."""
    if not names:
        return default_fragments()
    out = []
    for n in names:
        p = Path(n)
        if not p.suffix and not os.path.exists(p):
            p = FRAGMENTS / f"{n}.config"
        out.append(parse_fragment(p))
    return out


EXTRA_ENV = "DMAHARNESS_EXTRA_FRAGMENTS"


def extra_fragments(version: str, env=None) -> list[Fragment]:
    """$DMAHARNESS_EXTRA_FRAGMENTS: fragments added to every kernel built
    of a version, after its profile's (part of the kernel's key, verified as
    any other).  A comma-separated list of VERSION=PATH (that version only)
    or PATH (every version).  For CI: kernels that differ by a few
    subsystems (a sweep's, the device profiles') become one configuration,
    so that each is built once and the others seed from it in seconds."""
    spec = (os.environ if env is None else env).get(EXTRA_ENV, "")
    out = []
    for item in filter(None, (x.strip() for x in spec.split(","))):
        ver, sep, path = item.partition("=")
        if not sep:
            ver, path = "", item
        if ver and not re.fullmatch(r"[0-9]+\.[0-9]+", ver):
            raise InputError(f"${EXTRA_ENV}: {item[:200]!r}: VERSION=PATH wants a version "
                             "such as 7.3 before the '='")
        if ver and ver != version:
            continue
        if not os.path.isfile(path):
            raise InputError(f"${EXTRA_ENV}: {path[:300]} is not a file", path=path[:300])
        out.append(parse_fragment(Path(path)))
    return out


def requested(fragments: list[Fragment]) -> dict[str, tuple[str, str]]:
    """option -> (value, fragment name); later fragments win, as in merge_config.sh.
    A best-effort fragment's options are asked for but not required: an
    option only such a fragment asks for is left out."""
    out: dict[str, tuple[str, str]] = {}
    for f in fragments:
        for opt, val in f.options:
            if not f.best_effort:
                out[opt] = (val, f.name)
            elif opt in out and out[opt][0] != val:
                del out[opt]            # merge_config.sh takes the later value: not required
    return out


def tristates(srctree: Path, dirs: tuple[str, ...], pattern: str = ""
              ) -> list[tuple[str, str, str]]:
    """(symbol, Kconfig file, "tristate" or "bool") of every tristate with a prompt, and every bool
    `menuconfig` (the menus that gate them), defined in the Kconfig files under
    `dirs` of the tree (an entry may name one Kconfig file); with `pattern` (a regex), only entries whose
    dependencies (`depends on`, the `if` blocks of their file) match it."""
    rx = re.compile(pattern) if pattern else None
    out: list[tuple[str, str, str]] = []
    for d in dirs:
        root = srctree / d
        paths_ = sorted(root.rglob("Kconfig*")) if root.is_dir() else \
            [root] if root.is_file() else []            # a Kconfig file of its own
        for path in paths_:
            rel = str(path.relative_to(srctree))
            ifs: list[str] = []
            cur: list = []          # [symbol, menuconfig?, type, prompt?, depends]

            def done() -> None:
                if cur and cur[3] and (cur[2] == "tristate" or (cur[1] and cur[2] == "bool")):
                    if rx is None or rx.search(" ".join(cur[4])):
                        out.append((cur[0], rel, cur[2]))
            for w in _kconfig_words(path):
                kw = w[0]
                if kw in ("config", "menuconfig") and len(w) >= 2:
                    done()
                    cur = [w[1], kw == "menuconfig", "", False, list(ifs)]
                    continue
                if kw in _KEYWORDS:
                    done()
                    cur = []
                    if kw == "if":
                        ifs.append(" ".join(w[1:]))
                    elif kw == "endif" and ifs:
                        ifs.pop()
                    continue
                if not cur:
                    continue
                if kw in ("tristate", "bool"):
                    cur[2], cur[3] = kw, len(w) > 1
                elif kw in ("def_tristate", "def_bool"):
                    cur[2] = kw[4:]
                elif kw == "prompt":
                    cur[3] = True
                elif w[:2] == ["depends", "on"]:
                    cur[4].append(" ".join(w[2:]))
            done()
    seen: set[str] = set()
    return [e for e in out if not (e[0] in seen or seen.add(e[0]))]


def read_config(text: str) -> dict[str, str]:
    """A .config as option -> value ('n' for not set)."""
    return dict(opt for opt in map(_option, text.splitlines()) if opt)


def verify(config_text: str, fragments: list[Fragment]) -> list[Mismatch]:
    """The requested options whose value in the .config differs."""
    have = read_config(config_text)
    bad = []
    for opt, (want, frag) in requested(fragments).items():
        got = have.get(opt, "n")
        if got != want:
            bad.append(Mismatch(opt, want, got, frag))
    return bad


# --- why did an option not stick? -----------------------------------------

_KEYWORDS = ("config", "menuconfig", "choice", "endchoice", "menu", "endmenu",
             "if", "endif", "source", "comment", "mainmenu")


@dataclass
class KconfigEntry:
    symbol: str
    file: str
    has_prompt: bool
    depends: list[str]
    selected_by: list[str] = field(default_factory=list)
    kind: str = ""                  # bool, tristate, int, hex, string ("" when unsaid)


def _kconfig_files(srctree: Path, arch: str = "x86") -> list[Path]:
    out = []
    for dirpath, dirnames, filenames in os.walk(srctree):
        rel = os.path.relpath(dirpath, srctree)
        parts = rel.split(os.sep)
        # other architectures' Kconfig files would only confuse the answer
        if parts[0] == "arch" and len(parts) > 1 and parts[1] != arch:
            dirnames[:] = []
            continue
        if parts[0] in (".git", "Documentation", "tools") or "_build" in parts:
            dirnames[:] = []
            continue
        for f in filenames:
            if f.startswith("Kconfig"):
                out.append(Path(dirpath) / f)
    return out


def _indent(line: str) -> int:
    return len(line.expandtabs(8)) - len(line.expandtabs(8).lstrip())


def _kconfig_words(path: Path):
    """The words of each line of a Kconfig file that matters: continuation
    lines joined ("depends on A || \\\n B"), comments, blank lines and help
    texts left out."""
    lines = path.read_text(errors="replace").replace("\\\n", " ").splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        i += 1
        w = line.split()
        if not w or w[0].startswith("#"):
            continue
        if w[0] in ("help", "---help---"):
            base = _indent(line)
            while i < len(lines) and (not lines[i].strip() or _indent(lines[i]) > base):
                i += 1
            continue
        yield w


def find_entries(srctree: Path, symbols: set[str] | None) -> dict[str, list[KconfigEntry]]:
    """Kconfig definitions of the given symbols (without CONFIG_; None: all).

    An entry's dependencies include the `if` blocks around it in its own
    file (not those of the files that source it); help texts are skipped.
    """
    found: dict[str, list[KconfigEntry]] = {}
    selectors: dict[str, list[str]] = {}
    types = ("bool", "tristate", "int", "hex", "string")
    for path in _kconfig_files(srctree):
        rel = str(path.relative_to(srctree))
        ifs: list[str] = []
        entry: KconfigEntry | None = None   # the wanted entry being read
        current: str | None = None          # any config entry being read
        for w in _kconfig_words(path):
            kw = w[0]
            if kw == "if":
                ifs.append(" ".join(w[1:]))
            elif kw == "endif":
                if ifs:
                    ifs.pop()
            elif kw in ("config", "menuconfig") and len(w) >= 2:
                current = w[1]
                entry = None
                if symbols is None or current in symbols:
                    entry = KconfigEntry(current, rel, False, list(ifs))
                    found.setdefault(current, []).append(entry)
                continue
            if kw in _KEYWORDS:
                entry = current = None
                continue
            if kw == "select" and len(w) >= 2 and current and (symbols is None
                                                               or w[1] in symbols):
                selectors.setdefault(w[1], []).append(current)
            if entry is None:
                continue
            if w[:2] == ["depends", "on"]:
                entry.depends.append(" ".join(w[2:]))
            elif (kw in types and len(w) > 1) or kw == "prompt":
                entry.has_prompt = True
            if kw in types:
                entry.kind = entry.kind or kw
            elif kw in ("def_bool", "def_tristate"):
                entry.kind = entry.kind or kw[4:]
    for sym, by in selectors.items():
        for e in found.get(sym, []):
            e.selected_by = sorted(set(by))
    return found


_IDENT = re.compile(r"^[A-Za-z0-9_]+$")


def needed(srctree: Path, symbols: dict[str, str], have: set[str],
           depth: int = 4) -> dict[str, str]:
    """``symbols`` (CONFIG_X -> y|m) with what their Kconfig entries plainly
    depend on and ``have`` (the symbols set y or m) lacks: each term of a
    `depends on` or an enclosing `if` that is a bare symbol joined by &&
    (a `||`, `!` or comparison is a choice this leaves to the user), a
    tristate asked as m, a bool as y, followed `depth` levels down.  What
    still does not stick fails the build with `explain`'s words."""
    out = dict(symbols)
    todo = {s.removeprefix("CONFIG_") for s in symbols}
    every = find_entries(srctree, None)         # one walk of the Kconfig files
    for _ in range(depth):
        if not todo:
            break
        entries = {t: every.get(t, []) for t in todo}
        todo = set()
        for sym in sorted(entries):
            for expr in (entries[sym][0].depends if entries[sym] else []):
                if any(op in expr for op in ("||", "!", "=", "<", ">")):
                    continue
                for term in (t.strip().strip("()") for t in expr.split("&&")):
                    name = f"CONFIG_{term}"
                    if _IDENT.match(term) and term not in ("y", "m", "n") \
                            and name not in have and name not in out:
                        out[name] = ""
                        todo.add(term)
        for term in list(todo):
            kind = next((e.kind for e in every.get(term, []) if e.kind), "")
            if kind in ("bool", "tristate") and any(e.has_prompt for e in every[term]):
                out[f"CONFIG_{term}"] = "m" if kind == "tristate" else "y"
            else:               # no prompt (selected, not set) or not a switch
                out.pop(f"CONFIG_{term}")
                todo.discard(term)
    return {k: v for k, v in out.items() if v}


def drifted(config_text: str, fragments) -> list[Mismatch]:
    """A configured .config checked again before a build: what no longer holds.
    An option asked only where defined and absent was excused when the tree
    was configured (its kernel does not define it), so it is not drift."""
    return [m for m in verify(config_text, fragments)
            if not (m.got == "n" and any(m.option in f.where_defined for f in fragments))]


def explain(srctree: Path, config_text: str, mismatches: list[Mismatch],
            version: str) -> list[Mismatch]:
    """The same mismatches, each with a `why` read from the tree's Kconfig."""
    have = read_config(config_text)
    syms = {m.option[len("CONFIG_"):] for m in mismatches}
    entries = find_entries(srctree, syms)
    out = []
    for m in mismatches:
        sym = m.option[len("CONFIG_"):]
        defs = entries.get(sym)
        if not defs:
            why = f"unknown to linux {version} (no Kconfig file defines {sym})"
            out.append(Mismatch(m.option, m.wanted, m.got, m.fragment, why, unknown=True))
            continue
        else:
            deps = [d for e in defs for d in e.depends]
            off = []
            for d in deps:
                for neg, tok in re.findall(r"(!?)\s*([A-Za-z0-9_]+)", d):
                    if neg or tok in ("y", "m", "n") or tok.isdigit() or not tok.isupper():
                        continue
                    val = have.get("CONFIG_" + tok, "n")
                    if val == "n" and tok not in off:
                        off.append(tok)
            parts = []
            if m.wanted == "n":
                on = [s for s in defs[0].selected_by if have.get("CONFIG_" + s, "n") != "n"]
                if on:
                    parts.append("selected by " + ", ".join(on) + " (turn those off too)")
            if deps and m.wanted != "n":
                parts.append("depends on " + " && ".join(f"({d})" if len(deps) > 1 else d for d in deps))
            if off:
                parts.append("not set here: " + ", ".join(off))
            if not any(e.has_prompt for e in defs):
                parts.append("it has no prompt: only a 'select' can turn it on")
            why = "; ".join(parts) + f" [{defs[0].file}]" if parts else f"see {defs[0].file}"
        out.append(Mismatch(m.option, m.wanted, m.got, m.fragment, why))
    return out


def excused(mismatches: list[Mismatch], fragments) -> list[Mismatch]:
    """The explained mismatches a `# where-defined:` line allows: the option
    is unknown to this kernel and its fragment asked for it only where defined.
    (A later fragment asking for the same option plainly is not excused.)"""
    owner = {}
    for f in fragments:
        for opt, _ in f.options:
            owner[opt] = f
    return [m for m in mismatches if m.unknown and m.option in owner[m.option].where_defined]
