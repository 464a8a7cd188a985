"""A private one-node Slurm cluster on localhost, for tests.

    with OneNodeSlurm(workdir) as cluster:
        env = dict(os.environ, **cluster.env)     # SLURM_CONF (whose AuthInfo names our munged)
        subprocess.run(["sbatch", "--partition", cluster.partition, ...], env=env)
        cluster.run("squeue")                     # the same, /usr/sbin on PATH, raising on failure

Everything lives in `workdir`: a munged of our own (its own generated key,
socket, pid and seed files), slurmctld and slurmd (a generated slurm.conf,
state, spool, logs, pids), on free TCP ports picked at run time.  Nothing
of the machine's own Slurm or munge (/etc/slurm, /etc/munge, /run/munge,
their services) is read, written or started.

Every daemon runs in the foreground (-F, -D) as our child, in a session of
its own that dies with us (PR_SET_PDEATHSIG).  On the way out -- a normal
end, an exception in the body or a startup that failed half-way -- every
job of the cluster is cancelled, every daemon gets SIGTERM then SIGKILL,
whatever is still left that carries the cluster's SLURM_CONF in its
environment (slurmstepd, the jobs' processes) gets SIGKILL, and it is
checked, by pid, that none of them is left.

Debian 12: slurmctld slurmd slurm-client munge (22.05).  Root only: slurmd
runs jobs as their submitter, so it must be root; anything else is a
unittest.SkipTest that says why.
"""

from __future__ import annotations

import os
import secrets
import shutil
import signal
import socket
import stat
import subprocess
import time
import unittest
from pathlib import Path

from harness import proc

BINARIES = ("munged", "mungekey", "slurmctld", "slurmd", "sinfo", "sbatch", "squeue",
            "scancel", "scontrol")
NODE = "dmah1"
PARTITION = "dmah"
UNIX_PATH_MAX = 107             # sun_path, less the terminating NUL
READY_TIMEOUT = 60.0


