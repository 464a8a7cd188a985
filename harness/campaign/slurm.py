"""Campaigns under Slurm: one array task per job line.

`submit` hands a campaign's pending jobs to the cluster as one job array
(`sbatch --array`): array task N runs line N of jobs.txt -- the same
number GNU parallel's joblog calls Seq -- in the campaign folder, which
must be a folder every node sees at the same path (results land there
directly, nothing is copied back), with the checkout on PATH (every node
has it at the same path too).  Which cluster, and how, is the user's
environment: SLURM_CONF, the partition, `extra` sbatch options
(--time, --mem, --account ...).

Every task leaves its attempt in slurm/attempt-<Seq>: ONE line in GNU
parallel's joblog format (Seq Host Starttime JobRuntime Send Receive
Exitval Signal Command, tab-separated), written whole (tmp + mv), so that
a job that failed or was killed is explained as `campaign --parallel` explains
it.  The line is written when the task starts, with Exitval -1 (started,
no end recorded: still running, or SIGKILLed, or its node was lost), and
again when the job line ends, with its exit status; a status of 129 to
192 is a signal's (the shell's 128+N), and its Signal column says which.  The
task's own output is slurm/<array job id>_<task>.out.

`wait` follows the array in squeue until none of its tasks is left, and
cancels it (scancel) when it is interrupted or fails: nothing is left
running behind us.  `attempts` reads the attempt files in the shape
campaign.joblog() gives.
"""

from __future__ import annotations

import math
import os
import re
import shlex
import shutil
import subprocess
import time
from pathlib import Path
from typing import Iterable

from .. import errors
from ..progress import fmt_duration
from . import folder as cfolder

SLURM_DIR = "slurm"                 # in the campaign folder: the script, attempts, outputs
SCRIPT = "array.sh"
ATTEMPT = "attempt-"
JOBS_FILE = "jobs.txt"              # campaign.JOBS_FILE (this module does not import campaign)

# squeue's states for a job that is over; any other state is a task still to wait for
DONE_STATES = frozenset({"COMPLETED", "CANCELLED", "FAILED", "TIMEOUT", "NODE_FAIL",
                         "PREEMPTED", "BOOT_FAIL", "DEADLINE", "OUT_OF_MEMORY", "REVOKED"})
CANCEL_GRACE = 45.0                 # seconds to see cancelled tasks go (Slurm's KillWait is 30)
SQUEUE_PATIENCE = 300.0             # seconds of squeue failing in a row before giving up
COMMAND_TIMEOUT = 120.0


def array_ranges(seqs: Iterable[int]) -> str:
    """sbatch's --array list for these task ids, runs compacted: 1-3,5."""
    ids = sorted(set(int(s) for s in seqs))
    out = []
    i = 0
    while i < len(ids):
        j = i
        while j + 1 < len(ids) and ids[j + 1] == ids[j] + 1:
            j += 1
        out.append(str(ids[i]) if i == j else f"{ids[i]}-{ids[j]}")
        i = j + 1
    return ",".join(out)


