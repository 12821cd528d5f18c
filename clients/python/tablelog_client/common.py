"""What the CLI's command modules share: printing (JSON and words), a refusal in the
user's words, and what the CLI remembers between commands (the state directory and the
version this terminal last saw of a game).

`cli.py`, `club_cli.py` and `shell.py` all import from here and never from each other's
private helpers, so the modules form no import circle (a test holds that)."""

from __future__ import annotations

import argparse
import datetime
import json
import os
import re
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, TextIO

import grpc
import platformdirs
from google.protobuf import json_format
from google.protobuf.message import Message

from tablelog.v1 import events_pb2, game_pb2, service_pb2
from tablelog_client.sdk import Client, TablelogError, resolve_address
from tablelog_client.words import Narrator, result_words

Handler = Callable[[argparse.Namespace, Client], int]
"""A command: its parsed arguments and a client to the server; its exit status."""


class UsageError(Exception):
    """A command given wrongly, found before anything is sent (exit status 2)."""


def to_json(message: Message) -> str:
    return json.dumps(json_format.MessageToDict(message), separators=(",", ":"))


def print_json(message: Message, out: TextIO | None = None) -> None:
    print(json.dumps(json_format.MessageToDict(message), indent=2), file=out or sys.stdout)


def who_moves(to_move: game_pb2.ToMove, players: Sequence[str]) -> str:
    kind = to_move.WhichOneof("who")
    if kind == "seat":
        seat = to_move.seat
        return players[seat] if seat < len(players) else f"seat {seat}"
    if kind == "chance":
        return "the table (a reveal)"
    return "nobody (game over)"


def describe_game(game: service_pb2.GameSummary) -> str:
    players = [p.name for p in game.players]
    status = service_pb2.GameStatus.Name(game.status).removeprefix("GAME_STATUS_").lower()
    mode = game_pb2.Mode.Name(game.mode).removeprefix("MODE_").lower()
    line = (
        f"{game.game_id}  {game.game}  {', '.join(players)}  [{mode}]  {status.replace('_', ' ')}"
        f"  version {game.version}  moves {players_moves(game)}"
    )
    if game.status == service_pb2.GAME_STATUS_IN_PROGRESS:
        line += f"  to move: {who_moves(game.to_move, players)}"
    elif game.status == service_pb2.GAME_STATUS_ENDED:
        line += f"  {result_words(game.result, players)}"
    elif game.status == service_pb2.GAME_STATUS_DELETED and game.HasField("deletion"):
        line += f"  {deletion_words(game.deletion)}"
    if game.title:
        line += f"  “{game.title}”"
    return line


