"""ListGames's index (service/recording/game_index.py over service/store/game_index.py), on
a real Redis: a page by page listing with every filter gives exactly what a full scan of the
games' summaries gives, while games are created and end; cursors that were not issued here
are refused; the index is rebuilt from the games as it was kept."""

from __future__ import annotations

import asyncio
import base64
import dataclasses
import itertools
import random
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path

import grpc
import pytest
from google.rpc import error_details_pb2  # type: ignore[import-untyped]

from tablelog.service.errors import InvalidRequest
from tablelog.service.recording import game_index
from tablelog.service.recording.recorder import Recorder
from tablelog.service.store import RedisEventStore
from tablelog.service.store.game_index import game_of, position_of
from tablelog.v1 import events_pb2, service_pb2
from tablelog_client import Client
from tests.service.conftest import standalone_redis
from tests.service.helpers import CHAIN, rpc_refused, splendor_line
from tests.service.support import ServeProcess

IN_PROGRESS = service_pb2.GAME_STATUS_IN_PROGRESS
ENDED = service_pb2.GAME_STATUS_ENDED
ABANDONED = service_pb2.GAME_STATUS_ABANDONED
KINDS = ("", "splendor", "medici")
STATUSES = (0, IN_PROGRESS, ENDED, ABANDONED)
FILTERS = list(itertools.product(KINDS, STATUSES))

Body = Callable[["Table"], Awaitable[None]]


class Table:
    """A recorder on a store of its own (a fresh key prefix) and a club of its own."""

    def __init__(self, store: RedisEventStore) -> None:
        self.store = store
        self.recorder = Recorder(store)
        self.club = "c" + uuid.uuid4().hex[:8]
        self.actor = events_pb2.Actor(user="Ann", club=self.club, client="test")
        self.requests = itertools.count()

    def request_id(self) -> str:
        return f"r{next(self.requests)}"

    async def create(self, kind: str, players: tuple[str, ...] = ("Ann", "Bob")) -> str:
        request = service_pb2.CreateGameRequest(
            game=kind, players=[events_pb2.Player(name=name) for name in players]
        )
        return (await self.recorder.create_game(request, self.actor)).head.game_id

    async def abandon(self, game_id: str) -> None:
        head = await self.recorder.load(game_id)
        await self.recorder.abandon(
            game_id,
            expected_version=head.revision,
            request_id=self.request_id(),
            reason="",
            actor=self.actor,
        )

    async def play_to_the_end(self, game_id: str, seed: int) -> None:
        version = (await self.recorder.load(game_id)).revision
        for notation in splendor_line(seed):
            outcome = await self.recorder.record_move(
                game_id,
                move=None,
                notation=notation,
                seat=None,
                expected_version=version,
                request_id=self.request_id(),
                actor=self.actor,
            )
            version = outcome.head.revision

    async def undo(self, game_id: str) -> None:
        head = await self.recorder.load(game_id)
        await self.recorder.undo(
            game_id,
            expected_version=head.revision,
            request_id=self.request_id(),
            reason="",
            actor=self.actor,
        )

    async def page_through(
        self,
        kind: str,
        status: int,
        page_size: int,
        between: Callable[[], Awaitable[None]] | None = None,
        player: str = "",
    ) -> list[service_pb2.GameSummary]:
        """Every page of the listing, `between` run before each page after the first."""
        listed: list[service_pb2.GameSummary] = []
        token = ""
        while True:
            page, token = await self.recorder.list_games(
                kind, status, page_size, token, self.club, player
            )
            listed += page
            if not token:
                return listed
            if between is not None:
                await between()

    async def full_scan(self, kind: str, status: int, player: str = "") -> list[str]:
        """The club's games of `kind` in `status` with a seat of `player` from every stored
        summary, newest first: what the index must give, found without it."""
        summaries: list[service_pb2.GameSummary] = []
        async for game_ids in self.store.game_ids(100):
            for blob in await self.store.summaries(game_ids):
                if blob is not None:
                    summaries.append(service_pb2.GameSummary.FromString(blob))
        name = game_index.normalised_player(player)
        matching = {
            s.game_id: s
            for s in summaries
            if (not kind or s.game == kind)
            and (not status or s.status == status)
            and (not name or any(game_index.normalised_player(p.name) == name for p in s.players))
        }
        return sorted(matching, key=lambda gid: order_key(matching[gid]), reverse=True)

    async def dump(self) -> dict[str, object]:
        """Every key of the index, with its content."""
        redis = self.store.redis
        found: dict[str, object] = {}
        async for key in redis.scan_iter(match=f"{self.store.key('club:*', 'listing')}*"):
            if await redis.type(key) == b"hash":
                found[key.decode()] = await redis.hgetall(key)
            else:
                found[key.decode()] = await redis.zrange(key, 0, -1)
        return found


