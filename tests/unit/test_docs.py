"""The documentation keeps up with the CLI and with itself (issue #44):
every command and every option its --help shows is named somewhere in
docs/*.md, and every relative link of the front page, NEWS.md,
bench/README.md and docs/*.md leads to a file that exists and, with an
#anchor, to a heading of that file.

The parsers are walked as the man page walks them (harness.cli.manpage:
the delegated commands' own parsers, capture's usage text from its C
source); options whose help is suppressed are left out.  An option is
documented when its string appears as a word anywhere in docs/*.md: its
command's page is the place, but an option that several commands share
(--json, --case, the run settings) is described once.
"""

from __future__ import annotations

import argparse
import re
import unittest
from pathlib import Path

from harness.cli import capture, manpage
from harness.cli import main as cli

ROOT = Path(__file__).resolve().parents[2]
DOCS = sorted((ROOT / "docs").glob("*.md"))
LINKED = [ROOT / "README.md", ROOT / "NEWS.md", ROOT / "bench" / "README.md"] + DOCS


def docs_text() -> str:
    return "\n".join(p.read_text() for p in DOCS)


def _options(p: argparse.ArgumentParser, name: str, out: list[tuple[str, tuple[str, ...]]]):
    for a in p._actions:
        if isinstance(a, argparse._SubParsersAction):
            for sub, child in a.choices.items():
                _options(child, f"{name} {sub}", out)
            continue
        if a.help == argparse.SUPPRESS or not a.option_strings or isinstance(
                a, argparse._HelpAction):
            continue
        out.append((name, tuple(a.option_strings)))


def capture_options(text: str) -> list[tuple[str, ...]]:
    """The options of the capture tool's usage text: the first column of its
    option table ("  -o, --output FILE   ...", "  --bus N --address N  ...")."""
    out = []
    for line in text.splitlines():
        m = re.match(r"  (-\S.*?)(?:\s{2,}|$)", line)
        if not m:
            continue
        strings = re.findall(r"(?<![\w-])--?[A-Za-z][\w-]*", m.group(1))
        if m.group(1).startswith("-") and "," in m.group(1):    # -o, --output: one option
            out.append(tuple(strings))
        else:
            out += [(s,) for s in strings]
    return [o for o in out if o not in (("-h", "--help"),)]


def cli_options() -> list[tuple[str, tuple[str, ...]]]:
    """(command, its option strings) for every option --help shows."""
    top = cli.parser()
    out: list[tuple[str, tuple[str, ...]]] = []
    for a in top._actions:
        if a.option_strings and a.help != argparse.SUPPRESS and not isinstance(
                a, argparse._HelpAction):
            out.append(("dmaharness", tuple(a.option_strings)))
    for name, _, p in manpage.commands(top):
        if p is None:
            text = capture.usage_text()
            assert text, "capture's usage text is not readable from its C source"
            out += [(name, o) for o in capture_options(text)]
        else:
            _options(p, name, out)
    return out


def _word(s: str) -> str:
    return rf"(?<![\w-]){re.escape(s)}(?![\w-])"


def undocumented(text: str) -> list[str]:
    """Each option's long strings (aliases too) must appear; an option with
    only a short string, that string."""
    missing = []
    for name, strings in cli_options():
        want = [s for s in strings if s.startswith("--")] or list(strings)
        missing += [f"{name} {s}" for s in want if not re.search(_word(s), text)]
    return missing


# --- links ---------------------------------------------------------------------------------

def anchor(heading: str) -> str:
    """GitHub's anchor of a heading: lowercase, punctuation other than '-'
    and '_' dropped, spaces to '-'."""
    h = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading.strip())     # a link: its text
    return re.sub(r"[^\w\- ]", "", h.lower()).replace(" ", "-")


def _unfenced(text: str) -> str:
    """The text without its fenced code blocks."""
    return re.sub(r"^(```|~~~).*?^\1[^\n]*$", "", text, flags=re.S | re.M)


def _prose(text: str) -> str:
    """The text without fenced code blocks and inline code spans."""
    return re.sub(r"`[^`\n]*`", "", _unfenced(text))


def anchors(path: Path) -> set[str]:
    out: set[str] = set()
    seen: dict[str, int] = {}
    for line in _unfenced(path.read_text()).splitlines():
        m = re.match(r"#{1,6}\s+(.*?)\s*#*\s*$", line)
        if m:
            a = anchor(m.group(1))
            n = seen.get(a, 0)
            seen[a] = n + 1
            out.add(a if n == 0 else f"{a}-{n}")      # a repeated heading: -1, -2, ...
    out |= set(re.findall(r"<a\s+(?:name|id)=\"([^\"]+)\"", path.read_text()))
    return out


