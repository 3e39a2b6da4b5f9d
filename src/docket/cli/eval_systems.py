"""``docket eval systems`` and ``docket eval rag``: retrieval systems before and after completion."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from docket.audit.linear import docket_only
from docket.audit.ppi_report import PpiReport
from docket.cli.common import escape, id_column, out
from docket.cli.eval_systems_ppi import (
    AuditJobOpt,
    DbOpt,
    HumanSampleOpt,
    InclusionOpt,
    PpiOpt,
    PpiQueriesOpt,
    human_sample,
    ppi_evaluation,
    print_ppi,
)
from docket.cli.ir_common import (
    GradesOpt,
    MoreRuns,
    QrelsOpt,
    RelLevelOpt,
    RunsOpt,
    fmt,
    load_qrels,
    load_runs,
    split_names,
    warn_if_partial,
    write_json,
)
from docket.cli.outputs import image_path, output_path
from docket.ir.evaluate import (
    DEFAULT_MEASURES,
    SystemsReport,
    compare_systems,
    parse_measures,
    qrels_variants,
)
from docket.ir.formats import write_atomically
from docket.ir.per_query import PerQuery, per_query_variants, trec_eval_lines, write_per_query
from docket.ir.rag import RagAlignment, rag_alignment, read_generation
from docket.ir.significance import PairTest, compare_pairs, require_two_systems

CompletedOpt = Annotated[Path | None, typer.Option(help="completed qrels (e.g. from holes fill)")]
WholePoolOpt = Annotated[
    Path | None,
    typer.Option(
        help="new labels for the whole pool (holes fill --whole-pool), beside --completed-qrels"
    ),
]


def systems(
    qrels: QrelsOpt,
    runs: RunsOpt = None,
    more_runs: MoreRuns = None,
    completed_qrels: CompletedOpt = None,
    whole_pool_qrels: WholePoolOpt = None,
    measures: Annotated[
        list[str] | None, typer.Option(help="ir_measures names, comma-separated")
    ] = None,
    primary: Annotated[
        str | None, typer.Option(help="measure that ranks systems (default: first)")
    ] = None,
    condensed: Annotated[
        bool, typer.Option(help="also evaluate condensed (judged-only) lists")
    ] = True,
    plot: Annotated[
        Path | None, typer.Option(help="PNG plot of rank shifts", callback=image_path)
    ] = None,
    out_path: Annotated[
        Path | None, typer.Option("--out", help="JSON report", callback=output_path)
    ] = None,
    grades: GradesOpt = None,
    per_query: Annotated[
        Path | None, typer.Option(help="per-query scores: .json, else TSV", callback=output_path)
    ] = None,
    trec_eval: Annotated[
        Path | None,
        typer.Option(
            help="per-query and overall scores as trec_eval -q text", callback=output_path
        ),
    ] = None,
    significance: Annotated[
        bool, typer.Option(help="paired t-test and randomization test between systems")
    ] = False,
    alpha: Annotated[float, typer.Option(help="family-wise level of the Holm correction")] = 0.05,
    permutations: Annotated[int, typer.Option(min=100, help="randomization test budget")] = 10_000,
    seed: Annotated[int, typer.Option(help="seed of the randomization test")] = 0,
    ppi: PpiOpt = False,
    audit_job: AuditJobOpt = None,
    human_sample_file: HumanSampleOpt = None,
    inclusion: InclusionOpt = None,
    ppi_queries: PpiQueriesOpt = False,
    db: DbOpt = None,
) -> None:
    """Evaluate every system before/after completion; rank shifts, Kendall's tau and tau_AP.

    With --completed-qrels and --whole-pool-qrels both completions are ranked side by side,
    each with its Kendall's tau against the original ranking.
    With --ppi, also prediction-powered intervals for every system and pair of systems
    (LLM-completed qrels + the human labels of a random sample; --alpha sets both the
    intervals' level and Holm's).
    """
    original = load_qrels(qrels, grades)
    completed = load_qrels(completed_qrels, grades) if completed_qrels else None
    whole = load_qrels(whole_pool_qrels, grades) if whole_pool_qrels else None
    warn_if_partial(original, completed)
    systems_ = load_runs(runs, more_runs)
    if significance:
        require_two_systems(len(systems_))  # before any work
    sample = human_sample(ppi, audit_job, human_sample_file, inclusion, db, ppi_queries)
    names = split_names(measures, DEFAULT_MEASURES)
    ppi_report = ppi_evaluation(sample, systems_, original, completed, names, alpha, ppi_queries)
    if ppi_report is not None:  # DCG@k and prevalence are docket's names, not ir_measures'
        names = [n for n in names if not docket_only(n)] or list(DEFAULT_MEASURES)
    report = compare_systems(systems_, original, completed, names, primary, condensed, whole)
    table: PerQuery = {}
    if per_query is not None or trec_eval is not None or significance:
        variants = qrels_variants(original, completed, condensed, whole)
        table = per_query_variants(variants, systems_, parse_measures(report.measures))
    tests = _significance(table, report, alpha, permutations, seed) if significance else []
    _write_outputs(report, tests if significance else None, ppi_report, out_path, plot)
    _print_systems(report, out)
    for rendered in significance_tables(tests, alpha) if significance else []:
        out.print(rendered)
    if ppi_report is not None:
        print_ppi(ppi_report, out)
    _write_per_query(table, report, per_query, trec_eval, out)


def _write_outputs(
    report: SystemsReport,
    tests: list[PairTest] | None,
    ppi_report: PpiReport | None,
    out_path: Path | None,
    plot: Path | None,
) -> None:
    """Write the JSON report (with the significance tests when run, and PPI) and the plot."""
    if out_path is not None:
        data = report.model_dump(mode="json")
        if tests is not None:
            data["significance"] = [t.model_dump(mode="json") for t in tests]
        if ppi_report is not None:
            data["ppi"] = ppi_report.to_json()
        write_json(data, out_path)
    if plot is not None and report.shift_variant is not None:
        from docket.ir.plot import plot_rank_shifts

        plot_rank_shifts(report, plot)


def _significance(
    table: PerQuery, report: SystemsReport, alpha: float, permutations: int, seed: int
) -> list[PairTest]:
    # Before and after completion only: condensed lists are a robustness check, not a claim.
    return [
        test
        for variant in ("original", "completed")
        if variant in table
        for test in compare_pairs(
            {s: m[report.primary] for s, m in table[variant].items()},
            variant,
            report.primary,
            alpha=alpha,
            permutations=permutations,
            seed=seed,
        )
    ]


def _write_per_query(
    table: PerQuery,
    report: SystemsReport,
    per_query: Path | None,
    trec_eval: Path | None,
    say: Console,
) -> None:
    if per_query is not None:
        count = write_per_query(table, per_query)
        say.print(f"{count} per-query values written to {per_query}", markup=False)
    if trec_eval is not None:
        write_atomically(trec_eval, trec_eval_lines(table, report.scores))
        say.print(f"trec_eval output written to {trec_eval}", markup=False)


def significance_tables(tests: list[PairTest], alpha: float) -> list[Table]:
    """Per qrels variant, one row per pair of systems: p-values and Holm decisions.

    The means are in the scores table; leaving them out keeps the identifying pair
    column whole and every p-value visible at 80 columns.
    """
    tables = []
    for variant in dict.fromkeys(t.variant for t in tests):
        rows = [t for t in tests if t.variant == variant]
        table = Table(title=f"Paired significance, {variant} qrels (Holm, alpha {alpha})")
        id_column(table, "systems", [name for t in rows for name in (t.a, f"vs {t.b}")])
        for column in ("p t-test", "Holm", "p random.", "Holm"):
            table.add_column(column, justify="right", overflow="fold")
        for t in rows:
            table.add_row(
                f"{escape(t.a)}\nvs {escape(t.b)}",
                fmt(t.t_p, 4),
                _decision(t.t_significant),
                fmt(t.randomization_p, 4),
                _decision(t.randomization_significant),
            )
        tables.append(table)
    return tables


def _print_side_by_side(report: SystemsReport, say: Console) -> None:
    """Both completions' ranks beside the original one, and each one's Kendall's tau."""
    if not {"completed", "whole_pool"} <= set(report.ranks):
        return
    primary = report.primary
    table = Table(title=f"Holes only against whole pool, ranked by {primary}")
    id_column(table, "system", report.systems())
    for column in ("original", "holes only", "whole pool"):
        table.add_column(column, justify="right", overflow="fold")
    for name in report.systems():
        table.add_row(escape(name), *(str(report.ranks[v][name])
                                      for v in ("original", "completed", "whole_pool")))  # fmt: skip
    say.print(table)
    taus = {c.variant: c for c in report.comparisons}
    say.print(
        f"Kendall's tau against the original ranking: holes only {fmt(taus['completed'].tau)}, "
        f"whole pool {fmt(taus['whole_pool'].tau)}"
    )


