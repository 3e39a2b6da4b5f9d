"""The collection's own definition of relevance: per-query guidance and per-job instructions.

DL20 pairs are judged with DREAM through a real HTTP chat server: every agent and round of
a pair must share one byte-identical prefix that carries the guidance, the prompt hash
must change with it, and a rerun with other guidance (or none) must be refused.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
import pytest

from docket.audit.card import card_markdown, dataset_card
from docket.errors import ConfigError, InputError
from docket.jobs import JobSpec, run_job
from docket.jobs.guidance import job_guidance
from docket.relevance import prompts
from docket.relevance.pairs_io import read_pairs
from tests.scripted_server import serve

DL20 = Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "dl20"
AGENT = re.compile(r"you are agent (\w)")
ROUND = re.compile(r"Round (\d)\.")
INSTRUCTIONS = """# Relevance for this collection
A passage is relevant when it states a fact a medical student could cite; a passage that
only names the topic is irrelevant.

## Grades
0: unrelated
1: names the topic only
2: states a citable fact in part
3: states the citable fact the query asks for
"""


def _user(body: dict) -> str:
    return body["messages"][1]["content"]


def _debater(body: dict) -> str:
    """Round 1: A relevant, B irrelevant; round 2: both relevant (every pair runs 2 rounds)."""
    text = _user(body)
    agent, round_no = AGENT.search(text).group(1), int(ROUND.search(text).group(1))
    label = "relevant" if agent == "A" or round_no > 1 else "irrelevant"
    return json.dumps({"label": label, "evidence": ["S1"], "reasoning": f"agent {agent} says so"})


def _dl20_frame(queries: int = 3, per_query: int = 2) -> pd.DataFrame:
    rows = [json.loads(line) for line in (DL20 / "trec_dl20_pairs.jsonl").open()]
    chosen, seen = [], {}
    for row in rows:
        if seen.get(row["qid"], 0) < per_query and (row["qid"] in seen or len(seen) < queries):
            seen[row["qid"]] = seen.get(row["qid"], 0) + 1
            chosen.append({k: row[k] for k in ("qid", "query", "docid", "passage", "grade")})
    return pd.DataFrame(chosen)


def _with_guidance(frame: pd.DataFrame, word: str) -> pd.DataFrame:
    guided = frame.copy()
    guided["guidance"] = [f"Description: {word} for {qid}.\nNarrative: <chunk> is data."
                          for qid in guided["qid"]]  # fmt: skip
    return guided


def test_the_shared_block_carries_the_guidance_for_every_agent_and_round(tmp_path: Path):
    frame = _with_guidance(_dl20_frame(), "what counts")
    db = str(tmp_path / "g.db")
    with serve(_debater) as server:
        spec = JobSpec.of("dream", model=server.model(), db=db, cache="off", rounds=2)
        run = run_job(frame, spec, job="guided")
        bodies = list(server.requests)
    assert run.complete and len(bodies) == 4 * len(frame)  # 2 agents x 2 rounds per pair
    by_pair: dict[str, set[str]] = {}
    for body in bodies:
        user = _user(body)
        shared = user[: user.index("</chunk>\n") + len("</chunk>\n")]
        qid = next(q for q in frame["qid"] if f"what counts for {q}." in shared)
        guidance = prompts.neutralise(f"Description: what counts for {qid}.\n"
                                      "Narrative: <chunk> is data.")  # fmt: skip
        assert shared.startswith("<query>\n") and "</query>\n\n<guidance>\n" in shared
        assert f"<guidance>\n{guidance}\n</guidance>\n\n<chunk>\n" in shared
        assert "&lt;chunk> is data" in shared  # a delimiter inside guidance is neutralised
        assert body["messages"][0]["content"] == prompts.SYSTEM + prompts.GUIDANCE_NOTE
        by_pair.setdefault(shared.split("<chunk>")[1], set()).add(shared)
    assert len(by_pair) == len(frame)
    assert all(len(prefixes) == 1 for prefixes in by_pair.values())  # byte-identical
    hashes = {j.prompt_hash for _, j in run.judgments()}
    assert len(hashes) == 3 and prompts.PROMPT_HASH not in hashes  # one per query's text
    assert job_guidance(run.store, "guided") == dict(
        zip(frame["qid"], frame["guidance"], strict=True)
    )


def test_a_rerun_with_other_guidance_or_none_is_refused(tmp_path: Path):
    frame = _dl20_frame(queries=2, per_query=1)
    db = str(tmp_path / "g.db")
    with serve(_debater) as server:
        spec = JobSpec.of("dream", model=server.model(), db=db, cache="off", rounds=2)
        run_job(_with_guidance(frame, "first"), spec, job="g")
        calls = len(server.requests)
        again = run_job(_with_guidance(frame, "first"), spec, job="g")  # same text resumes
        assert again.complete and len(server.requests) == calls
        with pytest.raises(ConfigError, match="other guidance"):
            run_job(_with_guidance(frame, "second"), spec, job="g")
        with pytest.raises(ConfigError, match="with guidance"):
            run_job(frame, spec, job="g")
        plain = run_job(frame, spec, job="plain")  # judged without guidance ...
        with pytest.raises(ConfigError, match="no guidance"):
            run_job(_with_guidance(frame, "late"), spec, job="plain")  # ... stays without
        assert len(server.requests) == calls + 4 * len(frame)
    assert {j.prompt_hash for _, j in plain.judgments()} == {prompts.PROMPT_HASH}


def test_without_guidance_or_instructions_the_prompt_is_protocol_4_byte_for_byte():
    sentences = ["One sentence.", "Two."]
    old = "<query>\nq\n</query>\n\n<chunk>\n[S1] One sentence.\n[S2] Two.\n</chunk>\n"
    assert prompts.shared_block("q", sentences) == old
    assert prompts.wording("").system == prompts.SYSTEM
    assert prompts.wording("").prompt_hash("") == prompts.PROMPT_HASH
    assert prompts.wording("").prompt_hash("x") != prompts.PROMPT_HASH


def test_instructions_replace_the_definition_and_the_grades_and_are_recorded(tmp_path: Path):
    frame = _dl20_frame(queries=1, per_query=2)
    db = str(tmp_path / "i.db")
    reply = json.dumps({"grade": 2, "evidence": ["S1"], "reasoning": "states a fact"})
    with serve(lambda body: reply) as server:
        spec = JobSpec.of("single", scale="graded", model=server.model(), db=db, cache="off",
                          instructions=INSTRUCTIONS)  # fmt: skip
        run = run_job(frame, spec, job="inst")
        system, user = (server.requests[0]["messages"][i]["content"] for i in (0, 1))
    assert "<definition>\n# Relevance for this collection" in system
    assert "- relevant: the chunk answers the query" not in system  # docket's is replaced
    assert "2 = states a citable fact in part;" in user and "dedicated to the query" not in user
    assert all(j.grade == 2 and j.label == 1 for _, j in run.judgments())
    assert {j.prompt_hash for _, j in run.judgments()} == {
        prompts.wording(INSTRUCTIONS).prompt_hash()
    }
    card = card_markdown(dataset_card(run.store, "inst"))
    assert "## The collection's definition of relevance\n\n> # Relevance for this" in card
    plain = JobSpec.of("single", scale="graded", model=spec.settings.model, db=db)
    with pytest.raises(ConfigError, match="already exists"):
        run_job(frame, plain, job="inst")  # dropping the instructions would mix prompts


def test_instructions_files_are_checked_with_their_line(tmp_path: Path):
    bad = tmp_path / "inst.md"
    bad.write_text("Relevant means useful.\n\n## Grades\n0: no\n1: some\n3: all\n")
    with pytest.raises(InputError, match=r"inst.md:3.*lacks grade 2"):
        prompts.read_instructions(str(bad))
    bad.write_text("## Grades\n0: a\n1: b\n2: c\n3: d\n")
    with pytest.raises(InputError, match="no definition"):
        prompts.read_instructions(str(bad))
    assert prompts.split_instructions("Useful.")[1] is None  # grades stay docket's


def test_pairs_files_carry_guidance_per_query(tmp_path: Path):
    path = tmp_path / "p.jsonl"
    rows = [{"qid": "1", "query": "q", "docid": d, "text": "t", "guidance": "G"} for d in "ab"]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    assert [p.guidance for p in read_pairs(path)] == ["G", "G"]
    rows[1]["guidance"] = "other"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    with pytest.raises(InputError, match=r"p.jsonl:2: field 'guidance'.*line 1"):
        read_pairs(path)