def order_key(summary: service_pb2.GameSummary) -> tuple[int, int, str]:
    created = summary.created_time
    return (created.seconds, created.nanos, summary.game_id)


@pytest.fixture
def run(request: pytest.FixtureRequest) -> Callable[[Body], None]:
    """Runs a body on a table of a standalone Redis, or of the local Redis Cluster when
    parametrized with "cluster" (indirectly)."""
    where = getattr(request, "param", "standalone")
    url = (
        request.getfixturevalue("redis_cluster").url
        if where == "cluster"
        else request.getfixturevalue("standalone_redis_url")
    )

    def runner(body: Body) -> None:
        async def main() -> None:
            store = RedisEventStore.from_url(url, prefix=f"tl{uuid.uuid4().hex[:6]}", chain=CHAIN)
            try:
                await body(Table(store))
            finally:
                await store.close()

        asyncio.run(main())

    return runner


def test_every_filter_pages_exactly_as_a_full_scan_while_games_are_made_and_end(
    run: Callable[[Body], None],
) -> None:
    async def body(table: Table) -> None:
        made = [await table.create(("splendor", "medici")[i % 2]) for i in range(40)]
        for game_id in made[::3]:
            await table.abandon(game_id)
        await table.play_to_the_end(made[2], seed=3)  # a splendor game, ended
        await table.play_to_the_end(made[4], seed=4)
        await table.undo(made[4])  # ended, then reopened by the undo
        rng = random.Random(7)
        playing = [g for g in made if g not in made[::3] and g != made[2]]
        changed: set[str] = set()
        paging = True

        async def meanwhile() -> None:
            """A new game, and now and then an old one abandoned."""
            await table.create(rng.choice(("splendor", "medici")))
            candidates = [g for g in playing if g not in changed]
            if candidates and rng.random() < 0.3:
                victim = rng.choice(candidates)
                changed.add(victim)
                await table.abandon(victim)

        async def writer() -> None:
            while paging:
                await meanwhile()

        async def pager(kind: str, status: int) -> None:
            before = set(await table.full_scan(kind, status))
            listed = await table.page_through(kind, status, 3, meanwhile)
            ids = [summary.game_id for summary in listed]
            assert len(ids) == len(set(ids)), (kind, status)
            assert [order_key(s) for s in listed] == sorted(
                (order_key(s) for s in listed), reverse=True
            )
            assert all((not kind or s.game == kind) and (not status or s.status == status)
                       for s in listed)  # fmt: skip
            # Every game that matched when the paging began and was not changed meanwhile is
            # listed (the new games are newer than the first page: they may be missed).
            assert before - changed <= set(ids), (kind, status)

        async def pagers() -> None:
            nonlocal paging
            try:
                await asyncio.gather(*(pager(kind, status) for kind, status in FILTERS))
            finally:
                paging = False

        await asyncio.gather(writer(), pagers())
        assert changed

        # The filters of a status first: a listing of every status would repair them.
        for kind, status in reversed(FILTERS):
            for page_size in (1, 7, 1000):
                listed = await table.page_through(kind, status, page_size)
                assert [s.game_id for s in listed] == await table.full_scan(kind, status)
        assert await table.full_scan("splendor", ENDED) == [made[2]]

    run(body)


def test_a_lost_follow_up_is_repaired_by_the_listing_that_reads_it(
    run: Callable[[Body], None],
) -> None:
    async def body(table: Table) -> None:
        game_id = await table.create("splendor")
        await table.create("splendor")
        before = await table.store.game_index.entries(table.club)
        await table.abandon(game_id)
        # As if the process had stopped between the append and the index's follow-up.
        await table.store.clear_game_index()
        await table.store.index_games(table.club, list(before.values()))
        assert game_id not in {g.game_id for g in await table.page_through("", ABANDONED, 10)}
        in_progress = await table.page_through("", IN_PROGRESS, 10)
        assert game_id not in {g.game_id for g in in_progress}  # checked, left out, repaired
        abandoned = await table.page_through("", ABANDONED, 10)
        assert [g.game_id for g in abandoned] == [game_id]
        assert (await table.store.game_index.entries(table.club))[game_id].status == ABANDONED

    run(body)


