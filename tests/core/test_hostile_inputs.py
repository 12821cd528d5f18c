"""Every registered game takes any protobuf value, any text and any component file without
doing unbounded work (issue 11, "validate before work").

A hostile caller controls every field of a typed move (a count of 2**32-1, a repeated field
of thousands of entries), every character of a notation line, the options and the bytes of
a component file. Whatever it sends, `format`, `apply`, `parse`, `view`/`render`, `setup`
and the rest of the surface either answer or raise a `RulesError` subclass (which the
service maps to INVALID_ARGUMENT or FAILED_PRECONDITION): never another exception (INTERNAL),
never a large allocation, never a long computation. (`render` of a view message forged field
by field, rather than produced by `view`, is not covered yet: the renderers trust the views
they are given.) Allocation is measured with tracemalloc
(the peak of one call), computation as the process's CPU time of one call, so neither
depends on what else runs on the machine; both bounds are generous (a legal call needs a few
hundred KB and milliseconds) and catch the defects they guard against, which cost gigabytes
and seconds.
"""

from __future__ import annotations

import json
import time
import tracemalloc
from collections.abc import Callable, Sequence
from functools import cache, partial
from typing import Any, Final, TypeVar

import pytest
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tablelog.replay.components import ComponentCache
from tablelog.replay.core import FULL, SPECTATOR, TABLE, Game, IllegalMove, InvalidSetup, RulesError
from tablelog.replay.registry import all_games, find_game
from tablelog.v1 import game_pb2
from tablelog.v1.mercado_de_lisboa_pb2 import (
    MercadoDeLisboaBringCustomers,
    MercadoDeLisboaGood,
    MercadoDeLisboaMove,
)
from tablelog.v1.splendor_pb2 import SplendorGem, SplendorMove, SplendorTakeSame, SplendorTokens
from tests.support.play import random_game

GAMES = sorted(all_games())

PEAK_BYTES: Final = 4 << 20
"""The most one call may allocate at its peak (tracemalloc)."""
CPU_SECONDS: Final = 2.0
"""The most CPU time one call may take (with tracemalloc on, which slows Python down)."""
REPEATED_MAX: Final = 2_000
"""The longest repeated field a generated message has: far beyond any real move."""
TEXT_MAX: Final = 400

EXTREME_INTS: Final = (0, 1, -1, 2, 3, 4, 5, 7, 10, 255, 2**31 - 1, -(2**31))
EXTREME_UINTS: Final = (0, 1, 2, 3, 4, 5, 7, 10, 255, 2**31 - 1, 2**32 - 1)
EXTREME_INT64: Final = (*EXTREME_INTS, 2**63 - 1, -(2**63))
EXTREME_UINT64: Final = (*EXTREME_UINTS, 2**63 - 1, 2**64 - 1)

