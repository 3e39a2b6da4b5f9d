"""Limits before work, through a real uvicorn server on loopback (bounded request loops).

Credentials before the body (401 for strangers, body never read), body size (413),
JSON depth (400), login rate limits per client and lockout (429 with Retry-After).
Counts only; no timed assertions.
"""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

from docket.store.base import Store
from docket.web.middleware import SECURITY_HEADERS
from tests.browser_support import serve
from tests.web.conftest import JSON, VERIFY_TOKENS, login, review_app, verify_app

ANN = next(iter(VERIFY_TOKENS))


def _chunks(total: int, size: int = 4096) -> Iterator[bytes]:
    for start in range(0, total, size):
        yield b"x" * min(size, total - start)


def _assert_error(response: httpx.Response, status: int, words: str) -> None:
    assert response.status_code == status, response.text
    assert words in response.json()["error"] and response.json()["hint"]
    for name in SECURITY_HEADERS:
        assert name in response.headers, name


@pytest.mark.parametrize("which", ["review", "verify"])
def test_a_declared_large_body_is_refused_before_auth(store: Store, which: str) -> None:
    make = review_app if which == "review" else verify_app
    path = "/tasks/1/decision" if which == "review" else "/v1/verify"
    with serve(make(store, max_body_bytes=10_000)) as url:
        big = httpx.post(url + path, content=b"{" + b" " * 20_000 + b"}", headers=JSON)
        _assert_error(big, 413, "larger than 10000 bytes")
        small = httpx.post(
            url + path, content=b"{}", headers={**JSON, "Content-Type": "application/json"}
        )
        assert small.status_code == 401  # under the limit, authentication comes next


@pytest.mark.parametrize("which", ["review", "verify"])
def test_a_streamed_body_is_counted_while_read(store: Store, which: str) -> None:
    make = review_app if which == "review" else verify_app
    path = "/login" if which == "review" else "/v1/verify"
    # /login is public; /v1/verify reads bodies of token holders only.
    headers = JSON if which == "review" else {**JSON, "Authorization": f"Bearer {ANN}"}
    with serve(make(store, max_body_bytes=50_000)) as url:
        # No Content-Length: chunked transfer; the middleware counts what arrives.
        streamed = httpx.post(url + path, content=_chunks(200_000), headers=headers)
        _assert_error(streamed, 413, "larger than 50000 bytes")
        fits = httpx.post(url + path, content=_chunks(20_000), headers=headers)
        assert fits.status_code == (403 if which == "review" else 422)  # no nonce / not JSON


@pytest.mark.parametrize("which", ["review", "verify"])
def test_deep_json_is_a_400_not_a_500(store: Store, which: str, reviewer_tokens: dict) -> None:
    make = review_app if which == "review" else verify_app
    path = "/tasks/1/decision" if which == "review" else "/v1/verify"
    token = reviewer_tokens["ann"] if which == "review" else ANN
    headers = {**JSON, "Content-Type": "application/json", "Authorization": f"Bearer {token}"}
    with serve(make(store, max_json_depth=8)) as url:
        for depth in (9, 100_000):  # just past the limit, and past Python's recursion limit
            body = "[" * depth + "]" * depth
            _assert_error(
                httpx.post(url + path, content=body, headers=headers), 400, "deeper than 8"
            )
        shallow = httpx.post(url + path, content="[[[]]]", headers=headers)
        # Within the limit the app itself answers, in its own words.
        assert shallow.status_code == (400 if which == "review" else 422), shallow.text
        assert "deeper" not in shallow.text


def test_login_rate_limit_per_client(store: Store, reviewer_tokens: dict) -> None:
    app = review_app(store, login_attempts_per_client=5, lockout_failures=1000)
    with serve(app) as url, httpx.Client(base_url=url) as client:
        codes = [login(client, f"dkr_wrong{i:04d}").status_code for i in range(8)]
        assert codes == [401] * 5 + [429] * 3
        limited = login(client, reviewer_tokens["ann"])  # even the right token waits
        assert limited.status_code == 429 and int(limited.headers["retry-after"]) >= 1
        _assert_error(limited, 429, "too many login attempts")


