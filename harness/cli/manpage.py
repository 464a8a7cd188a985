"""dmaharness.1, the man page, written from the parsers (`make install` runs it).

    python3 -m harness.cli.manpage [--share DIR] [--doc DIR] [-o FILE]

Every section comes from what --help prints: the top parser's description,
its commands by area (helptext.GROUPS) and exit codes, then each command's
usage, description, options, examples and exit codes (the delegated
commands' own parsers: reports, diff, bisect-run; capture's usage text
from its C source).  Options only a campaign's job uses are left out, as
--help leaves them out.  Standard
library only; roff as man(7) reads it.  --share and --doc name where the
installed copy keeps its data and its documentation (FILES, SEE ALSO).
"""

from __future__ import annotations

import argparse
import datetime
import os
import re
import sys
from pathlib import Path

from .. import jsonout, paths
from . import capture, helptext, logcli, reportscli
from . import main as cli
from .bisectrun import bisect_run_parser

SUMMARY = ("build KASAN and DMA-API-debug kernels, boot them in QEMU with fake devices, "
           "report DMA buffers that share cache lines")


def esc(text: str) -> str:
    """Text as roff reads it: backslashes, hyphens as \\- (options copy and
    search as typed), a line starting with '.' or "'" made literal."""
    text = text.replace("\\", "\\e").replace("-", "\\-")
    return "\n".join("\\&" + ln if ln[:1] in (".", "'") else ln for ln in text.split("\n"))


def paragraphs(text: str) -> list[str]:
    """A description or epilog as --help shows it: prose paragraphs filled by
    the reader, blocks with indented lines (examples, tables) kept as lines."""
    out = []
    for para in (text or "").split("\n\n"):
        lines = para.strip("\n").splitlines()
        if not lines:
            continue
        codes = helptext.codes_of(para)
        if lines[0].lower().startswith("exit codes") and codes and "}" not in para:
            out.append(esc(lines[0]) + "".join(f"\n.TP\n.B {c}\n{esc(m)}"
                                              for c, m in codes.items()))
        elif any(ln[:1].isspace() for ln in lines):
            out.append(".nf\n" + esc("\n".join(lines)) + "\n.fi")
        else:
            out.append(esc(" ".join(ln.strip() for ln in lines)))
    return out


def options(p: argparse.ArgumentParser) -> list[str]:
    """Each option and argument of a parser, grouped as --help groups them."""
    fmt = p._get_formatter()
    out = []
    for group in p._action_groups:
        acts = [a for a in group._group_actions if a.help != argparse.SUPPRESS
                and not isinstance(a, argparse._SubParsersAction)]
        if not acts:
            continue
        out.append(f".PP\n.I {esc(group.title)}")
        for a in acts:
            out.append(".TP\n.B " + esc(fmt._format_action_invocation(a)) + "\n"
                       + esc(" ".join(fmt._expand_help(a).split()) if a.help else ""))
    return out


def section(name: str, p: argparse.ArgumentParser | None, text: str | None = None) -> str:
    """One command: .SS NAME, its usage, description, options, epilog."""
    parts = [f".SS {esc(name)}"]
    if p is None:           # capture: its C tool's own usage text, and the wrapper's
        parts += [".PP\n" + x for x in paragraphs(text or "")]
        return "\n".join(parts)
    first, *rest = p.format_usage().strip().splitlines()
    usage = [first.removeprefix("usage: ")] + [ln[len("usage: "):] if ln.startswith(" " * 7)
                                               else ln for ln in rest]
    parts.append(".nf\n" + esc("\n".join(usage)) + "\n.fi")
    parts += [".PP\n" + x for x in paragraphs(p.description)]
    parts += options(p)
    parts += [".PP\n" + x for x in paragraphs(p.epilog)]
    return "\n".join(parts)


def commands(top: argparse.ArgumentParser) -> list[tuple[str, str, argparse.ArgumentParser | None]]:
    """(name, one-line help, parser) of every command, in --help's order (by
    area); the delegated ones with the parsers that really parse them."""
    sub = top._subparsers._group_actions[0]
    helps = {c.dest: c.help for c in sub._choices_actions}
    own = {"reports": reportscli.reports_parser(), "diff": logcli.diff_parser(),
           "bisect-run": bisect_run_parser(), "capture": None}
    order = [n for _, names in helptext.grouped(sub.choices) for n in names]
    return [(n, helps.get(n, ""), own[n] if n in own else sub.choices[n])
            for n in order if n != "help"]


