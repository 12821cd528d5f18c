"""A folded position written as bytes and read back exactly: what a checkpoint keeps so a
fold can go on from it rather than from the game's first event.

The events are the truth; a snapshot is a copy of what folding them gave, in one
game-independent form (JSON text; the same bytes for a position folded the same way, and
`same_position` compares what two snapshots hold), that anything storing it can hash and
seal. It holds plain values only: numbers, strings, bytes, tuples, lists, dicts, sets of
numbers or strings, enum members, protobuf messages and the frozen dataclasses and named
tuples of the rules (under `replay.`); anything else is refused (`Unencodable`), and
reading never runs code a snapshot names: a class is looked up among the rules' modules
already loaded, filled in field by field, never called.

Sharing is kept. Every container is numbered in the order it is first written, and written
once: a later use is a reference to its number. So a state that is both the position's and
its last move's `after` is one object again when read, as the fold made it, and a snapshot
grows with what the moves in effect changed, not with copies of whole states. What a state
keeps of the game as set up (its rules, its component data) is not written at all: it is
a reference into the table's `initial` state, which a reader sets up afresh from the
game's GameCreated (a pure function of it), so only the table is needed to read a snapshot.
"""

from __future__ import annotations

import base64
import dataclasses
import enum
import json
import sys
from typing import Any, Final

from google.protobuf.message import Message

from tablelog.replay import fold as folding

FORMAT: Final = 1
"""The snapshot format; a snapshot of another format is not read (`Undecodable`)."""

_MODULES: Final = ("tablelog.replay.", "tablelog.v1.")
"""Where a class a snapshot names may come from: the rules and the protocol's messages."""

_RULES: Final = "tablelog.replay."
_STORED_RULES: Final = "replay."
"""A snapshot names the rules' classes as `replay.<module>:<class>`, as it did before the
rules moved under the installed namespace: stored checkpoints keep their bytes and seals."""

_ATOMS: Final = (str, int, float, bool, type(None))


class Unencodable(Exception):
    """A position holding a value a snapshot cannot write (its game gets no checkpoints)."""


class Undecodable(Exception):
    """Bytes that are not a snapshot of this format for this table."""


CONTEXTS_KEPT: Final = 64
"""Tables whose numbered initial state is kept (`_numbered`): walking a table's initial
state costs about a sixth of a snapshot of a position of 100 moves, and a checkpoint's
writer and its readers see the same few tables again and again."""

_CONTEXTS: dict[int, tuple[folding.Table, list[Any], dict[int, int]]] = {}
"""id(table) -> (the table, held so that its id and its objects' stay theirs; its
`_context`; each of those objects' id -> its number). Oldest first, at most CONTEXTS_KEPT."""


def _numbered(table: folding.Table) -> tuple[list[Any], dict[int, int]]:
    """`_context(table)`, and each object's number by its id, walked once per table (a
    table and its initial state never change: the rules' values are frozen)."""
    kept = _CONTEXTS.get(id(table))
    if kept is not None and kept[0] is table:
        return kept[1], kept[2]
    found = _context(table)
    numbers = {id(value): index for index, value in enumerate(found)}
    if len(_CONTEXTS) >= CONTEXTS_KEPT:
        del _CONTEXTS[next(iter(_CONTEXTS))]
    _CONTEXTS[id(table)] = (table, found, numbers)
    return found, numbers


def _context(table: folding.Table) -> list[Any]:
    """The objects of the table's initial state, numbered in a fixed order (the table
    first): both writer and reader number them alike, as both set the state up alike."""
    found: list[Any] = [table]
    seen = {id(table)}
    stack: list[Any] = [table.initial]
    while stack:
        value = stack.pop()
        if isinstance(value, (*_ATOMS, bytes, enum.Enum)):
            continue
        if id(value) in seen:
            continue
        seen.add(id(value))
        found.append(value)
        children: list[Any]
        if isinstance(value, tuple | list):
            children = list(value)
        elif isinstance(value, dict):
            children = [item for pair in value.items() for item in pair]
        elif dataclasses.is_dataclass(value) and not isinstance(value, type):
            children = [getattr(value, f.name) for f in dataclasses.fields(value)]
        else:  # a set's order, or a message's fields, are not needed: they stay whole
            continue
        stack.extend(reversed(children))
    return found


