"""Git checkouts of Debian's pristine kernel trees, as a kernel engineer's own tree.

Kept in <cache>/testrepos/ and built once per name and package version
(`git add` of a kernel tree takes ~40 s).  The work tree starts as hard
links of the read-only pristine tree (no copy of 1.5 GB), so a test also
shows that neither the harness nor git ever writes through a link.
"""

import os
import shutil
import subprocess
from pathlib import Path
from typing import Callable

from harness.kernel import kbuild
from harness import paths
from harness.progress import Progress

GIT_ID = ["-c", "user.name=dmaharness test", "-c", "user.email=test@dmaharness.invalid"]


def git(repo, *args, check=True):
    r = subprocess.run(["git", "-C", str(repo), *GIT_ID, *args], capture_output=True, text=True)
    if check and r.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed: {r.stderr[-2000:]}")
    return r.stdout.strip()


def pristine_repo(version: str, name: str,
                  more: Callable[[Path, list[str]], None] = lambda tmp, commits: None
                  ) -> tuple[Path, list[str], Path]:
    """(repo, its commits in order, the pristine tree): one commit of the pristine
    tree, then whatever ``more(tmp, commits)`` commits (appending their ids)."""
    src = kbuild.find_source(version)
    pristine = kbuild.pristine_tree(src, Progress())
    root = paths.sub("testrepos")
    repo = root / f"{name}-{src.deb_version}"
    done = repo / ".git" / "dmaharness-commits"
    with paths.locked(f"testrepo-{repo.name}"):
        if not done.is_file():
            tmp = root / f".tmp-{repo.name}-{os.getpid()}"
            shutil.rmtree(tmp, ignore_errors=True)
            shutil.rmtree(repo, ignore_errors=True)
            subprocess.run(["cp", "-al", str(pristine), str(tmp)], check=True)
            (tmp / ".dmaharness-pristine").unlink()
            git(tmp, "init", "-q")
            for k, v in (("core.compression", "0"), ("core.looseCompression", "0"),
                         # the mirror's links change every file's ctime
                         ("core.trustctime", "false"), ("gc.auto", "0")):
                git(tmp, "config", k, v)
            git(tmp, "add", "-f", "-A", ".")
            git(tmp, "commit", "-q", "-m", f"pristine linux-source-{version}")
            commits = [git(tmp, "rev-parse", "HEAD")]
            more(tmp, commits)
            (tmp / ".git" / "dmaharness-commits").write_text("\n".join(commits) + "\n")
            tmp.rename(repo)
    return repo, done.read_text().split(), pristine
