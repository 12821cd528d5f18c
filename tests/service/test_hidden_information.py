"""Hidden information reaches only who may see it, by every path (issue 12).

For each game with hidden information, a dealt game is played over a real gRPC channel on
real Redis by real members of the club: a recorder and the player bound to the seat to move
take turns recording (random legal moves), each with their own token. Then every member of
the game, the player bound to each seat (by CreateGame or by BindSeat), the recorder, a
spectator and a link token, walks every read path WITHOUT asking for a viewer (the server
decides it from the caller): GetState and ListLegalMoves at every revision, ReplayGame,
WatchGame from revision 1, GetAuditLog, ListAnnotations, GetGame, ListGames, VerifyGame,
and the CLI's `export` and `audit` run with the member's token; the answers to the changes
the member made (RecordMove, UndoMove, RedoMove, AmendMove) are checked with them. Then the
member asks for every other seat's view and the full view on every RPC that takes a viewer
(and for another seat's through the CLI) and is refused (PERMISSION_DENIED,
VIEW_NOT_ALLOWED). All of it after the game is played, after an undo, after the redo and
after an amend: a revision's state never changes once recorded (each change appends a
revision of its own), so GetState and ListLegalMoves read each revision once per member,
the new ones after each change. At the end each member's watch heartbeat is checked too.

What a member must not see is derived from the full record (the owner's audit log, the
positions folded from it, the dealt seed in Redis):

- every recorded move (or amendment) hidden from the member's viewer (`visible_to`) reaches
  it redacted, wherever the event is shown, and its notation appears nowhere as a whole
  token (unless the member saw the same text as a move it may see);
- the game's own secrets at each revision (another seat's blind reserve, hand, mission or
  coins, the tiles removed unseen) are absent from every typed view it gets;
- the text of another seat's blind-reserved card appears nowhere as a whole token;
- the dealt seed appears in no byte before the game ends.

A self-check holds the matcher to finding those same words in the owner's full audit log,
so the test can fail.
"""

from __future__ import annotations

import base64
import contextlib
import io
import random
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import grpc
import pytest
from google.protobuf import json_format
from google.protobuf.message import Message
from google.rpc import error_details_pb2  # type: ignore[import-untyped]
from grpc_status import rpc_status

from tablelog.replay import fold as folding
from tablelog.replay.core import FULL, SPECTATOR, Viewer
from tablelog.service.api.server import BackgroundServer
from tablelog.service.recording.views import HIDDEN_MOVE, viewer_message
from tablelog.v1 import events_pb2, service_pb2
from tablelog_client import Client
from tablelog_client import cli as tablelog_cli
from tests.service.helpers import OWNER_TOKEN, rpc_refused

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
    Case("splendor", 3, 22, splendor_secrets, prefer="deck"),
    Case("medici", 3, 20, medici_secrets),
    Case("castello-methoni", 3, 14, castello_secrets),
    Case("mercado-de-lisboa", 2, 14, mercado_secrets),
    Case("medici-card-game", 2, 12, no_secrets),
]


# ------------------------------------------------------------------ who asks


@dataclass(frozen=True)
class Member:
    """A caller of one game: its label in messages, its bearer token, and the viewer the
    server owes it while the game is in progress (its bound seat, else the spectator's)."""

    label: str
    token: str
    viewer: Viewer
    lists_games: bool = True
    """Whether it may call ListGames (a link token reads its one game only)."""


@dataclass(frozen=True)
class Club:
    """The local club's members of these tests (made by its owner, tokens of their own)."""

    recorder: str
    spectator: str
    players: list[tuple[str, str]]
    """(member id, token) of four players: player i plays seat i of each game."""


@pytest.fixture(scope="module")
def club(server: BackgroundServer) -> Club:
    with Client(server.target, token=OWNER_TOKEN) as owner:
        owner.update_club(players_may_record=True)

        def member(role: str) -> tuple[str, str]:
            added = owner.add_member(f"{role}-{uuid.uuid4().hex[:6]}", role)
            return added.member_id, owner.create_token(added.member_id).token

        players = [member("player") for _ in range(4)]
        return Club(member("recorder")[1], member("spectator")[1], players)


