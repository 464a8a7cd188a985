"""Reading a guest's console as it streams: end marker, panic, silence.

ConsoleWatch is pure (it is fed bytes and asked questions) so that the
boot logic can be tested on recorded logs without QEMU.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

END = re.compile(r"DMAHARNESS-END status=(\d+)(.*)")
PANIC = "Kernel panic - not syncing"
# Messages that mean the kernel hit something bad but may go on running.
OOPS_MARKERS = ("Oops:", "BUG: ", "general protection fault", "kernel BUG at",
                "Unable to handle kernel")

# Facts an integration test (and `boot --json`) wants to know about a boot.
FACTS = {
    "kasan": re.compile(r"KernelAddressSanitizer initialized"),
    "dma_api_debug": re.compile(r"DMA-API: debugging enabled by kernel config"),
    "xhci": re.compile(r"xhci_hcd \S+: (?:xHCI Host Controller|new USB bus registered)"),
    "init": re.compile(r"DMAHARNESS-INIT kernel="),
    "dma_all_errors": re.compile(r"DMAHARNESS-INIT dma-api all_errors=1"),
}
# The init's last word on DMA-API debugging: every occurrence it counted
COUNTERS = re.compile(r"DMAHARNESS-INIT dma-api counters((?: [a-z_]+=\d+)*)\s*$")


@dataclass
class ConsoleWatch:
    """Incremental scanner over console output."""
    end_status: int | None = None
    end_line: str = ""
    panic_line: str = ""
    oops_lines: list[str] = field(default_factory=list)
    facts: dict[str, bool] = field(default_factory=lambda: {k: False for k in FACTS})
    dma_api_counters: dict[str, int] | None = None     # None: the init did not print them
    last_output: float = 0.0
    lines: int = 0
    _partial: str = ""
    _tail: list[str] = field(default_factory=list)

    def feed(self, data: str, now: float = 0.0) -> None:
        if not data:
            return
        self.last_output = now
        text = self._partial + data
        parts = text.split("\n")
        self._partial = parts.pop()
        for line in parts:
            self._line(line.rstrip("\r"))

    def finish(self) -> None:
        """The stream ended: take a last line without newline into account."""
        if self._partial:
            self._line(self._partial.rstrip("\r"))
            self._partial = ""

    def _line(self, line: str) -> None:
        self.lines += 1
        self._tail.append(line)
        if len(self._tail) > 60:
            del self._tail[:20]
        if "DMAHARNESS-" in line:
            m = END.search(line)
            if m and self.end_status is None:
                self.end_status = int(m.group(1))
                self.end_line = line[m.start():]
            m = COUNTERS.search(line)
            if m:
                self.dma_api_counters = {k: int(v) for k, v in
                                         (kv.split("=") for kv in m.group(1).split())}
        if PANIC in line and not self.panic_line:
            self.panic_line = line[line.index(PANIC):]
        for mark in OOPS_MARKERS:
            if mark in line:
                self.oops_lines.append(line)
                break
        for name, rx in FACTS.items():
            if not self.facts[name] and rx.search(line):
                self.facts[name] = True

    @property
    def ended(self) -> bool:
        return self.end_status is not None

    @property
    def panicked(self) -> bool:
        return bool(self.panic_line)

    def tail(self, n: int = 25) -> list[str]:
        out = self._tail[-n:]
        if self._partial:
            out = (out + [self._partial])[-n:]
        return out


def scan(text: str) -> ConsoleWatch:
    """Scan a whole recorded log."""
    w = ConsoleWatch()
    w.feed(text)
    w.finish()
    return w
