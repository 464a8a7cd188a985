"""The guest agent's result, and a run's summary beside the cameras' counters.

The agent (harness/guest) prints one ``DMAHARNESS-AGENT {json}`` line at the
end of a run, on the console and on the second serial port, where printk
cannot cut it.
"""

from __future__ import annotations

import json
import re
from typing import Optional

from .camera import Camera

AGENT_LINE = re.compile(r"DMAHARNESS-AGENT (\{.*\})\s*$")
CEILING_PER_CAMERA = 8000     # one status transfer per 125 us microframe


def agent_result(console_text: str) -> dict | None:
    """The agent's `DMAHARNESS-AGENT {json}` line from the console."""
    found = None
    for line in console_text.splitlines():
        i = line.find("DMAHARNESS-AGENT {")
        if i < 0:
            continue
        m = AGENT_LINE.search(line[i:])
        if m:
            try:
                found = json.loads(m.group(1))
            except ValueError:
                continue
    return found


def summarize(agent: dict | None, cams: list[Camera], duration: float) -> dict:
    """Sent vs counted, rates, and the per-second series."""
    sent = sum(int(c.counters.get("sent", 0)) for c in cams)
    totals = (agent or {}).get("totals", {}) or {}
    emitted = int(totals.get("events_emitted", 0) or 0)
    dequeued = int(totals.get("events_dequeued", 0) or 0)
    keys = int(totals.get("key_events", 0) or 0)
    counted = emitted + keys
    secs = float((agent or {}).get("run_elapsed_s") or duration or 1)
    series = (agent or {}).get("series") or []
    out = {
        "cameras": len(cams),
        "sent": sent,
        "sent_by_camera": [int(c.counters.get("sent", 0)) for c in cams],
        "guest_events_emitted": emitted,
        "guest_events_dequeued": dequeued,
        "guest_key_events": keys,
        "guest_counted": counted,
        "guest_seconds": round(secs, 3),
        "guest_rate_per_s": round(counted / secs, 1) if secs else 0.0,
        "ceiling_per_s": CEILING_PER_CAMERA * len(cams),
        "phys_reads": int(totals.get("phys_reads", 0) or 0),
        "cycles": int(totals.get("cycles", 0) or 0),
        # what kept uvcvideo's status URB running (harness/guest/hold.c):
        # "stream" or "none", null from an agent before --hold or one that
        # found no camera; hold_reason says why (auto's evidence)
        "hold": (agent or {}).get("hold"),
        "hold_reason": (agent or {}).get("hold_reason"),
        "hold_failures": int(totals.get("hold_failures", 0) or 0),
        "series": series,
    }
    out["ratio_to_ceiling"] = (round(out["guest_rate_per_s"] / out["ceiling_per_s"], 3)
                               if out["ceiling_per_s"] else 0.0)
    fd_cpu = sum(float(c.counters.get("cpu_user_s", 0)) + float(c.counters.get("cpu_sys_s", 0))
                 for c in cams)
    out["fake_device_cpu_s"] = round(fd_cpu, 3)
    return out


def agent_series(agent: Optional[dict], name: str = "events_dequeued"
                 ) -> tuple[list[int], Optional[float]]:
    """One per-second series of the guest agent's JSON (``--series``), and
    its start in seconds since boot when the agent reports one
    (``run_start_s``, CLOCK_MONOTONIC, the clock of printk's timestamps);
    ([], None) when the agent gave no series."""
    series = (agent or {}).get("series") or {}
    values = series.get(name) if isinstance(series, dict) else None
    if not isinstance(values, list):
        return [], None
    start = (agent or {}).get("run_start_s")
    clean = [int(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else 0
             for v in values]
    return clean, float(start) if isinstance(start, (int, float)) else None
