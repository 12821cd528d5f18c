"""`tablelog`: record, replay, watch and check games from a terminal.

A thin client: it sends text and prints what the server answers. Subcommands contributed by
other installed packages (`tablelog serve`, from the service) are found through the entry
point group "tablelog.commands": each entry is a function that adds its subparser."""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import importlib
import json
import mimetypes
import os
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from importlib.metadata import PackageNotFoundError, entry_points, version
from pathlib import Path
from typing import Any

import grpc
from google.protobuf import json_format
from google.protobuf.descriptor import FieldDescriptor

from tablelog.v1 import events_pb2, game_pb2, service_pb2
from tablelog_client.archive import archive_text, original_events
from tablelog_client.club_cli import add_club_commands
from tablelog_client.common import (
    NO_GAME,
    Handler,
    UsageError,
    change_lines,
    current_game,
    deletion_words,
    describe_game,
    forget_current_game,
    game_named,
    names_game,
    on_game,
    players_moves,
    print_json,
    refusal,
    remember_current_game,
    remember_version,
    report,
    seen_file,
    show_snapshot,
    to_json,
    who_moves,
)
from tablelog_client.credentials import CredentialsError
from tablelog_client.moves import (
    MOVE_HELP,
    MOVE_REFERENCE,
    MoveInEffect,
    SetupFold,
    Step,
    find_move,
    history_lines,
    moves_in_effect,
    numbered,
    step_words,
)
from tablelog_client.operator_cli import add_operator_commands
from tablelog_client.players_cli import add_players_commands
from tablelog_client.sdk import (
    DEFAULT_ADDRESS,
    MODES,
    STATUSES,
    Client,
    TablelogError,
    resolve_address,
    variation_words,
)
from tablelog_client.standings_cli import add_standings_commands
from tablelog_client.words import Narrator

PLUGIN_GROUP = "tablelog.commands"
CLIENT_NAME = "tablelog-cli/0.1"


def approximate_lines(game: service_pb2.GameSummary) -> list[str]:
    """The notes of the component data marked approximate or unverified, one per line."""
    if not game.approximate_components:
        return []
    notes = list(game.approximate_notes) or ["some component data is approximate"]
    return [f"approximate data: {note}" for note in notes]


# ------------------------------------------------------------------ commands


def cmd_games(args: argparse.Namespace, client: Client) -> int:
    types = client.game_types()
    if args.json:
        print_json(service_pb2.ListGameTypesResponse(games=types))
        return 0
    for info in types:
        modes = "/".join(game_pb2.Mode.Name(m).removeprefix("MODE_").lower() for m in info.modes)
        print(
            f"{info.name:20} {info.title} ({info.min_players}-{info.max_players} players; {modes})"
        )
        for option in info.options:
            default = f" (default {option.default_value})" if option.default_value else ""
            print(f"    --option {option.name}=...{default}  {option.description}")
    return 0


def cmd_list(args: argparse.Namespace, client: Client) -> int:
    filtered = args.game or args.status or args.player
    games = list(client.list_games(args.game or "", args.status or "", player=args.player or ""))
    if args.json:
        print_json(service_pb2.ListGamesResponse(games=games))
        return 0
    for game in games:
        print(describe_game(game))
    if not games:
        print("no games match" if filtered else "no games yet: tablelog new splendor Ann Bob")
    return 0


def cmd_info(args: argparse.Namespace, client: Client) -> int:
    game = client.get_game(args.game_id)
    remember_version(args.address, game.game_id, game.version)
    if args.json:
        print_json(game)
    else:
        print(describe_game(game))
        for line in approximate_lines(game):
            print(line)
    return 0


def _enum_values(field: FieldDescriptor) -> dict[str, str]:
    """An enum option's accepted values as a user types them (`open` for
    MERCADO_DE_LISBOA_MONEY_OPEN: the part after the prefix all values share), to their
    full names; the unspecified zero value is not offered."""
    assert field.enum_type is not None
    names = [v.name for v in field.enum_type.values if not v.name.endswith("_UNSPECIFIED")]
    words = [name.split("_") for name in names]
    common = 0
    while len(names) > 1 and all(
        len(w) > common + 1 and w[common] == words[0][common] for w in words
    ):
        common += 1
    shared = "_".join(words[0][:common]) + "_" if common else ""
    return {name.removeprefix(shared).lower(): name for name in names}


def _kind(field: FieldDescriptor, *, one: bool = False) -> str:
    """What an option's value must be, in words (`one`: a single item of a list)."""
    if field.is_repeated and not one:
        if field.enum_type is not None:
            return "a JSON list of values from: " + ", ".join(_enum_values(field))
        if field.message_type is not None:
            return "a JSON list of objects with keys from: " + ", ".join(
                field.message_type.fields_by_name
            )
        plural = {"true or false": "trues and falses", "text": "texts"}
        single = _kind(field, one=True)
        return "a JSON list of " + plural.get(single, single.removeprefix("a ") + "s")
    if field.enum_type is not None:
        return "one of: " + ", ".join(_enum_values(field))
    if field.message_type is not None:
        keys = ", ".join(field.message_type.fields_by_name)
        return f"a JSON object with keys from: {keys}"
    if field.type == FieldDescriptor.TYPE_BOOL:
        return "true or false"
    if field.type in (FieldDescriptor.TYPE_FLOAT, FieldDescriptor.TYPE_DOUBLE):
        return "a number"
    if field.cpp_type in (
        FieldDescriptor.CPPTYPE_INT32,
        FieldDescriptor.CPPTYPE_INT64,
        FieldDescriptor.CPPTYPE_UINT32,
        FieldDescriptor.CPPTYPE_UINT64,
    ):
        return "a whole number"
    return "text"


def _option_value(field: FieldDescriptor, text: str) -> Any:
    """An option's value as its JSON form; ValueError naming the option (snake_case) and
    what it accepts."""
    if field.enum_type is not None:
        values = _enum_values(field)
        wanted = text.strip().lower().replace("-", "_")
        full = {name.lower(): name for name in values.values()}
        if wanted in values or wanted in full:
            return values.get(wanted) or full[wanted]
        raise ValueError(f"option {field.name}: {text!r} is not {_kind(field)}")
    try:
        return json.loads(text)
    except ValueError:
        return text


def _options(
    game: str, pairs: Sequence[str], players: Sequence[str] = ()
) -> game_pb2.GameOptions | None:
    """`--option NAME=VALUE` pairs as the game's options: JSON values (numbers, true/false,
    lists), enum values by the end of their name (`money=open`), a player's name for
    `first_player`, else text. Errors name the option as it is typed and what it accepts,
    never the protobuf message."""
    if not pairs:
        return None
    field = game.strip().lower().replace("-", "_")
    oneof = game_pb2.GameOptions.DESCRIPTOR.fields_by_name.get(field)
    if oneof is None or oneof.message_type is None:
        raise ValueError(f"{game!r} has no options")
    known = oneof.message_type.fields_by_name
    values: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        key = key.strip().replace("-", "_")
        if not sep or not key:
            raise ValueError(f"{pair!r}: write NAME=VALUE")
        option = known.get(key)
        if option is None:
            accepted = ", ".join(sorted(known))
            raise ValueError(f"{game} has no option {key!r}; its options: {accepted}")
        by_name = [i for i, name in enumerate(players) if name.casefold() == value.casefold()]
        if key == "first_player" and by_name:
            values[key] = by_name[0]
        else:
            values[key] = _option_value(option, value)
        try:
            json_format.ParseDict({field: {key: values[key]}}, game_pb2.GameOptions())
        except json_format.ParseError:
            kind = _kind(option) + (" or a player's name" if key == "first_player" else "")
            raise ValueError(f"option {key}: {value!r} is not {kind}") from None
    options = game_pb2.GameOptions()
    json_format.ParseDict({field: values}, options)
    return options