def deletion_words(deletion: service_pb2.GameDeletion) -> str:
    """ "deleted by Ann on 2026-12-02 07:10 UTC (a test game)"."""
    when = deletion.time.ToDatetime(tzinfo=datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    reason = f" ({deletion.reason})" if deletion.reason else ""
    return f"deleted by {deletion.by or 'the owner'} on {when}{reason}"


def players_moves(game: service_pb2.GameSummary) -> int:
    """The players' moves in effect, as the text record numbers them (the table's reveals
    and deals not counted); all moves for a summary from a server that does not say."""
    if game.HasField("player_move_count"):
        return game.player_move_count
    return game.move_count


def show_snapshot(state: service_pb2.StateSnapshot, players: Sequence[str]) -> str:
    header = f"revision {state.revision} · to move: {who_moves(state.to_move, players)}"
    return f"{header}\n{state.text.rstrip()}"


MAX_LEARNED = 16
"""Moves looked back through to learn who made a move (an amendment of an amendment...):
past that, the move is named without its mover."""


def learn_move(
    client: Client, game_id: str, revision: int, narrator: Narrator, *, depth: int = 0
) -> None:
    """Teach `narrator` what the move at `revision` was (who made it, as a spectator sees
    it), so that an undo, redo or amendment of it can name it: the replay of that revision
    and the one before (whose state says who was to move). A redo re-applies a recorded
    move and an amendment's move is made by whoever made the move it replaced: that one is
    learned first."""
    for frame in client.replay(game_id, max(1, revision - 1), revision):
        event = frame.event
        if event.revision == revision and depth < MAX_LEARNED:
            body = event.WhichOneof("body")
            if body == "move_redone":
                earlier = event.move_redone.redone_revision
                learn_move(client, game_id, earlier, narrator, depth=depth + 1)
            elif body == "move_amended":
                earlier = event.move_amended.amended_revision
                learn_move(client, game_id, earlier, narrator, depth=depth + 1)
        narrator.describe(event, frame.detail)
        narrator.follow(frame.state.to_move)


def change_details(client: Client, response: Any) -> dict[int, str]:
    """What each move a change put in takes that its notation names only by its place (a
    `buy 1.3`'s card, "1k0:g3"), by revision: RecordMove's answer carries it; an amendment's
    answer does not, so its revisions are replayed for it (only when it put a move in)."""
    if hasattr(response, "details"):
        # An older server sends none: the moves are then described without their cards.
        shown = zip(response.events, response.details, strict=False)
        return {event.revision: detail for event, detail in shown}
    put_in = [
        event.revision
        for event in response.events
        if event.WhichOneof("body") == "move_amended"
        and event.move_amended.kind != events_pb2.AMEND_KIND_DELETE
    ]
    if not put_in:
        return {}
    frames = client.replay(response.game.game_id, put_in[0], put_in[-1])
    return {frame.event.revision: frame.detail for frame in frames if frame.detail}


def number_moves(narrator: Narrator, response: Any) -> dict[int, int]:
    """The numbers the text record gives the players' moves a change put in at the end
    (recorded or redone) or took back (undone), by revision, from the players' moves in
    effect after it (`GameSummary.player_move_count`): the moves put in are the last ones,
    the ones taken back were just after them. `narrator` has described (or learned) each
    move, so it knows which are the table's; none is numbered when one mover is not known
    or the server does not count (an older server)."""
    if not response.game.HasField("player_move_count"):
        return {}
    put_in: list[int] = []
    taken_back: list[int] = []
    for event in response.events:
        body = event.WhichOneof("body")
        if body == "move_recorded":
            put_in.append(event.revision)
        elif body == "move_redone":
            put_in.append(event.move_redone.redone_revision)
        elif body == "move_undone":
            taken_back.append(event.move_undone.undone_revision)
    movers = [narrator.movers.get(revision) for revision in (*put_in, *taken_back)]
    if any(mover is None for mover in movers):
        return {}
    put_in = [revision for revision in put_in if narrator.movers[revision]]
    taken_back = [revision for revision in taken_back if narrator.movers[revision]]
    count = response.game.player_move_count
    numbers = {revision: count - len(put_in) + at for at, revision in enumerate(put_in, 1)}
    # An undo takes back the last moves first.
    numbers |= {revision: count + len(taken_back) - at for at, revision in enumerate(taken_back)}
    return numbers


def change_lines(
    client: Client,
    response: Any,
    before: game_pb2.ToMove | None,
    numbers: Mapping[int, int] | None = None,
) -> list[str]:
    """The events of a change in words, one line each, a player's move numbered as the
    text record numbers it with its revision beside it (`2. Bob: take w g r  (revision
    19)`, `undid 2. Bob's take w g r (revision 19)`): `before` is whose decision it was
    before the change (None: not known); `numbers`, the numbers the caller knows of moves
    in the middle of the game (an amended move's, from `find_move`), by revision."""
    game_id = response.game.game_id
    narrator = Narrator([p.name for p in response.game.players])
    lines = []
    moved = [e.revision for e in response.events if e.WhichOneof("body") == "move_recorded"]
    deciding: dict[int, game_pb2.ToMove] = {}
    if len(moved) > 1:  # one line that stood for several moves: who made each of the others
        for frame in client.replay(game_id, moved[0], moved[-1] - 1):
            deciding[frame.event.revision + 1] = frame.state.to_move
    details = change_details(client, response)
    # What the moves taken back, put back or amended were, and who made each move, first:
    # a move's number counts the players' moves among all those of the change.
    recorded: dict[int, str] = {}
    for event in response.events:
        body = event.WhichOneof("body")
        if body == "move_undone":
            learn_move(client, game_id, event.move_undone.undone_revision, narrator)
        elif body == "move_redone":
            learn_move(client, game_id, event.move_redone.redone_revision, narrator)
        elif body == "move_amended":
            learn_move(client, game_id, event.move_amended.amended_revision, narrator)
        elif body == "move_recorded":  # who made it: whose decision it was
            narrator.to_move = before if before is not None else deciding.get(event.revision)
            recorded[event.revision] = narrator.describe(event, details.get(event.revision, ""))
            before = None  # whoever follows a move in the same change is not known here
    narrator.numbers |= {**number_moves(narrator, response), **(numbers or {})}
    for event in response.events:
        body = event.WhichOneof("body")
        words = recorded.get(event.revision) or narrator.describe(
            event, details.get(event.revision, "")
        )
        number = narrator.numbers.get(event.revision) if body == "move_recorded" else None
        if number is not None:  # as `history`, `watch` and `replay` number it
            words = f"{number}. {words}"
        named = body == "move_recorded" or (
            body == "move_amended" and event.move_amended.kind != events_pb2.AMEND_KIND_DELETE
        )  # a move put in: its revision names it (for annotate, amend)
        lines.append(f"{words}  (revision {event.revision})" if named else words)
    return lines


# ------------------------------------------------------------------ memory between commands

# What this terminal last saw of each game. A move, undo or redo is sent with that version,
# so when another recorder changed the game in between, the server refuses it (STALE_VERSION)
# instead of recording it on top of a table the recorder has not seen.


def state_dir() -> Path:
    """Where the CLI keeps what it remembers between commands (the XDG state directory)."""
    return Path(os.environ.get("TABLELOG_STATE_DIR") or platformdirs.user_state_dir("tablelog"))


def server_folder(address: str | None) -> str:
    address = resolve_address(address)  # the server the command calls (maybe the login's)
    return "".join(c if c.isalnum() else "_" for c in address)


def seen_file(address: str | None, game_id: str) -> Path:
    """One small file per server and game, so terminals recording different games at once
    never overwrite each other's memory."""
    return state_dir() / "seen" / server_folder(address) / f"{Path(game_id).name}.version"


def write_state(path: Path, text: str) -> None:
    """Written whole or not at all (a rename), so a reader never sees half a file."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_suffix(f".{os.getpid()}.tmp")
        temporary.write_text(text, encoding="utf-8")
        temporary.replace(path)
    except OSError:  # a read-only home: the CLI still works, it just remembers nothing
        pass


def remember_version(address: str | None, game_id: str, version: int) -> None:
    # Unwritable: the next change falls back to the server's current version.
    write_state(seen_file(address, game_id), str(int(version)))


# ------------------------------------------------------------------ refusals

TOKEN_HINTS = {
    "TOKEN_MISSING": "Log in with `tablelog login {address}` (or pass --token / set "
    "$TABLELOG_TOKEN).",
    "TOKEN_UNKNOWN": "The server does not know the token sent: log in again with "
    "`tablelog login {address}`.",
    "TOKEN_EXPIRED": "Ask an owner of your club for a new token (tablelog tokens create), then "
    "`tablelog login {address}`.",
    "TOKEN_REVOKED": "Ask an owner of your club for a new token (tablelog tokens create), then "
    "`tablelog login {address}`.",
}
"""What to do about a refused token, after the server's own words."""


def refusal(error: TablelogError, address: str) -> dict[str, Any]:
    """A refusal as data: the gRPC code, the server's reason, message, details and field
    violations. A server that never answered (UNAVAILABLE with no reason from a server)
    is said to be missing, with how to start one."""
    message = error.message
    if error.code == grpc.StatusCode.UNAVAILABLE and not error.reason:
        message = f"no tablelog server at {address}: start one with `tablelog serve`"
    elif error.reason in TOKEN_HINTS:
        message = f"{message} {TOKEN_HINTS[error.reason].format(address=address)}"
    refused: dict[str, Any] = {"code": error.code.name, "message": message}
    if error.reason:
        refused["reason"] = error.reason
    if error.metadata:
        refused["metadata"] = dict(sorted(error.metadata.items()))
    if error.violations:
        refused["violations"] = [{"field": f, "description": d} for f, d in error.violations]
    return refused


def report(args: argparse.Namespace, refusal: dict[str, Any], where: str = "") -> None:
    """An error on stderr: `{"error": ...}` JSON with --json, else a line and its details;
    `where` (`FILE:LINE: `) before it for a line read from a pipe or a file."""
    if getattr(args, "json", False):
        print(json.dumps({"error": refusal}, indent=2), file=sys.stderr)
        return
    print(f"{where}error: {refusal['message']}", file=sys.stderr)
    details = [refusal.get("reason", "")]
    details += [f"{k}={v}" for k, v in refusal.get("metadata", {}).items()]
    if refusal["code"] != "USAGE" and (refusal.get("reason") or refusal["code"] != "UNAVAILABLE"):
        print(f"  ({refusal['code']}: {' '.join(d for d in details if d)})", file=sys.stderr)


# ------------------------------------------------------------------ the current game

MAX_GAME_ID = 64
GAME_ID_SHAPE = re.compile(r"[a-z0-9_-]+")
"""What the server accepts as a game id (docs/service.md)."""
GENERATED_ID = re.compile(r"[a-z2-7]{12}")
"""The ids the server makes: taken for a game id, never for a move's first word, even
when no such game exists (a mistyped id is reported, not recorded as notation)."""
NO_GAME = (
    "no game named and no current game: name the game (`tablelog {command} GAME ...`) "
    "or choose one with `tablelog use GAME`"
)


def names_game(client: Client, word: str) -> bool:
    """Whether `word` is the id of a game on the server."""
    try:
        client.get_game(word)
    except TablelogError as error:
        unknown = error.code in (grpc.StatusCode.NOT_FOUND, grpc.StatusCode.INVALID_ARGUMENT)
        if unknown and not GENERATED_ID.fullmatch(word):
            return False
        raise
    return True


def game_named(args: argparse.Namespace, client: Client, text: str | None) -> str:
    """The game a command is about: the id given, else the current game (`tablelog use`).
    For a command whose free text follows the id (`text`: move, annotate), the first word
    is the id when no game is current or when it names a game on the server; otherwise
    every word is the command's text."""
    current = current_game(args.address)
    if text is None:
        given: str | None = args.game_id
        if given or current:
            return given or str(current)
        raise UsageError(NO_GAME.format(command=args.command))
    words = [word for word in getattr(args, text) if word.strip()]
    if words and (current is None or names_game(client, words[0])):
        setattr(args, text, words[1:])
        return str(words[0])
    if current is None:
        raise UsageError(NO_GAME.format(command=args.command))
    return current


def on_game(handler: Handler, text: str | None = None) -> Handler:
    """`handler` with `args.game_id` set to the game named or the current one."""

    def run(args: argparse.Namespace, client: Client) -> int:
        args.game_id = game_named(args, client, text)
        return handler(args, client)

    return run


def _current_game_file(address: str | None) -> Path:
    """The current game (`tablelog use`) of one server: game ids are per server."""
    return state_dir() / "current" / f"{server_folder(address)}.game"


def remember_current_game(address: str | None, game_id: str) -> None:
    write_state(_current_game_file(address), game_id)


def forget_current_game(address: str | None) -> None:
    _current_game_file(address).unlink(missing_ok=True)


def current_game(address: str | None) -> str | None:
    """The game `tablelog use` chose on this server, if any."""
    try:
        text = _current_game_file(address).read_text(encoding="utf-8").strip()
    except OSError:
        return None
    # Bounded and shaped like an id before it is sent anywhere (the file may be edited).
    return text if 0 < len(text) <= MAX_GAME_ID and GAME_ID_SHAPE.fullmatch(text) else None