def test_an_entry_left_by_a_creation_that_lost_the_race_is_listed_where_the_game_is(
    run: Callable[[Body], None],
) -> None:
    async def body(table: Table) -> None:
        made = [await table.create("splendor") for _ in range(3)]
        kept = (await table.store.game_index.entries(table.club))[made[0]]
        # The same id and revision, indexed by a creation made later that found it existed.
        later = dataclasses.replace(kept, position=position_of(made[0], 4_000_000_000, 0))
        await table.store.index_games(table.club, [later])  # same revision: replaces it
        assert (await table.store.game_index.entries(table.club))[made[0]] == later
        listed = await table.page_through("", 0, 1)
        assert [g.game_id for g in listed] == made[::-1]
        assert (await table.store.game_index.entries(table.club))[made[0]] == kept

    run(body)


@pytest.mark.parametrize("run", ["standalone", "cluster"], indirect=True)
def test_the_rebuild_makes_the_index_the_appends_kept(run: Callable[[Body], None]) -> None:
    """On a cluster the clubs' indexes and the games are on several primaries: the rebuild
    and its clearing walk every one."""

    async def body(table: Table) -> None:
        made = [await table.create(("splendor", "medici")[i % 2]) for i in range(12)]
        for game_id in made[::4]:
            await table.abandon(game_id)
        await table.play_to_the_end(made[2], seed=5)
        kept = await table.dump()
        assert kept
        assert await game_index.rebuild_game_index(table.store, from_scratch=True) == len(made)
        assert await table.dump() == kept

        # Damage: an entry of a game that does not exist, and a game left out.
        await table.store.game_index.put(
            table.club,
            [game_index.entry_of(service_pb2.GameSummary(game_id="ghost", game="medici"))],
        )
        await table.store.redis.zrem(
            table.store.game_index.set_key(table.club),
            (await table.store.game_index.page(table.club, "", 0, None, 1))[0],
        )
        assert await table.dump() != kept
        await game_index.rebuild_game_index(table.store, from_scratch=True)
        assert await table.dump() == kept

    run(body)


def test_games_recorded_before_the_index_are_listed_once_it_is_built_at_start_up(
    run: Callable[[Body], None],
) -> None:
    async def body(table: Table) -> None:
        made = [await table.create("splendor") for _ in range(5)]
        await table.abandon(made[0])
        kept = await table.dump()
        await table.store.clear_game_index()  # a store of games recorded before the index
        assert await table.page_through("", 0, 10) == []
        assert await game_index.ensure_game_index(table.store) == len(made)
        assert await game_index.ensure_game_index(table.store) is None  # current: once
        assert await table.dump() == kept
        listed = await table.page_through("", 0, 2)
        assert [g.game_id for g in listed] == made[::-1]

    run(body)


def test_a_game_recorded_before_clubs_is_listed_in_the_local_club(
    run: Callable[[Body], None],
) -> None:
    async def body(table: Table) -> None:
        table.actor = events_pb2.Actor(user="Old Timer")  # no club: recorded before clubs
        game_id = await table.create("splendor")
        listed, _ = await table.recorder.list_games("", 0, 10, "", "local")
        assert [g.game_id for g in listed] == [game_id]
        await table.store.clear_game_index()
        await game_index.rebuild_game_index(table.store, from_scratch=False)
        listed, _ = await table.recorder.list_games("", 0, 10, "", "local")
        assert [g.game_id for g in listed] == [game_id]

    run(body)


def forged_tokens() -> list[str]:
    real = game_index.cursor_token("", 0, position_of("abc", 1_700_000_000, 5))
    raw = bytearray(base64.urlsafe_b64decode(real + "=" * (-len(real) % 4)))
    raw[10] ^= 1
    changed = base64.urlsafe_b64encode(bytes(raw)).decode().rstrip("=")
    made_up = base64.urlsafe_b64encode(b"1" + b"9" * 21 + b":zz" + b"\0" * 6).decode()
    old_offset = base64.urlsafe_b64encode(b"o:100").decode()
    return [
        "x",
        "!!!!",
        "é",
        old_offset,
        changed,
        real[:-3],
        made_up,
        game_index.cursor_token("splendor", 0, position_of("abc", 1_700_000_000, 5)),
        game_index.cursor_token("", 0, "not a position"),
    ]