def _decision(significant: bool) -> str:
    return "yes" if significant else "no"


def _print_systems(report: SystemsReport, say: Console) -> None:
    after, primary = report.shift_variant, report.primary
    table = Table(
        title=f"Systems ranked by {primary}" + (f": original -> {after}" if after else "")
    )
    id_column(table, "system", report.systems())
    extra = ["new rank", "shift", f"{primary} ({after})"] if after else []
    for column in ("rank", f"{primary} (original)", *extra):
        table.add_column(column, justify="right", overflow="fold")
    for name in report.systems():
        row = [
            escape(name),
            str(report.ranks["original"][name]),
            fmt(report.scores["original"][name][primary]),
        ]
        if after:
            shift = report.shifts[name]
            row += [
                str(report.ranks[after][name]),
                f"{shift:+d}" if shift else "0",
                fmt(report.scores[after][name][primary]),
            ]
        table.add_row(*row)
    say.print(table)
    for variant in ("original", "completed", "whole_pool"):
        if variant in report.scores:
            say.print(_scores_table(report, variant))
    _print_side_by_side(report, say)
    total = len(report.ranks["original"])
    for c in report.comparisons:
        say.print(
            f"{c.variant}: Kendall's tau {fmt(c.tau)}, tau_AP {fmt(c.tau_ap)}, "
            f"{c.changed} of {total} systems changed rank"
        )


