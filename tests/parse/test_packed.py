"""The fast paths' compact columns (parse/fast/columns.py) behave as the plain lists they replace."""

from __future__ import annotations

import math

from dflash_doctor.parse.fast.columns import (
    PackedRates,
    PackedRuns,
    PackedText,
    _rates_from_packed,
    _runs,
    _text_array,
)


def _runs_col(items, chunk=3):
    col = PackedRuns()
    for i in range(0, len(items), chunk):
        col.extend(items[i : i + chunk])
        col.flush()
    return col


def test_runs_read_back_as_the_list_they_hold():
    items = ["a"] * 7 + [None] * 5 + ["b", "a", "b", "a"] + ["a"] * 9
    col = _runs_col(items)
    assert list(col) == items and len(col) == len(items)
    assert [col[i] for i in range(len(items))] == items and col[-1] == items[-1]
    back = PackedRuns.from_wire(col.wire())
    assert list(back) == items
    col.keep([0, 6, 7, 12, 24])
    assert list(col) == [items[i] for i in (0, 6, 7, 12, 24)]
    del back[10:]
    assert list(back) == items[:10]


def test_a_run_of_one_value_is_one_segment_and_extend_run_merges_with_it():
    col = PackedRuns()
    col.extend(["src"] * 1000)
    col.flush()
    col.extend_run("src", 500)
    col.extend_run(None, 3)
    assert col.wire() == (("run", 1500, "src"), ("run", 3, None))
    assert list(col.runs()) == [(0, 1500, "src"), (1500, 3, None)]


def test_short_runs_stay_a_list_and_numbers_of_equal_value_but_other_type_do_not_merge():
    col = _runs_col([True, False] * 10, chunk=20)
    assert col.wire()[0][0] == "list"
    col = PackedRuns()
    col.extend_run(1, 2)
    col.extend_run(True, 2)
    assert [type(x) for x in col] == [int, int, bool, bool]


def test_runs_become_numpy_columns_a_run_at_a_time():
    col = _runs_col([None] * 4 + [3, None, 5] + [None] * 2, chunk=4)
    arr = _runs(col, len(col), float)
    assert [x if not math.isnan(x) else None for x in arr.tolist()] == [None] * 4 + [3.0, None, 5.0] + [None] * 2
    obj = _runs(_runs_col(["x"] * 4 + ["y"] * 4, chunk=4), 8, object)
    assert obj.tolist() == ["x"] * 4 + ["y"] * 4 and obj[0] is obj[3]


def test_compacted_times_read_the_same_and_in_place():
    col = PackedText()
    col.extend_blob(2, 14, b"05-14T09:00:0105-14T09:00:02")
    col.extend_blob(1, 14, b"05-14T09:00:03")
    col.extend(["05-14T09:00:04x"])  # another width: a segment of its own
    col.extend_blob(1, 14, b"05-14T09:00:05")
    before = list(col)
    col.compact()
    assert list(col) == before and len(col.wire()) == 3
    one = PackedText()
    one.extend_blob(2, 14, b"05-14T09:00:0105-14T09:00:02")
    one.extend_blob(1, 14, b"05-14T09:00:03")
    one.compact()
    arr = _text_array(one)
    assert len(one.wire()) == 1 and arr.base is not None and arr.tolist()[2] == b"05-14T09:00:03"


def test_compacted_rates_read_the_same_and_as_one_matrix_a_k():
    """What a worker sends: consecutive buffers' rate segments of one k joined (PackedRates.wire compacts),
    a segment of another k or of unpacked items kept apart, the rate matrix unchanged."""
    col = PackedRates()
    rows = [b"0.150, 0.020", b"0.151, 0.021", b"0.152, 0.022", b"0.153, 0.023, 0.004", b"0.154, 0.024"]
    col.extend_uniform(rows[0:2], 12)
    col.extend_uniform(rows[2:3], 12)
    col.extend_uniform(rows[3:4], 19)  # another k
    col.extend_uniform(rows[4:5], 12)
    col.extend([b"1.000, 0.5"])  # not vLLM's print: kept as an item
    col.extend_uniform(rows[0:1], 12)
    col.extend_uniform(rows[1:2], 12)
    before = list(col)
    k = [2, 2, 2, 3, 2, 2, 2, 2]
    m_before = _rates_from_packed(col, k).tolist()
    wire = col.wire()
    assert list(col) == before and [s[0] for s in wire] == ["rates", "rates", "rates", "list", "rates"]
    assert [s[1] for s in wire if s[0] == "rates"] == [3, 1, 1, 2]
    again = PackedRates.from_wire(wire)
    assert list(again) == before and _rates_from_packed(again, k).tolist() == m_before