def seat_game(owner: Client, club: Club, case: Case, names: list[str]) -> tuple[str, list[Member]]:
    """A new dealt game of `case`, its seats bound to the club's players (the last one by
    BindSeat, the others by CreateGame), and every member who reads it."""
    ids = [member_id for member_id, _token in club.players[: case.players]]
    game = owner.create_game(case.game, names, mode="dealt", seat_members=ids[:-1])
    owner.bind_seat(game.game_id, case.players - 1, ids[-1])
    link = owner.create_link_token(game.game_id).token
    members = [
        Member(f"{name}'s player", token, seat)
        for seat, (name, (_id, token)) in enumerate(zip(names, club.players, strict=False))
    ]
    members += [
        Member("the recorder", club.recorder, SPECTATOR),
        Member("a spectator", club.spectator, SPECTATOR),
        Member("a link token", link, SPECTATOR, lists_games=False),
    ]
    return game.game_id, members


# ------------------------------------------------------------------ what a member received


@dataclass
class Seen:
    """Everything one member received, as bytes and text, with the events it was shown."""

    blobs: list[bytes] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)
    events: list[tuple[str, events_pb2.Event]] = field(default_factory=list)
    views: list[tuple[str, Any]] = field(default_factory=list)
    lists: dict[int, service_pb2.ListLegalMovesResponse | None] = field(default_factory=dict)
    """ListLegalMoves at each revision: the list, or None when it was refused."""

    def message(self, message: Message) -> None:
        blob = message.SerializeToString()
        self.blobs.append(blob)
        self.texts.append(as_json(message, blob))

    def snapshot(self, where: str, state: service_pb2.StateSnapshot) -> None:
        self.views.append((where, getattr(state.view, state.view.WhichOneof("game") or "")))
        self.texts.append(state.text)
        self.texts.extend(state.moves)


_JSON: dict[tuple[str, bytes], str] = {}
"""Messages already written as JSON, by type and bytes: the members of one viewer, and the
same revision in each phase, get the same messages over and over."""


def as_json(message: Message, blob: bytes) -> str:
    key = (message.DESCRIPTOR.full_name, blob)
    text = _JSON.get(key)
    if text is None:
        text = _JSON[key] = json_format.MessageToJson(message)
    return text


Answer = (
    service_pb2.RecordMoveResponse
    | service_pb2.UndoMoveResponse
    | service_pb2.RedoMoveResponse
    | service_pb2.AmendMoveResponse
)


def run_cli(server: BackgroundServer, token: str, *args: str) -> tuple[int, str, str]:
    """The `tablelog` command run in this process with `token`: exit code, stdout, stderr."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = tablelog_cli.main([*args, "--address", server.target, "--token", token])
    return code, out.getvalue(), err.getvalue()


def walk(
    reader: Client,
    member: Member,
    server: BackgroundServer,
    game: str,
    game_id: str,
    revisions: range,
    last_sequence: int,
) -> Seen:
    """Every read path of `game_id` as `member` gets it, asking for no viewer: GetState
    and ListLegalMoves at each of `revisions`, the rest over the whole game."""
    seen = Seen()
    stub = reader.stub
    for revision in revisions:
        state = stub.GetState(service_pb2.GetStateRequest(game_id=game_id, revision=revision))
        seen.message(state)
        seen.snapshot(f"GetState r{revision}", state.state)
        request = service_pb2.ListLegalMovesRequest(
            game_id=game_id, revision=revision, page_size=1000
        )
        try:
            seen.lists[revision] = stub.ListLegalMoves(request)
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
    for step in stub.ReplayGame(service_pb2.ReplayGameRequest(game_id=game_id, from_revision=1)):
        seen.message(step)
        seen.events.append(("ReplayGame", step.event))
        seen.snapshot("ReplayGame", step.state)
    watch = stub.WatchGame(
        service_pb2.WatchGameRequest(game_id=game_id, from_revision=1, heartbeat_seconds=30),
        timeout=60,
    )
    for item in watch:
        assert item.WhichOneof("item") == "update", "a heartbeat before the last event"
        seen.message(item)
        seen.events.append(("WatchGame", item.update.event))
        seen.snapshot("WatchGame", item.update.state)
        if item.update.event.sequence == last_sequence:
            break
    watch.cancel()
    audit = stub.GetAuditLog(service_pb2.GetAuditLogRequest(game_id=game_id, page_size=1000))
    seen.message(audit)
    seen.events += [("GetAuditLog", entry.event) for entry in audit.entries]
    seen.message(stub.ListAnnotations(service_pb2.ListAnnotationsRequest(game_id=game_id)))
    seen.message(stub.GetGame(service_pb2.GetGameRequest(game_id=game_id)))
    seen.message(stub.VerifyGame(service_pb2.VerifyGameRequest(game_id=game_id)))
    if member.lists_games:
        listed_games = stub.ListGames(service_pb2.ListGamesRequest(game=game, page_size=1000))
        (summary,) = [s for s in listed_games.games if s.game_id == game_id]
        seen.message(summary)
    for command in ("export", "audit"):
        code, printed, _err = run_cli(server, member.token, command, game_id)
        assert code == 0, (member.label, command)
        seen.texts.append(printed)
        if command == "export":
            for line in printed.splitlines():
                event = json_format.Parse(line, events_pb2.Event())
                seen.events.append(("tablelog export", event))
    return seen


def answered(seen: Seen, answers: list[Answer]) -> None:
    """Adds the answers to the changes a member made to what it has seen."""
    for answer in answers:
        seen.message(answer)
        seen.events += [(type(answer).__name__, event) for event in answer.events]


def refusals_owed(member: Member, players: int) -> int:
    """How many calls `ask_for_more` makes as `member`: five RPCs for each other seat and
    the full view, the CLI's export and audit for one other seat."""
    others = players - (0 if member.viewer == SPECTATOR else 1)
    return 5 * (others + 1) + 2


