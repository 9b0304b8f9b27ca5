"""raidlab.config_reference: the configuration reference generated from the JSON Schema.

`tests/data/config_schema_sample.json` is real schemars 1 output for a configuration built
from the core's own types (DriveConfig, TraceConfig, SeekConfig, …) plus typical shapes the
engine's types will have (an internally tagged arrival process, a map, an array of tables).
"""

from __future__ import annotations

import json
from typing import Any, Iterator, Mapping

import pytest

from raidlab import _core
from raidlab.config_reference import render_config_reference, undocumented_keys, unit_of

from conftest import DATA


@pytest.fixture(scope="module")
def schema() -> dict:
    return json.loads((DATA / "config_schema_sample.json").read_text())


@pytest.fixture(scope="module")
def reference(schema) -> str:
    return render_config_reference(schema)


def rows(text: str) -> dict:
    """Table rows of the reference by key path."""
    found = {}
    for line in text.splitlines():
        if line.startswith("| `"):
            cells = [cell.strip() for cell in line.strip("|").split(" | ")]
            found[cells[0].strip("`")] = cells
    return found


def leaf_paths(schema: Mapping[str, Any]) -> Iterator[str]:
    """Every key path of the sample, written the way the reference writes it."""
    definitions = schema["$defs"]

    def resolve(node):
        while "$ref" in node:
            node = definitions[node["$ref"].rsplit("/", 1)[-1]]
        for alternative in node.get("anyOf", []):
            if alternative.get("type") != "null":
                return resolve(alternative)
        return node

    def walk(node, path):
        node = resolve(node)
        variants = [resolve(v) for v in node.get("oneOf", []) if "properties" in resolve(v)]
        for variant in variants:
            yield from walk(variant, path)
        for name, prop in node.get("properties", {}).items():
            key = f"{path}.{name}" if path else name
            yield key
            inner = resolve(prop)
            if inner.get("type") == "array" and "$ref" in inner.get("items", {}):
                yield from walk(inner["items"], key + "[]")
            else:
                yield from walk(inner, key)

    yield from walk(schema, "")


def test_every_key_path_has_a_row(schema, reference):
    documented = rows(reference)
    missing = [path for path in leaf_paths(schema) if path not in documented]
    assert not missing


def test_rows_have_type_default_unit_and_description(reference):
    row = rows(reference)["array.stripe_unit_kib"]
    assert row == ["`array.stripe_unit_kib`", "integer ≥ 0", "`16`", "KiB", "Stripe unit, KiB."]
    assert rows(reference)["array.layout"][2] == "*required*"
    assert rows(reference)["workload.requests"][2] == "*optional*"
    assert rows(reference)["drive.scheduler"][2] == '`"fcfs"`'


def test_tagged_enum_gets_a_selector_row_and_a_section_per_variant(reference):
    assert rows(reference)["workload.arrival.process"][1] == '`"poisson"` \\| `"closed"`'
    assert '`workload.arrival` with `process = "poisson"`' in reference
    assert '`drive.model.seek` with `kind = "piecewise"`' in reference
    assert rows(reference)["workload.arrival.rate_per_s"][3] == "1/s"


def test_string_enum_lists_values_with_their_docs(reference):
    row = rows(reference)["workload.trace.fold"]
    assert row[1] == '`"modulo"` \\| `"scale"` \\| `"reject"`'
    assert row[2] == '`"modulo"`'
    assert '`"reject"`: Stop with an error naming the line.' in row[4]


def test_arrays_of_tables_get_their_own_section(reference):
    assert "`[[failures]]` (each element)" in reference
    assert rows(reference)["failures[].at_s"][3] == "s"
    assert rows(reference)["drive.model.seek.points"][1] == "array of [integer ≥ 0, number]"


def test_maps_and_defaults_of_tables(reference):
    assert rows(reference)["workload.tags"][1] == "table of number"
    assert rows(reference)["workload.tags"][2] == "`{}`"
    assert rows(reference)["drive"][2] == '`{ preset = "ibm0661", scheduler = "fcfs" }`'


def test_undocumented_keys_are_listed(schema):
    assert "workload.trace.csv.time_column" in undocumented_keys(schema)
    assert "array.layout" not in undocumented_keys(schema)


@pytest.mark.parametrize("key, unit", [
    ("rate_per_s", "1/s"), ("at_s", "s"), ("think_ms", "ms"), ("stripe_unit_kib", "KiB"),
    ("size_unit_bytes", "bytes"), ("rpm", "rev/min"), ("read_fraction", "fraction (0–1)"),
    ("kib", "KiB"), ("drives", ""), ("time_scale", ""),
])
def test_unit_from_key_suffix(key, unit):
    assert unit_of(f"section.{key}") == unit


def test_explicit_unit_keyword_wins():
    assert unit_of("x.rate_per_s", {"x-unit": "IO/s"}) == "IO/s"


def test_rendering_is_deterministic(schema):
    assert render_config_reference(schema) == render_config_reference(schema)


@pytest.mark.engine
def test_the_core_schema_renders_every_key():
    schema = json.loads(_core.config_schema())
    documented = rows(render_config_reference(schema))
    for key in ("seed", "array.layout", "array.drives", "array.stripe_unit_kib", "drive.preset",
                "workload.requests", "workload.read_fraction", "failures[].drive", "failures[].at_s"):
        assert key in documented, key


def test_committed_reference_and_schema_match_the_core():
    """docs/config.md and docs/config.schema.json are generated (`make docs`); they must
    describe the configuration types the binary was built from, and every key is documented."""
    from conftest import REPO_ROOT

    live = json.loads(_core.config_schema())
    committed_schema = json.loads((REPO_ROOT / "docs" / "config.schema.json").read_text())
    assert committed_schema == live, "docs/config.schema.json is stale: run `make docs`"
    committed = (REPO_ROOT / "docs" / "config.md").read_text()
    assert committed == render_config_reference(live), "docs/config.md is stale: run `make docs`"
    assert undocumented_keys(live) == []


def test_a_keys_default_is_read_through_references_and_optional_values():
    from raidlab.output.config_reference import NO_DEFAULT, key_default

    schema = json.loads(_core.config_schema())
    assert key_default(schema, "array.spares") == 0
    assert key_default(schema, "metrics.window_s") == 1.0
    assert key_default(schema, "failures") == []
    assert key_default(schema, "array.no_such_key") is NO_DEFAULT
    assert key_default(schema, "workload.arrival.rate_per_s") is NO_DEFAULT
