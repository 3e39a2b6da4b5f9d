"""Judging jobs as a library: the one place a judging run is composed.

>>> from docket.jobs import run_job
>>> run = run_job("pairs.jsonl", method="dream", model="local", db="docket.db")  # doctest: +SKIP
>>> run.to_pandas()  # doctest: +SKIP

:func:`run_job` judges pairs (a file, a DataFrame or Pairs) in a resumable job of the
store and queues its escalations for review; :func:`plan_job` says what it would cost with
no LLM call, and :func:`run_pilot` judges a sample first and projects the rest (the bill,
:mod:`docket.jobs.bill`); :func:`fill_holes`, :func:`simulate_holes`,
:func:`simulate_budget` and :func:`compare_methods` build on it, and so does every judging command.
"""

from docket.jobs.bill.caps import Bill, Caps
from docket.jobs.bill.figures import JobPlan, PlanInputs
from docket.jobs.bill.pilot import PilotGate, PilotReport
from docket.jobs.bill.pilot_run import run_pilot
from docket.jobs.bill.plan import plan_job
from docket.jobs.budget_sim import BudgetSimulation, simulate_budget
from docket.jobs.holes import HoleFill, HoleSimulation, fill_holes, simulate_holes
from docket.jobs.inputs import JobInput, job_input, select_input
from docket.jobs.methods import MethodComparison, compare_methods
from docket.jobs.result import FRAME_COLUMNS, JobRun
from docket.jobs.run import run_job
from docket.jobs.spec import JobSpec, canonical_model

__all__ = [
    "FRAME_COLUMNS",
    "Bill",
    "BudgetSimulation",
    "Caps",
    "HoleFill",
    "HoleSimulation",
    "JobInput",
    "JobPlan",
    "JobRun",
    "JobSpec",
    "MethodComparison",
    "PilotGate",
    "PilotReport",
    "PlanInputs",
    "canonical_model",
    "compare_methods",
    "fill_holes",
    "job_input",
    "plan_job",
    "run_job",
    "run_pilot",
    "select_input",
    "simulate_budget",
    "simulate_holes",
]
