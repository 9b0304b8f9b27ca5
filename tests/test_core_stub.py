"""python/raidlab/_core.pyi matches the compiled raidlab._core."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import pytest

from raidlab import _core

STUB = Path(_core.__file__).with_name("_core.pyi") if Path(_core.__file__).with_name("_core.pyi").exists() \
    else Path(__file__).resolve().parent.parent / "python" / "raidlab" / "_core.pyi"


def stub_tree() -> ast.Module:
    return ast.parse(STUB.read_text(), filename=str(STUB))


def stub_functions() -> dict:
    return {node.name: node for node in stub_tree().body if isinstance(node, ast.FunctionDef)}


def stub_typing_helpers() -> list:
    names = []
    for node in stub_tree().body:
        if isinstance(node, ast.ClassDef):
            names.append(node.name)
        elif isinstance(node, ast.Assign):
            names += [target.id for target in node.targets if isinstance(target, ast.Name)]
    return names


def binary_functions() -> dict:
    return {
        name: value for name, value in vars(_core).items()
        if not name.startswith("__") and callable(value)
    }


def test_every_stub_function_is_a_builtin_of_the_binary():
    functions = stub_functions()
    assert functions, "no functions found in the stub"
    for name in functions:
        assert hasattr(_core, name), f"{name} is in the stub but not in the binary"
        assert inspect.isbuiltin(getattr(_core, name)), f"{name} is not a function in the binary"


def test_every_binary_function_is_in_the_stub():
    missing = sorted(set(binary_functions()) - set(stub_functions()))
    assert not missing, f"in the binary but not in _core.pyi: {missing}"


@pytest.mark.parametrize("name", sorted(stub_functions()))
def test_parameters_match(name):
    stub = stub_functions()[name]
    expected = [arg.arg for arg in stub.args.args]
    defaults_from = len(expected) - len(stub.args.defaults)
    signature = inspect.signature(getattr(_core, name))
    assert list(signature.parameters) == expected
    for index, parameter in enumerate(signature.parameters.values()):
        has_default = parameter.default is not inspect.Parameter.empty
        assert has_default == (index >= defaults_from), f"{name}({parameter.name}) default"


def test_typing_helpers_are_private():
    # Stub-only classes and aliases must not look like part of the binary's API.
    for name in stub_typing_helpers():
        assert name.startswith("_"), name
        assert not hasattr(_core, name) or name in stub_functions()


def test_version_is_the_package_version():
    import raidlab

    assert _core.version() == raidlab.__version__
    assert _core.version().count(".") == 2


def test_bench_cases_are_names():
    cases = _core.bench_cases()
    assert cases and all(isinstance(case, str) and case for case in cases)
