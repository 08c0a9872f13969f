"""The relay package's shape: no import cycle between its modules, modules of a readable size.

The import graph is read from the source with ``ast`` (module-level imports only, outside
``if TYPE_CHECKING:``), so a cycle is found even when import order happens to hide it at run
time. An import of the ``wayline.relay`` package itself is an edge only to the submodule it
names; Python's implicit import of parent packages is not an edge.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import wayline.relay

PACKAGE = "wayline.relay"
ROOT = Path(wayline.relay.__file__).resolve().parent
MAX_LINES = 600


def _modules() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for path in sorted(ROOT.rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join((PACKAGE, *parts))] = path
    return found


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _top_level_imports(tree: ast.Module) -> list[ast.Import | ast.ImportFrom]:
    found: list[ast.Import | ast.ImportFrom] = []
    pending: list[ast.stmt] = list(tree.body)
    while pending:
        node = pending.pop(0)
        if isinstance(node, ast.Import | ast.ImportFrom):
            found.append(node)
        elif isinstance(node, ast.If) and not _is_type_checking(node):
            pending.extend([*node.body, *node.orelse])
        elif isinstance(node, ast.Try):
            pending.extend([*node.body, *node.orelse, *node.finalbody])
    return found


def import_graph() -> dict[str, set[str]]:
    """Each relay module and the relay modules it imports at module level."""
    modules = _modules()
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        is_package = path.name == "__init__.py"
        for node in _top_level_imports(ast.parse(path.read_text(), str(path))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            else:
                base = node.module or ""
                if node.level:
                    anchor = name if is_package else name.rpartition(".")[0]
                    for _ in range(node.level - 1):
                        anchor = anchor.rpartition(".")[0]
                    base = f"{anchor}.{base}" if base else anchor
                for alias in node.names:
                    sub = f"{base}.{alias.name}"
                    targets.append(sub if sub in modules else base)
            for target in targets:
                if target in modules and target != name and target != PACKAGE:
                    graph[name].add(target)
                elif target == PACKAGE and name != PACKAGE:
                    graph[name].add(PACKAGE)
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle as a path of module names, or ``None``."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return [*stack[stack.index(nxt) :], nxt]
            if nxt not in state:
                found = visit(nxt)
                if found is not None:
                    return found
        stack.pop()
        state[node] = 2
        return None

    for start in sorted(graph):
        if start not in state:
            found = visit(start)
            if found is not None:
                return found
    return None


def test_relay_modules_import_without_cycles() -> None:
    """No chain of module-level imports inside wayline.relay leads back to where it started."""
    cycle = find_cycle(import_graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def test_the_cycle_finder_finds_a_planted_cycle() -> None:
    """The checker itself reports a cycle when one exists (so the test above can fail)."""
    graph = import_graph()
    graph[f"{PACKAGE}._calls.llm"].add(f"{PACKAGE}._calls.llm_stream")
    cycle = find_cycle(graph)
    assert cycle is not None and f"{PACKAGE}._calls.llm_stream" in cycle


@pytest.mark.parametrize("public", ["llm", "scope", "intercepts", "guardrails", "codecs", "plugin"])
def test_public_modules_are_thin(public: str) -> None:
    """Relay's public module paths only re-export: no function or class is defined there."""
    tree = ast.parse((ROOT / f"{public}.py").read_text())
    defined = [n.name for n in tree.body if isinstance(n, ast.FunctionDef | ast.ClassDef)]
    assert defined == []


def test_relay_modules_stay_readable() -> None:
    """No relay module is longer than 600 lines."""
    long = {
        name: n
        for name, path in _modules().items()
        if (n := len(path.read_text().splitlines())) > MAX_LINES
    }
    assert long == {}
