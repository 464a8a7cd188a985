"""Machine-readable output: one JSON object with a version field; files
written whole or not at all (JSON, HTML pages, job lists).

Bump JSON_VERSION when a field changes meaning or goes away (adding one
does not).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from .errors import InputError

JSON_VERSION = 1


def versioned(payload: dict) -> dict:
    return {"version": JSON_VERSION, **payload}


def dumps(payload: dict) -> str:
    return json.dumps(versioned(payload), indent=1)


def write(path: Path, payload: dict) -> None:
    """``path`` holds the versioned payload, written whole or not at all: a
    temporary file beside it, renamed into place; on any failure the
    temporary file is removed and InputError names the path."""
    write_text(path, dumps(payload) + "\n")


def write_text(path: Path, text: str) -> None:
    """``path`` holds ``text``, written whole or not at all (see write)."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        if path.is_dir():
            raise IsADirectoryError(21, "is a folder", str(path))
        tmp.write_text(text)
        os.replace(tmp, path)
    except OSError as e:
        try:
            tmp.unlink()
        except OSError:
            pass
        raise InputError(f"cannot write {path}: {e.strerror or e}", path=str(path)) from None