def array_script(campaign_folder: Path, repo: Path) -> str:
    """The sbatch batch script: task $SLURM_ARRAY_TASK_ID runs that line of
    jobs.txt with `sh -c`, records its attempt and exits with the job's status."""
    # absolute as the user spells them, symlinks kept: a node may mount the
    # shared folder elsewhere than where this machine's links lead
    folder = shlex.quote(os.path.abspath(campaign_folder))
    repo_q = shlex.quote(os.path.abspath(repo))
    return f"""\
#!/bin/sh
# dmaharness campaign under Slurm: array task N runs line N of jobs.txt
# (written by harness/campaign/slurm.py; sbatch keeps its own copy at submission)
folder={folder}
repo={repo_q}
seq=${{SLURM_ARRAY_TASK_ID:-}}
case $seq in
''|*[!0-9]*)
	echo "dmaharness: SLURM_ARRAY_TASK_ID is '$seq', not a task number: submit this with sbatch --array" >&2
	exit 2;;
esac
cd "$folder" || exit 3
PATH=$repo${{PATH:+:$PATH}}
export PATH
mkdir -p {SLURM_DIR} || exit 3
host=$(uname -n)
now() {{ awk -v t="$(date +%s.%N)" 'BEGIN {{ printf "%.3f", t }}'; }}
start=$(now)
line=$(sed -n "${{seq}}{{p;q;}}" {JOBS_FILE})
# the attempt, one joblog line (Seq Host Starttime JobRuntime Send Receive
# Exitval Signal Command), replaced whole: record EXITVAL SIGNAL RUNTIME
record() {{
	tmp={SLURM_DIR}/.{ATTEMPT}$seq.${{SLURM_JOB_ID:-0}}.$$
	printf '%s\\t%s\\t%s\\t%s\\t0\\t0\\t%s\\t%s\\t%s\\n' \\
		"$seq" "$host" "$start" "$3" "$1" "$2" "$line" >"$tmp" &&
		mv -f "$tmp" {SLURM_DIR}/{ATTEMPT}$seq
}}
if [ -z "$line" ]; then
	echo "dmaharness: {JOBS_FILE} of $folder has no line $seq" >&2
	record 2 0 0.000
	exit 2
fi
record -1 0 0.000
# Slurm's SIGTERM (scancel, time limit) reaches the job too: wait for it to
# end, then record how it ended
trap : HUP INT TERM
sh -c "$line"
status=$?
signal=0
if [ "$status" -gt 128 ] && [ "$status" -le 192 ]; then
	signal=$((status - 128))
fi
end=$(now)
record "$status" "$signal" "$(awk -v a="$start" -v b="$end" 'BEGIN {{ printf "%.3f", b - a }}')"
exit "$status"
"""


def _sbatch_path(folder: Path) -> str:
    # sbatch's --output takes %-patterns; a % of the folder's own is %%
    return str(folder).replace("%", "%%")


def submit(folder: Path, seqs: list[int], partition: str | None, repo: Path,
           extra: Iterable[str] = ()) -> str:
    """Submit the jobs.txt lines `seqs` (from 1) of the campaign in `folder`
    as one array job; its id.

    One task asks for one CPU (--cpus-per-task=1): a job boots one QEMU
    guest with a single TCG vCPU, one busy host thread, with the harness and
    the fake device mostly asleep beside it; more CPUs would only idle, and
    one CPU a task lets Slurm pack as many guests on a node as it has cores,
    as `campaign --parallel N --pin` does here.  `extra` sbatch options come
    last, so they win (--cpus-per-task=2, --mem=2G, --time=1:00:00 ...).
    """
    folder = Path(os.path.abspath(folder))
    seqs = sorted(set(seqs))
    if not seqs:
        raise errors.InputError("slurm: no job to submit")
    lines = cfolder.read_text(folder, JOBS_FILE, "job list", 64 << 20).splitlines()
    bad = [s for s in seqs if not 1 <= s <= len(lines) or not lines[s - 1].strip()]
    if bad:
        raise errors.InputError(f"slurm: {JOBS_FILE} of {folder} has {len(lines)} lines; "
                                f"no job at {array_ranges(bad)}", path=str(folder / JOBS_FILE))
    sbatch = shutil.which("sbatch")
    if not sbatch:
        raise errors.EnvError("sbatch is not on PATH: --slurm needs Slurm's client commands "
                              "(Debian's slurm-client) and a cluster they reach")
    cfolder.mkdir(folder, SLURM_DIR)        # a real folder: the tasks' output goes there
    cfolder.write_text(folder, f"{SLURM_DIR}/{SCRIPT}", array_script(folder, repo), mode=0o755)
    script = folder / SLURM_DIR / SCRIPT
    cmd = [sbatch, "--parsable", f"--array={array_ranges(seqs)}",
           f"--job-name=dmaharness-{folder.name}",
           f"--output={_sbatch_path(folder / SLURM_DIR)}/%A_%a.out",
           f"--chdir={folder}"]
    if partition:
        cmd.append(f"--partition={partition}")
    cmd += ["--ntasks=1", "--cpus-per-task=1", "--export=ALL", *extra, str(script)]
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, stdin=subprocess.DEVNULL,
                           timeout=COMMAND_TIMEOUT)
    except subprocess.TimeoutExpired:
        raise errors.EnvError(f"sbatch did not answer in {COMMAND_TIMEOUT:.0f}s "
                              "(is slurmctld reachable?)", detail=shlex.join(cmd)) from None
    words = (r.stderr.strip() or r.stdout.strip() or "no output")
    if r.returncode != 0:
        raise errors.EnvError(f"sbatch failed (exit {r.returncode}): {words}",
                              detail=shlex.join(cmd))
    out = [ln for ln in r.stdout.splitlines() if ln.strip()]
    job_id = out[-1].split(";")[0].strip() if out else ""
    if not job_id.isdigit():
        raise errors.EnvError(f"sbatch printed no job id: {words}", detail=shlex.join(cmd))
    return job_id


