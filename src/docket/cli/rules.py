"""``docket rules``: extract rules from an SOP, measure extraction stability, validate rule files."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from docket.adherence.authoring.atomize import AtomizeOptions, AtomizeReport, atomize
from docket.adherence.authoring.sop import DEFAULT_MAX_BYTES, load_sop
from docket.adherence.authoring.stability import stability
from docket.adherence.checks import CATALOGUE, param_summary
from docket.adherence.rules import dump_rules, load_rules, schema_text
from docket.cli.common import console, escape, model_factory, out
from docket.cli.outputs import output_path
from docket.config import load_settings
from docket.errors import InputError
from docket.writing import write_text

app = typer.Typer(
    help="SOP to rules: extract, check stability, validate, schema, checkers.", no_args_is_help=True
)

ModelOpt = Annotated[
    str | None, typer.Option("--model", help="model name (default: settings, e.g. local)")
]
CacheOpt = Annotated[str | None, typer.Option("--cache", help="LLM response cache file, or 'off'")]
DepthOpt = Annotated[
    int, typer.Option("--max-depth", min=0, max=6, help="split/merge recursion bound")
]
SizeOpt = Annotated[float, typer.Option("--max-sop-mb", min=0.001, help="refuse larger SOP files")]
SopArg = Annotated[Path, typer.Argument(help="SOP file: Markdown, text, DOCX or PDF")]
MaxTokensOpt = Annotated[
    int, typer.Option("--max-tokens", min=16, max=8192, help="generation cap per LLM call")
]
TimeoutOpt = Annotated[
    float, typer.Option("--timeout", min=1.0, help="seconds per LLM call once it has a slot")
]


def _model(model: str | None, cache: str | None):  # type: ignore[no-untyped-def]
    settings = load_settings(model=model, cache=cache)
    return model_factory(settings)(None)


def _max_bytes(megabytes: float) -> int:
    return int(megabytes * 1024 * 1024)


@app.command()
def extract(
    sop: SopArg,
    output: Annotated[
        Path,
        typer.Option("--output", "-o", help="rules file to write (YAML)", callback=output_path),
    ],
    model: ModelOpt = None,
    cache: CacheOpt = None,
    name: Annotated[str | None, typer.Option(help="rule set name (default: SOP file name)")] = None,
    max_depth: DepthOpt = 2,
    reflect: Annotated[
        bool, typer.Option(help="check atomicity and overlap of each candidate")
    ] = True,
    temperature: Annotated[float, typer.Option(min=0.0, max=2.0)] = 0.0,
    max_sop_mb: SizeOpt = DEFAULT_MAX_BYTES / 1024 / 1024,
    report: Annotated[
        Path | None,
        typer.Option(help="also write the extraction report (JSON)", callback=output_path),
    ] = None,
    max_tokens: MaxTokensOpt = 512,
    timeout: TimeoutOpt = 180.0,
) -> None:
    """Extract atomic rules from SOP with an LLM and write them as YAML."""
    document = load_sop(sop, max_bytes=_max_bytes(max_sop_mb))
    options = AtomizeOptions(
        max_depth=max_depth,
        reflect=reflect,
        temperature=temperature,
        name=name,
        max_tokens=max_tokens,
        timeout_s=timeout,
    )
    result = asyncio.run(atomize(document, _model(model, cache), options, _progress("extract")))
    if report is not None:
        write_text(report, json.dumps(result.report.to_json(), indent=2) + "\n")
    if not result.ruleset.rules:
        raise _no_rules(sop, result.report)
    dump_rules(result.ruleset, output)
    counts = result.ruleset.tier_counts()
    console.print(
        f"wrote {len(result.ruleset.rules)} rules to {output} "
        f"(fmt {counts['fmt']}, sim {counts['sim']}, sub {counts['sub']}; version {result.ruleset.version})"
    )
    _print_report(result.report)


def _progress(what: str) -> Callable[[str], None]:
    """Progress lines on stderr, plain text, so they show in a log or CI job too."""
    started = time.monotonic()

    def show(line: str) -> None:
        console.print(f"{what}: {line} ({time.monotonic() - started:.0f} s)", highlight=False)

    return show


def _no_rules(sop: Path, report: AtomizeReport) -> InputError:
    why = report.skip_reasons[0] if report.skip_reasons else "the model proposed no rule"
    return InputError(
        f"no rule extracted from {report.sections} sections ({why})",
        path=str(sop),
        hint="check the model (--model), or raise --max-tokens / --timeout; nothing was written",
    )


def _print_report(report: AtomizeReport) -> None:
    console.print(
        f"sections {report.sections}, candidates {report.candidates}, kept {report.kept}, "
        f"decomposed {report.decomposed}, merged {report.merged}, duplicates dropped {report.duplicates_dropped}, "
        f"depth-limited {report.depth_limited}, check re-asks {report.spec_reasks}, "
        f"downgraded fmt->sim {report.downgraded}, LLM calls {report.llm_calls}"
    )
    for section in report.sections_skipped:
        console.print(
            f"[yellow]warning:[/] skipped section '{escape(section)}': the model's reply could not be read"
        )
    if report.reflection_failures:
        console.print(
            f"[yellow]warning:[/] {report.reflection_failures} candidates kept without reflection"
        )


@app.command("stability")
def stability_command(
    sop: SopArg,
    runs: Annotated[int, typer.Option(min=2, max=50, help="extraction runs to compare")] = 3,
    model: ModelOpt = None,
    cache: CacheOpt = None,
    temperature: Annotated[
        float, typer.Option(min=0.0, max=2.0, help="sampling temperature per run")
    ] = 0.7,
    threshold: Annotated[
        float,
        typer.Option(
            min=0.01, max=1.0, help="word-set similarity at which two rules match (1 = same text)"
        ),
    ] = 1.0,
    max_depth: DepthOpt = 2,
    max_sop_mb: SizeOpt = DEFAULT_MAX_BYTES / 1024 / 1024,
    json_out: Annotated[
        Path | None,
        typer.Option("--json", help="also write the report (JSON)", callback=output_path),
    ] = None,
    max_tokens: MaxTokensOpt = 512,
    timeout: TimeoutOpt = 180.0,
) -> None:
    """Extract rules RUNS times (one seed each) and report how much the rule set varies."""
    document = load_sop(sop, max_bytes=_max_bytes(max_sop_mb))
    options = AtomizeOptions(
        max_depth=max_depth, temperature=temperature, max_tokens=max_tokens, timeout_s=timeout
    )
    result = asyncio.run(
        stability(document, _model(model, cache), runs, options, threshold, _progress("stability"))
    )
    table = Table(title=f"rule-set stability over {result.runs} runs")
    for column in ("run", "rules", "fmt", "sim", "sub"):
        table.add_column(column, justify="right")
    for run, (count, tiers) in enumerate(zip(result.rule_counts, result.tier_counts, strict=True)):
        table.add_row(str(run), str(count), *(str(tiers[t]) for t in ("fmt", "sim", "sub")))
    out.print(table)
    out.print(
        f"variation (1 - mean Jaccard): {result.variation:.1%}  mean Jaccard: {result.mean_jaccard:.3f}"
    )
    if json_out is not None:
        write_text(json_out, json.dumps(result.to_json(), indent=2) + "\n")


@app.command()
def validate(
    rules: Annotated[Path, typer.Argument(help="rules file (YAML)")],
    as_json: Annotated[
        bool, typer.Option("--json", help="print the validated rule set as JSON")
    ] = False,
) -> None:
    """Validate a rules file; print its rules, tiers and content version."""
    ruleset = load_rules(rules)
    if as_json:
        out.print_json(ruleset.model_dump_json())
        return
    table = Table(title=f"{ruleset.name} (version {ruleset.version})")
    for column in ("id", "tier", "scope", "check", "text"):
        table.add_column(column, overflow="fold")
    for rule in ruleset.rules:
        check = f"{rule.check.checker} {json.dumps(rule.check.params)}" if rule.check else ""
        table.add_row(*map(escape, (rule.id, rule.tier, rule.scope.describe(), check, rule.text)))
    out.print(table)
    counts = ruleset.tier_counts()
    out.print(
        f"{rules}: valid, {len(ruleset.rules)} rules (fmt {counts['fmt']}, sim {counts['sim']}, sub {counts['sub']})"
    )


@app.command()
def schema(
    output: Annotated[
        Path | None,
        typer.Option("--output", "-o", help="write to a file instead", callback=output_path),
    ] = None,
) -> None:
    """Print the JSON schema of rule files (for editors and CI)."""
    text = schema_text()
    if output is None:
        typer.echo(text, nl=False)
    else:
        write_text(output, text)


@app.command()
def checkers() -> None:
    """List the fmt checker catalogue: names, parameters and what each checks."""
    table = Table(title=f"{len(CATALOGUE)} fmt checkers")
    for column in ("checker", "level", "params", "checks"):
        table.add_column(column, overflow="fold")
    for name, found in sorted(CATALOGUE.items()):
        table.add_row(*map(escape, (name, found.level, param_summary(found.params), found.doc)))
    out.print(table)


@app.command()
def sop(
    path: SopArg,
    sections: Annotated[bool, typer.Option(help="list sections with line ranges instead")] = False,
    max_sop_mb: SizeOpt = DEFAULT_MAX_BYTES / 1024 / 1024,
) -> None:
    """Show an SOP as the structured Markdown the extractor reads."""
    document = load_sop(path, max_bytes=_max_bytes(max_sop_mb))
    if not sections:
        typer.echo(document.markdown, nl=False)
        return
    for section in document.sections:
        typer.echo(f"{section.start_line:>5}-{section.end_line:<5} {section.path_text}")
