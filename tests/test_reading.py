"""The shared reading helpers, and the eight reader sites that gave tracebacks (issue 19)."""

from __future__ import annotations

import gzip
import json
import sys
from pathlib import Path

import pytest
from pydantic import BaseModel, ValidationError

from docket.adherence.record import read_records
from docket.adherence.rules.io import load_rules
from docket.adherence.rules.model import RulesFileError
from docket.errors import InputError
from docket.ir.formats import read_qrels, read_run
from docket.ir.queries import read_queries
from docket.reading import loads_json, numbered_lines, read_text, validation_error
from docket.relevance.pairs_io import read_pairs

DEEP_JSON = '{"a": ' * 100_000 + "1" + "}" * 100_000


def _write(path: Path, content: bytes) -> Path:
    path.write_bytes(content)
    return path


def _one_line(exc: pytest.ExceptionInfo[InputError]) -> str:
    shown = exc.value.one_line()
    assert "\n" not in shown, shown
    return shown


def test_a_byte_that_is_not_utf8_is_located_past_the_first_read_block(tmp_path: Path) -> None:
    # The text layer decodes 8 KiB blocks: the line comes from a second, binary pass.
    lines = [f"q{i} 0 d{i} 1\n".encode() for i in range(5000)]
    lines[4321] = b"q 0 d\xff 1\n"
    path = _write(tmp_path / "qrels.txt", b"".join(lines))
    with pytest.raises(InputError) as caught:
        read_qrels(path)
    assert _one_line(caught).startswith(f"{path}:4322: not UTF-8 text (byte 0xff at column 6)")


@pytest.mark.parametrize(
    ("name", "read", "content", "line"),
    [
        ("run.trec", read_run, b"q1 Q0 d1 1 2.0 t\nq1 Q0 d\xc3 2 1.0 t\n", 2),
        ("queries.tsv", read_queries, b"q1\tegg\nq2\tt\xe9a\n", 2),
        ("topics.txt", read_queries, b"<top><num>1</num><title>caf\xff</title></top>\n", 1),
        ("pairs.jsonl", read_pairs, b'{"qid": "q\x80"}\n', 1),
        ("records.jsonl", read_records, b'{"id": "a", "turns": []}\n\n{"id": "\xed\xa0\x80"}', 3),
    ],
)
def test_invalid_utf8_names_file_and_line(tmp_path: Path, name, read, content, line) -> None:  # type: ignore[no-untyped-def]
    path = _write(tmp_path / name, content)
    with pytest.raises(InputError) as caught:
        read(path)
    assert _one_line(caught).startswith(f"{path}:{line}: not UTF-8 text")


def test_gzipped_files_are_located_too(tmp_path: Path) -> None:
    path = tmp_path / "qrels.txt.gz"
    path.write_bytes(gzip.compress(b"q1 0 d1 1\nq1 0 d\xff 1\n"))
    with pytest.raises(InputError, match=r"qrels.txt.gz:2: not UTF-8 text"):
        read_qrels(path)
    assert list(numbered_lines(_write(tmp_path / "a.txt", b"x\n\n y\n"))) == [
        (1, "x\n"),
        (3, " y\n"),
    ]


def test_an_empty_topic_is_a_topic_without_a_number(tmp_path: Path) -> None:
    path = _write(tmp_path / "topics.txt", b"<top></top>\n")
    with pytest.raises(InputError) as caught:
        read_queries(path)
    assert _one_line(caught) == f"{path}:1: field 'num': topic without a <num>"


@pytest.mark.parametrize(
    ("name", "read", "content", "error"),
    [
        ("pairs.jsonl", read_pairs, DEEP_JSON, InputError),
        ("records.jsonl", read_records, DEEP_JSON, InputError),
        ("rules.yaml", load_rules, "name: t\nrules: " + "[" * 100_000, RulesFileError),
    ],
)
def test_deep_nesting_is_refused_in_one_line(tmp_path: Path, name, read, content, error) -> None:  # type: ignore[no-untyped-def]
    path = _write(tmp_path / name, content.encode())
    with pytest.raises(error) as caught:
        read(path)
    assert _one_line(caught).startswith(f"{path}")
    assert "nest" in caught.value.message


def test_a_tsv_field_may_be_as_long_as_a_jsonl_line(tmp_path: Path) -> None:
    text = "w " * 150_000  # 300 KB, over csv's 128 KiB default field limit
    path = _write(tmp_path / "pairs.tsv", f"qid\tquery\tdocid\ttext\nq1\tq\td1\t{text}\n".encode())
    assert read_pairs(path)[0].text == text.strip()


