"""Hand-built Mercado de Lisboa positions for scenario and illegal-move tests."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from tablelog.replay.games.mercado_de_lisboa import GAME
from tablelog.replay.games.mercado_de_lisboa import rules as rl
from tablelog.replay.games.mercado_de_lisboa.components import (
    COMPONENT_NAME,
    ENTRANCE_NAMES,
    GOODS,
    SPACE_NAMES,
    default_components,
)
from tablelog.replay.games.mercado_de_lisboa.notation import RESTAURANT_SYNONYMS
from tablelog.v1 import game_pb2
from tablelog.v1 import mercado_de_lisboa_pb2 as pb

COMPONENTS: Mapping[str, game_pb2.ComponentFile] = {COMPONENT_NAME: default_components()[0]}
"""The shipped board file, as a game records it at creation (setup needs it)."""


def good(name: str) -> int:
    return GOODS.index(name)


def kind(state: rl.State, text: str) -> int:
    """'2 fish+flower' -> the tile kind index."""
    n, goods = text.split(" ")
    k = state.rules.kind_of(int(n), [good(g) for g in goods.split("+")])
    assert k >= 0, text
    return k


def build(
    players: int = 2,
    *,
    stands: Mapping[str, tuple[str, int]] | None = None,
    restaurants: Mapping[str, str] | None = None,
    face_down: Sequence[str] = (),
    customers: Mapping[str, str] | None = None,
    money: Sequence[int] | None = None,
    hands: Sequence[Sequence[str]] | None = None,
    held: Sequence[Sequence[str]] | None = None,
    display: Sequence[str] = ("grape", "meat", "fish"),
    offers: Sequence[str] = (),
    seat: int = 0,
    options: pb.MercadoDeLisboaOptions | None = None,
) -> rl.State:
    """A position with exactly the given pieces (no pending draws, seat to move)."""
    state = GAME.setup([f"p{i + 1}" for i in range(players)], options, 1, COMPONENTS)
    board = [rl.EMPTY] * 25
    for name in face_down:
        board[SPACE_NAMES.index(name)] = rl.FACE_DOWN
    for name, (g, owner) in (stands or {}).items():
        board[SPACE_NAMES.index(name)] = rl.STAND_BASE + owner * 5 + good(g)
    for name, r in (restaurants or {}).items():
        board[SPACE_NAMES.index(name)] = rl.RESTAURANT_BASE + RESTAURANT_SYNONYMS[r]
    entrances = [-1] * 20
    for name, text in (customers or {}).items():
        entrances[ENTRANCE_NAMES.index(name)] = kind(state, text)
    offer_rows: list[list[int]] = [[], [], [], []]
    for text in offers:
        k = kind(state, text)
        offer_rows[state.rules.kind_size[k] - 1].append(k)
    stand_counts = [0] * players
    for _name, (_g, owner) in (stands or {}).items():
        stand_counts[owner] += 1
    hand_rows = tuple(
        tuple(sorted(good(g) for g in h))
        for h in (hands or [["fish", "flower", "tomato"]] * players)
    )
    held_rows = tuple(tuple(RESTAURANT_SYNONYMS[r] for r in h) for h in (held or [[]] * players))
    ledger = tuple((m, 0, 0, 0, 0, 0) for m in (money if money is not None else [1] * players))
    return replace(
        state,
        board=tuple(board),
        entrances=tuple(entrances),
        hands=hand_rows,
        held=held_rows,
        stands=tuple(stand_counts),
        ledger=ledger,
        display=tuple(sorted(good(g) for g in display)),
        offers=tuple(tuple(sorted(row)) for row in offer_rows),
        pending=(),
        seat=seat,
    )


def play(state: rl.State, text: str) -> rl.State:
    return GAME.apply(state, GAME.parse(text, state))


def fame_parts(state: rl.State) -> tuple[int, int, int, int]:
    """A solo stage result read back: (earlier stages, this stage, master stroke, total)."""
    score = GAME.result(state).scores[0]
    values = {item.label.split(" (")[0].split(":")[0]: item.value for item in score.items}
    stage = next(v for k, v in values.items() if k.startswith("fame for stage"))
    return (
        values["fame from earlier stages"],
        stage,
        values["fame for the master stroke"],
        score.total,
    )
