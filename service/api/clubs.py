"""The ClubService servicer: who am I, a club's members, their roles and tokens, link tokens,
seat bindings and the club's settings. Who may call which method is the one table in
`tablelog.service.access.authorization`; the gate has checked it (and that a game named is the
caller's club's) before any method here runs."""

# ruff: noqa: N802  (the servicer's method names are the proto's CamelCase RPC names)

from __future__ import annotations

from tablelog.service.access.authentication import Gate, current_caller
from tablelog.service.access.identity import (
    DEFAULT_LINK_SECONDS,
    DEFAULT_TOKEN_SECONDS,
    Role,
    expiry,
)
from tablelog.service.access.members import MemberStore
from tablelog.service.api.servicer import Context, unary
from tablelog.service.errors import InvalidRequest
from tablelog.service.memory.players import ClubPlayers
from tablelog.service.recording.recorder import Recorder
from tablelog.service.recording.seat_audit import record_binding
from tablelog.v1 import clubs_pb2, clubs_pb2_grpc


class ClubServicer(clubs_pb2_grpc.ClubServiceServicer):
    def __init__(
        self, members: MemberStore, gate: Gate, recorder: Recorder, players: ClubPlayers
    ) -> None:
        self.members = members
        self.gate = gate
        self.recorder = recorder
        self.players = players

    @unary
    async def WhoAmI(
        self, request: clubs_pb2.WhoAmIRequest, context: Context
    ) -> clubs_pb2.WhoAmIResponse:
        caller = current_caller()
        return clubs_pb2.WhoAmIResponse(
            member=caller.member.message(),
            club=caller.club.message(),
            game_id=caller.game_id,
            token=caller.token.message(),
            operator=caller.operator,
        )

    @unary
    async def ListMembers(
        self, request: clubs_pb2.ListMembersRequest, context: Context
    ) -> clubs_pb2.ListMembersResponse:
        found = await self.members.members(current_caller().club_id)
        return clubs_pb2.ListMembersResponse(members=[m.message() for m in found])

    @unary
    async def AddMember(
        self, request: clubs_pb2.AddMemberRequest, context: Context
    ) -> clubs_pb2.AddMemberResponse:
        role = Role.of_message(request.role)
        member = await self.members.add_member(current_caller().club_id, request.display_name, role)
        return clubs_pb2.AddMemberResponse(member=member.message())

    async def _keep_an_owner(self, member_id: str, role: Role | None) -> None:
        """Refuses removing or demoting the club's last owner (nobody could manage it)."""
        club_id = current_caller().club_id
        member = await self.members.member(club_id, member_id)
        if member.role is not Role.OWNER or role is Role.OWNER:
            return
        owners = [m for m in await self.members.members(club_id) if m.role is Role.OWNER]
        if len(owners) <= 1:
            raise InvalidRequest(
                "member_id", f"{member.display_name} is the club's last owner: make another first."
            )

    @unary
    async def RemoveMember(
        self, request: clubs_pb2.RemoveMemberRequest, context: Context
    ) -> clubs_pb2.RemoveMemberResponse:
        await self._keep_an_owner(request.member_id, None)
        revoked = await self.members.remove_member(current_caller().club_id, request.member_id)
        self.gate.forget(current_caller().club_id)
        return clubs_pb2.RemoveMemberResponse(tokens_revoked=revoked)

    @unary
    async def SetRole(
        self, request: clubs_pb2.SetRoleRequest, context: Context
    ) -> clubs_pb2.SetRoleResponse:
        role = Role.of_message(request.role)
        await self._keep_an_owner(request.member_id, role)
        member = await self.members.set_role(current_caller().club_id, request.member_id, role)
        self.gate.forget(current_caller().club_id)
        return clubs_pb2.SetRoleResponse(member=member.message())

    @unary
    async def CreateToken(
        self, request: clubs_pb2.CreateTokenRequest, context: Context
    ) -> clubs_pb2.CreateTokenResponse:
        caller = current_caller()
        expires = expiry(request.expires_in_seconds, DEFAULT_TOKEN_SECONDS)
        token, record = await self.members.create_token(
            caller.club_id, request.member_id or caller.member_id, expires
        )
        return clubs_pb2.CreateTokenResponse(token=token, info=record.message())

    @unary
    async def ListTokens(
        self, request: clubs_pb2.ListTokensRequest, context: Context
    ) -> clubs_pb2.ListTokensResponse:
        found = await self.members.tokens(current_caller().club_id, request.member_id)
        return clubs_pb2.ListTokensResponse(tokens=[r.message() for r in found])

    @unary
    async def RevokeToken(
        self, request: clubs_pb2.RevokeTokenRequest, context: Context
    ) -> clubs_pb2.RevokeTokenResponse:
        record = await self.members.revoke(current_caller().club_id, request.token_id)
        self.gate.forget(current_caller().club_id)
        return clubs_pb2.RevokeTokenResponse(token=record.message())

    @unary
    async def CreateLinkToken(
        self, request: clubs_pb2.CreateLinkTokenRequest, context: Context
    ) -> clubs_pb2.CreateLinkTokenResponse:
        expires = expiry(request.expires_in_seconds, DEFAULT_LINK_SECONDS)
        await self.recorder.load(request.game_id, fresh=False)  # GAME_NOT_FOUND
        token, record = await self.members.create_token(
            current_caller().club_id, "", expires, game_id=request.game_id
        )
        return clubs_pb2.CreateLinkTokenResponse(token=token, info=record.message())

    @unary
    async def BindSeat(
        self, request: clubs_pb2.BindSeatRequest, context: Context
    ) -> clubs_pb2.BindSeatResponse:
        club_id = current_caller().club_id
        head = await self.recorder.load(request.game_id, fresh=False)
        players = head.position.table.created.players
        if request.seat >= len(players):
            raise InvalidRequest(
                "seat", f"The game has seats 0 to {len(players) - 1}, not {request.seat}."
            )
        if request.member_id:
            await self.members.member(club_id, request.member_id)
        holder = players[request.seat].member_id
        holder = (await self.members.seat_bindings(request.game_id)).get(request.seat, holder)
        # In the game's audit first (`tablelog.service.recording.seat_audit`), then in effect.
        await record_binding(
            self.recorder,
            request.game_id,
            request.seat,
            request.member_id,
            holder,
            current_caller().actor(),
        )
        await self.members.bind_seat(request.game_id, request.seat, request.member_id)
        # A watch of the seat's old holder re-checks at once.
        self.gate.rights_changed(current_caller().club_id)
        seats = [player.member_id for player in players]
        for seat, member_id in (await self.members.seat_bindings(request.game_id)).items():
            if seat < len(seats):
                seats[seat] = member_id
        return clubs_pb2.BindSeatResponse(seat_member_ids=seats)

    @unary
    async def UpdateClub(
        self, request: clubs_pb2.UpdateClubRequest, context: Context
    ) -> clubs_pb2.UpdateClubResponse:
        club = await self.members.update_club(
            current_caller().club_id,
            name=request.name if request.HasField("name") else None,
            players_may_record=(
                request.players_may_record if request.HasField("players_may_record") else None
            ),
        )
        self.gate.forget(current_caller().club_id)
        return clubs_pb2.UpdateClubResponse(club=club.message())

    @unary
    async def ListPlayers(
        self, request: clubs_pb2.ListPlayersRequest, context: Context
    ) -> clubs_pb2.ListPlayersResponse:
        return await self.players.list_players(current_caller().club_id)

    @unary
    async def RenamePlayer(
        self, request: clubs_pb2.RenamePlayerRequest, context: Context
    ) -> clubs_pb2.RenamePlayerResponse:
        caller = current_caller()
        player, version = await self.players.rename(
            caller.club_id,
            caller.member_id,
            request.name,
            request.new_name,
            request.expected_version,
        )
        return clubs_pb2.RenamePlayerResponse(player=player.message(), roster_version=version)

    @unary
    async def MergePlayers(
        self, request: clubs_pb2.MergePlayersRequest, context: Context
    ) -> clubs_pb2.MergePlayersResponse:
        caller = current_caller()
        player, version = await self.players.merge(
            caller.club_id,
            caller.member_id,
            request.name,
            request.merged_name,
            request.expected_version,
        )
        return clubs_pb2.MergePlayersResponse(player=player.message(), roster_version=version)

    @unary
    async def BindPlayer(
        self, request: clubs_pb2.BindPlayerRequest, context: Context
    ) -> clubs_pb2.BindPlayerResponse:
        caller = current_caller()
        player, version = await self.players.bind(
            caller.club_id,
            caller.member_id,
            request.name,
            request.member_id,
            request.expected_version,
        )
        return clubs_pb2.BindPlayerResponse(player=player.message(), roster_version=version)

    @unary
    async def ListRosterChanges(
        self, request: clubs_pb2.ListRosterChangesRequest, context: Context
    ) -> clubs_pb2.ListRosterChangesResponse:
        return await self.players.changes(current_caller().club_id)
