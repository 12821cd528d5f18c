"""replay/games/README.md followed for a toy sixth game: two-player Nim.

The toy is defined here, file by file as the recipe names them (components, rules, scoring,
notation, views, game), and is never registered in `replay/games/`. Its protobuf messages
are built at run time, because the recipe's second step (members in the `oneof game` of
game.proto) cannot be taken by a test: so the toy is driven through its `Game` surface and
the generic checks that take a game object (random play, notation round trips, the hostile
inputs of test_hostile_inputs.py), and the last test pins down why the fold cannot take it.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

import pytest
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from google.protobuf.message import Message
from hypothesis import given
from hypothesis import strategies as st

from tablelog.replay import fold as folding
from tablelog.replay.components import ComponentCache, read_csv_records, whole_number
from tablelog.replay.core import (
    FULL,
    SPECTATOR,
    TABLE,
    TERMINAL,
    Game,
    IllegalMove,
    InvalidSetup,
    NotationError,
    OptionDoc,
    Viewer,
    recorded_component,
)
from tablelog.replay.picture import INK, Picture, check_layout
from tablelog.replay.touch import Touches
from tablelog.v1 import events_pb2, game_pb2
from tests.core.test_hostile_inputs import FUZZ, bounded, messages
from tests.support.play import assert_round_trip, choose

# ------------------------------------------------------------------ the messages (<name>.proto)


def _message_classes() -> dict[str, Any]:
    """The toy's message classes, made at run time: their fields are not in the stubs'
    `Message` (whose newer versions take none)."""
    proto = descriptor_pb2.FileDescriptorProto(name="toy_nim.proto", package="toy.nim")
    uint32 = descriptor_pb2.FieldDescriptorProto.TYPE_UINT32
    message_type = descriptor_pb2.FieldDescriptorProto.TYPE_MESSAGE
    repeated = descriptor_pb2.FieldDescriptorProto.LABEL_REPEATED
    optional = descriptor_pb2.FieldDescriptorProto.LABEL_OPTIONAL
    take = proto.message_type.add(name="NimTake")
    take.field.add(name="heap", number=1, type=uint32, label=optional)
    take.field.add(name="count", number=2, type=uint32, label=optional)
    move = proto.message_type.add(name="NimMove")
    move.oneof_decl.add(name="action")
    move.field.add(
        name="take", number=1, type=message_type, type_name=".toy.nim.NimTake",
        label=optional, oneof_index=0,
    )  # fmt: skip
    options = proto.message_type.add(name="NimOptions")
    options.field.add(name="first_player", number=1, type=uint32, label=optional)
    view = proto.message_type.add(name="NimView")
    view.field.add(name="heaps", number=1, type=uint32, label=repeated)
    view.field.add(name="to_move", number=2, type=uint32, label=optional)
    view.field.add(name="winner", number=3, type=uint32, label=optional)
    pool = descriptor_pool.DescriptorPool()
    pool.Add(proto)
    return {
        name: message_factory.GetMessageClass(pool.FindMessageTypeByName(f"toy.nim.{name}"))
        for name in ("NimTake", "NimMove", "NimOptions", "NimView")
    }


MESSAGES: Final = _message_classes()
NimTake, NimMove, NimOptions, NimView = (
    MESSAGES[n] for n in ("NimTake", "NimMove", "NimOptions", "NimView")
)

# ------------------------------------------------------------------ components.py

HEAPS_FILE: Final = "heaps.csv"
MAX_HEAPS: Final = 8
MAX_TOKENS: Final = 20


@dataclass(frozen=True, slots=True)
class Heaps:
    sizes: tuple[int, ...]


_HEAPS: ComponentCache[Heaps] = ComponentCache()


def load_heaps(content: bytes) -> Heaps:
    """Rules §1: one row per heap, `heap,tokens`; 1-8 heaps of 1-20 tokens."""
    return _HEAPS.load(content, None, lambda: _read_heaps(content))


def _read_heaps(content: bytes) -> Heaps:
    rows = read_csv_records(content, "The heaps file", "HEAPS_FILE")
    if not 1 <= len(rows) <= MAX_HEAPS:
        raise InvalidSetup("HEAPS_FILE", f"Nim is played with 1 to {MAX_HEAPS} heaps.")
    sizes = tuple(
        whole_number(row.get("tokens", ""), "The heaps file's tokens", "HEAPS_FILE", 1, MAX_TOKENS)
        for row in rows
    )
    return Heaps(sizes)


def default_heaps() -> game_pb2.ComponentFile:
    return game_pb2.ComponentFile(
        name=HEAPS_FILE, media_type="text/csv", content=b"heap,tokens\n1,3\n2,4\n3,5\n"
    )


# ------------------------------------------------------------------ rules.py


@dataclass(frozen=True, slots=True)
class State:
    heaps: tuple[int, ...]
    seat: int
    last: int = -1
    """The seat that took the last token (the winner, §3), once every heap is empty."""


def setup(players: Sequence[str], first: int, heaps: Heaps) -> State:
    """Rules §1: two players, the heaps of the component file."""
    if len(players) != 2:
        raise InvalidSetup("PLAYER_COUNT", f"Nim is for 2 players, not {len(players)}.")
    if first > 1:
        raise InvalidSetup("OPTIONS", f"first_player is seat 0 or 1, not {first}.")
    return State(heaps.sizes, first)


def check_bounds(state: State, move: Any) -> None:
    """Rules §2: a heap of this game, at most the tokens a heap can hold."""
    if move.WhichOneof("action") != "take":
        raise IllegalMove("EMPTY_MOVE", "The move names no action.")
    if not 1 <= move.take.heap <= len(state.heaps):
        raise IllegalMove("NO_SUCH_HEAP", f"There are heaps 1 to {len(state.heaps)}.")
    if not 1 <= move.take.count <= MAX_TOKENS:
        raise IllegalMove("TAKE_COUNT", f"Take 1 to {MAX_TOKENS} tokens, not {move.take.count}.")


def apply(state: State, move: Any) -> State:
    """Rules §2: take one or more tokens from one heap."""
    if to_move(state) == TERMINAL:
        raise IllegalMove("GAME_OVER", "Every heap is empty.")
    check_bounds(state, move)
    heap, count = move.take.heap - 1, move.take.count
    if count > state.heaps[heap]:
        raise IllegalMove("TOO_MANY", f"Heap {heap + 1} has {state.heaps[heap]} tokens.")
    heaps = (*state.heaps[:heap], state.heaps[heap] - count, *state.heaps[heap + 1 :])
    return State(heaps, 1 - state.seat, state.seat)


def legal_moves(state: State) -> list[Any]:
    return [
        NimMove(take=NimTake(heap=h + 1, count=c))
        for h, size in enumerate(state.heaps)
        for c in range(1, size + 1)
    ]


def to_move(state: State) -> int:
    return TERMINAL if not any(state.heaps) else state.seat


# ------------------------------------------------------------------ scoring.py


def result(state: State) -> game_pb2.GameResult:
    """Rules §3: whoever takes the last token wins."""
    if to_move(state) != TERMINAL:
        return game_pb2.GameResult(termination=game_pb2.TERMINATION_ONGOING)
    return game_pb2.GameResult(termination=game_pb2.TERMINATION_COMPLETED, winners=[state.last])


# ------------------------------------------------------------------ notation.py


def parse(text: str, state: State) -> Any:
    """`take 3 from 2`, or `2:3` (heap 2, three tokens)."""
    words = text.lower().replace(":", " ").replace("from", " ").replace("take", " ").split()
    if len(words) != 2 or not all(w.isdigit() and len(w) <= 2 for w in words):
        raise NotationError("Write a move as `heap:count`, for example `2:3`.", text)
    first, second = int(words[0]), int(words[1])
    heap, count = (second, first) if "from" in text.lower() else (first, second)
    return NimMove(take=NimTake(heap=heap, count=count))


def format_move(move: Any, state: State) -> str:
    check_bounds(state, move)
    return f"{move.take.heap}:{move.take.count}"


# ------------------------------------------------------------------ views.py


def view(state: State, viewer: Viewer) -> Message:
    over = to_move(state) == TERMINAL
    winner = state.last if over else 0
    shown: Message = NimView(heaps=state.heaps, to_move=state.seat, winner=winner)
    return shown


def render(message: Any) -> str:
    return "\n".join(f"heap {i + 1}: {'|' * n}" for i, n in enumerate(message.heaps[:MAX_HEAPS]))


# ------------------------------------------------------------------ picture.py


def picture(
    message: Any, last_move: Any = None, approximate: str = "", layout: str = "wide"
) -> str:
    """Each heap a row of sticks; the heap the last move took from framed. Narrow enough
    for a phone in either layout; its sticks are under a finger's size, and the web app
    zooms to tap them."""
    check_layout(layout)
    heaps = list(message.heaps[:MAX_HEAPS])
    drawn = Picture(40 + 14 * max([1, *heaps]), 30 + 30 * len(heaps), "Nim")
    for index, count in enumerate(heaps):
        row = drawn.group(cls="heap", title=f"heap {index + 1}: {count}", y=20 + 30 * index)
        for stick in range(count):
            drawn.touch(
                drawn.rect(row, 20 + 14 * stick, 0, 6, 22, fill=INK, cls="stick"),
                f"heap-{index + 1}-{count - stick}",
            )
        if last_move is not None and last_move.take.heap == index:
            drawn.highlight(row, 14, 0, 14 * max(count, 1), 22)
    if approximate:
        drawn.approximate_note(approximate)
    return drawn.svg()


def touches(move: Any, state: State) -> Touches:
    """Rules §2: the stick a take leaves the heap at (taking it and every stick after it)."""
    return Touches((f"heap-{move.take.heap}-{move.take.count}",))


# ------------------------------------------------------------------ game.py and __init__.py


class Nim:
    name = "nim"
    title = "Nim"
    min_players = 2
    max_players = 2
    rules_version = "nim/1"
    modes: tuple[game_pb2.Mode.ValueType, ...] = (TABLE,)
    oneof_field = "nim"
    move_type: type[Message] = NimMove
    options_type: type[Message] = NimOptions
    view_type: type[Message] = NimView
    option_docs: tuple[OptionDoc, ...] = (
        OptionDoc("first_player", "The seat that takes first.", "0"),
    )
    notation_doc = "docs/notation/nim.md"
    reveals_all_at_end = True

    def default_components(self) -> Sequence[game_pb2.ComponentFile]:
        return [default_heaps()]

    def setup(
        self,
        players: Sequence[str],
        options: Any,
        mode: game_pb2.Mode.ValueType,
        components: Mapping[str, game_pb2.ComponentFile],
    ) -> State:
        heaps = load_heaps(recorded_component(components, HEAPS_FILE, self.title).content)
        return setup(players, options.first_player if options is not None else 0, heaps)

    def apply(self, state: State, move: Any) -> State:
        return apply(state, move)

    def legal_moves(self, state: State) -> Sequence[Any]:
        return legal_moves(state)

    def chance_outcomes(self, state: State) -> Sequence[tuple[Any, int]]:
        return []

    def is_chance(self, move: Any) -> bool:
        return False

    def visible_to(self, move: Any, state: State, viewer: Viewer) -> bool:
        return True

    def hides_from(self, state: State, viewer: Viewer) -> bool:
        return False

    def to_move(self, state: State) -> int:
        return to_move(state)

    def result(self, state: State) -> game_pb2.GameResult:
        return result(state)

    def view(self, state: State, viewer: Viewer) -> Message:
        return view(state, viewer)

    def redact(self, state: State, viewer: Viewer) -> State:
        return state  # Nim hides nothing

    def render(self, view: Any) -> str:
        return render(view)

    def picture(
        self, view: Any, *, last_move: Any = None, approximate: str = "", layout: str = "wide"
    ) -> str:
        return picture(view, last_move, approximate, layout)

    def parse(self, text: str, state: State) -> Any:
        return parse(text, state)

    def format(self, move: Any, state: State) -> str:
        return format_move(move, state)

    def undealt(self, move: Any, state: State) -> Any:
        return move  # Nim has no chance

    def detail(self, move: Any, state: State) -> str:
        return ""  # a Nim move names what it takes

    def split(self, text: str, state: State) -> Sequence[str]:
        return (text,)  # every line of Nim's notation is one move

    def touches(self, move: Any, state: State) -> Touches:
        return touches(move, state)

    def words(self, move: Any, state: State, viewer: Viewer) -> str:
        """Rules §2: who takes how many sticks from which heap (the state keeps no names)."""
        return f"Seat {state.seat} takes {move.take.count} from heap {move.take.heap}."


GAME: Game[State, Any] = Nim()

# ------------------------------------------------------------------ the generic checks


def new_state() -> State:
    state: State = GAME.setup(
        ["Ann", "Bo"], None, TABLE, {c.name: c for c in GAME.default_components()}
    )
    return state


@pytest.mark.parametrize("seed", range(5))
def test_random_games_end_with_a_winner_and_every_legal_move_round_trips(seed: int) -> None:
    rng = random.Random(seed)
    state = new_state()
    while GAME.to_move(state) != TERMINAL:
        assert_round_trip(GAME, state)
        for move in GAME.legal_moves(state):
            GAME.apply(state, move)
        assert GAME.result(state).termination == game_pb2.TERMINATION_ONGOING
        GAME.render(GAME.view(state, SPECTATOR))
        state = GAME.apply(state, choose(GAME, state, rng))
    assert list(GAME.result(state).winners) == [state.last]
    assert GAME.legal_moves(state) == []


def test_rule_refusals_and_setup_checks() -> None:
    state = new_state()
    with pytest.raises(IllegalMove, match="Heap 1 has 3"):
        GAME.apply(state, NimMove(take=NimTake(heap=1, count=4)))
    with pytest.raises(InvalidSetup):
        GAME.setup(["a", "b", "c"], None, TABLE, {HEAPS_FILE: default_heaps()})
    bad = game_pb2.ComponentFile(name=HEAPS_FILE, content=b"heap,tokens\n1," + b"9" * 5_000)
    with pytest.raises(InvalidSetup):
        GAME.setup(["a", "b"], None, TABLE, {HEAPS_FILE: bad})


@FUZZ
@given(data=st.data())
def test_the_hostile_input_checks_take_the_toy_too(data: st.DataObject) -> None:
    state = new_state()
    move = data.draw(messages(NimMove.DESCRIPTOR), label="move")
    text = bounded(lambda: GAME.format(move, state))
    assert text is None or len(text) < 20
    bounded(lambda: GAME.apply(state, move))
    # Drawn before the measured call: Hypothesis's own allocations while it generates (once
    # 200 MB in CI) are not the game's, and a call measured twice must draw nothing.
    typed = data.draw(st.text(max_size=50), label="text")
    bounded(lambda: GAME.parse(typed, state))
    options = data.draw(messages(NimOptions.DESCRIPTOR), label="options")
    files = {HEAPS_FILE: default_heaps()}
    bounded(lambda: GAME.setup(["a", "b"], options, TABLE, files))
    bounded(lambda: GAME.view(state, FULL))


def test_the_fold_needs_the_games_members_in_game_proto(monkeypatch: pytest.MonkeyPatch) -> None:
    """The recipe's step 2: a game is recorded and folded inside the `oneof game` of Move,
    GameOptions and GameView. Registered here (only for this test) without them, the toy
    is found by the fold, which then has nowhere to read its options from or put its moves."""
    for envelope in (game_pb2.Move, game_pb2.GameOptions, game_pb2.GameView):
        assert "nim" not in envelope.DESCRIPTOR.fields_by_name
    created = events_pb2.GameCreated(
        game="nim", players=[events_pb2.Player(name=n) for n in ("Ann", "Bo")], mode=TABLE
    )
    created.components.append(default_heaps())
    with pytest.raises(InvalidSetup, match="There is no game called 'nim'"):
        folding.start(created)
    monkeypatch.setattr(folding, "find_game", lambda name: GAME)
    with pytest.raises(AttributeError, match="nim"):
        folding.start(created)
    table = folding.Table(GAME, created, ("Ann", "Bo"), NimOptions(), {})
    with pytest.raises(AttributeError, match="nim"):
        table.wrap(NimMove(take=NimTake(heap=1, count=1)))
