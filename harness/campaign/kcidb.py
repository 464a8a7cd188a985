"""A collected campaign as one KCIDB I/O document (KernelCI's common database).

Schema: KCIDB I/O v4.5, the last minor of major 4.
  kernelci/kcidb-io, kcidb_io/schema/v04_05.py (added by 836bbe5 and
  21ddf85, 2024-08-29), read at commit
  8971c0269a80307ec6270ff8c78ff3816fc639f6 (2026-02-01); the id and origin
  patterns it inherits are in kcidb_io/schema/v03_00.py
  (origin_pattern "[a-z0-9_]+", origin_id_pattern "[a-z0-9_]+:.*").
  Submission rules: kernelci/kcidb doc/submitter_guide.md (at
  8fb83c074cf003c5a558e616cb2fd32fa682c6d4).  That repository's LATEST is
  v5.3; KCIDB accepts older versions and upgrades them, and this document
  is kept upgradable (v05_00.py refuses non-https git URLs and test paths
  with empty components, and strings holding NUL).

What the schema says, in short: the document is {"version": {"major": 4,
"minor": 5}, "checkouts": [...], "builds": [...], "tests": [...]} ("issues"
and "incidents" also exist; none are written here).  Every object needs
"id" and "origin", a build its "checkout_id", a test its "build_id"; ids
are "<origin>:<anything>", unique per object type for that origin forever;
no property may be null (a missing value is an absent key); every object
refuses unknown properties (additionalProperties false) except under
"misc".  A build says whether it built with "valid" (a boolean: v4 has no
build status); a test's "status" is one of FAIL ERROR MISS PASS DONE SKIP,
and no status at all means "scheduled, not finished".  Patches belong to
the checkout (patchset_files, patchset_hash), not to the build.

The mapping (every id is "<origin>:<campaign>:..." where <campaign> is the
case name and a digest of campaign.json, which is written once by `plan`,
and of the folder's name: see campaign_id):

  checkout  one per kernel source the results name: the source (Debian's
            linux-source-X.Y, or a --tree checkout at a commit) plus the
            patches applied on it, as a build's result lists them; so a
            case's variants are as many checkouts of one source, as KCIDB
            models a patchset over a base.  git_commit_hash only for a
            --tree checkout; no git_repository_url (no result carries one);
            patchset_hash only when a result lists its patches' sha256
            (build "patch_digests", in the order of "patches").  The guide:
            a checkout without git_commit_hash and patchset_hash "may not
            appear in reports or on the dashboard".
  build     one per kernel variant key the results name, valid true; one
            per job whose kernel failed to build, valid false; one per
            variant nothing says the key of (its jobs never came back),
            without "valid".
  test      one per job: path dmaharness.<case>.<variant>; status from the
            job (see run_status); an id that carries a digest of what came
            back (the result, or GNU parallel's last attempt), so that the
            same campaign exports the same ids and a job run again is a new
            test run (KCIDB merges objects of one id property by property,
            picking any submitted value: a MISS and a later PASS under one
            id would mix).  One more test per comparison of the case's
            outcome (dmaharness.<case>.expect.<after variant>), PASS when
            the case's expectation holds, on the after variant's build;
            none while the campaign is incomplete.

No URL is written: the consoles, build logs and artifacts are files on the
machine that ran the job, which a dashboard cannot fetch; their paths go
under "misc".
"""

from __future__ import annotations

import hashlib
import json
import re
from datetime import datetime, timezone
from typing import Any, Optional

from ..errors import InputError
from ..kernel import kbuild
from .campaign import Collected, JobState

MAJOR = 4
MINOR = 5
ORIGIN = "dmaharness"
PATH_ROOT = "dmaharness"
STATUSES = ("FAIL", "ERROR", "MISS", "PASS", "DONE", "SKIP")
EXCERPT_MAX = 16384          # log_excerpt's maxLength

