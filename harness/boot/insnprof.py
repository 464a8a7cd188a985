"""Guest instruction profiles: where a guest kernel spent its instructions.

bench/insnprof/insnprof.c is a QEMU TCG plugin that counts, for every
translated block, how often it ran; its output file has one line per
block: ``<vaddr hex> <instructions> <executions>``.  This module turns that
into instructions per kernel function, from the variant's System.map, and
compares profiles: two runs of different lengths give a per-event cost
(their difference divided by the difference of the events), free of the
boot and of whatever the runs share.

Code of loadable modules is named ``function [module]`` from the module's
.ko and the load address the init prints (``DMAHARNESS-INIT module-text
name=0x...``).  Other addresses are put in buckets: ``[user]`` (the init,
busybox and the agent), ``[modules]`` (module code outside a known .text)
and ``[kernel other]``.
"""

from __future__ import annotations

import bisect
import json
import re
from dataclasses import dataclass
from pathlib import Path

from .. import errors, paths, proc
from ..kernel import symbolize

PLUGIN_DIR = paths.REPO / "bench" / "insnprof"
PLUGIN = PLUGIN_DIR / "build" / "insnprof.so"

USER = "[user]"
MODULES = "[modules]"
KERNEL_OTHER = "[kernel other]"
# x86-64 module space (Documentation/x86/x86_64/mm.rst)
MODULES_START = 0xffffffffa0000000
MODULES_END = 0xfffffffffeffffff
TEXT_TYPES = set("tTwW")
MODULE_TEXT = re.compile(r"^DMAHARNESS-INIT module-text (.*)$", re.M)


def build_plugin() -> Path:
    """Build the plugin (make -C bench/insnprof; fetches QEMU's plugin header once)."""
    return proc.make(PLUGIN_DIR, PLUGIN, "the instruction profiler")


def qemu_opts(out: Path, plugin: Path = PLUGIN) -> list[str]:
    """QEMU options that load the plugin (build_plugin()'s), writing its
    profile to ``out``."""
    for p in (out, plugin):
        if "," in str(p):
            raise errors.InputError(f"QEMU cannot take a ',' in the plugin's paths: {p}")
    return ["-plugin", f"{plugin},out={out}"]


@dataclass(frozen=True)
class Block:
    vaddr: int
    insns: int
    execs: int


def read_profile(path: Path) -> list[Block]:
    """The plugin's output; a malformed line is an error naming file and line."""
    blocks = []
    with open(path, errors="replace") as f:
        for no, line in enumerate(f, 1):
            parts = line.split()
            try:
                if len(parts) != 3:
                    raise ValueError
                blocks.append(Block(int(parts[0], 16), int(parts[1]), int(parts[2])))
            except ValueError:
                raise errors.InputError(f"{path}:{no}: not '<vaddr hex> <insns> <execs>': "
                                        f"{line.strip()[:80]!r}", path=str(path)) from None
    return blocks


class Symbols:
    """Text symbols of a System.map, to name the function an address is in."""

    def __init__(self, entries: list[tuple[int, str]]):
        entries = sorted(entries)
        self.addrs = [a for a, _ in entries]
        self.names = [n for _, n in entries]
        by_name = dict((n, a) for a, n in entries)
        # the kernel's text and its init text; data lies between them
        self.ranges = [(by_name[lo], by_name[hi]) for lo, hi in (("_stext", "_etext"),
                                                                 ("_sinittext", "_einittext"))
                       if lo in by_name and hi in by_name]
        if not self.ranges and self.addrs:
            self.ranges = [(self.addrs[0], self.addrs[-1] + 1)]

        self.modules: list[tuple[int, int, list[int], list[str]]] = []

    def add_module(self, name: str, base: int, ko: Path) -> None:
        """Name the functions of module ``name``, whose .text the guest loaded at ``base``."""
        elf = symbolize.read_elf(ko, symbols=True)
        text = elf.sections.get(".text")
        if text is None:
            return
        funcs = sorted((s.value, f"{fn} [{name}]") for fn, syms in elf.syms.items()
                       for s in syms if s.section == ".text")
        if funcs:
            self.modules.append((base, base + text[2], [base + a for a, _ in funcs],
                                 [n for _, n in funcs]))

    def add_modules(self, console: str, artifacts: Path) -> None:
        """The modules of a boot: load addresses from its console, .ko files from its variant."""
        files = symbolize.module_files(artifacts)
        for m in MODULE_TEXT.finditer(console):
            for item in m.group(1).split():
                name, _, addr = item.partition("=")
                try:
                    base = int(addr, 16)
                except ValueError:
                    continue
                if name in files and base:
                    try:
                        self.add_module(name, base, files[name])
                    except (OSError, symbolize.ElfError):
                        continue

    @classmethod
    def from_system_map(cls, path: Path) -> "Symbols":
        entries = []
        with open(path, errors="replace") as f:
            for line in f:
                parts = line.split()
                if len(parts) >= 3 and parts[1] in TEXT_TYPES:
                    try:
                        entries.append((int(parts[0], 16), parts[2]))
                    except ValueError:
                        continue
        if not entries:
            raise errors.InputError(f"{path}: no text symbols (is it a System.map?)", path=str(path))
        return cls(entries)

    def name(self, addr: int) -> str:
        if addr < 1 << 47:
            return USER
        if MODULES_START <= addr <= MODULES_END:
            for lo, hi, addrs, names in self.modules:
                if lo <= addr < hi:
                    i = bisect.bisect_right(addrs, addr) - 1
                    return names[i] if i >= 0 else MODULES
            return MODULES
        if not any(lo <= addr < hi for lo, hi in self.ranges):
            return KERNEL_OTHER
        i = bisect.bisect_right(self.addrs, addr) - 1
        return self.names[i] if i >= 0 else KERNEL_OTHER