def _scores_table(report: SystemsReport, variant: str) -> Table:
    table = Table(title=f"Scores with {variant} qrels")
    id_column(table, "system", report.systems())
    for measure in report.measures:
        table.add_column(measure, justify="right", overflow="fold")
    for name in report.systems():
        table.add_row(
            escape(name), *(fmt(report.scores[variant][name][m]) for m in report.measures)
        )
    return table


def rag(
    qrels: QrelsOpt,
    generation: Annotated[Path, typer.Option(help="JSONL of system, qid, correct (bool or score)")],
    runs: RunsOpt = None,
    more_runs: MoreRuns = None,
    completed_qrels: CompletedOpt = None,
    k: Annotated[int, typer.Option(min=1, help="retrieval cutoff")] = 10,
    measure: Annotated[str, typer.Option(help="retrieval measure (nDCG, P, ...)")] = "nDCG",
    threshold: Annotated[
        float, typer.Option(help="correctness from which an answer is correct")
    ] = 0.5,
    rel_level: RelLevelOpt = 1,
    out_path: Annotated[
        Path | None, typer.Option("--out", help="JSON report", callback=output_path)
    ] = None,
    grades: GradesOpt = None,
) -> None:
    """RAGAlign@k: how well retrieval quality tracks answer correctness, before/after completion."""
    variants = {"original": load_qrels(qrels, grades)}
    if completed_qrels:
        variants["completed"] = load_qrels(completed_qrels, grades)
        warn_if_partial(variants["original"], variants["completed"])
    answers = read_generation(generation)
    systems_ = load_runs(runs, more_runs)
    results = [
        rag_alignment(
            q,
            systems_,
            answers,
            k=k,
            measure=measure,
            rel_level=rel_level,
            threshold=threshold,
            variant=name,
        )
        for name, q in variants.items()
    ]
    if out_path is not None:
        write_json([r.model_dump(mode="json") for r in results], out_path)
    _print_rag(results, out)


def _print_rag(results: list[RagAlignment], say: Console) -> None:
    first = results[0]
    table = Table(
        title=f"RAGAlign@{first.k} ({len(first.systems)} systems, retrieval {first.measure})"
    )
    for column in (
        "qrels",
        "RAGAlign (Pearson)",
        "Kendall's tau",
        "per-query agreement",
        "kappa",
        "pairs",
    ):
        table.add_column(column, justify="left" if column == "qrels" else "right")
    for r in results:
        table.add_row(
            r.variant, fmt(r.pearson), fmt(r.kendall), fmt(r.agreement), fmt(r.kappa), str(r.pairs)
        )
    say.print(table)


def register(app: typer.Typer) -> None:
    """Add ``systems`` and ``rag`` to the ``docket eval`` group."""
    app.command("systems")(systems)
    app.command("rag")(rag)
