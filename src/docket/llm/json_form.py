"""The form in which a served model takes a JSON schema, found by its first calls.

OpenAI, vLLM, Ollama and llama.cpp's C++ server take ``response_format`` of type
``json_schema``; llama-cpp-python's server refuses it (a 500 naming ``response_format``)
and takes ``json_object`` with a ``schema`` member. :class:`JsonForm` starts with
``json_schema`` unless an earlier process kept the form
(:mod:`docket.llm.limit_memory`), and:

* holds the other calls while the first call with a schema is out, until it is answered
  or :data:`GRACE_S` has passed, whichever is first: a refusal of the form is a request
  check answered in milliseconds, before any generation, so against a refusing server
  one call is refused (and its server logs one traceback), not every call in flight,
  while against a server that takes the form the others lose at most the grace, not a
  whole round trip;
* does not depend on the grace for correctness: any call refused for the form while it
  was sent as ``json_schema`` switches the model to ``json_object`` (once, with one
  warning) and is sent again in that form (the provider counts the refusal as a retry).
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from typing import Any

from docket.llm.limit_memory import keep_json_form, recall_json_form

log = logging.getLogger(__name__)
GRACE_S = 0.1
"""The longest the first call with a schema holds the others back: a refusal of the form
is a request check, answered in milliseconds by the local servers that refuse it."""
FORMS = ("json_schema", "json_object")


@dataclass
class JsonForm:
    """How one model's schemas are sent, and what its first calls learned about it."""

    name: str
    """The model's canonical name: its key in ``limits.json``."""
    mode: str = "json_schema"
    known: bool = False
    """A call in ``mode`` was answered (or an earlier process kept it): no hold."""
    _recalled: bool = field(default=False, repr=False)
    _hold: Any = field(default=None, repr=False)

    def response_format(self, schema: dict[str, Any], mode: str) -> dict[str, Any]:
        """The ``response_format`` member that sends ``schema`` in ``mode``."""
        if mode == "json_object":
            return {"type": "json_object", "schema": schema}
        return {"type": "json_schema", "json_schema": {"name": "reply", "schema": schema}}

    async def hold(self) -> bool:
        """Wait while the form is not known and the first call is out (at most the grace).

        Returns True for the call that goes first: it calls :meth:`answered` when its
        reply (or failure) comes.
        """
        if self.known or self._recall():
            return False
        loop = asyncio.get_running_loop()
        if self._hold is None or self._hold[0] is not loop:
            self._hold = (loop, asyncio.Event(), loop.time() + GRACE_S)
            return True
        _, event, deadline = self._hold
        if not event.is_set() and deadline > loop.time():
            try:
                async with asyncio.timeout_at(deadline):
                    await event.wait()
            except TimeoutError:
                pass  # the first call is slow to answer: the form is surely taken
        return False

    def answered(self) -> None:
        """The first call got its reply: the calls it held go."""
        if self._hold is not None:
            self._hold[1].set()

    def accepted(self, mode: str) -> None:
        """A call sent in ``mode`` was answered: keep the form for later processes."""
        if not self.known and mode == self.mode:
            self.known = True
            keep_json_form(self.name, mode)

    def refused(self, mode: str) -> bool:
        """A call sent in ``mode`` was refused for its form: True when it goes again.

        The first refusal of ``json_schema`` switches the model to ``json_object``.
        """
        if mode != "json_schema":
            return False
        if self.mode == "json_schema":
            self.mode, self.known = "json_object", False
            log.warning(
                "%s: the server refused response_format json_schema; JSON schemas go as "
                "response_format json_object with a schema (llama-cpp-python's form)",
                self.name,
            )
        return True

    def _recall(self) -> bool:
        # Once per model: the form an earlier process found against this server.
        if not self._recalled:
            self._recalled = True
            form = recall_json_form(self.name)
            if form in FORMS:
                self.mode, self.known = form, True
        return self.known
