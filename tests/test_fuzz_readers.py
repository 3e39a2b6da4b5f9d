"""Fuzz every input reader: whatever a file holds, it parses or fails with one located line.

Each reader starts from a valid file, which hypothesis mutates (truncation, wrong types,
NUL bytes, invalid UTF-8, deep nesting, 1 MB lines, huge numbers, stray bytes). The
property: the reader returns, or raises a :class:`~docket.errors.UserError` (an
``InputError``, or a ``ConfigError`` for ``docket.toml``) whose message is one line and
names the file. Any other exception (a traceback for the user) fails the test.
``max_examples`` keeps each reader to a few seconds.

Besides the plain files: every reader that takes ``.gz`` gets its seed gzipped and then
damaged (cut short, bytes flipped or inserted in the compressed stream, or plain text
named ``.gz``); ``docket.toml`` is fuzzed like the other files; SOP documents as PDF and
DOCX are damaged at the byte level.
"""

from __future__ import annotations

import gzip
import json
import re
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from docket.adherence.authoring.sop import load_sop
from docket.adherence.record import read_records
from docket.adherence.rules.io import load_rules
from docket.config import load_settings
from docket.errors import UserError
from docket.ir.corpus import CorpusIndex, iter_corpus_file
from docket.ir.formats import read_qrels, read_run
from docket.ir.label_files import Scale, read_label_set
from docket.ir.provenance import read_provenance
from docket.ir.queries import read_queries
from docket.ir.rag import read_generation
from docket.readeval.dataset import read_dataset
from docket.relevance.pairs_io import read_labels, read_pairs, scan_pairs
from docket.review.labelstudio_import import read_labelstudio
from tests.adherence.sop_files import write_docx, write_pdf

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
MEGABYTE = 1_000_000


@dataclass(frozen=True)
class Reader:
    """A reader under test: the file name it expects, a valid file, and how to read it all."""

    name: str
    seed: bytes
    read: Callable[[Path], Any]
    slot: str  # a regex matching the values a "wrong type" mutation replaces


JSON_SLOT = r'(?<=: )("(?:[^"\\]|\\.)*"|-?\d[\d.eE+-]*|true|false|null)'
YAML_SLOT = r"(?<=: )[^\n{}\[\],]+"
WORD_SLOT = r"[^\s]+"
TOML_SLOT = r"(?<== )[^\n]+"
CELL_SLOT = r"[^\t\n]+"


def _lines(*objects: dict) -> bytes:
    return "".join(json.dumps(o) + "\n" for o in objects).encode()


def _pairs_tsv() -> bytes:
    rows = [json.loads(line) for line in (EXAMPLES / "pairs.jsonl").read_text().splitlines()]
    head = "qid\tquery\tdocid\ttext\tlabel\n"
    return (head + "".join(f"{r['qid']}\t{r['query']}\t{r['docid']}\t{r['text']}\t1\n" for r in rows[:4])).encode()  # fmt: skip


TOPICS = b"""<top>
<num> Number: 301
<title> International Organized Crime
<desc> Description:
Identify organizations that participate in international criminal activity.
<narr> Narrative:
A relevant document must as a minimum identify the organization.
</top>
<top><num>302</num><title>Poliomyelitis and Post-Polio</title></top>
"""
PROVENANCE = _lines(
    {"qid": "q1", "docid": "e1", "relevance": 3, "label": 1, "source": "original"},
    {"qid": "q1", "docid": "e9", "relevance": 1, "label": 1, "source": "consensus", "rounds": 1,
     "method": "dream", "model": "local"},
    {"qid": "q2", "docid": "e7", "relevance": None, "label": None, "source": "escalated-pending",
     "rounds": 2, "method": "dream", "model": "local"},
)  # fmt: skip
LABELSTUDIO = json.dumps(
    [
        {
            "data": {"qid": "q1", "query": "soft egg", "docid": "d1", "text": "Boil it 6 min."},
            "annotations": [
                {"result": [{"from_name": "relevance", "value": {"choices": ["relevant"]}}]}
            ],
        }
    ]
).encode()