def ask_for_more(
    reader: Client, member: Member, server: BackgroundServer, game_id: str, names: list[str]
) -> int:
    """Asks, as `member`, for every other seat's view and the full view on every path that
    takes a viewer; each is refused with VIEW_NOT_ALLOWED. The number of refusals."""
    stub = reader.stub

    def first(stream: Any) -> Any:
        return next(iter(stream))

    refusals = 0
    others = [seat for seat in range(len(names)) if seat != member.viewer]
    for asked in [*others, FULL]:
        viewer = viewer_message(asked)
        calls: list[tuple[str, Callable[[], object]]] = [
            (
                "GetState",
                partial(stub.GetState, service_pb2.GetStateRequest(game_id=game_id, viewer=viewer)),
            ),
            (
                "ListLegalMoves",
                partial(
                    stub.ListLegalMoves,
                    service_pb2.ListLegalMovesRequest(game_id=game_id, viewer=viewer),
                ),
            ),
            (
                "ReplayGame",
                partial(
                    first,
                    stub.ReplayGame(service_pb2.ReplayGameRequest(game_id=game_id, viewer=viewer)),
                ),
            ),
            (
                "WatchGame",
                partial(
                    first,
                    stub.WatchGame(
                        service_pb2.WatchGameRequest(game_id=game_id, viewer=viewer), timeout=10
                    ),
                ),
            ),
            (
                "GetAuditLog",
                partial(
                    stub.GetAuditLog, service_pb2.GetAuditLogRequest(game_id=game_id, viewer=viewer)
                ),
            ),
        ]
        for where, call in calls:
            code, details = rpc_refused(call)
            reasons = [d.reason for d in details if isinstance(d, error_details_pb2.ErrorInfo)]
            assert code == grpc.StatusCode.PERMISSION_DENIED, (member.label, where, asked)
            assert reasons == ["VIEW_NOT_ALLOWED"], (member.label, where, asked)
            refusals += 1
        if asked is FULL or asked != others[0]:
            # The CLI's export and audit (no --full) ask through GetAuditLog, refused above
            # for every seat: one other seat's refusal shows the CLI passes it on.
            continue
        for command in ("export", "audit"):
            exit_code, printed, err = run_cli(
                server, member.token, command, game_id, "--seat", names[asked]
            )
            assert exit_code == 1, (member.label, command, asked)
            assert "PERMISSION_DENIED: VIEW_NOT_ALLOWED" in err, err
            assert printed == "", (member.label, command, asked)
            refusals += 1
    return refusals


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
    full_texts: list[str]
    """The full audit log as text: where the matcher must find every secret."""


