"""A composed mail checked as its subsystems' maintainers check it
(`dmaharness mail --check`, issue #43).

For each mail: the kernel tree's scripts/checkpatch.pl --strict with the
options the profiles of the patch's MAINTAINERS sections ask for
(harness/output/subsystems.py, PROFILE_RULES), and the `Cc: stable` rule
(harness/output/stabletag.py).  checkpatch runs as a maintainer runs it on
a mail: --no-tree, on the mail written into a temporary folder outside any
git checkout (else it would look Fixes: ids up in the wrong history).  A
tree without a .git folder (Debian's linux-source) has no history at all,
so there checkpatch's UNKNOWN_COMMIT_ID, which it says of every id, is
ignored; the ids and subjects of the Fixes: tags are the author's to check
against upstream's log.

The tree is the one given, or the cached, unpacked linux-source of the
patch's kernel version (a patch under patches/<version>/).
"""

from __future__ import annotations

import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from .. import paths
from ..errors import EnvError, InputError
from ..kernel import debsource
from . import stabletag, subsystems

PRISTINE = ".dmaharness-pristine"        # harness/kernel/kbuild.py's mark of an unpacked tree


@dataclass(frozen=True)
class MailCheck:
    patch: str
    tree: str
    sections: tuple[str, ...]
    documents: tuple[str, ...]
    options: tuple[str, ...]             # checkpatch.pl's command-line options used
    checkpatch: tuple[str, ...]          # its lines (empty when clean)
    stable: tuple[str, ...]              # the Cc: stable rule's complaints

    @property
    def ok(self) -> bool:
        return not self.checkpatch and not self.stable

    def to_json(self) -> dict:
        return {"patch": self.patch, "tree": self.tree, "ok": self.ok,
                "sections": list(self.sections), "profiles": list(self.documents),
                "checkpatch_options": list(self.options),
                "checkpatch": list(self.checkpatch), "stable": list(self.stable)}


def version_of(patch: Path) -> Optional[str]:
    """The kernel version of a patch of the checkout (patches/<version>/...)."""
    try:
        rel = patch.resolve().relative_to(paths.REPO)
    except ValueError:
        return None
    parts = rel.parts
    if len(parts) > 2 and parts[0] == "patches":
        try:
            return debsource.check_version(parts[1])
        except InputError:
            return None
    return None


def cached_tree(version: str) -> Optional[Path]:
    """The newest unpacked linux-source-<version> tree of the cache folder."""
    root = paths.cache_dir() / "src"
    found = {d.name[len("linux-"):]: d for d in root.glob(f"linux-{version}.*")
             if (d / PRISTINE).is_file()} if root.is_dir() else {}
    return found[debsource.newest(list(found))] if found else None


def tree_for(patch: Path, tree: Optional[Path]) -> Path:
    if tree is not None:
        if not (tree / "scripts" / "checkpatch.pl").is_file() or not (tree / "MAINTAINERS").is_file():
            raise InputError(f"--tree {tree}: not a kernel tree (no scripts/checkpatch.pl or "
                             "MAINTAINERS)", path=str(tree))
        return tree
    version = version_of(patch)
    if version is None:
        raise InputError(f"{patch}: not a patch of patches/<version>/; give the kernel tree "
                         "to check it against with --tree DIR", path=str(patch))
    found = cached_tree(version)
    if found is None:
        raise EnvError(f"{patch}: no unpacked linux-source-{version} in the cache folder "
                       f"({paths.cache_dir() / 'src'}) to check it with; any build of "
                       f"--kernel {version} unpacks it, or give a tree with --tree DIR",
                       path=str(patch))
    return found


def options_for(profile: subsystems.Profile, tree: Path) -> tuple[str, ...]:
    opts = ["--strict", "--no-tree"]
    if not (tree / ".git").exists():
        opts += ["--ignore", "UNKNOWN_COMMIT_ID"]
    return tuple(opts + [o for o in profile.options if o not in opts])


def checkpatch(tree: Path, mail: str, name: str, options: tuple[str, ...]) -> tuple[str, ...]:
    """checkpatch.pl's lines on ``mail`` (none when it is clean)."""
    with tempfile.TemporaryDirectory(prefix="dmaharness-checkpatch-") as d:
        f = Path(d) / name
        f.write_text(mail)
        try:
            r = subprocess.run(["perl", str(tree / "scripts" / "checkpatch.pl"), *options,
                                "--no-summary", "--terse", f.name],
                               cwd=d, capture_output=True, text=True, errors="replace",
                               timeout=600)
        except (OSError, subprocess.SubprocessError) as e:
            raise EnvError(f"cannot run {tree / 'scripts' / 'checkpatch.pl'}: {e}") from None
    lines = tuple(ln for ln in (r.stdout + r.stderr).splitlines() if ln.strip())
    if r.returncode != 0 and not lines:
        lines = (f"checkpatch.pl exited with status {r.returncode}",)
    return lines


def check(patch: Path, mail: str, tree: Optional[Path] = None) -> MailCheck:
    """The composed ``mail`` of ``patch`` under its subsystems' rules."""
    where = tree_for(patch, tree)
    prof = subsystems.of_patch(mail, where, str(patch))
    opts = options_for(prof, where)
    return MailCheck(str(patch), str(where), tuple(s.name for s in prof.sections),
                     prof.documents, opts, checkpatch(where, mail, patch.name, opts),
                     stabletag.problems(stabletag.message_of(mail)))


def failure(results: list[MailCheck]) -> InputError:
    """The error that names every failing mail and what was said of it."""
    bad = [r for r in results if not r.ok]
    detail = []
    for r in bad:
        detail.append(f"{r.patch} (checkpatch.pl {' '.join(r.options)}; profiles: "
                      f"{', '.join(r.documents) or 'none'}):")
        detail += [f"  {ln}" for ln in r.checkpatch + r.stable]
    e = InputError(f"{len(bad)} of {len(results)} mail(s) fail their subsystems' checks: "
                   + ", ".join(r.patch for r in bad), detail="\n".join(detail))
    e.payload = {"checks": [r.to_json() for r in results]}
    return e
