"""A check's answer to a patch, in the form syzbot answers one (issue #42).

For a patch that brings a report in: the title, how often it was seen
after and before, the console and the kernel config of the run that shows
it, the report itself, and the one command that reproduces it; for one
that takes a report out and brings nothing in, the evidence a Tested-by
rests on (seen in so many runs before, none after, nothing new).  It is
text for a mail the sender writes: it names the harness as the source of
the report and signs for no one.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Optional

from ..checks.patchcheck import Change, changes

MAX_REPORT_LINES = 60
TAG = ("This report came from dmaharness (DMA cache-line sharing under KASAN and DMA-API "
       "debugging).")


def _runs(counts: list[int]) -> str:
    return f"{sum(1 for c in counts if c)}/{len(counts)}"


def _config(folder: Path, label: str) -> Optional[str]:
    """The kernel config of a variant's first run (its result.json: our own file)."""
    try:
        art = json.loads((folder / f"{label}-1" / "result.json").read_text())["build"]["artifacts"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return str(Path(art) / "config") if isinstance(art, str) else None


def _report(c: Change) -> list[str]:
    raw = list(getattr(c.row.example, "raw", None) or [])
    cut = raw[:MAX_REPORT_LINES]
    return ([""] + [f"  {ln}" for ln in cut] + (["  ..."] if len(raw) > len(cut) else [])
            if cut else [])


def reply(version: str, patches: tuple[Path, ...], outcome, folder: Path,
          reproduce: list[str]) -> str:
    """The answer for ``patches`` on linux ``version`` from a check's case
    ``outcome`` (its runs in ``folder``)."""
    ch = changes(outcome, patches)
    brought = [c for c in ch if c.status == "new"]
    taken = [c for c in ch if c.status == "fixed"]
    them = "patches" if len(patches) > 1 else "patch"
    out = ["Hello,", ""]
    if brought:
        out += [f"dmaharness found the following with the {them} applied on linux {version}:",
                ""]
        for c in brought:
            out += [f"patch:          {c.patch}",
                    f"title:          {c.row.title}",
                    f"seen in:        {_runs(c.row.after_counts)} runs after, "
                    f"{_runs(c.row.before_counts)} before",
                    f"console:        {folder}/{c.diff.after_label}-1/console.log",
                    f"kernel config:  {_config(folder, c.diff.after_label) or '(not found)'}"]
            out += _report(c) + [""]
    if taken:
        out += [f"dmaharness tested the {them} on linux {version}: "
                + ("it also takes out:" if brought else
                   "it takes out the following and brings nothing new in:"), ""]
        for c in taken:
            out += [f"patch:          {c.patch}",
                    f"title:          {c.row.title}",
                    f"seen in:        {_runs(c.row.before_counts)} runs before, "
                    f"{_runs(c.row.after_counts)} after",
                    f"console before: {folder}/{c.diff.before_label}-1/console.log", ""]
    if not ch:
        out += [f"dmaharness tested the {them} on linux {version}: nothing new, nothing "
                "taken out.", ""]
    return "\n".join(out + [f"Reproduce:      {shlex.join(reproduce)}", "", TAG, ""])
