"""The CLI's `players` command (issue 28): the club's players, matched to the seats of its
games by name; `rename`, `merge` (two names for one person) and `bind` (a player is a
member); `log`, every change of the roster with who made it."""

from __future__ import annotations

import argparse
from typing import Any

from tablelog.v1 import clubs_pb2
from tablelog_client.club_cli import _print, find_member
from tablelog_client.common import Handler
from tablelog_client.sdk import Client


def describe_player(player: clubs_pb2.ClubPlayer) -> str:
    text = player.display_name
    if player.aliases:
        text += f"  (also {', '.join(player.aliases)})"
    if player.member_id:
        text += f"  member {player.member_id}"
    return text


def cmd_players_list(args: argparse.Namespace, client: Client) -> int:
    found = client.players()
    lines = [describe_player(p) for p in found.players] or ["no players yet"]
    _print(args, found, "\n".join(lines))
    return 0


def cmd_players_rename(args: argparse.Namespace, client: Client) -> int:
    changed = client.rename_player(args.name, args.new_name)
    _print(args, changed, f"renamed: {describe_player(changed.player)}")
    return 0


def cmd_players_merge(args: argparse.Namespace, client: Client) -> int:
    changed = client.merge_players(args.name, args.merged_name)
    _print(args, changed, f"merged: {describe_player(changed.player)}")
    return 0


def cmd_players_bind(args: argparse.Namespace, client: Client) -> int:
    member_id = find_member(client, args.member).member_id if args.member else ""
    changed = client.bind_player(args.name, member_id)
    _print(args, changed, f"bound: {describe_player(changed.player)}")
    return 0


def cmd_players_log(args: argparse.Namespace, client: Client) -> int:
    found = client.roster_changes()
    lines = [
        f"{change.version:>4}  {change.time.ToDatetime():%Y-%m-%d %H:%M}  {line}"
        for change, line in zip(found.changes, found.lines, strict=True)
    ]
    _print(args, found, "\n".join(lines) or "no changes yet")
    return 0


def add_players_commands(sub: Any, common: argparse.ArgumentParser) -> None:
    players = sub.add_parser(
        "players",
        parents=[common],
        help="the club's players: list, rename, merge, bind, log",
        description="The club's players: everyone seated in its games (names compared as "
        "the `list --player` filter compares them) and everyone its roster names.",
    )
    players.set_defaults(handler=cmd_players_list)
    inner = players.add_subparsers(
        dest="players_command", metavar="ACTION", help="list (default), rename, merge, bind, log"
    )

    def leaf(name: str, handler: Handler, help_text: str) -> Any:
        command = inner.add_parser(name, parents=[common], help=help_text, description=help_text)
        command.set_defaults(handler=handler)
        return command

    leaf("list", cmd_players_list, "every player, with their other names and member")
    command = leaf("rename", cmd_players_rename, "a new display name (the old one stays an alias)")
    command.add_argument("name", help="any name of the player")
    command.add_argument("new_name")
    command = leaf(
        "merge", cmd_players_merge, "two names of one person: tablelog players merge Ann Anne"
    )
    command.add_argument("name", help="the player kept")
    command.add_argument("merged_name", help="the name that becomes theirs")
    command = leaf("bind", cmd_players_bind, "say which member a player is")
    command.add_argument("name", help="any name of the player")
    command.add_argument("member", nargs="?", help="the member's id or name (none: unbind)")
    leaf("log", cmd_players_log, "every change of the club's players: who, what, when")
