"""report@1's published JSON Schema: generated from the shapes in dflash_doctor/schema.py, committed as
docs/report@1.schema.json (`make schema`), and the documents the tool writes hold to it."""

import copy
import json

import jsonschema
import pytest

from dflash_doctor import schema
from tests.conftest import ROOT

PUBLISHED = ROOT / "docs" / "report@1.schema.json"
GOLDEN = sorted((ROOT / "tests" / "golden").glob("*.json"))


def _validator():
    return jsonschema.Draft202012Validator(json.loads(PUBLISHED.read_text()))


def test_the_committed_schema_is_the_generated_one():
    want = json.dumps(schema.report_json_schema(), indent=2, sort_keys=True) + "\n"
    assert PUBLISHED.read_text() == want, "docs/report@1.schema.json is stale: run `make schema`"


def test_the_schema_is_a_valid_json_schema():
    jsonschema.Draft202012Validator.check_schema(json.loads(PUBLISHED.read_text()))


@pytest.mark.parametrize("path", GOLDEN, ids=lambda p: p.name)
def test_every_golden_report_validates(path):
    doc = json.loads(path.read_text())
    _validator().validate(doc)
    schema.convert(doc, schema.Report, path.name)


def test_a_fresh_report_validates(cli, fixtures_dir):
    proc = cli("diagnose", "--log", str(fixtures_dir / "seed" / "vllm-0.20.1.log"), "-f", "json")
    assert proc.returncode in (0, 1, 3), proc.stderr
    doc = json.loads(proc.stdout)
    _validator().validate(doc)
    assert schema.convert(doc, schema.Report, "report").verdict == doc["verdict"]


@pytest.mark.parametrize(
    "damage,message",
    [
        (lambda d: d.update(verdict="fine"), "report: verdict: invalid enum value 'fine'"),
        (lambda d: d.pop("causes"), "report: missing 'causes'"),
        (lambda d: d["findings"][0].update(status="passed"), "report: findings[0].status: invalid enum value 'passed'"),
        (lambda d: d["causes"][0].update(confidence="high"), "report: causes[0].confidence: expected a number"),
        (lambda d: d.update(schema="dflash-doctor/report@2"), "report: schema: invalid enum value"),
        (lambda d: d.update(colour="red"), "report: unknown key 'colour'"),
    ],
)
def test_a_damaged_report_fails_with_one_line(damage, message):
    doc = copy.deepcopy(json.loads((ROOT / "tests" / "golden" / "seed.json").read_text()))
    damage(doc)
    assert list(_validator().iter_errors(doc)), "the published schema let the damaged report through"
    with pytest.raises(schema.SchemaError) as exc:
        schema.convert(doc, schema.Report, "report")
    assert str(exc.value).startswith(message) and "\n" not in str(exc.value)
