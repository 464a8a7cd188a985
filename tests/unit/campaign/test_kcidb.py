"""KCIDB export of a collected campaign, checked against the schema's own rules.

The tables below are written from the schema, not from harness/campaign/kcidb.py:
KCIDB I/O v4.5, kernelci/kcidb-io kcidb_io/schema/v04_05.py at commit
8971c0269a80307ec6270ff8c78ff3816fc639f6 (its $defs checkout, build, test:
"properties", "required", "additionalProperties": False; $defs status
"enum"; the top-level "version" with major const 4, minor at most 5), the
patterns it inherits from kcidb_io/schema/v03_00.py (origin_pattern,
origin_id_pattern), and kernelci/kcidb doc/submitter_guide.md ("All object
IDs have to start with your origin string, followed by the colon").
"""

import copy
import hashlib
import json
import re
import tempfile
import unittest
from pathlib import Path

from harness.campaign import campaign, kcidb
from tests.unit.campaign.test_campaign import CASE, signatures

# --- the schema, v4.5 ----------------------------------------------------------------

SCHEMA_MAJOR, SCHEMA_MINOR = 4, 5
TOP_LEVEL = {"version", "checkouts", "builds", "tests", "issues", "incidents"}
REQUIRED = {
    "checkouts": {"id", "origin"},
    "builds": {"checkout_id", "id", "origin"},
    "tests": {"build_id", "id", "origin"},
}
PROPERTIES = {
    "checkouts": {"_timestamp", "id", "origin", "tree_name", "git_repository_url",
                  "git_commit_hash", "git_commit_name", "git_commit_tags", "git_commit_message",
                  "git_repository_branch", "git_repository_branch_tip", "patchset_files",
                  "patchset_hash", "message_id", "comment", "start_time", "contacts", "log_url",
                  "log_excerpt", "valid", "misc"},
    "builds": {"_timestamp", "checkout_id", "id", "origin", "comment", "start_time",
               "duration", "architecture", "command", "compiler", "input_files",
               "output_files", "config_name", "config_url", "log_url", "log_excerpt", "valid",
               "misc"},
    "tests": {"_timestamp", "build_id", "id", "origin", "environment", "path", "comment",
              "log_url", "log_excerpt", "status", "number", "waived", "start_time", "duration",
              "output_files", "misc"},
}
ENVIRONMENT = {"compatible", "comment", "misc"}
TEST_STATUS = {"FAIL", "ERROR", "MISS", "PASS", "DONE", "SKIP"}
ORIGIN_RE = re.compile(r"^[a-z0-9_]+$")
ORIGIN_ID_RE = re.compile(r"^[a-z0-9_]+:.*$")
TEST_PATH_RE = re.compile(r"^[.a-zA-Z0-9_-]*$")
TEST_PATH_V5_RE = re.compile(r"^([a-zA-Z0-9_-]+(\.[a-zA-Z0-9_-]+)*)?$")   # v05_00.py: upgradable
ARCH_RE = re.compile(r"^[a-z0-9_]*$")
COMMIT_RE = re.compile(r"^[0-9a-f]{40}$")
PATCHSET_HASH_RE = re.compile(r"^$|^[0-9a-f]{64}$")
DATE_TIME_RE = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$")
EXCERPT_MAX = 16384
BOOLEANS = {"valid", "waived", "git_repository_branch_tip"}
NUMBERS = {"duration"}
TIMES = {"start_time", "_timestamp"}
PARENT = {"builds": ("checkout_id", "checkouts"), "tests": ("build_id", "builds")}

KEYS = {"before": "6.1-00000000000000b0", "fix": "6.1-00000000000000f1",
        "fix-aligned": "6.1-00000000000000f2", "fix-coherent": "6.1-00000000000000f3"}
JOBLOG_HEAD = "Seq\tHost\tStarttime\tJobRuntime\tSend\tReceive\tExitval\tSignal\tCommand"


def done(variant, sigs, run=1, cached=True):
    """A run_case_job payload (harness/checks/caserun.py) that came back ok."""
    key = KEYS[variant]
    return {"command": "run", "job": {"case": "uvc-status-buffer", "variant": variant, "run": run},
            "kernel": "6.1", "profile": "dma",
            "build": {"key": key, "cached": cached, "seconds": 0.1 if cached else 412.3,
                      "seeded_from": None, "steps": 0 if cached else 5000,
                      "artifacts": f"/cache/artifacts/{key}",
                      "bzImage": f"/cache/artifacts/{key}/bzImage",
                      "vmlinux": f"/cache/artifacts/{key}/vmlinux",
                      "build_log": f"/cache/artifacts/{key}/build.log",
                      "kernelrelease": "6.1.0-dmaharness",
                      "patches": ["patches/6.1/0001-dma-debug-cacheline.patch",
                                  f"patches/6.1/cases/uvc-status-buffer/{variant}/0001.patch"]},
            "ok": True, "failure": None, "outcome": "ok",
            "run_dir": f"/cache/runs/x-{variant}-{run}",
            "console": f"/cache/runs/x-{variant}-{run}/console.log", "summary": {},
            "signatures": sigs}


