"""The house stays as docs/architecture.md draws it: imports run down the layers, and none runs in a circle.

The graph is read from the code's own import statements (module level, inside
functions and under ``TYPE_CHECKING`` alike: an import hidden in a function is
still a dependency), so a change that makes a lower layer reach up, or two
modules lean on each other, fails here with the import that does it.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("connector", "converters", "smt")

#: Bottom to top; a module imports only from its own layer or the ones below (docs/architecture.md, "Layers").
LAYERS: list[tuple[str, ...]] = [
    ("connector.api", "connector.faults", "connector.gc_tuning", "connector.log_context", "connector.progress_feed"),
    ("converters", "smt"),
    ("connector.config",),
    ("connector.kafka",),
    ("connector.tolerance",),
    ("connector.iceberg",),
    ("connector.data",),
    ("connector.commit",),
    ("connector.task",),
    ("connector.takeover", "connector.maintenance"),
    ("connector.metrics", "connector.progress"),
    ("connector.job", "connector.dlq_replay"),
    ("connector.spark",),
    ("connector.herder", "connector.cluster"),
    ("connector.rest", "connector.deploy", "connector.embedded"),
    ("connector.commands", "connector.cli", "connector.demo", "connector.demo_rest", "connector"),
]


def _modules() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            name = ".".join(path.relative_to(ROOT).with_suffix("").parts)
            found[name.removesuffix(".__init__")] = path
    return found


MODULES = _modules()


def _resolve(name: str) -> str | None:
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def _imports(path: Path) -> list[tuple[int, str]]:
    """(line, module) for every project module ``path`` imports, wherever the import stands."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [f"{node.module}.{alias.name}" for alias in node.names]
        else:
            continue
        for name in names:
            if name.split(".")[0] in PACKAGES and (target := _resolve(name)) is not None:
                found.append((node.lineno, target))
    return found


EDGES = {module: _imports(path) for module, path in MODULES.items()}


def _layer(module: str) -> int:
    best, depth = None, -1
    for index, members in enumerate(LAYERS):
        for member in members:
            if (module == member or module.startswith(member + ".")) and len(member) > depth:
                best, depth = index, len(member)
    assert best is not None, f"{module} is in no layer: add its package to LAYERS and to docs/architecture.md"
    return best


def test_every_module_belongs_to_a_layer():
    for module in MODULES:
        _layer(module)


def test_imports_run_down_the_layers():
    upward = [f"{MODULES[module].relative_to(ROOT)}:{line} imports {target} (layer {_layer(target)} over "
              f"{_layer(module)})"
              for module, imports in EDGES.items() for line, target in imports
              if target != module and _layer(target) > _layer(module)
              and not (module == "connector" and target.startswith("connector.api"))]
    assert not upward, "imports running up the layers:\n" + "\n".join(upward)


def test_converters_and_smts_know_only_the_connect_api():
    wrong = [f"{MODULES[module].relative_to(ROOT)}:{line} imports {target}"
             for module, imports in EDGES.items() if module.split(".")[0] in ("converters", "smt")
             for line, target in imports
             if target.split(".")[0] == "connector" and not target.startswith("connector.api")]
    assert not wrong, "\n".join(wrong)


def test_spark_is_known_only_under_connector_spark_and_above_it():
    spark_layer = _layer("connector.spark")
    wrong = []
    for module, path in MODULES.items():
        if _layer(module) >= spark_layer:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            wrong += [f"{path.relative_to(ROOT)}:{node.lineno} imports {name}" for name in names
                      if name.split(".")[0] in ("pyspark", "py4j")]
    assert not wrong, "\n".join(wrong)


def test_no_module_imports_run_in_a_circle():
    graph = defaultdict(set)
    for module, imports in EDGES.items():
        graph[module].update(target for _, target in imports if target != module)
    circles = _strongly_connected(graph)
    assert not circles, "import circles: " + "; ".join(" <-> ".join(sorted(c)) for c in circles)


def _strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's algorithm, iterative; the components of more than one module."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for root in list(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(component)
    return found
