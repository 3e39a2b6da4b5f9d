"""Imports flow one way: the store and the LLM layer at the bottom, engines below the runner.

Read from the source with ``ast`` (nothing is imported), so a forbidden import fails here
even in a function body that no other test runs.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"
# What a package may import of docket, besides itself (every import, lazy ones too).
# docket.writing (atomic files) imports nothing of docket, so it is as low as the store.
ALLOWED = {
    "docket.store": {"docket.errors", "docket.version", "docket.config"},
    "docket.llm": {"docket.errors", "docket.config", "docket.writing"},
}
# What an engine, the batch loop and the job API never import: a notebook, a Ray actor
# and the PyTerrier transformer run them without the command line.
FORBIDDEN = {
    "docket.relevance": {
        "docket.cli",
        "docket.runner",
        "docket.web",
        "docket.review",
        "docket.jobs",
    },
    "docket.adherence.verify": {"docket.cli", "docket.runner", "docket.web", "docket.review"},
    "docket.runner": {"docket.cli", "docket.jobs", "docket.web"},
    "docket.jobs": {"docket.cli", "docket.web", "docket.holes"},
    # hole work sits above the job API and finding holes (jobs, ir, relevance, store...)
    "docket.ir": {"docket.cli", "docket.web", "docket.jobs", "docket.holes"},
    "docket.holes": {"docket.cli", "docket.web", "docket.review"},
    # Audits sit above the store, the review queue and the job API, below the CLI.
    "docket.audit": {"docket.cli", "docket.web", "docket.review.web"},
}
# Circles closed only by imports inside functions: none is left (the provider registry
# loads providers through entry points, by name). No new one may appear.
KNOWN_LAZY_CIRCLES: set[frozenset[str]] = set()


def _name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_name(path): path for path in (SRC / "docket").rglob("*.py")}


def _top_level(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """Statements run at import time (``if TYPE_CHECKING`` blocks never run)."""
    for node in body:
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            continue
        yield node
        if isinstance(node, ast.If | ast.Try | ast.With):
            for block in ("body", "orelse", "finalbody"):
                yield from _top_level(getattr(node, block, []))
            for handler in getattr(node, "handlers", []):
                yield from _top_level(handler.body)


def imports_of(module: str, *, lazy: bool) -> set[str]:
    """The docket modules ``module`` imports (with ``lazy``: in function bodies too)."""
    path = MODULES[module]
    return imports_in(path.read_text(), module, package=path.name == "__init__.py", lazy=lazy)


def imports_in(source: str, module: str, *, package: bool, lazy: bool) -> set[str]:
    """The docket modules the source of ``module`` imports (``package``: an ``__init__``)."""
    tree = ast.parse(source)
    nodes = ast.walk(tree) if lazy else _top_level(tree.body)
    package_name = module if package else module.rpartition(".")[0]
    found: set[str] = set()
    for node in nodes:
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: from the package, one level up per extra dot
                parts = package_name.split(".")
                anchor = parts[: len(parts) - node.level + 1]
                base = ".".join([*anchor, *([node.module] if node.module else [])])
            # ``from package import submodule`` depends on the submodule
            found |= {f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else base
                      for a in node.names}  # fmt: skip
    return {name for name in found if name.split(".")[0] == "docket"} - {module}


def _within(name: str, package: str) -> bool:
    return name == package or name.startswith(package + ".")


def test_the_store_and_the_llm_layer_import_nothing_above_them() -> None:
    wrong = [
        f"{module} imports {name}"
        for package, allowed in ALLOWED.items()
        for module in MODULES
        if _within(module, package)
        for name in imports_of(module, lazy=True)
        if not _within(name, package) and not any(_within(name, a) for a in allowed)
    ]
    assert wrong == []


def test_engines_the_runner_and_the_job_api_never_import_the_cli() -> None:
    wrong = [
        f"{module} imports {name}"
        for package, forbidden in FORBIDDEN.items()
        for module in MODULES
        if _within(module, package)
        for name in imports_of(module, lazy=True)
        if any(_within(name, f) for f in forbidden)
    ]
    assert wrong == []


def private_imports_in(source: str, module: str, *, package: bool) -> list[str]:
    """``from other import _name`` of docket modules other than ``module`` itself."""
    tree = ast.parse(source)
    package_name = module if package else module.rpartition(".")[0]
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.ImportFrom):
            continue
        base = node.module or ""
        if node.level:
            parts = package_name.split(".")
            base = ".".join([*parts[: len(parts) - node.level + 1], *filter(None, [node.module])])
        if base.split(".")[0] != "docket" or base == module:
            continue
        found += [f"{base}.{a.name}" for a in node.names
                  if a.name.startswith("_") and not a.name.startswith("__")]  # fmt: skip
    return found


def test_no_module_imports_a_private_name_of_another() -> None:
    # A ``_name`` is the module's own; another module that needs it needs a public name.
    wrong = [
        f"{module} imports {name}"
        for module, path in MODULES.items()
        for name in private_imports_in(path.read_text(), module, package=path.name == "__init__.py")
    ]
    assert wrong == []


def test_the_private_import_reader_sees_relative_and_absolute_imports() -> None:
    source = "from docket.holes.run import _stem, load\nfrom .order import _Query\n"
    assert private_imports_in(source, "docket.holes.x", package=False) == [
        "docket.holes.run._stem",
        "docket.holes.order._Query",
    ]


def circles(*, lazy: bool) -> set[frozenset[str]]:
    """Every set of modules that import each other (strongly connected, more than one)."""
    graph = {m: {n for n in imports_of(m, lazy=lazy) if n in MODULES} for m in MODULES}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: set[frozenset[str]] = set()

    def visit(node: str) -> None:  # Tarjan's algorithm
        index[node] = low[node] = len(index)
        stack.append(node)
        for other in graph[node]:
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            members = {stack.pop()}
            while node not in members:
                members.add(stack.pop())
            if len(members) > 1:
                found.add(frozenset(members))

    for node in graph:
        if node not in index:
            visit(node)
    return found


def test_no_modules_import_each_other_at_import_time() -> None:
    assert circles(lazy=False) == set()


def test_no_new_circle_closes_through_imports_inside_functions() -> None:
    assert circles(lazy=True) - KNOWN_LAZY_CIRCLES == set()


def test_the_reader_finds_relative_submodule_and_lazy_imports() -> None:
    # The checks above pass on a clean tree; this shows what they see.
    source = (
        "from typing import TYPE_CHECKING\n"
        "from . import tables\n"
        "from ..relevance import types\n"
        "if TYPE_CHECKING:\n"
        "    import docket.cli\n"
        "def f():\n"
        "    from docket.runner.records import pair_from_record\n"
    )
    at_import = {"docket.store.tables", "docket.relevance.types"}
    assert imports_in(source, "docket.store.x", package=False, lazy=False) == at_import
    assert imports_in(source, "docket.store.x", package=False, lazy=True) == at_import | {
        "docket.cli",
        "docket.runner.records",
    }


def _third_party_imports(module: str) -> set[str]:
    tree = ast.parse(MODULES[module].read_text())
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            names.add(node.module.split(".")[0])
    return names


def test_the_batch_loop_and_the_engines_report_progress_without_rich() -> None:
    # Progress leaves them through callbacks; only the CLI draws bars (cli/progress.py).
    quiet = ("docket.runner", "docket.fanout", "docket.relevance", "docket.adherence.verify")
    wrong = [
        module
        for module in MODULES
        if any(_within(module, package) for package in quiet)
        and "rich" in _third_party_imports(module)
    ]
    assert wrong == []
    assert "rich" in _third_party_imports("docket.cli.progress")  # the reader sees it