_ORIGIN_RE = re.compile(r"^[a-z0-9_]+$")
_SHA1_RE = re.compile(r"^[0-9a-f]{40}$")
_SHA256_RE = re.compile(r"^[0-9a-f]{64}$")


# --- export ------------------------------------------------------------------------

def _digest(data: Any, n: int = 12) -> str:
    blob = json.dumps(data, sort_keys=True, separators=(",", ":"), default=str).encode()
    return hashlib.sha256(blob).hexdigest()[:n]


def _segment(text: str) -> str:
    """One component of a test path: [a-zA-Z0-9_-]+ (a dot would split it)."""
    return re.sub(r"[^a-zA-Z0-9_-]+", "_", str(text)) or "_"


def _excerpt(text: str) -> str:
    return text.replace("\0", "")[:EXCERPT_MAX]


def _clean(d: dict) -> dict:
    """Without the None values: KCIDB has no nulls, an unknown value is an absent key."""
    return {k: v for k, v in d.items() if v is not None}


def campaign_id(col: Collected) -> str:
    """The campaign's part of every id: its case and a digest of campaign.json
    (written once by `plan`: the jobs, the case's source, the creation time
    to the second) and of the folder's name (two campaigns planned in one
    second), the same however often it is exported."""
    c = col.campaign
    name = _segment(c.about.get("case") or c.folder.name)
    return f"{name}-{_digest([c.folder.name, c.to_json()])}"


def _job_variant(s: JobState) -> tuple[str, int | None]:
    """The case variant and run of a job: its command line says, whatever came back."""
    argv = list(s.job.argv)
    name = run = None
    for flag in ("--case-variant", "--case-run"):
        if flag in argv[:-1]:
            val = argv[argv.index(flag) + 1]
            if flag == "--case-variant":
                name = val
            elif val.isdigit():
                run = int(val)
    job = (s.result or {}).get("job") or {}
    name = name or job.get("variant") or s.job.id.rsplit("-", 1)[0]
    run = run if run is not None else job.get("run")
    return str(name), run


def _source(res: dict | None) -> dict | None:
    """The kernel source a result names (None: it names none)."""
    if not res or not res.get("kernel"):
        return None
    src = {"kernel": str(res["kernel"])}
    if res.get("commit"):
        src["commit"] = str(res["commit"])
        src["dirty"] = str(res.get("dirty") or "")
    return src


def _built(res: dict | None) -> dict | None:
    b = (res or {}).get("build")
    return b if isinstance(b, dict) and b.get("key") else None


def _build_failed(res: dict | None) -> bool:
    return ((res or {}).get("error") or {}).get("kind") == "build"


def run_status(s: JobState) -> tuple[Optional[str], str]:
    """A job's KCIDB test status and why, by the submitter guide's layers
    (code, test, harness): FAIL the kernel reported bugs (any report title,
    or a panic); PASS the guest finished its flood cleanly with none; ERROR
    the run did not complete (hang, silence, the guest's program or the fake
    device failed) and reported nothing; MISS the harness could not run it
    (no kernel, a tool missing, QEMU failed, no result came back); None for a
    job never started (KCIDB: scheduled)."""
    res = s.result
    if s.status == "missing":
        if s.attempt is None:
            return None, "not run yet"
        return "MISS", s.why
    titles = [x.get("title") for x in (res or {}).get("signatures") or []]
    outcome = (res or {}).get("outcome")
    if titles or outcome == "panic":
        what = f"{len(titles)} kernel report title(s)" if titles else "kernel panic"
        return "FAIL", what + ("" if s.status == "done" else f" (the job failed: {s.why})")
    if s.status == "done":
        if outcome == "guest-error":
            return "ERROR", "the guest finished with an error status"
        return "PASS", "the guest finished, no kernel report"
    if res is None:
        return "MISS", s.why
    kind = (res.get("error") or {}).get("kind")
    if kind == "build":
        return "MISS", f"the kernel did not build: {s.why}"
    if kind in ("guest", "device"):
        return "ERROR", s.why
    if kind:                                    # environment, input, usage
        return "MISS", s.why
    if outcome in ("qemu-error", "kvm-silent"):
        return "MISS", s.why
    if outcome:                                 # timeout, silent, no-marker, stopped, a dead device
        return "ERROR", s.why
    return "MISS", s.why