def stored_seed(server: BackgroundServer, game_id: str) -> bytes | None:
    """The game's dealt seed as the server's store holds it (on Redis or Redis Cluster)."""
    built: Any = server.built
    store = built.recorder.store
    seed: Any = server.run(store.redis.get(store.key(game_id, "seed")))
    return bytes(seed) if seed is not None else None


def full_record(owner: Client, server: BackgroundServer, game_id: str) -> Truth:
    entries = owner.audit(game_id, viewer=service_pb2.Viewer(full=True))
    events = [entry.event for entry in entries]
    position = folding.start(events[0].game_created)
    before = {events[0].sequence: position}
    at = {position.revision: position}
    for event in events[1:]:
        before[event.sequence] = position
        position = at[event.revision] = folding.advance(position, event)
    texts = [json_format.MessageToJson(entry) for entry in entries]
    return Truth(events, before, at, stored_seed(server, game_id), texts)


def hidden_from(truth: Truth, viewer: Viewer) -> dict[int, events_pb2.Event]:
    """The recorded moves and amendments `viewer` may not see, by sequence: a move is judged
    in the state it was played in, an amendment by the moves it puts in and takes out."""
    hidden = {}
    for event in truth.events:
        position = truth.before[event.sequence]
        table = position.table
        body = event.WhichOneof("body")
        if body == "move_recorded":
            inner = table.unwrap(event.move_recorded.move)
            if not position.game.visible_to(inner, position.state, viewer):
                hidden[event.sequence] = event
        elif body == "move_amended":
            amended = event.move_amended
            target = folding.amended_move(position, amended.amended_revision)
            moves = [] if amended.kind == folding.DELETE else [amended.move]
            moves += [] if amended.kind == folding.INSERT else [target.move]
            if not all(
                position.game.visible_to(table.unwrap(move), target.before, viewer)
                for move in moves
            ):
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


TOKEN_PUNCTUATION = "_:.+/=-"
"""Besides letters and digits, what continues a token (a card id such as '2w2:r5k3', a
notation's word, a hex or base64 seed): a secret is matched only where nothing of a token
touches it on either side."""


def _continues_a_token(character: str) -> bool:
    return character.isalnum() or character in TOKEN_PUNCTUATION


def _has_whole(text: str, word: str) -> bool:
    start = text.find(word)
    while start >= 0:
        end = start + len(word)
        before = text[start - 1] if start else " "
        after = text[end : end + 2]
        if after[:1] == ".":
            after = after[1:]  # a full stop ends a sentence, unless a token goes on after it
        if not _continues_a_token(before) and not _continues_a_token(after[:1] or " "):
            return True
        start = text.find(word, start + 1)
    return False


def found_words(words: set[str], texts: list[str]) -> set[str]:
    """The words that occur in `texts` as whole tokens: '2w2:r5' is not found inside the
    visible card '2w2:r5k3', but is in 'reserved 2w2:r5' or '"2w2:r5"'."""
    everything = "\n".join(set(texts))  # a line break ends a token
    return {word for word in words if word and _has_whole(everything, word)}


def secret_words(truth: Truth, viewer: Viewer) -> set[str]:
    """What `viewer` must never read: the notation of every move hidden from it (unless it
    saw the same text as a move it may see) and another seat's blind-reserved cards."""
    hidden = hidden_from(truth, viewer)
    notations = {
        event.move_recorded.notation
        for event in truth.events
        if event.WhichOneof("body") == "move_recorded" and event.sequence not in hidden
    }
    notations |= {
        event.move_amended.notation
        for event in truth.events
        if event.WhichOneof("body") == "move_amended" and event.sequence not in hidden
    }
    words = {
        event.move_recorded.notation or event.move_amended.notation for event in hidden.values()
    }
    return (words - notations - {""}) | blind_cards_of_others(truth, viewer)


