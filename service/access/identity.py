"""Who calls: clubs, their members and roles, and the bearer tokens that name a member.

A token is opaque random text (`secrets.token_urlsafe(32)` behind a short prefix that says
what it is: `tlm_` a member's token, `tll_` a link token). The server keeps only its SHA-256
(`token_hash`), with its expiry and whether it is revoked; a listing shows the token's id and
last four characters, never the token. The Redis layout is `tablelog.service.access.members`.

A link token is read-only spectator access to one game of a club, for sharing; it names no
member (`Caller.member_id` is empty) and reads nothing but its game."""

from __future__ import annotations

import enum
import hashlib
import secrets
import time
from dataclasses import dataclass

from google.protobuf import timestamp_pb2

from tablelog.service.errors import InvalidRequest, PermissionDenied
from tablelog.v1 import clubs_pb2, events_pb2

MEMBER_TOKEN_PREFIX = "tlm_"
LINK_TOKEN_PREFIX = "tll_"
MAX_TOKEN_LENGTH = 200
"""Longer bearer values are refused before they are hashed (ours are 47 characters)."""
MAX_DISPLAY_NAME = 100
MAX_CLIENT_NAME = 100
MAX_MEMBERS = 1_000
"""Members of one club (a club, not a user directory)."""
MAX_TOKENS = 5_000
"""Token records of one club, revoked and expired ones included until they are pruned."""
DEFAULT_TOKEN_SECONDS = 90 * 24 * 3600
DEFAULT_LINK_SECONDS = 30 * 24 * 3600
MAX_TOKEN_SECONDS = 10 * 365 * 24 * 3600
LOCAL_CLUB = "local"
"""The club `tablelog serve` creates on a fresh data directory."""


class Role(enum.Enum):
    """What a member may do in their club; the table of who may call what is
    `tablelog.service.access.authorization`."""

    OWNER = "owner"
    RECORDER = "recorder"
    PLAYER = "player"
    SPECTATOR = "spectator"

    def message(self) -> clubs_pb2.Role.ValueType:
        return ROLE_MESSAGES[self]

    @classmethod
    def of_message(cls, value: int) -> Role:
        for role, number in ROLE_MESSAGES.items():
            if number == value:
                return role
        raise InvalidRequest("role", "A role is one of owner, recorder, player, spectator.")


ROLE_MESSAGES = {
    Role.OWNER: clubs_pb2.ROLE_OWNER,
    Role.RECORDER: clubs_pb2.ROLE_RECORDER,
    Role.PLAYER: clubs_pb2.ROLE_PLAYER,
    Role.SPECTATOR: clubs_pb2.ROLE_SPECTATOR,
}


def timestamp(seconds: float) -> timestamp_pb2.Timestamp:
    stamp = timestamp_pb2.Timestamp()
    stamp.FromNanoseconds(int(seconds * 1e9))
    return stamp


@dataclass(frozen=True, slots=True)
class Club:
    club_id: str
    name: str
    players_may_record: bool = False
    suspended: bool = False
    """Set by the operator (`tablelog.service.api.operators`): the club's callers are refused."""

    def message(self) -> clubs_pb2.Club:
        return clubs_pb2.Club(
            club_id=self.club_id,
            name=self.name,
            players_may_record=self.players_may_record,
            suspended=self.suspended,
        )


@dataclass(frozen=True, slots=True)
class Member:
    member_id: str
    club_id: str
    display_name: str
    role: Role
    created: float
    operator: bool = False
    """The server's operator (a server-level role, apart from `role` in the club): may call
    OperatorService (`tablelog.service.api.operators`)."""

    def message(self) -> clubs_pb2.Member:
        return clubs_pb2.Member(
            member_id=self.member_id,
            display_name=self.display_name,
            role=self.role.message(),
            created_time=timestamp(self.created),
        )