# Media types of the component files clients usually send; others are guessed by mimetypes.
MEDIA_TYPES = {
    ".json": "application/json",
    ".csv": "text/csv",
    ".tsv": "text/tab-separated-values",
    ".txt": "text/plain",
    ".yaml": "application/yaml",
    ".yml": "application/yaml",
    ".toml": "application/toml",
}


def media_type(path: str) -> str:
    """The media type of a component file, from its extension."""
    known = MEDIA_TYPES.get(Path(path).suffix.lower())
    return known or mimetypes.guess_type(path)[0] or "application/octet-stream"


def _components(pairs: Sequence[str], approximate: bool, note: str) -> list[game_pb2.ComponentFile]:
    """`--component NAME=FILE` pairs as component files (raises ValueError or OSError)."""
    files: list[game_pb2.ComponentFile] = []
    for pair in pairs:
        name, sep, path = pair.partition("=")
        name = name.strip()
        if not sep or not name or not path:
            raise ValueError(f"{pair!r}: write NAME=FILE, e.g. board=my_board.json")
        if any(f.name == name for f in files):
            raise ValueError(f"component {name!r} is given twice")
        files.append(
            game_pb2.ComponentFile(
                name=name,
                media_type=media_type(path),
                content=Path(path).expanduser().read_bytes(),
                approximate=approximate or bool(note),
                approximate_note=note,
            )
        )
    return files


def _record_tags(args: argparse.Namespace, client: Client) -> list[tuple[str, str]]:
    """Where and when the game is played, as the text record's tags: `--event` (default:
    the club's name), `--site`, `--date` (default: today, as the record writes dates) and
    `--table` (a table's name at a club night)."""
    event = args.event if args.event is not None else client.whoami().club.name
    date = args.date if args.date is not None else datetime.date.today().strftime("%Y.%m.%d")
    given = [("Event", event), ("Site", args.site), ("Date", date), ("Table", args.table)]
    return [(name, value.strip()) for name, value in given if value and value.strip()]


def cmd_new(args: argparse.Namespace, client: Client) -> int:
    players = [*args.players, *(args.players_option or [])]
    try:
        options = _options(args.game, args.option or [], players)
    except (json_format.ParseError, ValueError) as exc:
        raise UsageError(f"bad --option: {exc}") from None
    if (args.approximate or args.approximate_note) and not args.component:
        raise UsageError("--approximate applies to --component files")
    try:
        components = _components(
            args.component or [], args.approximate, args.approximate_note or ""
        )
    except (OSError, ValueError) as exc:
        raise UsageError(f"bad --component: {exc}") from None
    if not players:
        raise UsageError("name the players: tablelog new splendor Ann Bob")
    game = client.create_game(
        args.game,
        players,
        mode=args.mode,
        title=args.title or "",
        options=options,
        components=components,
        record_tags=_record_tags(args, client),
    )
    remember_version(args.address, game.game_id, game.version)
    if args.json:
        print_json(game)
    else:
        print(describe_game(game))
        for line in approximate_lines(game):
            print(line)
        print(
            f"record with: tablelog move {game.game_id} '<move>'   (tablelog legal {game.game_id})"
        )
    return 0


def _print_change(
    args: argparse.Namespace,
    client: Client,
    response: Any,
    before: game_pb2.ToMove | None,
    numbers: Mapping[int, int] | None = None,
) -> int:
    """The events of a change, by name and numbered ("1. Ann: take w u g  (revision 17)",
    "undid 2. Bob's buy 1.2 (1k0:g3) (revision 18)"): `before` is whose decision it was
    before the change (None: not known); `numbers`, those known of moves in the middle."""
    remember_version(args.address, response.game.game_id, response.game.version)
    if args.json:
        print_json(response)
        return 0
    for line in change_lines(client, response, before, numbers):
        print(line)
    print(describe_game(response.game))
    return 0


def _current(args: argparse.Namespace, client: Client) -> tuple[int, game_pb2.ToMove | None]:
    """The version to send with a change and whose decision it is at that version: the
    version this terminal saw (or --expect-version), else the game's current one. If the
    game has moved on since, the change is refused as stale, so `to_move` is only named
    when it belongs to that version."""
    expected = _expected(args)
    game = client.get_game(args.game_id)
    version = game.version if expected is None else expected
    return version, (game.to_move if game.version == version else None)


def _seat(args: argparse.Namespace, client: Client) -> int | None:
    """--seat as a seat number: a player's name (any case) or a number from 0."""
    given = (args.seat or "").strip()
    if not given:
        return None
    if given.isdigit():
        return int(given)
    players = [p.name for p in client.get_game(args.game_id).players]
    for seat, name in enumerate(players):
        if name.casefold() == given.casefold():
            return seat
    raise UsageError(f"--seat {given}: no player of that name (the players: {', '.join(players)})")


# ------------------------------------------------------------------ the current game


def cmd_use(args: argparse.Namespace, client: Client) -> int:
    if args.clear:
        forget_current_game(args.address)
        print(f"no current game on {resolve_address(args.address)}")
        return 0
    game_id = args.game_id or current_game(args.address)
    if game_id is None:
        print(
            f"no current game on {resolve_address(args.address)}: choose one with "
            "`tablelog use GAME` (`tablelog list` shows the games)"
        )
        return 1
    game = client.get_game(game_id)
    if args.game_id:
        remember_current_game(args.address, game.game_id)
    if args.json:
        print_json(game)
    else:
        print(("current game: " if args.game_id else "") + describe_game(game))
    return 0


def cmd_record(args: argparse.Namespace, client: Client) -> int:
    # prompt_toolkit is loaded only for the shell: every other command starts without it.
    from tablelog_client.shell import record

    if args.json:
        raise UsageError("the shell answers in words; for JSON use `tablelog move --json`")
    client.get_game(args.game_id)  # a game that is not there is reported before anything
    remember_current_game(args.address, args.game_id)
    if args.lines_file is None:
        return record(client, args.game_id, address=args.address, keep_going=args.keep_going)
    try:
        with open(args.lines_file, encoding="utf-8") as lines:
            return record(
                client,
                args.game_id,
                address=args.address,
                stdin=lines,
                source=args.lines_file,
                keep_going=args.keep_going,
            )
    except OSError as error:
        raise UsageError(f"cannot read {args.lines_file}: {error.strerror}") from error


def cmd_move(args: argparse.Namespace, client: Client) -> int:
    if not args.notation:
        raise UsageError(f"give the move: tablelog move {args.game_id} 'take w u g'")
    notation = " ".join(args.notation)
    seat = _seat(args, client)
    version, before = _current(args, client)
    response = client.record(args.game_id, notation, expected_version=version, seat=seat)
    return _print_change(args, client, response, before)


def cmd_undo(args: argparse.Namespace, client: Client) -> int:
    version, _ = _current(args, client)
    response = client.undo(args.game_id, expected_version=version, reason=args.reason)
    return _print_change(args, client, response, None)


def cmd_redo(args: argparse.Namespace, client: Client) -> int:
    version, before = _current(args, client)
    response = client.redo(args.game_id, expected_version=version)
    return _print_change(args, client, response, before)


