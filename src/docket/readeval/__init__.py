"""RE-AD-Eval: a synthetic benchmark of docket's requirement-adherence verifier.

``build`` turns a rule set and clean seed records into samples with exactly one injected
violation each (fmt rules broken by code mutations, sim/sub rules by a generator model),
each confirmed by independent checks (code for fmt, a judge model for sim/sub) in a
verify-and-repair loop of at most three rounds. ``run`` verifies every sample with
docket's :class:`~docket.adherence.verify.Verifier` and scores precision, recall and F1
overall, per tier and per persona, with needs_review counted both as a flag and as a pass.
See docs/adherence.md, section "Benchmark: RE-AD-Eval".
"""

from docket.readeval.build import BuildResult, Drop, build_dataset, injectable
from docket.readeval.dataset import (
    PAPER_F1,
    BuildConfig,
    Dataset,
    DatasetHeader,
    Sample,
    read_dataset,
    write_dataset,
)
from docket.readeval.mutations import (
    Mutation,
    checkers_without_operator,
    fmt_failures,
    operators_for,
)
from docket.readeval.operators import OPERATORS, MutationContext, Operator
from docket.readeval.personas import DEFAULT_PERSONAS, PAPER_RANGES, Persona, parse_persona
from docket.readeval.runner import ModeReport, RunReport, run_readeval
from docket.readeval.scoring import Breakdown, Counts
from docket.readeval.setup import BuildModels
from docket.readeval.truth import GroundTruth, Problem

__all__ = [
    "DEFAULT_PERSONAS",
    "OPERATORS",
    "PAPER_F1",
    "PAPER_RANGES",
    "Breakdown",
    "BuildConfig",
    "BuildModels",
    "BuildResult",
    "Counts",
    "Dataset",
    "DatasetHeader",
    "Drop",
    "GroundTruth",
    "ModeReport",
    "Mutation",
    "MutationContext",
    "Operator",
    "Persona",
    "Problem",
    "RunReport",
    "Sample",
    "build_dataset",
    "checkers_without_operator",
    "fmt_failures",
    "injectable",
    "operators_for",
    "parse_persona",
    "read_dataset",
    "run_readeval",
    "write_dataset",
]