def _free_port() -> int:
    """A TCP port nothing listens on now (the kernel's pick; a tiny race)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _tail(path: Path, n: int = 25) -> str:
    try:
        lines = path.read_text(errors="replace").splitlines()
    except OSError as e:
        return f"    ({path}: {e.strerror})"
    return "\n".join("    " + ln for ln in lines[-n:]) or f"    ({path} is empty)"


def _alive(pid: int) -> bool:
    """The pid runs and is not a zombie."""
    try:
        st = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return st.rsplit(")", 1)[1].split()[0] != "Z"


def skip_reason() -> str | None:
    """Why a private cluster cannot run here, or None."""
    if os.geteuid() != 0:
        return ("a private Slurm cluster needs root (slurmd starts every job as its "
                f"submitter); this runs as uid {os.geteuid()}")
    missing = [b for b in BINARIES if not shutil.which(b, path=os.environ.get("PATH", "")
                                                       + ":/usr/sbin:/sbin")]
    if missing:
        return (f"Slurm/munge binaries missing: {' '.join(missing)} (Debian 12: "
                "apt-get install --no-install-recommends slurmctld slurmd slurm-client munge)")
    return None


class SlurmClusterError(RuntimeError):
    pass


class OneNodeSlurm:
    """Context manager: start the cluster, yield self (.env, .partition), stop it."""

    def __init__(self, workdir: Path, cpus: int | None = None, *,
                 timeout: float = READY_TIMEOUT):
        self.workdir = Path(workdir).resolve()
        self.cpus = cpus or os.cpu_count() or 1
        self.timeout = timeout
        self.partition = PARTITION
        self.node = NODE
        self.cluster_name = "dmah" + secrets.token_hex(3)
        self.conf = self.workdir / "slurm" / "slurm.conf"
        self.munge_socket = self.workdir / "munge" / "run" / "munge.socket"
        # a daemon in the foreground writes to stderr too (everything, for
        # munged; what comes before its log file is open, for Slurm's)
        self.stderr = {"munged": self.workdir / "munge" / "munged.log",
                       "slurmctld": self.workdir / "slurm" / "log" / "slurmctld.stderr",
                       "slurmd": self.workdir / "slurm" / "log" / "slurmd.stderr"}
        self.logs = {"munged": self.stderr["munged"],
                     "slurmctld": self.workdir / "slurm" / "log" / "slurmctld.log",
                     "slurmd": self.workdir / "slurm" / "log" / "slurmd.log"}
        self.procs: dict[str, subprocess.Popen] = {}
        self.pids: dict[str, int] = {}          # every daemon ever started, by name
        self.left: list[int] = []               # pids the last stop found and killed
        self.env: dict[str, str] = {}
        self._sbin = ":".join(d for d in ("/usr/sbin", "/sbin")
                              if d not in os.environ.get("PATH", "").split(":"))

    # --- the environment a client needs -------------------------------------

    def client_env(self) -> dict[str, str]:
        """os.environ with .env added: for sbatch, squeue, scancel, sinfo."""
        env = dict(os.environ, **self.env)
        if self._sbin:
            env["PATH"] = env.get("PATH", "") + ":" + self._sbin
        return env

    def run(self, *cmd: str, timeout: float = 30, check: bool = True) -> subprocess.CompletedProcess:
        r = subprocess.run(list(cmd), env=self.client_env(), capture_output=True, text=True,
                           timeout=timeout, stdin=subprocess.DEVNULL)
        if check and r.returncode != 0:
            raise SlurmClusterError(f"{' '.join(cmd)}: exit {r.returncode}: "
                                    f"{(r.stderr or r.stdout).strip()}")
        return r

    # --- start ------------------------------------------------------------------

    def __enter__(self) -> "OneNodeSlurm":
        why = skip_reason()
        if why:
            raise unittest.SkipTest(why)
        try:
            self._start()
        except BaseException:
            self._stop()
            raise
        return self

    def __exit__(self, *exc) -> None:
        self._stop()

    def _prepare(self) -> None:
        w = self.workdir
        w.mkdir(parents=True, exist_ok=True)
        if len(str(self.munge_socket)) > UNIX_PATH_MAX:
            raise SlurmClusterError(f"workdir {w} is too deep: the munge socket path "
                                    f"{self.munge_socket} is longer than {UNIX_PATH_MAX} bytes")
        # munged wants execute permission for all on every folder above its
        # socket (clients of any uid must reach it).  The workdir is ours to
        # open; a folder above it (mkdtemp's are 0700) is not: munged is then
        # --force'd past that check, which only matters to clients that are
        # not root, and every client of this cluster is root
        w.chmod(w.stat().st_mode | 0o111)
        self.munge_force = [str(d) for d in w.parents if not d.stat().st_mode & stat.S_IXOTH]
        for d, mode in (("munge", 0o755), ("munge/etc", 0o700), ("munge/run", 0o755),
                        ("munge/lib", 0o700), ("slurm", 0o755), ("slurm/state", 0o700),
                        ("slurm/spool", 0o755), ("slurm/log", 0o755), ("slurm/run", 0o755)):
            (w / d).mkdir(exist_ok=True)
            (w / d).chmod(mode)
        key = w / "munge" / "etc" / "munge.key"
        if not key.exists():
            r = subprocess.run([self._which("mungekey"), "--create", "--bits", "1024",
                                "--keyfile", str(key)], capture_output=True, text=True)
            if r.returncode != 0:
                raise SlurmClusterError(f"mungekey failed: {r.stderr.strip()}")
        self.ctld_port = _free_port()
        self.slurmd_port = _free_port()
        while self.slurmd_port == self.ctld_port:
            self.slurmd_port = _free_port()
        self.conf.write_text(self.slurm_conf())
        self.env = {"SLURM_CONF": str(self.conf),
                    # the cluster's tag: every process of ours carries it (daemons,
                    # slurmstepd, jobs submitted with --export=ALL) -- see _leftovers
                    "DMAH_SLURM_CLUSTER": str(w)}

    def slurm_conf(self) -> str:
        w = self.workdir / "slurm"
        host = socket.gethostname().split(".")[0] or "localhost"
        return f"""\