# ---------------------------------------------------------------- amend, insert, delete
# A move in the middle of the game corrected with one command; the server re-checks every
# later move and refuses with the first that no longer applies (its rule), unless
# --drop-tail.


def _named_move(
    args: argparse.Namespace, client: Client, text: str, doing: str
) -> tuple[int, MoveInEffect | None]:
    """The revision of the move `text` names (`17.`, `r45`, `45`) and the move that stands
    there (None: none does; the server says what it is); a table event is said to be one
    before it is changed or annotated (a slip the recorder should see)."""
    players = [p.name for p in client.get_game(args.game_id).players]
    revision, move = find_move(text, moves_in_effect(client, args.game_id, players))
    if move is not None and move.table and not args.json:
        print(f"{doing} a table event, not a player's move: {move.named()}", file=sys.stderr)
    return revision, move


def _game_then(args: argparse.Namespace, client: Client, words: list[str]) -> list[str]:
    """Set `args.game_id` from `words` (`[GAME] MOVE ...`): the first word names the move,
    and the current game (`tablelog use`) is meant, when it reads as a move (`17.`, `r45`,
    `45`) that is no game's id on the server; the words after the game."""
    current = current_game(args.address)
    first = words[0] if words else ""
    if current is not None and MOVE_REFERENCE.fullmatch(first) and not names_game(client, first):
        args.game_id = current
        return words
    if len(words) < 2:
        raise UsageError(NO_GAME.format(command=args.command))
    args.game_id = first
    return words[1:]


def _amend(args: argparse.Namespace, client: Client, change: str) -> int:
    words = _game_then(args, client, [word for word in args.words if word.strip()])
    if (change == "delete") != (len(words) == 1):
        wanted = "MOVE" if change == "delete" else "MOVE NOTATION"
        raise UsageError(f"usage: tablelog {args.command} [GAME] {wanted}")
    args.revision = words[0]
    notation = " ".join(words[1:])
    seat = _seat(args, client) if change != "delete" else None
    doing = {"replace": "amending", "insert": "inserting before", "delete": "deleting"}[change]
    revision, move = _named_move(args, client, args.revision, doing)
    version, _ = _current(args, client)
    response = client.amend(
        args.game_id,
        revision,
        notation or None,
        change=change,
        seat=seat,
        reason=args.reason,
        drop_tail=args.drop_tail,
        expected_version=version,
    )
    return _print_change(args, client, response, None, numbered(move))


def cmd_amend(args: argparse.Namespace, client: Client) -> int:
    return _amend(args, client, "replace")


def cmd_insert(args: argparse.Namespace, client: Client) -> int:
    return _amend(args, client, "insert")


def cmd_delete(args: argparse.Namespace, client: Client) -> int:
    return _amend(args, client, "delete")


def _add_amend_commands(add: Callable[[str, Handler, str], argparse.ArgumentParser]) -> None:
    for name, handler, text in (
        ("amend", cmd_amend, "replace the move recorded at a revision, re-checking later moves"),
        ("insert", cmd_insert, "insert a move before the move recorded at a revision"),
        ("delete", cmd_delete, "delete the move recorded at a revision"),
    ):
        command = add(name, handler, text)
        if name == "delete":
            command.add_argument(
                "words",
                nargs="+",
                metavar="[GAME] MOVE",
                help=f"{OPTIONAL_GAME_HELP}; then {MOVE_HELP}",
            )
        else:
            command.add_argument(
                "words",
                nargs="+",
                metavar="[GAME] MOVE NOTATION",
                help=f"{OPTIONAL_GAME_HELP}; then {MOVE_HELP}; then the new move, in the "
                "game's notation",
            )
            command.add_argument(
                "--seat", help="the player you say made it (a name, or a seat number from 0)"
            )
        command.add_argument("--reason", default="", help="why, in words (kept in the history)")
        command.add_argument(
            "--drop-tail",
            action="store_true",
            help="when a later move no longer applies, drop it and the moves after it "
            "(default: refuse, naming that move and its rule)",
        )
        command.add_argument(
            "--expect-version",
            type=int,
            default=None,
            help="the version you saw (default: fetch the current one)",
        )


def png_of(svg: str) -> bytes:
    """The picture as PNG, through CairoSVG (the optional `png` extra: it needs the system's
    Cairo library, which a plain install of tablelog does not)."""
    try:
        # Imported by name: an optional dependency without type information.
        cairosvg = importlib.import_module("cairosvg")
    except ImportError:
        raise SystemExit(
            "--png needs CairoSVG: pip install 'tablelog[png]' (and the Cairo library, "
            "Debian's libcairo2); or write the SVG with --svg"
        ) from None
    png: bytes = cairosvg.svg2png(bytestring=svg.encode("utf-8"))
    return png


def write_picture(state: service_pb2.StateSnapshot, args: argparse.Namespace) -> None:
    """`tablelog show --svg/--png`: the picture to `-o FILE`, or to standard output."""
    data = png_of(state.picture) if args.png else state.picture.encode("utf-8")
    if args.output:
        Path(args.output).write_bytes(data)
    else:
        sys.stdout.buffer.write(data)
        sys.stdout.flush()


def cmd_show(args: argparse.Namespace, client: Client) -> int:
    drawn = args.svg or args.png
    # Neither --seat, --full nor --spectator: the most the caller's role may see, as the web
    # app shows it (everything for the club's owner, the spectator's view for a recorder).
    state = client.state(
        args.game_id,
        args.revision,
        seat=_seat(args, client),
        full=args.full,
        picture=drawn,
        entitled=not args.spectator,
    )
    if not args.revision:  # the head, as this terminal has now seen it (a version is a revision)
        remember_version(args.address, args.game_id, state.revision)
    if drawn:
        write_picture(state, args)
        return 0
    if args.json:
        print_json(state)
        return 0
    players = [p.name for p in client.get_game(args.game_id).players]
    print(show_snapshot(state, players))
    return 0


def _asked_viewer(args: argparse.Namespace, client: Client) -> service_pb2.Viewer | None:
    """--seat or --spectator as a viewer; None (the server's default) for neither."""
    seat = _seat(args, client)
    if seat is not None:
        return service_pb2.Viewer(seat=seat)
    return service_pb2.Viewer(spectator=True) if args.spectator else None


def cmd_legal(args: argparse.Namespace, client: Client) -> int:
    to_move, moves = client.legal_moves(
        args.game_id, args.revision, viewer=_asked_viewer(args, client)
    )
    if args.json:
        print_json(
            service_pb2.ListLegalMovesResponse(moves=moves, to_move=to_move, total_size=len(moves))
        )
        return 0
    players = [p.name for p in client.get_game(args.game_id).players]
    print(f"to move: {who_moves(to_move, players)}; {len(moves)} legal moves")
    # What to type first, then the move in the words the server says it in for this caller
    # ("Ann buys 1k0:g3 from slot 1.3"); a server without words, the card beside the text.
    width = min(max((len(move.notation) for move in moves), default=0), 40)
    for move in moves:
        if move.words:
            print(f"  {move.notation:<{width}}  {move.words}")
        else:
            print(f"  {move.notation}  ({move.detail})" if move.detail else f"  {move.notation}")
    return 0