FUZZ = settings(
    max_examples=25,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

T = TypeVar("T")


def bounded(call: Callable[[], T]) -> T | None:
    """Run `call`: its result, or None when it raised a RulesError; fails the test when it
    raised anything else, allocated more than PEAK_BYTES or took more than CPU_SECONDS."""
    tracemalloc.start()
    tracemalloc.reset_peak()
    cpu = time.process_time()
    message = ""
    try:
        return call()
    except RulesError as refused:
        message = refused.message
        return None
    finally:
        spent = time.process_time() - cpu
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        assert peak <= PEAK_BYTES, f"one call allocated {peak:,} bytes at its peak"
        assert spent <= CPU_SECONDS, f"one call took {spent:.1f} s of CPU"
        assert len(message) <= 1_000, f"an error message of {len(message):,} characters"


# ------------------------------------------------------------------ hostile protobuf values

_SCALARS: dict[int, Sequence[Any]] = {
    FieldDescriptor.TYPE_INT32: EXTREME_INTS,
    FieldDescriptor.TYPE_SINT32: EXTREME_INTS,
    FieldDescriptor.TYPE_SFIXED32: EXTREME_INTS,
    FieldDescriptor.TYPE_UINT32: EXTREME_UINTS,
    FieldDescriptor.TYPE_FIXED32: EXTREME_UINTS,
    FieldDescriptor.TYPE_INT64: EXTREME_INT64,
    FieldDescriptor.TYPE_SINT64: EXTREME_INT64,
    FieldDescriptor.TYPE_SFIXED64: EXTREME_INT64,
    FieldDescriptor.TYPE_UINT64: EXTREME_UINT64,
    FieldDescriptor.TYPE_FIXED64: EXTREME_UINT64,
    FieldDescriptor.TYPE_BOOL: (False, True),
    FieldDescriptor.TYPE_DOUBLE: (0.0, -1.0, 1e308, float("nan")),
    FieldDescriptor.TYPE_FLOAT: (0.0, -1.0, 3e38),
}


def _scalar(field: FieldDescriptor) -> st.SearchStrategy[Any]:
    if field.type == FieldDescriptor.TYPE_ENUM:
        assert field.enum_type is not None
        known = [v.number for v in field.enum_type.values]
        return st.sampled_from([*known, -1, 2**31 - 1, max(known) + 1])
    if field.type == FieldDescriptor.TYPE_STRING:
        return st.one_of(st.text(max_size=20), st.just("x" * 5_000))
    if field.type == FieldDescriptor.TYPE_BYTES:
        return st.binary(max_size=20)
    return st.sampled_from(_SCALARS[field.type])


def _repeated(field: FieldDescriptor, one: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    short = st.lists(one, max_size=6)
    if field.type == FieldDescriptor.TYPE_MESSAGE:
        return short
    return st.one_of(
        short,
        st.builds(lambda v, n: [v] * n, one, st.integers(7, REPEATED_MAX)),
    )


@st.composite
def messages(draw: st.DrawFn, descriptor: Any, depth: int = 0) -> Message:
    """A message of `descriptor` with extreme values: in each oneof one member (or none),
    every other field set or not, repeated fields short or very long."""
    from google.protobuf import message_factory

    message = message_factory.GetMessageClass(descriptor)()
    chosen = {
        oneof.name: draw(st.sampled_from([None, *oneof.fields])) for oneof in descriptor.oneofs
    }
    for field in descriptor.fields:
        if field.containing_oneof is not None:
            if chosen[field.containing_oneof.name] is not field:
                continue
        elif not draw(st.booleans()):
            continue
        repeated = field.is_repeated
        if field.type == FieldDescriptor.TYPE_MESSAGE:
            assert field.message_type is not None
            if field.message_type.GetOptions().map_entry or depth > 4:
                continue
            inner = messages(field.message_type, depth + 1)
            if repeated:
                getattr(message, field.name).extend(draw(_repeated(field, inner)))
            else:
                getattr(message, field.name).CopyFrom(draw(inner))
        elif repeated:
            getattr(message, field.name).extend(draw(_repeated(field, _scalar(field))))
        else:
            setattr(message, field.name, draw(_scalar(field)))
    return message


# ------------------------------------------------------------------ states to attack


@cache
def sample_states(name: str) -> tuple[Any, ...]:
    """The first state of a game and states spread over two seeded random games (table
    mode and, when the game has it, dealt mode)."""
    game = find_game(name)
    states: list[Any] = []
    for seed, mode in enumerate(game.modes):
        played = random_game(
            name, game.max_players - seed % 2, seed=seed, mode=mode, keep_states=True
        )
        step = max(1, len(played.states) // 6)
        states.extend(played.states[::step])
        states.append(played.states[-1])
    return tuple(states)


def state_of(name: str, index: int) -> Any:
    states = sample_states(name)
    return states[index % len(states)]


# ------------------------------------------------------------------ typed moves


@pytest.mark.parametrize("name", GAMES)
@settings(FUZZ, max_examples=100)
@given(data=st.data())
def test_typed_moves_with_extreme_fields_are_refused_cheaply(
    name: str, data: st.DataObject
) -> None:
    game = find_game(name)
    state = state_of(name, data.draw(st.integers(0, 100), label="state"))
    move = data.draw(messages(game.move_type.DESCRIPTOR), label="move")
    bounded(lambda: game.is_chance(move))
    text = bounded(lambda: game.format(move, state))
    if text is not None:
        assert len(text) <= 1_000, f"format wrote {len(text):,} characters"
    bounded(lambda: game.apply(state, move))
    for viewer in (FULL, SPECTATOR, 0, 1):
        bounded(partial(game.visible_to, move, state, viewer))


@pytest.mark.parametrize("name", GAMES)
@FUZZ
@given(data=st.data())
def test_views_for_any_viewer_and_their_rendering(name: str, data: st.DataObject) -> None:
    """Any viewer number; `render` is given the views the game itself produced (rendering
    a view message forged field by field is not covered: see the module docstring)."""
    game = find_game(name)
    state = state_of(name, data.draw(st.integers(0, 100), label="state"))
    viewer = data.draw(st.sampled_from([FULL, SPECTATOR, 0, 1, 5, -2, -(2**31), 2**31 - 1]))
    view = bounded(lambda: game.view(state, viewer))
    if view is not None:
        bounded(lambda: game.render(view))


# ------------------------------------------------------------------ notation


def _vocabulary(name: str) -> list[str]:
    """Words the game's notation knows: every word of every legal move's text in the
    sampled states, so random lines reach deep into the parser."""
    game = find_game(name)
    words: set[str] = set()
    for state in sample_states(name):
        for move in list(game.legal_moves(state))[:200]:
            words.update(game.format(move, state).split())
    return sorted(words)


@cache
def vocabulary(name: str) -> tuple[str, ...]:
    return tuple(_vocabulary(name))


HUGE_NUMBERS: Final = ("0", "-1", "4294967295", "9" * 30, "1" * 5_000, "99999999999999999999")


@pytest.mark.parametrize("name", GAMES)
@FUZZ
@given(data=st.data())
def test_random_notation_is_refused_cheaply(name: str, data: st.DataObject) -> None:
    game = find_game(name)
    state = state_of(name, data.draw(st.integers(0, 100), label="state"))
    short_word = st.one_of(
        st.sampled_from(vocabulary(name)),
        st.sampled_from([n for n in HUGE_NUMBERS if len(n) <= 30]),
        st.text(max_size=12),
    )
    word = st.one_of(short_word, st.sampled_from(HUGE_NUMBERS))
    text = data.draw(
        st.one_of(
            st.text(max_size=TEXT_MAX),
            st.lists(word, min_size=1, max_size=12).map(" ".join),
            st.builds(lambda w, n: " ".join([w] * n), short_word, st.integers(50, 2_000)),
        ),
        label="text",
    )
    move = bounded(lambda: game.parse(text, state))
    if move is not None:
        bounded(lambda: game.format(move, state))
        bounded(lambda: game.apply(state, move))


def test_an_unknown_word_is_echoed_clipped() -> None:
    for name in GAMES:
        game = find_game(name)
        state = sample_states(name)[0]
        with pytest.raises(RulesError) as refused:
            game.parse("zzzzzzzzzz" * 10_000, state)
        assert len(refused.value.message) <= 400, name


# ------------------------------------------------------------------ setup: options, players


@pytest.mark.parametrize("name", GAMES)
@FUZZ
@given(data=st.data())
def test_setup_with_extreme_options(name: str, data: st.DataObject) -> None:
    game = find_game(name)
    options = data.draw(messages(game.options_type.DESCRIPTOR), label="options")
    players = data.draw(st.integers(game.min_players, game.max_players), label="players")
    mode = data.draw(st.sampled_from(game.modes), label="mode")
    components = {c.name: c for c in game.default_components()}
    names = [f"p{i}" for i in range(players)]
    state = bounded(lambda: game.setup(names, options, mode, components))
    if state is not None:
        bounded(lambda: game.legal_moves(state))
        bounded(lambda: game.view(state, SPECTATOR))


# ------------------------------------------------------------------ component files


def _nested(depth: int) -> bytes:
    return b"[" * depth + b"]" * depth


def hostile_contents(default: bytes) -> list[bytes]:
    """Component contents no game should accept or choke on."""
    text = default.decode("utf-8")
    contents = [
        b"",
        b"\xff\xfe\x00garbage",
        b"a,b\x00,c\n",
        _nested(100_000),
        _nested(40),
        b'{"a": ' * 5_000 + b"1" + b"}" * 5_000,
        b"1" * 5_000,
        b"[" + b"1" * 5_000 + b"]",
        b"1e999999",
        b"NaN",
        default + b"\n" + b"9" * 5_000 + b"\n",
        (text.replace("1", "9" * 5_000, 1)).encode(),
        (text.replace("2", "4294967295")).encode(),
        (text.replace("1", "-1")).encode(),
        (text.replace("3", "300000")).encode(),
        default * 3,
        default[: len(default) // 2],
        b"x" * ((1 << 20) + 1),
    ]
    if text.lstrip().startswith("{"):
        data = json.loads(text)
        for key in list(data):
            broken = dict(data)
            broken[key] = [[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]
            contents.append(json.dumps(broken).encode())
            broken[key] = "x" * 100_000
            contents.append(json.dumps(broken).encode())
            broken[key] = 10**4000
            contents.append(json.dumps(broken).encode())
    return contents


@pytest.mark.parametrize("name", GAMES)
def test_hostile_component_files_are_refused_as_invalid_setup(name: str) -> None:
    game = find_game(name)
    defaults = list(game.default_components())
    players = [f"p{i}" for i in range(game.max_players)]
    for index, component in enumerate(defaults):
        for content in hostile_contents(component.content):
            files = [game_pb2.ComponentFile() for _ in defaults]
            for i, original in enumerate(defaults):
                files[i].CopyFrom(original)
            files[index].content = content
            by_name = {f.name: f for f in files}
            state = bounded(partial(game.setup, players, None, TABLE, by_name))
            if state is not None:
                bounded(partial(game.legal_moves, state))
                bounded(partial(game.view, state, FULL))


@pytest.mark.parametrize("name", GAMES)
@FUZZ
@given(data=st.data())
def test_random_component_bytes(name: str, data: st.DataObject) -> None:
    game = find_game(name)
    defaults = list(game.default_components())
    component = defaults[data.draw(st.integers(0, len(defaults) - 1), label="file")]
    mutated = bytearray(component.content)
    for _ in range(data.draw(st.integers(1, 8), label="edits")):
        at = data.draw(st.integers(0, len(mutated)), label="at")
        insert = data.draw(
            st.one_of(st.binary(max_size=8), st.sampled_from([b"9" * 40, b"[[[[", b"-", b","]))
        )
        mutated[at : at + data.draw(st.integers(0, 4))] = insert
    files = {c.name: c for c in defaults}
    broken = game_pb2.ComponentFile()
    broken.CopyFrom(component)
    broken.content = bytes(mutated)
    files[component.name] = broken
    players = [f"p{i}" for i in range(game.min_players)]
    state = bounded(lambda: game.setup(players, None, TABLE, files))
    if state is not None:
        bounded(lambda: game.legal_moves(state))


def test_every_game_is_attacked() -> None:
    assert len(GAMES) >= 5
    for name in GAMES:
        game: Game[Any, Any] = find_game(name)
        assert game.default_components(), name


# ------------------------------------------------------------------ the defects of issue 11


def test_a_splendor_return_of_four_billion_red_tokens_is_refused_before_it_is_written() -> None:
    """Measured on main: formatting this move wrote one letter per token (+1.4 GB, 7 s)."""
    game = find_game("splendor")
    state = sample_states("splendor")[0]
    move = SplendorMove(
        take_same=SplendorTakeSame(gem=SplendorGem.SPLENDOR_GEM_RED),
        returned=SplendorTokens(red=2**32 - 1),
    )
    with pytest.raises(IllegalMove, match="has 7 red tokens; a move cannot name 4294967295"):
        game.format(move, state)
    assert bounded(partial(game.format, move, state)) is None
    assert bounded(partial(game.apply, state, move)) is None


def test_a_mercado_customer_tile_of_2000_goods_is_refused_before_it_is_written() -> None:
    """On main: formatted as 2,000 goods names (10,013 characters) before any check."""
    game = find_game("mercado-de-lisboa")
    state = sample_states("mercado-de-lisboa")[0]
    fish = MercadoDeLisboaGood.MERCADO_DE_LISBOA_GOOD_FISH
    tile = MercadoDeLisboaBringCustomers(customers=4, goods=[fish] * 2_000, entrance=1)
    with pytest.raises(IllegalMove, match="2000 goods for a customer tile"):
        game.format(MercadoDeLisboaMove(customer=tile), state)


def test_a_board_file_with_a_5000_digit_integer_is_an_invalid_setup() -> None:
    """Measured on main: a ValueError escaped the rules core (INTERNAL)."""
    game = find_game("castello-methoni")
    (board,) = game.default_components()
    data = json.loads(board.content)
    data["walls_by_player_count"] = {"3": 0}
    text = json.dumps(data).replace('{"3": 0}', '{"3": ' + "9" * 5_000 + "}")
    broken = game_pb2.ComponentFile()
    broken.CopyFrom(board)
    broken.content = text.encode()
    with pytest.raises(InvalidSetup, match="too large for any component"):
        game.setup(["a", "b", "c"], None, TABLE, {board.name: broken})


def test_component_caches_are_bounded_and_keyed_by_content() -> None:
    cache: ComponentCache[int] = ComponentCache(size=3)
    reads: list[bytes] = []

    def load(content: bytes) -> int:
        def read() -> int:
            reads.append(content)
            return len(reads)

        return cache.load(content, None, read)

    first = load(b"a")
    assert load(b"a") == first
    for content in (b"b", b"c", b"d", b"e"):
        load(content)
    assert len(cache) == 3
    assert load(b"a") != first  # evicted, read again
    assert reads == [b"a", b"b", b"c", b"d", b"e", b"a"]
