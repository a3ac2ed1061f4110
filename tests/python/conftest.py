"""Shared fixtures for the Python package's tests (run by tests/python/run.sh)."""
import json
import os

import pytest

import simdbpe

HERE = os.path.dirname(os.path.abspath(__file__))
GOLDEN = os.path.join(HERE, "..", "data", "golden")


def records(name):
    """The records of a golden JSON Lines file (its header line skipped)."""
    with open(os.path.join(GOLDEN, name), encoding="utf-8") as f:
        out = [json.loads(line) for line in f if line.strip()]
    return [r for r in out if "header" not in r]


@pytest.fixture(scope="session")
def enc():
    return simdbpe.get_encoding("gpt2")


@pytest.fixture(scope="session")
def golden():
    """(text, ids) of edge, stress and random: tiktoken 1.0.22 = HF tokenizers 0.23.2."""
    out = []
    for name, count in (("edge.jsonl", 7229), ("stress.jsonl", 96), ("random.jsonl", 2600)):
        recs = records(name)
        assert len(recs) == count, name
        out += [(r["text"], r["ids"]) for r in recs]
    return out
