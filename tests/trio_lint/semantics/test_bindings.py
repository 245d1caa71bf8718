"""The semantic model's bindings are typed (pyflakes-style): each way a name gets its value is a
class holding only its own fields, and the queries that read them answer as before."""

from __future__ import annotations

import ast

import pytest

from trio_lint.semantics.binder import build_model
from trio_lint.semantics.names import TOP_LEVEL_TYPES
from trio_lint.semantics.scopes import (
    UNKNOWN,
    AnnotationBinding,
    AssignmentBinding,
    FunctionBinding,
    ImportBinding,
    LoopBinding,
    NameBinding,
    ParameterBinding,
    TypedBinding,
    UnknownBinding,
)

SOURCE = """\
import pytrio as trio
from pytrio import Datum as D
tc: trio.TrainingClient
cfg: dict
sc: trio.SamplingClient = make()
x = [1]
x.append(2)
for item in x:
    pass
a, *rest = x
def helper(p, q: trio.SamplingClient, r: int):
    return p
"""


def _model():
    return build_model(ast.parse(SOURCE))


def _binding(name: str, scope=None) -> NameBinding:
    return (scope or _model().module_scope).current[name]


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("trio", ImportBinding),
        ("D", ImportBinding),
        ("tc", TypedBinding),
        ("cfg", AnnotationBinding),
        ("sc", AssignmentBinding),
        ("x", AssignmentBinding),
        ("item", LoopBinding),
        ("helper", FunctionBinding),
    ],
)
def test_each_way_of_binding_a_name_is_its_own_class(name: str, kind: type) -> None:
    assert type(_binding(name)) is kind


def test_a_binding_holds_only_its_kind_s_fields() -> None:
    trio, datum = _binding("trio"), _binding("D")
    assert (trio.qualname, trio.origin) == ("pytrio", "pytrio")
    assert datum.qualname == "pytrio.Datum"
    assert trio.expr is None and trio.function is None  # answered by the class
    sc = _binding("sc")
    assert isinstance(sc.expr, ast.Call)
    assert sc.fixed is not None and sc.fixed.kind == "SamplingClient"
    assert _binding("tc").fixed.kind == "TrainingClient" and _binding("tc").expr is None
    assert isinstance(_binding("cfg").annotation, ast.Name) and _binding("cfg").fixed is None
    # A mutation is recorded on the bound object, whatever its kind.
    assert [how for how, _key, _value in _binding("x").parts] == ["item"]
    assert not hasattr(AssignmentBinding(ast.Constant(1)), "__dict__")  # slots: no bag


def test_unpacked_and_starred_targets_are_unknown() -> None:
    assert _binding("a") is UNKNOWN and type(UNKNOWN) is UnknownBinding
    assert _binding("rest") is UNKNOWN


def test_parameters_say_how_they_are_typed() -> None:
    # The function's own scope is gone after the pass: read the parameter through its read.
    tree = ast.parse(SOURCE)
    model = build_model(tree)
    helper = next(node for node in tree.body if isinstance(node, ast.FunctionDef))
    read = helper.body[0].value  # `return p`
    binding = model.references.get(read)
    assert isinstance(binding, ParameterBinding)
    assert binding.param == ("helper", 0, "p") and binding.fixed is None


def test_bindings_made_alike_are_equal_and_unhashable() -> None:
    value = ast.Constant(1)
    assert AssignmentBinding(value) == AssignmentBinding(value)
    assert AssignmentBinding(value) != AssignmentBinding(ast.Constant(1))
    assert AssignmentBinding(value) != LoopBinding(value)
    with pytest.raises(TypeError):
        hash(AssignmentBinding(value))


def test_the_top_level_types_are_those_the_installed_sdk_exports_twice() -> None:
    """`pytrio.types.X` canonicalises to `pytrio.X` for exactly the classes the installed SDK
    exports from both modules as one object."""
    import pytrio
    import pytrio.types

    twice = {
        name
        for name, value in vars(pytrio.types).items()
        if not name.startswith("_")
        and isinstance(value, type)
        and getattr(pytrio, name, None) is value
    }
    assert twice == TOP_LEVEL_TYPES