def _class_name(cls: type) -> str:
    module = cls.__module__
    if module.startswith(_RULES):
        module = _STORED_RULES + module.removeprefix(_RULES)
    return f"{module}:{cls.__qualname__}"


def _field_names(cls: type) -> tuple[str, ...]:
    names: tuple[str, ...] | None = _FIELDS.get(cls)
    if names is None:
        names = _FIELDS[cls] = tuple(f.name for f in dataclasses.fields(cls))
    return names


_FIELDS: dict[type, tuple[str, ...]] = {}


_ENUM, _TUPLE, _LIST, _DICT, _SET, _NAMED, _MESSAGE, _DATACLASS, _OTHER = range(9)

_PLAIN: Final = frozenset({str, int, bool, type(None)})
"""The values written as they are (`_Writer.write`'s first case, tested inline where a
container's members are written: most of a position's values are small numbers)."""

_SHAPES: dict[type, int] = {}
"""A class -> how its values are written (a class's shape never changes; the classes are
the rules' and the messages', so the table stays small)."""


def _shape(kind: type) -> int:
    """How values of `kind` (not an atom, bytes or float) are written: the checks of
    `_Writer.write` in its order, made once per class."""
    shape = _SHAPES.get(kind)
    if shape is None:
        if issubclass(kind, enum.Enum):
            shape = _ENUM
        elif kind is tuple:
            shape = _TUPLE
        elif kind is list:
            shape = _LIST
        elif kind is dict:
            shape = _DICT
        elif kind is frozenset or kind is set:
            shape = _SET
        elif issubclass(kind, tuple) and isinstance(getattr(kind, "_fields", None), tuple):
            shape = _NAMED
        elif issubclass(kind, Message):
            shape = _MESSAGE
        elif dataclasses.is_dataclass(kind):
            shape = _DATACLASS
        else:
            shape = _OTHER
        _SHAPES[kind] = shape
    return shape


class _Writer:
    """Writes a position's values (one function on the checkpoint's path: a position of a
    hundred moves is thousands of values; each class's shape is looked up, not tested)."""

    def __init__(self, table: folding.Table) -> None:
        self.context = _numbered(table)[1]
        self.numbers: dict[int, int] = {}
        self.classes: dict[type, int] = {}

    def _class(self, cls: type) -> int:
        number = self.classes.get(cls)
        if number is None:
            if not cls.__module__.startswith(_MODULES):
                raise Unencodable(f"a value of {_class_name(cls)}, outside the rules")
            number = self.classes[cls] = len(self.classes)
        return number

    def write(self, value: Any) -> Any:
        kind = type(value)
        if kind is str or kind is int or kind is bool or value is None:
            return value
        if kind is float:
            if value != value or value in (float("inf"), float("-inf")):
                raise Unencodable("a float that is not a number")
            return value
        if kind is bytes:
            return ["b", base64.b64encode(value).decode("ascii")]
        shape = _SHAPES.get(kind)
        if shape is None:
            shape = _shape(kind)
        write = self.write
        if shape == _ENUM:
            return ["E", self._class(kind), write(value.value)]
        key = id(value)
        known = self.context.get(key)
        if known is not None:
            return ["c", known]
        numbers = self.numbers
        number = numbers.get(key)
        if number is not None:
            return ["r", number]
        written: list[Any]
        if kind is folding.Link:
            # Flattened (a stack of thousands of moves would be as deep a nesting); its
            # nodes are not shared within one position.
            written = ["L"]
            written += [v if type(v) in _PLAIN else write(v) for v in value]
            return written
        numbers[key] = len(numbers)
        if shape == _DATACLASS:
            written = ["D", self._class(kind)]
            written += [
                m if type(m := getattr(value, name)) in _PLAIN else write(m)
                for name in _field_names(kind)
            ]
        elif shape == _TUPLE:
            written = ["t"]
            written += [v if type(v) in _PLAIN else write(v) for v in value]
        elif shape == _LIST:
            written = ["l"]
            written += [v if type(v) in _PLAIN else write(v) for v in value]
        elif shape == _DICT:
            written = ["d"]
            written += [
                v if type(v) in _PLAIN else write(v) for pair in value.items() for v in pair
            ]
        elif shape == _SET:
            written = ["f" if kind is frozenset else "s", *self._sorted(value)]
        elif shape == _NAMED:
            written = ["N", self._class(kind)]
            written += [v if type(v) in _PLAIN else write(v) for v in value]
        elif shape == _MESSAGE:
            data = value.SerializeToString(deterministic=True)
            written = ["P", self._class(kind), base64.b64encode(data).decode("ascii")]
        else:
            raise Unencodable(f"a value of {_class_name(kind)}")
        return written

    def _sorted(self, members: frozenset[Any] | set[Any]) -> list[Any]:
        """A set's members in a fixed order (a set's own order changes with the process's
        string hashing): they must be numbers or strings, all of one type."""
        kinds = {type(m) for m in members}
        if len(kinds) > 1 or not kinds <= {int, str}:
            raise Unencodable("a set of other than numbers or strings")
        return sorted(members)


