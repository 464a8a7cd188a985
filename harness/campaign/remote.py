"""Campaigns over ssh: GNU parallel's --sshlogin, after a prepare step.

`dmaharness campaign DIR --ssh HOSTS` first prepares every host (over the
same ssh command GNU parallel will use):

  1. the checkout, synced with rsync into REMOTE/checkout-<id>: the files
     git knows (tracked, and untracked ones .gitignore does not exclude);
     the host's own build products (fake-device/build ...) are left alone;
  2. `make deps-run` there, with KERNEL=X.Y for each version the jobs
     name (as root it installs; otherwise it names the apt-get line and
     fails: the host is named in the error), then the fake camera and the
     agent: what a job needs, not the test suite's packages;
  3. the campaign's own files (campaign.json, jobs.txt, the case copy)
     into REMOTE/campaigns/<campaign id>/.

REMOTE is --remote-dir, relative to the login's home folder unless
absolute (default .cache/dmaharness/remote).  The jobs then run through
GNU parallel with --sshlogin, each in the host's campaign folder with that
checkout first on PATH, and --return brings each job's results/<id>.json
back here.  Each host builds what it needs itself, through its own build
cache (the normal one: ~/.cache/dmaharness of the login).
"""

from __future__ import annotations

import hashlib
import os
import re
import shlex
import shutil
import socket
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from .. import errors, files, paths
from ..errors import EnvError, InputError
from . import folder as cfolder

DEFAULT_REMOTE_DIR = ".cache/dmaharness/remote"
SSH_DIR = "ssh"                      # in the campaign folder: the sshloginfile, the job table
SSH_OPTS = ("-o", "BatchMode=yes")   # never ask for a password: fail
# how GNU parallel stops a job (here, or on a host when its ssh goes): a
# dmaharness job stops its guest and fake devices on SIGTERM within seconds
TERMSEQ = "TERM,8000,KILL,25"


@dataclass(frozen=True)
class Host:
    """One GNU parallel sshlogin: [@groups/][ncpus/][sshcommand [options]] [user@]host."""
    login: str                       # as given (what GNU parallel gets)
    ssh: tuple[str, ...]             # the ssh command and its options
    target: str                      # [user@]host
    slots: int | None = None         # ncpus/ when given

    @property
    def name(self) -> str:
        return self.target

    def argv(self, remote_cmd: str) -> list[str]:
        """Run one shell command line on the host."""
        return [*self.ssh, *SSH_OPTS, self.target, remote_cmd]


def parse_host(login: str) -> Host:
    s = login.strip()
    if not s:
        raise InputError("--ssh: an empty host")
    if s in (":", "..", "-"):
        raise InputError(f"--ssh {s!r}: GNU parallel's special sshlogins are not taken here; "
                         "name the hosts (`campaign DIR --parallel N` runs here)")
    rest = s
    if rest.startswith("@") and "/" in rest:
        rest = rest.split("/", 1)[1]
    slots = None
    head, sep, tail = rest.partition("/")
    if sep and head.isdigit() and " " not in head:
        slots, rest = int(head), tail
    try:
        words = shlex.split(rest)
    except ValueError as e:
        raise InputError(f"--ssh {login!r}: {e}") from None
    if not words:
        raise InputError(f"--ssh {login!r}: no host")
    target = words[-1]
    ssh = tuple(words[:-1]) or ("ssh",)
    if "@" in target and ":" in target.split("@", 1)[0]:
        raise InputError(f"--ssh {login!r}: a password in the sshlogin; use a key "
                         "(ssh-copy-id) or ssh-agent")
    return Host(s, ssh, target, slots)


def parse_hosts(spec: str) -> list[Host]:
    """HOSTS: a comma-separated list of sshlogins, or a file of them (GNU
    parallel's --sshloginfile format: one a line, # comments)."""
    f = Path(spec)
    if "," not in spec and os.path.exists(f) and not f.is_dir():
        lines = [ln.strip() for ln in files.read_text(f, "--ssh").splitlines()]
        logins = [ln for ln in lines if ln and not ln.startswith("#")]
        if not logins:
            raise InputError(f"--ssh {spec}: the file names no host", path=str(f))
    else:
        logins = [x for x in spec.replace(",,", "\0").split(",")]
        logins = [x.replace("\0", ",") for x in logins if x.strip()]
    hosts = [parse_host(x) for x in logins]
    seen = set()
    for h in hosts:
        if h.login in seen:
            raise InputError(f"--ssh: {h.login!r} is named twice")
        seen.add(h.login)
    if not hosts:
        raise InputError("--ssh: no host given")
    return hosts


