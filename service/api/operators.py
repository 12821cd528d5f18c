"""The OperatorService servicer: the server's clubs, for its operator.

The operator is a server-level role, apart from any club's roles: a member marked as the
operator (`Member.operator`). `tablelog serve` marks the owner whose token it writes to
`<data dir>/owner.token` (`tablelog.service.access.local_owner`), so on one machine the person who
started the server is its operator with no set-up, and a deployment's operator is whoever holds that
file (or the fixed owner token the deployment registers). The gate lets only the operator call these
methods (`tablelog.service.access.authorization`, the `operator` column); the operator acts on any
club but its own (which holds the operator: suspending or deleting it would lock the server's
administration out)."""

# ruff: noqa: N802  (the servicer's method names are the proto's CamelCase RPC names)

from __future__ import annotations

from tablelog.service.access.authentication import CACHE_SECONDS, Gate, current_caller
from tablelog.service.access.club_admin import ClubAdmin
from tablelog.service.access.identity import MAX_TOKEN_SECONDS, expiry
from tablelog.service.api.servicer import Context, unary
from tablelog.service.errors import InvalidRequest
from tablelog.service.limits import page_bounds, page_token
from tablelog.service.recording.recorder import Recorder
from tablelog.v1 import clubs_pb2, clubs_pb2_grpc


class OperatorServicer(clubs_pb2_grpc.OperatorServiceServicer):
    def __init__(self, admin: ClubAdmin, gate: Gate, recorder: Recorder) -> None:
        self.admin = admin
        self.gate = gate
        self.recorder = recorder

    @unary
    async def CreateClub(
        self, request: clubs_pb2.CreateClubRequest, context: Context
    ) -> clubs_pb2.CreateClubResponse:
        # 0 is "never expires" here (the first owner's token is their way in), where
        # CreateToken's 0 is its default lifetime.
        expires = (
            expiry(request.expires_in_seconds, MAX_TOKEN_SECONDS)
            if request.expires_in_seconds
            else 0.0
        )
        club, owner, token, record = await self.admin.create_club(
            request.name, request.owner_name, expires
        )
        return clubs_pb2.CreateClubResponse(
            club=club.message(),
            owner=owner.message(),
            owner_token=token,
            owner_token_info=record.message(),
        )

    @unary
    async def ListClubs(
        self, request: clubs_pb2.ListClubsRequest, context: Context
    ) -> clubs_pb2.ListClubsResponse:
        offset, size = page_bounds(request.page_size, request.page_token)
        clubs, more = await self.admin.clubs(offset, size)
        return clubs_pb2.ListClubsResponse(
            clubs=[club.message() for club in clubs],
            next_page_token=page_token(offset + size) if more else "",
        )

    def _not_own(self, club_id: str, verb: str) -> None:
        if club_id == current_caller().club_id:
            raise InvalidRequest(
                "club_id",
                f"{club_id!r} is the operator's own club: it cannot be {verb} "
                "(the server's administration would be locked out).",
            )

    @unary
    async def SuspendClub(
        self, request: clubs_pb2.SuspendClubRequest, context: Context
    ) -> clubs_pb2.SuspendClubResponse:
        self._not_own(request.club_id, "suspended")
        club = await self.admin.suspend(request.club_id, True)
        self.gate.forget(request.club_id)  # here at once; other instances within their cache time
        return clubs_pb2.SuspendClubResponse(club=club.message())

    @unary
    async def ResumeClub(
        self, request: clubs_pb2.ResumeClubRequest, context: Context
    ) -> clubs_pb2.ResumeClubResponse:
        club = await self.admin.suspend(request.club_id, False)
        self.gate.forget(request.club_id)
        return clubs_pb2.ResumeClubResponse(club=club.message())

    @unary
    async def DeleteClub(
        self, request: clubs_pb2.DeleteClubRequest, context: Context
    ) -> clubs_pb2.DeleteClubResponse:
        self._not_own(request.club_id, "deleted")
        deleted, game_ids = await self.admin.delete(request.club_id, settle=CACHE_SECONDS)
        self.gate.forget(request.club_id)
        for game_id in game_ids:
            self.recorder.heads.forget(game_id)
        return clubs_pb2.DeleteClubResponse(games_deleted=deleted)