def encode(position: folding.Position) -> bytes:
    """`position` as a snapshot's bytes."""
    writer = _Writer(position.table)
    root = writer.write(position)
    classes = [_class_name(cls) for cls in writer.classes]
    try:
        text = json.dumps(
            [FORMAT, classes, root], ensure_ascii=True, separators=(",", ":"), allow_nan=False
        )
    except ValueError as exc:  # an int past what a JSON reader takes, say
        raise Unencodable(str(exc)) from exc
    return text.encode("ascii")


def _resolve(name: str) -> type:
    """The class a snapshot names, among the loaded modules of the rules and messages."""
    module_name, _, qualname = name.partition(":")
    if module_name.startswith(_STORED_RULES):
        module_name = _RULES + module_name.removeprefix(_STORED_RULES)
    module = sys.modules.get(module_name) if module_name.startswith(_MODULES) else None
    found: Any = module
    for part in qualname.split("."):
        found = getattr(found, part, None) if found is not None else None
    if not isinstance(found, type):
        raise Undecodable(f"a snapshot names {name[:80]!r}, which is not a class of the rules")
    named_tuple = issubclass(found, tuple) and isinstance(getattr(found, "_fields", None), tuple)
    if not (
        dataclasses.is_dataclass(found) or named_tuple or issubclass(found, enum.Enum | Message)
    ) or not found.__module__.startswith(_MODULES):
        raise Undecodable(f"a snapshot names {name[:80]!r}, which is not a value class")
    return found


