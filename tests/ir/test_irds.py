"""ir_datasets access, against a stand-in module (the package is an optional extra)."""

from __future__ import annotations

import sys
import types
from collections import namedtuple

import pytest

from docket.errors import UserError
from docket.ir.corpus import Document, open_corpus
from docket.ir.queries import read_queries

Doc = namedtuple("Doc", "doc_id title text")
Query = namedtuple("Query", "query_id text")


class RequestsDownload:
    def __init__(self, url):
        self.url = url

    def __iter__(self):  # a real download: docket must never reach it
        raise AssertionError("download attempted")


class Store:
    def __init__(self, local: bool):
        self.local = local

    def get_many(self, ids):
        if not self.local:
            iter(RequestsDownload("https://example.org/docs.tar.gz"))
        docs = {"a": Doc("a", "Zebras", "Striped."), "b": Doc("b", "", "Horses.")}
        return {i: docs[i] for i in ids if i in docs}


class Dataset:
    def __init__(self, local: bool):
        self.local = local

    def has_docs(self):
        return True

    def has_queries(self):
        return True

    def docs_store(self):
        return Store(self.local)

    def queries_iter(self):
        return iter([Query("1", "what do zebras eat")])


@pytest.fixture
def fake_irds(monkeypatch: pytest.MonkeyPatch) -> None:
    module = types.ModuleType("ir_datasets")
    datasets = {"toy/local": Dataset(True), "toy/remote": Dataset(False)}

    def load(name):
        return datasets[name]  # KeyError for unknown ids, as ir_datasets does

    module.load = load
    download = types.ModuleType("ir_datasets.util.download")
    download.RequestsDownload = RequestsDownload
    monkeypatch.setitem(sys.modules, "ir_datasets", module)
    monkeypatch.setitem(sys.modules, "ir_datasets.util", types.ModuleType("ir_datasets.util"))
    monkeypatch.setitem(sys.modules, "ir_datasets.util.download", download)


def test_local_dataset_documents_and_queries(fake_irds) -> None:
    corpus = open_corpus("irds:toy/local")
    assert corpus.get_many(["a", "b", "zz"]) == {
        "a": Document("a", "Striped.", "Zebras"),
        "b": Document("b", "Horses.", ""),
    }
    assert read_queries("irds:toy/local") == {"1": "what do zebras eat"}


def test_missing_data_is_an_error_not_a_download(fake_irds) -> None:
    corpus = open_corpus("irds:toy/remote")
    with pytest.raises(
        UserError, match="docs of ir_datasets 'toy/remote' are not on this"
    ) as caught:
        corpus.get_many(["a"])
    assert "ir_datasets export toy/remote docs" in caught.value.hint
    assert RequestsDownload.__iter__.__name__ == "__iter__"  # the guard was undone


def test_unknown_dataset_id(fake_irds) -> None:
    with pytest.raises(UserError, match="unknown ir_datasets id 'nope'"):
        open_corpus("irds:nope")
