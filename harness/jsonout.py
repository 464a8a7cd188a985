"""Machine-readable output: one JSON object with a version field.

Bump JSON_VERSION when a field changes meaning or goes away (adding one
does not).
"""

from __future__ import annotations

import json
from pathlib import Path

JSON_VERSION = 1


def versioned(payload: dict) -> dict:
    return {"version": JSON_VERSION, **payload}


def dumps(payload: dict) -> str:
    return json.dumps(versioned(payload), indent=1)


def write(path: Path, payload: dict) -> None:
    """``path`` holds the versioned payload (written whole, then renamed into place)."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(dumps(payload) + "\n")
    tmp.rename(path)