@dataclass(frozen=True, slots=True)
class TokenRecord:
    """What the server keeps of a token (never the token)."""

    token_id: str
    club_id: str
    member_id: str
    """Empty for a link token."""
    created: float
    expires: float
    """Unix seconds; 0: never."""
    last_chars: str
    revoked: bool = False
    game_id: str = ""
    """A link token's game."""
    local_file: bool = False
    """Written by `serve` to a data directory's owner.token (`local_owner`): one is minted at
    each start on a new data directory (a pod's), so unused ones are pruned once their server
    is gone (`MemberStore.prune_tokens`)."""

    def expired(self, now: float) -> bool:
        return bool(self.expires) and now >= self.expires

    def message(self) -> clubs_pb2.TokenInfo:
        info = clubs_pb2.TokenInfo(
            token_id=self.token_id,
            member_id=self.member_id,
            created_time=timestamp(self.created),
            last_chars=self.last_chars,
            revoked=self.revoked,
            game_id=self.game_id,
        )
        if self.expires:
            info.expire_time.CopyFrom(timestamp(self.expires))
        return info


@dataclass(frozen=True, slots=True)
class Caller:
    """The authenticated caller of one RPC: a member of a club (or a link token of a club's
    game) and the client program it says it is."""

    member: Member
    club: Club
    token: TokenRecord
    client: str = ""

    @property
    def member_id(self) -> str:
        return self.member.member_id

    @property
    def name(self) -> str:
        return self.member.display_name

    @property
    def club_id(self) -> str:
        return self.club.club_id

    @property
    def role(self) -> Role:
        return self.member.role

    @property
    def game_id(self) -> str:
        """The one game a link token reads; empty for a member."""
        return self.token.game_id

    @property
    def link(self) -> bool:
        return bool(self.token.game_id)

    @property
    def operator(self) -> bool:
        """Whether the caller is the server's operator (never a link token)."""
        return self.member.operator and not self.link

    def actor(self) -> events_pb2.Actor:
        """The actor of the events this caller appends."""
        return events_pb2.Actor(
            user=self.name, club=self.club_id, client=self.client, member_id=self.member_id
        )

    def owns(self, actor: events_pb2.Actor) -> bool:
        """Whether an event (an annotation) was appended by this member."""
        return (
            bool(self.member_id)
            and actor.member_id == self.member_id
            and (actor.club == self.club_id)
        )


def link_member(record: TokenRecord) -> Member:
    """The member a link token stands for: a spectator with no id."""
    return Member("", record.club_id, f"link {record.token_id}", Role.SPECTATOR, record.created)


def new_token(link: bool = False) -> str:
    return (LINK_TOKEN_PREFIX if link else MEMBER_TOKEN_PREFIX) + secrets.token_urlsafe(32)


def token_hash(token: str) -> str:
    """The only form of a token the server stores: its SHA-256, hex."""
    return hashlib.sha256(token.encode()).hexdigest()


def new_id(prefix: str) -> str:
    return prefix + secrets.token_hex(6)


def check_display_name(name: str, field_name: str = "display_name") -> str:
    """`name` with its spaces tidied; refused when empty or longer than MAX_DISPLAY_NAME."""
    if len(name) > 4 * MAX_DISPLAY_NAME:  # bounded before it is split
        raise InvalidRequest(field_name, f"At most {MAX_DISPLAY_NAME} characters.")
    cleaned = " ".join(name.split())
    if not cleaned:
        raise InvalidRequest(field_name, "A name cannot be empty.")
    if len(cleaned) > MAX_DISPLAY_NAME:
        raise InvalidRequest(field_name, f"At most {MAX_DISPLAY_NAME} characters.")
    return cleaned


def expiry(seconds: int, default: int, now: float | None = None) -> float:
    """The expiry time of a token asked to last `seconds` (0: `default`)."""
    if seconds > MAX_TOKEN_SECONDS:
        raise InvalidRequest("expires_in_seconds", "A token lasts at most ten years.")
    return (now if now is not None else time.time()) + (seconds or default)


def forbid(
    caller: Caller, rpc: str, reason: str = "ROLE_FORBIDS", message: str = ""
) -> PermissionDenied:
    """The refusal of a call the caller's role does not allow."""
    role = "link" if caller.link else caller.role.value
    words = message or (
        f"A {role} may not call {rpc}"
        + (" (a link token reads only its game)." if caller.link else ".")
    )
    return PermissionDenied(reason, words, metadata={"role": role, "rpc": rpc})
