"""Both apps in real headless Chromium: login, CSRF refusals, lockout, revocation, no XSS.

Pages and forms are driven as a user would; cross-site requests come from a page
Playwright serves for another origin. Waits are for page events, never for time.
"""

from __future__ import annotations

from collections.abc import Iterator
from urllib.parse import quote

import pytest
from sqlalchemy import select

from docket.adherence.verify import Verifier
from docket.adherence.web.api import create_app as create_verify_app
from docket.adherence.web.tokens import add_token, revoke_tokens
from docket.llm.fake import register_fake
from docket.review.auth import add_reviewer, reset_token
from docket.review.models import Decision
from docket.review.queue import enqueue
from docket.store.base import Store
from docket.web import WebSettings
from tests.adherence.verify_helpers import RULES, ruleset
from tests.browser_support import CHROMIUM, chromium, serve
from tests.review.review_helpers import relevance_payload
from tests.web.conftest import review_app

pytestmark = pytest.mark.browser
EVIL_ORIGIN = "http://evil.test"
XSS = [
    "<script>window.pwned = 1</script>",
    '<img src=x onerror="window.pwned = 2">',
    '<svg onload="window.pwned = 3"></svg>',
    '"><b onmouseover="window.pwned = 4">x</b>',
]
WATCH = """window.__violations = [];
document.addEventListener('securitypolicyviolation', e => window.__violations.push(e.violatedDirective));"""


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    if not CHROMIUM.exists():
        pytest.fail("Debian chromium is not installed")
    with chromium() as launched:
        yield launched


@pytest.fixture
def context(browser):  # type: ignore[no-untyped-def]
    made = browser.new_context()
    made.add_init_script(WATCH)
    made.set_default_timeout(15_000)
    yield made
    made.close()


def _inert(page) -> None:  # type: ignore[no-untyped-def]
    assert page.evaluate("window.pwned") is None
    assert page.evaluate("window.__violations") == []
    assert (
        page.locator("main script, main img, main svg, main [onerror], main [onmouseover]").count()
        == 0
    )


def _review_login(page, url: str, token: str):  # type: ignore[no-untyped-def]
    page.goto(url + "/login")
    page.fill("input[name=token]", token)
    page.click("button[type=submit]")
    page.wait_for_load_state()


def _cross_site_post(context, action: str, fields: dict[str, str]) -> str:  # type: ignore[no-untyped-def]
    """Submit a form from another origin to ``action``; return the answer's text."""
    inputs = "".join(f'<input name="{k}" value="{v}">' for k, v in fields.items())
    html = f'<form id="f" method="post" action="{action}">{inputs}</form>'
    context.route(
        EVIL_ORIGIN + "/", lambda route: route.fulfill(body=html, content_type="text/html")
    )
    page = context.new_page()
    page.goto(EVIL_ORIGIN + "/")
    with page.expect_navigation():
        page.eval_on_selector("#f", "f => f.submit()")
    return page.content()


def test_review_login_csrf_refusals_and_cross_site_forms(context, store: Store) -> None:  # type: ignore[no-untyped-def]
    with store.session() as session:
        token = add_reviewer(session, "ann")[1]
        task_id = enqueue(
            session, job="j", kind="relevance", item_key="k", payload=relevance_payload()
        ).id
    with serve(review_app(store)) as url:
        page = context.new_page()
        _review_login(page, url, token)
        assert page.url.endswith("/queue")
        page.goto(f"{url}/tasks/{task_id}")
        page.eval_on_selector(
            "#decision-form input[name=csrf_token]", "e => e.remove()"
        )  # a forged form
        with page.expect_navigation():
            page.click("button.decision.label-1")
        assert "missing or wrong CSRF token" in page.inner_text("main")
        text = _cross_site_post(context, f"{url}/tasks/{task_id}/decision", {"label": "1"})
        assert "login required" in text or "another origin" in text
        with store.session() as session:
            assert session.scalars(select(Decision)).all() == []
        page.goto(f"{url}/tasks/{task_id}")  # the real form still works
        with page.expect_navigation():
            page.click("button.decision.label-1")
        with store.session() as session:
            assert len(session.scalars(select(Decision)).all()) == 1


