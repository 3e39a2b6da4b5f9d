"""Judging jobs as a library: the one place a judging run is composed.

>>> from docket.jobs import run_job
>>> run = run_job("pairs.jsonl", method="dream", model="local", db="docket.db")  # doctest: +SKIP
>>> run.to_pandas()  # doctest: +SKIP

:func:`run_job` judges pairs (a file, a DataFrame or Pairs) in a resumable job of the
store and queues its escalations for review; :func:`plan_job` says what it would cost with
no LLM call, and :func:`run_pilot` judges a sample first and projects the rest (the bill,
:mod:`docket.jobs.bill`); :func:`compare_methods` and the hole work of :mod:`docket.holes`
build on it, and so does every judging command. :func:`list_jobs` lists a store's jobs
(``docket jobs``).
"""

from docket.jobs.bill.caps import Bill, Caps
from docket.jobs.bill.figures import JobPlan, PlanInputs
from docket.jobs.bill.pilot import PilotGate, PilotReport
from docket.jobs.bill.pilot_run import run_pilot
from docket.jobs.bill.plan import plan_job
from docket.jobs.inputs import JobInput, job_input, select_input
from docket.jobs.listing import JobSummary, list_jobs
from docket.jobs.methods import MethodComparison, compare_methods
from docket.jobs.result import FRAME_COLUMNS, JobRun
from docket.jobs.run import run_job
from docket.jobs.spec import JobSpec, canonical_model

__all__ = [
    "FRAME_COLUMNS",
    "Bill",
    "Caps",
    "JobInput",
    "JobPlan",
    "JobRun",
    "JobSpec",
    "JobSummary",
    "MethodComparison",
    "PilotGate",
    "PilotReport",
    "PlanInputs",
    "canonical_model",
    "compare_methods",
    "job_input",
    "list_jobs",
    "plan_job",
    "run_job",
    "run_pilot",
    "select_input",
]
