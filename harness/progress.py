"""Progress on long steps: one line that advances, not raw tool output.

On a terminal the line is redrawn in place; elsewhere (CI logs, pipes) a
line is printed at most every `interval` seconds so logs stay short.
Everything goes to stderr, so --json output on stdout stays clean.
"""

from __future__ import annotations

import sys
import time


class Progress:
    def __init__(self, *, quiet: bool = False, stream=None, interval: float = 15.0):
        self.stream = stream or sys.stderr
        self.quiet = quiet
        self.tty = hasattr(self.stream, "isatty") and self.stream.isatty()
        self.interval = interval
        self._last_print = 0.0
        self._open_line = False

    def _write(self, text: str) -> None:
        if self.quiet:
            return
        self.stream.write(text)
        self.stream.flush()

    def note(self, message: str) -> None:
        """A line of its own (a phase starts, a path to look at)."""
        self.end_line()
        self._write(message + "\n")

    def update(self, message: str, *, force: bool = False) -> None:
        """The advancing line."""
        now = time.monotonic()
        if self.tty:
            width = 100
            self._write("\r" + message[:width].ljust(width))
            self._open_line = True
        elif force or now - self._last_print >= self.interval:
            self._write(message + "\n")
            self._last_print = now

    def end_line(self) -> None:
        if self._open_line:
            self._write("\n")
            self._open_line = False


def fmt_duration(seconds: float) -> str:
    seconds = int(seconds)
    return f"{seconds // 60}:{seconds % 60:02d}"
