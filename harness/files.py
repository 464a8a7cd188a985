"""Reading a file someone gave us: one door for every text and JSON file.

Every loader of the harness (case.toml, series, fragments, catalogues,
profiles, baselines, campaigns, results, console logs) reads through
here, so that each refuses the same things the same way, with the
file named: a path that does not exist, a folder, a FIFO or a device
(reading one would block or never end), a symbolic link loop, a file
too large, bytes that are not UTF-8 where text is expected, and JSON
that is not JSON (NaN and Infinity included) or nests too deep.
"""

from __future__ import annotations

import io
import json
import os
import stat
import sys
from pathlib import Path
from typing import Any, Iterator

from .errors import InputError

MAX_BYTES = 1 << 30           # no file the harness reads is larger than 1 GiB


def check_file(path: Path | str, what: str = "file") -> Path:
    """``path`` when it is a regular file that can be opened; else InputError."""
    p = Path(path)
    try:
        st = os.stat(p)
    except FileNotFoundError:
        raise InputError(f"{what} {p}: no such file", path=str(p)) from None
    except OSError as e:            # a loop of links (ELOOP), a component that is a file...
        raise InputError(f"{what} {p}: {e.strerror or e}", path=str(p)) from None
    if stat.S_ISDIR(st.st_mode):
        raise InputError(f"{what} {p} is a folder, not a file", path=str(p))
    if not stat.S_ISREG(st.st_mode):
        raise InputError(f"{what} {p} is not a regular file (a FIFO, a socket or a device)",
                         path=str(p))
    if st.st_size > MAX_BYTES:
        raise InputError(f"{what} {p} is larger than {MAX_BYTES >> 20} MiB", path=str(p))
    return p


def resolve(path: Path | str, what: str = "path") -> Path:
    """``path`` made absolute with its links followed; a loop of links is InputError."""
    try:
        return Path(path).expanduser().resolve()
    except (RuntimeError, OSError) as e:       # "Symlink loop from ..." (Python 3.11)
        raise InputError(f"{what} {path}: {e}", path=str(path)) from None


def read_bytes(path: Path | str, what: str = "file") -> bytes:
    p = check_file(path, what)
    try:
        return p.read_bytes()
    except OSError as e:
        raise InputError(f"{what} {p}: cannot read it ({e.strerror or e})", path=str(p)) from None


def read_text(path: Path | str, what: str = "file", *, strict: bool = True) -> str:
    """The file's text: UTF-8, or InputError (``strict``); else undecodable
    bytes replaced (a console log, which may hold anything)."""
    data = read_bytes(path, what)
    try:
        return data.decode("utf-8", errors="strict" if strict else "replace")
    except UnicodeDecodeError as e:
        raise InputError(f"{what} {path}: not UTF-8 text (byte {e.start})", path=str(path)) from None


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number JSON allows")


def parse_json(text: str | bytes, what: str, path: Path | str | None = None) -> Any:
    """JSON as RFC 8259 has it (no NaN, no Infinity), or InputError naming ``what``."""
    try:
        return json.loads(text, parse_constant=_no_constant)
    except (ValueError, RecursionError) as e:
        raise InputError(f"{what}: not JSON ({str(e)[:200]})",
                         path=str(path) if path else None) from None


def read_json(path: Path | str, what: str = "file") -> Any:
    return parse_json(read_bytes(path, what), f"{what} {path}", path)


LOG_BLOCK = 1 << 20     # characters log_lines() reads at a time


def log_lines(path: str, what: str = "console log", offset: int = 0) -> Iterator[str]:
    """A console log's lines as text.split("\\n") gives them, read as they
    come (memory bounded by a line, not the log); '-' is standard input.
    ``offset``: start at this byte of the file (just after a newline: a share
    of a log parsed on several cores)."""
    if path == "-":
        raw: Any = sys.stdin.buffer
    else:
        check_file(path, what)
        try:
            raw = open(path, "rb")
            if offset:
                raw.seek(offset)
        except OSError as e:
            raise InputError(f"{what} {path}: cannot read it ({e.strerror or e})",
                             path=path) from None
    # universal newlines, as a file opened in text mode reads (a lone CR of a
    # serial console ends a line too); read in blocks and split in C: a
    # Python step per line cost a sixth of `reports`'s time
    f = io.TextIOWrapper(raw, encoding="utf-8", errors="replace", newline=None)
    try:
        pending = ""
        try:
            while True:
                block = f.read(LOG_BLOCK)
                if not block:
                    break
                lines = (pending + block).split("\n") if pending else block.split("\n")
                pending = lines.pop()
                if len(pending) > LOG_BLOCK:    # a line without end: hand it over in pieces
                    lines.append(pending)       # (as a line of its own; never in a real log)
                    pending = ""
                yield from lines
        except OSError as e:    # EIO from /proc/self/mem, a disk that fails mid-read
            raise InputError(f"{what} {path}: cannot read it ({e.strerror or e})",
                             path=path) from None
        yield pending           # as text.split(): the text after the last newline, or ""
    finally:
        if path == "-":
            f.detach()          # standard input stays open
        else:
            f.close()
