"""raidlab.config: loading a configuration from a path, TOML text or a dict; overrides."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

import raidlab
from raidlab.config import (
    apply_overrides,
    load_config,
    parse_override,
    parse_toml,
    to_toml,
)
from raidlab.exceptions import ConfigError, RaidlabIOError

from conftest import SMALL_CONFIG


def test_path_loads_the_file_and_defaults_base_dir_to_its_folder(small_config_path: Path):
    for given in (small_config_path, str(small_config_path)):
        loaded = load_config(given)
        assert loaded.text == SMALL_CONFIG
        assert loaded.base_dir == small_config_path.parent.resolve()
        assert loaded.name == "small"


def test_toml_text_is_passed_through_with_cwd_as_base_dir(small_config_text: str, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    loaded = load_config(small_config_text)
    assert loaded.text == small_config_text
    assert loaded.base_dir == Path.cwd()
    assert loaded.name is None


def test_one_line_toml_is_text_not_a_path():
    assert load_config("seed = 3").text == "seed = 3"


def test_dict_becomes_equivalent_toml(small_config_dict, small_config_text):
    loaded = load_config(small_config_dict)
    assert parse_toml(loaded.text) == parse_toml(small_config_text)


def test_explicit_base_dir_wins(small_config_path: Path, tmp_path: Path):
    other = tmp_path / "elsewhere"
    other.mkdir()
    assert load_config(small_config_path, base_dir=other).base_dir == other.resolve()


def test_missing_file_is_a_raidlab_io_error(tmp_path: Path):
    with pytest.raises(RaidlabIOError) as caught:
        load_config(tmp_path / "absent.toml")
    assert caught.value.filename.endswith("absent.toml")


def test_other_types_are_rejected():
    with pytest.raises(TypeError):
        load_config(42)  # type: ignore[arg-type]


def test_toml_syntax_error_is_a_config_error():
    with pytest.raises(ConfigError, match="invalid TOML"):
        parse_toml("[array\nlayout = ")


def test_to_toml_drops_none_and_converts_paths_and_tuples(tmp_path: Path):
    text = to_toml({"a": None, "b": {"path": tmp_path, "pair": (1, 2)}})
    assert parse_toml(text) == {"b": {"path": str(tmp_path), "pair": [1, 2]}}


def test_to_toml_converts_numpy_scalars():
    np = pytest.importorskip("numpy")
    assert parse_toml(to_toml({"n": np.int64(3), "x": np.float64(0.5)})) == {"n": 3, "x": 0.5}


# -- overrides -----------------------------------------------------------------------------


@pytest.mark.parametrize("override, path, value", [
    ("array.drives=6", ["array", "drives"], 6),
    ("workload.arrival.rate_per_s = 50.5", ["workload", "arrival", "rate_per_s"], 50.5),
    ("array.layout=raid6", ["array", "layout"], "raid6"),
    ('array.layout="raid 6"', ["array", "layout"], "raid 6"),
    ("drive.zero_latency=true", ["drive", "zero_latency"], True),
    ("failures[0].at_s=2.5", ["failures", 0, "at_s"], 2.5),
    ("failures.0.at_s=2.5", ["failures", 0, "at_s"], 2.5),
    ("workload.sizes=[4, 8]", ["workload", "sizes"], [4, 8]),
])
def test_parse_override(override, path, value):
    assert parse_override(override) == (path, value)


def test_overrides_replace_add_and_index(small_config_text):
    text = apply_overrides(small_config_text, [
        "array.drives=6",
        "failures[0].at_s=2.5",
        "rebuild.order=sequential",
    ])
    config = parse_toml(text)
    assert config["array"]["drives"] == 6
    assert config["failures"] == [{"drive": 2, "at_s": 2.5}]
    assert config["rebuild"] == {"order": "sequential"}
    assert config["workload"] == parse_toml(small_config_text)["workload"]


def test_load_config_applies_overrides(small_config_path):
    loaded = load_config(small_config_path, overrides=["seed=9"])
    assert parse_toml(loaded.text)["seed"] == 9


@pytest.mark.parametrize("override, message", [
    ("array.drives", "not of the form key=value"),
    ("=3", "not of the form key=value"),
    ("array..drives=3", "malformed key path"),
    ("failures[3].at_s=1", "out of range"),
    ("array[0]=1", "not an array"),
    ("seed.x=1", "is a value, not a table"),
])
def test_bad_overrides_are_config_errors(small_config_text, override, message):
    with pytest.raises(ConfigError, match=message) as caught:
        apply_overrides(small_config_text, [override])
    key = override.partition("=")[0].strip()
    if key:
        assert caught.value.key == key


# -- the core's view (needs the engine) ----------------------------------------------------


@pytest.mark.engine
def test_core_resolves_the_small_config(small_config_text):
    resolved, config_hash = raidlab.resolve_config(small_config_text)
    assert len(config_hash) >= 8
    resolved_config = parse_toml(resolved)
    assert resolved_config["array"]["drives"] == 5
    # Resolving is stable: the resolved text resolves to itself and the same hash.
    assert raidlab.resolve_config(resolved) == (resolved, config_hash)


@pytest.mark.engine
def test_dict_path_and_text_give_the_same_hash(small_config_text, small_config_dict, small_config_path):
    hashes = {raidlab.resolve_config(c)[1] for c in (small_config_text, small_config_dict, small_config_path)}
    assert len(hashes) == 1


@pytest.mark.engine
@pytest.mark.parametrize("array, key, says", [
    ({"drives": "x"}, "array.drives", 'invalid type: string "x", expected a whole number'),
    ({"drives": 4, "bogus": 1}, "array", "unknown field `bogus`"),
])
def test_a_mapping_error_names_the_key_without_quoting_raidlabs_toml(array, key, says):
    # The mapping's TOML text is written by raidlab; its line and excerpt were quoted before.
    with pytest.raises(ConfigError) as caught:
        raidlab.resolve_config({"array": array, "workload": {"requests": 3}})
    assert caught.value.key.startswith(key)
    assert caught.value.message.startswith(says), caught.value.message
    assert "TOML parse error" not in str(caught.value) and "|" not in str(caught.value)


@pytest.mark.engine
@pytest.mark.parametrize("override, key", [
    ('array.drives="five"', "array.drives"),
    ("array.bogus=1", "array"),
])
def test_core_rejects_bad_values_naming_the_key(small_config_text, override, key):
    with pytest.raises(ConfigError) as caught:
        raidlab.resolve_config(small_config_text, overrides=[override])
    assert caught.value.key.startswith(key)


@pytest.mark.skipif(sys.version_info >= (3, 11), reason="tomli is the TOML parser before 3.11 only")
def test_tomli_is_used_before_python_3_11():  # pragma: no cover
    import raidlab.config as config

    assert config.tomllib.__name__ == "tomli"


@pytest.mark.parametrize("config", ["configs/missing", "/tmp"])
def test_a_one_line_path_that_is_not_a_file_is_an_io_error_naming_it(config):
    # It was taken as TOML text: "config: TOML parse error at line 1 ... expected `=`".
    with pytest.raises(RaidlabIOError) as caught:
        load_config(config)
    assert caught.value.filename == config


def test_overrides_given_as_one_string_are_a_type_error(small_config_text):
    with pytest.raises(TypeError, match="overrides"):
        load_config(small_config_text, overrides="seed=9")


@pytest.mark.parametrize("override", [None, 5, ("array.drives", 6)])
def test_an_override_that_is_not_text_is_a_type_error_naming_it(small_config_text, override):
    # As a single string given for the list is (not an AttributeError from deep inside).
    with pytest.raises(TypeError, match="an override is a 'key=value' string, not "):
        apply_overrides(small_config_text, ["seed=2", override])
    with pytest.raises(TypeError, match="an override is a 'key=value' string, not "):
        raidlab.run(small_config_text, overrides=["seed=2", override])
