"""The CLI's commands about who you are and who else may record: `login`, `whoami`,
`members`, `tokens`, `share`, `seat` and `club`. Which token is sent is
`tablelog_client.credentials`."""

from __future__ import annotations

import argparse
import getpass
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import quote

from google.protobuf.message import Message

from tablelog.v1 import clubs_pb2
from tablelog_client.common import UsageError, game_named, on_game, print_json, refusal, report
from tablelog_client.credentials import (
    default_server,
    forget_server,
    shown_path,
    store_token,
    stored_ca,
)
from tablelog_client.sdk import DEFAULT_ADDRESS, ROLE_NAMES, ROLES, Client, TablelogError
from tablelog_client.words import counted

Handler = Callable[[argparse.Namespace, Client], int]
AddCommand = Callable[..., argparse.ArgumentParser]
DAY = 24 * 3600


def _print(args: argparse.Namespace, message: Message, text: str) -> None:
    if args.json:
        print_json(message)
    else:
        print(text)


def _date(stamp: Any) -> str:
    return stamp.ToDatetime().strftime("%Y-%m-%d %H:%M") if stamp.seconds else "never"


def describe_member(member: clubs_pb2.Member) -> str:
    return f"{member.member_id}  {member.display_name}  {ROLE_NAMES.get(member.role, '?')}"


def describe_token(token: clubs_pb2.TokenInfo) -> str:
    what = f"link to game {token.game_id}" if token.game_id else f"member {token.member_id}"
    state = "revoked" if token.revoked else f"expires {_date(token.expire_time)}"
    return (
        f"{token.token_id}  …{token.last_chars}  {what}  created {_date(token.created_time)}"
        f"  {state}"
    )


def find_member(client: Client, wanted: str) -> clubs_pb2.Member:
    """A member by id or display name (case-insensitive)."""
    members = client.members()
    for member in members:
        if member.member_id == wanted:
            return member
    named = [m for m in members if m.display_name.casefold() == wanted.casefold()]
    if len(named) == 1:
        return named[0]
    raise UsageError(f"the club has no member {wanted!r} (tablelog members list)")


# ------------------------------------------------------------------ commands


def run_login(args: argparse.Namespace) -> int:
    """Check a token with WhoAmI and keep it for the address (its own client: the token is
    the one given, never one found elsewhere)."""
    token = args.token or getpass.getpass(f"token for {args.server}: ").strip()
    if not token:
        print("error: no token given", file=sys.stderr)
        return 2
    # Kept as an absolute path (found from any folder); a login again without --ca keeps
    # the CA already kept for the server.
    ca = str(Path(args.ca).resolve()) if args.ca else stored_ca(args.server)
    try:
        with Client(args.server, token=token, ca=ca) as client:
            who = client.whoami()
    except TablelogError as error:
        report(args, refusal(error, args.server))
        return 1
    path = store_token(args.server, token, ca=ca)
    print(
        f"logged in to {args.server} as {who.member.display_name} "
        f"({ROLE_NAMES.get(who.member.role, '?')} of {who.club.name or who.club.club_id}); "
        f"token kept in {shown_path(path)}"
    )
    print(
        f"{args.server} is now your default server: commands go there without --address "
        "(`tablelog logout` forgets it)"
    )
    return 0


def run_logout(args: argparse.Namespace) -> int:
    """Forget the token kept for a server (default: the default one) on this machine."""
    server = args.server or default_server()
    if server is None:
        print("not logged in to any server (tablelog login ADDRESS)", file=sys.stderr)
        return 1
    if not forget_server(server):
        print(f"no token kept for {server} (tablelog login {server})", file=sys.stderr)
        return 1
    print(
        f"logged out of {server}: its token is forgotten on this machine (it stays valid "
        "until an owner of the club revokes it: tablelog tokens revoke)"
    )
    return 0


def cmd_whoami(args: argparse.Namespace, client: Client) -> int:
    who = client.whoami()
    source = f" (token from {client.token.source})" if client.token else ""
    if who.game_id:
        text = (
            f"a link token of {who.club.club_id} for game {who.game_id} on {client.address}{source}"
        )
    else:
        text = (
            f"{who.member.display_name} ({ROLE_NAMES.get(who.member.role, '?')}) of "
            f"{who.club.name or who.club.club_id}, member {who.member.member_id}, on "
            f"{client.address}{source}"
        )
    _print(args, who, text)
    return 0


def cmd_members_list(args: argparse.Namespace, client: Client) -> int:
    members = client.members()
    _print(
        args,
        clubs_pb2.ListMembersResponse(members=members),
        "\n".join(describe_member(m) for m in members),
    )
    return 0