def by_symbol(blocks: list[Block], syms: Symbols) -> dict[str, int]:
    """Instructions executed in each function (and bucket)."""
    out: dict[str, int] = {}
    for b in blocks:
        n = syms.name(b.vaddr)
        out[n] = out.get(n, 0) + b.insns * b.execs
    return out


def calls(blocks: list[Block], syms: Symbols) -> dict[str, int]:
    """How often each function was entered: executions of the block at its first byte.

    (A loop that jumps back to the first instruction would count too; kernel
    functions start with a prologue or a patched ``nop``, so in practice
    this is the number of calls.)
    """
    start = dict(zip(syms.addrs, syms.names))
    for _, _, addrs, names in syms.modules:
        start.update(zip(addrs, names))
    out: dict[str, int] = {}
    for b in blocks:
        n = start.get(b.vaddr)
        if n is not None:
            out[n] = out.get(n, 0) + b.execs
    return out


def per_event(short: dict[str, int], long: dict[str, int], events: float) -> dict[str, float]:
    """Per-event instructions of each function: (long - short) / events.

    ``events`` is how many more events the long run handled; what both runs
    share (the boot, the init, the agent's setup) cancels out.
    """
    if events <= 0:
        raise errors.InputError(f"the long run must handle more events than the short one "
                                f"({events:g} more)")
    return {k: (long.get(k, 0) - short.get(k, 0)) / events for k in set(short) | set(long)}


def total(profile: dict[str, float]) -> float:
    return sum(profile.values())


def summarize(raw: Path, artifacts: Path, console: Path | None = None, top: int = 20) -> dict | None:
    """Per-function instructions and calls of a run, written next to the raw profile.

    ``artifacts`` is the variant's folder (System.map, modules/), ``console``
    the boot's console log (where the modules were loaded).  Writes
    ``insnprof.json`` beside ``raw``: ``{"instructions": {function:
    n}, "calls": {function: n}}``, and returns the JSON summary of a boot:
    total instructions, the file, the ``top`` functions.  None when QEMU
    wrote no profile (it was killed).
    """
    if not raw.is_file():
        return None
    blocks = read_profile(raw)
    syms = Symbols.from_system_map(Path(artifacts) / "System.map")
    if console is not None and console.is_file():
        syms.add_modules(console.read_text(errors="replace"), Path(artifacts))
    prof = by_symbol(blocks, syms)
    out = raw.with_suffix(".json")
    out.write_text(json.dumps({"instructions": dict(sorted(prof.items(), key=lambda kv: -kv[1])),
                               "calls": calls(blocks, syms)}) + "\n")
    tot = total(prof)
    return {"file": str(out), "raw": str(raw), "instructions": tot,
            "top": [{"symbol": k, "instructions": v, "share": round(v / tot, 4) if tot else 0.0}
                    for k, v in sorted(prof.items(), key=lambda kv: -kv[1])[:top]]}


def load(path: Path, what: str = "instructions") -> dict[str, int]:
    """One part of a profile written by summarize(): "instructions" or "calls"."""
    try:
        return json.loads(Path(path).read_text())[what]
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise errors.InputError(f"cannot read the {what} of instruction profile {path}: {e!r}",
                                path=str(path)) from None
