"""Hidden information reaches only who may see it, by every read path (issue 12).

For each game with hidden information, a real game is played (random legal moves, over a
real gRPC channel, on real Redis). Then, as each seat and as a spectator, every read path is
walked: GetState at every revision, ReplayGame, WatchGame from revision 1, ListLegalMoves at
every revision, GetAuditLog, ListAnnotations and the CLI's `export` and `audit` output;
before and after an undo, and after the redo. What the viewer must not see is derived from
the full record (the full audit log, the full state at the head, the dealt seed in Redis):

- every recorded move hidden from the viewer (`visible_to`) reaches it redacted, wherever the
  event is shown, and its notation appears nowhere (unless the viewer saw the same text as
  a move of its own);
- the game's own secrets at each revision (another seat's blind reserve, hand, mission or
  coins, the tiles removed unseen) are absent from the viewer's typed view;
- the text of another seat's blind-reserved card appears in no byte the viewer receives;
- the dealt seed appears in no byte before the game ends.
"""

from __future__ import annotations

import base64
import contextlib
import io
import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import grpc
import pytest
import redis
from google.protobuf import json_format
from google.protobuf.message import Message
from google.rpc import error_details_pb2  # type: ignore[import-untyped]
from grpc_status import rpc_status

from replay import fold as folding
from replay.core import FULL, SPECTATOR, Viewer
from service.embedded import EmbeddedRedis
from service.server import BackgroundServer
from service.views import HIDDEN_MOVE, viewer_message
from tablelog.v1 import events_pb2, service_pb2, service_pb2_grpc
from tablelog_client import Client
from tablelog_client import cli as tablelog_cli

pytestmark = pytest.mark.slow


# ------------------------------------------------------------------ what each game hides


def splendor_secrets(view: Any, viewer: Viewer) -> list[str]:
    """RULES.md E13: another seat's blind reserve shows its level, never its card."""
    return [
        f"{player.name}'s blind reserve {reserved.card.text}"
        for seat, player in enumerate(view.players)
        if seat != viewer
        for reserved in player.reserved
        if reserved.from_deck and reserved.card.id
    ]


def medici_secrets(view: Any, viewer: Viewer) -> list[str]:
    """§B2: the tiles removed unseen are shown to nobody but the full view."""
    return [f"removed tile {tile.name}" for tile in view.removed]


def castello_secrets(view: Any, viewer: Viewer) -> list[str]:
    """§2 steps 3-4: another seat's hand, and its mission until the end."""
    found = []
    for seat, shown in enumerate(view.seats):
        if seat == viewer:
            continue
        found += [f"{shown.name}'s card {card}" for card in shown.hand]
        if shown.mission and not view.game_over:
            found.append(f"{shown.name}'s mission {shown.mission}")
    return found


def mercado_secrets(view: Any, viewer: Viewer) -> list[str]:
    """§2 step 8: with hidden money, another seat's coins are not shown."""
    return [
        f"{player.name}'s coins {player.money}"
        for seat, player in enumerate(view.players)
        if seat != viewer and (player.money_visible or player.money)
    ]


def no_secrets(view: Any, viewer: Viewer) -> list[str]:
    return []


@dataclass(frozen=True)
class Case:
    game: str
    players: int
    moves: int
    secrets_in_view: Callable[[Any, Viewer], list[str]]
    prefer: str = ""
    """A word of the moves to favour (half the time), so the game reaches its secrets."""


CASES = [
    Case("splendor", 3, 30, splendor_secrets, prefer="deck"),
    Case("medici", 3, 30, medici_secrets),
    Case("castello-methoni", 3, 20, castello_secrets),
    Case("mercado-de-lisboa", 2, 20, mercado_secrets),
    Case("medici-card-game", 2, 16, no_secrets),
]


# ------------------------------------------------------------------ what a viewer received


@dataclass
class Seen:
    """Everything one viewer received, as bytes and text, with the events it was shown."""

    blobs: list[bytes] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)
    events: list[tuple[str, events_pb2.Event]] = field(default_factory=list)
    views: list[tuple[str, Any]] = field(default_factory=list)
    lists: dict[int, service_pb2.ListLegalMovesResponse | None] = field(default_factory=dict)
    """ListLegalMoves at each revision: the list, or None when it was refused."""

    def message(self, where: str, message: Message) -> None:
        self.blobs.append(message.SerializeToString())
        self.texts.append(json_format.MessageToJson(message))

    def snapshot(self, where: str, state: service_pb2.StateSnapshot) -> None:
        self.views.append((where, getattr(state.view, state.view.WhichOneof("game") or "")))
        self.texts.append(state.text)
        self.texts.extend(state.moves)