def _dataset() -> bytes:
    from docket.readeval.dataset import BuildConfig, BuildSummary, DatasetHeader, RulesetInfo

    header = DatasetHeader(
        docket_version="0", config=BuildConfig(samples=1), models={"generator": None},
        ruleset=RulesetInfo(name="r", version="v", versions={"r1": "v"}, tiers={"r1": "fmt"}),
        tiers=["fmt"], judge_checked=False, seeds=["s1"], summary=BuildSummary(),
    )  # fmt: skip
    record = {"id": "x1", "turns": [{"role": "user", "text": "Hi"}], "fields": {}}
    sample = {"id": "x1", "persona": "careless", "tier": "fmt", "rule_id": "r1",
              "operator": "urls.insert", "record": record, "source_id": "s1", "iterations": 1}  # fmt: skip
    return (header.model_dump_json() + "\n" + json.dumps(sample) + "\n").encode()


def _consume(iterable: Any) -> list:
    return list(iterable)


TOML = b"""[docket]
db = "judged.db"
model = "openai:gpt-4o-mini"
concurrency = 8
timeout = 30.5
max_in_flight = 16

[docket.prices."openai:gpt-4o-mini"]
input = 0.15
output = 0.6
"""


def _indexed(path: Path) -> None:
    """Read a corpus into a SQLite index, as ``--corpus-index`` does (a lone surrogate in
    a document used to pass the reader and fail in the index)."""
    CorpusIndex.build(iter_corpus_file(path), path.with_name(path.name + ".sqlite")).close()


def _settings_and_prices(path: Path) -> None:
    from docket.jobs.bill.prices import load_price_table

    load_settings(path)
    load_price_table(path)


def _pdf_seed() -> bytes:
    lines = [["1. PURPOSE", "Annotators write polite answers."], ["2. FORMAT", "No URLs."]]
    with tempfile.TemporaryDirectory() as folder:
        return write_pdf(Path(folder) / "sop.pdf", lines).read_bytes()


def _docx_seed() -> bytes:
    with tempfile.TemporaryDirectory() as folder:
        return write_docx(Path(folder) / "sop.docx").read_bytes()


READERS = [
    Reader("pairs.jsonl", (EXAMPLES / "pairs.jsonl").read_bytes(), read_pairs, JSON_SLOT),
    Reader("pairs.tsv", _pairs_tsv(), read_pairs, CELL_SLOT),
    Reader(
        "scan.jsonl", (EXAMPLES / "pairs.jsonl").read_bytes(), lambda p: _consume(scan_pairs(p)), JSON_SLOT
    ),
    Reader(
        "labels.jsonl",
        _lines({"qid": "q1", "docid": "d1", "label": 1}, {"qid": "q2", "docid": "d3", "label": 0}),
        read_labels,
        JSON_SLOT,
    ),
    Reader("qrels.txt", (EXAMPLES / "ir/qrels.txt").read_bytes(), read_qrels, WORD_SLOT),
    Reader("bm25.trec", (EXAMPLES / "ir/bm25.trec").read_bytes(), read_run, WORD_SLOT),
    Reader("queries.tsv", (EXAMPLES / "ir/queries.tsv").read_bytes(), read_queries, CELL_SLOT),
    Reader(
        "queries.jsonl",
        _lines({"_id": "q1", "text": "soft egg"}, {"_id": "q2", "text": "green tea"}),
        read_queries,
        JSON_SLOT,
    ),
    Reader("topics.txt", TOPICS, lambda p: read_queries(p, "title,desc"), WORD_SLOT),
    Reader("rules.yaml", (EXAMPLES / "sop/rules.yaml").read_bytes(), load_rules, YAML_SLOT),
    Reader(
        "dialogues.jsonl", (EXAMPLES / "sop/dialogues.jsonl").read_bytes(), read_records, JSON_SLOT
    ),
    Reader("provenance.jsonl", PROVENANCE, read_provenance, JSON_SLOT),
    Reader(
        "judged.jsonl",
        _lines({"qid": "q1", "docid": "e1", "relevance": 2}, {"qid": "q1", "docid": "e2", "grade": 0}),
        lambda p: read_label_set(p, Scale(0, 3)),
        JSON_SLOT,
    ),
    Reader("judged.qrels", (EXAMPLES / "ir/qrels.txt").read_bytes(), read_label_set, WORD_SLOT),
    Reader(
        "corpus.jsonl",
        (EXAMPLES / "ir/corpus.jsonl").read_bytes(),
        lambda p: _consume(iter_corpus_file(p)),
        JSON_SLOT,
    ),
    Reader(
        "generation.jsonl",
        _lines({"system": "bm25", "qid": "q1", "correct": True}, {"system": "bm25", "qid": "q2", "correct": 0.5}),
        read_generation,
        JSON_SLOT,
    ),
    Reader("dataset.jsonl", _dataset(), read_dataset, JSON_SLOT),
    Reader("sop.md", (EXAMPLES / "sop/dialogue_sop.md").read_bytes(), load_sop, WORD_SLOT),
    Reader("labelstudio.json", LABELSTUDIO, lambda p: read_labelstudio(p, "j"), JSON_SLOT),
    Reader("docket.toml", TOML, _settings_and_prices, TOML_SLOT),
    Reader("indexed.jsonl", (EXAMPLES / "ir/corpus.jsonl").read_bytes(), _indexed, JSON_SLOT),
    Reader("sop.pdf", _pdf_seed(), load_sop, WORD_SLOT),
    Reader("sop.docx", _docx_seed(), load_sop, WORD_SLOT),
]  # fmt: skip
# The readers that take a gzipped file (all that read through docket.reading.open_text).
GZIPPED = [r for r in READERS if r.name.endswith((".jsonl", ".tsv", ".txt", ".trec", ".qrels"))]

