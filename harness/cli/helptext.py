"""What every command's --help is made of: paragraphs, examples, exit codes.

One formatter (``Formatter``: a paragraph of prose is wrapped to the
terminal, at most 79 columns; an indented line, a table row or an example,
is kept as written) and one way to write the epilog (``epilog``: the
examples, then the exit codes that command can return, with their
meanings from one table, then notes).  Standard library and harness.errors
only: `dmaharness reports` imports it before anything else.
"""

from __future__ import annotations

import argparse
import textwrap
from typing import Iterable, Mapping, Sequence

from .. import errors

WIDTH = 79                  # the most columns a line of help takes

# what each code means, for every command that can return it (harness.errors)
MEANING: dict[int, str] = {
    errors.EXIT_OK: "success",
    errors.EXIT_VERDICT: "the check's verdict is negative (a diff that does not match its "
                         "case)",
    errors.EXIT_USAGE: "usage error (a bad command line)",
    errors.EXIT_ENV: "environment: a package, tool or kernel source is missing (make deps), "
                     "the cache folder is unusable, standard output is closed or full",
    errors.EXIT_INPUT: "bad input: a series, patch, fragment, case, console log or config "
                       "option is wrong",
    errors.EXIT_BUILD: "the kernel or a C helper failed to build",
    errors.EXIT_GUEST: "the guest failed: panic, hang, silence, missing end marker, bad "
                       "status",
    errors.EXIT_DEVICE: "the fake device failed (crashed, never listened)",
    errors.EXIT_INCOMPLETE: "a campaign is incomplete: jobs are missing or failed (collect "
                            "lists them)",
    errors.EXIT_UNREACHABLE: "check, plan check: nothing the patches touch is reached by "
                             "a device of the harness",
    errors.EXIT_INTERNAL: "a bug of dmaharness (the traceback is printed)",
    errors.EXIT_INTERRUPTED: "interrupted (Ctrl-C, SIGTERM)",
}

# what any command run through harness.cli.main can answer: done, a bad command
# line, a closed standard output or unusable cache, a bug of ours, Ctrl-C
ALWAYS = (errors.EXIT_OK, errors.EXIT_USAGE, errors.EXIT_ENV, errors.EXIT_INTERNAL,
          errors.EXIT_INTERRUPTED)

RUN_SETTINGS = ("run settings (boot and flood options): defaults < the profile's run\n"
                "table < a case's [run] table < the flags given on the command line.")
CACHE = "The cache folder is $DMAHARNESS_CACHE, else ~/.cache/dmaharness."

HEADER = "exit codes:"

# the commands by area, as the overview (`dmaharness`, `dmaharness help`,
# --help), the man page and docs/cli.md list them; every command is in one
# group (tests/unit/cli/test_overview.py)
GROUPS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("kernels", ("build", "boot", "kunit")),
    ("runs and verdicts", ("run", "case", "check", "diff", "reports")),
    ("bisecting", ("bisect", "bisect-run")),
    ("sweeps", ("sweep", "site-report", "usb-drivers")),
    ("campaigns", ("plan", "campaign", "collect")),
    ("mails", ("mail",)),
    ("the tool", ("cache", "profiles", "sources", "capture", "help")),
)
OTHER = "other"             # a command no group names yet: listed, never lost
# the title of the top parser's group of commands (--help, the overview)
COMMANDS = "commands (`dmaharness help COMMAND`: its options, examples, exit codes)"
MORE = "`dmaharness --help`: these, examples and every exit code."

# an option renamed so that one flag means one concept (#44): its old
# strings stay as aliases for a release, and its help says so in these words
# (tests/unit/cli/test_aliases.py finds every such note and checks that both
# spellings parse the same)
OLD_SPELLING = "old spelling: "


def old_spelling(*strings: str, note: str = "") -> str:
    """The note an option's help ends with when ``strings`` are its old
    spellings, kept as aliases: " (old spelling: --x, kept for a release)"."""
    return f" ({OLD_SPELLING}{'/'.join(strings)}, kept for a release{note})"


# an option only a campaign's job uses (its plan writes it, a user has no
# reason to): parsed as any other, hidden from --help and the man page; its
# help stays on the action, for the tests and docs/campaigns.md
JOB_HELP = "job_help"


def job_only(group, *strings: str, help: str, **kw) -> argparse.Action:
    """``group.add_argument(*strings, **kw)`` hidden from --help (SUPPRESS), its
    text kept as the action's JOB_HELP."""
    action = group.add_argument(*strings, help=argparse.SUPPRESS, **kw)
    setattr(action, JOB_HELP, help)
    return action


def help_of(action: argparse.Action) -> str:
    """An option's help text, a job-only option's hidden one too."""
    if action.help == argparse.SUPPRESS:
        return getattr(action, JOB_HELP, "")
    return action.help or ""


