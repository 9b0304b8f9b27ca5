"""The policy catalogue (raidlab.catalogue, ``raidlab list``, docs/catalogue.md) against the
core's registries: the listing is read from them, and the docs must name every entry."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from raidlab import _core
from raidlab.catalogue import catalogue, render_catalogue
from raidlab.cli import main

DOCS = Path(__file__).resolve().parent.parent / "docs" / "catalogue.md"


def test_the_catalogue_has_the_families_the_issue_names():
    names = [family.name for family in catalogue()]
    for expected in ("presets", "layouts", "schedulers", "trace_formats", "rebuild_executors", "rebuild_orders",
                     "rebuild_disciplines"):
        assert expected in names


def test_every_families_key_is_a_configuration_key():
    # The key a family is chosen with must exist in the configuration's JSON Schema.
    schema = json.loads(_core.config_schema())
    definitions = schema.get("$defs") or schema.get("definitions") or {}

    def resolve(node):
        while "$ref" in node:
            node = definitions[node["$ref"].rsplit("/", 1)[1]]
        for option in node.get("anyOf", []) + node.get("oneOf", []) + node.get("allOf", []):
            if "properties" in resolve(option):
                return resolve(option)
        return node

    for family in catalogue():
        if family.config_key is None:
            continue
        node = schema
        for part in family.config_key.split("."):
            properties = resolve(node).get("properties", {})
            assert part in properties, f"{family.name}: {family.config_key} is not a configuration key"
            node = properties[part]


def test_raidlab_list_prints_the_registries(capsys):
    assert main(["list", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert listed == [dict(family) for family in _core.policy_catalogue()]
    assert main(["list", "rebuild_disciplines"]) == 0
    printed = capsys.readouterr().out
    for family in catalogue():
        if family.name == "rebuild_disciplines":
            assert all(name in printed for name in family.names)


def test_an_unknown_family_exits_2_listing_the_known_ones(capsys):
    assert main(["list", "caches-that-do-not-exist"]) == 2
    err = capsys.readouterr().err
    assert "unknown family 'caches-that-do-not-exist'" in err and "layouts" in err


def test_the_docs_list_every_registry_entry():
    """docs/catalogue.md is generated (`make docs`) and current: a registry entry added
    without regenerating it fails here, naming the entry."""
    text = DOCS.read_text(encoding="utf-8")
    for family in catalogue():
        assert f"## {family.title}" in text, f"docs/catalogue.md lacks the family {family.name}: run make docs"
        for name in family.names:
            assert f"| `{name}` |" in text, f"docs/catalogue.md lacks {family.name} entry {name!r}: run make docs"
    assert text == render_catalogue(), "docs/catalogue.md is not current: run make docs"


def test_each_key_that_chooses_from_a_family_names_every_entry_in_the_docs():
    """docs/config.md's row for a family's key (`rebuild.discipline`) names every entry of
    the family, so that a policy registered later cannot go missing from the key's docs."""
    text = (DOCS.parent / "config.md").read_text(encoding="utf-8")
    for family in catalogue():
        if family.config_key is None:
            continue
        row = next((line for line in text.splitlines() if line.startswith(f"| `{family.config_key}` |")), None)
        assert row is not None, f"docs/config.md has no row for {family.config_key}"
        description = row.rsplit("|", 2)[-2]
        missing = [name for name in family.names if f"`{name}`" not in description]
        assert not missing, f"docs/config.md's {family.config_key} does not name {missing}: update its doc comment, then make docs"
