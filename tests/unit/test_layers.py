"""The shape of harness/: packages in layers, each importing only those below it.

The rule (docs/layout.md, "The code"): the shared leaves at the top of harness/
(errors, paths, proc, jsonout, progress, files) sit at the bottom; then, in this
order, the packages kernel, devices, boot, reports, the pipeline module,
then checks, campaign, output and cli.  A module may import from its own
package and from any layer below its own, never from a layer above; no
import hides inside a function (an optional heavy dependency may, with a
comment saying so); no circle; every module imports on its own.
"""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HARNESS = ROOT / "harness"
OPTIONAL_MARK = "optional dependency"

# bottom to top; a name is a package of harness/ or a module at its top
LAYERS: tuple[tuple[str, ...], ...] = (
    ("errors", "paths", "proc", "jsonout", "progress", "files"),
    ("kernel",),
    ("devices",),
    ("boot",),
    ("reports",),
    ("pipeline",),
    ("checks",),
    ("campaign",),
    ("output",),
    ("cli",),
    ("__main__",),
)
LAYER_OF = {name: i for i, names in enumerate(LAYERS) for name in names}


def modules(root: Path = HARNESS) -> dict[str, Path]:
    """Dotted module name (without 'harness.') -> file, packages as their __init__."""
    out = {}
    for p in sorted(root.rglob("*.py")):
        parts = p.relative_to(root).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        if parts:
            out[".".join(parts)] = p
    return out


def imports(name: str, path: Path, tree: ast.Module, known: set[str]) -> list[tuple[str, ast.AST]]:
    """(imported harness module, node) for every import of harness code in ``tree``."""
    is_pkg = path.name == "__init__.py"
    pkg = name.split(".") if is_pkg else name.split(".")[:-1]
    out = []
    for node in ast.walk(tree):
        targets: list[str] = []
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = pkg[: len(pkg) - (node.level - 1)] if node.level > 1 else pkg
                if node.level - 1 > len(pkg):
                    continue
                mod = ".".join(base + ([node.module] if node.module else []))
            elif node.module and (node.module == "harness" or node.module.startswith("harness.")):
                mod = node.module[len("harness."):] if node.module != "harness" else ""
            else:
                continue
            for a in node.names:
                sub = f"{mod}.{a.name}" if mod else a.name
                targets.append(sub if sub in known else mod)
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.name.startswith("harness."):
                    targets.append(a.name[len("harness."):])
        out += [(t, node) for t in targets if t and t != name]
    return out


def layer(name: str) -> int:
    return LAYER_OF[name.split(".")[0]]


def check(root: Path = HARNESS) -> list[str]:
    """Every violation of the rule in the tree at ``root``, as one line each."""
    mods = modules(root)
    known = set(mods)
    problems, graph = [], {}
    for name, path in mods.items():
        text = path.read_text()
        tree = ast.parse(text, str(path))
        lines = text.splitlines()
        top = {id(n) for n in tree.body}
        top_level = name.split(".")[0]
        if top_level not in LAYER_OF:
            problems.append(f"{path.relative_to(root.parent)}: {top_level} is in no layer "
                            "(add it to LAYERS and docs/layout.md's table)")
            continue
        graph[name] = set()
        for target, node in imports(name, path, tree, known):
            where = f"{path.relative_to(root.parent)}:{node.lineno}"
            if id(node) not in top and OPTIONAL_MARK not in lines[node.lineno - 1]:
                problems.append(f"{where}: {name} imports {target} inside a function")
            if target.split(".")[0] not in LAYER_OF:
                continue
            graph[name].add(target)
            same_package = target.split(".")[0] == top_level and (root / top_level).is_dir()
            leaves = layer(target) == layer(name) == 0
            if not (same_package or leaves or layer(target) < layer(name)):
                problems.append(f"{where}: {name} (layer {top_level}) imports {target} "
                                f"(layer {target.split('.')[0]}), which is not below it")
    # circles, among modules
    state: dict[str, int] = {}

    def visit(n: str, path: list[str]) -> None:
        state[n] = 1
        for m in sorted(graph.get(n, ())):
            if state.get(m) == 1:
                cyc = path[path.index(m):] if m in path else [m]
                problems.append("import circle: " + " -> ".join(cyc + [n, m]))
            elif m not in state:
                visit(m, path + [n])
        state[n] = 2

    for n in sorted(graph):
        if n not in state:
            visit(n, [])
    return sorted(set(problems))


class Layers(unittest.TestCase):
    def test_the_tree_keeps_the_rule(self):
        self.assertEqual(check(), [])

    def test_each_module_imports_on_its_own(self):
        names = sorted(n for n in modules() if n != "__main__")   # __main__ runs the CLI
        code = ("import importlib, sys\nbad = []\nfor n in sys.argv[1:]:\n"
                "    try:\n        importlib.import_module('harness.' + n)\n"
                "    except Exception as e:\n        bad.append(f'{n}: {e!r}')\n"
                "print('\\n'.join(bad))\n")
        # a fresh interpreter per module: an import that only works after another fails here
        for n in names:
            r = subprocess.run([sys.executable, "-c", code, n], cwd=ROOT, capture_output=True,
                               text=True)
            self.assertEqual((r.returncode, r.stdout.strip()), (0, ""), f"{n}: {r.stderr[-800:]}")

    def test_every_package_says_what_it_is(self):
        for p in sorted(HARNESS.glob("*/__init__.py")):
            doc = ast.get_docstring(ast.parse(p.read_text())) or ""
            self.assertGreater(len(doc.split()), 30, f"{p.relative_to(ROOT)}: a short docstring "
                               "says what the package does, takes and gives, what to open first")


class TheCheckerSeesAViolation(unittest.TestCase):
    """The checker, on small trees written here: it would fail on each kind."""

    def tree(self, files: dict[str, str]) -> list[str]:
        d = Path(tempfile.mkdtemp(prefix="dmaharness-layers-")) / "harness"
        for rel, text in files.items():
            (d / rel).parent.mkdir(parents=True, exist_ok=True)
            (d / rel).write_text(text)
        self.addCleanup(shutil.rmtree, d.parent)
        return check(d)

    def test_upward_import_names_both_modules(self):
        got = self.tree({"__init__.py": "", "kernel/__init__.py": "", "kernel/a.py":
                         "from ..reports import engine\n", "reports/__init__.py": "",
                         "reports/engine.py": ""})
        self.assertTrue(any("kernel.a" in g and "reports.engine" in g for g in got), got)

    def test_import_inside_a_function(self):
        got = self.tree({"__init__.py": "", "errors.py": "", "reports/__init__.py": "",
                         "reports/b.py": "def f():\n    from .. import errors\n"})
        self.assertTrue(any("inside a function" in g for g in got), got)

    def test_circle_within_a_package(self):
        got = self.tree({"__init__.py": "", "checks/__init__.py": "",
                         "checks/a.py": "from . import b\n", "checks/b.py": "from . import a\n"})
        self.assertTrue(any("circle" in g for g in got), got)

    def test_a_module_in_no_layer(self):
        got = self.tree({"__init__.py": "", "stray.py": ""})
        self.assertTrue(any("in no layer" in g for g in got), got)

    def test_downward_and_absolute_imports_are_fine(self):
        got = self.tree({"__init__.py": "", "errors.py": "", "kernel/__init__.py": "",
                         "kernel/a.py": "from .. import errors\n",
                         "checks/__init__.py": "", "checks/c.py":
                         "from harness.kernel import a\nfrom ..errors import X\n"})
        self.assertEqual(got, [])


if __name__ == "__main__":
    unittest.main()
