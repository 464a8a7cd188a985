"""A job's result, checked before collect uses it.

A result comes back from a worker (or from whoever handed the campaign
over): collect reads only what it checked here, so that a result holding
the wrong types, numbers no float holds (1e400 parses as inf, and int()
of it fails), or text with terminal escapes (printed by collect) makes
its job a failed one, never a crash or a rewritten terminal.
"""

from __future__ import annotations

import math
import re
from typing import Any

from ..reports import engine
from ..checks import bisect

MAX_NUMBER = 1e15           # no count, time or status of a result is larger


def printable(text: str) -> str:
    """``text`` for a terminal: every character that is not printable
    (escapes, other control characters; newlines and tabs too) as '?'."""
    return "".join(c if c.isprintable() else "?" for c in str(text))


def _number(x: Any, what: str, whole: bool = False) -> None:
    if isinstance(x, bool) or not isinstance(x, int if whole else (int, float)) \
            or not (math.isfinite(x) and abs(x) <= MAX_NUMBER):
        raise ValueError(f"{what}: {str(x)[:40]} is not a number of a result")


def _text(x: Any, what: str, optional: bool = False) -> None:
    if optional and x is None:
        return
    if not isinstance(x, str):
        raise TypeError(f"{what} is not a string")
    if not x.isprintable():
        raise ValueError(f"{what} {printable(x)[:60]!r} holds control characters")


def problem(kind: str, about: dict, jid: str, data: dict) -> str:
    """What is wrong with job ``jid``'s result for what collect reads of it, or ''."""
    try:
        if kind == "case":
            job = data["job"]
            if job["variant"] not in about["variants"] or type(job["run"]) is not int:
                return f"its job {printable(job)[:80]!r} is not one of this campaign's"
            if f"{job['variant']}-{job['run']}" != jid:
                return f"it is the result of {job['variant']}-{job['run']}, not of {jid}"
            for s in data["signatures"]:
                _number(s["count"], "a signature's count", whole=True)
                _number((s["first"].get("span") or {}).get("last_line") or 0, "a report's line")
                _number(s["first"].get("first_line") or 0, "a report's line")
                sig = engine.Signature.from_json(s)
                _text(sig.title, "a signature's title")
                _text(sig.kind, "a signature's kind")
        elif kind == "bisect":
            o = bisect.RunOutcome.from_json(data["bisect_run"])
            if o.status not in (bisect.HIT, bisect.CLEAN, bisect.FAILED, bisect.INFRA):
                raise ValueError(f"bisect_run: status {printable(o.status)[:40]!r}")
            for t in o.titles:
                _text(t, "a title")
            _number(o.wall, "bisect_run.wall")
        elif about.get("usb_drivers"):
            _text(data["build"]["key"], "build.key")
            for d in data["drivers"]:
                _text(d["module"], "a driver's module")
                _text(d["state"], "a driver's state")
            for b in data["boots"]:
                if not all(isinstance(b[k], str) for k in ("device", "state", "console_text")) \
                        or not re.fullmatch(r"b\d+-try\d+-boot\d+", b["device"]) or \
                        not all(isinstance(x, str) for x in b["drivers"]):
                    raise ValueError(f"boot {printable(b.get('device'))[:60]!r}: not a USB "
                                     "sweep job's boot")
                _text(b["state"], "a boot's state")
                _text(b.get("reason"), "a boot's reason", optional=True)
                _text(b.get("outcome"), "a boot's outcome", optional=True)
        else:
            d = data["device"]
            for key in ("device", "class", "state"):
                _text(d[key], f"device.{key}")
            for key in ("reason", "outcome"):
                _text(d.get(key), f"device.{key}", optional=True)
            if d.get("workload_status") is not None:
                _number(d["workload_status"], "device.workload_status", whole=True)
            _number(d.get("wall_seconds") or 0, "device.wall_seconds")
            for t in d.get("reports") or ():
                _text(t, "a report title")
            _text(data["build"]["key"], "build.key")
            if not isinstance(data.get("console_text") or "", str):
                raise TypeError("console_text is not a string")
    except (KeyError, TypeError, ValueError, AttributeError, IndexError, OverflowError) as e:
        return f"not a result this campaign's jobs write ({type(e).__name__}: {e})"
    return ""
