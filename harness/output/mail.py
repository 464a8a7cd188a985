"""A case's fix patch as the mail its sender sends (`dmaharness mail`).

The patches under patches/ are a case's material, not mails: they carry
no From: and no Signed-off-by:, for the project signs off for no one
(Documentation/process/submitting-patches.rst: the sign-off certifies the
Developer's Certificate of Origin, which only the person sending can;
coding-assistants.rst: a tool does not sign off).  The mail is made when
someone sends it:

- From: and Signed-off-by: are that person's, from git's configuration
  where the command runs (user.name, user.email: what git format-patch
  and git send-email would take); without one the mail is refused;
- the patch's own trailers (Fixes:, Cc:) stay, the sign-off goes last;
- below the "---" line, where git am drops it, a note names the harness
  and the one command that reproduces the report and shows the fix, as
  syzbot adds its tag and its links.
"""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from .. import files, paths
from ..errors import EnvError, InputError

_TRAILER = re.compile(r"[A-Za-z][A-Za-z0-9-]*: \S")
_EMAIL = re.compile(r"[^\s<>@]+@[^\s<>@]+")
NOTE = "Found with dmaharness (DMA cache-line sharing under KASAN and DMA-API debugging)."


@dataclass(frozen=True)
class Identity:
    name: str
    email: str

    def line(self) -> str:
        return f"{self.name} <{self.email}>"


def _git_config(key: str, cwd: Optional[Path]) -> str:
    try:
        r = subprocess.run(["git", "config", "--get", key], capture_output=True, text=True,
                           errors="replace", cwd=cwd, timeout=30)
    except (OSError, subprocess.SubprocessError) as e:
        raise EnvError(f"cannot run git config to find who sends the mail: {e}") from None
    return r.stdout.strip() if r.returncode == 0 else ""


def identity(cwd: Optional[Path] = None) -> Identity:
    """The sender: git's user.name and user.email; EnvError when either is
    missing or is not one name and one address."""
    name, email = _git_config("user.name", cwd), _git_config("user.email", cwd)
    if not name or not email:
        raise EnvError("no sender: a mail carries the identity of the person who sends it, "
                       "and dmaharness signs off for no one; set yours with\n"
                       "  git config --global user.name 'Your Name'\n"
                       "  git config --global user.email you@example.net")
    if any(c in name for c in "<>\n\r") or not _EMAIL.fullmatch(email):
        raise EnvError(f"git's user.name {name!r} / user.email {email!r}: not one name and "
                       "one address")
    return Identity(name, email)


def identity_or_none(cwd: Optional[Path] = None) -> Optional[Identity]:
    try:
        return identity(cwd)
    except EnvError:
        return None


def case_of(patch: Path) -> Optional[Path]:
    """The case folder a patch belongs to (the nearest folder above it with a
    case.toml), or None."""
    for d in patch.resolve().parents:
        if (d / "case.toml").is_file():
            return d
        if d == paths.REPO or d.parent == d:
            return None
    return None


def reproduce(patch: Path) -> Optional[str]:
    """The one command that shows the report before the fix and its absence after."""
    case = case_of(patch)
    if case is None:
        return None
    try:
        where = str(case.relative_to(paths.REPO))
    except ValueError:
        where = str(case)
    return f"./dmaharness run --case {where}"


def compose(text: str, sender: Identity, repro: Optional[str], what: str = "patch") -> str:
    """The patch ``text`` (git format-patch's form) as ``sender``'s mail."""
    lines = text.split("\n")
    try:
        blank = lines.index("")
        cut = lines.index("---", blank)
    except ValueError:
        raise InputError(f"{what}: not a git format-patch mail (a header, a blank line, the "
                         "message, then a line '---')") from None
    header = [ln for ln in lines[:blank] if not ln.startswith("From: ")]
    if not any(ln.startswith("Subject: ") for ln in header):
        raise InputError(f"{what}: no Subject: line in its header")
    at = 1 if header and header[0].startswith("From ") else 0      # the mbox line first
    header.insert(at, f"From: {sender.line()}")
    message = lines[blank + 1:cut]
    while message and not message[-1].strip():
        message.pop()
    sob = f"Signed-off-by: {sender.line()}"
    message = [ln for ln in message if ln != sob]
    last = message[-1] if message else ""
    if not _TRAILER.match(last):
        message.append("")                  # the trailers are a paragraph of their own
    message.append(sob)
    note = [NOTE] + ([f"Reproduce it, and see the fix take it out: {repro}"] if repro else [])
    return "\n".join(header + [""] + message + ["---"] + note + [""] + lines[cut + 1:])


def mail_of(patch: Path, sender: Identity) -> str:
    return compose(files.read_text(patch, "patch"), sender, reproduce(patch), str(patch))
