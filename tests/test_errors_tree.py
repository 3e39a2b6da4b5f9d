"""The exception tree drawn at the top of ``docket.errors`` is the real class hierarchy."""

from __future__ import annotations

import importlib
import pkgutil
import re

import docket
from docket import errors

NODE = re.compile(r"^(?P<indent>[ │├└─]*)(?P<name>[A-Z]\w+(?:Error)?)\b")


def _tree() -> list[tuple[str, str | None, str]]:
    """``(class, parent, line)`` for each node drawn in the docstring."""
    drawing = errors.__doc__.split("::", 1)[1].split("\n\n")[1]  # type: ignore[union-attr]
    stack: list[tuple[int, str]] = []
    nodes = []
    for line in drawing.splitlines():
        match = NODE.match(line.strip("\n")[4:])  # the block is indented by four spaces
        if not match:
            continue
        depth = len(match.group("indent")) // 4
        stack = [(d, n) for d, n in stack if d < depth]
        nodes.append((match.group("name"), stack[-1][1] if stack else None, line))
        stack.append((depth, match.group("name")))
    return nodes


def _docket_errors() -> dict[str, type]:
    """Every DocketError subclass defined in a docket module."""
    for module in pkgutil.walk_packages(docket.__path__, "docket."):
        if "web" in module.name or module.name.endswith(("__main__", "pyterrier_judge")):
            continue  # web apps and optional extras: imported by their own tests
        importlib.import_module(module.name)
    found: dict[str, type] = {}
    pending = [errors.DocketError]
    while pending:
        cls = pending.pop()
        if cls.__module__.startswith("docket"):
            found[cls.__name__] = cls
        pending += cls.__subclasses__()
    return found


def test_every_drawn_edge_is_a_real_subclass_and_every_error_is_drawn() -> None:
    classes = _docket_errors()
    nodes = _tree()
    drawn = {name for name, _, _ in nodes}
    assert drawn == set(classes), drawn ^ set(classes)
    for name, parent, _ in nodes:
        if parent is not None:
            assert classes[parent] in classes[name].__bases__, (name, parent)
    for name, cls in classes.items():
        bases = {b.__name__ for b in cls.__bases__ if b.__name__ in classes}
        parents = {p for n, p, _ in nodes if n == name and p}
        mentioned = {b for b in bases for _, _, line in nodes if f"also a {b}" in line}
        assert bases <= parents | mentioned, (name, bases, parents)
