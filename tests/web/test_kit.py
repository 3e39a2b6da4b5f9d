"""The web kit's parts on their own: settings, login limiter, JSON depth, sessions."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from sqlalchemy import select, update

from docket.errors import ConfigError
from docket.store.base import Store, utcnow
from docket.store.web_tables import WebSessionRow
from docket.web import Principal, WebSettings, sha256
from docket.web import sessions as web_sessions
from docket.web.limiter import MAX_KEYS, LoginLimiter
from docket.web.middleware import json_depth


class Clock:
    """A settable monotonic clock."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class Backend:
    """Tokens by hash; remove one to revoke it."""

    def __init__(self, **tokens: str) -> None:
        self.valid = {sha256(token): Principal(name) for name, token in tokens.items()}

    def owner(self, session, token_sha256: str):  # type: ignore[no-untyped-def]
        return self.valid.get(token_sha256)


@pytest.mark.parametrize(
    "field", ["max_body_bytes", "max_json_depth", "lockout_s", "session_hours"]
)
def test_settings_must_be_positive(field: str) -> None:
    with pytest.raises(ConfigError, match=field):
        WebSettings(**{field: 0})
    assert getattr(WebSettings().with_(**{field: 7}), field) == 7


def test_rate_limit_per_client_then_the_window_moves_on() -> None:
    clock = Clock()
    limiter = LoginLimiter(WebSettings(login_attempts_per_client=3, login_window_s=60), clock)
    assert [limiter.wait_seconds("10.0.0.1", f"tok{i:012d}") for i in range(4)] == [0, 0, 0, 60]
    assert limiter.wait_seconds("10.0.0.2", "tokzzzzzzzzzzzz") == 0  # another client
    clock.now += 30
    assert limiter.wait_seconds("10.0.0.1", "tokyyyyyyyyyyyy") == 30
    clock.now += 30
    assert limiter.wait_seconds("10.0.0.1", "tokyyyyyyyyyyyy") == 0


def test_rate_limit_per_token_prefix_across_clients() -> None:
    limiter = LoginLimiter(WebSettings(login_attempts_per_prefix=2), Clock())
    prefix = "dkr_AAAAAAAA"
    waits = [limiter.wait_seconds(f"10.0.0.{i}", prefix + f"{i:040d}") for i in range(3)]
    assert waits[:2] == [0, 0] and waits[2] > 0
    assert limiter.wait_seconds("10.0.0.9", "dkr_BBBBBBBB" + "0" * 40) == 0


def test_lockout_after_failures_ends_after_its_time_and_success_resets() -> None:
    clock = Clock()
    settings = WebSettings(lockout_failures=3, lockout_s=120, login_attempts_per_client=100)
    limiter = LoginLimiter(settings, clock)
    for i in range(2):
        limiter.record("c", f"t{i:020d}", ok=False)
    limiter.record("c", "good-token-00000000", ok=True)  # resets the client's count
    limiter.record("c", "t" + "9" * 20, ok=False)
    assert limiter.wait_seconds("c", "x" * 20) == 0
    for i in range(3):
        limiter.record("c", f"u{i:020d}", ok=False)
    assert limiter.wait_seconds("c", "y" * 20) == 120
    clock.now += 121
    assert limiter.wait_seconds("c", "y" * 20) == 0


def test_the_limiter_remembers_a_bounded_number_of_keys() -> None:
    limiter = LoginLimiter(WebSettings(), Clock())
    for i in range(MAX_KEYS + 50):
        limiter.record(f"client{i}", "same-prefix-token", ok=False)
    assert len(limiter._tracks) == MAX_KEYS


def test_json_depth_is_a_byte_scan_that_skips_strings() -> None:
    values = (1, [], {"a": [1, {"b": []}]}, [[[[]]]], ["[[[", {"x": '}}\\"]]'}], ["\\", "["])
    assert [json_depth(json.dumps(v).encode()) for v in values] == [0, 1, 4, 4, 2, 1]
    # Malformed: as deep as a recursive parser would go before failing.
    assert json_depth(b"[" * 100_000) == 100_000 and json_depth(b"]]") == 0


def test_sessions_expire_are_purged_and_end_with_their_token(store: Store) -> None:
    backend = Backend(ann="tok-ann", bob="tok-bob")
    with store.session() as s:
        ann_cookie, _ = web_sessions.start_session(
            s, "review", Principal("ann"), sha256("tok-ann"), 1
        )
        bob_cookie, _ = web_sessions.start_session(
            s, "review", Principal("bob"), sha256("tok-bob"), 1
        )
        assert web_sessions.find_session(s, "review", ann_cookie, backend) is not None
        assert web_sessions.find_session(s, "verify", ann_cookie, backend) is None  # other app
    del backend.valid[sha256("tok-ann")]  # revoked
    with store.session() as s:
        assert web_sessions.find_session(s, "review", ann_cookie, backend) is None
        assert web_sessions.find_session(s, "review", bob_cookie, backend) is not None
        s.execute(update(WebSessionRow).values(expires_at=utcnow() - timedelta(seconds=1)))
    with store.session() as s:
        assert web_sessions.find_session(s, "review", bob_cookie, backend) is None
        web_sessions.start_session(s, "review", Principal("bob"), sha256("tok-bob"), 1)
    with store.session() as s:  # the new login purged both expired sessions
        assert len(s.scalars(select(WebSessionRow)).all()) == 1


def test_end_token_sessions(store: Store) -> None:
    with store.session() as s:
        for _ in range(2):
            web_sessions.start_session(s, "verify", Principal("ann"), sha256("a"), 1)
        web_sessions.start_session(s, "verify", Principal("ann"), sha256("b"), 1)
        assert web_sessions.end_token_sessions(s, sha256("a")) == 2
        assert len(s.scalars(select(WebSessionRow)).all()) == 1


def test_one_broken_script_locks_out_only_its_own_credential() -> None:
    clock = Clock()
    settings = WebSettings(lockout_failures=3, lockout_s=300, login_attempts_per_client=100)
    limiter = LoginLimiter(settings, clock)
    old = "dkr_revoked-token-of-one-script"
    for _ in range(10):  # the same wrong token, again and again
        limiter.record("10.0.0.5", old, ok=False)
    assert limiter.locked_seconds("10.0.0.5", old) == 300
    assert limiter.wait_seconds("10.0.0.5", old) == 300
    good = "dkr_valid-token-of-another-script"
    assert limiter.locked_seconds("10.0.0.5", good) == 0  # same host, other credential
    assert limiter.wait_seconds("10.0.0.5", good) == 0
    assert limiter.locked_seconds("10.0.0.6", old) == 0  # same token, other host
    clock.now += 301
    assert limiter.locked_seconds("10.0.0.5", old) == 0


def test_different_wrong_credentials_still_lock_out_the_address() -> None:
    limiter = LoginLimiter(WebSettings(lockout_failures=3, lockout_s=300), Clock())
    for i in range(3):  # guessing: three different tokens
        limiter.record("10.0.0.7", f"guess-{i:020d}", ok=False)
    assert limiter.locked_seconds("10.0.0.7", "dkr_valid-token-never-tried") == 300
