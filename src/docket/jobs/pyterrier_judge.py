"""docket's judge as a PyTerrier transformer: ``retriever >> DocketJudge(...)``.

It judges the ``(qid, query, docno, text)`` rows of a frame in a job of the store (same
cache, resume and escalation as :func:`docket.jobs.run_job`) and adds ``label``, ``grade``,
``decided_by`` and ``confidence`` columns. :meth:`DocketJudge.qrels` gives the job's labels
as a qrels frame for ``pt.Experiment``. Needs ``pip install 'docket[pyterrier]'``; no Java
(pure-Python transformers never start Terrier).
"""

from __future__ import annotations

import hashlib
import re
from typing import Any

from docket.errors import ConfigError, MissingDependencyError
from docket.jobs.result import JobRun, job_qrels
from docket.jobs.run import run_job
from docket.jobs.spec import JobSpec
from docket.store import Store, open_store
from docket.store.tables import Job

try:
    import pandas as pd
    import pyterrier as pt
except ImportError:  # pragma: no cover - exercised only without the extra
    raise MissingDependencyError("pyterrier", "pyterrier") from None

MAX_JOB_NAME = 120
ADDED = ("label", "grade", "decided_by", "confidence")
"""Columns the transformer adds to its input frame."""
NEEDED = ("qid", "query", "docno", "text")


class DocketJudge(pt.Transformer):
    """Judges each retrieved ``(qid, docno)`` of a frame with a docket method.

    Args:
        spec: how to judge (default: built from ``values``, see :meth:`JobSpec.of`).
        job: the store job the judgments go to (a rerun skips judged pairs, no call);
            default ``pyterrier-<method>-<model>`` (:func:`default_job`), so judges of
            different methods or models keep their judgments apart.
        reviewed: report reviewers' final labels where they exist (else as judged).
        values: keyword options for :meth:`JobSpec.of` (``method``, ``model``, ``db``, ...).
    """

    def __init__(
        self, spec: JobSpec | None = None, *, job: str | None = None, reviewed: bool = True,
        **values: Any,
    ) -> None:  # fmt: skip
        self.spec = spec or JobSpec.of(**values)
        self.job = job or default_job(self.spec)
        self.reviewed = reviewed
        self.store: Store = open_store(self.spec.settings.db)
        self.last_run: JobRun | None = None

    def transform(self, inp: pd.DataFrame) -> pd.DataFrame:
        """The input frame with :data:`ADDED` columns; escalated pairs have no label yet."""
        missing = [c for c in NEEDED if c not in inp.columns]
        if missing:
            raise ConfigError(
                f"DocketJudge needs the columns {', '.join(NEEDED)}; missing {', '.join(missing)}",
                hint="put a text loader (e.g. pt.text.get_text) before the judge",
            )
        out = inp.copy()
        if out.empty:
            return out.assign(**{column: pd.Series(dtype=object) for column in ADDED})
        pairs = out[list(NEEDED)].drop_duplicates(["qid", "docno"])
        run = run_job(pairs, self.spec, job=self.job, store=self.store, source="pyterrier")
        self.last_run = run
        found = {
            (p.qid, p.docid): (j.label, j.grade, j.decided_by, j.confidence)
            for p, j in run.judgments(self.reviewed)
        }
        keys = list(zip(out["qid"].astype(str), out["docno"].astype(str), strict=True))
        for index, column in enumerate(ADDED):
            out[column] = [found.get(key, (None,) * len(ADDED))[index] for key in keys]
        return out

    def qrels(self, grades: str = "keep", rel_level: int = 1) -> pd.DataFrame:
        """The job's labels as a PyTerrier qrels frame (``qid``, ``docno``, ``label``).

        Escalated pairs without a reviewer's decision are left out, as in ``docket export``.
        The labels are read from the job in the store, so a new judge on the same job
        (after a restart) gives them without judging again.
        """
        with self.store.read_session() as session:
            if session.get(Job, self.job) is None:
                raise ConfigError(
                    f"nothing judged yet in job '{self.job}'", hint="run the pipeline first"
                )
        labels = "reviewed" if self.reviewed else "judged"
        qrels = job_qrels(self.store, self.job, labels, grades, rel_level)  # type: ignore[arg-type]
        rows = [(q, d, v) for q, docs in qrels.items() for d, v in docs.items()]
        return pd.DataFrame(rows, columns=["qid", "docno", "label"])


def default_job(spec: JobSpec) -> str:
    """``pyterrier-<method>-<model>``, the model name reduced to letters, digits, ``.``,
    ``_`` and ``-`` (a long one is cut and ends in a short hash of the whole name)."""
    model = re.sub(r"[^A-Za-z0-9._-]+", "-", spec.model_name).strip("-")
    name = f"pyterrier-{spec.method}-{model}"
    if len(name) > MAX_JOB_NAME:
        digest = hashlib.sha256(spec.model_name.encode()).hexdigest()[:8]
        name = f"{name[: MAX_JOB_NAME - 9]}-{digest}"
    return name