@pytest.mark.parametrize("token", forged_tokens())
def test_a_cursor_not_issued_for_this_listing_is_refused(token: str) -> None:
    with pytest.raises(InvalidRequest) as refused:
        game_index.cursor_position("", 0, token)
    assert refused.value.field_name == "page_token"


def test_a_cursor_goes_on_where_it_was_made() -> None:
    position = position_of("abc", 1_700_000_000, 5)
    token = game_index.cursor_token("medici", ABANDONED, position)
    assert game_index.cursor_position("medici", ABANDONED, token) == position
    assert (
        len(game_index.cursor_token("", 0, position_of("a" * 64, 253402300799, 999999999))) <= 160
    )


def test_a_forged_cursor_is_invalid_argument_and_a_real_one_pages(client: Client) -> None:
    made = [client.create_game("splendor", ["Ann", "Bob"]).game_id for _ in range(2)]
    for token in forged_tokens():
        code, _details = rpc_refused(
            lambda token=token: client.stub.ListGames(  # type: ignore[misc]
                service_pb2.ListGamesRequest(page_token=token)
            )
        )
        assert code == grpc.StatusCode.INVALID_ARGUMENT
    first = client.stub.ListGames(service_pb2.ListGamesRequest(page_size=1))
    second = client.stub.ListGames(
        service_pb2.ListGamesRequest(page_size=1, page_token=first.next_page_token)
    )
    assert [g.game_id for g in [*first.games, *second.games]] == made[::-1]
    code, _details = rpc_refused(
        lambda: client.stub.ListGames(
            service_pb2.ListGamesRequest(game="splendor", page_token=first.next_page_token)
        )
    )
    assert code == grpc.StatusCode.INVALID_ARGUMENT


def test_positions_sort_as_creation_times_then_ids() -> None:
    times = [
        (-62_135_596_800, 0),
        (-1, 999_999_999),
        (0, 0),
        (1_700_000_000, 5),
        (253_402_300_799, 999_999_999),
    ]
    positions = [position_of("b", seconds, nanos) for seconds, nanos in times]
    assert positions == sorted(positions)
    assert position_of("a", 5, 5) < position_of("b", 5, 5) < position_of("a", 5, 6)
    assert game_of(position_of("game-1", 5, 5)) == "game-1"


@pytest.mark.slow
def test_serve_builds_a_missing_index_and_rebuilds_one_when_asked(tmp_path: Path) -> None:
    (tmp_path / "redis").mkdir()
    with standalone_redis(tmp_path / "redis") as url:

        async def record_before_the_index() -> list[str]:
            store = RedisEventStore.from_url(url, chain=CHAIN)
            table = Table(store)
            table.actor = events_pb2.Actor(user="Old Timer")  # the local club's
            made = [await table.create("splendor") for _ in range(3)]
            await table.abandon(made[1])
            await store.clear_game_index()
            await store.close()
            return made

        async def damage() -> None:
            store = RedisEventStore.from_url(url, chain=CHAIN)
            await store.redis.delete(store.game_index.set_key("local"))
            await store.close()

        made = asyncio.run(record_before_the_index())
        for extra in ((), ("--reindex",)):
            serving = ServeProcess(tmp_path / "data", "--redis-url", url, *extra).start()
            try:
                with Client(serving.address, token=serving.token) as client:
                    assert [g.game_id for g in client.list_games()] == made[::-1]
                    abandoned = client.list_games(status="abandoned")
                    assert [g.game_id for g in abandoned] == [made[1]]
            finally:
                assert serving.stop() == 0
            asyncio.run(damage())  # the next start finds a version: only --reindex repairs


# The player filter. Seats as people type them: one person in several spellings, and names
# that only look alike ("Anna" is not "Ann"; "Ann Lee" is not "Ann").
SEATINGS = [
    ("Ann", "Bob"),
    ("ANN", "Cleo", "Dan"),
    ("  ann ", "Straße"),
    ("Ａｎｎ", "Bob", "Zoë"),  # fullwidth letters: NFKC makes them "Ann"
    ("Anna", "Bob"),
    ("Ann Lee", "STRASSE"),
    ("Cleo", "Dan"),
    ("ZOË", "Ann  Lee"),
    ("Bob", "Cleo", "Ann", "Dan"),
]
PLAYERS = ["Ann", " aNN ", "Anna", "Bob", "strasse", "Zoë", "ann lee", "Nobody", "An"]


