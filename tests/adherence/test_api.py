"""The verification API through real HTTP: uvicorn on a loopback port, httpx as the client."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator

import httpx
import pytest

from docket.adherence.verify import Verifier, VerifierConfig
from docket.adherence.web.api import create_app
from docket.adherence.web.tokens import add_token, revoke_tokens
from docket.store.base import Store
from tests.adherence.verify_helpers import ruleset, slow_model
from tests.browser_support import serve

TOKEN = "test-token-0123456789abcdef"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
BODY = {
    "record": {"id": "d1", "turns": [{"role": "user", "text": "I need a ticket to Leeds"}]},
    "turn": {"role": "assistant", "text": "Happy to help, see www.example.com for times."},
}


def make_app(store: Store | None, sub_delay: float = 0.4, timeout_s: float = 10.0):  # type: ignore[no-untyped-def]
    verifier = Verifier(
        ruleset(),
        sim_model=slow_model("api-sim", 0.0, "PASS"),
        sub_model=slow_model(f"api-sub-{sub_delay}", sub_delay, "REASONING: ok.\nVERDICT: PASS"),
        config=VerifierConfig(timeout_s=timeout_s),
    )
    return create_app(verifier, store=store, tokens={TOKEN: "ann"})


@pytest.fixture
def base_url(store: Store) -> Iterator[str]:
    with serve(make_app(store)) as url:
        yield url


def sse(response: httpx.Response) -> Iterator[tuple[str, dict, float]]:
    """Parse a Server-Sent Events response: (event, data, seconds since the request)."""
    started = time.perf_counter()
    event, data = "message", []
    for line in response.iter_lines():
        if line.startswith("event:"):
            event = line[6:].strip()
        elif line.startswith("data:"):
            data.append(line[5:].strip())
        elif not line and data:
            yield event, json.loads("\n".join(data)), time.perf_counter() - started
            event, data = "message", []


def test_every_v1_route_requires_a_token(base_url: str) -> None:
    for method, path in [
        ("post", "/v1/verify"),
        ("post", "/v1/verify/stream"),
        ("get", "/v1/rules"),
        ("get", "/v1/stats"),
        ("post", "/v1/feedback"),
    ]:
        response = httpx.request(method, base_url + path, json=BODY)
        assert response.status_code == 401, path
        assert response.headers["www-authenticate"] == "Bearer"
    wrong = httpx.post(base_url + "/v1/verify", json=BODY, headers={"Authorization": "Bearer nope"})
    assert wrong.status_code == 401
    assert httpx.get(base_url + "/health").status_code == 200


def test_verify_returns_all_rule_results(base_url: str) -> None:
    response = httpx.post(base_url + "/v1/verify", json=BODY, headers=AUTH, timeout=10)
    assert response.status_code == 200
    verdict = response.json()
    assert verdict["turn"] == 1 and verdict["status"] == "fail"
    by_rule = {r["rule_id"]: r for r in verdict["results"]}
    assert set(by_rule) == {"F1", "F2", "F3", "S1", "S2", "U1", "U2"}
    assert by_rule["F2"]["status"] == "fail" and by_rule["F2"]["span"]["text"] == "www.example.com"
    assert by_rule["U1"]["status"] == "pass"


def test_stream_sends_fmt_results_long_before_the_slow_model(base_url: str) -> None:
    with httpx.stream(
        "POST", base_url + "/v1/verify/stream", json=BODY, headers=AUTH, timeout=10
    ) as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        events = list(sse(response))
    kinds = [event for event, _, _ in events]
    assert kinds == ["result"] * 7 + ["verdict"]
    tiers = [d["tier"] for e, d, _ in events if e == "result"]
    # every fmt result is sent before any result of the 0.4 s model: fmt is not held back
    # (an order check, not a timed one, so a loaded machine cannot make it flaky)
    assert max(i for i, t in enumerate(tiers) if t == "fmt") < tiers.index("sub")
    assert events[-1][1]["status"] == "fail"


def test_results_are_saved_and_feedback_changes_the_stats(base_url: str, store: Store) -> None:
    verdict = httpx.post(base_url + "/v1/verify", json=BODY, headers=AUTH, timeout=10).json()
    flag = next(r for r in verdict["results"] if r["rule_id"] == "F2")
    passed = next(r for r in verdict["results"] if r["status"] == "pass")
    refused = httpx.post(
        base_url + "/v1/feedback",
        headers=AUTH,
        json={"result_id": passed["id"], "action": "accepted"},
    )
    assert refused.status_code == 400 and "only flagged results" in refused.json()["error"]
    no_reason = httpx.post(
        base_url + "/v1/feedback",
        headers=AUTH,
        json={"result_id": flag["id"], "action": "dismissed"},
    )
    assert no_reason.status_code == 400
    ok = httpx.post(
        base_url + "/v1/feedback",
        headers=AUTH,
        json={"result_id": flag["id"], "action": "accepted", "fixed_text": "Happy to help."},
    )
    assert ok.status_code == 200
    stats = httpx.get(base_url + "/v1/stats", headers=AUTH).json()
    f2 = next(r for r in stats["by_rule"] if r["rule_id"] == "F2")
    assert (f2["flags"], f2["accepted"], f2["accepted_rate"]) == (1, 1, 1.0)


def test_store_tokens_work_until_revoked(base_url: str, store: Store) -> None:
    token = add_token(store, "bob")
    headers = {"Authorization": f"Bearer {token}"}
    assert httpx.get(base_url + "/v1/rules", headers=headers).status_code == 200
    revoke_tokens(store, "bob")
    assert httpx.get(base_url + "/v1/rules", headers=headers).status_code == 401


def test_bad_input_gets_a_clear_4xx(base_url: str) -> None:
    bad_index = {"record": BODY["record"], "turn_index": 7}
    response = httpx.post(base_url + "/v1/verify", json=bad_index, headers=AUTH)
    assert response.status_code == 422 and "turn 7" in response.json()["error"]
    missing = httpx.post(base_url + "/v1/verify", json={"turn": BODY["turn"]}, headers=AUTH)
    assert missing.status_code == 422
    huge = {"record": {"id": "x", "turns": [{"role": "user", "text": "a" * 1_000_001}]}}
    assert (
        httpx.post(base_url + "/v1/verify", json=huge, headers=AUTH, timeout=30).status_code == 413
    )


def test_a_timing_out_model_gives_needs_review_and_the_server_lives_on(store: Store) -> None:
    with serve(make_app(store, sub_delay=30.0, timeout_s=0.3)) as url:
        verdict = httpx.post(url + "/v1/verify", json=BODY, headers=AUTH, timeout=10).json()
        subs = [r for r in verdict["results"] if r["tier"] == "sub"]
        assert {r["status"] for r in subs} == {"needs_review"}
        assert httpx.get(url + "/health").status_code == 200


def test_openapi_schema_documents_the_routes_and_bearer_auth(base_url: str) -> None:
    schema = httpx.get(base_url + "/openapi.json").json()
    assert {"/v1/verify", "/v1/verify/stream", "/v1/feedback", "/v1/stats"} <= set(schema["paths"])
    schemes = schema["components"]["securitySchemes"]
    assert any(s["type"] == "http" and s["scheme"] == "bearer" for s in schemes.values())
    assert (
        "text/event-stream"
        in schema["paths"]["/v1/verify/stream"]["post"]["responses"]["200"]["content"]
    )
    assert "/annotate" not in schema["paths"]


def csrf_of(page: httpx.Response) -> str:
    return page.text.split('name="csrf_token" value="')[1].split('"')[0]


def test_page_needs_login_and_csrf(base_url: str) -> None:
    page = httpx.get(base_url + "/annotate")
    assert page.status_code == 303 and page.headers["location"] == "/login"
    with httpx.Client(base_url=base_url) as client:
        form = client.get("/login")
        assert "default-src 'self'" in form.headers["content-security-policy"]
        wrong = client.post("/login", data={"token": "wrong", "csrf_token": csrf_of(form)})
        assert wrong.status_code == 401
        forged = client.post("/login", data={"token": TOKEN, "csrf_token": "forged"})
        assert forged.status_code == 403
        csrf = csrf_of(client.get("/login"))
        logged = client.post("/login", data={"token": TOKEN, "csrf_token": csrf})
        assert logged.status_code == 303
        assert client.get("/annotate").status_code == 200
        no_csrf = client.post("/annotate/verify/stream", json=BODY)
        assert no_csrf.status_code == 403
        bearer_only = httpx.post(
            base_url + "/annotate/feedback",
            headers=AUTH,
            json={"result_id": "x", "action": "accepted"},
        )
        assert bearer_only.status_code == 401


def test_server_without_store_still_verifies() -> None:
    with serve(make_app(None, sub_delay=0.0)) as url:
        assert (
            httpx.post(url + "/v1/verify", json=BODY, headers=AUTH, timeout=10).status_code == 200
        )
        assert httpx.get(url + "/v1/stats", headers=AUTH).status_code == 503
