"""A ``validate_answer`` callback for Prodigy recipes, on docket's verifier.

Prodigy calls a recipe's ``validate_answer(eg)`` when an annotator submits an example and
shows the message of a ``ValueError`` it raises, keeping the annotator on the example.
docket does not import Prodigy: this is a plain function over the example dict::

    @prodigy.recipe("my-recipe")
    def my_recipe(...):
        verifier = Verifier(load_rules("rules.yaml"))
        return {..., "validate_answer": validate_answer(verifier)}

By default an example becomes a record whose turns are its ``messages`` (``role`` and
``content`` or ``text``) and whose fields are its other top-level strings (``text``,
``user_input``...); pass ``to_submission`` for another layout.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections.abc import Callable
from typing import Any

from docket.adherence.labelstudio.convert import flagged, message
from docket.adherence.record import Record, Turn
from docket.adherence.verify import Submission, Verdict, Verifier

Example = dict[str, Any]


def example_submission(eg: Example) -> Submission:
    """The default submission of a Prodigy example (see the module docstring)."""
    messages = eg.get("messages") if isinstance(eg.get("messages"), list) else []
    turns = [
        Turn(role=str(m.get("role", "")), text=str(m.get("content", m.get("text", ""))))
        for m in messages
        if isinstance(m, dict)
    ]
    fields = {k: v for k, v in eg.items() if isinstance(v, str) and not k.startswith("_")}
    hashed = eg.get("_task_hash", eg.get("_input_hash", ""))
    return Submission(Record(id=str(hashed or "prodigy"), turns=turns, fields=fields))


def _verify(verifier: Verifier, submission: Submission) -> Verdict:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return verifier.verify_sync(submission)
    # Called from inside an event loop: verify on a thread of its own.
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(verifier.verify_sync, submission).result()


def validate_answer(
    verifier: Verifier, to_submission: Callable[[Example], Submission] = example_submission
) -> Callable[[Example], None]:
    """A Prodigy ``validate_answer`` callback that raises ``ValueError`` with the feedback.

    The message lists every failed or undecided rule (its text, why, how to fix it);
    ``not_yet`` results are left out. An example that passes returns None.
    """

    def check(eg: Example) -> None:
        verdict = _verify(verifier, to_submission(eg))
        flags = flagged(verdict)
        if flags:
            raise ValueError("\n\n".join(message(verifier.ruleset, r) for r in flags))

    return check
