"""Variations through a live server on real Redis: added with an annotation (checked by the
rules, typed and written canonically), listed, described in the audit, refused by path,
notation and rule with nothing stored, bounded before any work, replayed (the same states
as recording the line in a fresh game), held to the hidden-information rule, and kept by
an annotation an amendment orphans."""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from functools import partial

import grpc
import pytest
from google.rpc import error_details_pb2  # type: ignore[import-untyped]

from tablelog.replay import fold as folding
from tablelog.replay.core import TERMINAL, RulesError
from tablelog.service.limits import MAX_VARIATION_DEPTH, MAX_VARIATION_MOVES
from tablelog.v1 import events_pb2, service_pb2, service_pb2_grpc
from tablelog.v1 import mercado_de_lisboa_pb2 as mercado_pb2
from tablelog_client import Client, TablelogError
from tablelog_client.sdk import variation_of, variation_path
from tests.service.helpers import OWNER_NAME, refused, rpc_refused, splendor_line
from tests.support.play import choose, new_position

PLAYERS = ["Ann", "Bob"]
LINE = splendor_line(seed=31)
RECORDED = 24
"""Moves recorded (12 setup reveals, then play)."""
ANCHOR = 20
"""The annotated move's revision: LINE[ANCHOR - 2], a player's move."""


def recorded_game(client: Client) -> str:
    game = client.create_game("splendor", PLAYERS)
    version = game.version
    for notation in LINE[:RECORDED]:
        version = client.record(game.game_id, notation, expected_version=version).game.version
    return game.game_id


def before_anchor(anchor: int = ANCHOR) -> folding.Position:
    """The position before the move recorded at `anchor`, by the rules core alone."""
    position = new_position("splendor", PLAYERS)
    for text in LINE[: anchor - 2]:
        inner = position.game.parse(text, position.state)
        position = folding.record(position, position.table.wrap(inner), text)
    return position


def alternative_line(position: folding.Position, length: int, seed: int) -> list[str]:
    """`length` random legal moves from `position`, the first unlike the game's own."""
    rng = random.Random(seed)
    texts: list[str] = []
    while len(texts) < length and position.to_move() != TERMINAL:
        inner = choose(position.game, position.state, rng)
        text = position.game.format(inner, position.state)
        if not texts and text == LINE[position.move_count]:
            continue
        texts.append(text)
        position = folding.record(position, position.table.wrap(inner), text)
    return texts


def after(position: folding.Position, texts: Sequence[str]) -> folding.Position:
    for text in texts:
        inner = position.game.parse(text, position.state)
        position = folding.record(position, position.table.wrap(inner), text)
    return position


def first_refusal(position: folding.Position, texts: Sequence[str]) -> tuple[int, RulesError]:
    """The number (from 1) of the first of `texts` the rules refuse from `position`, and
    the refusal."""
    for number, text in enumerate(texts, 1):
        try:
            position = after(position, [text])
        except RulesError as refusal:
            return number, refusal
    raise AssertionError("every move was legal")


def stored_events(client: Client, game_id: str) -> int:
    return len(client.audit(game_id))


def test_a_variation_is_checked_stored_listed_and_described(client: Client) -> None:
    game_id = recorded_game(client)
    start = before_anchor()
    line = alternative_line(start, 4, seed=1)
    nested = alternative_line(after(start, line[:1]), 2, seed=2)
    # Lenient input: spacing and case as a person types them; the server writes canon.
    typed = [f"  {line[0].upper()}  ", *line[1:]]
    note = client.annotate(
        game_id, "too slow", glyph="?!", revision=ANCHOR, variation=[*typed[:2], nested, *typed[2:]]
    )
    assert note.revision == ANCHOR
    assert [m.notation for m in note.variation.moves] == line
    assert [m.notation for m in note.variation.moves[1].variations[0].moves] == nested
    position = start
    for move in note.variation.moves:  # typed moves, each legal where it stands
        position = folding.record(position, move.move, move.notation)
    listed = {n.annotation_id: n for n in client.annotations(game_id)}[note.annotation_id]
    assert listed.variation == note.variation
    words = client.audit(game_id)[-1].summary
    assert words == (
        f"{OWNER_NAME} annotated revision {ANCHOR} with a variation: {', '.join(line)} "
        "(and 1 alternative line) (?! too slow)"
    )
    # A variation alone is an annotation; revision 0 pins it to the last move.
    alone = client.annotate(
        game_id, variation=alternative_line(before_anchor(RECORDED + 1), 2, seed=3)
    )
    assert alone.revision == RECORDED + 1
    assert alone.comment == ""


