"""The modules of the core distribution import one another without circles.

Each layer imports only downward (see docs/architecture.md, "Layers"), so no
module can reach itself by following imports. The graph is read from the source
with :mod:`ast`, without importing anything: every ``import`` and ``from …
import`` of ``hermes_core`` and ``hermes_memory_builtin``, at module level and
inside functions (a lazy import is still a dependency, only a later one), but
not those under ``if TYPE_CHECKING:``, which never run. Importing ``a.b.c``
counts as depending on ``a.b.c`` (or on the package ``a.b`` when ``c`` is a
name in it), not on the packages around it.
"""

from __future__ import annotations

import ast
from pathlib import Path

import hermes_memory_builtin

import hermes_core

PACKAGES = {
    "hermes_core": Path(hermes_core.__file__).parent,
    "hermes_memory_builtin": Path(hermes_memory_builtin.__file__).parent,
}

Edge = tuple[str, int]  # the importing file's module and the line of the import


def _modules() -> dict[str, Path]:
    modules = {}
    for package, root in PACKAGES.items():
        for path in sorted(root.rglob("*.py")):
            parts = [package, *path.relative_to(root).with_suffix("").parts]
            if parts[-1] == "__init__":
                parts.pop()
            modules[".".join(parts)] = path
    return modules


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(tree: ast.AST) -> list[ast.Import | ast.ImportFrom]:
    """Every import in *tree* that can run (all but those under ``if TYPE_CHECKING:``)."""
    found: list[ast.Import | ast.ImportFrom] = []
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.If) and _is_type_checking(node):
            stack.extend(node.orelse)
            continue
        if isinstance(node, ast.Import | ast.ImportFrom):
            found.append(node)
        stack.extend(ast.iter_child_nodes(node))
    return found


def _targets(module: str, path: Path, node: ast.Import | ast.ImportFrom) -> list[str]:
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if node.level:
        package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
        kept = package[: len(package) - node.level + 1]
        base = ".".join([*kept, node.module or ""]).strip(".")
    else:
        base = node.module or ""
    return [f"{base}.{alias.name}" for alias in node.names]


def import_graph() -> dict[str, dict[str, int]]:
    """For each module, the modules of ours it imports and the line of the first import."""
    modules = _modules()
    graph: dict[str, dict[str, int]] = {name: {} for name in modules}
    for module, path in modules.items():
        for node in _imports(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            for target in _targets(module, path, node):
                while target and target not in modules:
                    target = target.rpartition(".")[0]  # a name in a module: the module
                if target and target != module:
                    graph[module].setdefault(target, node.lineno)
    return graph


def cycles(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in graph[node]:
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for node in graph:
        if node not in index:
            visit(node)
    return groups


def test_the_graph_sees_module_level_and_lazy_imports() -> None:
    graph = import_graph()
    assert "hermes_core.errors" in graph["hermes_core.config"]  # at module level
    assert "hermes_core.hermes_compat.context" in graph["hermes_core.plugin_objects"]  # lazy
    assert "hermes_core.errors" in graph["hermes_memory_builtin.locking"]  # across packages


def test_the_cycle_finder_finds_a_circle() -> None:
    graph = {"a": {"b": 1}, "b": {"c": 2}, "c": {"a": 3}, "d": {"a": 4}}
    assert cycles(graph) == [["a", "b", "c"]]


def test_no_module_imports_itself_through_others() -> None:
    graph = import_graph()
    found = cycles(graph)
    described = [
        "\n".join(
            f"  {module} -> {target} (line {line})"
            for module in group
            for target, line in graph[module].items()
            if target in group
        )
        for group in found
    ]
    assert not found, "import circles (break each by moving code to the lower layer):\n" + (
        "\n".join(described)
    )
