"""``docket bench``: benchmarks of docket's methods; ``readeval`` builds and runs RE-AD-Eval."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from docket.cli.bench_report import build_tables, run_tables
from docket.cli.common import console, escape, model_factory, out
from docket.cli.outputs import output_path
from docket.config import load_settings
from docket.errors import ConfigError, UserError
from docket.writing import write_text

app = typer.Typer(help="Benchmarks of docket's methods.", no_args_is_help=True)
readeval = typer.Typer(
    help="RE-AD-Eval: synthetic one-violation samples that measure the adherence verifier.",
    no_args_is_help=True,
)
app.add_typer(readeval, name="readeval")

RulesOpt = Annotated[Path, typer.Option("--rules", "-r", help="rules file (YAML)")]
CacheOpt = Annotated[str | None, typer.Option("--cache", help="LLM response cache file, or 'off'")]
ConcurrencyOpt = Annotated[int, typer.Option("--concurrency", min=1, help="samples at once")]
TiersOpt = Annotated[
    str | None, typer.Option("--tiers", help="comma-separated tiers, e.g. fmt or fmt,sim,sub")
]


def parse_tiers(text: str | None) -> tuple[str, ...] | None:
    """``"fmt,sim"`` -> ``("fmt", "sim")``; ConfigError for an unknown tier."""
    if text is None:
        return None
    tiers = tuple(part.strip() for part in text.split(",") if part.strip())
    unknown = [tier for tier in tiers if tier not in ("fmt", "sim", "sub")]
    if unknown or not tiers:
        raise ConfigError(f"unknown tier(s) {unknown or [text]}", hint="use fmt, sim and/or sub")
    return tiers


def _personas(values: list[str]) -> dict[str, Any]:
    from docket.readeval.personas import parse_persona

    try:
        return {"personas": tuple(parse_persona(value) for value in values)} if values else {}
    except ValueError as exc:
        raise ConfigError(str(exc).splitlines()[0], hint="use --persona NAME=FMT,SIM,SUB") from exc


def _bar() -> Progress:
    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
    )
    return Progress(*columns, console=console, transient=True)


def _updater(bar: Progress, label: str) -> Callable[[int, int], None]:
    task = bar.add_task(label, total=None)
    return lambda done, total: bar.update(task, completed=done, total=total)


@readeval.command("build")
def build(
    rules: RulesOpt,
    seeds: Annotated[Path, typer.Option("--seeds", help="clean seed records (JSONL)")],
    output: Annotated[
        Path,
        typer.Option("--out", "-o", help="dataset file to write (JSONL)", callback=output_path),
    ],
    samples: Annotated[int, typer.Option("--samples", min=1, help="samples to attempt")] = 100,
    seed: Annotated[int, typer.Option("--seed", help="seed of every random draw")] = 0,
    scenarios: Annotated[
        Path | None, typer.Option("--scenarios", help="records with fields only: new dialogues")
    ] = None,
    generator_model: Annotated[
        str | None, typer.Option("--generator-model", help="writes sim/sub violations")
    ] = None,
    judge_model: Annotated[
        str | None, typer.Option("--judge-model", help="independent check of sim/sub rules")
    ] = None,
    judge_sim_model: Annotated[
        str | None,
        typer.Option("--judge-sim-model", help="judge of sim rules (default: --judge-model)"),
    ] = None,
    judge_sub_model: Annotated[
        str | None,
        typer.Option("--judge-sub-model", help="judge of sub rules (default: --judge-model)"),
    ] = None,
    tiers: TiersOpt = None,
    persona: Annotated[
        list[str], typer.Option("--persona", help="NAME=FMT,SIM,SUB error probabilities")
    ] = [],  # noqa: B006  (typer needs a literal default)
    max_iterations: Annotated[
        int, typer.Option("--max-iterations", min=1, max=10, help="verify-and-repair rounds")
    ] = 3,
    temperature: Annotated[float, typer.Option("--temperature", help="generator sampling")] = 0.7,
    judge_timeout: Annotated[
        float, typer.Option("--judge-timeout", help="seconds per judge check before undecided")
    ] = 60.0,
    concurrency: ConcurrencyOpt = 4,
    cache: CacheOpt = None,
) -> None:
    """Build a dataset: one confirmed violation per sample, counts by tier, persona and drops."""
    from docket.adherence.record import read_records
    from docket.adherence.rules import load_rules
    from docket.readeval import BuildConfig, build_dataset

    ruleset = load_rules(rules)
    seed_records = read_records(seeds)
    scenario_records = read_records(scenarios) if scenarios else []
    config = BuildConfig(
        samples=samples, seed=seed, tiers=parse_tiers(tiers),  # type: ignore[arg-type]
        max_iterations=max_iterations, temperature=temperature, judge_timeout_s=judge_timeout,
        **_personas(persona),
    )  # fmt: skip
    models = _build_models(
        cache, generator_model, judge_sim_model or judge_model, judge_sub_model or judge_model
    )
    with _bar() as bar:
        update = _updater(bar, "building")
        result = asyncio.run(
            build_dataset(
                ruleset,
                seed_records,
                config,
                models,
                scenarios=scenario_records,
                concurrency=concurrency,
                progress=update,
            )
        )
    _save_build(result, output)


def _build_models(
    cache: str | None, generator: str | None, judge_sim: str | None, judge_sub: str | None
) -> Any:
    """The build's models by name (``None`` where no name is given)."""
    from docket.readeval import BuildModels

    get_model = model_factory(load_settings(cache=cache))

    def pick(name: str | None) -> Any:
        return get_model(name) if name else None

    return BuildModels(generator=pick(generator), judge_sim=pick(judge_sim),
                       judge_sub=pick(judge_sub))  # fmt: skip