async def seat_games(table: Table, games: int) -> list[str]:
    """`games` games seated by SEATINGS in turn, of both kinds; some abandoned, one ended."""
    made = []
    for index in range(games):
        seats = SEATINGS[index % len(SEATINGS)]
        made.append(await table.create(("splendor", "medici")[index % 2], seats))
    for game_id in made[1::5]:
        await table.abandon(game_id)
    await table.play_to_the_end(made[0], seed=3)  # splendor, Ann and Bob
    return made


def test_names_are_compared_as_a_person_would() -> None:
    same = ["Ann", "ann", " ANN\t", "Ａｎｎ", "\u00a0Ann\u2003"]
    assert {game_index.player_key(name) for name in same} == {game_index.player_key("Ann")}
    assert game_index.player_key("Straße") == game_index.player_key("STRASSE")
    assert game_index.player_key("Ann  Lee") == game_index.player_key(" ann lee")
    assert game_index.player_key("ZOË") == game_index.player_key("zoe\u0308")  # composed or not
    for other in ("Anna", "An", "Ann Lee", "Ann-", "Bob"):
        assert game_index.player_key(other) != game_index.player_key("Ann"), other
    assert game_index.player_key("  ") == ""  # nothing but whitespace: no filter
    keys = {game_index.player_key(name) for name in ("Ann", "x" * 64, "{club:*}\0\n", "🂡")}
    assert all(len(key) == 32 and key.isalnum() and key.islower() for key in keys)


def test_the_player_filter_alone_and_with_each_filter_pages_as_a_full_scan(
    run: Callable[[Body], None],
) -> None:
    async def body(table: Table) -> None:
        made = await seat_games(table, 27)
        for player in PLAYERS:
            for kind, status in FILTERS:
                expected = await table.full_scan(kind, status, player)
                for page_size in (1, 4, 1000):
                    listed = await table.page_through(kind, status, page_size, player=player)
                    assert [s.game_id for s in listed] == expected, (player, kind, status)
        # What the full scan finds, said without the normalisation under test.
        ann = [made[i] for i in range(27) if i % 9 in (0, 1, 2, 3, 8)][::-1]
        assert [s.game_id for s in await table.page_through("", 0, 2, player="ann")] == ann
        assert await table.full_scan("", 0, "Ann") == ann
        ann_lee = [made[i] for i in range(27) if i % 9 in (5, 7)][::-1]
        assert [s.game_id for s in await table.page_through("", 0, 5, player="ANN LEE")] == ann_lee
        assert await table.page_through("", 0, 5, player="An") == []
        assert await table.full_scan("splendor", ENDED, "Bob") == [made[0]]
        assert await table.full_scan("medici", ABANDONED, "zoë") == [made[21]]

    run(body)


def test_a_game_stays_listed_for_its_players_while_its_status_changes(
    run: Callable[[Body], None],
) -> None:
    """A game's seats never change (BindSeat binds a member to a seat, not a name); its
    status does, and moves the game between the player's sets of each status."""

    async def body(table: Table) -> None:
        made = [await table.create("splendor", ("Ann", "Bob")) for _ in range(3)]
        other = await table.create("splendor", ("Cleo", "Dan"))
        await table.play_to_the_end(made[1], seed=4)
        await table.undo(made[1])  # ended, then reopened by the undo
        await table.abandon(made[2])
        for player in ("Ann", "bob", "Cleo"):
            for kind, status in FILTERS:
                listed = await table.page_through(kind, status, 1, player=player)
                expected = await table.full_scan(kind, status, player)
                assert [s.game_id for s in listed] == expected, (player, kind, status)
        in_progress = await table.page_through("", IN_PROGRESS, 10, player="ann")
        assert [s.game_id for s in in_progress] == [made[1], made[0]]
        assert [s.game_id for s in await table.page_through("", 0, 10, player="dan")] == [other]

    run(body)


