"""Every Python snippet in README.md and docs/*.md runs, as written, against fake models.

The snippets name real models (``local``, ``openai:gpt-4o``); here those names, and the
default model, are registered fakes that answer in each protocol's format, so the code a
reader copies is the code that runs.
"""

from __future__ import annotations

import ast
import asyncio
import json
import re
import shutil
from pathlib import Path

import pytest

from docket.llm.fake import register_chat_fake, register_fake
from docket.llm.types import Request

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
SNIPPET = re.compile(r"```python\n(.*?)```", re.S)
MODEL_NAMES = re.compile(r'"(openai:[\w.-]+|local(?::[\w.-]+)?)"')


def _snippets() -> list[tuple[str, str]]:
    found = []
    for path in DOCS:
        for number, code in enumerate(SNIPPET.findall(path.read_text()), start=1):
            found.append((f"{path.relative_to(ROOT)}#{number}", code))
    return found


def _relevance(request: Request) -> dict:
    user = next(m.content for m in request.messages if m.role == "user")
    relevant = "six minutes" in user or "degrees" in user
    fields = {"label": "relevant" if relevant else "irrelevant", "evidence": ["S1"],
              "reasoning": "the first sentence decides"}  # fmt: skip
    if request.json_schema and "grade" in json.dumps(request.json_schema):
        fields = {"grade": 3 if relevant else 0, **fields}
    return fields


def _adherence(request: Request) -> str:
    system = request.messages[0].content if request.messages else ""
    return "The reply follows the rule.\nVERDICT: PASS" if "VERDICT" in system else "PASS"


RELEVANCE = register_chat_fake("doc-relevance", _relevance)
ADHERENCE = register_fake("doc-adherence", _adherence)


@pytest.mark.parametrize(("where", "code"), _snippets(), ids=[w for w, _ in _snippets()])
def test_snippet_runs(where: str, code: str, tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    project = tmp_path / "project"  # snippets run from a project root, shared/ beside it
    shutil.copytree(ROOT / "examples", project / "examples")
    shutil.copy(ROOT / "examples" / "sop" / "rules.yaml", project / "rules.yaml")
    (tmp_path / "shared").symlink_to(ROOT.parent / "shared")
    monkeypatch.chdir(project)
    monkeypatch.setenv("DOCKET_MODEL", RELEVANCE)
    monkeypatch.setenv("DOCKET_CACHE", "off")
    fake = ADHERENCE if "adherence" in code else RELEVANCE
    source = MODEL_NAMES.sub(f'"{fake}"', code)
    compiled = compile(source, where, "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
    result = eval(compiled, {"__name__": "__snippet__"})  # noqa: S307 - the project's own docs
    if asyncio.iscoroutine(result):
        asyncio.run(result)


def test_the_snippets_are_found() -> None:
    where = [w for w, _ in _snippets()]
    assert "README.md#1" in where and any(w.startswith("docs/") for w in where)


BLOCK = re.compile(r"```(?:bash|sh|console)?\n(.*?)```", re.S)
FLAG = re.compile(r"(?<![\w-])(--[a-z][a-z0-9-]*)")


def _command_lines() -> list[tuple[str, str]]:
    """``(doc, command)`` for every ``docket ...`` line of the docs' shell blocks."""
    found = []
    for path in DOCS:
        for block in BLOCK.findall(path.read_text()):
            for line in block.replace("\\\n", " ").splitlines():
                for part in re.split(r"&&|;", line):
                    part = part.split(" #")[0].strip()
                    if part.startswith("docket "):
                        found.append((str(path.relative_to(ROOT)), part))
    return found


def _resolve(words: list[str]):  # type: ignore[no-untyped-def]
    import typer

    from docket.cli.main import app

    command = typer.main.get_command(app)
    while hasattr(command, "commands"):
        names = command.list_commands(None)  # type: ignore[attr-defined]
        if words and words[0] in names:
            command = command.get_command(None, words.pop(0))  # type: ignore[attr-defined]
        elif "run" in names:  # `docket verify FILE` runs `docket verify run FILE`
            command = command.get_command(None, "run")  # type: ignore[attr-defined]
        else:
            break
    return command


def test_every_documented_command_and_flag_exists() -> None:
    lines = _command_lines()
    assert len(lines) > 30
    wrong = []
    for doc, line in lines:
        words = line.split()[1:]
        command = _resolve(list(words))
        if hasattr(command, "commands"):
            wrong.append(f"{doc}: '{line}' names no command")
            continue
        known = {o for p in command.params for o in (*p.opts, *getattr(p, "secondary_opts", []))}
        wrong += [f"{doc}: {flag} in '{line}'" for flag in FLAG.findall(line) if flag not in known]
    assert wrong == []