def cmd_replay(args: argparse.Namespace, client: Client) -> int:
    seat = _seat(args, client)
    frames = list(
        client.replay(
            args.game_id,
            args.from_revision,
            args.to_revision,
            seat=seat,
            full=args.full,
            variation=args.variation,
        )
    )
    if args.json:
        for frame in frames:
            print(to_json(frame))
        return 0
    players = [p.name for p in client.get_game(args.game_id).players]
    narrator = Narrator(players)
    if frames and frames[0].event.revision > 1:
        # Who moves first in the replay is who was to move just before it.
        before = frames[0].event.revision - 1
        narrator.follow(client.state(args.game_id, before, seat=seat, full=args.full).to_move)
    notes = _notes_by_move(client, args.game_id) if not args.variation else {}
    # The setup's table events are one step, as `watch` and `history` fold them; the
    # players' moves are numbered as the text record numbers them.
    starts = bool(frames) and frames[0].event.revision <= 2 and not args.variation
    setup: SetupFold[service_pb2.ReplayGameResponse] = SetupFold(starts)
    steps: list[Step[service_pb2.ReplayGameResponse]] = []
    for frame in frames:
        words, table = step_words(narrator, frame)
        steps += setup.take(frame.event.revision, words, frame, table)
        narrator.follow(frame.state.to_move)
    steps += setup.flush()
    lines = []
    for step in steps:
        # Each event's notes under it (a folded setup's under the fold).
        annotated = (f for f in step.items if f.event.WhichOneof("body") in MOVES_ANNOTATED)
        under = [line for f in annotated for line in notes.get(f.event.revision, [])]
        lines.append("\n".join([step.words, *under]))
    interactive = args.step or (not args.all and sys.stdin.isatty() and sys.stdout.isatty())
    if not interactive:
        for step, words in zip(steps, lines, strict=True):
            print(f"== {_step_label(step)}: {words}")
            print(show_snapshot(step.items[-1].state, players))
            print()
        return 0
    return _step_through(steps, lines, players)


MOVES_ANNOTATED = ("game_created", "move_recorded", "move_amended")
"""The events an annotation anchors to: the replay shows its notes under them."""


def _notes_by_move(client: Client, game_id: str) -> dict[int, list[str]]:
    """The annotations that stand, as lines under the move (revision) they are about."""
    notes: dict[int, list[str]] = {}
    for note in client.annotations(game_id):
        if note.orphaned:
            continue
        text = " ".join(part for part in (note.glyph, note.comment) if part)
        variation = f" (instead: {variation_words(note.variation)})" if note.variation.moves else ""
        notes.setdefault(note.revision, []).append(
            f"   note: {text}{variation}  — {note.actor.user} [{note.annotation_id}]"
        )
    return notes


def _step_label(step: Step[service_pb2.ReplayGameResponse]) -> str:
    """ "revision 17", "revisions 2 to 16" (the setup), or for a step of a variation
    "variation move 2 (instead of revision 17)"."""
    frame = step.items[0]
    if not frame.HasField("variation"):
        return step.revisions
    line = frame.variation.line
    named = "/".join(f"{line[i]}.{line[i + 1]}" for i in range(0, len(line) - 1, 2))
    where = f"line {named} of the variation" if named else "variation"
    return f"{where}, move {frame.variation_move} (instead of revision {frame.event.revision})"


REPLAY_KEYS = (
    "[enter/n/→] next  [p/←] back  [f]irst  [l]ast  [digits, enter] go to revision  [q]uit"
)


def _read_key() -> str:
    """One key: at a terminal, as it is pressed (a revision number is typed digit by digit
    and ended with enter); from a pipe, one line."""
    if not sys.stdin.isatty():
        line = sys.stdin.readline()
        if not line:
            raise EOFError
        word = line.strip().lower() or "n"
        return ARROW_WORDS.get(word, word)
    import termios  # POSIX only; a pipe above needs neither
    import tty

    descriptor = sys.stdin.fileno()
    saved = termios.tcgetattr(descriptor)
    try:
        tty.setcbreak(descriptor)
        key = sys.stdin.read(1)
        if not key or key == "\x04":
            raise EOFError
        if key.isdigit():
            digits = key
            print(f"go to revision: {digits}", end="", flush=True)
            while (more := sys.stdin.read(1)).isdigit():
                digits += more
                print(more, end="", flush=True)
            return digits
        if key == "\x1b":  # an arrow key: ESC [ and a letter
            return ARROWS.get(sys.stdin.read(2), "?")
        return "n" if key in "\r\n " else key.lower()
    finally:
        termios.tcsetattr(descriptor, termios.TCSADRAIN, saved)


ARROWS = {"[C": "n", "[B": "n", "[D": "p", "[A": "p", "[H": "f", "[F": "l"}
"""Arrow keys step as in a move list: right/down next, left/up back, Home first, End last;
from a pipe, `right`, `left` and so on are read as words (ARROW_WORDS)."""
ARROW_WORDS = {"right": "n", "down": "n", "left": "p", "up": "p", "home": "f", "end": "l"}


def _step_through(
    steps: list[Step[service_pb2.ReplayGameResponse]],
    lines: Sequence[str],
    players: Sequence[str],
) -> int:
    """Step through the steps, counting in revisions (several events can share one: an
    annotation shares its move's revision; the folded setup covers several)."""
    index = 0
    last = steps[-1].last if steps else 0
    note = ""
    while steps:
        step = steps[index]
        print("\033[2J\033[H", end="")
        print(f"{step.revisions}/{last}: {lines[index]}")
        print(show_snapshot(step.items[-1].state, players))
        print(note or REPLAY_KEYS, flush=True)
        note = ""
        try:
            key = _read_key()
        except EOFError:
            return 0
        if key == "n":
            index = min(index + 1, len(steps) - 1)
        elif key == "p":
            index = max(index - 1, 0)
        elif key == "f":
            index = 0
        elif key == "l":
            index = len(steps) - 1
        elif key == "q":
            return 0
        elif key.isdigit():
            wanted = int(key)
            matches = [i for i, s in enumerate(steps) if s.first <= wanted <= s.last]
            if matches:
                index = matches[-1]
            else:
                first = steps[0].first
                note = f"no revision {wanted} here (revisions {first}-{last}); {REPLAY_KEYS}"
        else:
            note = f"unknown key {key!r}; the keys are: {REPLAY_KEYS}"
    return 0


FINISHED = (service_pb2.GAME_STATUS_ENDED, service_pb2.GAME_STATUS_ABANDONED)


