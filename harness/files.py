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

import json
import os
import stat
from pathlib import Path
from typing import Any

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
