"""RE-AD-Eval build: seeded draws, one confirmed violation per sample, seeds, set-up errors."""

from __future__ import annotations

import asyncio
import random
from collections import Counter
from pathlib import Path

import pytest

from docket.adherence.record import Record, Turn
from docket.errors import ConfigError, InputError
from docket.readeval import (
    BuildConfig,
    BuildModels,
    Persona,
    build_dataset,
    fmt_failures,
    parse_persona,
    read_dataset,
    write_dataset,
)
from docket.readeval.personas import draw_tier, outside_paper_ranges
from tests.adherence.bench_helpers import (
    clean_seeds,
    example_rules,
    fake_model,
    generator,
    judge_reply,
    marker,
)

RULES = example_rules()


def build(config: BuildConfig, models: BuildModels | None = None, seeds=None):  # type: ignore[no-untyped-def]
    return asyncio.run(build_dataset(RULES, seeds or clean_seeds(), config, models))


def test_fmt_build_has_exactly_the_injected_violation_in_every_sample() -> None:
    result = build(BuildConfig(samples=40, seed=3))
    samples = result.dataset.samples
    assert len(samples) + len(result.drops) == 40
    assert len(samples) >= 35
    for sample in samples:
        assert sample.tier == "fmt"
        assert set(fmt_failures(RULES, sample.record)) == {sample.rule_id}
        assert sample.record.id == sample.id
        assert sample.operator.split(".")[0] == RULES.get(sample.rule_id).check.checker
        assert sample.source_id in {seed.id for seed in clean_seeds()}
    header = result.dataset.header
    assert header.tiers == ["fmt"] and not header.judge_checked
    assert header.ruleset.version == RULES.version
    assert header.summary.kept == len(samples)
    assert any("no judge model" in w for w in header.warnings)


def test_seeded_builds_are_identical_and_other_seeds_differ(tmp_path: Path) -> None:
    paths = []
    for name, seed in (("a", 5), ("b", 5), ("c", 6)):
        path = tmp_path / f"{name}.jsonl"
        write_dataset(path, build(BuildConfig(samples=25, seed=seed)).dataset)
        paths.append(path.read_bytes())
    assert paths[0] == paths[1]
    assert paths[0] != paths[2]


def test_dataset_round_trips_through_the_file(tmp_path: Path) -> None:
    dataset = build(BuildConfig(samples=5, seed=1)).dataset
    write_dataset(tmp_path / "d.jsonl", dataset)
    assert read_dataset(tmp_path / "d.jsonl") == dataset


def test_a_seed_that_breaks_a_rule_is_skipped_and_listed() -> None:
    dirty = Record(
        id="dirty",
        turns=[
            Turn(role="user", text="See www.example.com please now"),
            Turn(role="assistant", text="Hello, sure."),
        ],
    )
    result = build(BuildConfig(samples=10), seeds=[*clean_seeds(), dirty])
    header = result.dataset.header
    assert "dirty" in header.skipped_seeds and "no-urls" in header.skipped_seeds["dirty"]
    assert "dirty" not in header.seeds
    assert all(sample.source_id != "dirty" for sample in result.dataset.samples)


def test_no_clean_seed_is_a_user_error() -> None:
    dirty = Record(id="d", turns=[Turn(role="assistant", text="Hi")])
    with pytest.raises(InputError, match="no seed record passes"):
        build(BuildConfig(samples=3), seeds=[dirty])


def test_tier_draw_follows_the_persona_error_probabilities() -> None:
    novice = Persona(name="n", errors={"fmt": 0.25, "sim": 0.35, "sub": 0.5})
    rng = random.Random(0)
    counts = Counter(draw_tier(rng, novice, ["fmt", "sim", "sub"]) for _ in range(11000))
    assert abs(counts["fmt"] / 11000 - 0.25 / 1.1) < 0.02
    assert abs(counts["sub"] / 11000 - 0.5 / 1.1) < 0.02
    only_fmt = Persona(name="f", errors={"fmt": 0.1, "sim": 0.0, "sub": 0.0})
    assert {draw_tier(rng, only_fmt, ["fmt", "sim", "sub"]) for _ in range(50)} == {"fmt"}
    assert draw_tier(rng, only_fmt, ["sim"]) is None


