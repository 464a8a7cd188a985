"""`python3 -m harness.reports.layoutcli --artifacts DIR --console LOG`: the
structure layout around the buffer of each detector report of a console log
(harness.reports.layout), for a developer at a shell."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Optional

from ..jsonout import JSON_VERSION
from .engine import fold, parse
from .layout import report_layout


def main(argv: Optional[list[str]] = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python3 -m harness.reports.layoutcli", allow_abbrev=False,
        description="Print the structure layout around the buffer of each detector "
                    "report of a console log.")
    ap.add_argument("--artifacts", required=True, help="the variant's artifacts folder")
    ap.add_argument("--console", required=True, help="console log of a boot of that variant")
    ap.add_argument("--tool", choices=("pahole", "gdb"), help="force one tool")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args(argv)
    try:
        text = Path(a.console).read_text(errors="replace")
    except OSError as e:
        print(f"cannot read {a.console}: {e.strerror}", file=sys.stderr)
        return 2
    out = []
    for sig in fold(parse(text)):
        lay = report_layout(sig.first, a.artifacts, tool=a.tool)
        if lay is None:
            continue
        out.append((sig.title, lay))
    if a.json:
        json.dump({"version": JSON_VERSION, "layouts": [
            {"title": t, **l.to_json()} for t, l in out]}, sys.stdout, indent=1)
        print()
    else:
        for t, lay in out:
            print(f"== {t}")
            print(lay.format_text(indent="  "))
    return 0


if __name__ == "__main__":
    sys.exit(main())
