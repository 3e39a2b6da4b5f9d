"""The certificate of a stored job: per-stratum figures, census, reviewers and kappa."""

from __future__ import annotations

import pytest

from docket.agreement import cohen_kappa
from docket.audit.draw import draw_audit
from docket.audit.render import certificate_markdown
from docket.audit.report import certificate
from docket.review.auth import add_reviewer
from docket.review.queue import record_decision, select_tasks
from docket.store.base import Store
from tests.audit.test_draw import _job


def test_certificate_counts_reviewers_kappa_and_warns(store: Store) -> None:
    _job(store)  # 180 automatic pairs (label = i % 2, gold = i % 2), 20 escalated
    draw_audit(store, "j", 20, required_reviews=2)
    ann, bob = [], []
    with store.session() as session:
        add_reviewer(session, "ann")
        add_reviewer(session, "bob")
        for n, task in enumerate(select_tasks(session, job="j")):
            auto = int(task.payload["docid"][1:]) % 2
            wrong = n % 5 == 0  # bob disagrees with the automatic label on every fifth
            record_decision(session, task.id, "ann", auto)
            record_decision(session, task.id, "bob", 1 - auto if wrong else auto)
            ann.append(auto)
            bob.append(1 - auto if wrong else auto)
    cert = certificate(store, "j", confidence=0.9)
    assert cert.reviewers == {"ann": 20, "bob": 20}
    [pair] = cert.agreement
    assert (pair.first, pair.second, pair.n) == ("ann", "bob", 20)
    assert pair.kappa == pytest.approx(cohen_kappa(ann, bob))
    # A tie between ann and bob has no human label: those pairs stay unanswered.
    ties = sum(a != b for a, b in zip(ann, bob, strict=True))
    assert cert.sources["human_audit"] == 20 - ties
    # The escalations of this hand-made job were never queued: all wait for a decision.
    assert cert.sources["human_escalations"] == 0
    assert cert.sources["undecided_escalations"] == 20
    assert all(s.accuracy.method == "exact" for s in cert.strata)
    assert cert.automatic_accuracy.estimate == pytest.approx(1.0)
    assert any("not fully answered" in w for w in cert.warnings)
    assert any("< 30" in w for w in cert.warnings)
    text = certificate_markdown(cert)
    assert "90% confidence interval" in text and "Cohen's kappa ann / bob" in text
    data = cert.as_dict()
    assert data["automatic_accuracy"]["n"] == 20 - ties and data["confidence"] == 0.9
