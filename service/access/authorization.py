"""Who may call what: the one table, role x RPC.

Each cell is ALLOW, OWN or DENY. OWN allows the call only on what is the caller's own, and
the servicer checks that part: a player's RecordMove only for a seat bound to them (and only
when the club's `players_may_record` is set), a player's or spectator's RemoveAnnotation only
of their own annotations. A link token (a spectator's read-only access to one game) may call
only the RPCs marked in the `link` column, and only on its game. The server's operator (a
server-level role, `tablelog.service.api.operators`) may call the OperatorService RPCs, and nobody
else may; elsewhere the operator has their role in their own club, as every member.

Besides the table, every RPC naming a game (`game_id`) answers NOT_FOUND for a game of
another club (`tablelog.service.access.authentication`), so a caller never learns that it exists."""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass

from tablelog.service.access.identity import Role
from tablelog.v1 import clubs_pb2, service_pb2, standings_pb2


class Access(enum.Enum):
    ALLOW = "allow"
    OWN = "own"
    """Allowed on the caller's own seats or annotations only (checked by the servicer)."""
    DENY = "deny"


@dataclass(frozen=True, slots=True)
class Row:
    owner: Access
    recorder: Access
    player: Access
    spectator: Access
    link: bool
    """Whether a link token may call it (on its own game)."""
    operator: bool = False
    """An OperatorService call: the operator only, whatever their role (the role columns
    are then all DENY)."""

    def access(self, role: Role) -> Access:
        if role is Role.OWNER:
            return self.owner
        if role is Role.RECORDER:
            return self.recorder
        if role is Role.PLAYER:
            return self.player
        return self.spectator


A, OWN, D = Access.ALLOW, Access.OWN, Access.DENY
READ = Row(A, A, A, A, link=True)
"""A read of one game: everyone in the club, and a link token on its game."""
LISTING = Row(A, A, A, A, link=False)
CHANGE = Row(A, A, D, D, link=False)
"""Creating, taking back, ending or importing games: recorders and owners."""
OWNERS = Row(A, D, D, D, link=False)
OPERATOR = Row(D, D, D, D, link=False, operator=True)
"""The server's clubs: the operator only (`tablelog.service.api.operators`)."""

TABLELOG = service_pb2.DESCRIPTOR.services_by_name["TablelogService"].full_name
CLUBS = clubs_pb2.DESCRIPTOR.services_by_name["ClubService"].full_name
OPERATORS = clubs_pb2.DESCRIPTOR.services_by_name["OperatorService"].full_name
STANDINGS = standings_pb2.DESCRIPTOR.services_by_name["StandingsService"].full_name

