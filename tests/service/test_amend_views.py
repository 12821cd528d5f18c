"""What a viewer is sent of a MoveAmended: like a recorded move, an amendment that puts in
or takes out a move the viewer may not see keeps its place, revision and hashes but not
the moves. No move an amendment can touch is hidden in today's games (hidden moves are
dealt mode's chance moves, which are never amended), so the game's `visible_to` is made to
hide one here: the contract holds for whatever a game hides."""

from __future__ import annotations

from typing import Any

import pytest

from tablelog.replay import fold as folding
from tablelog.replay.core import DEALT, FULL, SPECTATOR, IllegalMove
from tablelog.service.recording.amending import breaking_refusal
from tablelog.service.recording.views import HIDDEN_MOVE, replay_item
from tablelog.v1 import events_pb2
from tests.service.helpers import splendor_line
from tests.service.test_amend import record_fresh
from tests.support.play import random_game

SEED = 21


def _amendment(kind: int) -> tuple[folding.Position, folding.Amended, events_pb2.Event]:
    before = record_fresh(splendor_line(SEED)[:30]).position
    target = before.moves()[-2]
    move = target.move if kind != folding.DELETE else None
    amended = folding.amend(before, kind, target.revision, move)
    event = events_pb2.Event(
        sequence=before.sequence + 1,
        revision=before.revision + 1,
        move_amended=events_pb2.MoveAmended(
            amended_revision=target.revision,
            kind=kind,  # type: ignore[arg-type]
            move=move,
            notation=amended.notation,
            removed_notation=amended.removed.notation if amended.removed else "",
        ),
    )
    return before, amended, event


@pytest.mark.parametrize("kind", [folding.REPLACE, folding.INSERT, folding.DELETE])
def test_an_amendment_of_a_hidden_move_is_hidden_from_other_viewers(
    kind: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    before, amended, event = _amendment(kind)
    hidden = before.moves()[-2].move
    game: Any = before.game

    def visible_to(move: Any, state: Any, viewer: Any) -> bool:
        return viewer is FULL or viewer == 0 or before.table.wrap(move) != hidden

    monkeypatch.setattr(game, "visible_to", visible_to)
    others: tuple[int, ...] = (SPECTATOR, 1)
    for viewer in others:
        shown = replay_item(event, before, amended.position, viewer).event.move_amended
        assert shown.hidden
        assert not shown.HasField("move")
        assert shown.notation == HIDDEN_MOVE
        assert shown.removed_notation == HIDDEN_MOVE
        assert shown.amended_revision == event.move_amended.amended_revision
    entitled: tuple[int | None, ...] = (FULL, 0)
    for seen_by in entitled:
        assert replay_item(event, before, amended.position, seen_by).event == event


def test_an_amendment_of_public_moves_is_shown_to_everyone() -> None:
    before, amended, event = _amendment(folding.REPLACE)
    assert replay_item(event, before, amended.position, SPECTATOR).event == event


def test_a_refused_amendment_names_a_hidden_breaking_move_only_by_its_revision() -> None:
    """AMEND_BREAKS_LATER_MOVE names the first later move that no longer applies; when that
    move dealt another seat a hidden card (a blind reserve in dealt mode), a caller who may
    not see it is told its revision only: neither its notation nor the rule's words, which
    could name the card. The full view is told everything."""
    for seed in range(40):
        played = random_game("splendor", 2, seed, mode=DEALT)
        position = played.position
        hidden = [
            applied
            for applied in position.moves()
            if not position.table.game.visible_to(
                position.table.unwrap(applied.move), applied.before, SPECTATOR
            )
        ]
        if hidden:
            break
    else:
        pytest.fail("no dealt Splendor game of 40 dealt a blind reserve")
    dealt = hidden[0]
    broken = folding.TailBreak(dealt, IllegalMove("NO_SUCH_CARD", f"no {dealt.notation}"), 3)
    refused = breaking_refusal(2, position.table, broken, SPECTATOR)
    assert refused.metadata["notation"] == HIDDEN_MOVE
    assert dealt.notation not in refused.message
    assert dealt.notation not in str(refused.metadata)
    assert refused.metadata["rule"] == "NO_SUCH_CARD"
    told = breaking_refusal(2, position.table, broken, FULL)
    assert told.metadata["notation"] == dealt.notation
    assert f"no {dealt.notation}" in told.message