def test_review_lockout_and_revocation_of_a_live_session(context, store: Store) -> None:  # type: ignore[no-untyped-def]
    with store.session() as session:
        token = add_reviewer(session, "ann")[1]
    with serve(review_app(store, lockout_failures=3, lockout_s=600)) as url:
        page = context.new_page()
        _review_login(page, url, token)
        assert page.url.endswith("/queue")
        with store.session() as session:
            new_token = reset_token(session, "ann")  # the old token and its sessions end
        page.goto(url + "/queue")
        assert "/login" in page.url
        for i in range(3):
            _review_login(page, url, f"dkr_wrong{i}")
            assert "unknown, revoked or disabled token" in page.inner_text("main")
        _review_login(page, url, new_token)
        assert "too many login attempts" in page.inner_text("main") and "/login" in page.url


def test_review_pages_keep_untrusted_text_inert(context, store: Store) -> None:  # type: ignore[no-untyped-def]
    with store.session() as session:
        token = add_reviewer(session, "root", admin=True)[1]
        payload = relevance_payload(query=XSS[3], sentences=XSS)
        payload["qid"], payload["docid"] = XSS[1], XSS[2]
        job = '<img src=x onerror="window.pwned = 5">'
        relevance = enqueue(session, job=job, kind="relevance", item_key="x", payload=payload).id
        rule = {
            "record": {"turn": XSS[0]},
            "rule": {"id": XSS[1], "text": XSS[2]},
            "result": {"status": "fail", "explanation": XSS[3]},
        }
        adherence = enqueue(session, job=job, kind="adherence", item_key="y", payload=rule).id
    with serve(review_app(store)) as url:
        page = context.new_page()
        _review_login(page, url, token)
        for path in (
            "/queue?status=all",
            f"/tasks/{relevance}",
            f"/tasks/{adherence}",
            "/stats",
            "/admin",
        ):
            page.goto(url + path)
            page.locator("main").hover()
            _inert(page)
        page.goto(url + "/queue?status=" + quote(XSS[1]))  # echoed in the error page
        assert "unknown status" in page.inner_text("main")
        _inert(page)
        page.goto(f"{url}/tasks/{relevance}")
        assert page.inner_text("#S1 .stext") == XSS[0]


@pytest.fixture
def verify_url(store: Store) -> Iterator[str]:
    rules = [dict(r) for r in RULES["rules"]]
    rules[0] = {**rules[0], "text": XSS[1] + " " + XSS[3]}  # rule text is untrusted too
    verifier = Verifier(
        ruleset(rules),
        sim_model=register_fake("kit-page-sim", lambda r: "FAIL: " + XSS[2]),
        sub_model=register_fake("kit-page-sub", lambda r: "REASONING: fine.\nVERDICT: PASS"),
    )
    app = create_verify_app(
        verifier, store=store, settings=WebSettings(lockout_failures=2, lockout_s=600)
    )
    with serve(app) as url:
        yield url


def _verify_login(page, url: str, token: str) -> None:  # type: ignore[no-untyped-def]
    page.goto(url + "/login")
    page.fill("#token", token)
    page.click("#login")
    page.wait_for_load_state()


def test_verify_page_login_lockout_and_revocation(context, store: Store, verify_url: str) -> None:  # type: ignore[no-untyped-def]
    token = add_token(store, "ann")
    page = context.new_page()
    _verify_login(page, verify_url, token)
    page.wait_for_url(verify_url + "/annotate")
    stats = "fetch('/annotate/stats', {credentials: 'same-origin'}).then(r => r.status)"
    assert page.evaluate(stats) == 200
    assert revoke_tokens(store, "ann") == 1
    assert page.evaluate(stats) == 401  # the open page's session ended with its token
    page.goto(verify_url + "/annotate")
    assert page.url == verify_url + "/login"
    for i in range(2):
        _verify_login(page, verify_url, f"wrong-token-{i}-0123456789")
        assert "unknown, revoked or disabled token" in page.inner_text("main")
    _verify_login(page, verify_url, add_token(store, "ann"))
    assert "too many login attempts" in page.inner_text("main")