def cmd_watch(args: argparse.Namespace, client: Client) -> int:
    game = client.get_game(args.game_id)
    players = [p.name for p in game.players]
    deleted = game.status == service_pb2.GAME_STATUS_DELETED
    if (deleted or game.status in FINISHED) and not args.follow and not args.from_revision:
        if args.json:
            print_json(game)
        else:
            print(describe_game(game))
            what = "was deleted" if deleted else "has ended"
            print(f"this game {what}: nothing more to watch (replay it with `tablelog replay`)")
        return 0
    if not args.json:
        print(describe_game(game), flush=True)
        if args.show and args.from_revision != 1:  # the table now, at once, not at the next event
            before = args.from_revision - 1 if args.from_revision > 1 else game.version
            print(show_snapshot(client.state(args.game_id, before), players), flush=True)
    # From the revision after the one just read, its `to_move` names the first mover; from
    # an earlier revision, the state before it does.
    narrator = Narrator(players, None if args.from_revision else game.to_move)
    if args.from_revision > 1:
        narrator.follow(client.state(args.game_id, args.from_revision - 1).to_move)
    start = args.from_revision or game.version + 1
    # The table's events before the first player's move (the setup's reveals) are folded
    # into one line, as `history` folds them; a pause in the game (a heartbeat) or the end
    # of the watch lets out what is held.
    setup: SetupFold[service_pb2.ReplayGameResponse] = SetupFold(
        start <= 2 or players_moves(game) == 0
    )

    def say(steps: list[Step[service_pb2.ReplayGameResponse]]) -> None:
        for step in steps:
            print(f"{step.revisions}: {step.words}", flush=True)
            if args.show and not step.held:
                print(show_snapshot(step.items[-1].state, players), flush=True)

    try:
        for item in client.watch(
            args.game_id, start, heartbeat_seconds=args.heartbeat, timeout=args.timeout
        ):
            if args.json:
                print(to_json(item), flush=True)
            elif item.WhichOneof("item") == "heartbeat":
                say(setup.flush())
                if args.verbose:
                    print(f"· head at revision {item.heartbeat.head_revision}", flush=True)
            else:
                update = item.update
                words, table = step_words(narrator, update)
                say(setup.take(update.event.revision, words, update, table))
            if item.WhichOneof("item") == "update":
                narrator.follow(item.update.state.to_move)
                if (
                    item.update.event.WhichOneof("body")
                    in ("game_ended", "game_abandoned", "game_deleted")
                    and not args.follow
                ):
                    return 0
    except TablelogError as error:
        if args.timeout is None or error.code != grpc.StatusCode.DEADLINE_EXCEEDED:
            raise
        say(setup.flush())
        if not args.json:
            print(f"stopped watching: --timeout {args.timeout:g}s reached", flush=True)
    say(setup.flush())
    return 0


def cmd_annotate(args: argparse.Namespace, client: Client) -> int:
    line = [move.strip() for move in (args.variation or "").split(";") if move.strip()]
    revision = _named_move(args, client, args.revision, "annotating")[0] if args.revision else 0
    note = client.annotate(
        args.game_id,
        " ".join(args.comment),
        glyph=args.glyph,
        revision=revision,
        variation=line or None,
    )
    if args.json:
        print_json(note)
    else:
        players = [p.name for p in client.get_game(args.game_id).players]
        moves = moves_in_effect(client, args.game_id, players)
        move = next((m for m in moves if m.revision == note.revision), None)
        on = move.named() if move else f"revision {note.revision}"
        print(f"annotation {note.annotation_id} on {on}")
    return 0


def cmd_remove_annotation(args: argparse.Namespace, client: Client) -> int:
    if args.annotation_id is None:  # one word: the annotation, on the current game
        args.game_id, args.annotation_id = None, args.game_id
    args.game_id = game_named(args, client, None)
    client.remove_annotation(args.game_id, args.annotation_id)
    if args.json:
        print(json.dumps({"removed": args.annotation_id}))
    else:
        print(f"annotation {args.annotation_id} removed")
    return 0


def cmd_abandon(args: argparse.Namespace, client: Client) -> int:
    version, _ = _current(args, client)
    game = client.abandon(args.game_id, expected_version=version, reason=args.reason)
    remember_version(args.address, game.game_id, game.version)
    if args.json:
        print_json(game)
    else:
        print("game abandoned" + (f" ({args.reason})" if args.reason else ""))
        print(describe_game(game))
    return 0


def cmd_delete_game(args: argparse.Namespace, client: Client) -> int:
    game = client.delete_game(args.game_id, reason=args.reason)
    if args.json:
        print_json(game)
    else:
        print(f"game {game.game_id} {deletion_words(game.deletion)}")
        print("it is kept and still verifies (`tablelog verify`, `tablelog audit`); it has left")
        print("the club's list and standings, and nothing more can be recorded in it")
    return 0


def cmd_history(args: argparse.Namespace, client: Client) -> int:
    """The moves that stand, as the shell's `history` and the text record number them."""
    game = client.get_game(args.game_id)
    moves = moves_in_effect(client, args.game_id, [p.name for p in game.players])
    if args.json:
        print(json.dumps({"moves": [dataclasses.asdict(move) for move in moves]}, indent=2))
        return 0
    for line in history_lines(moves):
        print(line)
    return 0


def cmd_annotations(args: argparse.Namespace, client: Client) -> int:
    notes = client.annotations(args.game_id)
    if args.json:
        print_json(service_pb2.ListAnnotationsResponse(annotations=notes))
        return 0
    players = [p.name for p in client.get_game(args.game_id).players]
    labels = {m.revision: m.label for m in moves_in_effect(client, args.game_id, players)}
    for note in notes:
        by = f"— {note.actor.user} [{note.annotation_id}]"
        if note.orphaned:
            by += f"  [orphaned: its move was taken out at revision {note.orphaned_by}]"
        # The move as the text record numbers it (`*`: the table's), then its revision.
        label = labels.get(note.revision, "game" if note.revision == 1 else "")
        print(f"{label:>5} revision {note.revision:>4}  {note.glyph:2} {note.comment}  {by}")
        if note.variation.moves:
            print(f"               variation: {variation_words(note.variation)}")
    return 0


def cmd_audit(args: argparse.Namespace, client: Client) -> int:
    entries = client.audit(args.game_id, viewer=_asked_viewer(args, client))
    if args.json:
        print_json(service_pb2.GetAuditLogResponse(entries=entries))
        return 0
    for entry in entries:
        event = entry.event
        when = event.time.ToDatetime().strftime("%Y-%m-%d %H:%M:%S")
        flag = "  [undone]" if entry.undone else ""
        if event.HasField("imported"):
            flag += "  [imported]" if event.imported.verified else "  [imported, unverified]"
        client_name = f" via {event.actor.client}" if event.actor.client else ""
        where = f"{event.sequence:>5} r{event.revision:<4} {when}"
        print(f"{where}  {entry.summary}{flag}{client_name}  #{event.hash.hex()[:12]}")
    return 0


def read_receipts(given: str) -> list[service_pb2.Receipt]:
    """Receipts from a file or from JSON text: a receipt, the JSON `tablelog move --json`
    (or any change with --json) printed, or a list of either."""
    text = given if given.lstrip()[:1] in ("{", "[") else Path(given).read_text(encoding="utf-8")
    try:
        found = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"--receipt {given[:40]!r}: neither a file nor JSON ({exc})") from exc
    receipts = []
    for item in found if isinstance(found, list) else [found]:
        if isinstance(item, dict) and isinstance(item.get("receipt"), dict):
            item = item["receipt"]
        try:
            receipts.append(json_format.ParseDict(item, service_pb2.Receipt()))
        except json_format.ParseError as exc:
            raise ValueError(f"--receipt {given[:40]!r}: not a receipt ({exc})") from exc
    return receipts


def cmd_verify(args: argparse.Namespace, client: Client) -> int:
    receipts: list[service_pb2.Receipt] = []
    try:
        for given in args.receipt or ():
            receipts += read_receipts(given)
    except (OSError, ValueError) as exc:
        raise UsageError(str(exc)) from None
    result = client.verify(args.game_id, receipts)
    if args.json:
        print_json(result)
    elif result.ok:
        dealt = (
            f"; {result.dealt_moves_checked} dealt outcomes re-drawn from the seed"
            if result.dealt_moves_checked
            else ""
        )
        checked = f"{result.events_checked} events"
        chain = (
            "hash chain intact (keyed)"
            if result.keyed
            else f"hash chain intact, but its first {result.unkeyed_events} events were "
            "recorded before chains were keyed (plain SHA-256: not tamper-evident)"
        )
        held = f", {result.receipts_checked} receipts held" if result.receipts_checked else ""
        print(f"ok: {checked}, {chain}{held}, every move re-validated{dealt}")
        if result.imported_unverified:
            print("note: imported from an export whose chain could not be verified")
        if result.bad_checkpoints:
            listed = ", ".join(str(s) for s in result.bad_checkpoints[:10])
            print(
                f"note: {len(result.bad_checkpoints)} of {result.checkpoints_checked} "
                f"checkpoints (after events {listed}) did not match a fresh fold: they were "
                "dropped and are made again (the history itself is fine)"
            )
    else:
        where = f"event {result.first_bad_sequence} (revision {result.first_bad_revision})"
        print(f"NOT OK at {where}: {result.problem}")
    return 0 if result.ok else 1