def cmd_members_add(args: argparse.Namespace, client: Client) -> int:
    member = client.add_member(args.name, args.role)
    text = describe_member(member)
    if args.with_token:
        created = client.create_token(member.member_id, args.expires_in_days * DAY)
        text += f"\ntoken (shown once, give it to {member.display_name}): {created.token}"
        _print(args, created, text)
        return 0
    _print(args, member, text)
    return 0


def cmd_members_remove(args: argparse.Namespace, client: Client) -> int:
    member = find_member(client, args.member)
    revoked = client.remove_member(member.member_id)
    print(f"removed {member.display_name}; {counted(revoked, 'token')} revoked")
    return 0


def cmd_members_role(args: argparse.Namespace, client: Client) -> int:
    member = client.set_role(find_member(client, args.member).member_id, args.role)
    _print(args, member, describe_member(member))
    return 0


def cmd_tokens_create(args: argparse.Namespace, client: Client) -> int:
    member_id = find_member(client, args.member).member_id if args.member else ""
    created = client.create_token(member_id, args.expires_in_days * DAY)
    _print(
        args,
        created,
        f"{describe_token(created.info)}\ntoken (shown once, keep it): {created.token}",
    )
    return 0


def cmd_tokens_list(args: argparse.Namespace, client: Client) -> int:
    member_id = find_member(client, args.member).member_id if args.member else ""
    tokens = client.tokens(member_id)
    _print(
        args,
        clubs_pb2.ListTokensResponse(tokens=tokens),
        "\n".join(describe_token(t) for t in tokens),
    )
    return 0


def cmd_tokens_revoke(args: argparse.Namespace, client: Client) -> int:
    token = client.revoke_token(args.token_id)
    _print(args, token, describe_token(token))
    return 0


WEB_PORT = 8080
"""`tablelog serve`'s default HTTP port, where the web app is."""


def web_address(args: argparse.Namespace) -> str:
    """Where the web app is: `--web`, else $TABLELOG_WEB_URL, else the server's host on the
    default HTTP port (`tablelog serve --http-address`)."""
    given = args.web or os.environ.get("TABLELOG_WEB_URL", "")
    if given:
        return given.rstrip("/")
    address = args.address or os.environ.get("TABLELOG_ADDRESS") or DEFAULT_ADDRESS
    host = address.rsplit(":", 1)[0] if ":" in address else address
    return f"http://{host}:{WEB_PORT}"


def cmd_share(args: argparse.Namespace, client: Client) -> int:
    created = client.create_link_token(args.game_id, args.expires_in_days * DAY)
    # The link a club pastes in its chat: the web app reads the token from the fragment
    # (which a browser never sends to the server) and opens the game.
    link = f"{web_address(args)}/games/{quote(args.game_id)}#token={created.token}"
    _print(
        args,
        created,
        f"read-only link for game {args.game_id} (expires "
        f"{_date(created.info.expire_time)}):\n{link}\n"
        f"the link token alone: {created.token}\n"
        f"anyone with it can follow the game: tablelog watch {args.game_id} --token <token>",
    )
    return 0


def cmd_seat(args: argparse.Namespace, client: Client) -> int:
    member_id = find_member(client, args.member).member_id if args.member else ""
    seats = client.bind_seat(args.game_id, args.seat, member_id)
    text = "\n".join(f"seat {i}: {m or 'nobody'}" for i, m in enumerate(seats))
    _print(args, clubs_pb2.BindSeatResponse(seat_member_ids=seats), text)
    return 0


def cmd_club(args: argparse.Namespace, client: Client) -> int:
    if args.players_may_record is None and args.name is None:
        club = client.whoami().club
    else:
        allowed = None if args.players_may_record is None else args.players_may_record == "yes"
        club = client.update_club(name=args.name, players_may_record=allowed)
    text = (
        f"{club.club_id}  {club.name}  players "
        f"{'may' if club.players_may_record else 'may not'} record their own seats"
    )
    _print(args, club, text)
    return 0


def on_seat(handler: Handler) -> Handler:
    """`seat [GAME] SEAT [MEMBER]`: a first word that is a seat number names no game (ids
    the server makes hold letters), so the current game is meant."""

    def run(args: argparse.Namespace, client: Client) -> int:
        words = list(args.words)
        if words and words[0].isdigit():
            args.game_id = None
            args.game_id = game_named(args, client, None)
        else:
            args.game_id = words.pop(0)
        if not words or not words[0].isdigit() or len(words) > 2:
            raise UsageError("usage: tablelog seat [GAME] SEAT [MEMBER] (SEAT: a number from 0)")
        args.seat = int(words[0])
        args.member = words[1] if len(words) > 1 else None
        return handler(args, client)

    return run