def assert_nothing_leaks(case: Case, truth: Truth, member: Member, seen: Seen) -> None:
    viewer = member.viewer
    hidden = hidden_from(truth, viewer)
    by_sequence = {event.sequence: event for event in truth.events}
    for where, shown in seen.events:
        if shown.sequence in hidden:
            which = shown.WhichOneof("body")
            body: Any = getattr(shown, which or "")
            assert body.hidden, (member.label, where, shown.sequence)
            assert not body.HasField("move"), (member.label, where, shown.sequence)
            assert body.notation == HIDDEN_MOVE, (member.label, where, shown.sequence)
        else:
            assert shown == by_sequence[shown.sequence], (member.label, where, shown.sequence)
    words = secret_words(truth, viewer)
    assert found_words(words, truth.full_texts) == words, "the matcher misses a secret"
    if truth.seed:
        seed = truth.seed
        words |= {seed.hex(), base64.b64encode(seed).decode()}
        assert not any(seed in blob for blob in seen.blobs), (member.label, "the dealt seed")
    assert found_words(words, seen.texts) == set(), member.label
    for where, view in seen.views:
        assert case.secrets_in_view(view, viewer) == [], (member.label, where)
    for revision, listed in seen.lists.items():
        if listed is None or listed.to_move.terminal:
            continue
        position = truth.at[revision]
        if viewer != SPECTATOR and position.to_move() == viewer:
            # The member's own decision: its moves name only what it may see.
            own = [json_format.MessageToJson(listed)]
            assert not found_words(words, own), (member.label, revision)
            continue
        # Another's decision (a seat's, or the table's candidates for a deal) is listed
        # only while nothing is hidden from the member: the candidates of a deal, the dealt
        # card among them, are then public (what nobody has seen yet).
        full: Any = position.game.view(position.state, FULL)
        assert case.secrets_in_view(full, viewer) == [], (member.label, revision)


def test_the_matcher_finds_whole_tokens_only() -> None:
    texts = ['{"card": "2w2:r5k3"}', "Bob reserved 3u1 blind"]
    assert found_words({"2w2:r5", "3u1", "3u", "reserved 3u1"}, texts) == {"3u1", "reserved 3u1"}
    assert found_words({"2w2:r5"}, ['"2w2:r5"', "x"]) == {"2w2:r5"}
    assert found_words({"2w2:r5"}, ["the server dealt 2w2:r5."]) == {"2w2:r5"}
    assert found_words({"reveal 1.2"}, ["reveal 1.23", "reveal 1.2.4"]) == set()


def test_every_game_with_hidden_information_is_covered() -> None:
    from tablelog.replay.registry import all_games

    assert {case.game for case in CASES} == set(all_games())


# ------------------------------------------------------------------ the games


def play(
    owner: Client,
    clients: dict[Member, Client],
    members: list[Member],
    answers: dict[Member, list[Answer]],
    game_id: str,
    case: Case,
    rng: random.Random,
) -> int:
    """Record `case.moves` random legal moves (the server deals every chance outcome), each
    by the recorder or by the player of the seat to move: the last version."""
    recorder = next(m for m in members if m.label == "the recorder")
    version = owner.get_game(game_id).version
    for _ in range(case.moves):
        to_move, legal = owner.legal_moves(game_id)
        if not legal:
            break
        preferred = [m for m in legal if case.prefer and case.prefer in m.notation]
        pool = preferred if preferred and rng.random() < 0.5 else legal
        choice = pool[rng.randrange(len(pool))]
        who = recorder
        if to_move.WhichOneof("who") == "seat" and rng.random() < 0.5:
            who = members[to_move.seat]
        answer = clients[who].record(game_id, choice.notation, expected_version=version)
        answers[who].append(answer)
        version = answer.game.version
    return version


def last_move_of_a_seat(truth: Truth) -> events_pb2.Event:
    """The last move in effect that a seat made (not a deal): the one to amend."""
    in_effect = truth.at[max(truth.at)].applied
    assert in_effect is not None
    for applied in in_effect:
        event = next(e for e in truth.events if e.revision == applied.revision)
        if event.WhichOneof("body") == "move_recorded" and not event.move_recorded.dealt:
            return event
    raise AssertionError("no move of a seat is in effect")