def checkout_id() -> str:
    """Which checkout this is, as a host's folder name: this machine and path."""
    return hashlib.sha256(f"{socket.gethostname()}:{paths.REPO}".encode()).hexdigest()[:12]


def campaign_id(folder: Path, created: str) -> str:
    h = hashlib.sha256(f"{socket.gethostname()}:{folder.resolve()}:{created}".encode())
    return f"{folder.resolve().name}-{h.hexdigest()[:12]}"


def _in_home(p: str) -> str:
    """A shell word for a remote path: relative ones are under $HOME."""
    return shlex.quote(p) if p.startswith("/") else f'"$HOME"/{shlex.quote(p)}'


@dataclass(frozen=True)
class Layout:
    """Where a campaign lives on the hosts."""
    remote_dir: str
    checkout: str                    # relative to the login's home unless absolute
    campaign: str

    @classmethod
    def of(cls, remote_dir: str, folder: Path, created: str) -> "Layout":
        r = remote_dir.rstrip("/") or "/"
        if r.startswith("~/"):
            r = r[2:]
        return cls(r, f"{r}/checkout-{checkout_id()}",
                   f"{r}/campaigns/{campaign_id(folder, created)}")


# --- prepare ------------------------------------------------------------------

def _checkout_files() -> bytes:
    """NUL-separated paths of the checkout that travel: what git knows."""
    if not shutil.which("git") or not (paths.REPO / ".git").exists():
        raise EnvError(f"{paths.REPO} is not a git checkout: --ssh sends the files git knows "
                       "(tracked, and untracked ones not ignored)")
    r = subprocess.run(["git", "-C", str(paths.REPO), "ls-files", "-z", "--cached", "--others",
                        "--exclude-standard"], capture_output=True)
    if r.returncode:
        raise EnvError(f"git ls-files in {paths.REPO}: {r.stderr.decode(errors='replace').strip()}")
    # a file deleted but not yet committed is listed and absent: skip it
    names = [n for n in r.stdout.split(b"\0") if n and (paths.REPO / os.fsdecode(n)).exists()]
    return b"\0".join(names) + b"\0"


def _rsync_ssh(h: Host) -> str:
    return shlex.join([*h.ssh, *SSH_OPTS])


class PrepareError(EnvError):
    pass


def _run(h: Host, argv: list[str], what: str, timeout: float, input: bytes | None = None) -> str:
    try:
        r = subprocess.run(argv, input=input, capture_output=True, timeout=timeout,
                           start_new_session=True)
    except subprocess.TimeoutExpired:
        raise PrepareError(f"{h.name}: {what} took more than {timeout:.0f} s") from None
    except FileNotFoundError as e:
        raise EnvError(f"{e.filename} is not installed (`make deps`)") from None
    out = (r.stdout + r.stderr).decode(errors="replace")
    if r.returncode:
        tail = "\n    ".join(out.strip().splitlines()[-8:])
        hint = (" (ssh could not log in: the host needs your key, e.g. ssh-copy-id)"
                if r.returncode == 255 else "")
        raise PrepareError(f"{h.name}: {what} failed (exit {r.returncode}){hint}:\n    {tail}")
    return out


def deps_command(kernels: Sequence[str] = ()) -> str:
    """What a worker installs and builds: `make run`'s package set (with the
    source package of each X.Y the jobs name: 6.12's is not in it) and the
    C tools a job uses, never the test-only packages (Chromium, Slurm, ...)."""
    sets = [f"make -s deps-run KERNEL={k}" for k in sorted(set(kernels))
            if re.fullmatch(r"\d{1,2}\.\d{1,3}", k)] or ["make -s deps-run"]
    return " && ".join(sets + ["make -s fake-device agent"])


