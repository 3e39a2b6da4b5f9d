"""The language of a text, by ``langdetect`` (Apache-2.0; its profiles ship in the package).

Detection is seeded, so the same text always gets the same answer. A text with no
letters to go by cannot be decided: the check raises, and the rule is ``needs_review``
(IFEval counts that case as followed; docket does not turn "could not tell" into a pass).
"""

from __future__ import annotations

import threading
from functools import lru_cache

from pydantic import Field, field_validator

from docket.adherence.checks.base import CheckOutcome, Params, checker

_LOCK = threading.Lock()  # langdetect's factory is global state


class LanguageParams(Params):
    """``language``: the ISO 639-1 code the text must be in (``en``, ``fr``, ``de``, ...);
    ``min_chars``: shorter texts are not tested and pass (default 0: test every text)."""

    language: str = Field(min_length=2, max_length=5)
    min_chars: int = Field(default=0, ge=0)

    @field_validator("language")
    @classmethod
    def _known(cls, value: str) -> str:
        code = value.strip().lower()
        if code not in known_languages():
            raise ValueError(f"unknown language code '{value}' (use ISO 639-1, e.g. en, fr, de)")
        return code


@lru_cache(maxsize=1)
def known_languages() -> frozenset[str]:
    """The language codes the detector knows (from its bundled profiles)."""
    from langdetect import detector_factory

    with _LOCK:
        detector_factory.init_factory()
        factory = detector_factory._factory  # noqa: SLF001  (no public list of the profiles)
        return frozenset(code.split("-")[0] for code in factory.get_lang_list())


def detect_language(text: str) -> str:
    """The detected ISO 639-1 code of ``text`` (``zh-cn`` becomes ``zh``).

    Raises:
        ValueError: the text has nothing to detect a language from.
    """
    from langdetect import DetectorFactory, detect
    from langdetect.lang_detect_exception import LangDetectException

    with _LOCK:
        DetectorFactory.seed = 0  # the same text always gets the same answer
        try:
            return str(detect(text)).split("-")[0]
        except LangDetectException as exc:
            raise ValueError(f"no language could be detected ({exc})") from exc


@checker("response_language", LanguageParams)
def response_language(text: str, params: LanguageParams) -> CheckOutcome:
    """The text is written in the given language (ISO 639-1 code), by language identification."""
    if len(text.strip()) < params.min_chars:
        return CheckOutcome(True, f"shorter than {params.min_chars} characters: not tested")
    found = detect_language(text)
    if found == params.language:
        return CheckOutcome(True, f"written in '{found}'")
    return CheckOutcome(False, f"written in '{found}', not '{params.language}'")
