"""`tablelog clubs`: the server's clubs, for its operator (the OperatorService). On the
machine that runs `tablelog serve` the token the CLI finds in the data directory is the
operator's, so `tablelog clubs create "Thursday club"` works with no set-up."""

from __future__ import annotations

import argparse
from typing import Any

from tablelog.v1 import clubs_pb2
from tablelog_client.common import UsageError, print_json
from tablelog_client.sdk import Client
from tablelog_client.words import counted

DAY = 24 * 3600


def describe_club(club: clubs_pb2.Club) -> str:
    state = "suspended" if club.suspended else "active"
    return f"{club.club_id}  {club.name}  {state}"


def _print(args: argparse.Namespace, message: Any, text: str) -> None:
    if args.json:
        print_json(message)
    else:
        print(text)


def cmd_clubs_create(args: argparse.Namespace, client: Client) -> int:
    created = client.create_club(args.name, args.owner, args.expires_in_days * DAY)
    if args.json:
        _print(args, created, "")
        return 0
    # The token alone on stdout, so `token=$(tablelog clubs create NAME)` keeps it; what
    # it is goes to stderr.
    import sys

    print(
        f"club {created.club.club_id} ({created.club.name}) created; first owner "
        f"{created.owner.display_name} ({created.owner.member_id}). Their token, shown once "
        "(give it to them: tablelog login ADDRESS --token TOKEN):",
        file=sys.stderr,
    )
    print(created.owner_token)
    return 0


def cmd_clubs_list(args: argparse.Namespace, client: Client) -> int:
    clubs = client.list_clubs()
    _print(
        args,
        clubs_pb2.ListClubsResponse(clubs=clubs),
        "\n".join(describe_club(club) for club in clubs),
    )
    return 0


def cmd_clubs_suspend(args: argparse.Namespace, client: Client) -> int:
    club = client.suspend_club(args.club_id)
    _print(args, club, describe_club(club))
    return 0


def cmd_clubs_resume(args: argparse.Namespace, client: Client) -> int:
    club = client.resume_club(args.club_id)
    _print(args, club, describe_club(club))
    return 0


def cmd_clubs_delete(args: argparse.Namespace, client: Client) -> int:
    if not args.yes:
        raise UsageError(
            f"deleting {args.club_id} deletes its members, tokens and every game it recorded, "
            "for good: add --yes"
        )
    deleted = client.delete_club(args.club_id)
    _print(
        args,
        clubs_pb2.DeleteClubResponse(games_deleted=deleted),
        f"deleted {args.club_id} and its {counted(deleted, 'game')}",
    )
    return 0


def add_operator_commands(sub: Any, common: argparse.ArgumentParser) -> None:
    """`tablelog clubs ACTION` (the server's operator only)."""
    clubs = sub.add_parser(
        "clubs", help="the server's clubs (its operator creates, suspends and deletes them)"
    )
    inner = clubs.add_subparsers(
        dest="clubs_command",
        metavar="ACTION",
        required=True,
        help="create, list, suspend, resume, delete",
    )

    def leaf(name: str, handler: Any, help_text: str) -> Any:
        command = inner.add_parser(name, parents=[common], help=help_text, description=help_text)
        command.set_defaults(handler=handler)
        return command

    command = leaf(
        "create", cmd_clubs_create, "a new club; prints its first owner's token (shown once)"
    )
    command.add_argument("name", help="the club's name")
    command.add_argument("--owner", default="", help="the first owner's name (default: owner)")
    command.add_argument(
        "--expires-in-days", type=int, default=0, help="the owner token's life (default: never)"
    )
    leaf("list", cmd_clubs_list, "the server's clubs")
    command = leaf("suspend", cmd_clubs_suspend, "refuse every call of a club's members")
    command.add_argument("club_id")
    command = leaf("resume", cmd_clubs_resume, "lift a suspension")
    command.add_argument("club_id")
    command = leaf("delete", cmd_clubs_delete, "delete a club and all it owns, for good")
    command.add_argument("club_id")
    command.add_argument("--yes", action="store_true", help="yes, delete it for good")