def prepare_host(h: Host, lay: Layout, folder: Path, progress,
                 kernels: Sequence[str] = ()) -> float:
    """Checkout, make deps (the run set), C tools and the campaign's files on one host."""
    t0 = time.monotonic()
    ck, cp = _in_home(lay.checkout), _in_home(lay.campaign)
    _run(h, h.argv(f"mkdir -p {ck} {cp}/results && command -v rsync >/dev/null && "
                   "command -v make >/dev/null || { echo 'rsync and make are needed on the host "
                   "(apt-get install rsync make)' >&2; exit 3; }"),
         "logging in", 120)
    progress.note(f"[prepare] {h.name}: syncing the checkout to {lay.checkout}")
    rsync = ["rsync", "-a", "--from0", "--files-from=-", "-e", _rsync_ssh(h)]
    _run(h, rsync + [f"{paths.REPO}/", f"{h.target}:{lay.checkout}/"], "syncing the checkout", 1800,
         input=_checkout_files())
    progress.note(f"[prepare] {h.name}: make deps-run, the fake camera and the agent")
    _run(h, h.argv(f"cd {ck} && {deps_command(kernels)}"), "make deps-run / C tools", 3600)
    _send_campaign(h, lay, folder)
    return time.monotonic() - t0


def _send_campaign(h: Host, lay: Layout, folder: Path) -> None:
    """The campaign's files (campaign.json holds every job's arguments) to one host."""
    files = [f for f in ("campaign.json", "jobs.txt", "case") if (folder / f).exists()]
    _run(h, ["rsync", "-a", "--delete", "-e", _rsync_ssh(h), *[str(folder / f) for f in files],
             f"{h.target}:{lay.campaign}/"], "copying the campaign", 600)


def send_campaign(hosts: list[Host], lay: Layout, folder: Path) -> None:
    """The campaign's files to every host (prepared before): jobs added since travel."""
    for h in hosts:
        _send_campaign(h, lay, folder)


def prepare(hosts: list[Host], lay: Layout, folder: Path, progress,
            kernels: Sequence[str] = ()) -> dict[str, float]:
    """Prepare every host at once; the first failure (by host order) is raised
    after all have finished, so no half-done transfer is left running."""
    if not shutil.which("rsync"):
        raise EnvError("rsync is not installed (`make deps`): --ssh sends the checkout and "
                       "GNU parallel brings results back with it")
    took: dict[str, float] = {}
    failed: dict[str, BaseException] = {}

    def one(h: Host) -> None:
        try:
            took[h.name] = prepare_host(h, lay, folder, progress, kernels)
        except BaseException as e:          # noqa: BLE001 (re-raised below)
            failed[h.name] = e

    threads = [threading.Thread(target=one, args=(h,), daemon=True) for h in hosts]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for h in hosts:
        if h.name in failed:
            raise failed[h.name]
    for h in hosts:
        progress.note(f"[prepare] {h.name}: ready in {took[h.name]:.0f} s")
    return took


# --- run ----------------------------------------------------------------------

def job_table(folder: Path, jobs) -> Path:
    """jobs.txt as two tab-separated columns, id and command: --return needs the id."""
    f = folder / SSH_DIR / "jobs.tsv"
    lines = []
    for j in jobs:      # ids are safe names, lines `dmaharness job ID`: no tab, no newline
        lines.append(f"{j.id}\t{j.line()}\n")
    cfolder.write_text(folder, f"{SSH_DIR}/jobs.tsv", "".join(lines))
    return f


def login_file(folder: Path, hosts: list[Host]) -> Path:
    f = folder / SSH_DIR / "sshloginfile"
    cfolder.write_text(folder, f"{SSH_DIR}/sshloginfile", "".join(h.login + "\n" for h in hosts))
    return f


def parallel_command(folder: Path, hosts: list[Host], lay: Layout, jobs, per_host: int | None
                     ) -> list[str]:
    """GNU parallel over the hosts: same joblog and --resume-failed as a local
    run (Seq is the line of jobs.txt), each job in the host's campaign folder
    with its checkout first on PATH; --return fetches results/<id>.json."""
    if not shutil.which("parallel"):
        raise errors.EnvError("GNU parallel is not installed (Debian's parallel package; "
                              "`make deps` installs it)")
    table = job_table(folder, jobs)
    logins = login_file(folder, hosts)
    # rsync (of --return) uses the login's own ssh command; BatchMode for all
    cmd = ["parallel", "--will-cite", "--sshloginfile", str(logins.relative_to(folder)),
           "--ssh", shlex.join(["ssh", *SSH_OPTS]),
           "--joblog", "joblog", "--resume-failed", "--halt", "never", "--termseq", TERMSEQ,
           "--line-buffer",
           "--colsep", "\t", "--workdir", lay.campaign, "--return", "results/{1}.json",
           "-a", str(table.relative_to(folder))]
    if per_host:
        cmd += ["--jobs", str(per_host)]
    cmd += [f"PATH={_in_home(lay.checkout)}:\"$PATH\" sh -c {{2}}"]
    return cmd
