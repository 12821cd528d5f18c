"""A dealt game's text record as a table game records it (`record.as_table_game`, issue 26):
the result kept for every game (Castello Methoni's missions recorded at the final scoring,
its draws left out, a redraw naming the hand), the input left as it was; and a move's
`detail` (what it takes by its place) names only what the rules let every viewer see
(Splendor, the Medici card game)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from tablelog.replay import record
from tablelog.replay.core import DEALT, SPECTATOR, TABLE, Game
from tablelog.replay.registry import all_games
from tablelog.v1 import castello_methoni_pb2 as castello_pb2
from tablelog.v1 import events_pb2, game_pb2
from tests.support.play import random_game

SEEDS = (1, 2, 5)
CONVERTED = ("castello-methoni", "medici", "medici-card-game", "mercado-de-lisboa", "splendor")


def _players(name: str) -> int:
    return max(all_games()[name].min_players, 2)


def _dealt_record(name: str, seed: int) -> tuple[record.GameRecord, game_pb2.GameResult]:
    played = random_game(name, _players(name), seed, mode=DEALT)
    text = record.write([record.record_of(played.position)])
    (dealt,) = record.read(text)
    return dealt, played.position.game.result(played.position.state)


def test_every_game_is_converted() -> None:
    assert set(all_games()) == set(CONVERTED)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("name", CONVERTED)
def test_a_dealt_record_as_a_table_game_keeps_the_result(name: str, seed: int) -> None:
    dealt, result = _dealt_record(name, seed)
    table = record.as_table_game(dealt)
    assert table.created.mode == TABLE
    assert table.status is dealt.status
    assert table.result is not None
    assert list(table.result.winners) == list(result.winners)
    assert [s.total for s in table.result.scores] == [s.total for s in result.scores]
    # Written and read back, the table game folds to the same result.
    (again,) = record.read(record.write([table]))
    assert again.result == table.result


@pytest.mark.parametrize("players", [3, 5])
def test_a_dealt_castello_record_brings_each_card_to_light_where_a_table_records_it(
    players: int,
) -> None:
    """Castello Methoni RULES.md §2, §4, §8-§9: the players' moves are kept, the hands and
    draws are left out, and the missions dealt at setup follow the move that ends the game,
    in seat order, as a table records them at the final scoring."""
    played = random_game("castello-methoni", players, 7, mode=DEALT)
    text = record.write([record.record_of(played.position)])
    (dealt,) = record.read(text)
    table = record.as_table_game(dealt)
    kinds = [m.move.castello_methoni.WhichOneof("action") for m in dealt.moves]
    missions = [m.notation for m in dealt.moves if m.notation.startswith("mission ")]
    assert kinds.count("mission") == players
    kept = [m.notation for m in dealt.moves if not m.notation.startswith(("mission ", "draw "))]
    assert [m.notation for m in table.moves] == [*kept, *missions]
    assert table.status is dealt.status
    assert table.result == dealt.result
    written = record.write([table])
    assert '[Mode "table"]' in written
    assert written.rstrip().splitlines()[-players:] == [f"* {m}" for m in missions]
    # The text a table would have typed reads back to the same game.
    (again,) = record.read(written)
    assert again.result == table.result


def test_a_castello_redraw_names_the_hand_it_reveals() -> None:
    """RULES.md §4, stuck hand: a dealt `redraw` (the server knows the hand) is the table's
    `redraw` naming the cards the hand held."""
    played = random_game("castello-methoni", 3, 7, mode=DEALT, keep_states=True)
    game = played.position.game
    first_play = next(
        i
        for i, m in enumerate(played.moves)
        if m.castello_methoni.WhichOneof("action") in ("build", "trade")
    )
    state = played.states[first_play]
    hand = state.hands[state.current]
    named = sorted(
        state.board.card_name(card).lower() for card, count in enumerate(hand) for _ in range(count)
    )
    redraw = castello_pb2.CastelloMethoniMove(redraw=castello_pb2.CastelloMethoniRedraw())
    found = game.undealt(redraw, state)
    assert isinstance(found, tuple)
    (table_redraw,) = found
    assert sorted(c.lower() for c in table_redraw.redraw.revealed) == named
    assert len(named) == 5
    assert game.format(table_redraw, state) == "redraw " + " ".join(
        c.lower() for c in table_redraw.redraw.revealed
    )


def test_as_table_game_leaves_its_input_unchanged_and_keeps_every_note() -> None:
    """Medici's first day opens with tiles removed unseen, which a table game leaves out
    (Medici RULES.md §B2): a note on one goes to the game as a whole; a note on a later
    removal goes to the move before it; the dealt record is not changed."""
    played = random_game("medici", 3, 1, mode=DEALT)
    revisions = [applied.revision for applied in played.position.moves()]
    kinds = [m.medici.WhichOneof("action") for m in played.moves]
    assert kinds[0] == "remove"
    later = next(i for i, kind in enumerate(kinds) if kind == "remove" and i > kinds.index("bid"))
    notes = [
        events_pb2.AnnotationAdded(revision=1, comment="the whole game"),
        events_pb2.AnnotationAdded(revision=revisions[0], comment="first removal"),
        events_pb2.AnnotationAdded(revision=revisions[later], comment="a later removal"),
        events_pb2.AnnotationAdded(revision=revisions[later - 1], comment="before it"),
    ]
    text = record.write([record.record_of(played.position, notes)])
    (dealt,) = record.read(text)
    before = copy.deepcopy(dealt)
    table = record.as_table_game(dealt)
    assert dealt == before
    assert [n.comment for n in table.opening] == ["the whole game", "first removal"]
    kept = [n.comment for m in table.moves for n in m.notes]
    assert kept == ["before it", "a later removal"]
    (host,) = [m for m in table.moves if m.notes]
    assert host.notation == played.notations[later - 1]
    # Converting once more gives the same record: nothing was appended to the input's lists.
    assert record.write([record.as_table_game(dealt)]) == record.write([table])


def _spectator_text(game: Game[Any, Any], state: Any) -> str:
    return game.render(game.view(state, SPECTATOR))


@pytest.mark.parametrize("mode", [TABLE, DEALT])
@pytest.mark.parametrize("seed", SEEDS)
def test_a_splendor_detail_names_a_card_the_viewer_may_see(
    seed: int, mode: game_pb2.Mode.ValueType
) -> None:
    """RULES.md §4B, §4D: a market card is face up; a reserved card is its holder's until
    it is bought face up; a blind reserve (§4C) has no detail."""
    played = random_game("splendor", 2, seed, mode=mode, keep_states=True)
    game = played.position.game
    named = 0
    for index, envelope in enumerate(played.moves):
        move, state = envelope.splendor, played.states[index]
        detail = game.detail(move, state)
        kind = move.WhichOneof("action")
        if kind == "reserve" and not move.reserve.slot:
            assert detail == ""
        if not detail:
            continue
        named += 1
        seen = _spectator_text(game, state)
        if kind == "buy" and move.buy.reserved:
            hand = f"h{move.buy.reserved}"
            holder = game.render(game.view(state, state.current))
            assert f"{hand} {detail}" in holder
            assert f"{hand} {detail}" in seen or f"{hand} [hidden" in seen
        else:
            place = move.buy if kind == "buy" else move.reserve
            level, slot = place.level, place.slot
            row = next(line for line in seen.splitlines() if line.startswith(f"Level {level} "))
            assert f" {slot}) {detail}" in row
    assert named


@pytest.mark.parametrize("mode", [TABLE, DEALT])
@pytest.mark.parametrize("seed", SEEDS)
def test_a_medici_card_game_detail_names_the_market_cards_taken(
    seed: int, mode: game_pb2.Mode.ValueType
) -> None:
    """RULES.md §A3 step 2: every market card is face up; `take` counts from the last."""
    played = random_game("medici-card-game", 2, seed, mode=mode, keep_states=True)
    game = played.position.game
    named = 0
    for index, envelope in enumerate(played.moves):
        move, state = envelope.medici_card_game, played.states[index]
        detail = game.detail(move, state)
        if move.WhichOneof("action") != "take":
            assert detail == ""
            continue
        named += 1
        seen = _spectator_text(game, state)
        row = next(line for line in seen.splitlines() if line.startswith("Market"))
        market = row.split(":", 1)[1].split()
        assert detail == " ".join(market[-p] for p in sorted(move.take.positions))
    assert named


def test_an_empty_detail_of_a_whole_text_names_nothing() -> None:
    """Medici, Mercado de Lisboa and Castello Methoni name what a move takes in its text."""
    for name in ("medici", "mercado-de-lisboa", "castello-methoni"):
        played = random_game(name, _players(name), 1)
        game = played.position.game
        for envelope, applied in zip(played.moves, played.position.moves(), strict=True):
            inner = played.position.table.unwrap(envelope)
            assert game.detail(inner, applied.before) == ""
