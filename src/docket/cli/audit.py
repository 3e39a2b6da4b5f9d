"""``docket audit``: draw a random audit of a job's automatic labels, plan its size, and
report the label-quality certificate."""

from __future__ import annotations

import json
from typing import Annotated

import typer

from docket.cli.common import out
from docket.config import load_settings
from docket.errors import ConfigError
from docket.store import open_store

app = typer.Typer(
    help="Audit a job's automatic labels: draw a random sample, plan it, certify the labels.",
    no_args_is_help=True,
)

DbOption = Annotated[str | None, typer.Option("--db", help="store path or SQLAlchemy URL")]
JobOption = Annotated[str, typer.Option("--job", help="the judged job")]
ConfidenceOption = Annotated[float, typer.Option(help="confidence of every interval")]


def _oversample(values: list[str]) -> dict[str, float]:
    factors = {}
    for value in values:
        name, _, factor = value.partition("=")
        try:
            factors[name] = float(factor)
        except ValueError:
            raise ConfigError(
                f"--oversample takes STRATUM=FACTOR (e.g. round2-relevant=2), not '{value}'"
            ) from None
    return factors


@app.command()
def draw(
    job: JobOption,
    size: Annotated[str, typer.Option(help="pairs to audit: a count (60) or a share (5%)")],
    by: Annotated[
        str | None, typer.Option(help="strata: outcome (default) | label | round | none")
    ] = None,
    seed: Annotated[int, typer.Option(help="seed of the random order (keep it to extend)")] = 0,
    allocation: Annotated[str, typer.Option(help="proportional | neyman")] = "proportional",
    oversample: Annotated[
        list[str] | None, typer.Option(help="STRATUM=FACTOR: weigh a stratum up (repeatable)")
    ] = None,
    reviews: Annotated[int, typer.Option(help="independent reviewers per audit pair")] = 1,
    db: DbOption = None,
) -> None:
    """Draw (or extend) a stratified random audit into the review queue as blind tasks."""
    from docket.audit.draw import draw_audit

    store = open_store(load_settings(db=db).db)
    result = draw_audit(
        store, job, size, by=by, seed=seed, allocation=allocation,
        oversample=_oversample(oversample or []), required_reviews=reviews,
    )  # fmt: skip
    out.print(
        f"audit of job {job}: {result.size} pairs ({result.added} new) in the review queue, "
        f"seed {result.seed}, strata by {result.by}, {result.allocation} allocation",
        markup=False,
    )
    for s in result.strata:
        out.print(
            f"  {s.name}: {s.drawn} of {s.population} (inclusion probability "
            f"{s.inclusion_probability:.4f})",
            markup=False,
        )
    out.print(f"  {result.census} escalated pairs: a census, decided by reviewers", markup=False)


@app.command()
def plan(
    job: JobOption,
    width: Annotated[float, typer.Option(help="half-width wanted on the accuracy (0.05)")],
    prior_error: Annotated[
        float | None, typer.Option(help="assumed error rate (default: the audit's so far)")
    ] = None,
    allocation: Annotated[str, typer.Option(help="proportional | neyman")] = "proportional",
    confidence: ConfidenceOption = 0.95,
    db: DbOption = None,
) -> None:
    """How many audit labels give an interval of half-width WIDTH on the labels' accuracy."""
    from docket.audit.plan import plan_audit

    store = open_store(load_settings(db=db).db, read_only=True)
    result = plan_audit(
        store, job, width, prior_error=prior_error, confidence=confidence, allocation=allocation
    )
    out.print(
        f"an audit of {result.size} pairs gives a half-width of about "
        f"{result.expected_half_width:.4f} (wanted {width}) at confidence {confidence}; "
        f"{result.drawn} drawn, {result.more} more to draw "
        f"(docket audit draw --job {job} --size {result.size})",
        markup=False,
    )
    for name, n in result.allocation.items():
        rate = result.error_rates[name]
        out.print(f"  {name}: {n} pairs (error rate {rate:.3f}, {result.rates_from})", markup=False)


@app.command()
def report(
    job: JobOption,
    as_json: Annotated[bool, typer.Option("--json", help="print JSON")] = False,
    markdown: Annotated[bool, typer.Option("--markdown", help="print Markdown")] = False,
    confidence: ConfidenceOption = 0.95,
    db: DbOption = None,
) -> None:
    """The label-quality certificate: accuracy of the automatic and final labels, with CIs."""
    from docket.audit.render import certificate_markdown
    from docket.audit.report import certificate

    if as_json and markdown:
        raise ConfigError("pass --json or --markdown, not both")
    store = open_store(load_settings(db=db).db, read_only=True)
    cert = certificate(store, job, confidence=confidence)
    if as_json:
        typer.echo(json.dumps(cert.as_dict(), indent=2))
    else:
        typer.echo(certificate_markdown(cert), nl=False)