def links(path: Path) -> list[str]:
    """The relative link targets of a Markdown file: [text](target) and
    [ref]: target lines."""
    text = _prose(path.read_text())
    found = re.findall(r"\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)", text)
    found += re.findall(r"^\s*\[[^\]]+\]:\s*(\S+)", text, re.M)
    return [t for t in found if not re.match(r"[a-zA-Z][a-zA-Z0-9+.-]*:", t)]


def broken_links() -> list[str]:
    bad = []
    for page in LINKED:
        for target in links(page):
            rel, _, frag = target.partition("#")
            dest = (page.parent / rel).resolve() if rel else page
            where = f"{page.relative_to(ROOT)}: {target}"
            if not dest.exists():
                bad.append(f"{where}: no such file")
            elif frag and dest.suffix == ".md" and frag not in anchors(dest):
                bad.append(f"{where}: no heading #{frag} in {dest.relative_to(ROOT)}")
    return bad


class EveryOptionIsDocumented(unittest.TestCase):
    def test_the_walk_sees_every_command_and_their_options(self):
        opts = cli_options()
        names = {n.split()[0] for n, _ in opts}
        self.assertLessEqual({"dmaharness", "build", "run", "check", "reports", "diff",
                              "bisect-run", "capture", "sweep", "plan", "cache"}, names)
        self.assertIn(("run", ("--runs",)), opts)
        self.assertIn(("reports", ("--workers", "-j", "--jobs")), opts)
        self.assertIn(("capture", ("-o", "--output")), opts)
        self.assertIn(("capture", ("--address",)), opts)
        self.assertIn(("dmaharness", ("--version",)), opts)
        self.assertGreater(len(opts), 300)

    def test_every_command_is_named_in_the_docs(self):
        text = docs_text()
        missing = [name for name, _, _ in manpage.commands(cli.parser())
                   if not re.search(rf"`(?:\./)?(?:dmaharness )?{re.escape(name)}[` ]", text)]
        if not re.search(r"`(?:\./)?dmaharness help", text):
            missing.append("help")
        self.assertEqual(missing, [], "commands no page of docs/ names")

    def test_every_option_is_in_the_docs(self):
        self.assertEqual(undocumented(docs_text()), [],
                         "options of --help that no page of docs/ names (document each in the "
                         "page of its command)")

    def test_the_check_sees_a_missing_option(self):
        text = docs_text().replace("--per-boot", "--per_boot")
        self.assertIn("sweep --per-boot", undocumented(text))


class EveryLinkResolves(unittest.TestCase):
    def test_links_lead_to_files_and_headings(self):
        self.assertEqual(broken_links(), [])

    def test_githubs_anchor_rule(self):
        self.assertEqual(anchor("Your own tree: `--tree DIR`"), "your-own-tree---tree-dir")
        self.assertEqual(anchor("`make install`: dmaharness on the PATH"),
                         "make-install-dmaharness-on-the-path")
        self.assertEqual(anchor("Bisecting your own kernel tree (git bisect run)"),
                         "bisecting-your-own-kernel-tree-git-bisect-run")
        self.assertEqual(anchor("snake_case and 1.2"), "snake_case-and-12")

    def test_the_check_sees_a_broken_link(self):
        import tempfile
        with tempfile.TemporaryDirectory() as d:
            page = Path(d) / "p.md"
            page.write_text("# A page\n\n## Its part\n\n[ok](#its-part) [self](p.md#a-page) "
                            "[gone](q.md) [bad](p.md#nope) `[code](x.md)` [web](https://x/y)\n"
                            "```\n[fenced](z.md)\n```\n")
            self.assertEqual(links(page), ["#its-part", "p.md#a-page", "q.md", "p.md#nope"])
            self.assertEqual(anchors(page), {"a-page", "its-part"})

    def test_the_pages_are_walked(self):
        self.assertIn(ROOT / "docs" / "json.md", LINKED)
        self.assertGreater(sum(len(links(p)) for p in LINKED), 150)


class FrontPage(unittest.TestCase):
    """The README stays a front page (issue #44): reference goes to docs/."""

    LIMIT = 8000

    def test_the_readme_is_at_most_8000_characters(self):
        text = (ROOT / "README.md").read_text()
        self.assertLessEqual(len(text), self.LIMIT,
                             f"README.md is {len(text)} characters; move reference to docs/")

    def test_every_docs_page_is_linked_from_the_readme_and_links_back(self):
        readme = (ROOT / "README.md").read_text()
        for page in sorted((ROOT / "docs").glob("*.md")):
            with self.subTest(page=page.name):
                self.assertIn(f"docs/{page.name}", readme)
                self.assertIn("../README.md", page.read_text())


if __name__ == "__main__":
    unittest.main()