def test_a_variation_of_the_whole_game_replaces_its_first_move(client: Client) -> None:
    game_id = recorded_game(client)
    reveal = alternative_line(before_anchor(2), 1, seed=4)
    note = client.annotate(game_id, "another opening card", revision=1, variation=reveal)
    assert [m.notation for m in note.variation.moves] == reveal
    frames = frames_of(client, game_id, variation=note.annotation_id)
    assert [(f.event.revision, f.variation_move) for f in frames] == [(1, 0), (1, 1)]
    assert list(frames[-1].state.moves) == reveal


def test_a_replay_into_a_variation_is_bounded(
    stub: service_pb2_grpc.TablelogServiceStub, client: Client
) -> None:
    game_id = recorded_game(client)
    for asked, field in (
        (service_pb2.VariationPath(annotation_id="a", line=[3]), "variation.line"),
        (service_pb2.VariationPath(annotation_id="a", line=[0, 1]), "variation.line"),
        (service_pb2.VariationPath(annotation_id="a" * 65), "variation.annotation_id"),
    ):
        request = service_pb2.ReplayGameRequest(game_id=game_id, variation=asked)
        code, details = rpc_refused(partial(list, stub.ReplayGame(request)))
        assert code == grpc.StatusCode.INVALID_ARGUMENT
        bad = next(d for d in details if isinstance(d, error_details_pb2.BadRequest))
        assert bad.field_violations[0].field == field
    request = service_pb2.ReplayGameRequest(
        game_id=game_id, to_revision=3, variation=service_pb2.VariationPath(annotation_id="a")
    )
    code, _ = rpc_refused(partial(list, stub.ReplayGame(request)))
    assert code == grpc.StatusCode.INVALID_ARGUMENT
    missing = refused(lambda: frames_of(client, game_id, variation="nosuchnote"))
    assert missing.reason == "ANNOTATION_NOT_FOUND"


def test_an_illegal_move_is_refused_by_path_notation_and_rule_and_nothing_is_stored(
    client: Client,
) -> None:
    game_id = recorded_game(client)
    start = before_anchor()
    line = alternative_line(start, 2, seed=5)
    illegal = "take w w"
    stored = stored_events(client, game_id)
    # Two tokens of one colour, twice in a row: at the latest the second finds fewer than
    # four in the bank. The rules core alone says which move breaks which rule.
    number, rule = first_refusal(after(start, line), [illegal, illegal])
    error = refused(
        lambda: client.annotate(game_id, "x", revision=ANCHOR, variation=[*line, illegal, illegal])
    )
    assert error.code == grpc.StatusCode.FAILED_PRECONDITION
    assert error.reason == "ILLEGAL_VARIATION_MOVE"
    assert error.metadata["path"] == str(len(line) + number)
    assert error.metadata["notation"] == illegal
    assert error.metadata["rule"] == rule.code
    assert str(error) == f"Move {len(line) + number} of the variation ({illegal}): {rule.message}"
    nested_error = refused(
        lambda: client.annotate(
            game_id, "x", revision=ANCHOR, variation=[line[0], ["not a move at all"]]
        )
    )
    assert nested_error.code == grpc.StatusCode.INVALID_ARGUMENT
    assert nested_error.reason == "INVALID_NOTATION"
    assert nested_error.metadata["path"] == "1.1:1"
    assert str(nested_error).startswith("Move 1 of line 1.1 of the variation (not a move at all)")
    assert stored_events(client, game_id) == stored
    assert not client.annotations(game_id)


