"""Who may see what: every cell of the entitlement decision (role x bound seats x revealed x
the viewer asked for), and when a game reveals everything to everyone."""

from __future__ import annotations

import itertools

import grpc
import pytest

from tablelog.replay import fold as folding
from tablelog.replay.core import DEALT, FULL, SPECTATOR, TABLE, Viewer
from tablelog.replay.registry import all_games
from tablelog.service import errors
from tablelog.service.access.identity import Role
from tablelog.service.errors import InvalidRequest, PermissionDenied
from tablelog.service.recording.entitlement import NOT_ASKED, Asked, entitled_viewer, viewer_for
from tablelog.service.recording.views import reveals_all, viewer_message, viewer_of
from tablelog.v1 import game_pb2, service_pb2
from tests.support.play import random_game

SEATINGS: tuple[frozenset[int], ...] = (frozenset(), frozenset({0}), frozenset({1, 2}))
ASKED: tuple[Asked, ...] = (NOT_ASKED, FULL, SPECTATOR, 0, 1, 2, 3)


def expected(role: Role, seats: frozenset[int], revealed: bool, asked: Asked) -> Viewer | str:
    """The cell as the rules of issue 12 state it: the viewer granted, or "denied"."""
    if revealed or role is Role.OWNER:
        return FULL if asked is NOT_ASKED else asked
    if role is Role.PLAYER and seats:
        if asked is NOT_ASKED:
            return min(seats)
        return asked if asked == SPECTATOR or asked in seats else "denied"
    if asked is NOT_ASKED or asked == SPECTATOR:
        return SPECTATOR
    return "denied"


CELLS = list(itertools.product(Role, SEATINGS, (False, True), ASKED))


@pytest.mark.parametrize(("role", "seats", "revealed", "asked"), CELLS)
def test_every_cell(role: Role, seats: frozenset[int], revealed: bool, asked: Asked) -> None:
    want = expected(role, seats, revealed, asked)
    if want == "denied":
        with pytest.raises(PermissionDenied) as info:
            viewer_for(role, seats, revealed, asked)
        refusal = errors.refusal(info.value)
        assert refusal.code == grpc.StatusCode.PERMISSION_DENIED
        assert refusal.reason == "VIEW_NOT_ALLOWED"
        assert refusal.metadata["asked"] == ("full" if asked is FULL else f"seat {asked}")
        assert "spectator" in refusal.metadata["allowed"]
        assert "full" not in refusal.metadata["allowed"]
    else:
        assert viewer_for(role, seats, revealed, asked) == want


def test_the_table_has_every_cell() -> None:
    assert len(CELLS) == len(Role) * len(SEATINGS) * 2 * len(ASKED) == 168


@pytest.mark.parametrize(
    ("role", "seats", "asked", "granted"),
    [
        (Role.OWNER, (), NOT_ASKED, FULL),
        (Role.OWNER, (), 2, 2),
        (Role.OWNER, (), SPECTATOR, SPECTATOR),
        (Role.RECORDER, (), NOT_ASKED, SPECTATOR),
        (Role.PLAYER, (1,), NOT_ASKED, 1),
        (Role.PLAYER, (2, 0), NOT_ASKED, 0),
        (Role.PLAYER, (2, 0), 2, 2),
        (Role.PLAYER, (1,), SPECTATOR, SPECTATOR),
        (Role.PLAYER, (), NOT_ASKED, SPECTATOR),
        (Role.SPECTATOR, (), NOT_ASKED, SPECTATOR),
    ],
)
def test_granted_views_by_example(
    role: Role, seats: tuple[int, ...], asked: Asked, granted: Viewer
) -> None:
    assert viewer_for(role, seats, False, asked) == granted


@pytest.mark.parametrize(
    ("role", "seats", "asked", "allowed"),
    [
        (Role.RECORDER, (), FULL, "spectator"),
        (Role.RECORDER, (), 0, "spectator"),
        (Role.PLAYER, (1,), 0, "seat 1, spectator"),
        (Role.PLAYER, (1,), FULL, "seat 1, spectator"),
        (Role.PLAYER, (0, 2), 1, "seat 0, seat 2, spectator"),
        (Role.SPECTATOR, (), FULL, "spectator"),
    ],
)
def test_asking_for_more_is_refused_and_says_what_is_allowed(
    role: Role, seats: tuple[int, ...], asked: Asked, allowed: str
) -> None:
    with pytest.raises(PermissionDenied) as info:
        viewer_for(role, seats, False, asked)
    assert info.value.metadata["allowed"] == allowed
    assert role.value in info.value.message


@pytest.mark.parametrize("viewer", [FULL, SPECTATOR, 0, 3])
def test_a_decided_viewer_goes_into_a_request_and_back(viewer: Viewer) -> None:
    assert viewer_of(viewer_message(viewer), ["Ann", "Bob", "Cleo", "Dan"]) == viewer


def test_once_revealed_everyone_gets_the_full_view_unasked() -> None:
    for role in Role:
        assert viewer_for(role, (), True) is FULL
        assert viewer_for(role, (), True, 1) == 1


# ---------------------------------------------------------------- when everything shows


def _played(game: str, players: int, mode: game_pb2.Mode.ValueType) -> folding.Position:
    """A whole random game, its last move recorded but no GameEnded yet."""
    return random_game(game, players, seed=3, mode=mode).position


def _ended(position: folding.Position) -> folding.Position:
    return folding.end(position, position.game.result(position.state))


PLAYERS = {
    "splendor": 2,
    "medici": 3,
    "medici-card-game": 2,
    "mercado-de-lisboa": 2,
    "castello-methoni": 3,
}


@pytest.mark.parametrize("name", sorted(PLAYERS))
def test_a_dealt_game_over_reveals_all_a_game_in_progress_never(name: str) -> None:
    game = all_games()[name]
    for mode in (mode for mode in (TABLE, DEALT) if mode in game.modes):
        played = _played(name, PLAYERS[name], mode)
        assert not reveals_all(played)
        ended = _ended(played)
        abandoned = folding.end(played, game_pb2.GameResult(), abandoned=True)
        if mode == DEALT:
            # GameEnded and GameAbandoned both publish the seed of every dealt outcome.
            assert reveals_all(ended)
            assert reveals_all(abandoned)
        else:
            assert reveals_all(ended) is game.reveals_all_at_end
            assert not reveals_all(abandoned)
            # A table game reopened by taking back its last move hides again.
            assert not reveals_all(folding.undo(ended))


def test_only_splendor_keeps_a_secret_after_its_end() -> None:
    """RULES.md E13: an unbought blind reserve stays hidden; every other game's rules show
    everything recorded by its end."""
    keeps = sorted(name for name, game in all_games().items() if not game.reveals_all_at_end)
    assert keeps == ["splendor"]


def test_a_request_is_checked_against_the_head() -> None:
    ended = _ended(_played("splendor", 2, DEALT))
    ongoing = folding.undo(_ended(_played("splendor", 2, TABLE)))
    full = service_pb2.Viewer(full=True)
    assert entitled_viewer(ended, Role.SPECTATOR, (), full) is FULL
    assert entitled_viewer(ended, Role.SPECTATOR, (), None) is FULL
    assert entitled_viewer(ongoing, Role.PLAYER, (1,), None) == 1
    assert entitled_viewer(ongoing, Role.PLAYER, (1,), service_pb2.Viewer()) == 1
    with pytest.raises(PermissionDenied):
        entitled_viewer(ongoing, Role.SPECTATOR, (), full)
    with pytest.raises(InvalidRequest):
        entitled_viewer(ongoing, Role.OWNER, (), service_pb2.Viewer(seat=2))