def _save_build(result: Any, output: Path) -> None:
    """Write the built dataset and report it; with no sample kept, report why and fail."""
    from docket.readeval import write_dataset

    if not result.dataset.samples:
        _report_build(result, None)
        raise UserError(
            f"no sample was kept, so nothing was written to {output}",
            hint="see the drop reasons above; try more --samples or other generator/judge models",
        )
    write_dataset(output, result.dataset)
    _report_build(result, output)


def _report_build(result: Any, output: Path | None) -> None:
    header = result.dataset.header
    for warning in result.warnings:
        console.print(f"[yellow]warning:[/yellow] {escape(warning)}")
    for seed_id, why in header.skipped_seeds.items():
        console.print(f"seed '{escape(seed_id)}' skipped: {escape(why)}")
    for table in build_tables(result):
        out.print(table)
    calls = ", ".join(f"{name}: {u['calls']} calls" for name, u in result.usage.items())
    if output is None:
        return
    out.print(
        f"wrote {len(result.dataset.samples)} samples to {output}"
        + (f" ({calls})" if calls else "")
    )


@readeval.command("run")
def run(
    dataset: Annotated[Path, typer.Option("--dataset", "-d", help="dataset from `build`")],
    rules: RulesOpt,
    model: Annotated[str | None, typer.Option("--model", help="default for both LLM tiers")] = None,
    sim_model: Annotated[
        str | None, typer.Option("--sim-model", help="model for sim rules (default: --model)")
    ] = None,
    sub_model: Annotated[
        str | None, typer.Option("--sub-model", help="sub rules and holistic (default: --model)")
    ] = None,
    mode: Annotated[
        list[str], typer.Option("--mode", help="atomic and/or holistic (repeat to compare)")
    ] = ["atomic"],  # noqa: B006  (typer needs a literal default)
    tiers: TiersOpt = None,
    limit: Annotated[int | None, typer.Option("--limit", min=1, help="first N samples")] = None,
    timeout: Annotated[float, typer.Option("--timeout", help="seconds per LLM check")] = 60.0,
    concurrency: ConcurrencyOpt = 4,
    output: Annotated[
        Path | None,
        typer.Option("--out", "-o", help="write the report (JSON)", callback=output_path),
    ] = None,
    cache: CacheOpt = None,
) -> None:
    """Verify every sample and score precision, recall and F1 (needs_review both ways)."""
    from docket.adherence.rules import load_rules
    from docket.readeval import read_dataset, run_readeval

    _check_modes(mode)
    data = read_dataset(dataset)
    ruleset = _only_tiers(load_rules(rules), tiers)
    get_model = model_factory(load_settings(model=model, cache=cache))
    needed = {rule.tier for rule in ruleset.rules} | ({"sub"} if "holistic" in mode else set())
    with _bar() as bar:
        report = asyncio.run(
            run_readeval(
                data,
                ruleset,
                sim_model=get_model(sim_model) if "sim" in needed else None,
                sub_model=get_model(sub_model) if "sub" in needed else None,
                modes=tuple(dict.fromkeys(mode)),  # type: ignore[arg-type]
                timeout_s=timeout,
                concurrency=concurrency,
                limit=limit,
                dataset_name=str(dataset),
                progress=lambda label: _updater(bar, f"verifying ({label})"),
            )
        )
    _report_run(report, output)


def _check_modes(mode: list[str]) -> None:
    """Refuse a ``--mode`` other than atomic and holistic."""
    unknown = [m for m in mode if m not in ("atomic", "holistic")]
    if unknown:
        raise ConfigError(
            f"unknown mode(s) {unknown}", hint="use --mode atomic and/or --mode holistic"
        )


def _only_tiers(ruleset: Any, tiers: str | None) -> Any:
    """``ruleset`` keeping only the rules of the ``--tiers`` chosen (all when none)."""
    chosen = parse_tiers(tiers)
    if chosen is not None:
        ruleset = ruleset.model_copy(
            update={"rules": [r for r in ruleset.rules if r.tier in chosen]}
        )
    return ruleset


def _report_run(report: Any, output: Path | None) -> None:
    """Print the run's warnings and tables; write the JSON report if asked."""
    for warning in report.warnings:
        console.print(f"[yellow]warning:[/yellow] {escape(warning)}")
    for table in run_tables(report):
        out.print(table)
    if output is not None:
        write_text(output, json.dumps(report.model_dump(mode="json"), indent=2) + "\n")
        out.print(f"wrote {output}")
