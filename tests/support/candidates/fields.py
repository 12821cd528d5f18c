"""Build move messages from field values, and mutate legal moves one field at a time: the
shared half of every game's candidate generator (tests/support/candidates/)."""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, TypeVar

from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message

from tablelog.replay.core import FULL, Game

MoveT = TypeVar("MoveT", bound=Message)
ViewT = TypeVar("ViewT", bound=Message)

FieldValues = Mapping[str, Sequence[Any]]
"""For each field of one action message, the values a candidate may give it: a scalar, a
list (a repeated field), a message, or None (the field left unset)."""

Ranges = Mapping[str, FieldValues]
"""The field values of every action (the move's oneof member) of a game's move message."""

OUT_OF_RANGE = 1_000_000
"""An integer beyond anything a component allows (bounds must refuse it, not index with it)."""


def _assign(action: Message, name: str, value: Any) -> None:
    field = action.DESCRIPTOR.fields_by_name[name]
    if value is None:
        action.ClearField(name)
    elif field.is_repeated:
        target: Any = getattr(action, name)
        del target[:]
        if field.type == FieldDescriptor.TYPE_MESSAGE:
            for item in value:
                target.add().CopyFrom(item)
        else:
            target.extend(value)
    elif field.type == FieldDescriptor.TYPE_MESSAGE:
        getattr(action, name).CopyFrom(value)
    else:
        setattr(action, name, value)


def make(move_type: type[MoveT], action: str, values: Mapping[str, Any]) -> MoveT:
    """A move whose oneof member `action` carries `values` (other fields unset)."""
    move = move_type()
    body = getattr(move, action)
    body.SetInParent()
    for name, value in values.items():
        _assign(body, name, value)
    return move


def every_combination(move_type: type[MoveT], action: str, fields: FieldValues) -> Iterator[MoveT]:
    """One move per combination of the values of `fields` (the cross product)."""
    names = list(fields)
    for combination in itertools.product(*(fields[name] for name in names)):
        yield make(move_type, action, dict(zip(names, combination, strict=True)))


def mutations(move: MoveT, ranges: Ranges) -> Iterator[MoveT]:
    """`move` with one field of its action changed to each value of the action's range, and
    each repeated field with an item dropped, an item repeated, and its order reversed."""
    action = move.WhichOneof("action")
    if action is None or action not in ranges:
        return
    for name, values in ranges[action].items():
        for value in values:
            changed = type(move)()
            changed.CopyFrom(move)
            _assign(getattr(changed, action), name, value)
            yield changed
    body = getattr(move, action)
    for field in body.DESCRIPTOR.fields:
        if not field.is_repeated:
            continue
        items = list(getattr(body, field.name))
        variants = [items[:i] + items[i + 1 :] for i in range(len(items))]
        variants += [items + items[:1], items[::-1]] if items else []
        for variant in variants:
            changed = type(move)()
            changed.CopyFrom(move)
            _assign(getattr(changed, action), field.name, variant)
            yield changed


def around(values: Sequence[int]) -> list[int]:
    """The integers a field may plausibly be given: `values`, one past each end, 0, and one
    far out of range."""
    low, high = min(values), max(values)
    return sorted({0, *values, max(low - 1, 0), high + 1, OUT_OF_RANGE})


def exact(move: Message) -> bytes:
    """A move's meaning when it has no alternative spelling: its serialized form."""
    return move.SerializeToString(deterministic=True)


def full_view(game: Game[Any, Any], state: Any, view_type: type[ViewT]) -> ViewT:
    """Everything on the table, hidden information included: where a generator reads the
    cells, tiles, seats and purses its ranges come from."""
    view = game.view(state, FULL)
    assert isinstance(view, view_type)
    return view