class _Reader:
    """Reads a snapshot's document back (one function on the hot path: a position of a few
    hundred moves is tens of thousands of values)."""

    def __init__(self, table: folding.Table, classes: list[type]) -> None:
        self.context = _numbered(table)[0]
        self.classes = classes
        self.fields = [_field_names(c) if dataclasses.is_dataclass(c) else () for c in classes]
        self.objects: list[Any] = []

    def _class(self, number: Any, base: type | tuple[type, ...]) -> type:
        if type(number) is not int or not 0 <= number < len(self.classes):
            raise Undecodable("a class number out of range")
        cls = self.classes[number]
        if not issubclass(cls, base):
            raise Undecodable(f"{_class_name(cls)} where another kind of value was written")
        return cls

    def _index(self, number: Any, within: list[Any], what: str) -> Any:
        if type(number) is not int or not 0 <= number < len(within):
            raise Undecodable(f"a reference to {what}")
        return within[number]

    def read(self, item: Any) -> Any:
        if type(item) is not list:
            return item
        tag = item[0] if item else None
        read = self.read
        objects = self.objects
        if tag == "r":
            return self._index(item[1], objects, "nothing written before")
        if tag == "c":
            return self._index(item[1], self.context, "past the initial state")
        if tag == "D":
            cls = self._class(item[1], object)
            names = self.fields[item[1]]
            if not names or len(item) != len(names) + 2:
                raise Undecodable(f"{_class_name(cls)} written with other fields")
            number = len(objects)
            objects.append(None)
            # Filled in as the fold made it, never through __init__ (no code of the
            # snapshot's choosing runs, and a frozen dataclass takes its fields this way).
            value: Any = object.__new__(cls)
            for name, member in zip(names, item[2:], strict=True):
                object.__setattr__(value, name, read(member))
            objects[number] = value
            return value
        if tag == "t" or tag == "l" or tag == "f" or tag == "s":
            number = len(objects)
            objects.append(None)
            members = [read(member) for member in item[1:]]
            built: Any = (
                tuple(members)
                if tag == "t"
                else members
                if tag == "l"
                else frozenset(members)
                if tag == "f"
                else set(members)
            )
            objects[number] = built
            return built
        if tag == "L":
            link: folding.Link[Any] | None = None
            for head in reversed([read(head) for head in item[1:]]):
                link = folding.Link(head, link)
            return link
        if tag == "d":
            number = len(objects)
            objects.append(None)
            flat = [read(member) for member in item[1:]]
            if len(flat) % 2:
                raise Undecodable("a dict with a key and no value")
            mapping = dict(zip(flat[::2], flat[1::2], strict=True))
            objects[number] = mapping
            return mapping
        if tag == "N":
            cls = self._class(item[1], tuple)
            fields = getattr(cls, "_fields", None)
            if not isinstance(fields, tuple) or len(fields) != len(item) - 2:
                raise Undecodable(f"{_class_name(cls)} written with other fields")
            number = len(objects)
            objects.append(None)
            # tuple.__new__, not the class: no code of the snapshot's choosing runs.
            named: Any = tuple.__new__(cls, [read(member) for member in item[2:]])
            objects[number] = named
            return named
        if tag == "P":
            number = len(objects)
            objects.append(None)
            message_class = self._class(item[1], Message)
            message = message_class.FromString(base64.b64decode(item[2], validate=True))  # type: ignore[attr-defined]
            objects[number] = message
            return message
        if tag == "E":
            return self._class(item[1], enum.Enum)(read(item[2]))
        if tag == "b":
            return base64.b64decode(item[1], validate=True)
        raise Undecodable("an unknown tag")


def decode(table: folding.Table, data: bytes) -> folding.Position:
    """The position `encode` wrote for a position of `table` (a table set up from the same
    GameCreated). Undecodable when the bytes are not such a snapshot."""
    try:
        document = json.loads(data)
        if type(document) is not list or len(document) != 3 or document[0] != FORMAT:
            raise Undecodable(f"not a snapshot of format {FORMAT}")
        _, names, root = document
        if type(names) is not list or not all(type(n) is str for n in names):
            raise Undecodable("no class list")
        position = _Reader(table, [_resolve(name) for name in names]).read(root)
    except Undecodable:
        raise
    except (ValueError, TypeError, IndexError, KeyError, AttributeError, RecursionError) as exc:
        raise Undecodable(f"a damaged snapshot: {type(exc).__name__}") from None
    if type(position) is not folding.Position or position.table is not table:
        raise Undecodable("a snapshot of something else than a position of this table")
    return position


def same_position(a: folding.Position, b: folding.Position) -> bool:
    """Whether two positions of one game are the same: the same game, state, counts, status
    and result, and the same moves in effect and undone (each with its states). By value,
    not by how the two share their parts, which depends on how each was folded."""
    return (
        a.table.created == b.table.created
        and (a.revision, a.sequence, a.status, a.move_count, a.chance_count)
        == (b.revision, b.sequence, b.status, b.move_count, b.chance_count)
        and a.result == b.result
        and a.state == b.state
        and list(a.applied or ()) == list(b.applied or ())
        and list(a.undone or ()) == list(b.undone or ())
    )
