"""IR benchmarks: formats, corpora, finding holes, re-evaluation, label agreement, RAG.

Filling and simulating holes live one layer up, in :mod:`docket.holes`.
"""

from docket.ir.corpus import Corpus, CorpusIndex, Document, open_corpus
from docket.ir.evaluate import (
    DEFAULT_MEASURES,
    RankingComparison,
    SystemsReport,
    compare_rankings,
    compare_systems,
    condense,
    evaluate_runs,
    parse_measures,
)
from docket.ir.formats import Qrels, Run, read_qrels, read_run, read_runs, write_qrels
from docket.ir.holes import Hole, HoleReport, find_holes, hole_rate, pool
from docket.ir.label_agreement import LabelAgreement, LabelsReport, compare_labels, evaluate_labels
from docket.ir.label_files import LabelSet, Scale, read_label_set
from docket.ir.per_query import per_query_scores
from docket.ir.provenance import (
    ProvenanceRecord,
    compose_qrels,
    read_provenance,
    record_from_judgment,
    write_provenance,
)
from docket.ir.queries import read_queries
from docket.ir.rag import RagAlignment, rag_alignment, read_generation
from docket.ir.significance import PairTest, compare_pairs, holm, paired_t_test, randomization_test
from docket.ir.stats import kendall_tau, pearson, spearman, tau_ap

__all__ = [
    "DEFAULT_MEASURES",
    "Corpus",
    "CorpusIndex",
    "Document",
    "Hole",
    "HoleReport",
    "LabelAgreement",
    "LabelSet",
    "LabelsReport",
    "PairTest",
    "ProvenanceRecord",
    "Qrels",
    "RagAlignment",
    "RankingComparison",
    "Run",
    "Scale",
    "SystemsReport",
    "compare_labels",
    "compare_pairs",
    "compare_rankings",
    "compare_systems",
    "compose_qrels",
    "condense",
    "evaluate_labels",
    "evaluate_runs",
    "find_holes",
    "hole_rate",
    "holm",
    "kendall_tau",
    "open_corpus",
    "paired_t_test",
    "parse_measures",
    "per_query_scores",
    "pearson",
    "pool",
    "rag_alignment",
    "randomization_test",
    "read_generation",
    "read_label_set",
    "read_provenance",
    "read_qrels",
    "read_queries",
    "read_run",
    "read_runs",
    "record_from_judgment",
    "spearman",
    "tau_ap",
    "write_provenance",
    "write_qrels",
]
