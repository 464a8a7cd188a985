"""Slurm: the array script run for real with sh, the --array lists, and
submit/wait against fake sbatch, squeue and scancel on PATH."""

import os
import stat
import subprocess
import tempfile
import time
import unittest
from pathlib import Path
from unittest import mock

from harness.campaign import campaign, slurm
from harness import errors

JOBS = [
    """echo '{"ok": true}' > results/x.json""",                         # 1
    "echo going wrong >&2; exit 3",                                      # 2
    "fake-tool > results/tool.txt; pwd > results/pwd.txt",               # 3
    "kill -TERM $$",                                                     # 4
    "cat slurm/attempt-5 > results/during.txt; sleep 1",                 # 5
]


class Recorder:
    """A harness.progress.Progress stand-in that keeps what it is told."""

    quiet = True

    def __init__(self, on_update=None):
        self.updates, self.notes = [], []
        self.on_update = on_update

    def update(self, message, *, force=False):
        self.updates.append(message)
        if self.on_update:
            self.on_update(message)

    def note(self, message):
        self.notes.append(message)

    def end_line(self):
        pass


def executable(path: Path, text: str) -> Path:
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


class Base(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.root = Path(self.tmp.name)
        self.folder = self.root / "camp %1"
        (self.folder / "results").mkdir(parents=True)
        (self.folder / "jobs.txt").write_text("".join(j + "\n" for j in JOBS))
        self.repo = self.root / "repo"
        self.repo.mkdir()
        executable(self.repo / "fake-tool", "#!/bin/sh\necho tool here\n")

    def tearDown(self):
        self.tmp.cleanup()


class ArrayScript(Base):
    def setUp(self):
        super().setUp()
        self.script = self.root / "array.sh"
        self.script.write_text(slurm.array_script(self.folder, self.repo))

    def task(self, seq, **env):
        e = dict(os.environ, SLURM_JOB_ID="77", **env)
        if seq is not None:
            e["SLURM_ARRAY_TASK_ID"] = str(seq)
        return subprocess.run(["sh", str(self.script)], cwd="/", env=e, capture_output=True,
                              text=True, timeout=60)

    def attempt(self, seq):
        lines = (self.folder / "slurm" / f"attempt-{seq}").read_text().splitlines()
        self.assertEqual(len(lines), 1, lines)
        return lines[0].split("\t")

    def test_a_job_that_writes_its_result(self):
        t0 = time.time()
        r = self.task(1)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual((self.folder / "results" / "x.json").read_text(), '{"ok": true}\n')
        w = self.attempt(1)
        self.assertEqual(len(w), 9)
        seq, host, start, runtime, send, receive, exitval, sig, command = w
        self.assertEqual((seq, host, send, receive, exitval, sig, command),
                         ("1", os.uname().nodename, "0", "0", "0", "0", JOBS[0]))
        self.assertRegex(start, r"^\d+\.\d{3}$")
        self.assertAlmostEqual(float(start), t0, delta=30)
        self.assertRegex(runtime, r"^\d+\.\d{3}$")
        self.assertLess(float(runtime), 30)
        # written whole: no temporary file is left beside it
        self.assertEqual(sorted(p.name for p in (self.folder / "slurm").iterdir()), ["attempt-1"])

    def test_a_failing_job_exits_with_its_status_and_records_it(self):
        r = self.task(2)
        self.assertEqual(r.returncode, 3)
        self.assertIn("going wrong", r.stderr)
        w = self.attempt(2)
        self.assertEqual((w[0], w[6], w[7], w[8]), ("2", "3", "0", JOBS[1]))
        self.assertEqual(list((self.folder / "results").iterdir()), [])

    def test_the_job_runs_in_the_campaign_folder_with_the_checkout_on_path(self):
        r = self.task(3)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual((self.folder / "results" / "tool.txt").read_text(), "tool here\n")
        self.assertEqual((self.folder / "results" / "pwd.txt").read_text().strip(),
                         str(self.folder.absolute()))

    def test_a_job_killed_by_a_signal_records_it(self):
        r = self.task(4)
        self.assertEqual(r.returncode, 128 + 15)
        w = self.attempt(4)
        self.assertEqual((w[6], w[7]), ("143", "15"))

    def test_the_attempt_is_recorded_as_unfinished_while_the_job_runs(self):
        r = self.task(5)
        self.assertEqual(r.returncode, 0, r.stderr)
        during = (self.folder / "results" / "during.txt").read_text().rstrip("\n").split("\t")
        self.assertEqual((during[0], during[3], during[6], during[7], during[8]),
                         ("5", "0.000", "-1", "0", JOBS[4]))
        w = self.attempt(5)
        self.assertEqual(w[6], "0")
        self.assertGreaterEqual(float(w[3]), 0.9)
        self.assertEqual(w[2], during[2])                       # the same start

    def test_attempts_reads_them_as_joblog_does(self):
        for seq in (1, 2, 4):
            self.task(seq)
        # a task's half-written temporary file is not an attempt
        (self.folder / "slurm" / ".attempt-3.77.123").write_text("3\tx\t0\t0\t0\t0\t-1\t0\tjunk\n")
        got = slurm.attempts(self.folder)
        self.assertEqual(sorted(got), [1, 2, 4])
        self.assertEqual({k: got[2][k] for k in ("host", "exit", "signal", "command")},
                         {"host": os.uname().nodename, "exit": "3", "signal": "0",
                          "command": JOBS[1]})
        self.assertEqual(got[4]["signal"], "15")
        # the same keys as GNU parallel's joblog gives campaign.states
        (self.folder / "joblog").write_text(
            "Seq\tHost\tStarttime\tJobRuntime\tSend\tReceive\tExitval\tSignal\tCommand\n"
            + (self.folder / "slurm" / "attempt-2").read_text())
        self.assertEqual(campaign.joblog(self.folder)[2], got[2])
        self.assertEqual(slurm.attempts(self.root / "nothing"), {})

    def test_no_task_id_or_no_such_line(self):
        r = self.task(None)
        self.assertEqual(r.returncode, 2)
        self.assertIn("SLURM_ARRAY_TASK_ID", r.stderr)
        r = self.task(9)
        self.assertEqual(r.returncode, 2)
        self.assertIn("no line 9", r.stderr)
        self.assertEqual(self.attempt(9)[6], "2")


class Ranges(unittest.TestCase):
    def test_compact(self):
        self.assertEqual(slurm.array_ranges([1, 2, 3, 5]), "1-3,5")
        self.assertEqual(slurm.array_ranges([5, 3, 2, 1, 2]), "1-3,5")
        self.assertEqual(slurm.array_ranges([7]), "7")
        self.assertEqual(slurm.array_ranges([1, 3, 5]), "1,3,5")
        self.assertEqual(slurm.array_ranges(range(1, 11)), "1-10")
        self.assertEqual(slurm.array_ranges([1, 2, 4, 5, 6, 9, 10]), "1-2,4-6,9-10")

    def test_squeue_task_counts(self):
        self.assertEqual(slurm._count("12_4"), 1)
        self.assertEqual(slurm._count("12"), 1)
        self.assertEqual(slurm._count("12_[1-3,7]"), 4)
        self.assertEqual(slurm._count("12_[4-7%2]"), 4)


class FakeSlurm(Base):
    """sbatch, squeue and scancel as scripts on PATH that log their argv."""

    def setUp(self):
        super().setUp()
        self.bin = self.root / "bin"
        self.bin.mkdir()
        self.log = self.root / "argv.log"
        env = {"PATH": f"{self.bin}{os.pathsep}{os.environ['PATH']}",
               "FAKE_SLURM_LOG": str(self.log), "FAKE_SLURM_DIR": str(self.root)}
        p = mock.patch.dict(os.environ, env)
        p.start()
        self.addCleanup(p.stop)

    def fake(self, name, body):
        executable(self.bin / name, "#!/bin/sh\n"
                   f'printf "%s\\n" "{name}" "$@" "--" >> "$FAKE_SLURM_LOG"\n' + body)

    def calls(self):
        out, cur = [], []
        for ln in self.log.read_text().splitlines():
            if ln == "--":
                out.append(cur)
                cur = []
            else:
                cur.append(ln)
        return out


class Submit(FakeSlurm):
    def test_the_sbatch_command(self):
        self.fake("sbatch", 'echo "4242;cluster1"\n')
        jid = slurm.submit(self.folder, [5, 1, 2, 3], "short", self.repo,
                           extra=["--time=30:00", "--mem=2G"])
        self.assertEqual(jid, "4242")
        [argv] = self.calls()
        f = self.folder.absolute()
        script = f / "slurm" / "array.sh"
        self.assertEqual(argv, [
            "sbatch", "--parsable", "--array=1-3,5", f"--job-name=dmaharness-{f.name}",
            f"--output={str(f).replace('%', '%%')}/slurm/%A_%a.out", f"--chdir={f}",
            "--partition=short", "--ntasks=1", "--cpus-per-task=1", "--export=ALL",
            "--time=30:00", "--mem=2G", str(script)])
        self.assertEqual(script.read_text(), slurm.array_script(f, self.repo))
        self.assertTrue(os.access(script, os.X_OK))

    def test_no_partition_leaves_the_clusters_default(self):
        self.fake("sbatch", "echo 17\n")
        self.assertEqual(slurm.submit(self.folder, [2], None, self.repo), "17")
        [argv] = self.calls()
        self.assertIn("--array=2", argv)
        self.assertFalse([a for a in argv if a.startswith("--partition")])

    def test_sbatch_refusing_is_an_error_with_its_words(self):
        self.fake("sbatch", 'echo "sbatch: error: invalid partition specified: nope" >&2\nexit 1\n')
        with self.assertRaises(errors.EnvError) as cm:
            slurm.submit(self.folder, [1], "nope", self.repo)
        self.assertIn("invalid partition specified: nope", cm.exception.message)
        self.assertIn("--partition=nope", cm.exception.detail)

    def test_sbatch_missing(self):
        with mock.patch.dict(os.environ, {"PATH": str(self.bin)}):
            with self.assertRaises(errors.EnvError) as cm:
                slurm.submit(self.folder, [1], None, self.repo)
        self.assertEqual(cm.exception.exit_code, 3)
        self.assertIn("sbatch", cm.exception.message)

    def test_jobs_that_are_not_in_jobs_txt(self):
        self.fake("sbatch", "echo 1\n")
        for seqs in ([], [0], [6], [1, 9]):
            with self.assertRaises(errors.InputError, msg=seqs):
                slurm.submit(self.folder, seqs, None, self.repo)
        self.assertFalse(self.log.exists())


SQUEUE = """\
n=$(cat "$FAKE_SLURM_DIR/polls" 2>/dev/null || echo 0)
echo $((n + 1)) > "$FAKE_SLURM_DIR/polls"
if [ -e "$FAKE_SLURM_DIR/cancelled" ]; then echo "$2_1 CANCELLED"; exit 0; fi
case $n in
0) echo "$2_[2-3,5] PENDING"; echo "$2_1 RUNNING";;
1) echo "$2_[5] PENDING"; echo "$2_1 COMPLETED"; echo "$2_2 RUNNING"; echo "$2_3 RUNNING";;
2) echo "$2_5 COMPLETING";;
*) echo "slurm_load_jobs error: Invalid job id specified" >&2; exit 1;;
esac
"""


class Wait(FakeSlurm):
    def setUp(self):
        super().setUp()
        self.fake("squeue", SQUEUE)
        self.fake("scancel", 'touch "$FAKE_SLURM_DIR/cancelled"\n')

    def test_until_no_task_is_left(self):
        p = Recorder()
        slurm.wait("88", p, poll=0.01, total=4)
        self.assertEqual(p.updates[:3], [
            "[slurm] job 88: 0 of 4 over, 1 running, 3 pending (0:00)",
            "[slurm] job 88: 1 of 4 over, 2 running, 1 pending (0:00)",
            "[slurm] job 88: 3 of 4 over, 1 completing (0:00)"])
        self.assertIn("no task left", p.updates[-1])
        calls = self.calls()
        self.assertEqual(calls[0], ["squeue", "-h", "-j", "88", "-o", "%i %T"])
        self.assertEqual(len(calls), 4)
        self.assertNotIn("scancel", [c[0] for c in calls])

    def test_an_interruption_cancels_the_array_first(self):
        def interrupt(message):
            if "1 pending" in message:
                raise KeyboardInterrupt
        p = Recorder(interrupt)
        with self.assertRaises(KeyboardInterrupt):
            slurm.wait("88", p, poll=0.01)
        calls = self.calls()
        self.assertIn(["scancel", "88"], calls)
        # it saw the tasks go before giving the interruption back
        self.assertEqual(calls[-1][0], "squeue")
        self.assertIn("cancelling job 88", p.notes[0])


if __name__ == "__main__":
    unittest.main()
