"""mockmcp._wire.namedtuple.NamedTuple against typing.NamedTuple: the same class bodies give the same classes.

`define` holds the class bodies; it runs once with each NamedTuple, and every test compares what the
two made. Then each NamedTuple class of mockmcp's own launch path is rebuilt from its source with
typing's, and the two compared the same way.
"""

from __future__ import annotations

import copy
import inspect
import pickle
import sys
import textwrap
import typing
from types import SimpleNamespace
from typing import Any

import pytest

from mockmcp._wire import jsonrpc, namedtuple
from mockmcp.cassette import model
from mockmcp.cli import options
from mockmcp.engine import matching, redact, replay, report, selection


def define(NamedTuple: Any) -> SimpleNamespace:
    class Point(NamedTuple):
        """A point, with a label."""

        x: int
        y: int = 0
        label: str | None = None

        @property
        def norm(self) -> int:
            return abs(self.x) + abs(self.y)

        def moved(self, dx: int) -> Point:
            return self._replace(x=self.x + dx)

        @classmethod
        def origin(cls) -> Point:
            return cls(0)

        @staticmethod
        def kind() -> str:
            return "point"

        def __bool__(self) -> bool:
            return bool(self.x or self.y)

        def __str__(self) -> str:
            return f"({self.x}, {self.y})"

    class Bare(NamedTuple):
        kind: str
        message: Any

    class Empty(NamedTuple):
        pass

    class Labelled(Point):
        """A plain subclass: no new fields, its own methods."""

        def shout(self) -> str:
            return str(self.label).upper()

    return SimpleNamespace(Point=Point, Bare=Bare, Empty=Empty, Labelled=Labelled)


OURS = define(namedtuple.NamedTuple)
TYPINGS = define(typing.NamedTuple)
NAMES = ["Point", "Bare", "Empty", "Labelled"]


def both(name: str) -> tuple[Any, Any]:
    return getattr(OURS, name), getattr(TYPINGS, name)


def same_face(ours: Any, theirs: Any) -> None:
    """What a class offers: fields, defaults, docstring, names, attributes, and how it is called."""
    assert ours._fields == theirs._fields
    assert ours._field_defaults == theirs._field_defaults
    assert ours.__match_args__ == theirs.__match_args__
    assert (ours.__doc__, ours.__name__, ours.__qualname__) == (theirs.__doc__, theirs.__name__, theirs.__qualname__)
    assert ours.__module__ == theirs.__module__
    assert [cls.__name__ for cls in ours.__mro__] == [cls.__name__ for cls in theirs.__mro__]
    assert type(ours) is type(theirs) is type
    # typing's also keeps __orig_bases__ (NamedTuple, a function), which nothing in mockmcp reads.
    assert sorted(vars(ours)) == sorted(set(vars(theirs)) - {"__orig_bases__"})
    for key, value in vars(ours).items():
        assert type(value) is type(vars(theirs)[key]), key
    assert list(ours.__annotations__) == list(theirs.__annotations__)
    assert parameters(ours) == parameters(theirs)


def parameters(cls: Any) -> list[tuple[str, Any, Any]]:
    """The constructor's parameters; not their annotations (typing's are ForwardRefs of the same strings)."""
    return [(p.name, p.kind, p.default) for p in inspect.signature(cls).parameters.values()]


@pytest.mark.parametrize("name", NAMES)
def test_the_class_has_the_same_face(name: str) -> None:
    ours, theirs = both(name)
    same_face(ours, theirs)
    assert ours.__module__ == __name__


@pytest.mark.parametrize("name", ["Point", "Bare"])
def test_annotations_stay_strings_and_resolve_alike(name: str) -> None:
    ours, theirs = both(name)
    assert all(isinstance(text, str) for text in ours.__annotations__.values())
    assert typing.get_type_hints(ours, globals()) == typing.get_type_hints(theirs, globals())