EXPORT_BATCH = 50
"""Games per ExportRecord or ImportRecord call of the CLI: a progress line between calls,
and each call well under the server's bounds."""


def _exported_games(args: argparse.Namespace, client: Client) -> list[str]:
    """The games `export` writes: those named, those `--all`/`--game`/`--status` select, or
    the current game."""
    if args.all or args.game or args.status:
        if args.game_ids:
            raise UsageError("name games, or select them with --all/--game/--status, not both")
        return [g.game_id for g in client.list_games(args.game or "", args.status or "")]
    if args.game_ids:
        return list(args.game_ids)
    args.game_id = None
    return [game_named(args, client, None)]


class Progress:
    """`done/total` on one line of stderr, only at a terminal and only for many items."""

    def __init__(self, what: str, total: int) -> None:
        self.what = what
        self.total = total
        self.shown = sys.stderr.isatty() and total > EXPORT_BATCH

    def update(self, done: int) -> None:
        if self.shown:
            end = "\n" if done >= self.total else ""
            print(f"\r{self.what} {done}/{self.total} games", end=end, file=sys.stderr, flush=True)


def _write_output(output: str | None, text: str) -> None:
    if output in (None, "-"):
        sys.stdout.write(text)
    else:
        with open(str(output), "w", encoding="utf-8") as out:
            out.write(text)


def cmd_export(args: argparse.Namespace, client: Client) -> int:
    ids = _exported_games(args, client)
    args.game_id = ids[0] if ids else None
    viewer = _asked_viewer(args, client) if ids else None
    if args.format == "json":
        if len(ids) != 1:
            raise UsageError(
                "the JSON-lines archive holds one game: export one, or use --format text"
            )
        events = client.export(ids[0], viewer=viewer)
        if args.original:
            events = original_events(events)
            if not events:
                raise UsageError(f"game {ids[0]} was not imported: it has no original archive")
        _write_output(args.output, archive_text(events))
        return 0
    progress = Progress("exported", len(ids))
    parts = []
    for start in range(0, len(ids), EXPORT_BATCH):
        batch = ids[start : start + EXPORT_BATCH]
        parts.append(client.export_record(batch, viewer=viewer))
        progress.update(start + len(batch))
    _write_output(args.output, "\n".join(parts))
    return 0


def split_record(text: str) -> list[str]:
    """A record's games, each as its own text: a game begins at a tag line (`[`) that
    follows a line of moves. (Only to send many games in batches; the server reads each.)"""
    games: list[list[str]] = []
    in_moves = True
    for line in text.splitlines(keepends=True):
        stripped = line.strip()
        if stripped.startswith("[") and in_moves:
            games.append([])
            in_moves = False
        elif stripped and not stripped.startswith("["):
            in_moves = True
        if not games:
            games.append([])
        games[-1].append(line)
    return ["".join(game) for game in games]


def _import_record(args: argparse.Namespace, client: Client, text: str, source: str) -> int:
    games = split_record(text)
    progress = Progress("imported", len(games))
    imported: list[service_pb2.GameSummary] = []
    for start in range(0, len(games), EXPORT_BATCH):
        batch = games[start : start + EXPORT_BATCH]
        try:
            imported += client.import_record("".join(batch), source=source)
        except TablelogError as error:
            line = error.metadata.get("line", "")
            if line.isdigit():  # the server counts the lines of the batch it was sent
                before = sum(game.count("\n") for game in games[:start])
                error.metadata["line"] = str(before + int(line))
            if imported:
                print(f"imported {len(imported)} games before this error", file=sys.stderr)
            raise
        progress.update(start + len(batch))
    if args.json:
        print_json(service_pb2.ImportRecordResponse(games=imported))
        return 0
    for game in imported:
        print(f"imported as {game.game_id}")
        print(describe_game(game))
    return 0


def _read_events(lines: Iterable[str]) -> tuple[list[events_pb2.Event], list[int]]:
    """The events of exported JSON lines, and the line each is on (blank lines skipped)."""
    events, numbers = [], []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        event = events_pb2.Event()
        try:
            json_format.Parse(line, event)
        except json_format.ParseError as exc:
            raise ValueError(f"line {number}: {exc}") from exc
        events.append(event)
        numbers.append(number)
    return events, numbers


def cmd_import(args: argparse.Namespace, client: Client) -> int:
    source = (
        args.source if args.source is not None else ("stdin" if args.file == "-" else args.file)
    )
    try:
        if args.file == "-":
            text = sys.stdin.read()
        else:
            with open(args.file, encoding="utf-8") as handle:
                text = handle.read()
        # A text record starts with a tag; the JSON-lines archive with an event's `{`.
        if text.lstrip().startswith("["):
            return _import_record(args, client, text, source[:200])
        events, numbers = _read_events(text.splitlines())
    except (OSError, ValueError) as exc:
        raise UsageError(str(exc)) from None
    try:
        game = client.import_events(
            events, accept_unverified=args.accept_unverified, source=source[:200]
        )
    except TablelogError as error:
        line = error.metadata.get("line", "")
        # The server counts events; the file may have blank lines between them.
        if line.isdigit() and 0 < int(line) <= len(numbers) and numbers[int(line) - 1] != int(line):
            error.metadata["line"] = str(numbers[int(line) - 1])
        raise
    if args.json:
        print_json(game)
    else:
        print(f"imported as {game.game_id}")
        print(describe_game(game))
    return 0


# ------------------------------------------------------------------ parser


def _common() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--address",
        default=None,
        help="server address (default: $TABLELOG_ADDRESS, else the server `tablelog login` "
        f"last kept a token for, else {DEFAULT_ADDRESS})",
    )
    common.add_argument(
        "--token",
        default=None,
        help="your bearer token (default: $TABLELOG_TOKEN, else the one `tablelog login` "
        "kept for the address, else on this machine the local server's owner token)",
    )
    common.add_argument(
        "--ca",
        default=None,
        help="connect with TLS, trusting the CA in this PEM file (default: $TABLELOG_CA)",
    )
    common.add_argument("--json", action="store_true", help="print the server's answer as JSON")
    return common


def _installed_version() -> str:
    try:
        return version("tablelog")
    except PackageNotFoundError:  # run from a source tree that was never installed
        return "(not installed)"


GAME_ID_HELP = "the game's id, as `tablelog new` and `tablelog list` print it"
SEAT_HELP = "as this player sees it (a name, or a seat number from 0)"
OPTIONAL_GAME_HELP = "the game's id (default: the current game, see `tablelog use`)"


