"""End-to-end tests in real headless Chromium (Debian's /usr/bin/chromium via Playwright).

Set DOCKET_UPDATE_SCREENSHOTS=1 to refresh docs/review-item.png.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import select

from docket.review.auth import add_reviewer
from docket.review.models import Decision
from docket.review.queue import enqueue
from docket.store.base import Store
from tests.browser_support import CHROMIUM, chromium
from tests.review.review_helpers import relevance_payload, wound_payload

pytestmark = pytest.mark.browser
DOCS = Path(__file__).resolve().parents[2] / "docs"
RELEVANT_BG, IRRELEVANT_BG = "rgb(220, 243, 226)", "rgb(251, 224, 222)"
# Records CSP violations: if escaping failed, the CSP would block the injected code and
# the test could still pass; a violation shows that markup got through unescaped.
WATCH = """window.__violations = [];
document.addEventListener('securitypolicyviolation', e => window.__violations.push(e.violatedDirective));"""


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    if not CHROMIUM.exists():
        pytest.fail("Debian chromium is not installed (apt-get install chromium chromium-driver)")
    with chromium() as launched:
        yield launched


@pytest.fixture
def page(browser, live_server: str):  # type: ignore[no-untyped-def]
    context = browser.new_context(base_url=live_server, viewport={"width": 1280, "height": 900})
    context.add_init_script(WATCH)
    opened = context.new_page()
    opened.dialogs = []
    opened.on("dialog", lambda dialog: (opened.dialogs.append(dialog.message), dialog.dismiss()))
    yield opened
    context.close()


def _log_in(page, token: str) -> None:  # type: ignore[no-untyped-def]
    page.goto("/queue")
    assert page.url.endswith("/login?next=/queue")
    page.fill("input[name=token]", token)
    page.click("button[type=submit]")
    page.wait_for_url(re.compile(r".*/queue$"))


def _enqueue(store: Store, key: str, payload: dict | None = None, **kwargs) -> int:  # type: ignore[no-untyped-def]
    blind = kwargs.pop("blind", False)
    with store.session() as session:
        return enqueue(
            session,
            job="dl21",
            kind="relevance",
            item_key=key,
            payload=payload or relevance_payload(**kwargs),
            blind=blind,
        ).id


def test_untrusted_text_never_executes(page, store: Store) -> None:  # type: ignore[no-untyped-def]
    evil = [
        "<script>window.pwned = 1</script>",
        '<img src=x onerror="window.pwned = 2">',
        "<svg onload=\"alert('svg')\"></svg>",
        '<iframe srcdoc="<script>parent.pwned = 4</script>"></iframe>',
    ]
    with store.session() as session:
        token = add_reviewer(session, "ann")[1]
    task_id = _enqueue(store, "q/xss", query='<b onmouseover="alert(1)">q</b>', sentences=evil)
    _log_in(page, token)
    page.goto(f"/tasks/{task_id}")
    for sentence_id in ("S1", "S2", "S3", "S4"):
        page.hover(f"#{sentence_id}")
    page.hover("#query-text")
    page.wait_for_timeout(300)  # give any injected handler a chance to run
    assert page.evaluate("window.pwned") is None
    assert page.dialogs == []
    assert page.evaluate("window.__violations") == []
    injected = "main script, main img, main svg, main iframe, main [onerror], main [onmouseover]"
    assert page.locator(injected).count() == 0
    assert page.inner_text("#S1 .stext") == evil[0]  # shown as text, exactly
    assert page.inner_text("#query-text") == '<b onmouseover="alert(1)">q</b>'


def test_review_with_the_keyboard_and_watch_the_statistics(
    page,
    store: Store,  # type: ignore[no-untyped-def]
) -> None:
    with store.session() as session:
        token = add_reviewer(session, "root", admin=True)[1]
    first = _enqueue(store, "1042/msmarco_passage_17_4412", wound_payload(gold=1))
    second = _enqueue(store, "q1/d2", gold=0)
    _log_in(page, token)
    page.goto("/stats")
    assert page.inner_text('[data-stat="decisions"]') == "0"
    page.goto("/queue")
    page.click(f"a[href='/tasks/{first}']")
    page.wait_for_url(f"**/tasks/{first}")

    # Evidence: one colour per stance, badges for agent and round, and a legend.
    assert page.get_attribute("#S2", "class") == "sentence cited-relevant"
    assert page.get_attribute("#S3", "class") == "sentence cited-irrelevant"
    assert page.get_attribute("#S4", "class") == "sentence cited-irrelevant cited-relevant"
    assert page.eval_on_selector("#S2", "e => getComputedStyle(e).backgroundColor") == RELEVANT_BG
    assert page.eval_on_selector("#S3", "e => getComputedStyle(e).backgroundColor") == IRRELEVANT_BG
    assert page.eval_on_selector("#S4", "e => getComputedStyle(e).backgroundImage").startswith(
        "linear-gradient"
    )
    assert page.locator("#S4 .badge").all_inner_texts() == ["A·1", "B·2"]
    assert page.get_attribute("#S4 .badge.stance-irrelevant", "title") == (
        "agent B, round 2, arguing irrelevant"
    )
    assert page.locator(".legend .swatch").count() == 3
    assert page.locator(".round").count() == 2 and page.locator(".turn").count() == 4
    page.screenshot(path=str(_shot_path()), full_page=True)

    # Typing in the note never triggers shortcuts; Esc leaves the field.
    page.click("textarea[name=note]")
    page.keyboard.type("S2 gives the number; r i n")
    page.keyboard.press("Escape")
    assert page.url.endswith(f"/tasks/{first}")
    page.keyboard.press("2")
    assert page.is_checked("input[name=grade][value='2']")
    page.keyboard.press("r")
    page.wait_for_url(f"**/tasks/{second}?saved={first}")
    assert f"Saved your decision on task {first}" in page.inner_text("main")

    page.goto("/stats")
    assert page.inner_text('[data-stat="decisions"]') == "1"
    assert page.inner_text('[data-stat="tasks-done"]') == "1"

    page.goto(f"/tasks/{second}")
    page.keyboard.press("i")
    page.wait_for_url(re.compile(rf".*/queue\?saved={second}$"))
    page.goto("/stats")
    assert page.inner_text('[data-stat="decisions"]') == "2"
    assert page.inner_text('[data-stat="tasks-open"]') == "0"
    with store.session() as session:
        rows = session.scalars(select(Decision).order_by(Decision.id)).all()
    assert [(d.task_id, d.label, d.grade, d.source) for d in rows] == [
        (first, 1, 2, "web"),
        (second, 0, None, "web"),
    ]
    assert rows[0].note == "S2 gives the number; r i n" and rows[0].seconds > 0


def test_next_key_and_blind_mode(page, store: Store) -> None:  # type: ignore[no-untyped-def]
    with store.session() as session:
        token = add_reviewer(session, "bob")[1]
    first = _enqueue(store, "q2/d1")
    blind = _enqueue(store, "q2/d2", blind=True)
    _log_in(page, token)
    page.goto(f"/tasks/{first}")
    page.keyboard.press("n")
    page.wait_for_url(f"**/tasks/{blind}")
    assert page.is_visible("#blind-badge")
    assert page.locator(".debate, .legend, .badge.stance-relevant").count() == 0
    assert "S2 is about the pot" not in page.content()
    page.keyboard.press("r")
    page.wait_for_url(re.compile(r".*/tasks/\d+\?saved=\d+$"))
    with store.session() as session:
        assert session.scalars(select(Decision.blind)).all() == [True]


def _shot_path() -> Path:
    if os.environ.get("DOCKET_UPDATE_SCREENSHOTS") == "1":
        return DOCS / "review-item.png"
    return Path(os.environ.get("TMPDIR", "/tmp")) / "docket-review-item.png"


def test_single_judgment_empty_turn_and_a_refused_decision(page, store: Store) -> None:  # type: ignore[no-untyped-def]
    from docket.review.queue import close_task
    from docket.runner.escalate import review_payload
    from tests.review.test_single_judgment import PAIR, _lara_escalation

    with store.session() as session:
        token = add_reviewer(session, "cy")[1]
    lara = _enqueue(store, "q3/d1", review_payload(PAIR, _lara_escalation()))
    empty = relevance_payload()
    empty["transcript"][1]["reasoning"] = ""
    debate = _enqueue(store, "q3/d2", empty)
    _log_in(page, token)
    page.goto(f"/tasks/{lara}")
    judgment = page.locator("#single-judgment")
    assert "low confidence: P(yes) = 0.509" in judgment.inner_text()
    assert page.locator("text=arguing neutral").count() == 0
    page.goto(f"/tasks/{debate}")
    assert page.locator(".turn .reasoning.empty").inner_text() == "(no reasoning given)"
    with store.session() as session:
        close_task(session, debate)  # closed while the reviewer looks at it
    page.keyboard.press("r")
    page.wait_for_selector("#decision-error")
    assert page.url.endswith(f"/tasks/{debate}/decision")  # still on the item, not a dead end
    assert "not saved" in page.locator("#decision-error").inner_text()
    assert page.locator("h1").inner_text().startswith(f"Task {debate}")