def render(share: str, doc: str, version: str, date: str) -> str:
    os.environ["COLUMNS"] = "74"            # argparse's usage lines, within man's indent
    top = cli.parser()
    out = [f'.TH DMAHARNESS 1 "{date}" "dmaharness {esc(version)}" "User Commands"',
           ".nh", ".ad l",             # no hyphens in options and paths, a ragged right
           ".SH NAME", f"dmaharness \\- {esc(SUMMARY)}",
           ".SH SYNOPSIS",
           ".B dmaharness\n.I COMMAND\n.RI [ options ]",
           ".br\n.B dmaharness help\n.RI [ COMMAND ]",
           ".br\n.B dmaharness \\-\\-version",
           ".SH DESCRIPTION"]
    out += paragraphs(top.description)
    out.append(".PP\nThe commands, by area:")
    cmds = commands(top)
    helps = {name: help_ for name, help_, _ in cmds}
    for title, names in helptext.grouped(helps):
        out.append(f".PP\n.I {esc(title)}")
        for name in names:
            out.append(f".TP\n.B {esc(name)}\n{esc(helps[name] or '')}")
    ex = top.epilog.split("\n\n")[0]
    out.append(".PP\n" + paragraphs(ex)[0])
    out.append(".SH COMMANDS")
    for name, _, p in cmds:
        out.append(section(name, p, (capture.usage_text() or "") + capture.WRAPPER
                           if p is None else None))
    out.append(".SH EXIT STATUS")
    out.append(esc("Each command's section lists the codes it can return; bisect-run has "
                   "the codes git bisect run reads, capture its C tool's.  All of them:"))
    for code, meaning in helptext.MEANING.items():
        out.append(f".TP\n.B {code}\n{esc(meaning)}")
    out.append(".SH ENVIRONMENT")
    out.append(".TP\n.B DMAHARNESS_CACHE\n" + esc(
        "the cache folder (default ~/.cache/dmaharness); it must lie outside the "
        "dmaharness folder"))
    out.append(".TP\n.B DMAHARNESS_CCACHE_REMOTE\n" + esc(
        "ccache's remote storage for every build (--ccache-remote)"))
    out.append(".SH FILES")
    out.append(".TP\n.I ~/.cache/dmaharness\n" + esc(
        "($DMAHARNESS_CACHE when set) everything dmaharness makes: unpacked kernel "
        "sources (src/), work trees "
        "(work/), built kernels (artifacts/), run folders with their console logs "
        "(runs/), ccache (ccache/), the C tools when the dmaharness folder is not "
        "writable (tools/); `dmaharness cache` lists it, `dmaharness cache prune` "
        "trims it"))
    out.append(f".TP\n.I {esc(share)}\n" + esc(
        "the harness, its patch series, kconfig fragments, device profiles and the "
        "sources of its C tools, which are built on first use in their own build/ "
        "folders when this folder is writable, else in the cache's tools/"))
    out.append(".SH SEE ALSO")
    out.append(".BR git\\-bisect (1),\n.BR qemu\\-system\\-x86_64 (1),\n.BR parallel (1),\n"
               ".BR sbatch (1)")
    out.append(".PP\n" + esc(f"The documentation: {doc}/README.md and {doc}/docs/."))
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python3 -m harness.cli.manpage",
                                 description="Write dmaharness.1 from the parsers.",
                                 allow_abbrev=False)
    ap.add_argument("--share", default=str(paths.REPO),
                    help="where the installed copy keeps its data (FILES)")
    ap.add_argument("--doc", default=str(paths.REPO), help="where its documentation is")
    ap.add_argument("-o", "--output", type=Path, help="the file (default: stdout)")
    a = ap.parse_args(argv)
    # the date of the version, reproducible: SOURCE_DATE_EPOCH when given
    stamp = os.environ.get("SOURCE_DATE_EPOCH")
    when = (datetime.datetime.fromtimestamp(int(stamp), datetime.timezone.utc)
            if stamp and stamp.isdigit() else datetime.datetime.now(datetime.timezone.utc))
    text = render(a.share, a.doc, cli.version(), when.strftime("%Y-%m-%d"))
    if re.search(r"[^\x00-\x7f]", text):       # roff wants escapes, not UTF-8
        text = re.sub(r"[^\x00-\x7f]", lambda m: f"\\[u{ord(m.group()):04X}]", text)
    if a.output:
        jsonout.write_text(a.output, text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
