"""KUnit results (KTAP) from a guest's console.

KUnit suites built into the kernel run at boot, before init; suites built
as modules run when the module loads.  Either way their KTAP output lands
on the serial console, interleaved with other kernel messages and carrying
printk timestamps.  parse() recovers the suites and test cases from it, the
way tools/testing/kunit/kunit_parser.py reads KTAP (version 1, nested by
four-space indentation, '# Subtest:' naming a suite).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_PREFIX = re.compile(r"^(?:<\d+>)?(?:\[\s*\d+\.\d+\](?:\[\s*[TC]\d+\])? ?)?")
_RESULT = re.compile(r"^(not ok|ok) (\d+)(?: - | )?([^#]*?)\s*(?:#\s*(SKIP|TODO|skip)\b\s*(.*))?$")
_SUBTEST = re.compile(r"^# Subtest: (.+)$")
_PLAN = re.compile(r"^1\.\.(\d+)$")


@dataclass
class Case:
    name: str
    status: str        # passed | failed | skipped
    log: list[str] = field(default_factory=list)
    reason: str = ""


@dataclass
class Suite:
    name: str
    status: str = "missing"    # passed | failed | skipped | missing (no result line)
    planned: int | None = None
    cases: list[Case] = field(default_factory=list)

    def counts(self) -> dict[str, int]:
        out = {"passed": 0, "failed": 0, "skipped": 0}
        for c in self.cases:
            out[c.status] += 1
        return out


@dataclass
class Result:
    suites: list[Suite]

    def counts(self) -> dict[str, int]:
        out = {"passed": 0, "failed": 0, "skipped": 0}
        for s in self.suites:
            for k, v in s.counts().items():
                out[k] += v
        return out

    @property
    def ok(self) -> bool:
        c = self.counts()
        return bool(self.suites) and c["failed"] == 0 and all(
            s.status in ("passed", "skipped") and (s.planned is None or s.planned == len(s.cases))
            for s in self.suites)

    def failures(self) -> list[str]:
        out = []
        for s in self.suites:
            for c in s.cases:
                if c.status == "failed":
                    out.append(f"{s.name}.{c.name}")
            if s.status == "missing":
                out.append(f"{s.name} (no result: crashed or hung?)")
            elif s.planned is not None and s.planned != len(s.cases):
                out.append(f"{s.name} (planned {s.planned} cases, saw {len(s.cases)})")
        return out

    def to_json(self) -> dict:
        return {
            "ok": self.ok,
            "counts": self.counts(),
            "failures": self.failures(),
            "suites": [{"name": s.name, "status": s.status, "planned": s.planned,
                        "counts": s.counts(),
                        "cases": [{"name": c.name, "status": c.status, "reason": c.reason,
                                   "log": c.log[-20:]} for c in s.cases]} for s in self.suites],
        }


def _status(word: str, directive: str | None) -> str:
    if directive and directive.upper() == "SKIP":
        return "skipped"
    return "passed" if word == "ok" else "failed"


def parse(text: str) -> Result:
    """Suites and their cases.

    A suite's '# Subtest:', plan and case results are indented once (depth
    1), its own result is not (depth 0); parameterised cases nest deeper and
    are summarised by their depth-1 result line.
    """
    suites: list[Suite] = []
    current: Suite | None = None
    pending_log: list[str] = []
    for raw in text.splitlines():
        line = _PREFIX.sub("", raw.rstrip("\r"), count=1)
        stripped = line.lstrip(" ")
        depth = (len(line) - len(stripped)) // 4
        m = _SUBTEST.match(stripped)
        if m and depth <= 1:
            current = Suite(m.group(1).strip())
            suites.append(current)
            pending_log = []
            continue
        if current is None:
            continue
        m = _PLAN.match(stripped)
        if m and depth == 1 and current.planned is None:
            current.planned = int(m.group(1))
            continue
        m = _RESULT.match(stripped)
        if m:
            word, _num, name, directive, reason = m.groups()
            name = name.strip()
            if depth == 1:
                current.cases.append(Case(name, _status(word, directive), pending_log,
                                          (reason or "").strip()))
                pending_log = []
            elif depth == 0 and name == current.name:
                current.status = _status(word, directive)
                current = None
            continue
        if depth >= 1 and stripped.startswith("#"):
            pending_log.append(stripped[1:].strip())
    return Result(suites)