def test_a_variation_is_bounded_before_any_move_is_read(client: Client) -> None:
    game_id = recorded_game(client)
    too_long = ["not a move"] * (MAX_VARIATION_MOVES + 1)
    error = refused(lambda: client.annotate(game_id, "x", variation=too_long))
    assert (error.code, error.reason) == (grpc.StatusCode.INVALID_ARGUMENT, "INVALID_REQUEST")
    assert "at most" in str(error)
    deep: list[object] = ["not a move"]
    for _ in range(MAX_VARIATION_DEPTH):
        deep = ["not a move", deep]
    error = refused(lambda: client.annotate(game_id, "x", variation=deep))  # type: ignore[arg-type]
    assert error.reason == "INVALID_REQUEST"
    assert f"{MAX_VARIATION_DEPTH} lines deep" in str(error)
    huge = events_pb2.Variation()
    huge.moves.add(notation="x" * 201)
    error = refused(lambda: client.annotate(game_id, "x", variation=huge))
    assert error.reason == "INVALID_REQUEST"
    assert not client.annotations(game_id)


def frames_of(
    client: Client, game_id: str, **kwargs: object
) -> list[service_pb2.ReplayGameResponse]:
    return list(client.replay(game_id, **kwargs))  # type: ignore[arg-type]


def test_replaying_a_variation_gives_the_states_of_recording_it_afresh(client: Client) -> None:
    game_id = recorded_game(client)
    start = before_anchor()
    line = alternative_line(start, 5, seed=6)
    nested = alternative_line(after(start, line[:2]), 3, seed=7)
    note = client.annotate(
        game_id, "what if", revision=ANCHOR, variation=[*line[:3], nested, *line[3:]]
    )
    frames = frames_of(client, game_id, variation=note.annotation_id)
    main = [f for f in frames if not f.HasField("variation")]
    steps = [f for f in frames if f.HasField("variation")]
    assert max(f.event.revision for f in main) == ANCHOR - 1
    assert [f.event.move_recorded.notation for f in steps] == line
    assert [f.variation_move for f in steps] == [1, 2, 3, 4, 5]
    assert all(f.event.sequence == 0 and f.event.revision == ANCHOR for f in steps)
    fresh = client.create_game("splendor", PLAYERS).game_id
    for text in [*LINE[: ANCHOR - 2], *line]:
        client.record(fresh, text)
    expected = frames_of(client, fresh)[-len(line) :]
    assert [f.state.view for f in steps] == [f.state.view for f in expected]
    assert [list(f.state.moves) for f in steps] == [list(f.state.moves) for f in expected]
    # Into the nested line: the variation's moves 1 and 2, then the alternative to move 3.
    branch = frames_of(client, game_id, variation=f"{note.annotation_id}/3.1")
    branch_steps = [f for f in branch if f.HasField("variation")]
    assert [f.event.move_recorded.notation for f in branch_steps] == nested
    assert list(branch_steps[0].variation.line) == [3, 1]
    assert list(branch_steps[-1].state.moves)[-len(nested) - 2 :] == [*line[:2], *nested]
    missing = refused(lambda: frames_of(client, game_id, variation=f"{note.annotation_id}/1.1"))
    assert missing.code == grpc.StatusCode.NOT_FOUND
    assert "its lines there are 3.1" in str(missing)
    plain = client.annotate(game_id, "no line", revision=ANCHOR)
    none = refused(lambda: frames_of(client, game_id, variation=plain.annotation_id))
    assert none.reason == "VARIATION_NOT_FOUND"


def test_a_variation_where_the_game_hides_something_is_refused_for_everyone(
    client: Client,
) -> None:
    """Mercado de Lisboa with hidden money: whether a purchase is legal depends on coins a
    spectator may not see, and annotations are read by spectators, so the owner (full
    view) is refused as a recorder would be, before the move is read."""
    hidden = client.create_game("mercado-de-lisboa", PLAYERS).game_id
    first = client.legal_moves(hidden)[1][0].notation
    client.record(hidden, first)
    error = refused(lambda: client.annotate(hidden, "x", revision=2, variation=["not a move"]))
    assert error.code == grpc.StatusCode.PERMISSION_DENIED
    assert error.reason == "VARIATION_HIDDEN"
    assert error.metadata["path"] == "1"
    assert not client.annotations(hidden)
    options = service_pb2.CreateGameRequest().options
    options.mercado_de_lisboa.money = mercado_pb2.MERCADO_DE_LISBOA_MONEY_OPEN
    open_game = client.create_game("mercado-de-lisboa", PLAYERS, options=options).game_id
    first = client.legal_moves(open_game)[1][0].notation
    client.record(open_game, first)
    note = client.annotate(open_game, "x", revision=2, variation=[first])
    assert [m.notation for m in note.variation.moves] == [first]


