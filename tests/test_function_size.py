"""House rule: small functions. No function in src/docket is over 60 lines, except a
typer command (decorated ``@<app>.command`` or registered by
``<app>.command(...)(function)``, as the CLI modules do) whose body, without its signature and
docstring, is under 30 lines: a command's long signature is flag declarations."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "docket"
MAX_LINES = 60
MAX_COMMAND_BODY = 30


def _registered(tree: ast.Module) -> set[str]:
    """Names of functions registered by a call ``<x>.command(...)(function)``."""
    names = set()
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Call)
            and isinstance(node.func.func, ast.Attribute)
            and node.func.func.attr == "command"
            and node.args
            and isinstance(node.args[0], ast.Name)
        ):
            names.add(node.args[0].id)
    return names


def _is_command(node: ast.FunctionDef | ast.AsyncFunctionDef, registered: set[str]) -> bool:
    """Whether ``node`` is a typer command: decorated ``@<x>.command`` or registered."""
    if node.name in registered:
        return True
    for dec in node.decorator_list:
        target = dec.func if isinstance(dec, ast.Call) else dec
        if isinstance(target, ast.Attribute) and target.attr == "command":
            return True
    return False


def _body_lines(node: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    """Lines of ``node``'s body after its signature and docstring."""
    body = node.body
    if (
        body
        and isinstance(body[0], ast.Expr)
        and isinstance(body[0].value, ast.Constant)
        and isinstance(body[0].value.value, str)
    ):
        body = body[1:]
    if not body:
        return 0
    return node.end_lineno - body[0].lineno + 1


def _offenders() -> list[str]:
    """Every function over the limit, as ``path:line name (N lines)``."""
    trees = {p: ast.parse(p.read_text(encoding="utf-8")) for p in sorted(SRC.rglob("*.py"))}
    # a command may be registered in another module of the CLI than the one defining it
    registered = set().union(*(_registered(t) for p, t in trees.items() if p.parent.name == "cli"))
    found = []
    for path, tree in trees.items():
        for node in ast.walk(tree):
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            length = node.end_lineno - node.lineno + 1
            if length <= MAX_LINES:
                continue
            if (
                path.parent.name == "cli"
                and _is_command(node, registered)
                and _body_lines(node) < MAX_COMMAND_BODY
            ):
                continue
            rel = path.relative_to(SRC.parent)
            found.append(f"{rel}:{node.lineno} {node.name} ({length} lines)")
    return found


def test_no_function_over_sixty_lines() -> None:
    """Every long function is listed, so one run shows all that need splitting."""
    offenders = _offenders()
    assert not offenders, "functions over 60 lines:\n" + "\n".join(offenders)


def test_checker_sees_a_long_function(tmp_path: Path) -> None:
    """The measure counts a function's full span and exempts only short-bodied commands."""
    long_body = "\n".join(f"    x{i} = {i}" for i in range(65))
    tree = ast.parse(f"@app.command()\ndef cmd():\n    '''doc'''\n{long_body}\n")
    node = tree.body[0]
    assert _is_command(node, set())
    assert not _is_command(ast.parse("def f():\n    pass\n").body[0], set())
    assert _registered(ast.parse("app.command('x')(f)\n")) == {"f"}
    assert _body_lines(node) == 65
    assert node.end_lineno - node.lineno + 1 == 67