# ------------------------------------------------------------------ parser


def add_club_commands(
    sub: Any, common: argparse.ArgumentParser, add: Callable[[str, Handler, str], Any]
) -> None:
    """Add the commands to the CLI's subparsers (`add` makes a command with the common
    options)."""
    login = sub.add_parser(
        "login",
        help="check a token for a server and keep it in your config directory",
        description="Check a token with the server (WhoAmI) and keep it for that address in "
        "$XDG_CONFIG_HOME/tablelog/credentials.json (mode 0600); that server becomes the "
        "default for every command given no --address.",
    )
    login.add_argument("server", metavar="ADDRESS", help="the server, host:port")
    login.add_argument("--token", help="the token (asked for when not given)")
    login.add_argument(
        "--ca", help="a server with TLS: trust the CA in this PEM file (kept with the token)"
    )
    login.set_defaults(run=run_login, json=False)
    logout = sub.add_parser(
        "logout",
        help="forget the token kept for a server",
        description="Forget the token `tablelog login` kept for a server on this machine (and "
        "that it is the default server). The token stays valid until an owner revokes it.",
    )
    logout.add_argument(
        "server", metavar="ADDRESS", nargs="?", help="the server (default: the default server)"
    )
    logout.set_defaults(run=run_logout)

    add("whoami", cmd_whoami, "who your token says you are, in which club")

    roles = sorted(ROLES)
    members = sub.add_parser("members", help="the club's members (owners change them)")
    inner = members.add_subparsers(
        dest="members_command", metavar="ACTION", required=True, help="list, add, remove, role"
    )

    def leaf(parent: Any, name: str, handler: Handler, help_text: str) -> Any:
        command = parent.add_parser(name, parents=[common], help=help_text, description=help_text)
        command.set_defaults(handler=handler)
        return command

    leaf(inner, "list", cmd_members_list, "the club's members and their roles")
    command = leaf(inner, "add", cmd_members_add, "add a member: tablelog members add Ann")
    command.add_argument("name", help="the member's display name (unique in the club)")
    command.add_argument("--role", choices=roles, default="player", help="(default: player)")
    command.add_argument(
        "--with-token", action="store_true", help="also make a token for them (shown once)"
    )
    command.add_argument("--expires-in-days", type=int, default=90, help="(default: 90)")
    command = leaf(inner, "remove", cmd_members_remove, "remove a member and revoke their tokens")
    command.add_argument("member", help="the member's id or name")
    command = leaf(inner, "role", cmd_members_role, "change a member's role")
    command.add_argument("member", help="the member's id or name")
    command.add_argument("role", choices=roles)

    tokens = sub.add_parser("tokens", help="the club's tokens (owners manage them)")
    inner = tokens.add_subparsers(
        dest="tokens_command", metavar="ACTION", required=True, help="create, list, revoke"
    )
    command = leaf(inner, "create", cmd_tokens_create, "a new token (shown once)")
    command.add_argument("member", nargs="?", help="for this member (default: you)")
    command.add_argument("--expires-in-days", type=int, default=90, help="(default: 90)")
    command = leaf(inner, "list", cmd_tokens_list, "the tokens (never the tokens themselves)")
    command.add_argument("member", nargs="?", help="only this member's")
    command = leaf(inner, "revoke", cmd_tokens_revoke, "revoke a token by its id")
    command.add_argument("token_id", help="as `tablelog tokens list` shows it")

    command = add("share", on_game(cmd_share), "a read-only link token for one game, to share")
    command.add_argument(
        "game_id", nargs="?", help="the game's id (default: the current game, see `tablelog use`)"
    )
    command.add_argument("--expires-in-days", type=int, default=30, help="(default: 30)")
    command.add_argument(
        "--web",
        default=None,
        help="the web app's address for the link (default: $TABLELOG_WEB_URL, else the "
        f"server's host on port {WEB_PORT})",
    )

    command = add(
        "seat", on_seat(cmd_seat), "bind a seat of a game to a member (a player records it)"
    )
    command.add_argument(
        "words",
        nargs="+",
        metavar="[GAME] SEAT [MEMBER]",
        help="the game's id (default: the current game, see `tablelog use`), the seat from 0, "
        "and the member's id or name (none: unbind)",
    )

    command = add("club", cmd_club, "your club and its settings (owners change them)")
    command.add_argument(
        "--players-may-record",
        choices=("yes", "no"),
        help="whether players may record moves for their own seats",
    )
    command.add_argument("--name", help="rename the club")