def _start(s: JobState) -> float | None:
    """When the job's last attempt started (epoch seconds), as the joblog or
    a Slurm task's attempt file says (campaign.attempts)."""
    try:
        return float((s.attempt or {}).get("start") or "")
    except ValueError:
        return None


def _iso(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, timezone.utc).isoformat()


class _Doc:
    """The objects being assembled, each once, in the order first met."""

    def __init__(self, origin: str, camp: str):
        self.origin, self.camp = origin, camp
        self.checkouts: dict[str, dict] = {}
        self.builds: dict[str, dict] = {}
        self.tests: list[dict] = []

    def id(self, *parts: str) -> str:
        return ":".join((self.origin, self.camp) + parts)

    def checkout(self, src: dict | None, patches: list | None, digests: list | None,
                 variant: str) -> str:
        if src is None or patches is None:
            cid = self.id("checkout", "variant", variant)
            self.checkouts.setdefault(cid, _clean({
                "id": cid, "origin": self.origin,
                "comment": f"the source of case variant {variant}: no result names it",
                "misc": {"case_variants": [variant]}}))
            return cid
        cid = self.id("checkout", _digest({"source": src, "patches": patches}))
        if cid in self.checkouts:
            v = self.checkouts[cid]["misc"]["case_variants"]
            if variant not in v:
                v.append(variant)
            return cid
        commit = src.get("commit")
        dirty = src.get("dirty")
        if commit:
            base = f"git checkout at {commit[:12]}" + (" with local changes" if dirty else "")
        else:
            base = f"Debian's linux-source-{src['kernel']}"
        obj = {"id": cid, "origin": self.origin,
               "comment": f"linux {src['kernel']}: {base}, {len(patches)} patch(es) applied",
               "valid": True,
               "misc": _clean({"kernel": src["kernel"],
                               "source": "git" if commit else "debian linux-source",
                               "dirty": dirty or None, "patches": list(patches),
                               "case_variants": [variant]})}
        if commit and _SHA1_RE.match(commit):
            obj["git_commit_hash"] = commit
        # sha256 over the newline-ended sha256 of each patch, in order
        # (the schema's patchset_hash), when the result lists the digests
        if (not dirty and isinstance(digests, list) and len(digests) == len(patches)
                and all(isinstance(d, str) and _SHA256_RE.match(d) for d in digests)):
            obj["patchset_hash"] = (hashlib.sha256("".join(d + "\n" for d in digests).encode())
                                    .hexdigest() if digests else "")
        self.checkouts[cid] = obj
        return cid

    def build(self, s: JobState, built: dict, res: dict, checkout_id: str, variant: str) -> str:
        key = str(built["key"])
        bid = self.id("build", key)
        obj = self.builds.get(bid)
        if obj is None:
            obj = self.builds[bid] = {
                "id": bid, "origin": self.origin, "checkout_id": checkout_id,
                "comment": f"kernel variant {key}"
                           + (f" ({built['kernelrelease']})" if built.get("kernelrelease") else ""),
                "architecture": kbuild.ARCH, "compiler": "gcc", "valid": True,
                "misc": _clean({"key": key, "kernelrelease": built.get("kernelrelease") or None,
                                "profile": res.get("profile"), "case_variants": [],
                                "artifacts": built.get("artifacts"),
                                "build_log": built.get("build_log"),
                                "cached_in_jobs": []})}
            if res.get("profile"):
                obj["config_name"] = str(res["profile"])
        misc = obj["misc"]
        if variant not in misc["case_variants"]:
            misc["case_variants"].append(variant)
        if built.get("cached"):
            misc["cached_in_jobs"].append(s.job.id)
        elif "built_by_job" not in misc:
            # the job that made it: its duration, seed and steps
            misc["built_by_job"] = s.job.id
            for k in ("seeded_from", "steps", "ccache"):
                if built.get(k) is not None:
                    misc[k] = built[k]
            sec = built.get("seconds")
            if isinstance(sec, (int, float)) and not isinstance(sec, bool) \
                    and 0 <= sec <= 1e9:           # not 1e400 (inf), nor a huge int
                obj["duration"] = float(sec)
        return bid

    def failed_build(self, s: JobState, tag: str, checkout_id: str, variant: str) -> str:
        bid = self.id("build", "failed", s.job.id, tag)
        err = (s.result or {}).get("error") or {}
        text = "\n".join(x for x in (err.get("message"), err.get("detail")) if x)
        self.builds[bid] = _clean({
            "id": bid, "origin": self.origin, "checkout_id": checkout_id,
            "comment": f"case variant {variant}: the kernel did not build in job {s.job.id}",
            "architecture": kbuild.ARCH, "compiler": "gcc", "valid": False,
            "log_excerpt": _excerpt(text) if text else None,
            "misc": {"case_variants": [variant], "job": s.job.id}})
        return bid

    def unknown_build(self, variant: str, checkout_id: str) -> str:
        bid = self.id("build", "variant", variant)
        self.builds.setdefault(bid, {
            "id": bid, "origin": self.origin, "checkout_id": checkout_id,
            "comment": f"case variant {variant}: no result says which kernel it built",
            "architecture": kbuild.ARCH, "misc": {"case_variants": [variant]}})
        return bid


