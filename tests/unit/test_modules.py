"""The shape of harness/: every module imports on its own, no import circle,
no import hidden inside a function, and nothing imports the CLI."""

import ast
import subprocess
import sys
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
HARNESS = ROOT / "harness"
# an optional heavy dependency may be imported on use, with a comment saying so
OPTIONAL_MARK = "optional dependency"


def modules() -> dict[str, ast.Module]:
    return {p.stem: ast.parse(p.read_text(), str(p)) for p in sorted(HARNESS.glob("*.py"))}


def local_imports(tree: ast.Module) -> set[str]:
    """harness modules a module imports at its top level."""
    out = set()
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            if node.module:
                out.add(node.module.split(".")[0])
            else:
                out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("harness"):
            out.add((node.module.split(".") + [""])[1] or node.names[0].name)
    return out


class ModuleShape(unittest.TestCase):
    def test_each_module_imports_on_its_own(self):
        names = sorted(n for n in modules() if n != "__main__")   # __main__ runs the CLI
        code = ("import importlib, sys\nbad = []\nfor n in sys.argv[1:]:\n"
                "    try:\n        importlib.import_module('harness.' + n)\n"
                "    except Exception as e:\n        bad.append(f'{n}: {e!r}')\n"
                "print('\\n'.join(bad))\n")
        # one fresh interpreter per module: an import that only works after another fails here
        for n in names:
            r = subprocess.run([sys.executable, "-c", code, n], cwd=ROOT, capture_output=True,
                               text=True)
            self.assertEqual((r.returncode, r.stdout.strip()), (0, ""), f"{n}: {r.stderr[-800:]}")

    def test_no_import_circle(self):
        mods = modules()
        graph = {n: local_imports(t) & set(mods) for n, t in mods.items()}
        state: dict[str, int] = {}

        def visit(n: str, path: list[str]) -> None:
            state[n] = 1
            for m in sorted(graph[n]):
                if state.get(m) == 1:
                    self.fail("import circle: " + " -> ".join(path[path.index(m):] + [n, m])
                              if m in path else f"import circle through {n} -> {m}")
                if m not in state:
                    visit(m, path + [n])
            state[n] = 2

        for n in sorted(graph):
            if n not in state:
                visit(n, [])

    def test_no_module_imports_the_cli(self):
        for n, t in modules().items():
            if n not in ("cli", "__main__"):
                self.assertNotIn("cli", local_imports(t), n)

    def test_no_import_inside_a_function(self):
        for p in sorted(HARNESS.glob("*.py")):
            lines = p.read_text().splitlines()
            for node in ast.walk(ast.parse(p.read_text())):
                if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    continue
                for inner in ast.walk(node):
                    if isinstance(inner, (ast.Import, ast.ImportFrom)):
                        line = lines[inner.lineno - 1]
                        self.assertIn(OPTIONAL_MARK, line,
                                      f"{p.name}:{inner.lineno}: import inside {node.name}()")

    def test_the_checker_sees_a_circle(self):
        a = ast.parse("from . import b\n")
        self.assertEqual(local_imports(a), {"b"})
        self.assertEqual(local_imports(ast.parse("from .c import x\nimport os\n")), {"c"})


if __name__ == "__main__":
    unittest.main()