def test_an_entry_with_the_wrong_players_is_listed_where_its_seats_are(
    run: Callable[[Body], None],
) -> None:
    """A creation that lost a race for the id indexes it with its own seats: a listing of
    those players reads the summary, leaves the game out and repairs the entry."""

    async def body(table: Table) -> None:
        game_id = await table.create("splendor", ("Ann", "Bob"))
        kept = (await table.store.game_index.entries(table.club))[game_id]
        assert kept.players == (game_index.player_key("Ann"), game_index.player_key("Bob"))
        wrong = dataclasses.replace(kept, players=(game_index.player_key("Eve"),))
        await table.store.index_games(table.club, [wrong])  # same revision: replaces it
        assert await table.page_through("", 0, 10, player="Ann") == []
        assert await table.page_through("", 0, 10, player="Eve") == []  # read, left out
        assert (await table.store.game_index.entries(table.club))[game_id] == kept
        listed = await table.page_through("splendor", IN_PROGRESS, 10, player="ann")
        assert [s.game_id for s in listed] == [game_id]
        eve = table.store.game_index.set_key(table.club, player=game_index.player_key("Eve"))
        assert await table.store.redis.exists(eve) == 0

    run(body)


def test_the_rebuild_reproduces_the_player_sets_and_upgrades_an_index_without_them(
    run: Callable[[Body], None],
) -> None:
    async def body(table: Table) -> None:
        await seat_games(table, 12)
        kept = await table.dump()
        ann = table.store.game_index.set_key(table.club, player=game_index.player_key("Ann"))
        assert ann in kept
        assert await game_index.rebuild_game_index(table.store, from_scratch=True) == 12
        assert await table.dump() == kept

        # An index of layout 1, made before the player sets: its entries name no players.
        entries = await table.store.game_index.entries(table.club)
        await table.store.clear_game_index()
        await table.store.index_games(
            table.club, [dataclasses.replace(e, players=()) for e in entries.values()]
        )
        for e in entries.values():  # and entries of that layout: four fields
            await table.store.redis.hset(
                table.store.game_index.base(table.club) + ":entries",
                e.game_id,
                f"{e.position} {e.kind} {e.status} {e.revision}",
            )
        await table.store.game_index.mark_version(1)
        assert await table.page_through("", 0, 10, player="Ann") == []
        assert await game_index.ensure_game_index(table.store) == 12
        assert await table.dump() == kept

    run(body)


def test_a_cursor_is_bound_to_its_player() -> None:
    position = position_of("abc", 1_700_000_000, 5)
    ann = game_index.player_key("Ann")
    token = game_index.cursor_token("", 0, position, ann)
    assert game_index.cursor_position("", 0, token, ann) == position
    assert len(game_index.cursor_token("", 0, position, ann)) == len(
        game_index.cursor_token("", 0, position)
    )
    for kind, status, player in (
        ("", 0, ""),
        ("", 0, game_index.player_key("Anna")),
        ("splendor", 0, ann),
        ("", ENDED, ann),
    ):
        with pytest.raises(InvalidRequest):
            game_index.cursor_position(kind, status, token, player)
    with pytest.raises(InvalidRequest):
        game_index.cursor_position("", 0, game_index.cursor_token("", 0, position), ann)


def test_the_player_filter_over_grpc(client: Client) -> None:
    # Names of this test's own: the server is shared with other tests' games.
    ann, bob, cleo = (f"{name} {uuid.uuid4().hex[:6]}" for name in ("Ann", "Bob", "Cleo"))
    made = [client.create_game("splendor", [ann, name]).game_id for name in (bob, cleo)]
    client.create_game("splendor", ["Dan", bob])
    first = client.stub.ListGames(service_pb2.ListGamesRequest(page_size=1, player=ann.upper()))
    second = client.stub.ListGames(
        service_pb2.ListGamesRequest(
            page_size=1, player=f" {ann.lower()} ", page_token=first.next_page_token
        )
    )
    assert [g.game_id for g in [*first.games, *second.games]] == made[::-1]
    assert not second.next_page_token
    for player in (bob, ""):
        code, _details = rpc_refused(
            lambda player=player: client.stub.ListGames(  # type: ignore[misc]
                service_pb2.ListGamesRequest(player=player, page_token=first.next_page_token)
            )
        )
        assert code == grpc.StatusCode.INVALID_ARGUMENT
    code, details = rpc_refused(
        lambda: client.stub.ListGames(service_pb2.ListGamesRequest(player="x" * 65))
    )
    assert code == grpc.StatusCode.INVALID_ARGUMENT
    violations = [d for d in details if isinstance(d, error_details_pb2.BadRequest)]
    assert [v.field for v in violations[0].field_violations] == ["player"]
    assert [g.game_id for g in client.list_games(player=cleo.casefold())] == [made[1]]
    # An imported game is indexed by its seats like a created one.
    (imported,) = client.import_record(client.export_record([made[1]]))
    assert [g.game_id for g in client.list_games(player=cleo)] == [imported.game_id, made[1]]