def test_persona_option_and_paper_ranges() -> None:
    persona = parse_persona("novice=0.2,0.3,0.45")
    assert persona.errors == {"fmt": 0.2, "sim": 0.3, "sub": 0.45} and persona.style
    assert outside_paper_ranges([persona]) == []
    assert outside_paper_ranges([parse_persona("x=0.9,0.1,0.2")])[0].startswith("persona 'x': fmt")
    for bad in ("novice", "n=1,2", "n=a,b,c", "n=0.1,0.2,1.5"):
        with pytest.raises(ValueError):
            parse_persona(bad)


def test_llm_tiers_need_a_generator_and_a_judge() -> None:
    with pytest.raises(ConfigError, match="generator"):
        build(BuildConfig(samples=1, tiers=("sim",)))
    gen = fake_model("bench-gen-only", generator())
    with pytest.raises(ConfigError, match="judge"):
        build(BuildConfig(samples=1), BuildModels(generator=gen))


def llm_models(gen_name: str = "gen-a", judge_name: str = "judge-b") -> BuildModels:
    judge = fake_model(judge_name, judge_reply)
    return BuildModels(
        generator=fake_model(gen_name, generator()), judge_sim=judge, judge_sub=judge
    )


def test_llm_build_covers_all_tiers_with_confirmed_samples() -> None:
    result = build(BuildConfig(samples=30, seed=2), llm_models())
    header = result.dataset.header
    assert header.tiers == ["fmt", "sim", "sub"] and header.judge_checked
    assert header.models == {
        "generator": "fake:gen-a",
        "judge_sim": "fake:judge-b",
        "judge_sub": "fake:judge-b",
    }
    tiers = Counter(sample.tier for sample in result.dataset.samples)
    assert set(tiers) == {"fmt", "sim", "sub"}
    for sample in result.dataset.samples:
        text = " ".join(turn.text for turn in sample.record.turns)
        if sample.tier == "fmt":
            assert "violates-" not in text
        else:
            assert sample.operator == "llm-rewrite" and sample.iterations == 1
            assert marker(sample.rule_id) in text and text.count("violates-") == 1
            assert fmt_failures(RULES, sample.record) == {}
    assert not any("same model family" in w for w in header.warnings)


def test_llm_builds_are_reproducible(tmp_path: Path) -> None:
    out = []
    for name in ("x", "y"):
        write_dataset(tmp_path / name, build(BuildConfig(samples=12, seed=9), llm_models()).dataset)
        out.append((tmp_path / name).read_bytes())
    assert out[0] == out[1]


def test_same_family_generator_and_judge_is_warned_about() -> None:
    result = build(BuildConfig(samples=2, seed=1), llm_models("fam-1", "fam-2"))
    assert any("same model family" in w for w in result.warnings)


DIALOGUE = (
    '<turn role="user">Hello, my train to York was cancelled today.</turn>\n'
    '<turn role="assistant">Good morning, I am sorry to hear that. I can refund it.</turn>\n'
    '<turn role="user">Thank you, please go ahead.</turn>\n'
    '<turn role="assistant">Done. Is there anything else I can help you with?</turn>'
)


def test_scenarios_become_new_clean_seeds() -> None:
    def script(request) -> str:  # type: ignore[no-untyped-def]
        if "Write a realistic dialogue" in request.messages[1].content:
            scenario = request.messages[1].content
            return DIALOGUE if "York" in scenario else "no dialogue, sorry"
        return generator()(request)

    judge = fake_model("scn-judge", judge_reply)
    models = BuildModels(generator=fake_model("scn-gen", script), judge_sim=judge, judge_sub=judge)
    scenarios = [
        Record(id="york", fields={"scenario": "A cancelled train to York."}),
        Record(id="leeds", fields={"scenario": "A delayed train to Leeds."}),
    ]
    result = asyncio.run(
        build_dataset(RULES, [], BuildConfig(samples=6, seed=1), models, scenarios=scenarios)
    )
    header = result.dataset.header
    assert header.generated_seeds == ["york"] and header.seeds == ["york"]
    assert header.skipped_seeds == {"leeds": "dialogue not written: generator reply unreadable"}
    assert {s.source_id for s in result.dataset.samples} == {"york"}
