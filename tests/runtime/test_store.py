"""A stored record is its canonical JSON with the checksum of that text: read back, it is
the record, and it passes the check a resumed run makes."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from verify.runtime.store import ResultStore, checksum, record_problem, signed_text


def test_a_saved_record_reads_back_as_its_plain_form_with_a_matching_checksum(tmp_path):
    store = ResultStore(tmp_path)
    record = {"result": {"b": np.arange(3.0), "a": (1, math.nan)}, "c": {"y": np.float64(2.5)}}
    store.save("k", record)
    text = (tmp_path / "k.json").read_text()
    stored = json.loads(text)
    assert record_problem(stored, "k") is None
    assert stored["checksum"] == checksum(stored)
    assert store.load("k") == {"result": {"a": [1, None], "b": [0.0, 1.0, 2.0]}, "c": {"y": 2.5}}


def test_a_changed_record_fails_its_checksum(tmp_path):
    text = signed_text({"result": {"value": 1.0}, "key": "k"})
    changed = json.loads(text.replace("1.0", "2.0"))
    assert "changed" in record_problem(changed, "k")


def test_an_empty_record_is_refused():
    with pytest.raises(ValueError):
        signed_text({})