def _signature_excerpt(sigs: list[dict]) -> str:
    parts = []
    for x in sigs:
        raw = (x.get("first") or {}).get("raw") or []
        parts.append("\n".join(raw) if raw else str(x.get("title")))
    return _excerpt("\n\n".join(parts))


def check_origin(origin: str) -> None:
    """--kcidb-origin: InputError unless KCIDB takes it as an origin."""
    if not _ORIGIN_RE.match(origin):
        raise InputError(f"--kcidb-origin: KCIDB origin {origin!r}: lower-case letters, "
                         "digits and _ only")


def export(col: Collected, origin: str = ORIGIN) -> dict:
    """The campaign as one KCIDB I/O v4.5 document: checkouts, builds, tests."""
    if not _ORIGIN_RE.match(origin):
        raise ValueError(f"KCIDB origin {origin!r}: lower-case letters, digits and _ only")
    camp = campaign_id(col)
    case = str(col.campaign.about.get("case") or col.campaign.folder.name)
    doc = _Doc(origin, camp)

    # first the kernels the results name, then a test per job: a job that
    # names none (missing, failed early) goes with its variant's kernel
    # when exactly one is known
    infos = []
    known: dict[str, set[tuple[str, str]]] = {}          # variant: {(checkout, build)}
    for s in col.jobs:
        variant, run = _job_variant(s)
        res = s.result
        tag = _digest(res) if res is not None else _digest({"status": s.status,
                                                             "attempt": s.attempt})
        built = _built(res)
        bid = None
        if built and _source(res) is not None:
            cid = doc.checkout(_source(res), list(built.get("patches") or []),
                               built.get("patch_digests"), variant)
            bid = doc.build(s, built, res, cid, variant)
            known.setdefault(variant, set()).add((cid, bid))
        infos.append((s, variant, run, res, tag, bid))

    def variant_checkout(variant: str) -> str:
        cids = {c for c, _ in known.get(variant, ())}
        return next(iter(cids)) if len(cids) == 1 else doc.checkout(None, None, None, variant)

    def variant_build(variant: str) -> str:
        bids = {b for _, b in known.get(variant, ())}
        return next(iter(bids)) if len(bids) == 1 \
            else doc.unknown_build(variant, variant_checkout(variant))

    run_ids = []
    for s, variant, run, res, tag, bid in infos:
        if bid is None:
            bid = (doc.failed_build(s, tag, variant_checkout(variant), variant)
                   if _build_failed(res) else variant_build(variant))
        status, why = run_status(s)
        sigs = (res or {}).get("signatures") or []
        test = {"id": doc.id("test", s.job.id, tag), "origin": origin, "build_id": bid,
                "path": ".".join((PATH_ROOT, _segment(case), _segment(variant))),
                "comment": f"{case} {variant} run {run if run is not None else '?'}: {why}"}
        if status is not None:
            test["status"] = status
        if _start(s) is not None:
            test["start_time"] = _iso(_start(s))
        if s.attempt is not None:
            test["duration"] = s.seconds
            if s.attempt.get("host"):
                test["environment"] = {"comment": f"GNU parallel host {s.attempt['host']}",
                                       "misc": {"host": s.attempt["host"]}}
        if sigs:
            test["log_excerpt"] = _signature_excerpt(sigs)
        elif s.status != "done" and (s.why or (res or {}).get("error")):
            err = (res or {}).get("error") or {}
            test["log_excerpt"] = _excerpt("\n".join(
                x for x in (s.why, err.get("detail")) if x))
        test["misc"] = _clean({
            "campaign": str(col.campaign.folder), "case": case, "job": s.job.id,
            "case_variant": variant, "run": run, "job_status": s.status, "why": s.why or None,
            "command": s.job.command(), "outcome": (res or {}).get("outcome"),
            "reports": [_clean({"title": x.get("title"), "kind": x.get("kind"),
                                "count": x.get("count"), "corrupted": x.get("corrupted")})
                        for x in sigs],
            "console": (res or {}).get("console"), "run_dir": (res or {}).get("run_dir"),
            "exit": (s.attempt or {}).get("exit"), "signal": (s.attempt or {}).get("signal")})
        doc.tests.append(test)
        run_ids.append(test["id"])

    if col.outcome is not None:
        runs_digest = _digest(run_ids)
        for comp in col.outcome.comparisons:
            d, v = comp.diff, comp.verdict
            after = d.after_label
            titles = [r.title for r in d.rows if r.status in ("new", "unchanged", "flaky")]
            test = {"id": doc.id("expect", after, runs_digest), "origin": origin,
                    "build_id": variant_build(after),
                    "path": ".".join((PATH_ROOT, _segment(case), "expect", _segment(after))),
                    "status": "PASS" if v.matches else "FAIL",
                    "comment": f"{d.before_label} vs {after}: "
                               + ("as the case expects" if v.matches else "; ".join(v.reasons)),
                    "misc": {"case": case, "before": d.before_label, "after": after,
                             "runs_before": d.runs_before, "runs_after": d.runs_after,
                             "summary": d.summary(), "reasons": list(v.reasons),
                             "notes": list(v.notes),
                             "rows": [{"title": r.title, "kind": r.kind, "status": r.status}
                                      for r in d.rows]}}
            if not v.matches:
                test["log_excerpt"] = _excerpt("\n".join(list(v.reasons) + titles))
            doc.tests.append(test)

    return {"version": {"major": MAJOR, "minor": MINOR},
            "checkouts": list(doc.checkouts.values()),
            "builds": list(doc.builds.values()),
            "tests": doc.tests}