def _viewer_arguments(command: argparse.ArgumentParser) -> None:
    """--seat / --spectator: read as that viewer (default: everything the server shows)."""
    command.add_argument("--seat", help=SEAT_HELP)
    command.add_argument(
        "--spectator", action="store_true", help="public information only (hidden moves redacted)"
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tablelog", description="Record tabletop games move by move (a tablelog client)."
    )
    parser.add_argument("--version", action="version", version=f"tablelog {_installed_version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    common = _common()

    def add(name: str, handler: Handler, help_text: str) -> argparse.ArgumentParser:
        command = sub.add_parser(name, parents=[common], help=help_text, description=help_text)
        command.set_defaults(handler=handler)
        return command

    add("games", cmd_games, "the game types the server knows")
    command = add("list", cmd_list, "the games recorded on the server, newest first")
    command.add_argument("--game", help="only this game type")
    command.add_argument("--status", choices=sorted(STATUSES), help="only games in this state")
    command.add_argument(
        "--player",
        metavar="NAME",
        help="only games with a seat of this player (the whole name, any case)",
    )
    command = add("info", on_game(cmd_info), "one game's summary (players, version, whose turn)")
    command.add_argument("game_id", nargs="?", help=OPTIONAL_GAME_HELP)
    command = add("use", cmd_use, "choose the current game, or say which it is")
    command.add_argument(
        "game_id", nargs="?", help="the game that commands without a game id are about"
    )
    command.add_argument("--clear", action="store_true", help="forget the current game")
    command = add("record", on_game(cmd_record), "record a game in an interactive shell")
    command.add_argument("game_id", nargs="?", help=OPTIONAL_GAME_HELP + "; it becomes current")
    command.add_argument(
        "--from",
        dest="lines_file",
        metavar="FILE",
        help="read the lines from FILE instead of the keyboard or a pipe",
    )
    command.add_argument(
        "--keep-going",
        action="store_true",
        help="from a pipe or file: read on after a refused line (default: stop there), "
        "recording only the moves that name their mover (`Cleo: take u g k`); every other "
        "change after it (an unnamed move, undo, redo, amend, insert, delete, note) is "
        "skipped and reported `not sent`, and the exit status is 1",
    )
    command = add("new", cmd_new, "create a game: tablelog new splendor Ann Bob")
    command.add_argument("game", help="the game type, as `tablelog games` lists them")
    command.add_argument("players", nargs="*", help="the players in seat order")
    command.add_argument(
        "--players",
        dest="players_option",
        nargs="+",
        metavar="NAME",
        help="the players in seat order (instead of positionally)",
    )
    command.add_argument(
        "--event", help="the event, as the text record's [Event] tag (default: the club's name)"
    )
    command.add_argument("--site", help="where it is played, the record's [Site] tag")
    command.add_argument("--date", help="the record's [Date] tag, e.g. 2026.12.01 (default: today)")
    command.add_argument("--table", help="the table's name at the event, the record's [Table] tag")
    command.add_argument(
        "--mode",
        choices=sorted(MODES),
        default="table",
        help="table: you type what was revealed; dealt: the server deals",
    )
    command.add_argument("--title", help="a title for the game, e.g. the club evening")
    command.add_argument(
        "--option",
        action="append",
        metavar="NAME=VALUE",
        help="a game option, e.g. first_player=Bob (repeatable; `tablelog games` lists each "
        "game's options)",
    )
    command.add_argument(
        "--component",
        action="append",
        metavar="NAME=FILE",
        help="replace the game's component file NAME (e.g. board=my_board.json) with FILE; "
        "the media type is guessed from the extension (repeatable)",
    )
    command.add_argument(
        "--approximate",
        action="store_true",
        help="mark the --component files as approximate or unverified data",
    )
    command.add_argument(
        "--approximate-note",
        metavar="TEXT",
        help="why the --component files are approximate (implies --approximate)",
    )
    for name, handler, text in (
        ("move", on_game(cmd_move, "notation"), "record a move in the game's notation"),
        ("undo", on_game(cmd_undo), "take back the last move"),
        ("redo", on_game(cmd_redo), "re-apply the last undone move"),
    ):
        command = add(name, handler, text)
        if name == "move":
            command.add_argument(
                "notation",
                nargs="+",
                metavar="[GAME] MOVE",
                help="the game's id (default: the current game, see `tablelog use`), then "
                "the move in the game's notation",
            )
            command.add_argument(
                "--seat", help="the player you say is moving (a name, or a seat number from 0)"
            )
        else:
            command.add_argument("game_id", nargs="?", help=OPTIONAL_GAME_HELP)
        if name == "undo":
            command.add_argument("--reason", default="", help="why, in words (kept in the history)")
        command.add_argument(
            "--expect-version",
            type=int,
            default=None,
            help="the version you saw (default: fetch the current one)",
        )
    _add_amend_commands(add)
    command = add("abandon", on_game(cmd_abandon), "stop the game before its end")
    command.add_argument("game_id", nargs="?", help=OPTIONAL_GAME_HELP)
    command.add_argument("--reason", default="", help="why, in words (kept in the history)")
    command.add_argument(
        "--expect-version",
        type=int,
        default=None,
        help="the version you saw (default: fetch the current one)",
    )
    command = add(
        "delete-game",
        cmd_delete_game,
        "the club's owner deletes a game: it leaves the list and the standings, is kept and "
        "still verifies, and nothing more can be recorded in it (`delete` takes back one move)",
    )
    # No default game here (`tablelog use`): a deletion cannot be taken back, so it names
    # its game every time.
    command.add_argument("game_id", help="the game's id (required: no default game here)")
    command.add_argument("--reason", default="", help="why, in words (kept in the tombstone)")
    command = add(
        "show",
        on_game(cmd_show),
        "the state as the server renders it (default: all your role may see; the owner's "
        "everything, as in the web app)",
    )
    command.add_argument("game_id", nargs="?", help=OPTIONAL_GAME_HELP)
    command.add_argument("--revision", type=int, default=0, help="default: the head")
    command.add_argument("--seat", help=SEAT_HELP)
    command.add_argument("--full", action="store_true", help="everything, hidden info too")
    command.add_argument(
        "--spectator", action="store_true", help="public information only (hidden moves redacted)"
    )
    picture = command.add_mutually_exclusive_group()
    picture.add_argument("--svg", action="store_true", help="the picture of the state, as SVG")
    picture.add_argument(
        "--png", action="store_true", help="the picture as PNG (needs the tablelog[png] extra)"
    )
    command.add_argument(
        "-o", "--output", metavar="FILE", help="write the picture there (default: stdout)"
    )
    command = add("legal", on_game(cmd_legal), "the legal moves, in notation")
    command.add_argument("game_id", nargs="?", help=OPTIONAL_GAME_HELP)
    command.add_argument("--revision", type=int, default=0, help="default: the head")
    _viewer_arguments(command)
    command = add("replay", on_game(cmd_replay), "step through a game, forward and back")
    command.add_argument("game_id", nargs="?", help=OPTIONAL_GAME_HELP)
    command.add_argument("--all", action="store_true", help="print every revision and exit")
    command.add_argument(
        "--step", action="store_true", help="step with keys read from stdin, even from a pipe"
    )
    command.add_argument(
        "--from", dest="from_revision", type=int, default=0, help="the first revision shown"
    )
    command.add_argument(
        "--to", dest="to_revision", type=int, default=0, help="the last (default: the head)"
    )
    command.add_argument("--seat", help=SEAT_HELP)
    command.add_argument("--full", action="store_true", help="everything, hidden info too")
    command.add_argument(
        "--variation",
        metavar="ANNOTATION[/LINE]",
        help="step into an annotation's variation (as `tablelog annotations` lists it; "
        "LINE: 3.1 is the first alternative to its move 3, nested 3.1/2.2)",
    )
    command = add("watch", on_game(cmd_watch), "follow a game live")
    command.add_argument("game_id", nargs="?", help=OPTIONAL_GAME_HELP)
    command.add_argument(
        "--from", dest="from_revision", type=int, default=0, help="replay from this revision first"
    )
    command.add_argument("--show", action="store_true", help="print the state after each event")
    command.add_argument("--follow", action="store_true", help="keep watching after the end")
    command.add_argument(
        "--heartbeat", type=int, default=15, help="seconds between heartbeats (see --verbose)"
    )
    command.add_argument("--timeout", type=float, default=None, help="stop after N seconds")
    command.add_argument("--verbose", action="store_true", help="print heartbeats")
    command = add("annotate", on_game(cmd_annotate, "comment"), "comment on a move")
    command.add_argument(
        "comment",
        nargs="*",
        metavar="[GAME] COMMENT",
        help="the game's id (default: the current game, see `tablelog use`), then the comment",
    )
    command.add_argument("--glyph", default="", help="! ? !! ?? !? ?!")
    command.add_argument(
        "--revision",
        "--move",
        dest="revision",
        default="",
        metavar="MOVE",
        help=MOVE_HELP + "; r1 for the game as a whole (default: the last move)",
    )
    command.add_argument(
        "--variation",
        metavar="MOVES",
        help="a line played instead of that move, moves separated by ';' "
        '(e.g. "take w u k; buy 1.2"); checked by the rules',
    )
    command = add("remove-annotation", cmd_remove_annotation, "remove an annotation (by its id)")
    command.add_argument("game_id", help=OPTIONAL_GAME_HELP)
    command.add_argument("annotation_id", nargs="?", help="as `tablelog annotations` prints it")
    command = add("history", on_game(cmd_history), "the moves that stand, numbered, by name")
    command.add_argument("game_id", nargs="?", help=OPTIONAL_GAME_HELP)
    command = add("annotations", on_game(cmd_annotations), "a game's annotations")
    command.add_argument("game_id", nargs="?", help=OPTIONAL_GAME_HELP)
    command = add("audit", on_game(cmd_audit), "every event, undone moves included")
    command.add_argument("game_id", nargs="?", help=OPTIONAL_GAME_HELP)
    _viewer_arguments(command)
    command = add(
        "verify", on_game(cmd_verify), "re-check the hash chain and re-validate every move"
    )
    command.add_argument("game_id", nargs="?", help=OPTIONAL_GAME_HELP)
    command.add_argument(
        "--receipt",
        action="append",
        metavar="FILE_OR_JSON",
        help="a receipt kept from a change (a file, or the JSON `tablelog move --json` "
        "printed): the history must still hold it; repeatable",
    )
    command = add(
        "export",
        cmd_export,
        "a game's events as JSON lines (the strict archive), or games as a text record",
    )
    command.add_argument("game_ids", nargs="*", metavar="GAME", help=OPTIONAL_GAME_HELP)
    command.add_argument(
        "--format",
        choices=("json", "text"),
        default="json",
        help="json: every event with its chain (one game); text: the record of "
        "docs/record-format.md (many games)",
    )
    command.add_argument("--all", action="store_true", help="every game of the club (text)")
    command.add_argument("--game", help="only games of this type (text)")
    command.add_argument(
        "--status", choices=sorted(STATUSES), help="only games in this state (text)"
    )
    command.add_argument("-o", "--output", help="file (default: stdout)")
    command.add_argument(
        "--original",
        action="store_true",
        help="json, of an imported game: the archive it was imported from, byte for byte",
    )
    _viewer_arguments(command)
    command = add(
        "import", cmd_import, "import a JSON-lines export, or a text record's games, as new games"
    )
    command.add_argument(
        "file", help="a file of JSON lines or a text record (told apart by content), - for stdin"
    )
    command.add_argument(
        "--accept-unverified",
        action="store_true",
        help="import an export this server cannot verify (another server's chain key, or "
        "recorded before keys), marked unverified",
    )
    command.add_argument("--source", help="where the export comes from (default: the file)")
    add_club_commands(sub, common, add)
    add_operator_commands(sub, common)
    add_players_commands(sub, common)
    add_standings_commands(sub, common)

    for plugin in entry_points(group=PLUGIN_GROUP):
        try:
            register = plugin.load()
        except ImportError as exc:  # a broken plugin must not take the client down
            print(f"warning: tablelog command {plugin.name!r} unavailable: {exc}", file=sys.stderr)
            continue
        register(sub)
    return parser


# Free text that may follow options ("annotate G --glyph ! a fine move"): argparse leaves
# such words over, and they belong to the command's trailing text argument.
TRAILING_TEXT = {
    "annotate": "comment",
    "move": "notation",
    "new": "players",
    "amend": "words",
    "insert": "words",
}


BROKEN_PIPE = 128 + 13
"""The exit status of a command whose reader went away (`tablelog legal G | head -1`), as
a shell reports a process ended by SIGPIPE."""


def _last_seen(address: str | None, game_id: str) -> int | None:
    try:
        text = seen_file(address, game_id).read_text(encoding="utf-8").strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


def _expected(args: argparse.Namespace) -> int | None:
    """--expect-version, else the version this terminal last saw, else None (the SDK then
    asks the server for the current one: the first command on a game from this terminal)."""
    if args.expect_version is not None:
        return int(args.expect_version)
    return _last_seen(args.address, args.game_id)


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command. A reader that closes the pipe early (`| head -1`) ends the command
    quietly: Python ignores SIGPIPE, so the write raises BrokenPipeError, which is caught
    here and not reported as a traceback."""
    try:
        code = _main(argv)
        sys.stdout.flush()  # inside the try: a buffered tail may meet the closed pipe
    except BrokenPipeError:
        _silence_stdout()
        return BROKEN_PIPE
    return code


def _silence_stdout() -> None:
    """Point stdout at /dev/null so that the interpreter's final flush does not fail again."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # stdout is not a real file (an embedding, a test)
        pass
    finally:
        os.close(devnull)


def _main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    trailing = TRAILING_TEXT.get(getattr(args, "command", "") or "")
    if extra:
        if trailing is None or any(word.startswith("-") for word in extra):
            parser.error(f"unrecognized arguments: {' '.join(extra)}")
        setattr(args, trailing, [*getattr(args, trailing), *extra])
    if getattr(args, "run", None) is not None:  # a plugin command runs itself
        code: int = args.run(args)
        return code
    handler: Handler | None = getattr(args, "handler", None)
    if handler is None:
        parser.print_help()
        return 2
    try:
        with Client(args.address, token=args.token, client_name=CLIENT_NAME, ca=args.ca) as client:
            return handler(args, client)
    except (UsageError, CredentialsError) as error:
        report(args, {"code": "USAGE", "message": str(error)})
        return 2
    except TablelogError as error:
        report(args, refusal(error, resolve_address(args.address)))
        current = error.metadata.get("current_version", "")
        game_id = getattr(args, "game_id", "")
        if error.reason == "STALE_VERSION" and current.isdigit() and game_id:
            remember_version(args.address, game_id, int(current))
            if not args.json:
                print(
                    f"  The game moved on since this terminal last saw it: look with "
                    f"`tablelog show {game_id}`, then record again.",
                    file=sys.stderr,
                )
        return 1
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
