"""Human review of escalated items: queue, decisions, assignment, agreement, web app.

``queue`` (enqueue, record_decision, final_labels), ``assign``, ``auth`` (reviewers,
tokens, sessions), ``stats``, ``labelstudio``/``labelstudio_import``, and ``web``
(the FastAPI app behind ``docket review serve``). See docs/review.md.
"""