@pytest.mark.parametrize(
    ("args", "kwargs"),
    [((1,), {}), ((1, 2), {}), ((1, 2, "a"), {}), ((), {"x": 1, "label": "a"}), ((1,), {"y": 5})],
)
def test_construction_by_position_keyword_and_default(args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    ours, theirs = both("Point")
    a, b = ours(*args, **kwargs), theirs(*args, **kwargs)
    assert tuple(a) == tuple(b)
    assert repr(a) == repr(b)
    assert a == b and hash(a) == hash(b) == hash(tuple(b))  # a tuple: equal and hashed by value, whatever its class
    assert isinstance(a, tuple)


@pytest.mark.parametrize("call", [lambda cls: cls(), lambda cls: cls(1, 2, 3, 4), lambda cls: cls(1, z=2)])
def test_wrong_arguments_raise_alike(call: Any) -> None:
    ours, theirs = both("Point")
    with pytest.raises(TypeError) as raised:
        call(ours)
    with pytest.raises(TypeError) as expected:
        call(theirs)
    assert str(raised.value) == str(expected.value)


def test_the_namedtuple_api() -> None:
    ours, theirs = both("Point")
    a, b = ours(1, 2), theirs(1, 2)
    assert a._replace(y=3) == b._replace(y=3) == (1, 3, None)
    assert type(a._replace(y=3)) is ours
    assert a._asdict() == b._asdict() == {"x": 1, "y": 2, "label": None}
    assert ours._make([4, 5, "c"]) == theirs._make([4, 5, "c"])
    assert a[0] == a.x == 1 and a[-1] is None
    assert not hasattr(a, "__dict__")
    assert ours.__slots__ == ()
    with pytest.raises(AttributeError):
        a.x = 5


def test_the_body_s_methods_properties_and_dunders() -> None:
    ours, theirs = both("Point")
    for cls in (ours, theirs):
        point = cls(3, -4, "p")
        assert point.norm == 7
        assert point.moved(1) == (4, -4, "p") and type(point.moved(1)) is cls
        assert cls.origin() == (0, 0, None) and type(cls.origin()) is cls
        assert cls.kind() == point.kind() == "point"
        assert bool(point) and not cls.origin()
        assert str(point) == "(3, -4)"


def test_a_subclass_keeps_its_class_through_replace_and_make() -> None:
    ours, theirs = both("Labelled")
    for cls in (ours, theirs):
        point = cls(1, label="x")
        assert type(point._replace(x=2)) is cls
        assert type(cls._make([1, 2, "y"])) is cls
        assert type(point.moved(1)) is cls and type(cls.origin()) is cls
        assert point.shout() == "X"
        assert repr(point) == "Labelled(x=1, y=0, label='x')"


def test_an_empty_body_and_a_body_without_defaults() -> None:
    assert OURS.Empty() == TYPINGS.Empty() == ()
    assert repr(OURS.Empty()) == repr(TYPINGS.Empty()) == "Empty()"
    with pytest.raises(TypeError):
        OURS.Bare("request")


class Pickled(namedtuple.NamedTuple):
    """Module level, so pickle finds it by name."""

    kind: str
    sizes: tuple[int, ...] = ()


def test_pickle_and_copy() -> None:
    """Nothing in mockmcp pickles these (the cassette cache is JSON); they pickle as typing's do anyway."""
    value = Pickled("a", (1, 2))
    assert pickle.loads(pickle.dumps(value)) == value
    assert type(pickle.loads(pickle.dumps(value))) is Pickled
    assert copy.copy(value) == value
    assert copy.deepcopy(value) == value and type(copy.deepcopy(value)) is Pickled


def test_super_in_a_method() -> None:
    """A method may use super() (typing's NamedTuple allows it from Python 3.12; this one on every version)."""

    class Shown(namedtuple.NamedTuple):
        text: str

        def __len__(self) -> int:
            return super().__len__() + 1

    assert len(Shown("a")) == 2


BAD_BODIES = {
    "a field without a default after one with": "class Bad(NamedTuple):\n    a: int = 0\n    b: int\n",
    "redefining _replace": "class Bad(NamedTuple):\n    a: int\n    def _replace(self): pass\n",
    "a field named with an underscore": "class Bad(NamedTuple):\n    _a: int\n",
    "a second base": "class Bad(NamedTuple, object):\n    a: int\n",
}


@pytest.mark.parametrize(("case", "body"), BAD_BODIES.items(), ids=BAD_BODIES.keys())
def test_a_bad_body_raises_the_same_error(case: str, body: str) -> None:
    def run(base: Any) -> BaseException:
        with pytest.raises((TypeError, ValueError, AttributeError)) as raised:
            exec(_compile(body), {"NamedTuple": base, "__name__": __name__})
        return raised.value

    ours, theirs = run(namedtuple.NamedTuple), run(typing.NamedTuple)
    assert type(ours) is type(theirs)
    if case != "a second base":  # typing's message also names Generic, which this NamedTuple does not offer
        assert str(ours) == str(theirs)


# --- mockmcp's own classes ---------------------------------------------------------------------

LAUNCH_PATH = [
    model.ServerItem,
    model.Interaction,
    model.Cassette,
    replay.Send,
    replay.Wake,
    replay.Note,
    replay.Exit,
    jsonrpc.Classified,
    matching.Matcher,
    redact.Redactor,
    report.Mismatch,
    selection.Pick,
    options.Param,
]


def _compile(source: str) -> Any:
    return compile("from __future__ import annotations\n" + source, "<body>", "exec", dont_inherit=True)


def rebuilt_with_typing(cls: type) -> Any:
    """The class built again from its own source, in its own module's namespace, by typing.NamedTuple."""
    namespace = {**vars(sys.modules[cls.__module__]), "NamedTuple": typing.NamedTuple}
    exec(_compile(textwrap.dedent(inspect.getsource(cls))), namespace)
    return namespace[cls.__name__]


@pytest.mark.parametrize("cls", LAUNCH_PATH, ids=lambda cls: f"{cls.__module__}.{cls.__name__}")
def test_mockmcp_s_classes_are_what_typing_would_build(cls: Any) -> None:
    assert cls.__bases__ == (tuple,)
    assert "typing" not in repr(cls.__annotations__)  # built by mockmcp's NamedTuple, not typing's
    same_face(cls, rebuilt_with_typing(cls))