# --- validate -----------------------------------------------------------------------
# The v4.5 schema's rules, as a small table per object: each property's
# type and its pattern, format, enum or bounds; required ones; nothing else
# allowed (misc is free).

def _f(type_: str, **kw) -> dict:
    return {"type": type_, **kw}


_ID = _f("string", pattern=r"^[a-z0-9_]+:.*$")
_ORIGIN = _f("string", pattern=r"^[a-z0-9_]+$")
_TIME = _f("string", format="date-time")
_URI = _f("string", format="uri")
_TEXT = _f("string")
_EXCERPT = _f("string", max_length=EXCERPT_MAX)
_MISC = _f("object")
_STATUS = _f("string", enum=STATUSES)
_RESOURCES = _f("array", items=_f("object", props={
    "name": _f("string", pattern=r"^[^/]+$"), "url": _URI}, required=("name", "url")))

SPEC: dict[str, dict] = {
    "checkouts": _f("object", required=("id", "origin"), props={
        "_timestamp": _TIME, "id": _ID, "origin": _ORIGIN, "tree_name": _TEXT,
        "git_repository_url": _f("string", format="uri", pattern=r"^(https|git)://.*$"),
        "git_commit_hash": _f("string", pattern=r"^[0-9a-f]{40}$"),
        "git_commit_name": _TEXT, "git_commit_tags": _f("array", items=_TEXT),
        "git_commit_message": _TEXT, "git_repository_branch": _TEXT,
        "git_repository_branch_tip": _f("boolean"), "patchset_files": _RESOURCES,
        "patchset_hash": _f("string", pattern=r"^$|^[0-9a-f]{64}$"),
        "message_id": _f("string", format="email"), "comment": _TEXT, "start_time": _TIME,
        "contacts": _f("array", items=_TEXT), "log_url": _URI, "log_excerpt": _EXCERPT,
        "valid": _f("boolean"), "misc": _MISC}),
    "builds": _f("object", required=("checkout_id", "id", "origin"), props={
        "_timestamp": _TIME, "checkout_id": _ID, "id": _ID, "origin": _ORIGIN,
        "comment": _TEXT, "start_time": _TIME, "duration": _f("number"),
        "architecture": _f("string", pattern=r"^[a-z0-9_]*$"), "command": _TEXT,
        "compiler": _TEXT, "input_files": _RESOURCES, "output_files": _RESOURCES,
        "config_name": _TEXT, "config_url": _URI, "log_url": _URI, "log_excerpt": _EXCERPT,
        "valid": _f("boolean"), "misc": _MISC}),
    "tests": _f("object", required=("build_id", "id", "origin"), props={
        "_timestamp": _TIME, "build_id": _ID, "id": _ID, "origin": _ORIGIN,
        "environment": _f("object", props={
            "compatible": _f("array", items=_f("string", pattern=r"^[^ ]+(,[^ ]+)*$")),
            "comment": _TEXT, "misc": _MISC}),
        "path": _f("string", pattern=r"^[.a-zA-Z0-9_-]*$"), "comment": _TEXT,
        "log_url": _URI, "log_excerpt": _EXCERPT, "status": _STATUS,
        "number": _f("object", required=("value",), props={
            "value": _f("number"), "unit": _TEXT,
            "prefix": _f("string", enum=("metric", "binary"))}),
        "waived": _f("boolean"), "start_time": _TIME, "duration": _f("number"),
        "output_files": _RESOURCES, "misc": _MISC}),
    "issues": _f("object", required=("id", "version", "origin"), props={
        "_timestamp": _TIME, "id": _ID, "version": _f("integer", minimum=0), "origin": _ORIGIN,
        "report_url": _URI, "report_subject": _TEXT,
        "culprit": _f("object", props={"code": _f("boolean"), "tool": _f("boolean"),
                                       "harness": _f("boolean")}),
        "build_valid": _f("boolean"), "test_status": _STATUS, "comment": _TEXT,
        "misc": _MISC}),
    "incidents": _f("object", required=("id", "origin", "issue_id", "issue_version"), props={
        "_timestamp": _TIME, "id": _ID, "origin": _ORIGIN, "issue_id": _ID,
        "issue_version": _f("integer", minimum=0), "build_id": _ID, "test_id": _ID,
        "present": _f("boolean"), "comment": _TEXT, "misc": _MISC}),
}

