"""Tables of the label audit: which automatically decided pairs were drawn, and how likely.

Declared in the store so that the migration ledger creates them without importing the
audit package; :mod:`docket.audit.draw` writes and reads them.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Float, ForeignKey, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from docket.store.schema import Base, utcnow


class AuditPairRow(Base):
    """One pair drawn into a job's audit, with its stratum and inclusion probability.

    Within a stratum the pairs are ordered by a seeded hash of (qid, docid) and a draw takes
    a prefix of that order, so the drawn pairs are a simple random sample of the stratum and
    each has inclusion probability ``n_h / N_h``. Extending the audit takes a longer prefix:
    the pairs already drawn stay and the probability of every pair of the stratum is
    rewritten to the new ``n_h / N_h`` (the design is still a simple random sample).
    """

    __tablename__ = "audit_pairs"

    job: Mapped[str] = mapped_column(ForeignKey("jobs.name"), primary_key=True)
    qid: Mapped[str] = mapped_column(String(200), primary_key=True)
    docid: Mapped[str] = mapped_column(String(400), primary_key=True)
    stratum: Mapped[str] = mapped_column(String(80), index=True)
    # 0-based position in the stratum's seeded order (the draw is a prefix of it).
    rank: Mapped[int] = mapped_column(Integer)
    # N_h: how many automatically decided pairs the stratum held at draw time.
    stratum_size: Mapped[int] = mapped_column(Integer)
    inclusion_probability: Mapped[float] = mapped_column(Float)
    seed: Mapped[int] = mapped_column(Integer)
    by: Mapped[str] = mapped_column(String(40))
    task_id: Mapped[int | None] = mapped_column(ForeignKey("review_tasks.id"), nullable=True)
    drawn_at: Mapped[datetime] = mapped_column(default=utcnow)
