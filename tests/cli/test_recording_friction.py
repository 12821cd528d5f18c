"""The rest of what a new recorder met (issue 16, items 4 and 5), each against a live
server: a typo is a typo at any version, annotations anchor to moves, seats are named in
every refusal, option errors say what an option takes, and one line records one table
event."""

from __future__ import annotations

import grpc
import pytest

from tablelog.replay.core import seats_named
from tablelog.service.api.server import BackgroundServer
from tablelog_client import Client, TablelogError
from tests.cli.test_cli import new_game, tablelog
from tests.service.helpers import splendor_line

pytestmark = pytest.mark.slow


def test_a_typo_is_reported_as_a_typo_even_when_the_version_is_stale(
    server: BackgroundServer, client: Client
) -> None:
    game_id = new_game(server)
    line = splendor_line(seed=7)
    tablelog(server, "move", game_id, line[0])
    client.record(game_id, line[1])  # another recorder: this terminal is now stale
    typo = tablelog(server, "move", game_id, "tkae w u g", ok=False)
    assert typo.returncode == 1
    assert typo.stderr.splitlines()[0] == (
        "error: 'tkae' is not a Splendor move: use take, reserve, buy, pass, return, noble or "
        "reveal. (Also, the game has moved on since: you saw version 2, it is now at version 3.)"
    )
    assert "INVALID_NOTATION current_version=3 expected_version=2" in typo.stderr
    # A well-formed move at the stale version is still refused as stale, naming the version.
    stale = tablelog(server, "move", game_id, line[2], ok=False)
    assert "it is now at version 3" in stale.stderr
    assert "STALE_VERSION" in stale.stderr
    with pytest.raises(TablelogError) as refused:
        client.record(game_id, "buy 9.9.9", expected_version=2)
    assert refused.value.reason == "INVALID_NOTATION"
    assert client.get_game(game_id).version == 3  # nothing was recorded


def test_undo_redo_and_the_end_cannot_be_annotated(
    server: BackgroundServer, client: Client
) -> None:
    game_id = new_game(server)
    line = splendor_line(seed=5)
    for text in line[:3]:
        client.record(game_id, text)  # revisions 2-4
    client.undo(game_id)  # revision 5 takes back revision 4
    client.redo(game_id)  # revision 6 re-applies it
    with pytest.raises(TablelogError) as undo:
        client.annotate(game_id, "a slip", revision=5)
    assert undo.value.code == grpc.StatusCode.INVALID_ARGUMENT
    assert undo.value.reason == "NOT_A_MOVE"
    assert undo.value.message == (
        "Revision 5 is an undo (of revision 4), not a move: annotations anchor to moves. "
        "Annotate revision 4, the move it took back."
    )
    assert undo.value.metadata["move_revision"] == "4"
    said = tablelog(server, "annotate", game_id, "--revision", "6", "nice", ok=False)
    assert said.stderr.startswith(
        "error: Revision 6 is a redo (of revision 4), not a move: annotations anchor to moves. "
        "Annotate revision 4, the move it re-applied."
    )
    assert client.annotations(game_id) == []  # nothing was added
    # A move and the creation can be; by default the last move in effect is.
    assert client.annotate(game_id, "good", revision=4).revision == 4
    assert client.annotate(game_id, "setup", revision=1).revision == 1
    client.undo(game_id)
    assert client.annotate(game_id, "the last move now").revision == 3
    client.abandon(game_id, reason="rain")
    with pytest.raises(TablelogError) as ended:
        client.annotate(game_id, "x", revision=client.get_game(game_id).version)
    assert ended.value.reason == "NOT_A_MOVE"
    assert "is the end of the game" in ended.value.message


def test_seats_are_named_in_every_refusal(server: BackgroundServer, client: Client) -> None:
    game_id = new_game(server, "--mode", "dealt")
    with pytest.raises(TablelogError) as viewer:
        client.state(game_id, seat=5)
    assert (
        viewer.value.message == "There is no seat 5: the players are Ann (seat 0) and Bob (seat 1)."
    )
    with pytest.raises(TablelogError) as mover:
        client.record(game_id, "take w u g", seat=3)
    assert (
        mover.value.message == "There is no seat 3: the players are Ann (seat 0) and Bob (seat 1)."
    )
    assert mover.value.metadata["rule"] == "UNKNOWN_SEAT"
    replay = tablelog(server, "replay", game_id, "--all", "--seat", "7", ok=False)
    assert "There is no seat 7: the players are Ann (seat 0) and Bob (seat 1)." in replay.stderr