def table(codes: Iterable[int], meaning: Mapping[int, str] | None = None, *,
          header: str = HEADER) -> str:
    """The exit-code table of a --help: each code once, in order, its meaning
    (``meaning`` overrides the shared one) wrapped under it."""
    meaning = meaning or {}
    lines = [header]
    for c in sorted(set(codes)):
        lines += textwrap.wrap(meaning.get(c, MEANING.get(c, "")), WIDTH,
                               initial_indent=f"  {c:<4} ", subsequent_indent=" " * 7,
                               break_on_hyphens=False)
    return "\n".join(lines)


def examples(lines: Sequence[str]) -> str:
    """An examples block: commands and '# comment' lines, indented."""
    return "examples:\n" + "\n".join("  " + ln if ln else "" for ln in lines)


def epilog(example_lines: Sequence[str], codes: Iterable[int] = (), *,
           meaning: Mapping[int, str] | None = None, always: Iterable[int] = ALWAYS,
           notes: Sequence[str] = (CACHE,)) -> str:
    """A command's epilog: its examples, the exit codes it can return (``always``
    plus ``codes``), then notes (paragraphs)."""
    parts = [examples(example_lines), table((*always, *codes), meaning), *notes]
    return "\n\n".join(p for p in parts if p) + "\n"


def grouped(names: Iterable[str]) -> list[tuple[str, list[str]]]:
    """``names`` under the titles of GROUPS, in GROUPS' order; a name no group
    holds goes under OTHER, a group none of ``names`` is in is left out."""
    names = list(names)
    out = [(title, [n for n in group if n in names]) for title, group in GROUPS]
    known = {n for _, group in GROUPS for n in group}
    out.append((OTHER, [n for n in names if n not in known]))
    return [(title, group) for title, group in out if group]


def command_list(helps: Mapping[str, str], width: int = WIDTH) -> str:
    """The commands under their groups' titles, each with its one-line help
    in a column (wrapped under it when longer): the overview's list."""
    col = 4 + max(len(n) for n in helps) + 2
    lines = []
    for title, names in grouped(helps):
        lines.append(f"  {title}:")
        for n in names:
            lines += textwrap.wrap(" ".join((helps[n] or "").split()), width,
                                   initial_indent=f"    {n:<{col - 4}}",
                                   subsequent_indent=" " * col, break_on_hyphens=False,
                                   break_long_words=False) or [f"    {n}"]
    return "\n".join(lines) + "\n"


def codes_of(help_text: str) -> dict[int, str]:
    """The exit codes a --help lists, with their meanings (the first table
    whose header starts with 'exit codes' or 'exit status'): the test's and
    the man page's reader of what ``table`` writes."""
    out: dict[int, str] = {}
    inside, last = False, None
    for ln in help_text.splitlines():
        low = ln.strip().lower()
        if not inside:
            inside = low.startswith(("exit codes", "exit status"))
            continue
        if not ln.strip():
            if out:
                break
            continue
        head = ln.split(None, 1)
        if ln.startswith("  ") and head[0].isdigit() and len(ln) - len(ln.lstrip()) <= 4:
            last = int(head[0])
            out[last] = head[1].strip() if len(head) > 1 else ""
        elif last is not None and ln.startswith(" "):
            out[last] += " " + ln.strip().lstrip("}").strip()
        else:
            break
    return out


class Formatter(argparse.RawDescriptionHelpFormatter):
    """Descriptions and epilogs as paragraphs: a paragraph of unindented lines
    is wrapped to the terminal (at most WIDTH columns), one holding an
    indented line (an example, a table) is kept as written."""

    def _fill_text(self, text, width, indent):
        width = min(width, WIDTH - len(indent))
        out = []
        for para in text.split("\n\n"):
            lines = para.strip("\n").splitlines()
            if lines and not any(ln[:1].isspace() for ln in lines):
                out.append(textwrap.fill(" ".join(ln.strip() for ln in lines), width,
                                         initial_indent=indent, subsequent_indent=indent,
                                         break_on_hyphens=False, break_long_words=False))
            else:
                out.append("\n".join(indent + ln if ln else "" for ln in lines))
        return "\n\n".join(out) + ("\n" if text.endswith("\n") else "")

    def _split_lines(self, text, width):
        """An option's help, wrapped without breaking an option at its hyphens
        (--no-base-series stays one word)."""
        return textwrap.wrap(" ".join(text.split()), width, break_on_hyphens=False)


class Overview(Formatter):
    """The top parser's: its commands listed by area (command_list), not flat."""

    def _format_action(self, action):
        if isinstance(action, argparse._SubParsersAction):
            return command_list({c.dest: c.help for c in action._choices_actions},
                                min(self._width, WIDTH))
        return super()._format_action(action)