def test_an_annotation_orphaned_by_an_amendment_keeps_its_variation(client: Client) -> None:
    game_id = recorded_game(client)
    line = alternative_line(before_anchor(), 3, seed=8)
    note = client.annotate(game_id, "instead", revision=ANCHOR, variation=line)
    version = client.get_game(game_id).version
    answer = client.amend(game_id, ANCHOR, line[0], expected_version=version, drop_tail=True)
    listed = {n.annotation_id: n for n in client.annotations(game_id)}[note.annotation_id]
    assert listed.orphaned
    assert listed.orphaned_by == answer.game.version
    assert listed.variation == note.variation
    steps = [
        f for f in frames_of(client, game_id, variation=note.annotation_id) if f.variation_move
    ]
    assert [f.event.move_recorded.notation for f in steps] == line


def test_the_refusal_carries_an_error_info_with_the_path(
    stub: service_pb2_grpc.TablelogServiceStub, client: Client
) -> None:
    game_id = recorded_game(client)
    request = service_pb2.AddAnnotationRequest(
        game_id=game_id, revision=ANCHOR, comment="x", variation=variation_of(["no move"])
    )
    code, details = rpc_refused(partial(stub.AddAnnotation, request))
    assert code == grpc.StatusCode.INVALID_ARGUMENT
    info = next(d for d in details if isinstance(d, error_details_pb2.ErrorInfo))
    assert info.metadata["path"] == "1"
    assert info.metadata["notation"] == "no move"


def test_paths_are_read_as_the_cli_writes_them() -> None:
    assert variation_path("abc").line == []
    assert list(variation_path("abc/3.1/2.2").line) == [3, 1, 2, 2]
    with pytest.raises(ValueError, match=r"MOVE\.ALTERNATIVE"):
        variation_path("abc/3")
    with pytest.raises(ValueError, match="follows the move"):
        variation_of([["alone"]])


def unsealed(events: Sequence[events_pb2.Event]) -> list[events_pb2.Event]:
    """Exported events with their chain taken off (an export edited by hand)."""
    copies = []
    for event in events:
        copy = events_pb2.Event()
        copy.CopyFrom(event)
        for sealing in ("prev_hash", "hash", "chain_key_id"):
            copy.ClearField(sealing)
        copies.append(copy)
    return copies


def test_an_imported_variation_is_checked_as_an_added_one(client: Client) -> None:
    game_id = recorded_game(client)
    line = alternative_line(before_anchor(), 3, seed=9)
    note = client.annotate(game_id, "instead", revision=ANCHOR, variation=line)
    exported = client.export(game_id)
    imported = client.import_events(exported)
    (again,) = client.annotations(imported.game_id)
    assert again.variation == note.variation
    assert client.verify(imported.game_id).ok
    at = next(i for i, e in enumerate(exported) if e.HasField("annotation_added"))

    def edited(change: Callable[[events_pb2.Variation], None]) -> TablelogError:
        events = unsealed(exported)
        change(events[at].annotation_added.variation)
        return refused(lambda: client.import_events(events, accept_unverified=True))

    def illegal(variation: events_pb2.Variation) -> None:
        variation.moves[2].move.CopyFrom(variation.moves[0].move)  # a move no longer legal
        variation.moves[2].notation = variation.moves[0].notation

    error = edited(illegal)
    assert error.code == grpc.StatusCode.INVALID_ARGUMENT
    assert error.metadata["line"] == str(at + 1)
    assert error.metadata["rule"] == "ILLEGAL_VARIATION_MOVE"
    assert f"Move 3 of the variation ({line[0]})" in str(error)
    error = edited(lambda variation: variation.moves[1].ClearField("move"))
    assert error.metadata["rule"] == "WRONG_VARIATION"