TABLE: Mapping[str, Row] = {
    f"/{TABLELOG}/ListGameTypes": Row(A, A, A, A, link=True),
    f"/{TABLELOG}/CreateGame": CHANGE,
    f"/{TABLELOG}/GetGame": READ,
    f"/{TABLELOG}/ListGames": LISTING,
    f"/{TABLELOG}/RecordMove": Row(A, A, OWN, D, link=False),
    f"/{TABLELOG}/UndoMove": CHANGE,
    f"/{TABLELOG}/RedoMove": CHANGE,
    f"/{TABLELOG}/AmendMove": CHANGE,
    f"/{TABLELOG}/AbandonGame": CHANGE,
    f"/{TABLELOG}/DeleteGame": OWNERS,
    f"/{TABLELOG}/GetState": READ,
    f"/{TABLELOG}/ListLegalMoves": READ,
    f"/{TABLELOG}/ReplayGame": READ,
    f"/{TABLELOG}/WatchGame": READ,
    f"/{TABLELOG}/AddAnnotation": Row(A, A, A, D, link=False),
    f"/{TABLELOG}/RemoveAnnotation": Row(A, A, OWN, OWN, link=False),
    f"/{TABLELOG}/ListAnnotations": READ,
    f"/{TABLELOG}/GetAuditLog": READ,
    f"/{TABLELOG}/VerifyGame": READ,
    f"/{TABLELOG}/ImportGame": CHANGE,
    f"/{TABLELOG}/ExportRecord": READ,
    f"/{TABLELOG}/ImportRecord": CHANGE,
    f"/{CLUBS}/WhoAmI": Row(A, A, A, A, link=True),
    f"/{CLUBS}/ListMembers": LISTING,
    f"/{CLUBS}/AddMember": OWNERS,
    f"/{CLUBS}/RemoveMember": OWNERS,
    f"/{CLUBS}/SetRole": OWNERS,
    f"/{CLUBS}/CreateToken": OWNERS,
    f"/{CLUBS}/ListTokens": OWNERS,
    f"/{CLUBS}/RevokeToken": OWNERS,
    f"/{CLUBS}/CreateLinkToken": CHANGE,
    f"/{CLUBS}/BindSeat": CHANGE,
    f"/{CLUBS}/UpdateClub": OWNERS,
    f"/{OPERATORS}/CreateClub": OPERATOR,
    f"/{OPERATORS}/ListClubs": OPERATOR,
    f"/{OPERATORS}/SuspendClub": OPERATOR,
    f"/{OPERATORS}/ResumeClub": OPERATOR,
    f"/{OPERATORS}/DeleteClub": OPERATOR,
    f"/{CLUBS}/ListPlayers": LISTING,
    f"/{CLUBS}/RenamePlayer": CHANGE,
    f"/{CLUBS}/MergePlayers": CHANGE,
    f"/{CLUBS}/BindPlayer": OWNERS,
    f"/{CLUBS}/ListRosterChanges": LISTING,
    f"/{STANDINGS}/GetStandings": LISTING,
    f"/{STANDINGS}/GetPlayerRecord": LISTING,
    f"/{STANDINGS}/GetGameTypeStats": LISTING,
    f"/{STANDINGS}/ListSeasons": LISTING,
    f"/{STANDINGS}/SetSeason": OWNERS,
    f"/{STANDINGS}/RebuildProjections": OWNERS,
}
"""Every RPC of the three services; an RPC not in it is refused to everyone."""

NOBODY = Row(D, D, D, D, link=False)
_INPUTS = {
    f"/{service.full_name}/{method.name}": method.input_type
    for service in (
        service_pb2.DESCRIPTOR.services_by_name["TablelogService"],
        clubs_pb2.DESCRIPTOR.services_by_name["ClubService"],
        clubs_pb2.DESCRIPTOR.services_by_name["OperatorService"],
        standings_pb2.DESCRIPTOR.services_by_name["StandingsService"],
    )
    for method in service.methods
}


def row(method: str) -> Row:
    """The table's row for a full method name (`/tablelog.v1.TablelogService/RecordMove`)."""
    return TABLE.get(method, NOBODY)


def short_name(method: str) -> str:
    return method.rsplit("/", 1)[-1]


def render() -> str:
    """The table as the Markdown docs/service.md shows ("Who may do what"; a test holds the
    document to it)."""
    words = {Access.ALLOW: "yes", Access.OWN: "own", Access.DENY: "-"}
    lines = [
        "| RPC | operator | owner | recorder | player | spectator | link token |",
        "|---|---|---|---|---|---|---|",
    ]
    for method, found in TABLE.items():
        service, rpc = method.strip("/").split("/")
        cells = [words[found.access(role)] for role in Role]
        names_game = "game_id" in _INPUTS[method].fields_by_name
        link = ("its game" if names_game else "yes") if found.link else "-"
        # Outside OperatorService the operator is a member of their club like any other.
        operator = "yes" if found.operator else "by role"
        lines.append(
            f"| {service.rsplit('.', 1)[-1]}.{rpc} | {operator} | {' | '.join(cells)} | {link} |"
        )
    return "\n".join(lines)