def test_repeated_failures_lock_out(store: Store, reviewer_tokens: dict) -> None:
    app = review_app(store, login_attempts_per_client=100, lockout_failures=3, lockout_s=600)
    with serve(app) as url, httpx.Client(base_url=url) as client:
        assert [login(client, f"dkr_bad{i}").status_code for i in range(3)] == [401] * 3
        locked = login(client, reviewer_tokens["ann"])
        assert locked.status_code == 429 and 590 <= int(locked.headers["retry-after"]) <= 600


def test_the_verify_login_page_shows_the_lockout(store: Store) -> None:
    app = verify_app(store, lockout_failures=2)
    with serve(app) as url, httpx.Client(base_url=url) as client:
        assert [login(client, f"nope-{i}-0123456789").status_code for i in range(2)] == [401, 401]
        page = login(client, ANN, Accept="text/html")  # a browser: the page, not JSON
        assert page.status_code == 429 and "too many login attempts" in page.text
        assert page.headers["content-type"].startswith("text/html") and page.headers["retry-after"]


def test_many_concurrent_guesses_get_only_the_allowed_attempts(store: Store) -> None:
    # A bounded load test: 4 threads, 120 wrong guesses in all, one client address.
    app = review_app(store, login_attempts_per_client=20, lockout_failures=5)
    with serve(app) as url:

        def guess(worker: int) -> list[int]:
            with httpx.Client(base_url=url) as client:
                return [login(client, f"dkr_w{worker}x{i:03d}").status_code for i in range(30)]

        with ThreadPoolExecutor(4) as pool:
            codes = [code for batch in pool.map(guess, range(4)) for code in batch]
    # Each guess costs one GET (the form) and one POST; only POSTs count as attempts.
    assert len(codes) == 120 and set(codes) <= {401, 429}
    assert 5 <= codes.count(401) <= 20  # lockout after 5 failures; never past the rate


def test_login_rate_limit_per_token_prefix(store: Store) -> None:
    app = review_app(store, login_attempts_per_prefix=3, login_attempts_per_client=100)
    with serve(app) as url, httpx.Client(base_url=url) as client:
        same = [login(client, f"dkr_AAAAAAAA{i:040d}").status_code for i in range(4)]
        assert same == [401, 401, 401, 429]
        assert login(client, "dkr_BBBBBBBB" + "0" * 40).status_code == 401  # another prefix


def test_guessing_bearer_tokens_through_the_api_locks_out_too(store: Store) -> None:
    app = verify_app(store, lockout_failures=3, lockout_s=600)
    with serve(app) as url:
        for i in range(3):
            guess = {"Authorization": f"Bearer guess-{i}-0123456789abcdef"}
            assert httpx.get(url + "/v1/rules", headers=guess).status_code == 401
        right = httpx.get(url + "/v1/rules", headers={"Authorization": f"Bearer {ANN}"})
        _assert_error(right, 429, "too many login attempts")
        assert int(right.headers["retry-after"]) >= 590


def test_many_valid_api_calls_are_not_rate_limited(store: Store) -> None:
    app = verify_app(store, login_attempts_per_client=3)
    with serve(app) as url, httpx.Client(base_url=url) as client:
        codes = {
            client.get("/v1/rules", headers={"Authorization": f"Bearer {ANN}"}).status_code
            for _ in range(10)
        }
    assert codes == {200}


def test_a_broken_script_does_not_lock_out_the_other_scripts_on_its_host(store: Store) -> None:
    app = verify_app(store, lockout_failures=3, lockout_s=600)
    stale = {"Authorization": "Bearer stale-token-0123456789abcdef"}
    with serve(app) as url:
        codes = [httpx.get(url + "/v1/rules", headers=stale).status_code for _ in range(6)]
        assert codes == [401] * 3 + [429] * 3  # the stale token itself is locked out
        other = httpx.get(url + "/v1/rules", headers={"Authorization": f"Bearer {ANN}"})
        assert other.status_code == 200  # another script on the same host carries on