_TIME_RE = re.compile(r"^\d{4}-\d\d-\d\d[Tt]\d\d:\d\d:\d\d(\.\d+)?([Zz]|[+-]\d\d:\d\d)$")
_URI_RE = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:[^\s]+$")
_EMAIL_RE = re.compile(r"^[^@\s]+@[^@\s]+$")


def _type_ok(value: Any, type_: str) -> bool:
    if type_ == "string":
        return isinstance(value, str)
    if type_ == "boolean":
        return isinstance(value, bool)
    if type_ == "integer":
        return (isinstance(value, int) and not isinstance(value, bool)) or \
            (isinstance(value, float) and value.is_integer())
    if type_ == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if type_ == "object":
        return isinstance(value, dict)
    if type_ == "array":
        return isinstance(value, list)
    return False


def _check(value: Any, spec: dict, where: str, out: list[str]) -> None:
    t = spec["type"]
    if not _type_ok(value, t):
        out.append(f"{where}: {json.dumps(value, default=str)[:60]} is not a {t}"
                   + (" (KCIDB has no nulls: leave the key out)" if value is None else ""))
        return
    if t == "string":
        if "pattern" in spec and not re.search(spec["pattern"], value):
            out.append(f"{where}: {value[:60]!r} does not match {spec['pattern']}")
        if "enum" in spec and value not in spec["enum"]:
            out.append(f"{where}: {value!r} is not one of {', '.join(spec['enum'])}")
        if "max_length" in spec and len(value) > spec["max_length"]:
            out.append(f"{where}: {len(value)} characters, at most {spec['max_length']}")
        fmt = spec.get("format")
        if fmt and not {"date-time": _TIME_RE, "uri": _URI_RE,
                        "email": _EMAIL_RE}[fmt].match(value):
            out.append(f"{where}: {value[:60]!r} is not a {fmt}")
    elif t in ("integer", "number"):
        if "minimum" in spec and value < spec["minimum"]:
            out.append(f"{where}: {value} is below {spec['minimum']}")
        if "maximum" in spec and value > spec["maximum"]:
            out.append(f"{where}: {value} is above {spec['maximum']}")
        if "const" in spec and value != spec["const"]:
            out.append(f"{where}: {value}, must be {spec['const']}")
    elif t == "array" and "items" in spec:
        for k, item in enumerate(value):
            _check(item, spec["items"], f"{where}[{k}]", out)
    elif t == "object" and "props" in spec:
        for name in spec.get("required", ()):
            if name not in value:
                out.append(f"{where}: required {name!r} is missing")
        for name, v in value.items():
            if name not in spec["props"]:
                out.append(f"{where}: {name!r} is not a property the schema defines")
            else:
                _check(v, spec["props"][name], f"{where}.{name}", out)


