"""``docket eval systems --ppi --audit-job``: the audit's answers correct the LLM labels."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from docket.audit.draw import audit_labels, draw_audit
from docket.cli.main import main
from docket.review.auth import add_reviewer
from docket.review.queue import record_decision, select_tasks
from docket.store.base import open_store
from tests.audit.test_draw import _job


def _answer(store, truth) -> None:  # type: ignore[no-untyped-def]
    with store.session() as session:
        add_reviewer(session, "ann")
        for task in select_tasks(session, job="j"):
            pair = task.payload
            record_decision(session, task.id, "ann", truth(pair["qid"], pair["docid"]))


def test_audit_answers_give_intervals_for_every_system(tmp_path: Path, monkeypatch, capsys):
    # 200 pairs over 7 queries, automatic label i % 2; the reviewers (truth) call every
    # pair whose number is a multiple of 3 relevant, so a third of the labels are wrong.
    db = str(tmp_path / "a.db")
    store = open_store(db)
    _job(store)
    draw_audit(store, "j", 60, seed=1)

    def truth(qid: str, docid: str) -> int:
        return int(int(docid[1:]) % 3 == 0)

    _answer(store, truth)
    assert all(p.human_label is not None for p in audit_labels(store, "j"))
    store.close()
    docs = {f"q{q}": [f"d{i}" for i in range(200) if i % 7 == q] for q in range(7)}
    # Completed qrels as exported after the audit: the reviewers' answers on audited pairs
    # (the evaluation must put the automatic labels back there).
    audited = {(p.qid, p.docid) for p in audit_labels(open_store(db), "j")}
    completed = tmp_path / "completed.qrels"
    completed.write_text(
        "".join(
            f"{q} 0 {d} {truth(q, d) if (q, d) in audited else int(d[1:]) % 2}\n"
            for q, ds in docs.items()
            for d in ds
        )
    )
    runs = []
    for name, key in (("odd", lambda d: -(int(d[1:]) % 2)), ("third", lambda d: -truth("", d))):
        path = tmp_path / f"{name}.trec"
        lines = [
            f"{q} Q0 {d} {r} {100 - r} {name}"
            for q, ds in docs.items()
            for r, d in enumerate(sorted(ds, key=key), start=1)
        ]
        path.write_text("\n".join(lines) + "\n")
        runs.append(str(path))
    out_path = tmp_path / "report.json"
    argv = ["docket", "eval", "systems", "--qrels", str(completed), "--runs", *runs,
            "--measures", "P@10", "--ppi", "--audit-job", "j", "--db", db,
            "--out", str(out_path)]  # fmt: skip
    monkeypatch.setattr(sys, "argv", argv)
    with pytest.raises(SystemExit) as caught:
        main()
    output = capsys.readouterr().out
    assert caught.value.code == 0, output
    ppi = json.loads(out_path.read_text())["ppi"]
    assert ppi["human_labels"] == 60 and ppi["design"] == "pairs"
    for name in ("odd", "third"):
        figures = ppi["systems"][name]["P@10"]
        assert figures["ci_low"] < figures["estimate"] < figures["ci_high"]
        assert name in output
    # The LLM labels put "odd" at P@10 = 1 and "third" near 0.5; humans the other way.
    assert ppi["systems"]["odd"]["P@10"]["naive"] == pytest.approx(1.0)
    assert ppi["systems"]["odd"]["P@10"]["estimate"] < 0.8
    assert ppi["systems"]["third"]["P@10"]["estimate"] > ppi["systems"]["odd"]["P@10"]["estimate"]