# a private one-node cluster for dmaharness' tests (tests/integration/slurmcluster.py)
ClusterName={self.cluster_name}
SlurmctldHost={host}(127.0.0.1)
SlurmctldPort={self.ctld_port}
SlurmdPort={self.slurmd_port}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={self.munge_socket}
StateSaveLocation={w}/state
SlurmdSpoolDir={w}/spool
SlurmctldPidFile={w}/run/slurmctld.pid
SlurmdPidFile={w}/run/slurmd.pid
SlurmctldLogFile={self.logs['slurmctld']}
SlurmdLogFile={self.logs['slurmd']}
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SwitchType=switch/none
MpiDefault=none
MailProg=/bin/true
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SlurmdParameters=config_overrides
ReturnToService=2
KillWait=5
InactiveLimit=0
SlurmdTimeout=60
MaxArraySize=10001
NodeName={self.node} NodeAddr=127.0.0.1 NodeHostname={host} CPUs={self.cpus} State=UNKNOWN
PartitionName={self.partition} Nodes={self.node} Default=YES MaxTime=INFINITE State=UP
"""

    def _which(self, name: str) -> str:
        return shutil.which(name, path=os.environ.get("PATH", "") + ":/usr/sbin:/sbin") or name

    def _spawn(self, name: str, cmd: list[str]) -> None:
        with open(self.stderr[name], "ab") as out:
            env = dict(self.client_env(), DMAH_SLURM_CLUSTER=str(self.workdir))
            p = proc.spawn(cmd, env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=out,
                           cwd=self.workdir)
        self.procs[name] = p
        self.pids[name] = p.pid

    def _check_running(self, what: str) -> None:
        for name, p in self.procs.items():
            if p.poll() is not None:
                raise SlurmClusterError(f"{name} exited ({p.returncode}) while {what}\n"
                                        + self.log_tails())

    def _until(self, what: str, ready, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        last = ""
        while True:
            self._check_running(f"waiting for {what}")
            ok, last = ready()
            if ok:
                return
            if time.monotonic() > deadline:
                raise SlurmClusterError(f"timed out after {timeout:.0f}s waiting for {what} "
                                        f"(last seen: {last or 'nothing'})\n" + self.log_tails())
            time.sleep(0.25)

    def _start(self) -> None:
        self._prepare()
        m = self.workdir / "munge"
        self._spawn("munged", [self._which("munged"), "--foreground",
                               f"--socket={self.munge_socket}",
                               f"--key-file={m / 'etc' / 'munge.key'}",
                               f"--pid-file={m / 'run' / 'munged.pid'}",
                               f"--seed-file={m / 'lib' / 'munged.seed'}"]
                    + (["--force"] if self.munge_force else []))
        self._until("munged's socket", lambda: (self.munge_socket.is_socket(), ""), 20)
        # -c: no state from an earlier run; -i: ignore a stale state file's mismatches
        self._spawn("slurmctld", [self._which("slurmctld"), "-D", "-c", "-i"])
        self._until("slurmctld to answer", self._ping, self.timeout)
        self._spawn("slurmd", [self._which("slurmd"), "-D", "-N", self.node])
        self._until(f"node {self.node} to be idle in partition {self.partition}",
                    self._node_idle, self.timeout)

    def _ping(self) -> tuple[bool, str]:
        r = self.run("scontrol", "ping", check=False, timeout=15)
        out = (r.stdout + r.stderr).strip()
        return r.returncode == 0 and " is UP" in out, out

    def _node_idle(self) -> tuple[bool, str]:
        r = self.run("sinfo", "-h", "-N", "-p", self.partition, "-o", "%N %T",
                     check=False, timeout=15)
        out = (r.stdout + r.stderr).strip()
        return r.returncode == 0 and out.split() == [self.node, "idle"], out

    def log_tails(self) -> str:
        """The last lines of each started daemon's log (its stderr until it has one)."""
        out = []
        for name in self.pids:
            path = self.logs[name]
            if not (path.is_file() and path.stat().st_size):
                path = self.stderr[name]
            out.append(f"  {name} ({path}):\n{_tail(path)}")
        return "\n".join(out) or "  (no daemon was started)"

    # --- stop -------------------------------------------------------------------

    def _leftovers(self) -> list[int]:
        """Processes of this cluster: the ones whose environment names our
        SLURM_CONF or carries our tag (never this process)."""
        marks = {f"SLURM_CONF={self.conf}".encode(),
                 f"DMAH_SLURM_CLUSTER={self.workdir}".encode()}
        me = os.getpid()
        out = []
        for d in Path("/proc").iterdir():
            if not d.name.isdigit() or int(d.name) == me:
                continue
            try:
                env = (d / "environ").read_bytes().split(b"\0")
            except OSError:
                continue
            if marks.intersection(env) and _alive(int(d.name)):
                out.append(int(d.name))
        return out

    def _cancel_jobs(self) -> None:
        p = self.procs.get("slurmctld")
        if not p or p.poll() is not None or not self.procs.get("slurmd"):
            return
        try:
            self.run("scancel", f"--partition={self.partition}", check=False, timeout=15)
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline:
                r = self.run("squeue", "-h", "-p", self.partition, "-o", "%i %T",
                             check=False, timeout=15)
                if r.returncode != 0 or not r.stdout.strip():
                    return
                time.sleep(0.5)
        except (subprocess.TimeoutExpired, OSError):
            pass

    def _stop(self) -> None:
        """Cancel the jobs, stop the daemons, kill what is left; raise if any survives."""
        if not self.procs:
            return
        self._cancel_jobs()
        for name in ("slurmd", "slurmctld", "munged"):
            p = self.procs.get(name)
            if p is not None:
                proc.stop(p, grace=15)
        # slurmstepd and the jobs' processes outlive slurmd by design
        self.left = []
        for _ in range(3):
            pids = self._leftovers()
            if not pids:
                break
            self.left += pids
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            time.sleep(0.3)
        survivors = [f"{n} (pid {pid})" for n, pid in self.pids.items() if _alive(pid)]
        survivors += [f"pid {pid}" for pid in self._leftovers()]
        self.procs.clear()
        if survivors:
            raise SlurmClusterError("the private Slurm cluster left processes running: "
                                    + ", ".join(survivors))