def test_a_yaml_error_is_one_line_with_its_line(tmp_path: Path) -> None:
    path = _write(tmp_path / "rules.yaml", b"name: s\nrules:\n  - id: a\n   text: b: c\n")
    with pytest.raises(RulesFileError) as caught:
        load_rules(path)
    shown = _one_line(caught)
    assert shown.startswith(f"{path}:4: not valid YAML: ")
    for content, where in [(b"name: s\x00\n", ":1: "), (b"name: s\nrules: [\n", ":3: ")]:
        with pytest.raises(RulesFileError) as caught:
            load_rules(_write(path, content))
        assert _one_line(caught).startswith(f"{path}{where}not valid YAML"), caught.value.message


def test_loads_json_refuses_what_python_cannot_convert() -> None:
    with pytest.raises(InputError, match=r"^f.jsonl:7: not usable JSON \(Exceeds the limit"):
        loads_json("9" * 5000, "f.jsonl", 7)
    with pytest.raises(
        InputError, match=r"^f.jsonl:7: not valid JSON \(Expecting value, column 1\)"
    ):
        loads_json("", "f.jsonl", 7)
    assert loads_json('{"a": [1, 1e999]}') == {"a": [1, float("inf")]}


def test_validation_error_names_the_field() -> None:
    class Inner(BaseModel):
        role: str

    class Outer(BaseModel):
        turns: list[Inner]

    with pytest.raises(ValidationError) as caught:
        Outer.model_validate({"turns": [{"role": "user"}, {"role": 3}]})
    error = validation_error(caught.value, "d.jsonl", 4)
    assert error.one_line() == "d.jsonl:4: field 'turns.1.role': Input should be a valid string"
    prefixed = validation_error(caught.value, "r.yaml", 2, prefix="rules[0]", error=RulesFileError)
    assert isinstance(prefixed, RulesFileError) and prefixed.field == "rules[0].turns.1.role"


def test_input_errors_quote_user_text_on_one_bounded_line(tmp_path: Path) -> None:
    # A docid with a line break and a megabyte-long label are shown escaped and cut.
    lines = [{"qid": "q\n1", "query": "x", "docid": "d", "text": "t", "label": "1" * 1_000_000}]
    path = _write(tmp_path / "pairs.jsonl", "".join(json.dumps(r) + "\n" for r in lines).encode())
    with pytest.raises(InputError) as caught:
        read_pairs(path)
    shown = _one_line(caught)
    assert shown.startswith(f"{path}:1: field 'label': not a binary label") and len(shown) < 600
    assert " characters) … " in shown


def test_a_folder_is_not_a_file(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="is a folder, not a file"):
        read_text(tmp_path)


def test_the_command_line_prints_one_line_and_exits_2(tmp_path: Path, monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    from docket.cli.main import main

    qrels = _write(tmp_path / "q.txt", b"q1 0 d1 1\n")
    run = _write(tmp_path / "A.txt", b"q1 Q0 d1 1 2.0 A\nq1 Q0 \xff 2 1.0 A\n")
    monkeypatch.setattr(sys, "argv", ["docket", "eval", "systems", "--qrels", str(qrels), "--runs", str(run)])  # fmt: skip
    with pytest.raises(SystemExit) as stop:
        main()
    err = capsys.readouterr().err.strip()
    assert stop.value.code == 2 and "Traceback" not in err
    assert err.splitlines()[-1].startswith(
        f"error: {run}:2: not UTF-8 text (byte 0xff at column 7)"
    )


def test_validation_errors_are_converted_in_one_place() -> None:
    # Hand conversions (reading exc.errors() and joining "loc") drifted apart at 10 sites;
    # every site now calls docket.reading. FastAPI's RequestValidationError is the web
    # kit's own (a request body, not a file) and keeps its handler.
    src = Path(__file__).resolve().parents[1] / "src" / "docket"
    allowed = {src / "reading.py", src / "web" / "errors.py"}
    offenders = [
        f"{path.relative_to(src)}:{number}"
        for path in sorted(src.rglob("*.py"))
        if path not in allowed
        for number, line in enumerate(path.read_text().splitlines(), start=1)
        if ".errors()" in line or '["loc"]' in line
    ]
    assert offenders == []


def test_rules_validate_prints_a_yaml_error_on_one_line(
    tmp_path: Path, monkeypatch, capsys
) -> None:  # type: ignore[no-untyped-def]
    from docket.cli.main import main

    path = _write(tmp_path / "rules.yaml", b"name: s\nrules:\n  - id: a\n    text: [unclosed\n")
    monkeypatch.setattr(sys, "argv", ["docket", "rules", "validate", str(path)])
    with pytest.raises(SystemExit) as stop:
        main()
    err = capsys.readouterr().err.strip()
    assert stop.value.code == 2 and len(err.splitlines()) == 1, err
    assert err.startswith(f"error: {path}:5: not valid YAML: "), err
    assert "(while parsing a flow sequence that starts on line 4)" in err, err
