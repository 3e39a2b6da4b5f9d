"""The annotator page in headless Chromium: live flags, accept-and-fix, dismiss, no XSS."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from docket.adherence.verify import Verifier
from docket.adherence.web.api import create_app
from docket.llm.fake import register_fake
from docket.llm.types import Request
from docket.store.base import Store, open_store
from tests.adherence.verify_helpers import ruleset
from tests.browser_support import CHROMIUM, chromium, serve

pytestmark = pytest.mark.browser
TOKEN = "page-token-0123456789abcdef"
XSS = '<img src=x onerror="window.__xss=1"><script>window.__xss=2</script>'

if not CHROMIUM.exists():
    pytest.skip("Debian chromium is not installed", allow_module_level=True)


def sim_reply(request: Request) -> str:
    # Echo markup back in the model's explanation: model text is untrusted too.
    if "onerror" in request.messages[-1].content.split("Rule to check:")[0]:
        return 'FAIL: contains <b id="injected">markup</b> <img src=x onerror="window.__xss=3">'
    return "PASS"


@pytest.fixture
def base_url(db_url: str) -> Iterator[str]:
    store: Store = open_store(db_url)
    verifier = Verifier(
        ruleset(),
        sim_model=register_fake("page-sim", sim_reply),
        sub_model=register_fake("page-sub", lambda r: "REASONING: fine.\nVERDICT: PASS"),
    )
    with serve(create_app(verifier, store=store, tokens={TOKEN: "ann"})) as url:
        yield url
    store.close()


@pytest.fixture
def page(base_url: str):  # type: ignore[no-untyped-def]
    with chromium() as browser:
        tab = browser.new_page()
        tab.set_default_timeout(15_000)
        tab.goto(base_url + "/login")
        tab.fill("#token", TOKEN)
        tab.click("#login")
        tab.wait_for_url(base_url + "/annotate")
        yield tab


def add_turn(page, text: str, role: str = "user") -> None:  # type: ignore[no-untyped-def]
    page.select_option("#turn-role", role)
    page.fill("#turn-text", text)
    page.click("#submit-turn")
    page.wait_for_selector("#verify-status >> text=/Done in/")


def test_a_fmt_flag_appears_is_accepted_and_fixed_and_the_stats_change(page) -> None:  # type: ignore[no-untyped-def]
    add_turn(page, "Please visit www.example.com for the timetable")
    flag = page.locator('li.result[data-rule-id="F2"][data-status="fail"]')
    flag.wait_for()
    assert "www.example.com" in flag.locator(".span").text_content()
    assert page.locator('li.result[data-rule-id="F1"][data-status="pass"]').count() == 1
    flag.locator("button.accept").click()
    flag.locator(".fix-text").fill("Please look at the timetable at the station")
    flag.locator(".save-fix").click()
    page.locator('tr[data-rule-id="F2"] td.accepted').filter(has_text="1").wait_for()
    assert page.locator('tr[data-tier="fmt"] td.rate').text_content() == "100%"
    # The fixed turn is re-checked and now passes; the dialogue shows the fixed text.
    page.locator('li.result[data-rule-id="F2"][data-status="pass"]').wait_for()
    assert (
        page.locator("#turns .text").first.text_content()
        == "Please look at the timetable at the station"
    )


def test_a_flag_can_be_dismissed_with_a_reason(page) -> None:  # type: ignore[no-untyped-def]
    add_turn(page, "one two three four five six seven eight nine ten eleven twelve thirteen")
    flag = page.locator('li.result[data-rule-id="F1"][data-status="fail"]')
    row = page.locator('tr[data-rule-id="F1"]')
    row.locator("td.flags").filter(has_text="1").wait_for()  # stats reload after each check
    flag.locator("button.dismiss").click()
    flag.locator(".confirm-dismiss").click()  # no reason yet: nothing is sent
    page.wait_for_timeout(200)
    assert row.locator("td.dismissed").text_content() == "0"
    assert flag.get_attribute("data-answer") is None
    flag.locator(".dismiss-reason").fill("numbers do not count as words here")
    flag.locator(".confirm-dismiss").click()
    page.locator('tr[data-rule-id="F1"] td.dismissed').filter(has_text="1").wait_for()
    assert flag.get_attribute("data-answer") == "dismissed"


def test_markup_in_the_turn_and_in_model_text_is_shown_as_text(page) -> None:  # type: ignore[no-untyped-def]
    add_turn(page, XSS)
    page.locator('li.result[data-rule-id="S2"][data-status="fail"]').wait_for()
    page.wait_for_timeout(300)  # give any injected handler time to run
    assert page.evaluate("window.__xss") is None
    assert page.locator("#turns .text").first.text_content() == XSS
    assert page.locator("#turns img, #results img, #injected, #turns script").count() == 0
    explanation = page.locator('li.result[data-rule-id="S2"] .explanation').text_content()
    assert '<b id="injected">markup</b>' in explanation