# --- wait ---------------------------------------------------------------------

def _count(task: str) -> int:
    """How many array tasks squeue's %i names: 12_4 is one, 12_[1-3,7%2] four."""
    m = re.search(r"_\[([^\]]*)\]", task)
    if not m:
        return 1
    n = 0
    for part in m.group(1).split("%")[0].split(","):
        a, _, b = part.partition("-")
        step = 1
        if ":" in b:
            b, _, s = b.partition(":")
            step = int(s) if s.isdigit() and int(s) > 0 else 1
        if a.isdigit() and b.isdigit():
            n += (int(b) - int(a)) // step + 1
        elif a.isdigit():
            n += 1
    return n


def queue(job_id: str) -> dict[str, int] | None:
    """The array's tasks that are not over, counted by squeue state; {} when
    none is left, None when squeue failed."""
    try:
        r = subprocess.run(["squeue", "-h", "-j", job_id, "-o", "%i %T"], capture_output=True,
                           text=True, stdin=subprocess.DEVNULL, timeout=COMMAND_TIMEOUT)
    except (subprocess.TimeoutExpired, OSError):
        return None
    if r.returncode != 0:
        # a job slurmctld has already forgotten (older than MinJobAge)
        return {} if "invalid job id" in r.stderr.lower() else None
    out: dict[str, int] = {}
    for ln in r.stdout.splitlines():
        w = ln.split()
        if len(w) >= 2 and w[1] not in DONE_STATES:
            out[w[1]] = out.get(w[1], 0) + _count(w[0])
    return out


def _describe(states: dict[str, int]) -> str:
    order = ["RUNNING", "PENDING"]
    keys = order + sorted(k for k in states if k not in order)
    return ", ".join(f"{states[k]} {k.lower()}" for k in keys if states.get(k))


def wait(job_id: str, progress, poll: float = 2.0, *, total: int | None = None) -> None:
    """Follow the array in squeue until none of its tasks is left.  On any
    exception or interruption (Ctrl-C) it is cancelled first: scancel, and a
    while to see its tasks go."""
    try:
        _follow(job_id, progress, poll, total)
    except BaseException:
        cancel(job_id, progress)
        raise


def _follow(job_id: str, progress, poll: float, total: int | None) -> None:
    if not shutil.which("squeue"):
        raise errors.EnvError("squeue is not on PATH (Debian's slurm-client)")
    t0 = time.monotonic()
    failing_since = None
    while True:
        st = queue(job_id)
        now = time.monotonic()
        if st is None:
            failing_since = failing_since or now
            if now - failing_since > SQUEUE_PATIENCE:
                raise errors.EnvError(f"squeue has failed for {SQUEUE_PATIENCE:.0f}s about "
                                      f"job {job_id}; it may still run (scancel {job_id})")
        else:
            failing_since = None
            if not st:
                progress.update(f"[slurm] job {job_id}: no task left "
                                f"({fmt_duration(now - t0)})", force=True)
                progress.end_line()
                return
            left = sum(st.values())
            done = f"{total - left} of {total} over, " if total else ""
            progress.update(f"[slurm] job {job_id}: {done}{_describe(st)} "
                            f"({fmt_duration(now - t0)})")
        time.sleep(poll)


