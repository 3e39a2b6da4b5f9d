"""Audits of automatic labels: random draws, the label-quality certificate, intervals.

- :mod:`docket.audit.proportions`: the statistics (intervals for proportions, the
  stratified estimator, allocation, sample-size planning), plain numpy/scipy functions;
- :mod:`docket.audit.draw`: draw a stratified random audit of a job's automatically decided
  pairs into the review queue as blind tasks, and read the answers back;
- :mod:`docket.audit.report`: the label-quality certificate of a job.
"""
