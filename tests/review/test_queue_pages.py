"""The queue at scale: keyset pages, filters (job, status, reviewer, disagreement), search."""

from __future__ import annotations

from urllib.parse import parse_qs

from fastapi.testclient import TestClient
from sqlalchemy import delete, select

from docket.review.assign import assign
from docket.review.auth import add_reviewer
from docket.review.models import TaskFacets
from docket.review.queue import enqueue
from docket.review.web import create_app
from docket.store.base import Store
from tests.review.conftest import login
from tests.review.review_helpers import relevance_payload


def _enqueue(store: Store, n: int, job: str = "j", unparsed_every: int = 0) -> list[int]:
    ids = []
    with store.session() as session:
        for i in range(n):
            payload = relevance_payload()
            payload["qid"], payload["docid"] = f"q{i}", f"{job}-doc{i}"
            if unparsed_every and i % unparsed_every == 0:
                payload["transcript"][3]["parsed"] = False
            key = f"q{i}\t{job}-doc{i}"
            ids.append(
                enqueue(session, job=job, kind="relevance", item_key=key, payload=payload).id
            )
    return ids


def _walk(client: TestClient, first: str) -> list[list[int]]:
    pages, url = [], first
    while url:
        data = client.get(url).json()
        pages.append([t["id"] for t in data["tasks"]])
        after = data["next_after"]
        url = f"/queue.json?status=all&after={after}" if after is not None else ""
    return pages


def test_keyset_pages_cover_every_task_once_in_order(
    client: TestClient, store: Store, tokens: dict
) -> None:
    ids = _enqueue(store, 120)
    login(client, tokens["ann"])
    pages = _walk(client, "/queue.json?status=all")
    assert [len(p) for p in pages] == [50, 50, 20]
    assert [i for p in pages for i in p] == ids
    back = client.get(f"/queue.json?status=all&before={pages[1][0]}").json()
    assert [t["id"] for t in back["tasks"]] == pages[0] and back["prev_before"] is None
    html = client.get(f"/queue?status=all&after={pages[0][-1]}").text
    assert 'id="prev-page"' in html and 'id="next-page"' in html
    assert client.get("/queue.json?status=all").json()["count"] == 120


def test_links_keep_the_filters(client: TestClient, store: Store, tokens: dict) -> None:
    _enqueue(store, 60, job="alpha")
    login(client, tokens["ann"])
    data = client.get("/queue.json?status=all&job=alpha&disagreement=split").json()
    assert data["next_after"] is not None
    html = client.get("/queue?status=all&job=alpha&disagreement=split").text
    link = html.split('id="next-page" href="/queue?', 1)[1].split('"', 1)[0].replace("&amp;", "&")
    assert parse_qs(link) == {
        "job": ["alpha"],
        "status": ["all"],
        "disagreement": ["split"],
        "after": [str(data["next_after"])],
    }


def test_filters_by_job_kind_of_disagreement_and_search(
    client: TestClient, store: Store, tokens: dict
) -> None:
    alpha = _enqueue(store, 10, job="alpha", unparsed_every=3)
    beta = _enqueue(store, 4, job="beta")
    login(client, tokens["ann"])

    def ids(query: str) -> list[int]:
        return [t["id"] for t in client.get(f"/queue.json?status=all&{query}").json()["tasks"]]

    assert ids("job=beta") == beta
    assert ids("disagreement=unparsed") == [alpha[0], alpha[3], alpha[6], alpha[9]]
    assert ids("disagreement=split&job=alpha") == [a for i, a in enumerate(alpha) if i % 3]
    assert ids("q=q2") == [alpha[2], beta[2]]  # a qid names a task in each job
    assert ids("q=beta-doc1") == [beta[1]]  # a docid
    assert ids("q=nothing") == []
    bad = client.get("/queue.json?disagreement=weird")
    assert bad.status_code == 400 and "disagreement" in bad.json()["error"]


def test_reviewer_filter_is_for_admins_and_search_respects_assignments(
    client: TestClient, store: Store, tokens: dict
) -> None:
    ids = _enqueue(store, 6)
    with store.session() as session:
        assign(session, ids[1], ["bob"])
        assign(session, ids[4], ["bob"])
    login(client, tokens["ann"])
    assert client.get("/queue.json?reviewer=bob").status_code == 400
    assert client.get("/queue.json?status=all&q=j-doc1").json()["tasks"] == []  # bob's
    client.cookies.clear()
    login(client, tokens["root"])
    bobs = client.get("/queue.json?status=all&reviewer=bob").json()["tasks"]
    assert [t["id"] for t in bobs] == [ids[1], ids[4]]


def test_facets_of_older_tasks_are_filled_in_when_the_app_starts(
    store: Store, tokens: dict
) -> None:
    ids = _enqueue(store, 3)
    with store.session() as session:
        session.execute(delete(TaskFacets))
    with TestClient(create_app(store)) as client:
        login(client, tokens["ann"])
        assert [t["id"] for t in client.get("/queue.json?q=q1").json()["tasks"]] == [ids[1]]
    with store.session() as session:
        assert len(session.scalars(select(TaskFacets)).all()) == 3


def test_blind_tasks_cannot_be_told_apart_by_the_disagreement_filter(
    client: TestClient, store: Store, tokens: dict
) -> None:
    """An audit pair (blind, no transcript) and a blind escalation (blind, a split debate)
    fall under no disagreement kind for a reviewer; a blind reviewer gets no such filter."""
    with store.session() as session:
        split = relevance_payload()
        audit = {k: v for k, v in relevance_payload().items() if k != "transcript"}
        audit["docid"] = "audit-doc"
        escalated = enqueue(
            session, job="j", kind="relevance", item_key="q\td", payload=split, blind=True
        ).id
        audited = enqueue(
            session, job="j", kind="relevance", item_key="q\ta", payload=audit, blind=True
        ).id
        cara = add_reviewer(session, "cara", blind=True)[1]
    login(client, tokens["ann"])
    for kind in ("split", "none", "agreed", "unparsed"):
        listed = client.get(f"/queue.json?status=all&disagreement={kind}").json()["tasks"]
        assert listed == [], kind
    everything = client.get("/queue.json?status=all").json()["tasks"]
    assert sorted(t["id"] for t in everything) == sorted([escalated, audited])
    root = TestClient(client.app)
    login(root, tokens["root"])  # an admin still sees what the agents did
    split_ids = [t["id"] for t in root.get("/queue.json?disagreement=split").json()["tasks"]]
    assert split_ids == [escalated]
    blind = TestClient(client.app)
    login(blind, cara)
    assert blind.get("/queue.json").json()["kinds"] == []
    refused = blind.get("/queue.json?disagreement=split")
    assert refused.status_code == 400 and "blind reviewer" in refused.text
