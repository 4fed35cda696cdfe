"""The import graph of ``theory`` and ``verify`` is layered: nothing imports back up, and
nothing imports in a circle.

The graph is read from the source: every ``import`` statement, at module level or inside
a function (a deferred import is a dependency like any other), except those under
``if TYPE_CHECKING:`` (names for annotations only, never imported at run time).
``verify``'s packages are stacked in :data:`LAYERS`, top first; a package imports its own
modules and the packages of lower layers, never one of its own layer or above. ``theory``
lies below all of ``verify`` and never imports it.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

#: ``verify``'s packages (and top-level modules), top layer first.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("verify", "verify.__main__"),  # the public names (imported lazily); python -m verify
    ("verify.cli",),  # the command line
    ("verify.ledger",),  # the claim ledger: reads the check catalogue and the results
    ("verify.realworld", "verify.encoder"),  # real-world experiments; the appendix encoder
    ("verify.checks", "verify.experiments", "verify.prediction"),
    ("verify.plots", "verify.sim"),  # figures from tables; one run
    ("verify.runtime", "verify.measures"),  # executors, store, interrupts; regimes
    ("verify.output",),  # atomic files, tables, provenance
)

Graph = Mapping[str, Iterable[str]]


def module_files(root: Path, packages: Iterable[str] = ("theory", "verify")) -> dict[str, Path]:
    """Every module under ``packages``, by dotted name (a package by its own name)."""
    found = {}
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            parts = path.relative_to(root).with_suffix("").parts
            found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def imported(node: ast.Import | ast.ImportFrom, module: str, is_package: bool) -> list[str]:
    """The dotted names an import statement reads (``from a import b``: ``a.b``)."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    base = node.module or ""
    if node.level:  # relative: resolved against the importing module's package
        parts = module.split(".")
        anchor = parts[: len(parts) - node.level + is_package]
        base = ".".join([*anchor, *([base] if base else [])])
    return [f"{base}.{alias.name}" for alias in node.names]


def run_time_nodes(tree: ast.AST) -> list[ast.AST]:
    """Every node of ``tree`` outside ``if TYPE_CHECKING:`` blocks."""
    found: list[ast.AST] = []
    pending = [tree]
    while pending:
        node = pending.pop()
        found.append(node)
        if isinstance(node, ast.If) and ast.unparse(node.test).endswith("TYPE_CHECKING"):
            pending.extend(node.orelse)
            continue
        pending.extend(ast.iter_child_nodes(node))
    return found


def imports_of(path: Path, module: str, known: Iterable[str]) -> set[str]:
    """The known modules that ``path`` imports anywhere in its body: for each name read, the
    longest known module it names or lies in (``from a import f``: ``a``)."""
    known = set(known)
    targets = set()
    for node in run_time_nodes(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import | ast.ImportFrom):
            for name in imported(node, module, path.name == "__init__.py"):
                parts = name.split(".")
                prefixes = (".".join(parts[:k]) for k in range(len(parts), 0, -1))
                owner = next((prefix for prefix in prefixes if prefix in known), None)
                if owner is not None and owner != module:
                    targets.add(owner)
    return targets


def import_graph(root: Path = ROOT) -> dict[str, set[str]]:
    """Module -> the modules of ``theory`` and ``verify`` it imports."""
    files = module_files(root)
    return {module: imports_of(path, module, files) for module, path in files.items()}


def circles(graph: Graph) -> list[list[str]]:
    """The strongly connected components with more than one node (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    nodes = set(graph) | {t for targets in graph.values() for t in targets}

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in graph.get(node, ()):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(nodes):
        if node not in index:
            visit(node)
    return sorted(found)


def unit_of(module: str, units: Iterable[str]) -> str | None:
    """The layered package (or module) ``module`` belongs to; a top-level name such as
    ``verify`` stands for its ``__init__`` alone."""
    inside = [u for u in units if module == u or ("." in u and module.startswith(u + "."))]
    return max(inside, key=len, default=None)


def package_graph(graph: Graph, units: Iterable[str]) -> dict[str, set[str]]:
    """The graph between packages: an edge where one of a package's modules imports another
    package's."""
    units = list(units)
    edges: dict[str, set[str]] = {}
    for module, targets in graph.items():
        source = unit_of(module, units)
        if source is None:
            continue
        for target in targets:
            owner = unit_of(target, units)
            if owner is not None and owner != source:
                edges.setdefault(source, set()).add(owner)
    return edges


