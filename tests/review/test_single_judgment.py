"""What reviewers see for a single judgment and for empty turns, on the page and in `docket show`.

A LARA escalation is one judgment with low confidence, not a "debate" of one agent
arguing neutral; a turn with no reasoning says so instead of showing a bare header; a
refused decision keeps the reviewer on the item with the reason.
"""

from __future__ import annotations

from fastapi.testclient import TestClient
from rich.console import Console

from docket.cli.transcript import outcome_line, transcript_view
from docket.relevance.lara import _turn
from docket.relevance.types import Judgment, Pair
from docket.review.queue import close_task, enqueue
from docket.runner.escalate import review_payload
from docket.store.base import Store
from tests.review.conftest import login
from tests.review.review_helpers import relevance_payload

PAIR = Pair("q1", "boiling point of water", "d1", "Water boils at 100 C. Pots are copper.")


def _lara_escalation() -> Judgment:
    """As LARA's finalize leaves an escalated pair: one turn, P(yes) near 0.5, no label."""
    return Judgment(
        qid="q1",
        docid="d1",
        method="lara",
        label=None,
        decided_by="escalated",
        rounds=1,
        confidence=0.509,
        transcript=[_turn(1, 0.509)],
        config={"p_yes": 0.509, "p_source": "logprobs"},
    )


def _enqueue(store: Store, payload: dict, key: str = "q1\td1") -> int:
    with store.session() as session:
        return enqueue(session, job="j", kind="relevance", item_key=key, payload=payload).id


def test_a_lara_escalation_is_one_low_confidence_judgment_on_the_page(
    client: TestClient, store: Store, tokens: dict
) -> None:
    task_id = _enqueue(store, review_payload(PAIR, _lara_escalation()))
    login(client, tokens["ann"])
    page = client.get(f"/tasks/{task_id}").text
    assert "P(yes) = 0.509" in page and "low confidence" in page and "One judgment" in page
    assert "<h2>Debate</h2>" not in page and "arguing neutral" not in page
    data = client.get(f"/tasks/{task_id}.json").json()["relevance"]
    assert data["single"] is True and data["p_yes"] == 0.509


def test_docket_show_says_the_same() -> None:
    judgment = _lara_escalation()
    line = outcome_line(judgment)
    assert "P(yes) = 0.509" in line and "low confidence" in line
    assert "no agreement" not in line
    console = Console(width=100, record=True)
    console.print(transcript_view(PAIR, judgment))
    assert "no agreement" not in console.export_text()


def test_an_empty_turn_says_no_reasoning_was_given(
    client: TestClient, store: Store, tokens: dict
) -> None:
    payload = relevance_payload()
    payload["transcript"][1]["reasoning"] = "   "
    task_id = _enqueue(store, payload)
    login(client, tokens["ann"])
    assert client.get(f"/tasks/{task_id}").text.count("(no reasoning given)") == 1
    judgment = Judgment("q1", "d1", "dream", None, "escalated", 1, transcript=payload["transcript"])
    console = Console(width=100, record=True)
    console.print(transcript_view(PAIR, judgment))
    assert "(no reasoning given)" in console.export_text()


def test_a_refused_decision_keeps_the_reviewer_on_the_item(
    client: TestClient, store: Store, tokens: dict
) -> None:
    task_id = _enqueue(store, relevance_payload())
    csrf = login(client, tokens["ann"])
    with store.session() as session:
        close_task(session, task_id)
    answer = client.post(
        f"/tasks/{task_id}/decision",
        data={"label": "1", "csrf_token": csrf},
        follow_redirects=False,
    )
    assert answer.status_code == 409 and answer.headers["content-type"].startswith("text/html")
    assert "Your decision was not saved" in answer.text and f"Task {task_id}" in answer.text
    assert "S1 states the boiling point." in answer.text  # the item itself, not an error page


def test_a_refused_decision_keeps_the_note_and_grade_the_reviewer_typed(
    client: TestClient, store: Store, tokens: dict
) -> None:
    task_id = _enqueue(store, relevance_payload())
    csrf = login(client, tokens["ann"])
    note = "S1 is <b>on topic</b>, but\nS2 is not"
    # "irrelevant" with grade 2 contradicts itself: refused, the reviewer stays on the item.
    form = {"label": "0", "grade": "2", "note": note, "csrf_token": csrf}
    answer = client.post(f"/tasks/{task_id}/decision", data=form, follow_redirects=False)
    assert answer.status_code == 400 and "Your decision was not saved" in answer.text
    escaped = note.replace("<", "&lt;").replace(">", "&gt;")
    assert f'maxlength="10000">{escaped}</textarea>' in answer.text
    assert 'name="grade" value="2" data-key="2" checked' in answer.text
    assert 'name="grade" value="" checked' not in answer.text
    fresh = client.get(f"/tasks/{task_id}").text  # a fresh page starts empty
    assert 'maxlength="10000"></textarea>' in fresh and 'value="" checked' in fresh
