"""HTTP tests of the review app through FastAPI's TestClient."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select, update

from docket.review.assign import assign
from docket.review.auth import update_reviewer
from docket.review.models import Decision
from docket.review.queue import enqueue
from docket.store.base import Store, utcnow
from docket.store.web_tables import WebSessionRow
from docket.web import WebSettings, sha256
from tests.review.conftest import login, login_nonce
from tests.review.review_helpers import relevance_payload

JSON = {"Accept": "application/json"}


def _tasks(store: Store, n: int = 2, k: int = 1, job: str = "j", **kw) -> list[int]:
    with store.session() as session:
        return [
            enqueue(
                session,
                job=job,
                kind="relevance",
                item_key=f"q/{job}{i}",
                payload=relevance_payload(**kw),
                required_reviews=k,
            ).id
            for i in range(n)
        ]


def _post_login(client: TestClient, token: str, headers: dict | None = None, **fields):  # type: ignore[no-untyped-def]
    data = {"token": token, "csrf_token": login_nonce(client), **fields}
    return client.post("/login", data=data, headers=headers, follow_redirects=False)


def _decide(client: TestClient, task_id: int, csrf: str | None, **fields) -> object:
    data = {"label": "1", **fields}
    if csrf is not None:
        data["csrf_token"] = csrf
    return client.post(f"/tasks/{task_id}/decision", data=data, follow_redirects=False)


def test_nothing_is_readable_without_a_session(client: TestClient, store: Store) -> None:
    [task_id] = _tasks(store, 1)
    for path in ("/", "/queue", f"/tasks/{task_id}", "/stats", "/admin", "/next"):
        page = client.get(path, follow_redirects=False)
        assert page.status_code == 303 and page.headers["location"].startswith("/login?next=")
        assert client.get(path + ".json").status_code in (401, 404)
    assert client.get(f"/tasks/{task_id}.json").status_code == 401
    assert client.get("/queue", headers=JSON).status_code == 401
    assert _decide(client, task_id, None).status_code == 401
    assert "what is the boiling" not in client.get(f"/tasks/{task_id}").text
    assert client.get("/static/review.js").status_code == 200  # code, not data


def test_login_sets_a_strict_httponly_cookie_and_stores_hashes(
    client: TestClient, store: Store, tokens: dict
) -> None:
    no_nonce = client.post("/login", data={"token": tokens["ann"]}, follow_redirects=False)
    assert no_nonce.status_code == 403 and "login form expired" in no_nonce.text
    bad = _post_login(client, "dkr_wrong")
    assert bad.status_code == 401 and "unknown, revoked or disabled token" in bad.text
    assert "docket_review_session" not in bad.headers.get("set-cookie", "")
    good = _post_login(client, tokens["ann"], next="/queue")
    assert good.status_code == 303 and good.headers["location"] == "/queue"
    cookie = good.headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=strict" in cookie and "Path=/" in cookie
    value = client.cookies.get("docket_review_session")
    with store.session() as session:
        assert session.get(WebSessionRow, sha256(value)) is not None
        assert session.get(WebSessionRow, value) is None  # only the hash is stored
    db_bytes = Path(store.engine.url.database).read_bytes()
    assert tokens["ann"].encode() not in db_bytes and value.encode() not in db_bytes


def test_login_never_redirects_off_site(client: TestClient, tokens: dict) -> None:
    for target in ("//evil.example/x", "https://evil.example/", "/\\evil.example"):
        response = _post_login(client, tokens["ann"], next=target)
        assert response.headers["location"] == "/queue"


def test_bearer_token_for_scripts(client: TestClient, store: Store, tokens: dict) -> None:
    [task_id] = _tasks(store, 1)
    auth = {"Authorization": f"Bearer {tokens['ann']}"}
    queue = client.get("/queue.json", headers=auth).json()
    assert queue["reviewer"] == "ann" and [t["id"] for t in queue["tasks"]] == [task_id]
    made = client.post(
        f"/tasks/{task_id}/decision",
        json={"label": 0, "grade": 1, "seconds": 7},
        headers={**auth, **JSON},
    )
    assert made.status_code == 201 and made.json()["next"] is None
    with store.session() as session:
        decision = session.scalars(select(Decision)).one()
    assert (decision.label, decision.grade, decision.seconds, decision.source) == (0, 1, 7.0, "api")
    assert (
        client.get("/queue.json", headers={"Authorization": "Bearer dkr_nope"}).status_code == 401
    )


def test_posts_need_the_csrf_token_and_our_origin(
    client: TestClient, store: Store, tokens: dict
) -> None:
    task_id = _tasks(store, 1)[0]
    csrf = login(client, tokens["ann"])
    missing = _decide(client, task_id, None)
    assert missing.status_code == 403 and "CSRF" in missing.text
    assert _decide(client, task_id, "forged").status_code == 403
    foreign = client.post(
        f"/tasks/{task_id}/decision",
        data={"label": "1", "csrf_token": csrf},
        headers={"Origin": "https://evil.example"},
        follow_redirects=False,
    )
    assert foreign.status_code == 403 and "another origin" in foreign.text
    login_elsewhere = _post_login(client, tokens["bob"], headers={"Origin": "null"})
    assert login_elsewhere.status_code == 403
    with store.session() as session:
        assert session.scalars(select(Decision)).all() == []
    ok = client.post(
        f"/tasks/{task_id}/decision",
        data={"label": "1", "csrf_token": csrf},
        headers={"Origin": "http://testserver"},
        follow_redirects=False,
    )
    assert ok.status_code == 303


def test_every_page_answers_as_json(client: TestClient, store: Store, tokens: dict) -> None:
    [task_id] = _tasks(store, 1)
    login(client, tokens["root"])
    for path in ("/queue", f"/tasks/{task_id}", "/stats", "/admin"):
        by_suffix = client.get(path + ".json")
        by_header = client.get(path, headers=JSON)
        assert by_suffix.headers["content-type"] == "application/json"
        assert by_header.headers["content-type"] == "application/json"
        assert by_suffix.json().keys() == by_header.json().keys()
        assert client.get(path).headers["content-type"].startswith("text/html")


def test_queue_counts_and_filters(client: TestClient, store: Store, tokens: dict) -> None:
    a = _tasks(store, 3, job="alpha")
    _tasks(store, 2, job="beta")
    csrf = login(client, tokens["ann"])
    _decide(client, a[0], csrf)
    queue = client.get("/queue.json").json()
    assert queue["jobs"] == ["alpha", "beta"]
    counts = {
        status: client.get(f"/queue.json?status={status}").json()["count"]
        for status in ("todo", "decided", "done", "all")
    }
    assert counts == {"todo": 4, "decided": 1, "done": 1, "all": 5}
    alpha = client.get("/queue.json?job=alpha&status=todo").json()
    assert [t["id"] for t in alpha["tasks"]] == a[1:]
    assert "n_reviews" not in alpha["tasks"][0]  # others' progress is hidden from reviewers
    bad = client.get("/queue.json?status=weird")
    assert bad.status_code == 400 and "unknown status" in bad.json()["error"]
    html = client.get("/queue?job=beta").text
    assert 'id="match-count" data-count="2">2<' in html


def test_item_page_escapes_untrusted_text(client: TestClient, store: Store, tokens: dict) -> None:
    evil = [
        "<script>window.pwned=1</script>",
        '<img src=x onerror="window.pwned=2">',
        '" onmouseover="alert(1)',
    ]
    [task_id] = _tasks(store, 1, query="<b>bold</b><script>alert(1)</script>", sentences=evil)
    login(client, tokens["ann"])
    page = client.get(f"/tasks/{task_id}")
    html = page.text
    assert "<script>window" not in html and "<img src=x" not in html and "<b>bold" not in html
    assert "&lt;script&gt;window.pwned=1&lt;/script&gt;" in html
    assert "&lt;img src=x onerror=&#34;window.pwned=2&#34;&gt;" in html
    assert "&#34; onmouseover=&#34;alert(1)" in html
    csp = page.headers["content-security-policy"]
    assert "script-src 'self'" in csp and "unsafe-inline" not in csp
    assert page.headers["x-content-type-options"] == "nosniff"
    assert page.headers["cache-control"] == "no-store"


def test_templates_never_mark_text_safe() -> None:
    root = Path(__file__).resolve().parents[2] / "src" / "docket" / "review"
    for path in [*root.glob("templates/*.html"), *root.rglob("*.py")]:
        source = path.read_text()
        for forbidden in ("|safe", "| safe", "autoescape false", "Markup("):
            assert forbidden not in source, f"{path.name} uses {forbidden}"


def test_item_shows_evidence_and_debate(client: TestClient, store: Store, tokens: dict) -> None:
    [task_id] = _tasks(store, 1)
    login(client, tokens["ann"])
    item = client.get(f"/tasks/{task_id}.json").json()["relevance"]
    stances = [s["stances"] for s in item["sentences"]]
    assert stances == [["relevant"], ["irrelevant"], ["relevant"]]
    assert [r["round"] for r in item["rounds"]] == [1, 2]
    assert item["rounds"][1]["turns"][1]["evidence"] == [
        {"id": "S2", "valid": True},
        {"id": "S9", "valid": False},
    ]
    assert item["agents_last_round"] == {"A": 1, "B": 0}
    html = client.get(f"/tasks/{task_id}").text
    assert 'id="S1" class="sentence cited-relevant"' in html
    assert 'class="invalid"' in html and "Round 2" in html and 'data-key="r"' in html


def test_blind_mode_leaves_the_debate_out(client: TestClient, store: Store, tokens: dict) -> None:
    with store.session() as session:
        task_id = enqueue(
            session,
            job="j",
            kind="relevance",
            item_key="b",
            payload=relevance_payload(gold=1),
            blind=True,
        ).id
        update_reviewer(session, "bob", blind=True)
    [seen] = _tasks(store, 1)
    csrf = login(client, tokens["ann"])
    data = client.get(f"/tasks/{task_id}.json").json()
    assert data["blind"] and data["relevance"]["rounds"] == []
    assert all(s["citations"] == [] for s in data["relevance"]["sentences"])
    assert (
        "gold" not in str(data)
        and "S2 is about the pot" not in client.get(f"/tasks/{task_id}").text
    )
    assert not client.get(f"/tasks/{seen}.json").json()["blind"]
    _decide(client, task_id, csrf)
    client.cookies.clear()
    login(client, tokens["bob"])  # a blind reviewer: every task is blind for them
    assert client.get(f"/tasks/{seen}.json").json()["relevance"]["rounds"] == []
    with store.session() as session:
        assert session.scalars(select(Decision.blind)).all() == [True]


def test_reviewers_never_see_others_decisions(
    client: TestClient, store: Store, tokens: dict
) -> None:
    [task_id] = _tasks(store, 1, k=3)
    csrf = login(client, tokens["ann"])
    _decide(client, task_id, csrf, note="ann's secret reason")
    client.cookies.clear()
    login(client, tokens["bob"])
    view = client.get(f"/tasks/{task_id}.json").json()
    assert view["my_decisions"] == [] and "all_decisions" not in view
    assert "secret reason" not in client.get(f"/tasks/{task_id}").text
    client.cookies.clear()
    root_csrf = login(client, tokens["root"])  # admin, but still a possible reviewer
    assert "all_decisions" not in client.get(f"/tasks/{task_id}.json").json()
    _decide(client, task_id, root_csrf, label="0")
    shown = client.get(f"/tasks/{task_id}.json").json()["all_decisions"]
    assert [d["reviewer"] for d in shown] == ["ann", "root"]


def test_closed_and_foreign_tasks_are_refused_clearly(
    client: TestClient, store: Store, tokens: dict
) -> None:
    done, assigned = _tasks(store, 2)
    with store.session() as session:
        assign(session, assigned, ["ann"])
    csrf = login(client, tokens["ann"])
    _decide(client, done, csrf)
    client.cookies.clear()
    csrf = login(client, tokens["bob"])
    refused = client.post(
        f"/tasks/{done}/decision", data={"label": "0", "csrf_token": csrf}, headers=JSON
    )
    assert refused.status_code == 409
    assert refused.json()["error"] == f"task {done} already has its 1 required review(s)"
    page = _decide(client, done, csrf)
    assert page.status_code == 409 and "already has its 1 required review" in page.text
    foreign = client.post(
        f"/tasks/{assigned}/decision", data={"label": "0", "csrf_token": csrf}, headers=JSON
    )
    assert foreign.status_code == 403 and "assigned to other reviewers" in foreign.json()["error"]
    assert client.get(f"/tasks/{assigned}.json").status_code == 403
    assert client.get("/tasks/999.json").status_code == 404
    with store.session() as session:
        assert len(session.scalars(select(Decision)).all()) == 1


def test_statistics_are_for_admins_and_change(
    client: TestClient, store: Store, tokens: dict
) -> None:
    [task_id] = _tasks(store, 1, k=2, gold=1)
    csrf = login(client, tokens["ann"])
    assert client.get("/stats.json").status_code == 403
    assert client.get("/admin").status_code == 403
    _decide(client, task_id, csrf, seconds="4")
    client.cookies.clear()
    csrf = login(client, tokens["root"])
    before = client.get("/stats.json").json()
    assert before["decisions"]["total"] == 1 and before["tasks"]["open"] == 1
    _decide(client, task_id, csrf, label="0", seconds="8")
    after = client.get("/stats.json").json()
    assert after["tasks"]["done"] == 1 and after["time"]["mean_seconds"] == 6.0
    assert after["agreement"]["all"]["n_tasks"] == 1
    # Every gold label is relevant: balanced accuracy is undefined (docket.agreement's rule).
    assert after["gold"]["with_debate"] == {"n": 2, "accuracy": 0.5, "balanced_accuracy": None}
    assert {a["agent"]: a["agreement"] for a in after["agents"]} == {"A": 0.5, "B": 0.5}
    assert 'data-stat="decisions">2<' in client.get("/stats").text


def test_decide_then_next_and_saved_message(client: TestClient, store: Store, tokens: dict) -> None:
    first, second = _tasks(store, 2)
    csrf = login(client, tokens["ann"])
    response = _decide(client, first, csrf, grade="2", note="see S1", shown_at="0")
    assert response.headers["location"] == f"/tasks/{second}?saved={first}"
    assert f"Saved your decision on task {first}" in client.get(response.headers["location"]).text
    assert client.get("/next", follow_redirects=False).headers["location"] == f"/tasks/{second}"
    # "next" from the only open item leaves it: back to the queue.
    assert (
        client.get(f"/next?after={second}", follow_redirects=False).headers["location"] == "/queue"
    )
    with store.session() as session:
        decision = session.scalars(select(Decision)).one()
    assert (decision.grade, decision.note, decision.seconds) == (2, "see S1", None)
    last = _decide(client, second, csrf)
    assert last.headers["location"] == f"/queue?saved={second}"
    assert client.get("/next.json").json() == {"next": None}


def test_bad_form_values_are_400(client: TestClient, store: Store, tokens: dict) -> None:
    [task_id] = _tasks(store, 1)
    csrf = login(client, tokens["ann"])
    for fields, field in (
        ({"label": "yes"}, "label"),
        ({"grade": "7"}, "grade"),
        ({"seconds": "soon"}, "seconds"),
    ):
        response = client.post(
            f"/tasks/{task_id}/decision",
            data={"label": "1", **fields, "csrf_token": csrf},
            headers=JSON,
        )
        assert response.status_code == 400 and field in response.json()["error"]


def test_logout_expiry_and_disabled_reviewers(
    client: TestClient, store: Store, tokens: dict
) -> None:
    csrf = login(client, tokens["ann"])
    assert (
        client.post("/logout", data={"csrf_token": csrf}, follow_redirects=False).status_code == 303
    )
    assert client.get("/queue.json").status_code == 401
    login(client, tokens["ann"])
    with store.session() as session:
        session.execute(update(WebSessionRow).values(expires_at=utcnow() - timedelta(seconds=1)))
    assert client.get("/queue.json").status_code == 401
    with store.session() as session:
        update_reviewer(session, "ann", active=False)
    response = _post_login(client, tokens["ann"], headers=JSON)
    assert response.status_code == 401


def test_admin_assigns_work_by_form(client: TestClient, store: Store, tokens: dict) -> None:
    ids = _tasks(store, 4, k=1)
    csrf = login(client, tokens["root"])
    response = client.post(
        "/admin/assign",
        data={"job": "j", "reviewers": ["ann", "bob"], "csrf_token": csrf},
        follow_redirects=False,
    )
    assert response.headers["location"] == "/admin?assigned=4"
    assert "4 new assignment(s)" in client.get("/admin?assigned=4").text
    client.cookies.clear()
    login(client, tokens["ann"])
    mine = [t["id"] for t in client.get("/queue.json").json()["tasks"]]
    assert len(mine) == 2 and set(mine) < set(ids)


def test_admin_closes_a_task(client: TestClient, store: Store, tokens: dict) -> None:
    [task_id] = _tasks(store, 1)
    csrf = login(client, tokens["root"])
    closed = client.post(f"/tasks/{task_id}/close", data={"csrf_token": csrf}, headers=JSON)
    assert closed.json() == {"task": task_id, "status": "closed"}
    refused = client.post(
        f"/tasks/{task_id}/decision", data={"label": "1", "csrf_token": csrf}, headers=JSON
    )
    assert refused.status_code == 409 and "closed" in refused.json()["error"]


@pytest.mark.parametrize("host", ["evil.example", "127.0.0.1.evil.example"])
def test_unknown_host_headers_are_refused(store: Store, host: str) -> None:
    from docket.review.web import create_app

    settings = WebSettings(allowed_hosts=("127.0.0.1", "localhost"))
    with TestClient(create_app(store, settings)) as client:
        assert client.get("/login", headers={"Host": host}).status_code == 400
        assert client.get("/login", headers={"Host": "localhost:8765"}).status_code == 200


def test_adherence_items_render_generically(client: TestClient, store: Store, tokens: dict) -> None:
    payload = {
        "record": {"turn": "<script>alert(1)</script>", "meta": {"persona": "<i>novice</i>"}},
        "rule": {"id": "R7", "text": "Greet the user <b>first</b>", "tier": "sim"},
        "result": {"status": "fail", "explanation": "no greeting", "span": [0, 5]},
        "checker": "<img src=x onerror=alert(2)>",
    }
    with store.session() as session:
        task_id = enqueue(
            session, job="sop", kind="adherence", item_key="d1/t3", payload=payload
        ).id
    csrf = login(client, tokens["ann"])
    html = client.get(f"/tasks/{task_id}").text
    assert "<script>alert" not in html and "<i>novice" not in html and "<img src=x" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html and "&lt;b&gt;first&lt;/b&gt;" in html
    assert 'data-key="v"' in html and 'data-key="c"' in html
    data = client.get(f"/tasks/{task_id}.json").json()
    assert [label["name"] for label in data["labels"]] == ["violates the rule", "complies"]
    assert data["extra"] == [{"key": "checker", "value": "<img src=x onerror=alert(2)>"}]
    assert client.get("/queue.json").json()["tasks"][0]["title"] == "Greet the user <b>first</b>"
    assert _decide(client, task_id, csrf, label="1").status_code == 303


def test_engine_transcripts_with_unparsed_turns(
    client: TestClient, store: Store, tokens: dict
) -> None:
    payload = relevance_payload(gold=1)
    payload["transcript"][3] = {  # as the debate engine records an unparsed turn
        "round": 2,
        "agent": "B",
        "stance": None,
        "model": "fake:x",
        "label": None,
        "evidence": [],
        "evidence_text": [],
        "invalid_evidence": ["S12"],
        "reasoning": "",
        "raw": ["first try", "<script>alert('raw')</script> irrelevant!!"],
        "parsed": False,
        "error": "no label",
        "parse_failures": 2,
    }
    with store.session() as session:
        task_id = enqueue(session, job="j", kind="relevance", item_key="q1\td1", payload=payload).id
    login(client, tokens["ann"])
    turn = client.get(f"/tasks/{task_id}.json").json()["relevance"]["rounds"][1]["turns"][1]
    assert (turn["stance"], turn["label_name"], turn["parsed"]) == ("neutral", "no label", False)
    assert turn["raw"].startswith("<script>")
    html = client.get(f"/tasks/{task_id}").text
    assert "unparsed reply" in html and "&lt;script&gt;alert(&#39;raw&#39;)" in html
    assert "<script>alert" not in html


def test_a_json_client_without_accept_gets_json(
    client: TestClient, store: Store, tokens: dict
) -> None:
    # A script: bearer token, JSON body, no Accept header (httpx sends "*/*").
    [task_id] = _tasks(store, 1)
    auth = {"Authorization": f"Bearer {tokens['ann']}"}
    made = client.post(f"/tasks/{task_id}/decision", json={"label": 1}, headers=auth)
    assert made.status_code == 201 and made.headers["content-type"] == "application/json"
    bad = client.post(f"/tasks/{task_id}/decision", json={"label": "x"}, headers=auth)
    assert bad.status_code == 400 and "label" in bad.json()["error"]  # a refusal, as JSON too
    page = client.get(f"/tasks/{task_id}", headers=auth)
    assert page.headers["content-type"] == "application/json" and page.json()["task"]
    browser = client.get(f"/tasks/{task_id}", headers={**auth, "Accept": "text/html"})
    assert browser.headers["content-type"].startswith("text/html")  # asked for HTML