def test_verify_logout_needs_csrf_and_cross_site_logins_fail(
    context, store: Store, verify_url: str
) -> None:  # type: ignore[no-untyped-def]
    token = add_token(store, "bob")
    page = context.new_page()
    _verify_login(page, verify_url, token)
    page.wait_for_url(verify_url + "/annotate")
    text = _cross_site_post(context, verify_url + "/logout", {"csrf_token": "guess"})
    assert "403" in text or "CSRF" in text or "login required" in text
    page.goto(verify_url + "/annotate")
    assert page.url == verify_url + "/annotate"  # still logged in
    forged = _cross_site_post(context, verify_url + "/login", {"token": token, "csrf_token": "x"})
    assert "form expired" in forged or "another origin" in forged
    with page.expect_navigation():
        page.click("button.link")  # the real logout form
    assert page.url == verify_url + "/login"


def test_verify_page_keeps_dialogue_scenario_and_rule_text_inert(
    context, store: Store, verify_url: str
) -> None:  # type: ignore[no-untyped-def]
    token = add_token(store, "carol")
    page = context.new_page()
    _verify_login(page, verify_url, token)
    page.wait_for_url(verify_url + "/annotate")
    page.fill("#field-scenario", XSS[0])
    page.fill("#turn-text", XSS[1] + XSS[3])
    page.click("#submit-turn")
    page.wait_for_selector("#verify-status >> text=/Done in/")
    page.locator("main").hover()
    _inert(page)
    assert page.locator("#turns .text").first.text_content() == XSS[1] + XSS[3]
    explanation = page.locator('li.result[data-rule-id="S2"] .explanation').text_content()
    assert '<svg onload="window.pwned = 3">' in explanation  # model text, shown as text
    rules = page.locator("details .rules").text_content()
    assert XSS[1] in rules and XSS[3] in rules  # rule text shown as text


def test_the_page_sends_the_scenario_so_field_rules_see_it(context, store: Store) -> None:  # type: ignore[no-untyped-def]
    field_rules = [
        {
            "id": "SC",
            "text": "The scenario has at most 20 words.",
            "tier": "fmt",
            "scope": {"kind": "field", "field": "scenario"},
            "check": {"checker": "word_count", "params": {"max": 20}},
        },
        {
            "id": "SU",
            "text": "The summary has at most 5 words.",
            "tier": "fmt",
            "scope": {"kind": "field", "field": "summary"},
            "check": {"checker": "word_count", "params": {"max": 5}},
        },
    ]
    token = add_token(store, "dana")
    app = create_verify_app(Verifier(ruleset(field_rules)), store=store)
    with serve(app) as url:
        page = context.new_page()
        _verify_login(page, url, token)
        page.wait_for_url(url + "/annotate")
        assert page.locator("textarea.record-field").count() == 2  # scenario, summary

        def check(text: str) -> dict[str, str]:
            page.fill("#turn-text", text)
            page.click("#submit-turn")
            page.wait_for_selector("#verify-status >> text=/Done in/")
            items = page.locator("li.result")
            return {
                items.nth(i).get_attribute("data-rule-id"): items.nth(i).get_attribute(
                    "data-status"
                )
                for i in range(items.count())
            }

        assert check("Hello") == {"SC": "not_yet", "SU": "not_yet"}  # fields not sent yet
        # not_yet is not a flag: not counted as one and not offered "Accept and fix".
        assert "0 flags" in page.locator("#verify-status").text_content()
        assert page.locator("li.result button.accept").count() == 0
        page.fill("#field-scenario", "Maria's 09:15 train to York was cancelled.")
        page.fill("#field-summary", "one two three four five six seven")
        assert check("Hi again") == {"SC": "pass", "SU": "fail"}
        explanation = page.locator('li.result[data-rule-id="SU"] .explanation').text_content()
        assert "missing" not in explanation  # judged on the text that was sent
        assert "1 flag." in page.locator("#verify-status").text_content()
        page.click('li.result[data-rule-id="SU"] button.accept')
        # Turns are numbered from 1, as in the list of turns: the second turn is "turn 2".
        assert page.locator(".fix-editor label").text_content() == "Fixed text of turn 2"