def harness_error(kind, message):
    """What cli.main writes for a job that ended with a HarnessError."""
    return {"command": "run", "ok": False, "failure": message,
            "error": {"kind": kind, "message": message, "exit_code": 5}}


class Export(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = Path(self.tmp.name) / "campaign"
        self.camp = campaign.plan_case(campaign.CasePlan(CASE, 2, self.dir, ()))
        self.res = self.dir / "results"

    def tearDown(self):
        self.tmp.cleanup()

    def write(self, job_id, payload):
        (self.res / f"{job_id}.json").write_text(
            payload if isinstance(payload, str) else json.dumps(payload))

    def joblog(self, rows):
        """rows: job id -> (exit, signal); GNU parallel's --joblog lines for them."""
        seq = {j.id: k for k, j in enumerate(self.camp.jobs, 1)}
        lines = [JOBLOG_HEAD]
        for jid, (code, sig) in rows.items():
            j = self.camp.jobs[seq[jid] - 1]
            lines.append(f"{seq[jid]}\thost{seq[jid] % 2}\t1767225600.25\t30.5\t0\t0\t{code}\t"
                         f"{sig}\t{j.line()}")
        (self.dir / "joblog").write_text("\n".join(lines) + "\n")

    def incomplete(self):
        """before-1/2 and fix-1 done, fix-2 a guest hang, fix-aligned-1 a build
        failure, fix-aligned-2 killed without a result, fix-coherent-* never run."""
        self.write("before-1", done("before", signatures("uvc_v4l2_open", "usb_string"),
                                    cached=False))
        self.write("before-2", done("before", signatures("usb_string"), run=2))
        self.write("fix-1", done("fix", []))
        self.write("fix-2", harness_error("guest", "guest did not finish within the time limit"))
        self.write("fix-aligned-1", harness_error("build", "make failed: error: foo.c:1"))
        self.joblog({"before-1": ("0", "0"), "before-2": ("0", "0"), "fix-1": ("0", "0"),
                     "fix-2": ("6", "0"), "fix-aligned-1": ("5", "0"),
                     "fix-aligned-2": ("-1", "9")})
        return campaign.collect(self.dir)

    def complete(self):
        for v in KEYS:
            for r in (1, 2):
                self.write(f"{v}-{r}", done(v, signatures("usb_string") if v != "fix"
                                            else [], run=r))
        return campaign.collect(self.dir)

    # --- the schema's rules ---------------------------------------------------------

    def assert_schema(self, doc):
        self.assertLessEqual(set(doc), TOP_LEVEL)
        self.assertEqual(doc["version"], {"major": SCHEMA_MAJOR, "minor": SCHEMA_MINOR})
        for kind in ("checkouts", "builds", "tests"):
            self.assertIsInstance(doc[kind], list)
            self.assertTrue(doc[kind], kind)
            for obj in doc[kind]:
                where = f"{kind} {obj.get('id')}"
                self.assertLessEqual(REQUIRED[kind], set(obj), where)
                self.assertLessEqual(set(obj), PROPERTIES[kind], where)
                self.assertRegex(obj["origin"], ORIGIN_RE)
                for name, value in obj.items():
                    self.assertIsNotNone(value, f"{where}: {name} is null")
                    if name in BOOLEANS:
                        self.assertIsInstance(value, bool, f"{where}: {name}")
                    if name in NUMBERS:
                        self.assertIsInstance(value, (int, float), f"{where}: {name}")
                        self.assertNotIsInstance(value, bool)
                    if name in TIMES:
                        self.assertRegex(value, DATE_TIME_RE)
                    if name == "misc":
                        self.assertIsInstance(value, dict)
                    if name in ("comment", "log_excerpt", "path", "config_name", "compiler"):
                        self.assertIsInstance(value, str, f"{where}: {name}")
                    if name == "log_excerpt":
                        self.assertLessEqual(len(value), EXCERPT_MAX)
                for name in ("id", "checkout_id", "build_id"):
                    if name in obj:
                        self.assertRegex(obj[name], ORIGIN_ID_RE)
                        # the submitter guide: ids start with your origin and a colon
                        self.assertTrue(obj[name].startswith(obj["origin"] + ":"), obj[name])
                if kind == "checkouts":
                    if "git_commit_hash" in obj:
                        self.assertRegex(obj["git_commit_hash"], COMMIT_RE)
                    if "patchset_hash" in obj:
                        self.assertRegex(obj["patchset_hash"], PATCHSET_HASH_RE)
                    self.assertNotIn("git_repository_url", obj)   # no result carries one
                if kind == "builds" and "architecture" in obj:
                    self.assertRegex(obj["architecture"], ARCH_RE)
                if kind == "tests":
                    if "status" in obj:
                        self.assertIn(obj["status"], TEST_STATUS)
                    self.assertRegex(obj["path"], TEST_PATH_RE)
                    self.assertRegex(obj["path"], TEST_PATH_V5_RE)
                    self.assertLessEqual(set(obj.get("environment", {})), ENVIRONMENT)
            ids = [o["id"] for o in doc[kind]]
            self.assertEqual(len(ids), len(set(ids)), f"{kind}: an id twice")
        # referential integrity: every parent exists in the document
        for kind, (field, parent) in PARENT.items():
            have = {o["id"] for o in doc[parent]}
            for obj in doc[kind]:
                self.assertIn(obj[field], have, f"{kind} {obj['id']}: no {parent} {obj[field]}")
        self.assertEqual(kcidb.validate(doc), [])

    def by_job(self, doc):
        return {t["misc"]["job"]: t for t in doc["tests"] if "job" in t["misc"]}

    # --- the export --------------------------------------------------------------------

    def test_an_incomplete_campaign_is_a_valid_document(self):
        doc = kcidb.export(self.incomplete())
        self.assert_schema(doc)
        json.dumps(doc, allow_nan=False)        # plain JSON

    def test_one_test_per_job_with_its_status(self):
        col = self.incomplete()
        doc = kcidb.export(col)
        tests = self.by_job(doc)
        self.assertEqual(set(tests), {j.id for j in self.camp.jobs})
        self.assertEqual(len(doc["tests"]), len(self.camp.jobs))   # no verdict: incomplete
        st = {jid: t.get("status") for jid, t in tests.items()}
        self.assertEqual(st["before-1"], "FAIL")          # the kernel reported bugs
        self.assertEqual(st["before-2"], "FAIL")
        self.assertEqual(st["fix-1"], "PASS")             # ran, no report
        self.assertEqual(st["fix-2"], "ERROR")            # the run did not complete
        self.assertEqual(st["fix-aligned-1"], "MISS")     # no kernel to test
        self.assertEqual(st["fix-aligned-2"], "MISS")     # killed, nothing came back
        self.assertIsNone(st["fix-coherent-1"])           # never started: scheduled
        self.assertIsNone(st["fix-coherent-2"])
        for jid, t in tests.items():
            self.assertEqual(t["path"], "dmaharness.uvc-status-buffer." + jid.rsplit("-", 1)[0])
        # the report titles travel in misc; the first report is the excerpt
        titles = [r["title"] for r in tests["before-1"]["misc"]["reports"]]
        self.assertEqual(len(titles), 2)
        self.assertTrue(any("uvc_v4l2_open" in t for t in titles))
        self.assertIn("uvc_v4l2_open+0x10/0x20", tests["before-1"]["log_excerpt"])
        self.assertEqual(tests["fix-1"]["misc"]["reports"], [])
        # when and how long, from GNU parallel's joblog; none for a job never run
        self.assertEqual(tests["before-1"]["start_time"], "2026-01-01T00:00:00.250000+00:00")
        self.assertEqual(tests["before-1"]["duration"], 30.5)
        self.assertNotIn("start_time", tests["fix-coherent-1"])
        self.assertIn("time limit", tests["fix-2"]["log_excerpt"])

    def test_builds_and_checkouts_follow_the_variants(self):
        doc = kcidb.export(self.incomplete())
        tests = self.by_job(doc)
        builds = {b["id"]: b for b in doc["builds"]}
        checkouts = {c["id"]: c for c in doc["checkouts"]}
        # both before runs on one build, the variant key's
        b = builds[tests["before-1"]["build_id"]]
        self.assertEqual(tests["before-2"]["build_id"], b["id"])
        self.assertIn(KEYS["before"], b["id"])
        self.assertIs(b["valid"], True)
        self.assertEqual((b["architecture"], b["compiler"], b["config_name"]),
                         ("x86_64", "gcc", "dma"))
        self.assertEqual(b["duration"], 412.3)            # before-1 built it
        # a fix job that failed later still ran the fix kernel
        self.assertEqual(tests["fix-2"]["build_id"], tests["fix-1"]["build_id"])
        self.assertNotEqual(tests["fix-1"]["build_id"], b["id"])
        # the build that failed is a build that is not valid
        self.assertIs(builds[tests["fix-aligned-1"]["build_id"]]["valid"], False)
        # a variant nobody reported on: a build whose validity is unknown
        unknown = builds[tests["fix-coherent-1"]["build_id"]]
        self.assertNotIn("valid", unknown)
        self.assertEqual(tests["fix-coherent-2"]["build_id"], unknown["id"])
        # the patches are the checkout's (the schema has no patchset on builds)
        c = checkouts[b["checkout_id"]]
        self.assertIn("patches/6.1/cases/uvc-status-buffer/before/0001.patch",
                      c["misc"]["patches"])
        self.assertNotEqual(b["checkout_id"], builds[tests["fix-1"]["build_id"]]["checkout_id"])
        self.assertNotIn("git_commit_hash", c)           # Debian's source: no commit to name

    def test_a_tree_checkout_names_its_commit(self):
        commit = "0123456789abcdef0123456789abcdef01234567"
        for jid in ("before-1", "before-2"):
            p = done("before", [], run=int(jid[-1]))
            p.update({"tree": "/src/linux", "commit": commit, "dirty": ""})
            self.write(jid, p)
        doc = kcidb.export(campaign.collect(self.dir))
        self.assert_schema(doc)
        named = [c for c in doc["checkouts"] if "git_commit_hash" in c]
        self.assertEqual([c["git_commit_hash"] for c in named], [commit])

    def test_the_patchset_hash_when_the_results_list_the_patch_digests(self):
        # the schema: "A sha256 hash over newline-terminated sha256 hashes of
        # each patch from the patchset, in order"; "" when no patch applied
        p = done("before", [])
        digests = [hashlib.sha256(name.encode()).hexdigest() for name in p["build"]["patches"]]
        p["build"]["patch_digests"] = digests
        self.write("before-1", p)
        p = done("fix", [])
        p["build"].update(patches=[], patch_digests=[])
        self.write("fix-1", p)
        doc = kcidb.export(campaign.collect(self.dir))
        self.assert_schema(doc)
        got = {tuple(c["misc"]["case_variants"]): c.get("patchset_hash") for c in doc["checkouts"]}
        want = hashlib.sha256("".join(d + "\n" for d in digests).encode()).hexdigest()
        self.assertEqual(got[("before",)], want)
        self.assertEqual(got[("fix",)], "")
        self.assertIsNone(got[("fix-aligned",)])        # nothing came back: not known

    def test_a_complete_campaign_adds_one_test_per_expectation(self):
        col = self.complete()
        self.assertIsNotNone(col.outcome)
        doc = kcidb.export(col)
        self.assert_schema(doc)
        expect = [t for t in doc["tests"] if ".expect." in t["path"]]
        self.assertEqual(len(expect), len(col.outcome.comparisons))
        builds = {b["id"]: b for b in doc["builds"]}
        for comp, t in zip(col.outcome.comparisons, expect):
            after = comp.diff.after_label
            self.assertEqual(t["path"], f"dmaharness.uvc-status-buffer.expect.{after}")
            self.assertEqual(t["status"], "PASS" if comp.verdict.matches else "FAIL")
            self.assertIn(KEYS[after], builds[t["build_id"]]["id"])   # the after kernel's
        self.assertEqual(len(doc["tests"]), len(self.camp.jobs) + len(expect))

    def test_ids_are_stable_across_exports_and_new_for_a_job_run_again(self):
        first = kcidb.export(self.incomplete())
        again = kcidb.export(campaign.collect(self.dir))
        self.assertEqual(first, again)
        ids = {k: [o["id"] for o in first[k]] for k in ("checkouts", "builds", "tests")}
        # fix-2 run again and fine: a new test run, the others as they were
        self.write("fix-2", done("fix", [], run=2))
        later = kcidb.export(campaign.collect(self.dir))
        before = self.by_job(first)
        after = self.by_job(later)
        self.assertNotEqual(before["fix-2"]["id"], after["fix-2"]["id"])
        for jid in ("before-1", "before-2", "fix-1", "fix-aligned-1", "fix-coherent-1"):
            self.assertEqual(before[jid]["id"], after[jid]["id"], jid)
        self.assertEqual(ids["builds"][0], later["builds"][0]["id"])
        # another campaign of the same case: other ids
        other = campaign.plan_case(campaign.CasePlan(CASE, 2, Path(self.tmp.name) / "other", ()))
        self.assertNotEqual(kcidb.campaign_id(campaign.collect(other.folder)),
                            kcidb.campaign_id(campaign.collect(self.dir)))

    def test_the_origin_prefixes_every_id(self):
        doc = kcidb.export(self.incomplete(), origin="my_lab")
        self.assert_schema(doc)
        for kind in ("checkouts", "builds", "tests"):
            for o in doc[kind]:
                self.assertEqual(o["origin"], "my_lab")
                self.assertTrue(o["id"].startswith("my_lab:"))
        with self.assertRaises(ValueError):
            kcidb.export(self.incomplete(), origin="My-Lab")

    def test_a_long_report_is_cut_to_the_excerpt_limit(self):
        many = signatures(*[f"frame_{k:05d}_" + "x" * 200 for k in range(200)])
        self.write("before-1", done("before", many))
        doc = kcidb.export(campaign.collect(self.dir))
        self.assert_schema(doc)
        t = self.by_job(doc)["before-1"]
        self.assertEqual(len(t["log_excerpt"]), EXCERPT_MAX)


class Validate(unittest.TestCase):
    """validate() finds what the schema refuses: so a broken export would fail."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        d = Path(self.tmp.name) / "c"
        campaign.plan_case(campaign.CasePlan(CASE, 1, d, ()))
        (d / "results" / "before-1.json").write_text(json.dumps(done("before", [])))
        self.doc = kcidb.export(campaign.collect(d))

    def tearDown(self):
        self.tmp.cleanup()

    def broken(self, change):
        doc = copy.deepcopy(self.doc)
        change(doc)
        return kcidb.validate(doc)

    def test_a_good_document_has_no_problem(self):
        self.assertEqual(kcidb.validate(self.doc), [])
        self.assertEqual(kcidb.validate({"version": {"major": 4, "minor": 3}}), [])

    def test_each_broken_rule_is_found(self):
        cases = {
            "a required field missing": lambda d: d["builds"][0].pop("checkout_id"),
            "a test without its build": lambda d: d["tests"][0].pop("build_id"),
            "no version": lambda d: d.pop("version"),
            "another major": lambda d: d["version"].update(major=5),
            "a newer minor": lambda d: d["version"].update(minor=6),
            "an unknown field": lambda d: d["tests"][0].update(verdict="ok"),
            "an unknown top-level list": lambda d: d.update(runs=[]),
            "an unknown environment field": lambda d: d["tests"][0].update(
                environment={"host": "x"}),
            "a bad status": lambda d: d["tests"][0].update(status="OK"),
            "a lower-case status": lambda d: d["tests"][0].update(status="pass"),
            "a null": lambda d: d["tests"][0].update(comment=None),
            "an id without origin": lambda d: d["checkouts"][0].update(id="no-origin-here"),
            "an id of another origin": lambda d: d["tests"][0].update(id="other:1"),
            "a bad origin": lambda d: d["builds"][0].update(origin="Dma-Harness"),
            "a build status": lambda d: d["builds"][0].update(status="PASS"),   # v4 has valid
            "valid as text": lambda d: d["builds"][0].update(valid="true"),
            "duration as text": lambda d: d["tests"][0].update(duration="12"),
            "a bad time": lambda d: d["tests"][0].update(start_time="yesterday"),
            "a bad path": lambda d: d["tests"][0].update(path="dmaharness/case"),
            "a short commit": lambda d: d["checkouts"][0].update(git_commit_hash="abc123"),
            "a long excerpt": lambda d: d["tests"][0].update(log_excerpt="x" * 16385),
            "misc not an object": lambda d: d["tests"][0].update(misc=[]),
            "tests not a list": lambda d: d.update(tests={}),
        }
        for what, change in cases.items():
            with self.subTest(what):
                self.assertNotEqual(self.broken(change), [], what)

    def test_the_problem_names_the_object_and_field(self):
        problems = self.broken(lambda d: d["tests"][0].update(status="OK", verdict=1))
        self.assertTrue(any("tests[0].status" in p for p in problems), problems)
        self.assertTrue(any("verdict" in p for p in problems), problems)


if __name__ == "__main__":
    unittest.main()