# Values a "wrong type" mutation puts in place of one value of the file.
WRONG = [
    "null", "[]", "{}", "[1, 2]", '{"a": 1}', "true", "0", "-1", "1.5", "1e999", "-1e999",
    "NaN", '"NaN"', "9" * 5000, '""', '" "', '"\\u0000"', '"a\\nb"', '"\\ud800"', "~",
    "!!binary zz", "2026-13-45", "*nosuch", "&a [*a, *a]", "'unterminated", "\x00", "\t",
    "[" * 5000 + "]" * 5000, '{"a": ' * 5000 + "1" + "}" * 5000, '"' + "z" * MEGABYTE + '"',
]  # fmt: skip
# Bytes an "insert" mutation puts anywhere: NUL, invalid or cut UTF-8, structure characters.
STRAY = [
    b"\x00", b"\xff\xfe", b"\xc3", b"\xed\xa0\x80", b"\x80", b"\n", b"\r", b"\t", b'"', b"{",
    b"[", b"<top>", b"</top>", b"\xef\xbb\xbf", b"\x1b[31m", b"\\",
]  # fmt: skip


def _at(content: bytes, where: float) -> int:
    return min(len(content), int(where * (len(content) + 1)))


def _truncate(content: bytes, where: float) -> bytes:
    return content[: _at(content, where)]


def _insert(payload: bytes) -> Callable[[bytes, float], bytes]:
    def insert(content: bytes, where: float) -> bytes:
        cut = _at(content, where)
        return content[:cut] + payload + content[cut:]

    return insert


def _nested(depth: int, yaml_style: bool) -> bytes:
    if yaml_style:
        return b"[" * depth + b"]" * depth
    return b'{"a": ' * depth + b"1" + b"}" * depth


def _wrong_type(slot: str, value: str) -> Callable[[bytes, float], bytes]:
    def replace(content: bytes, where: float) -> bytes:
        text = content.decode("utf-8", "replace")
        slots = list(re.finditer(slot, text))
        if not slots:
            return content
        hit = slots[min(len(slots) - 1, int(where * len(slots)))]
        return (text[: hit.start()] + value + text[hit.end() :]).encode("utf-8", "surrogatepass")

    return replace


