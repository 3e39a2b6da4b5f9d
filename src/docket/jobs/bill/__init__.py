"""The bill of a judging job: plan, prices, token counts, dry run, pilot, caps and live spend.

Its plain value types (:class:`~docket.jobs.bill.caps.Caps`, ``Bill``,
:class:`~docket.jobs.bill.figures.JobPlan`, ``PlanInputs``, ``Range``, the pilot's report
and gate, prices) import nothing of :mod:`docket.jobs`, so the spec and the run's result
name them with their types. This package imports none of its modules itself: the spec
imports the value modules, and the spine imports the steps.
"""
