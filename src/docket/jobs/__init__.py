"""Judging jobs as a library: the one place a judging run is composed.

>>> from docket.jobs import run_job
>>> run = run_job("pairs.jsonl", method="dream", model="local", db="docket.db")  # doctest: +SKIP
>>> run.to_pandas()  # doctest: +SKIP

:func:`run_job` judges pairs (a file, a DataFrame or Pairs) in a resumable job of the
store and queues its escalations for review; :func:`list_jobs` lists a store's jobs; :func:`fill_holes`, :func:`simulate_holes`,
:func:`simulate_budget` and :func:`compare_methods` build on it, and so does every judging command.
"""

from docket.jobs.budget_sim import BudgetSimulation, simulate_budget
from docket.jobs.holes import HoleFill, HoleSimulation, fill_holes, simulate_holes
from docket.jobs.inputs import JobInput, job_input, select_input
from docket.jobs.listing import JobSummary, list_jobs
from docket.jobs.methods import MethodComparison, compare_methods
from docket.jobs.result import FRAME_COLUMNS, JobRun
from docket.jobs.run import run_job
from docket.jobs.spec import JobSpec, canonical_model

__all__ = [
    "FRAME_COLUMNS",
    "BudgetSimulation",
    "HoleFill",
    "HoleSimulation",
    "JobInput",
    "JobRun",
    "JobSpec",
    "JobSummary",
    "MethodComparison",
    "canonical_model",
    "compare_methods",
    "fill_holes",
    "job_input",
    "list_jobs",
    "select_input",
    "run_job",
    "simulate_budget",
    "simulate_holes",
]