def imports_back_up(graph: Graph, layers: tuple[tuple[str, ...], ...]) -> list[tuple[str, str]]:
    """Each (importer, imported) pair of modules whose packages are not in strictly lower
    layers: an import sideways within a layer or up to a higher one."""
    depth = {unit: level for level, units in enumerate(layers) for unit in units}
    wrong = []
    for module, targets in sorted(graph.items()):
        source = unit_of(module, depth)
        for target in sorted(targets):
            owner = unit_of(target, depth)
            if source and owner and owner != source and depth[owner] <= depth[source]:
                wrong.append((module, target))
    return wrong


def imports_of_verify_in_theory(graph: Graph) -> list[tuple[str, str]]:
    return sorted(
        (module, target)
        for module, targets in graph.items()
        if module.split(".")[0] == "theory"
        for target in targets
        if target.split(".")[0] == "verify"
    )


GRAPH = import_graph()
UNITS = [unit for units in LAYERS for unit in units]


def test_theory_never_imports_verify():
    assert imports_of_verify_in_theory(GRAPH) == []


def test_every_module_of_verify_is_in_a_layer():
    assert [m for m in GRAPH if m.startswith("verify") and unit_of(m, UNITS) is None] == []
    assert [unit for unit in UNITS if unit not in GRAPH] == []  # no layer names a ghost


def test_no_import_runs_back_up():
    assert imports_back_up(GRAPH, LAYERS) == []


def test_no_cycle_among_packages():
    assert circles(package_graph(GRAPH, UNITS)) == []


def test_no_circle_among_modules():
    assert circles(GRAPH) == []


def test_the_graph_is_read_from_the_source():
    """Module-level and deferred imports are both edges (known ones checked)."""
    assert "verify.cli.common" in GRAPH["verify.cli.experiments"]  # module level
    assert "verify.experiments.driver" in GRAPH["verify.cli.experiments"]  # in a command
    assert any(target.startswith("theory.") for target in GRAPH["verify.cli.common"])


def test_the_checks_report_a_wrong_graph():
    circle = {
        "verify.a.x": {"verify.b.y"},
        "verify.b.y": {"verify.c.z"},
        "verify.c.z": {"verify.a.x"},
    }
    assert circles(circle) == [["verify.a.x", "verify.b.y", "verify.c.z"]]
    assert circles({"verify.a.x": {"verify.b.y"}, "verify.b.y": set()}) == []
    layers = (("verify.a",), ("verify.b",), ("verify.c",))
    assert imports_back_up(circle, layers) == [("verify.c.z", "verify.a.x")]
    sideways = (("verify.a",), ("verify.b", "verify.c"))
    assert imports_back_up(circle, sideways) == [
        ("verify.b.y", "verify.c.z"),
        ("verify.c.z", "verify.a.x"),
    ]
    packages = package_graph(
        {"verify.a.x": {"verify.b.y"}, "verify.b.z": {"verify.a.w"}}, ["verify.a", "verify.b"]
    )
    assert circles(packages) == [["verify.a", "verify.b"]]
    assert imports_of_verify_in_theory({"theory.t": {"verify.a.x", "theory.u"}}) == [
        ("theory.t", "verify.a.x")
    ]


def test_imports_are_resolved_to_modules(tmp_path):
    """``from package import module`` names the module; a relative import is resolved."""
    package = tmp_path / "verify" / "p"
    package.mkdir(parents=True)
    (tmp_path / "verify" / "__init__.py").write_text("")
    (package / "__init__.py").write_text("from verify.p import b\n")
    (package / "a.py").write_text("def f():\n    from .b import g\n")
    (package / "b.py").write_text("from verify.p.a import f\nfrom verify import p\n")
    graph = {
        m: imports_of(p, m, module_files(tmp_path, ["verify"]))
        for m, p in module_files(tmp_path, ["verify"]).items()
    }
    assert graph == {
        "verify": set(),
        "verify.p": {"verify.p.b"},
        "verify.p.a": {"verify.p.b"},
        "verify.p.b": {"verify.p.a", "verify.p"},
    }
    assert circles(graph) == [["verify.p", "verify.p.a", "verify.p.b"]]
