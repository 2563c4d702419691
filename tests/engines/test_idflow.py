"""Following target_layer_ids through a function: every +1 that reaches the ids counts, nothing else does."""

import ast
import textwrap

import pytest

from dflash_doctor.engines.idflow import follow


def shifts(code: str, sources=None, origin="dflash"):
    fn = ast.parse(textwrap.dedent(code)).body[0]
    return follow(fn, sources).shifts(origin)


@pytest.mark.parametrize(
    "code",
    [
        # the fix on the line that reads the ids
        "def f(c):\n    return [i + 1 for i in c['target_layer_ids']]\n",
        # on its own line, after the read (issue 15: the old probe missed this one)
        "def f(c):\n    ids = c.get('target_layer_ids')\n    ids = [i + 1 for i in ids or []]\n    return tuple(ids)\n",
        # a loop that accumulates
        "def f(c):\n    out = []\n    for layer_id in c.target_layer_ids:\n        out.append(layer_id + 1)\n    "
        "return out\n",
        # in the expression that hands them on, constant first, via map/lambda, via a generator
        "def f(c):\n    ids = getattr(c, 'target_layer_ids', None)\n    return tuple(1 + i for i in ids)\n",
        "def f(c):\n    return list(map(lambda i: i + 1, c['target_layer_ids']))\n",
    ],
)
def test_a_plus_one_written_any_way_is_found(code):
    assert shifts(code) == {1}


def test_raw_ids_are_shift_zero():
    assert shifts(
        "def f(c):\n    ids = c.get('target_layer_ids')\n    if ids:\n        return tuple(ids)\n    return None\n"
    ) == {0}


def test_a_plus_one_on_a_length_is_not_a_shift():
    code = "def f(c):\n    n = len(c['target_layer_ids']) + 1\n    return c['target_layer_ids']\n"
    assert shifts(code) == {0}


def test_a_plus_one_on_only_one_path_is_two_answers():
    code = (
        "def f(self, c):\n    ids = c['target_layer_ids']\n    if self.fix:\n"
        "        ids = [i + 1 for i in ids]\n    return ids\n"
    )
    assert shifts(code) == {0, 1}


def test_ids_handed_to_an_unknown_function_are_not_followed():
    assert shifts("def f(c):\n    return convert(c['target_layer_ids'])\n") == {None}


def test_eagle_ids_are_kept_apart_from_dflash_ids():
    code = (
        "def f(c):\n    ids = getattr(c, 'eagle_aux_hidden_state_layer_ids', None)\n    if not ids:\n"
        "        ids = [i + 1 for i in c['dflash_config']['target_layer_ids']]\n    return ids\n"
    )
    fn = ast.parse(code).body[0]
    flow = follow(fn)
    assert flow.shifts("dflash") == {1} and flow.shifts("eagle") == {0}


def test_a_parameter_can_be_the_source_and_a_store_the_sink():
    code = (
        "def set_dflash_layers_to_capture(self, layer_ids):\n"
        "    self.model.layers_to_capture = [v + 1 for v in layer_ids]\n"
    )
    fn = ast.parse(code).body[0]
    flow = follow(fn, {"layer_ids": "dflash"})
    assert [(e.how, {t.shift for t in e.value}) for e in flow.exits] == [("attr:layers_to_capture", {1})]
