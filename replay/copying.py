"""Fast construction and copies of frozen, slotted dataclasses: a game's state, the fold's
positions.

`dataclasses.replace` validates its arguments and calls the frozen `__init__`, which stores
each field with `object.__setattr__`; folding and importing copy the state a few times per
move, and that was up to 40% of a game's `apply`. `replacer` and `maker` build, once per
class, a function that stores each slot through its descriptor, about twice as fast;
`maker` goes further where it can: a plain twin class with the same slots stores them by
the interpreter's fast slot store and the value then becomes a `cls`, twice as fast again
(a new state per move in Splendor's `apply`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import fields, is_dataclass
from typing import Any, TypeVar

T = TypeVar("T")


def replacer(cls: type[T]) -> Callable[..., T]:
    """`replace(state, **changes)` for the frozen, slotted dataclass `cls`: a copy of
    `state` with `changes`, every other field shared. A name that is not a field of `cls`
    is refused (TypeError), as `dataclasses.replace` refuses it."""
    if not is_dataclass(cls) or "__slots__" not in vars(cls):
        raise TypeError(f"{cls.__name__} is not a slotted dataclass")
    names = tuple(f.name for f in fields(cls))
    # Generated once: every slot copied by its descriptor, no loop, then the few changed.
    # A slot's descriptor `__set__` bypasses the frozen `__setattr__`.
    body = "".join(f"    _set_{name}(new, state.{name})\n" for name in names)
    source = (
        "def replace(state, /, **changes):\n"
        "    new = _new(cls)\n"
        f"{body}"
        "    try:\n"
        "        for name, value in changes.items():\n"
        "            _setters[name](new, value)\n"
        "    except KeyError:\n"
        "        raise TypeError(f'{cls.__name__} has no field {name!r}') from None\n"
        "    return new\n"
    )
    scope: dict[str, Any] = {"_new": object.__new__, "cls": cls}
    setters = {name: getattr(cls, name).__set__ for name in names}
    scope["_setters"] = setters
    for name, setter in setters.items():
        scope[f"_set_{name}"] = setter
    exec(source, scope)  # trusted source, built from the field names above
    replace: Callable[..., T] = scope["replace"]
    replace.__qualname__ = f"replacer({cls.__name__})"
    return replace


def maker(cls: type[T]) -> Callable[..., T]:
    """`cls(*values)` for the frozen, slotted dataclass `cls`, every field given in order:
    the hot paths that build a new immutable value per move (the fold's positions, a game's
    state) store each slot directly rather than through the frozen `__init__`'s
    `object.__setattr__`."""
    if not is_dataclass(cls) or "__slots__" not in vars(cls):
        raise TypeError(f"{cls.__name__} is not a slotted dataclass")
    names = tuple(f.name for f in fields(cls))
    twin = _unfrozen_twin(cls, names)
    if twin is not None:
        # The twin's plain `__init__` stores each slot by the interpreter's own fast slot
        # store, then the value becomes a `cls`: half the time of a descriptor call per slot.
        arguments = ", ".join(names)
        source = (
            f"def make({arguments}):\n"
            f"    new = _twin({arguments})\n"
            "    new.__class__ = cls\n"
            "    return new\n"
        )
        scope: dict[str, Any] = {"_twin": twin, "cls": cls}
        exec(source, scope)  # trusted source, built from the field names above
        made: Callable[..., T] = scope["make"]
        made.__qualname__ = f"maker({cls.__name__})"
        return made
    body = "".join(f"    _set_{name}(new, {name})\n" for name in names)
    source = f"def make({', '.join(names)}):\n    new = _new(cls)\n{body}    return new\n"
    scope = {"_new": object.__new__, "cls": cls}
    for name in names:
        scope[f"_set_{name}"] = getattr(cls, name).__set__
    exec(source, scope)  # trusted source, built from the field names above
    make: Callable[..., T] = scope["make"]
    make.__qualname__ = f"maker({cls.__name__})"
    return make


def _unfrozen_twin(cls: type, names: tuple[str, ...]) -> type | None:
    """A plain class with exactly the slots of `cls` (and no frozen `__setattr__`), whose
    instances Python lets become instances of `cls` by `__class__` assignment (the same
    memory layout); None when `cls` has a layout a twin cannot match (a slotted base class,
    a weak reference slot): `maker` then stores through the descriptors."""
    if cls.__bases__ != (object,) or tuple(vars(cls)["__slots__"]) != names:
        return None
    stores = "".join(f"    self.{name} = {name}\n" for name in names) or "    pass\n"
    source = f"def __init__(self, {', '.join(names)}):\n{stores}"
    scope: dict[str, Any] = {}
    exec(source, scope)  # trusted source, built from the field names of `cls`
    twin = type(f"{cls.__name__}Twin", (), {"__slots__": names, "__init__": scope["__init__"]})
    probe: object = object.__new__(twin)
    try:
        probe.__class__ = cls  # refused (TypeError) unless the layouts are the same
    except TypeError:
        return None
    return twin
