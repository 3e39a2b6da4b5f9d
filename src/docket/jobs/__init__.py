"""Judging jobs as a library: the one place a judging run is composed.

>>> from docket.jobs import run_job
>>> run = run_job("pairs.jsonl", method="dream", model="local", db="docket.db")  # doctest: +SKIP
>>> run.to_pandas()  # doctest: +SKIP

:func:`run_job` judges pairs (a file, a DataFrame or Pairs) in a resumable job of the
store and queues its escalations for review; :func:`compare_methods` and the hole work of
:mod:`docket.holes` build on it, and so does every judging command. :func:`list_jobs`
lists a store's jobs (``docket jobs``).
"""

from docket.jobs.inputs import JobInput, job_input, select_input
from docket.jobs.listing import JobSummary, list_jobs
from docket.jobs.methods import MethodComparison, compare_methods
from docket.jobs.result import FRAME_COLUMNS, JobRun
from docket.jobs.run import run_job
from docket.jobs.spec import JobSpec, canonical_model

__all__ = [
    "FRAME_COLUMNS",
    "JobInput",
    "JobRun",
    "JobSpec",
    "JobSummary",
    "MethodComparison",
    "canonical_model",
    "compare_methods",
    "job_input",
    "list_jobs",
    "select_input",
    "run_job",
]
