"""The verification tables, as the adherence package names them.

They are declared in the store (:mod:`docket.store.adherence_tables`), the bottom layer, so
that the store's migration ledger creates them without importing anything above it; code
above the store imports them from here.
"""

from docket.store.adherence_tables import (
    ApiToken,
    FeedbackResponse,
    VerificationResult,
    VerificationRun,
)

__all__ = ["ApiToken", "FeedbackResponse", "VerificationResult", "VerificationRun"]
