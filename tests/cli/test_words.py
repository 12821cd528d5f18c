"""The wording of results and events, as the CLI prints them and as the server's audit
says them: the same words from both."""

from __future__ import annotations

import pytest

from tablelog.service.recording.views import result_words as server_words
from tablelog.v1 import events_pb2, game_pb2
from tablelog_client.words import Narrator
from tablelog_client.words import result_words as client_words

PLAYERS = ["Ann", "Bob", "Cleo"]


def result(winners: list[int], totals: dict[int, int], tiebreak: str = "") -> game_pb2.GameResult:
    return game_pb2.GameResult(
        winners=winners,
        scores=[game_pb2.SeatScore(seat=s, total=t) for s, t in totals.items()],
        tiebreak=tiebreak,
    )


@pytest.mark.parametrize(
    ("given", "said"),
    [
        (result([0], {0: 16, 1: 15, 2: 9}), "Ann wins with 16; Bob 15, Cleo 9"),
        (result([2], {0: 3, 1: 12, 2: 15}), "Cleo wins with 15; Bob 12, Ann 3"),
        (result([0, 1], {0: 15, 1: 15, 2: 2}), "Ann (15) and Bob (15) share the win; Cleo 2"),
        (
            result([1], {0: 15, 1: 15}, "fewest development cards"),
            "Bob wins with 15; Ann 15 (tie-break: fewest development cards)",
        ),
        (result([1], {}), "Bob wins"),
        (result([], {0: 31}), "nobody wins; Ann 31"),
    ],
)
def test_results_by_name_with_scores(given: game_pb2.GameResult, said: str) -> None:
    assert client_words(given, PLAYERS) == said
    assert server_words(given, PLAYERS) == said


def moved(revision: int, notation: str, *, dealt: bool = False) -> events_pb2.Event:
    recorded = events_pb2.MoveRecorded(notation=notation, dealt=dealt, hidden=dealt)
    return events_pb2.Event(revision=revision, move_recorded=recorded)


def test_a_narrator_names_movers_from_the_state_before_and_keeps_hidden_moves_hidden() -> None:
    narrator = Narrator(PLAYERS, game_pb2.ToMove(seat=1))
    assert narrator.describe(moved(5, "take w u g")) == "Bob: take w u g"
    narrator.follow(game_pb2.ToMove(chance=True))
    assert narrator.describe(moved(6, "reveal 1.2 1w0:u1")) == "table: reveal 1.2 1w0:u1"
    assert narrator.describe(moved(7, "(hidden)", dealt=True)) == ("the server dealt (hidden)")
    narrator.to_move = None  # a watch joined mid-game: nobody is guessed
    assert narrator.describe(moved(8, "pass")) == "pass"
    undo = events_pb2.Event(revision=9, move_undone=events_pb2.MoveUndone(undone_revision=5))
    assert narrator.describe(undo) == "undid Bob's take w u g (revision 5)"
    redo = events_pb2.Event(revision=10, move_redone=events_pb2.MoveRedone(redone_revision=7))
    assert narrator.describe(redo) == "redid the deal (hidden) (revision 7)"


def test_an_amendment_names_the_move_it_replaces_and_who_made_it() -> None:
    narrator = Narrator(PLAYERS, game_pb2.ToMove(seat=1))
    recorded = events_pb2.Event(
        revision=17, move_recorded=events_pb2.MoveRecorded(notation="take w u g")
    )
    assert narrator.describe(recorded) == "Bob: take w u g"

    def amended(revision: int, **body: object) -> events_pb2.Event:
        return events_pb2.Event(
            revision=revision,
            move_amended=events_pb2.MoveAmended(amended_revision=17, **body),  # type: ignore[arg-type]
        )

    replace = amended(
        30,
        kind=events_pb2.AMEND_KIND_REPLACE,
        notation="take w u k",
        removed_notation="take w u g",
        reason="typo",
    )
    assert narrator.describe(replace) == (
        "amended Bob's take w u g (revision 17) → take w u k (typo)"
    )
    insert = amended(31, kind=events_pb2.AMEND_KIND_INSERT, notation="take r r")
    assert narrator.describe(insert) == (
        "inserted Bob's take r r before Bob's take w u g (revision 17)"
    )
    dropped = amended(
        32,
        kind=events_pb2.AMEND_KIND_DELETE,
        removed_notation="take w u g",
        dropped_from_revision=20,
        dropped_moves=3,
    )
    assert narrator.describe(dropped) == (
        "deleted Bob's take w u g (revision 17); dropped 3 later moves from revision 20, "
        "which no longer applied"
    )
    # An undo of the move an amendment put in names it.
    undone = events_pb2.Event(revision=33, move_undone=events_pb2.MoveUndone(undone_revision=30))
    assert narrator.describe(undone) == "undid Bob's take w u k (revision 30)"
    # A narrator that never saw revision 17 names it by what the event says.
    stranger = Narrator(PLAYERS)
    assert stranger.describe(replace) == "amended take w u g (revision 17) → take w u k (typo)"


def test_a_move_whose_number_is_known_is_named_by_it_beside_its_revision() -> None:
    """The answers to changes number the move they undo, redo or amend as `history` does
    (issue 26, one way to count); an amendment's move is listed as a recorded one is."""
    narrator = Narrator(PLAYERS, game_pb2.ToMove(seat=1))
    narrator.describe(moved(17, "take w u g"))
    narrator.numbers[17] = 2
    undo = events_pb2.Event(revision=18, move_undone=events_pb2.MoveUndone(undone_revision=17))
    assert narrator.describe(undo) == "undid 2. Bob's take w u g (revision 17)"
    redo = events_pb2.Event(revision=19, move_redone=events_pb2.MoveRedone(redone_revision=17))
    assert narrator.describe(redo) == "redid 2. Bob's take w u g (revision 17)"
    replace = events_pb2.Event(
        revision=20,
        move_amended=events_pb2.MoveAmended(
            amended_revision=17, kind=events_pb2.AMEND_KIND_REPLACE, notation="buy 1.3"
        ),
    )
    assert narrator.describe(replace, "1k0:g3") == (
        "amended 2. Bob's take w u g (revision 17) → buy 1.3 (1k0:g3)"
    )
    assert narrator.listed[20] == "Bob: buy 1.3 (1k0:g3)"