def cancel(job_id: str, progress, grace: float = CANCEL_GRACE) -> bool:
    """scancel the array and wait up to `grace` seconds for its tasks to go;
    whether they did.  Never raises (a second Ctrl-C ends the waiting)."""
    try:
        progress.note(f"[slurm] cancelling job {job_id} (scancel)")
        r = subprocess.run(["scancel", job_id], capture_output=True, text=True,
                           stdin=subprocess.DEVNULL, timeout=COMMAND_TIMEOUT)
        if r.returncode != 0:
            progress.note(f"[slurm] scancel {job_id} failed (exit {r.returncode}): "
                          f"{r.stderr.strip()}")
            return False
        deadline = time.monotonic() + grace
        while time.monotonic() < deadline:
            if queue(job_id) == {}:
                return True
            time.sleep(1.0)
        progress.note(f"[slurm] job {job_id} still has tasks {grace:.0f}s after scancel")
        return False
    except (OSError, subprocess.TimeoutExpired) as e:
        progress.note(f"[slurm] scancel {job_id} failed ({e}); cancel it by hand")
        return False
    except KeyboardInterrupt:
        return False


# --- attempts -----------------------------------------------------------------

def attempts(folder: Path) -> dict[int, dict]:
    """The tasks' attempt files, by Seq, as campaign.joblog() gives them:
    {"host", "start", "runtime", "exit", "signal", "command"}."""
    out: dict[int, dict] = {}
    names = [n for n in cfolder.listdir(folder, SLURM_DIR)
             if re.fullmatch(re.escape(ATTEMPT) + r"[0-9]{1,9}", n)]
    for name in names[:1_000_000]:
        ln = cfolder.read_text(folder, f"{SLURM_DIR}/{name}", "Slurm attempt file",
                               MAX_LINE).split("\n", 1)[0]
        a = attempt_line(ln)
        if a is not None:
            out[a.pop("seq")] = a
    return out


MAX_LINE = 1 << 16          # a joblog line or an attempt file longer than this is garbage
_NUMBER = re.compile(r"-?[0-9]{1,12}")
_HOST = re.compile(r"[A-Za-z0-9@._:%\[\]/ -]{0,255}")


def _seconds(text: str) -> str:
    """A time (epoch seconds, a runtime) as the line has it, when it is one."""
    try:
        x = float(text)
    except ValueError:
        return ""
    return text.strip() if math.isfinite(x) and 0 <= x < 1e11 else ""


def attempt_line(ln: str) -> dict | None:
    """A line of GNU parallel's joblog or of a task's attempt file (Seq,
    Host, Starttime, JobRuntime, Send, Receive, Exitval, Signal, Command),
    each field checked: {"seq", "host", "start", "runtime", "exit", "signal",
    "command"}, or None for a line that is not one (a header, garbage)."""
    if len(ln) > MAX_LINE:
        return None
    w = ln.split("\t")
    if len(w) < 9 or not re.fullmatch(r"[0-9]{1,9}", w[0].strip()) or int(w[0]) < 1:
        return None
    return {"seq": int(w[0]), "host": w[1] if _HOST.fullmatch(w[1]) else "?",
            "start": _seconds(w[2]), "runtime": _seconds(w[3]),
            "exit": w[6] if _NUMBER.fullmatch(w[6]) else "?",
            "signal": w[7] if _NUMBER.fullmatch(w[7]) else "?",
            "command": "\t".join(w[8:])}