_VERSION = _f("object", required=("major",), props={
    "major": _f("integer", const=MAJOR), "minor": _f("integer", minimum=0, maximum=MINOR)})


def validate(doc: Any) -> list[str]:
    """The problems of a KCIDB I/O v4.5 document by the schema's rules
    (required, types, patterns, enums, formats, no unknown property, no
    null), plus the submitter guide's: an id starts with its object's
    origin.  Empty: none found."""
    out: list[str] = []
    if not isinstance(doc, dict):
        return ["the document is not a JSON object"]
    if "version" not in doc:
        out.append("required 'version' is missing")
    for name, value in doc.items():
        if name == "version":
            _check(value, _VERSION, "version", out)
        elif name in SPEC:
            if not isinstance(value, list):
                out.append(f"{name}: not an array")
                continue
            for k, obj in enumerate(value):
                where = f"{name}[{k}]"
                _check(obj, SPEC[name], where, out)
                if isinstance(obj, dict) and isinstance(obj.get("id"), str) \
                        and isinstance(obj.get("origin"), str) \
                        and not obj["id"].startswith(obj["origin"] + ":"):
                    out.append(f"{where}.id: {obj['id']!r} does not start with its "
                               f"origin {obj['origin']!r} and a colon")
        else:
            out.append(f"{name!r} is not a property the schema defines")
    return out
