"""tablelog.replay.copying: the fast copies and constructions of frozen dataclasses behave as
`dataclasses.replace` and the class's own constructor do."""

from __future__ import annotations

import dataclasses
from dataclasses import FrozenInstanceError, dataclass

import pytest

from tablelog.replay.copying import maker, replacer


@dataclass(frozen=True, slots=True)
class Sample:
    count: int
    names: tuple[str, ...]
    flag: bool = False


@dataclass(frozen=True)
class Unslotted:
    count: int


replace = replacer(Sample)
make = maker(Sample)


def test_replace_changes_only_the_fields_named() -> None:
    before = Sample(1, ("a",))
    after = replace(before, count=2, flag=True)
    assert after == dataclasses.replace(before, count=2, flag=True)
    assert before == Sample(1, ("a",))
    assert after.names is before.names
    assert replace(before) == before
    assert replace(before) is not before


def test_replace_refuses_a_field_the_class_does_not_have() -> None:
    with pytest.raises(TypeError, match="Sample has no field 'colour'"):
        replace(Sample(1, ()), colour=3)


def test_made_values_equal_constructed_ones_and_stay_frozen() -> None:
    made = make(3, ("x", "y"), True)
    assert made == Sample(3, ("x", "y"), True)
    assert type(made) is Sample
    with pytest.raises(FrozenInstanceError):
        made.count = 4  # type: ignore[misc]
    with pytest.raises(FrozenInstanceError):
        replace(made, count=5).count = 6  # type: ignore[misc]


def test_only_slotted_dataclasses_are_accepted() -> None:
    with pytest.raises(TypeError):
        replacer(Unslotted)
    with pytest.raises(TypeError):
        maker(int)


@dataclass(frozen=True, slots=True)
class Base:
    count: int


@dataclass(frozen=True, slots=True)
class Derived(Base):
    label: str


@dataclass(frozen=True, slots=True, weakref_slot=True)
class Referable:
    count: int


@pytest.mark.parametrize(
    ("cls", "values"), [(Sample, (3, ("x",), True)), (Derived, (1, "a")), (Referable, (2,))]
)
def test_made_values_are_the_class_itself_whatever_its_layout(
    cls: type[object], values: tuple[object, ...]
) -> None:
    """A class a twin can match (Sample) and ones it cannot (a slotted base, a weak
    reference slot) are all made as the class's own constructor makes them."""
    make_one = maker(cls)
    # The twin store is the fast path where the layout allows it, the descriptors elsewhere.
    assert ("_twin" in make_one.__globals__) == (cls is Sample)
    made = make_one(*values)
    assert type(made) is cls
    assert made == cls(*values)
    assert hash(made) == hash(cls(*values))
    with pytest.raises(FrozenInstanceError):
        made.count = 9  # type: ignore[attr-defined]
