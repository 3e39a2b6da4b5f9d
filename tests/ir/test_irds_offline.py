"""The real ir_datasets package, with a dataset whose data is not on this machine: one line
naming the dataset and the part, never a download and never a traceback."""

from __future__ import annotations

import sys

import pytest

from docket.cli.main import main


@pytest.mark.parametrize(
    ("flag", "part"), [("--qrels", "qrels"), ("--queries", "queries"), ("--corpus", "docs")]
)
def test_data_not_downloaded_is_one_line_with_the_right_hint(
    tmp_path, monkeypatch, capsys, flag, part
):  # type: ignore[no-untyped-def]
    monkeypatch.setenv("IR_DATASETS_HOME", str(tmp_path / "irds"))
    dataset = "irds:msmarco-passage/trec-dl-2020"
    qrels = tmp_path / "q.txt"
    qrels.write_text("1 0 d1 1\n")
    run = tmp_path / "r.trec"
    run.write_text("1 Q0 d1 1 1.0 r\n1 Q0 d2 2 0.5 r\n")
    args = {"--qrels": ["holes", "find", "--qrels", dataset, "--runs", str(run)],
            "--queries": ["holes", "fill", "--qrels", str(qrels), "--runs", str(run),
                          "--corpus", str(tmp_path / "c.jsonl"), "--queries", dataset,
                          "--model", "fake:x", "--out-qrels", str(tmp_path / "o"),
                          "--provenance", str(tmp_path / "p")],
            "--corpus": ["holes", "find", "--qrels", str(qrels), "--runs", str(run),
                         "--corpus", "irds:msmarco-passage"]}[flag]  # fmt: skip
    (tmp_path / "c.jsonl").write_text('{"_id": "d2", "text": "t"}\n')
    monkeypatch.setattr(sys, "argv", ["docket", *args])
    with pytest.raises(SystemExit) as caught:
        main()
    err = capsys.readouterr().err
    assert caught.value.code == 2 and "Traceback" not in err and "Download failed" not in err
    assert f"the {part} of ir_datasets" in err and "export msmarco-passage" in err
    assert f" {part} > /dev/null" in err
