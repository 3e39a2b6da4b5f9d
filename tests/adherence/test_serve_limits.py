"""``verify serve`` cannot be frozen by one request: structure counts, linear fitting, work off the loop."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator

import httpx
import pytest

from docket.adherence.checks import CATALOGUE, Checker, CheckOutcome, Params
from docket.adherence.record import Record, Turn
from docket.adherence.rules import RuleSet
from docket.adherence.verify import Submission, Verifier, prompts
from docket.adherence.verify.requests import MAX_TURNS, VerifyRequest
from docket.adherence.web.api import create_app
from tests.adherence.verify_helpers import ruleset, slow_model
from tests.browser_support import serve

TOKEN = "limits-token-0123456789abcdef"
AUTH = {"Authorization": f"Bearer {TOKEN}"}


@pytest.fixture(scope="module")
def base_url() -> Iterator[str]:
    verifier = Verifier(
        ruleset(),
        sim_model=slow_model("limits-sim", 0.0, "PASS"),
        sub_model=slow_model("limits-sub", 0.0, "REASONING: ok.\nVERDICT: PASS"),
    )
    with serve(create_app(verifier, tokens={TOKEN: "ann"})) as url:
        yield url


def empty_turns(count: int, role_length: int = 4) -> list[dict[str, str]]:
    roles = ["u" * role_length, "a" * role_length]
    return [{"role": roles[i % 2], "text": ""} for i in range(count)]


def test_a_hundred_thousand_empty_turns_are_refused(base_url: str) -> None:
    body = {"record": {"id": "flood", "turns": empty_turns(100_000)}}
    response = httpx.post(base_url + "/v1/verify", json=body, headers=AUTH, timeout=60)
    assert response.status_code == 400
    assert f"at most {MAX_TURNS} are accepted" in response.json()["error"]
    assert len(response.content) < 1_000  # the refusal does not echo the 100,000 turns back
    # and the server still answers the next request
    assert httpx.get(base_url + "/health").status_code == 200


def test_ids_roles_and_field_names_count_towards_the_size_limit(base_url: str) -> None:
    huge_id = {"record": {"id": "x" * 1_000_001, "turns": []}}
    assert httpx.post(base_url + "/v1/verify", json=huge_id, headers=AUTH).status_code == 413
    long_roles = {"record": {"id": "r", "turns": empty_turns(1_900, role_length=600)}}
    assert httpx.post(base_url + "/v1/verify", json=long_roles, headers=AUTH).status_code == 413
    field_names = {"record": {"id": "f", "fields": {"k" * 1_000_001: ""}}}
    assert httpx.post(base_url + "/v1/verify", json=field_names, headers=AUTH).status_code == 413


def test_one_turn_over_the_limit_is_refused_with_the_new_turn_counted() -> None:
    from docket.errors import InputError

    at_limit = {"record": {"id": "r", "turns": empty_turns(MAX_TURNS - 1)}}
    VerifyRequest.model_validate({**at_limit, "turn": {"role": "u", "text": "x"}})
    with pytest.raises(InputError, match=f"{MAX_TURNS + 1} turns"):
        VerifyRequest.model_validate(
            {
                "record": {"id": "r", "turns": empty_turns(MAX_TURNS)},
                "turn": {"role": "u", "text": ""},
            }
        )


def test_empty_turns_are_not_free() -> None:
    request = VerifyRequest.model_validate({"record": {"id": "r", "turns": empty_turns(1_000)}})
    assert request.size() >= 1_000 * 48


def test_the_largest_accepted_submission_gets_a_verdict(base_url: str) -> None:
    turns = [
        {"role": "user" if i % 2 == 0 else "assistant", "text": f"turn {i} text"}
        for i in range(MAX_TURNS - 1)
    ]
    body = {"record": {"id": "long", "turns": turns}, "turn": {"role": "assistant", "text": "ok"}}
    response = httpx.post(base_url + "/v1/verify", json=body, headers=AUTH, timeout=120)
    assert response.status_code == 200, response.text
    verdict = response.json()
    assert verdict["turn"] == MAX_TURNS - 1 and verdict["results"]


def test_fitting_renders_every_turn_once(monkeypatch: pytest.MonkeyPatch) -> None:
    rendered = 0
    original = prompts._turn

    def counting(tag: str, index: int, turn: Turn) -> str:
        nonlocal rendered
        rendered += 1
        return original(tag, index, turn)

    monkeypatch.setattr(prompts, "_turn", counting)
    record = Record(id="r", turns=[Turn(role="user", text=f"turn {i}") for i in range(4_000)])
    block = prompts.fit_data_block(record, 3_999, budget_chars=2_000)
    assert block is not None and block.truncated and block.dropped_turns > 3_900
    assert len(block.text) <= 2_000
    # 4,000 renders to measure, plus the turns kept in the final text: linear, not quadratic
    assert rendered == 4_000


def test_fitting_matches_the_unfitted_block_when_it_fits() -> None:
    record = Record(id="r", turns=[Turn(role="user", text=f"t{i}") for i in range(30)])
    full = prompts.data_block(record, 29)
    assert prompts.fit_data_block(record, 29, len(full.text)) == full
    one_less = prompts.fit_data_block(record, 29, len(full.text) - 1)
    assert one_less is not None and one_less.dropped_turns >= 1
    assert one_less == prompts.data_block(record, 29, one_less.dropped_turns)


async def test_checks_run_in_a_worker_thread_not_on_the_event_loop() -> None:
    seen: list[int] = []

    def spy(text: str, params: Params) -> CheckOutcome:
        seen.append(threading.get_ident())
        return CheckOutcome(True, "ok")

    CATALOGUE["_thread_spy"] = Checker("_thread_spy", "text", Params, "records its thread", spy)
    try:
        rules = RuleSet(
            name="spy",
            rules=[{"id": "T", "text": "t", "tier": "fmt", "check": {"checker": "_thread_spy"}}],
        )
        record = Record(id="r", turns=[Turn(role="user", text="hi")])
        verdict = await Verifier(rules).verify(Submission(record, 0))
    finally:
        del CATALOGUE["_thread_spy"]
    assert verdict.status == "pass"
    assert seen and threading.get_ident() not in seen  # the loop's thread did not run it
    assert asyncio.get_running_loop().is_running()