@pytest.mark.parametrize("case", CASES, ids=[case.game for case in CASES])
def test_no_member_sees_another_seats_secret_by_any_path(
    case: Case,
    client: Client,
    club: Club,
    server: BackgroundServer,
) -> None:
    names = ["Ann", "Bob", "Cleo", "Dan"][: case.players]
    rng = random.Random(case.game)
    _JSON.clear()
    with contextlib.ExitStack() as stack:
        for _attempt in range(5):
            # A dealt game that ends publishes its seed and cannot be taken back: play another.
            game_id, members = seat_game(client, club, case, names)
            clients = {
                m: stack.enter_context(Client(server.target, token=m.token, timeout=30))
                for m in members
            }
            answers: dict[Member, list[Answer]] = {m: [] for m in members}
            version = play(client, clients, members, answers, game_id, case, rng)
            if client.get_game(game_id).status == service_pb2.GAME_STATUS_IN_PROGRESS:
                break
        else:
            pytest.fail(f"{case.game}: five random games all ended within {case.moves} moves")
        clients[members[0]].annotate(game_id, "a good moment", glyph="!", revision=2)
        recorder = next(m for m in members if m.label == "the recorder")
        secrets_met = refused_lists = refusals = walks = 0

        walked = 0  # the revisions up to which every member has read each state

        def check_every_member(phase: str) -> None:
            nonlocal secrets_met, refused_lists, refusals, walks, walked
            truth = full_record(client, server, game_id)
            head = truth.events[-1].revision
            revisions = range(walked + 1, head + 1)
            at_head = truth.at[head]
            full_view = at_head.game.view(at_head.state, FULL)
            for member in members:
                reader = clients[member]
                last = truth.events[-1].sequence
                seen = walk(reader, member, server, case.game, game_id, revisions, last)
                answered(seen, answers[member])
                assert_nothing_leaks(case, truth, member, seen)
                assert len(seen.lists) == len(revisions) > 0, phase
                walks += 1
                secrets_met += len(secret_words(truth, member.viewer))
                secrets_met += len(case.secrets_in_view(full_view, member.viewer))
                refused_lists += sum(listed is None for listed in seen.lists.values())
                refusals += ask_for_more(reader, member, server, game_id, names)
            walked = head

        check_every_member("played")
        undone = clients[recorder].undo(game_id, expected_version=version)
        answers[recorder].append(undone)
        check_every_member("after an undo")
        redone = clients[recorder].redo(game_id, expected_version=undone.game.version)
        answers[recorder].append(redone)
        check_every_member("after the redo")
        truth = full_record(client, server, game_id)
        amended = last_move_of_a_seat(truth)
        answers[recorder].append(
            clients[recorder].amend(
                game_id,
                amended.revision,
                amended.move_recorded.notation,
                expected_version=redone.game.version,
                reason="the recorder checks a move",
            )
        )
        check_every_member("after an amend")
        check_heartbeats(clients, members, game_id, stored_seed(server, game_id))
    print(
        f"\n{case.game}: {len(members)} members x 4 phases: {walks} walks, "
        f"{refusals} refusals, {secrets_met} secrets held from a member"
    )
    per_phase = sum(refusals_owed(member, len(names)) for member in members)
    assert refusals == 4 * per_phase, (refusals, per_phase)
    if case.secrets_in_view is not no_secrets:
        assert secrets_met, f"{case.game}: the game never reached a secret; play longer"
    if case.game in ("splendor", "medici", "castello-methoni"):
        assert refused_lists, f"{case.game}: no move list was ever withheld"


def check_heartbeats(
    clients: dict[Member, Client], members: list[Member], game_id: str, seed: bytes | None
) -> None:
    """Each member's watch, once caught up, beats with nothing hidden in it (the watches
    are opened together, so their one-second heartbeats overlap)."""
    head = clients[members[0]].get_game(game_id).version
    watches = {
        member: clients[member].stub.WatchGame(
            service_pb2.WatchGameRequest(game_id=game_id, from_revision=head, heartbeat_seconds=1),
            timeout=30,
        )
        for member in members
    }
    for member, watch in watches.items():
        beat = next(item for item in watch if item.WhichOneof("item") == "heartbeat")
        watch.cancel()
        assert beat.heartbeat.head_revision == head
        assert {f.name for f, _ in beat.heartbeat.ListFields()} == {"head_revision", "time"}
        assert isinstance(seed, bytes)
        assert seed not in beat.SerializeToString(), member.label


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