def _mutations(reader: Reader) -> st.SearchStrategy[Callable[[bytes, float], bytes]]:
    yaml_style = reader.slot == YAML_SLOT
    return st.one_of(
        st.just(_truncate),
        st.sampled_from(STRAY).map(_insert),
        st.binary(min_size=1, max_size=8).map(_insert),
        st.sampled_from([60, 1200, 50_000]).map(lambda d: _insert(_nested(d, yaml_style))),
        st.sampled_from([b"x" * MEGABYTE, b"\n" + b"y" * MEGABYTE + b"\n"]).map(_insert),
        st.sampled_from([b"9" * 5000, b"1e400", b"-0", b"18446744073709551616"]).map(_insert),
        st.sampled_from(WRONG).map(lambda value: _wrong_type(reader.slot, value)),
    )


def _mutated(reader: Reader) -> st.SearchStrategy[bytes]:
    steps = st.lists(st.tuples(_mutations(reader), st.floats(0, 1)), min_size=1, max_size=3)

    def apply(chain: list) -> bytes:
        content = reader.seed
        for mutate, where in chain:
            content = mutate(content, where)
        return content

    return steps.map(apply)


def check_reader(reader: Reader, folder: Path, content: bytes) -> None:
    """The property: ``reader`` parses ``content`` or raises one located user-error line."""
    path = folder / reader.name
    path.write_bytes(content)
    try:
        reader.read(path)
    except UserError as exc:
        shown = exc.one_line()
        assert "\n" not in shown and "\r" not in shown, shown
        assert str(path) in shown, shown
        assert len(shown) < 2000, shown[:200]  # a 1 MB value is not echoed back whole


def test_every_reader_accepts_its_seed_file(tmp_path: Path) -> None:
    for reader in READERS:
        path = tmp_path / reader.name
        path.write_bytes(reader.seed)
        reader.read(path)  # the seeds are valid: a mutation starts from a parsing file


@pytest.mark.parametrize("reader", READERS, ids=[r.name for r in READERS])
def test_a_mutated_file_parses_or_fails_with_one_located_line(
    reader: Reader, tmp_path_factory: pytest.TempPathFactory
) -> None:
    folder = tmp_path_factory.mktemp("fuzz")

    @settings(
        max_examples=60,
        deadline=None,
        derandomize=True,  # the same examples on every machine and every run
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(content=_mutated(reader))
    def fuzz(content: bytes) -> None:
        check_reader(reader, folder, content)

    fuzz()


def _gzipped(reader: Reader) -> Reader:
    return Reader(reader.name + ".gz", gzip.compress(reader.seed, mtime=0), reader.read, "")


def _damage(content: bytes, where: float, payload: bytes) -> bytes:
    cut = _at(content, where)
    return content[:cut] + payload + content[cut + len(payload) :]


def _damaged_gzip(reader: Reader) -> st.SearchStrategy[bytes]:
    """The gzipped seed cut short, overwritten or extended anywhere; the plain seed, or a
    plain mutation of it, under the ``.gz`` name; a gzip of a mutated file."""
    packed = gzip.compress(reader.seed, mtime=0)
    where = st.floats(0, 1)
    return st.one_of(
        where.map(lambda w: _truncate(packed, w)),
        st.tuples(where, st.binary(min_size=1, max_size=8)).map(lambda t: _damage(packed, *t)),
        st.tuples(where, st.sampled_from(STRAY)).map(lambda t: _insert(t[1])(packed, t[0])),
        st.just(reader.seed),
        _mutated(reader),
        _mutated(reader).map(lambda content: gzip.compress(content, mtime=0)),
    )


def test_every_gzip_reader_accepts_its_gzipped_seed(tmp_path: Path) -> None:
    for reader in map(_gzipped, GZIPPED):
        path = tmp_path / reader.name
        path.write_bytes(reader.seed)
        reader.read(path)


@pytest.mark.parametrize("reader", GZIPPED, ids=[r.name + ".gz" for r in GZIPPED])
def test_a_damaged_gzip_parses_or_fails_with_one_located_line(
    reader: Reader, tmp_path_factory: pytest.TempPathFactory
) -> None:
    folder, named = tmp_path_factory.mktemp("fuzz-gz"), _gzipped(reader)

    @settings(
        max_examples=40,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(content=_damaged_gzip(reader))
    def fuzz(content: bytes) -> None:
        check_reader(named, folder, content)

    fuzz()