def cli_output(server: BackgroundServer, *args: str) -> str:
    """The `tablelog` command's standard output, run in this process against the server."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert tablelog_cli.main([*args, "--address", server.target]) == 0
    return out.getvalue()


def walk(
    stub: service_pb2_grpc.TablelogServiceStub,
    server: BackgroundServer,
    game_id: str,
    head: int,
    last_sequence: int,
    viewer: Viewer,
    seat_names: list[str],
) -> Seen:
    """Every read path of `game_id`, as `viewer` (a seat or the spectator) sees it."""
    seen = Seen()
    asked = viewer_message(viewer)
    for revision in range(1, head + 1):
        state = stub.GetState(
            service_pb2.GetStateRequest(game_id=game_id, revision=revision, viewer=asked)
        ).state
        seen.message(f"GetState r{revision}", state)
        seen.snapshot(f"GetState r{revision}", state)
        request = service_pb2.ListLegalMovesRequest(
            game_id=game_id, revision=revision, page_size=1000, viewer=asked
        )
        try:
            listed = stub.ListLegalMoves(request)
        except grpc.RpcError as error:
            refusal: Any = error  # a grpc.Call as well as an RpcError
            status = rpc_status.from_call(refusal)
            assert status is not None
            assert refusal.code() == grpc.StatusCode.PERMISSION_DENIED, refusal.details()
            info = error_details_pb2.ErrorInfo()
            assert status.details[0].Unpack(info)
            assert info.reason == "LEGAL_MOVES_HIDDEN"
            seen.blobs.append(status.SerializeToString())
            seen.texts.append(refusal.details())
            seen.lists[revision] = None
        else:
            seen.lists[revision] = listed
    for step in stub.ReplayGame(
        service_pb2.ReplayGameRequest(game_id=game_id, from_revision=1, viewer=asked)
    ):
        seen.message("ReplayGame", step)
        seen.events.append(("ReplayGame", step.event))
        seen.snapshot("ReplayGame", step.state)
    watch = stub.WatchGame(
        service_pb2.WatchGameRequest(
            game_id=game_id, from_revision=1, viewer=asked, heartbeat_seconds=30
        ),
        timeout=60,
    )
    for item in watch:
        assert item.WhichOneof("item") == "update", "a heartbeat before the last event"
        seen.message("WatchGame", item)
        seen.events.append(("WatchGame", item.update.event))
        seen.snapshot("WatchGame", item.update.state)
        if item.update.event.sequence == last_sequence:
            break
    watch.cancel()
    audit = stub.GetAuditLog(
        service_pb2.GetAuditLogRequest(game_id=game_id, page_size=1000, viewer=asked)
    )
    seen.message("GetAuditLog", audit)
    seen.events += [("GetAuditLog", entry.event) for entry in audit.entries]
    seen.texts += [entry.summary for entry in audit.entries]
    notes = stub.ListAnnotations(service_pb2.ListAnnotationsRequest(game_id=game_id))
    seen.message("ListAnnotations", notes)
    as_viewer = ["--spectator"] if viewer == SPECTATOR else ["--seat", seat_names[viewer or 0]]
    exported = cli_output(server, "export", game_id, *as_viewer)
    seen.texts.append(exported)
    for line in exported.splitlines():
        event = json_format.Parse(line, events_pb2.Event())
        seen.events.append(("tablelog export", event))
    seen.texts.append(cli_output(server, "audit", game_id, *as_viewer))
    return seen


# ------------------------------------------------------------------ the checks


@dataclass
class Truth:
    """The full record: every event, the position before each, and the seed."""

    events: list[events_pb2.Event]
    before: dict[int, folding.Position]
    """The position before each event, by sequence."""
    at: dict[int, folding.Position]
    """The position at each revision."""
    seed: bytes | None


def full_record(client: Client, redis_url: str, game_id: str) -> Truth:
    events = [entry.event for entry in client.audit(game_id, viewer=service_pb2.Viewer(full=True))]
    position = folding.start(events[0].game_created)
    before = {events[0].sequence: position}
    at = {position.revision: position}
    for event in events[1:]:
        before[event.sequence] = position
        position = at[event.revision] = folding.advance(position, event)
    store = redis.Redis.from_url(redis_url)
    seed: bytes | None = store.get(f"tl:{{{game_id}}}:seed")  # type: ignore[assignment]
    store.close()
    return Truth(events, before, at, seed)


def hidden_from(truth: Truth, viewer: Viewer) -> dict[int, events_pb2.Event]:
    """The recorded moves `viewer` may not see, by sequence."""
    hidden = {}
    for event in truth.events:
        if event.WhichOneof("body") != "move_recorded":
            continue
        position = truth.before[event.sequence]
        inner = position.table.unwrap(event.move_recorded.move)
        if not position.game.visible_to(inner, position.state, viewer):
            hidden[event.sequence] = event
    return hidden


def blind_cards_of_others(truth: Truth, viewer: Viewer) -> set[str]:
    """Splendor: the text of every card another seat holds as a named blind reserve at the
    head (a card that was never public: it went from the deck to the reserve)."""
    head = truth.at[max(truth.at)]
    if head.table.game.name != "splendor":
        return set()
    view: Any = head.game.view(head.state, FULL)
    return {
        reserved.card.text
        for seat, player in enumerate(view.players)
        if seat != viewer
        for reserved in player.reserved
        if reserved.from_deck and reserved.card.id
    }


def assert_nothing_leaks(case: Case, truth: Truth, viewer: Viewer, seen: Seen) -> None:
    hidden = hidden_from(truth, viewer)
    by_sequence = {event.sequence: event for event in truth.events}
    for where, shown in seen.events:
        if shown.sequence in hidden:
            body = shown.move_recorded
            assert body.hidden, (where, shown.sequence)
            assert not body.HasField("move"), (where, shown.sequence)
            assert body.notation == HIDDEN_MOVE, (where, shown.sequence)
        else:
            assert shown == by_sequence[shown.sequence], (where, shown.sequence)
    own = {
        event.move_recorded.notation
        for event in truth.events
        if event.WhichOneof("body") == "move_recorded" and event.sequence not in hidden
    }
    words = {event.move_recorded.notation for event in hidden.values()} - own
    words |= blind_cards_of_others(truth, viewer)
    if truth.seed:
        seed = truth.seed
        words |= {seed.hex(), base64.b64encode(seed).decode()}
        assert not any(seed in blob for blob in seen.blobs), "the dealt seed"
    check_words(words, seen.texts, seen.blobs)
    for where, view in seen.views:
        assert case.secrets_in_view(view, viewer) == [], where
    for revision, listed in seen.lists.items():
        if listed is None or listed.to_move.terminal:
            continue
        position = truth.at[revision]
        if viewer != SPECTATOR and position.to_move() == viewer:
            # The viewer's own decision: its moves name only what it may see.
            check_words(words, [json_format.MessageToJson(listed)], [listed.SerializeToString()])
        else:
            # Another's decision (a seat's, or the table's candidates for a deal) is listed
            # only while nothing is hidden from the viewer: the candidates of a deal, the
            # dealt card among them, are then public (what nobody has seen yet).
            full: Any = position.game.view(position.state, FULL)
            assert case.secrets_in_view(full, viewer) == [], f"ListLegalMoves r{revision}"
            if truth.seed:
                assert truth.seed not in listed.SerializeToString()


def check_words(words: set[str], texts: list[str], blobs: list[bytes]) -> None:
    for word in words:
        for text in texts:
            assert word not in text, (word, text[:200])
        raw = word.encode()
        assert not any(raw in blob for blob in blobs), word


def test_every_game_with_hidden_information_is_covered() -> None:
    from replay.registry import all_games

    assert {case.game for case in CASES} == set(all_games())


# ------------------------------------------------------------------ the games


def play(client: Client, game_id: str, case: Case, rng: random.Random) -> int:
    """Record `case.moves` random legal moves (the server deals every chance outcome)."""
    version = client.get_game(game_id).version
    for _ in range(case.moves):
        _to_move, legal = client.legal_moves(game_id)
        if not legal:
            break
        preferred = [m for m in legal if case.prefer and case.prefer in m.notation]
        pool = preferred if preferred and rng.random() < 0.5 else legal
        choice = pool[rng.randrange(len(pool))]
        version = client.record(game_id, choice.notation, expected_version=version).game.version
    return version


@pytest.fixture
def stub(server: BackgroundServer) -> Iterator[service_pb2_grpc.TablelogServiceStub]:
    with grpc.insecure_channel(server.target) as channel:
        yield service_pb2_grpc.TablelogServiceStub(channel)


@pytest.mark.parametrize("case", CASES, ids=[case.game for case in CASES])
def test_no_viewer_sees_another_seats_secret_by_any_read_path(
    case: Case,
    client: Client,
    stub: service_pb2_grpc.TablelogServiceStub,
    server: BackgroundServer,
    embedded_redis: EmbeddedRedis,
) -> None:
    names = ["Ann", "Bob", "Cleo", "Dan"][: case.players]
    rng = random.Random(case.game)
    for _attempt in range(5):
        # A dealt game that ends publishes its seed and cannot be taken back: play another.
        game = client.create_game(case.game, names, mode="dealt")
        version = play(client, game.game_id, case, rng)
        if client.get_game(game.game_id).status == service_pb2.GAME_STATUS_IN_PROGRESS:
            break
    else:
        pytest.fail(f"{case.game}: five random games all ended within {case.moves} moves")
    client.annotate(game.game_id, "a good moment", glyph="!", revision=2)
    viewers: list[Viewer] = [*range(case.players), SPECTATOR]
    secrets_met = 0
    refused = 0

    def check_every_viewer(phase: str) -> None:
        nonlocal secrets_met, refused
        truth = full_record(client, embedded_redis.url, game.game_id)
        head = truth.events[-1].revision
        full_head = truth.at[head]
        for viewer in viewers:
            last = truth.events[-1].sequence
            seen = walk(stub, server, game.game_id, head, last, viewer, names)
            assert_nothing_leaks(case, truth, viewer, seen)
            secrets_met += len(hidden_from(truth, viewer))
            secrets_met += len(
                case.secrets_in_view(full_head.game.view(full_head.state, FULL), viewer)
            )
            refused += sum(listed is None for listed in seen.lists.values())
            assert len(seen.lists) == head, phase

    check_every_viewer("played")
    version = client.undo(game.game_id, expected_version=version).game.version
    check_every_viewer("after an undo")
    client.redo(game.game_id, expected_version=version)
    check_every_viewer("after the redo")
    if case.secrets_in_view is not no_secrets:
        assert secrets_met, f"{case.game}: the game never reached a secret; play longer"
        assert refused, f"{case.game}: no move list was ever withheld"


# ------------------------------------------------------------------ the edges, one by one


def blind_reserve(client: Client) -> tuple[str, int, str]:
    """A dealt Splendor game where Ann has reserved blind: its id, the deal's revision and
    what was dealt."""
    game = client.create_game("splendor", ["Ann", "Bob"], mode="dealt")
    response = client.record(game.game_id, "reserve 1.deck", expected_version=game.version)
    (dealt,) = [e for e in response.events if e.move_recorded.dealt]
    return game.game_id, dealt.revision, dealt.move_recorded.notation


def test_the_audit_describes_a_hidden_deal_without_naming_it(client: Client) -> None:
    game_id, revision, secret = blind_reserve(client)
    version = client.get_game(game_id).version
    client.undo(game_id, expected_version=version, reason="misdealt")

    def summaries(viewer: service_pb2.Viewer | None) -> list[str]:
        return [entry.summary for entry in client.audit(game_id, viewer=viewer)]

    full = summaries(None)  # unset: the full view, as before viewers
    assert f"the server dealt {secret}" in full
    assert summaries(service_pb2.Viewer(seat=0)) == full
    for viewer in (service_pb2.Viewer(seat=1), service_pb2.Viewer(spectator=True)):
        shown = summaries(viewer)
        assert "the server dealt a hidden card or tile" in shown
        assert any(f"undid a hidden move (revision {revision})" in s for s in shown)
        assert not any(secret in s for s in shown)
        assert len(shown) == len(full)


def test_another_seats_decision_is_not_listed_while_a_secret_is_held(client: Client) -> None:
    game_id, _revision, _secret = blind_reserve(client)
    # Bob is to move; Ann holds a named blind reserve. Bob sees his own moves, Ann sees
    # them too (nothing is hidden from her), a spectator does not.
    bobs = client.legal_moves(game_id, viewer=service_pb2.Viewer(seat=1))[1]
    assert len(bobs) > 1
    assert client.legal_moves(game_id, viewer=service_pb2.Viewer(seat=0))[1] == bobs
    assert client.legal_moves(game_id)[1] == bobs  # unset: the full view
    request = service_pb2.ListLegalMovesRequest(
        game_id=game_id, viewer=service_pb2.Viewer(spectator=True)
    )
    with pytest.raises(grpc.RpcError) as info:
        client.stub.ListLegalMoves(request)
    refusal: Any = info.value
    assert refusal.code() == grpc.StatusCode.PERMISSION_DENIED
    assert "Bob's decision" in refusal.details()


@pytest.mark.parametrize("seat", [2, 10_000])
def test_a_viewer_seat_outside_the_game_is_refused(client: Client, seat: int) -> None:
    game = client.create_game("splendor", ["Ann", "Bob"], mode="dealt")
    viewer = service_pb2.Viewer(seat=seat)
    for call in (
        lambda: client.stub.GetAuditLog(
            service_pb2.GetAuditLogRequest(game_id=game.game_id, viewer=viewer)
        ),
        lambda: client.stub.ListLegalMoves(
            service_pb2.ListLegalMovesRequest(game_id=game.game_id, viewer=viewer)
        ),
    ):
        with pytest.raises(grpc.RpcError) as info:
            call()
        refusal: Any = info.value
        assert refusal.code() == grpc.StatusCode.INVALID_ARGUMENT
