"""``irds:`` qrels and queries through the CLI, on a dataset the test registers with the real
``ir_datasets`` (local files only, nothing downloaded), and TREC topic files."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from docket.cli.main import app, main
from docket.ir.formats import read_qrels
from docket.ir.queries import read_queries
from docket.llm.fake import register_fake

from .conftest import QRELS, QUERIES

runner = CliRunner()
# A single judge that calls everything irrelevant (escalations of single judges are another
# matter: their review payload is refused upstream).
NO = register_fake("irds-no", lambda request: "LABEL: irrelevant\nREASONING: scripted")


def test_irds_qrels_and_queries_are_read(irds_id: str) -> None:
    assert read_qrels(f"irds:{irds_id}") == QRELS
    assert read_queries(f"irds:{irds_id}") == QUERIES


def test_holes_find_and_eval_systems_take_irds_qrels(irds_id: str, bench) -> None:
    runs = [str(r) for r in bench.runs]
    result = runner.invoke(
        app, ["holes", "find", "--qrels", f"irds:{irds_id}", "--depth", "3", "--runs", *runs]
    )
    assert result.exit_code == 0, result.output
    assert "11 pairs, 6 unjudged" in result.output
    from_file = runner.invoke(
        app, ["eval", "systems", "--qrels", str(bench.qrels), "--runs", *runs]
    )
    from_irds = runner.invoke(
        app, ["eval", "systems", "--qrels", f"irds:{irds_id}", "--runs", *runs]
    )
    assert from_irds.exit_code == 0, from_irds.output
    assert from_irds.output == from_file.output


def test_irds_grades_are_checked(irds_id: str) -> None:
    result = runner.invoke(
        app, ["holes", "find", "--qrels", f"irds:{irds_id}", "--grades", "0,1", "--runs", "x"]
    )
    assert result.exit_code != 0
    assert "unknown relevance value 2" in str(result.exception)


def _main(monkeypatch, capsys, *args: str) -> tuple[int, str]:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(sys, "argv", ["docket", *args])
    with pytest.raises(SystemExit) as caught:
        main()
    return caught.value.code, capsys.readouterr().err.strip()


def test_missing_extra_is_named(monkeypatch, capsys, bench) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setitem(sys.modules, "ir_datasets", None)  # import fails as if not installed
    code, err = _main(
        monkeypatch, capsys, "holes", "find", "--qrels", "irds:x/y", "--runs", str(bench.runs[0])
    )
    assert code == 2 and "ir_datasets" in err and "[ir]" in err and "\n" not in err


TOPICS = """<top>
<num> Number: 301
<title> International Organized Crime

<desc> Description:
Identify organizations that participate in international criminal activity.

<narr> Narrative:
A relevant document must name an organization [and] its activity.
</top>

<top>
<num> Number: 302 </num>
<title> Poliomyelitis and Post-Polio </title>
<desc> Is the disease under control? </desc>
<narr> Narrative: Relevant documents report cases. </narr>
</top>
"""


def test_trec_topics_by_field(tmp_path: Path) -> None:
    path = tmp_path / "topics.301-302"
    path.write_text(TOPICS)
    assert read_queries(path) == {
        "301": "International Organized Crime",
        "302": "Poliomyelitis and Post-Polio",
    }
    assert read_queries(path, "desc")["301"] == (
        "Identify organizations that participate in international criminal activity."
    )
    assert read_queries(path, "narr")["301"].endswith("an organization [and] its activity.")
    assert read_queries(path, "title,desc")["302"] == (
        "Poliomyelitis and Post-Polio Is the disease under control?"
    )


def test_bad_topics_name_line_and_field(tmp_path: Path) -> None:
    from docket.errors import InputError, UserError

    path = tmp_path / "topics.txt"
    path.write_text(TOPICS + "\n<top>\n<num> Number: 303\n<desc> only a description\n</top>\n")
    with pytest.raises(InputError) as caught:
        read_queries(path)
    assert caught.value.one_line().startswith(f"{path}:19: field 'title'")
    with pytest.raises(UserError, match="unknown topic field"):
        read_queries(path, "summary")


def test_holes_fill_reads_trec_topics(bench, tmp_path: Path) -> None:
    topics = tmp_path / "topics.txt"
    topics.write_text(
        "".join(
            f"<top>\n<num> Number: {q}\n<title> {t}\n<desc> Description:\nwhy {t}\n</top>\n"
            for q, t in QUERIES.items()
        )
    )
    args = ["holes", "fill", "--qrels", str(bench.qrels), "--runs", *map(str, bench.runs)]
    args += ["--corpus", str(bench.corpus), "--corpus-index", str(bench.index), "--depth", "3"]
    args += ["--queries", str(topics), "--topic-field", "desc", "--method", "single"]
    args += ["--model", NO, "--db", str(tmp_path / "d.db")]
    args += ["--out-qrels", str(tmp_path / "c.qrels"), "--provenance", str(tmp_path / "p.jsonl")]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "skipped" not in result.output  # every hole found its query text
    from docket.store import load_judgments, open_store

    with open_store(tmp_path / "d.db").session() as session:
        queries = {r.query for r in load_judgments(session, "holes-qrels-single")}
    assert queries == {f"why {t}" for t in QUERIES.values()}
