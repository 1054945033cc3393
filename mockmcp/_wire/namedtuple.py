"""`NamedTuple` for the start-up path: typing's class syntax and class, built by `collections.namedtuple` alone.

Importing `typing` and making each annotation a `ForwardRef` cost 3-4 ms of the ~15 ms mockmcp adds to a bare
Python's start; here annotations stay strings, never evaluated, and mypy sees typing's own. Unlike typing's: no
`Generic` base, no functional form, and the module must use `from __future__ import annotations`
(tests/test_namedtuple.py holds the rest to typing's).
"""

from __future__ import annotations

from collections import namedtuple

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any
    from typing import NamedTuple as NamedTuple

__all__ = ["NamedTuple"]

# As typing's: what the body may not define (namedtuple's own machinery), and what it does not copy.
_PROHIBITED = frozenset(
    {"__new__", "__init__", "__slots__", "__getnewargs__", "_fields", "_field_defaults", "_make", "_replace", "_asdict"}
) | {"_source"}
_SPECIAL = frozenset({"__module__", "__name__", "__annotations__", "__classcell__"})


class _NamedTupleMeta(type):
    """Turns a `class X(NamedTuple)` body into a namedtuple class, as typing's NamedTupleMeta does."""

    def __new__(mcls, typename: str, bases: tuple[type, ...], ns: dict[str, Any]) -> Any:
        if bases != (NamedTuple,):
            raise TypeError(f"{typename}: a NamedTuple class can only inherit from NamedTuple")
        if "__annotations__" not in ns and "__annotate__" in ns:
            raise TypeError(f"{typename}: this NamedTuple needs `from __future__ import annotations` in its module")
        annotations: dict[str, str] = ns.get("__annotations__", {})
        defaults = _defaults(annotations, ns)
        # mypy infers a namedtuple's type from literal arguments; these are a class body's, known only at run time.
        cls = namedtuple(typename, annotations, defaults=defaults, module=ns["__module__"])  # type: ignore[misc]
        cls.__annotations__ = cls.__new__.__annotations__ = dict(annotations)
        for key, value in ns.items():
            if key in _PROHIBITED:
                raise AttributeError(f"Cannot overwrite NamedTuple attribute {key}")
            if key not in _SPECIAL and key not in annotations:
                setattr(cls, key, value)
        if "__classcell__" in ns:  # a method uses super() or __class__: point it at the class built here
            ns["__classcell__"].cell_contents = cls
        return cls


def _defaults(annotations: dict[str, str], ns: dict[str, Any]) -> list[Any]:
    """The defaults of the last fields; raises TypeError (typing's message) when a field without one follows them."""
    named: list[str] = []
    for name in annotations:
        if name in ns:
            named.append(name)
        elif named:
            plural = "s" if len(named) > 1 else ""
            fields = ", ".join(named)
            raise TypeError(f"Non-default namedtuple field {name} cannot follow default field{plural} {fields}")
    return [ns[name] for name in named]


if not TYPE_CHECKING:
    NamedTuple = type.__new__(_NamedTupleMeta, "NamedTuple", (), {"__module__": __name__, "__doc__": __doc__})