@pytest.mark.parametrize(
    ("game", "players"),
    [
        ("splendor", ["Ann", "Bob"]),
        ("medici", ["Ann", "Bob", "Cy"]),
        ("medici-card-game", ["Ann", "Bob"]),
        ("mercado-de-lisboa", ["Ann", "Bob"]),
        ("castello-methoni", ["Ann", "Bob", "Cy"]),
    ],
)
def test_a_first_player_past_the_players_is_refused_naming_them(
    server: BackgroundServer, game: str, players: list[str]
) -> None:
    refused = tablelog(server, "new", game, *players, "--option", "first_player=5", ok=False)
    named = seats_named(players)
    assert refused.stderr.splitlines()[0] == (
        f"error: first_player is seat 5, but the players are {named}."
    )
    assert named.endswith(f"and {players[-1]} (seat {len(players) - 1})")


def test_option_docs_speak_of_players_not_zero_based_seats(server: BackgroundServer) -> None:
    listed = tablelog(server, "games").stdout
    assert "0-based" not in listed
    assert "--option first_player=... (default the first player named)  The player who" in listed


@pytest.mark.parametrize(
    ("option", "said"),
    [
        (
            'campaign={"stage": 1}',
            "option campaign: '{\"stage\": 1}' is not a JSON object with keys from: name, stages",
        ),
        (
            "campaign=[1]",
            "option campaign: '[1]' is not a JSON object with keys from: name, stages",
        ),
    ],
)
def test_an_object_option_names_its_keys(server: BackgroundServer, option: str, said: str) -> None:
    refused = tablelog(server, "new", "mercado-de-lisboa", "Ann", "--option", option, ok=False)
    assert refused.returncode == 2
    assert refused.stderr.strip() == f"error: bad --option: {said}"


def test_a_list_option_says_what_its_items_are(server: BackgroundServer) -> None:
    refused = tablelog(
        server, "new", "medici-card-game", "Ann", "Bob", "--option", 'ship_rewards=[1, "a"]',
        ok=False,
    )  # fmt: skip
    assert refused.stderr.strip() == (
        "error: bad --option: option ship_rewards: '[1, \"a\"]' is not a JSON list of whole numbers"
    )


def test_one_line_records_one_table_event_as_its_moves(
    server: BackgroundServer, client: Client
) -> None:
    game = client.create_game("medici-card-game", ["Ann", "Bob"])
    client.record(game.game_id, "reveal cloth4")
    said = tablelog(server, "move", game.game_id, "flip fur4").stdout.splitlines()
    assert said[:2] == ["1. Ann: flip  (revision 3)", "table: reveal fur4  (revision 4)"]
    recorded = [e.move_recorded.notation for e in client.export(game.game_id)][-2:]
    assert recorded == ["flip", "reveal fur4"]
    # A line whose second move is refused records nothing.
    client.record(game.game_id, "take 1 2")
    version = client.get_game(game.game_id).version
    with pytest.raises(TablelogError) as refused:
        client.record(game.game_id, "flip cloth99")
    assert refused.value.reason == "INVALID_NOTATION"
    assert client.get_game(game.game_id).version == version


def test_the_replay_counts_in_revisions_and_goes_to_one_by_number(
    server: BackgroundServer, client: Client
) -> None:
    game_id = new_game(server)
    for text in splendor_line(seed=3)[:17]:  # the setup's 15 reveals (revisions 2-16), 2 more
        client.record(game_id, text)
    client.annotate(game_id, "shares its move's revision", revision=17)
    stepped = tablelog(server, "replay", game_id, "--step", stdin="\n17\np\n9\nq\n").stdout
    screens = stepped.split("\033[2J\033[H")[1:]  # each step clears the screen first
    assert [screen.split(":")[0] for screen in screens] == [
        "revision 1/18",
        "revisions 2 to 16/18",  # the setup is one step, as `watch` and `history` fold it
        "revision 17/18",
        "revisions 2 to 16/18",
        "revisions 2 to 16/18",  # a revision inside the setup goes to it
    ]


def test_a_move_put_in_by_an_amendment_is_annotated_and_a_deletion_is_not(
    server: BackgroundServer, client: Client
) -> None:
    game_id = new_game(server)
    line = splendor_line(seed=5)
    for text in line[:3]:
        client.record(game_id, text)  # revisions 2-4
    replaced = client.amend(game_id, 3, line[1])  # revision 5: the same move, put in again
    put_in = replaced.events[-1].revision
    assert client.annotate(game_id, "fixed at the table", revision=put_in).revision == put_in
    deleted = client.amend(game_id, 4, change="delete")  # revision 6 takes out revision 4
    gone = deleted.events[-1].revision
    with pytest.raises(TablelogError) as deletion:
        client.annotate(game_id, "x", revision=gone)
    assert deletion.value.reason == "NOT_A_MOVE"
    assert deletion.value.message.startswith(
        f"Revision {gone} is a deletion (of revision 4), not a move"
    )
    assert deletion.value.metadata["move_revision"] == str(put_in)
