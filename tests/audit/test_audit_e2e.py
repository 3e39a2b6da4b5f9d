"""End to end: judge 400 pairs against a scripted chat server, draw an audit of 60, answer
it through the review app's JSON API over real HTTP with the gold labels, and check that the
certificate's interval holds the automatic labels' true accuracy."""

from __future__ import annotations

import json
import re
from pathlib import Path

import httpx
import pandas as pd
import pytest

from docket.audit.card import dataset_card, system_table, write_card
from docket.audit.draw import audit_labels, draw_audit
from docket.audit.report import certificate
from docket.ir.formats import Run
from docket.jobs import JobSpec, run_job
from docket.review.auth import add_reviewer
from docket.review.web import create_app
from tests.browser_support import serve as serve_app
from tests.scripted_server import serve, user_text

AGENT = re.compile(r"you are agent (\w)")
DOCID = re.compile(r"<chunk>\n\[S1\] doc-(\d+)")
PAIRS = 400


def gold(i: int) -> int:
    """The true label of pair ``i``: one in three is relevant."""
    return int(i % 3 == 0)


def agreed(i: int) -> int:
    """The label both agents give pair ``i`` (wrong on one pair in seven)."""
    return 1 - gold(i) if i % 7 == 3 else gold(i)


def _debater(body: dict) -> str:
    """Every tenth pair the agents never agree (escalated); else both say ``agreed(i)``."""
    text = user_text(body)
    agent = AGENT.search(text).group(1)
    i = int(DOCID.search(text).group(1))
    label = (agent == "A") if i % 10 == 0 else bool(agreed(i))
    answer = {"label": "relevant" if label else "irrelevant", "evidence": ["S1"]}
    return json.dumps({**answer, "reasoning": f"agent {agent} says so"})


def _frame() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "qid": [f"q{i % 20}" for i in range(PAIRS)],
            "query": [f"question {i % 20}?" for i in range(PAIRS)],
            "docid": [f"d{i}" for i in range(PAIRS)],
            "text": [f"doc-{i} An answer sentence. Another sentence." for i in range(PAIRS)],
        }
    )


def _answer_queue(url: str, token: str, job: str) -> int:
    """Decide every open task of ``job`` with the gold label, as a reviewer's client would."""
    headers = {"Authorization": f"Bearer {token}", "Accept": "application/json"}
    answered, shapes = 0, set()
    with httpx.Client(base_url=url, headers=headers, timeout=30) as client:
        while True:
            found = client.get("/next.json", params={"job": job}).json()["next"]
            if found is None:
                assert len(shapes) == 1  # audit tasks and blind escalations look alike
                return answered
            item = client.get(f"/tasks/{found}.json").json()
            shown = item["relevance"]
            assert item["blind"] and shown["rounds"] == [] and shown["p_yes"] is None, item
            shapes.add((tuple(sorted(item)), tuple(sorted(shown)), shown["single"]))
            i = int(shown["docid"][1:])
            response = client.post(f"/tasks/{found}/decision", json={"label": gold(i)})
            assert response.status_code == 201, response.text
            answered += 1


@pytest.mark.parametrize("size", [60])
def test_the_certificate_interval_holds_the_true_accuracy(tmp_path: Path, size: int) -> None:
    with serve(_debater) as server:
        spec = JobSpec.of(
            "dream", model=server.model("m"), db=str(tmp_path / "a.db"), cache="off", rounds=2
        )
        run = run_job(_frame(), spec, job="j")
    automatic = [i for i in range(PAIRS) if i % 10 != 0]
    true_accuracy = sum(agreed(i) == gold(i) for i in automatic) / len(automatic)

    drawn = draw_audit(run.store, "j", size, seed=7)
    assert drawn.size == size and drawn.census == PAIRS - len(automatic)
    assert {s.name for s in drawn.strata} == {"round1-relevant", "round1-irrelevant"}
    with run.store.session() as session:
        # A blind reviewer: escalations are shown as the audit tasks are.
        token = add_reviewer(session, "ann", blind=True)[1]
    with serve_app(create_app(run.store)) as url:
        # The blind audit tasks and the escalations are answered alike.
        assert _answer_queue(url, token, "j") == size + drawn.census

    pairs = audit_labels(run.store, "j")
    assert len(pairs) == size and all(p.human_label is not None for p in pairs)
    for p in pairs:
        assert p.human_label == gold(int(p.docid[1:]))
        assert p.auto_label == agreed(int(p.docid[1:]))
    cert = certificate(run.store, "j")
    interval = cert.automatic_accuracy
    assert interval.n == size
    assert interval.low <= true_accuracy <= interval.high
    assert interval.high - interval.low < 0.25
    assert cert.sources["human_escalations"] == drawn.census
    assert cert.final.recall_relevant.n == size + drawn.census
    assert not any("not fully answered" in w for w in cert.warnings)
    print(f"true accuracy {true_accuracy:.4f}, certificate {interval}")  # the report quotes it
    _card_with_systems(run.store, tmp_path)


def _card_with_systems(store, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A card with a table of three systems, from the answered audit."""
    runs = []
    for name, key in (("good", gold), ("llm", agreed), ("bad", lambda i: 1 - gold(i))):
        ranked = sorted(range(PAIRS), key=lambda i, key=key: (-key(i), i))
        ranking = {f"q{q}": tuple(f"d{i}" for i in ranked if i % 20 == q) for q in range(20)}
        runs.append(Run(name, ranking))
    table = system_table(store, "j", runs, ["P@5"])
    assert {s.system for s in table.systems} == {"good", "llm", "bad"}
    assert all(s.ci_low <= s.estimate <= s.ci_high for s in table.systems)
    card = dataset_card(store, "j", systems=table)
    path = tmp_path / "card.md"
    write_card(card, path)
    text = path.read_text()
    assert "## Systems, with prediction-powered intervals" in text and "| good | P@5 |" in text
    assert json.loads(path.with_suffix(".json").read_text())["systems"]["systems"]["bad"]
