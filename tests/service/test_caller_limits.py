"""Limits per caller over a real gRPC channel (docs/service.md, Limits per caller): a
burst past the rate, watches past their limit and a club past its stored bytes are
refused RESOURCE_EXHAUSTED, change nothing, and leave other callers served."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import grpc
import pytest
import redis

# googleapis-common-protos publishes no type stubs.
from google.rpc import error_details_pb2  # type: ignore[import-untyped]
from grpc_status import rpc_status

from tablelog.service.access.quotas import (
    CallerKeys,
    CallerLimits,
    TokenBuckets,
    WatchCounts,
    peer_host,
)
from tablelog.service.api.cli import caller_limits
from tablelog.service.api.server import BackgroundServer, channel
from tablelog.service.store.embedded import EmbeddedRedis
from tablelog.v1 import events_pb2, service_pb2, service_pb2_grpc
from tablelog_client import Client, TablelogError
from tablelog_client.cli import build_parser
from tests.service.helpers import CHAIN, OWNER_TOKEN, splendor_line

CALLER = "x-test-caller"
CLUB = "x-test-club"


def keys_from_metadata(context: Any) -> CallerKeys:
    """The test's callers say who they are, so one machine can be several callers."""
    found = dict(context.invocation_metadata() or ())
    return CallerKeys(str(found.get(CALLER, "")), str(found.get(CLUB, "")))


def as_caller(caller: str, club: str) -> tuple[tuple[str, str], ...]:
    """The owner's token (the gate lets the call in) and who the test's key function
    counts it as."""
    return (("authorization", f"Bearer {OWNER_TOKEN}"), (CALLER, caller), (CLUB, club))


def refusal_details(error: grpc.RpcError) -> tuple[Any, Any]:
    """The ErrorInfo and RetryInfo (None when absent) of a refused call."""
    status = rpc_status.from_call(error)  # type: ignore[arg-type]
    assert status is not None
    info = retry = None
    for detail in status.details:
        if detail.Is(error_details_pb2.ErrorInfo.DESCRIPTOR):
            info = error_details_pb2.ErrorInfo()
            detail.Unpack(info)
        elif detail.Is(error_details_pb2.RetryInfo.DESCRIPTOR):
            retry = error_details_pb2.RetryInfo()
            detail.Unpack(retry)
    assert info is not None
    return info, retry


@pytest.fixture
def club() -> str:
    """A club of its own per test: the stored-bytes counter lives in the session's Redis."""
    return "club-" + uuid.uuid4().hex[:10]


def serve(redis_url: str, **options: Any) -> BackgroundServer:
    return BackgroundServer(
        redis_url,
        chain=CHAIN,
        caller_limits=options.pop("limits", CallerLimits()),
        keys_of=keys_from_metadata,
        owner_token=OWNER_TOKEN,
        **options,
    ).start()


@pytest.fixture
def limited(embedded_redis: EmbeddedRedis) -> Iterator[BackgroundServer]:
    limits = CallerLimits(
        reads_per_second=0.5,
        read_burst=5,
        changes_per_second=0.5,
        change_burst=4,
        watches_per_caller=2,
        watches_per_club=3,
    )
    running = serve(embedded_redis.url, limits=limits)
    yield running
    running.stop()


@pytest.fixture
def stub(limited: BackgroundServer) -> Iterator[service_pb2_grpc.TablelogServiceStub]:
    with channel(limited.target) as opened:
        yield service_pb2_grpc.TablelogServiceStub(opened)


def create(stub: service_pb2_grpc.TablelogServiceStub, who: Any) -> service_pb2.GameSummary:
    request = service_pb2.CreateGameRequest(
        game="splendor", players=[events_pb2.Player(name="Ann"), events_pb2.Player(name="Bob")]
    )
    game: service_pb2.GameSummary = stub.CreateGame(request, metadata=who, timeout=10).game
    return game


def test_a_burst_of_reads_past_the_rate_is_refused_with_retry_info(
    stub: service_pb2_grpc.TablelogServiceStub, club: str
) -> None:
    ann, bob = as_caller("ann", club), as_caller("bob", club)
    request = service_pb2.ListGameTypesRequest()
    for _ in range(5):
        stub.ListGameTypes(request, metadata=ann, timeout=10)
    with pytest.raises(grpc.RpcError) as refused:
        stub.ListGameTypes(request, metadata=ann, timeout=10)
    assert refused.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    info, retry = refusal_details(refused.value)
    assert info.reason == "RATE_LIMITED"
    assert info.metadata["limit"] == "5"
    assert info.metadata["scope"] == "caller"
    assert info.metadata["kind"] == "reads"
    # 0.5 a second: the next token comes within two seconds.
    delay = retry.retry_delay.ToNanoseconds() / 1e9
    assert 0 < delay <= 2
    assert int(info.metadata["retry_after_ms"]) == pytest.approx(delay * 1000, abs=1)
    # Another caller has a bucket of its own.
    assert stub.ListGameTypes(request, metadata=bob, timeout=10).games


def test_an_export_is_charged_once_per_game_it_names(
    embedded_redis: EmbeddedRedis, club: str
) -> None:
    """ExportRecord counts each distinct game it names against the caller's reads (a game
    named twice once), all or none: a call past what is left is refused with nothing
    exported and leaves the rest for the next call (before, the per-game charge was
    untested, and a refused charge had spent the tokens it took before running out)."""
    # A rate this slow adds no token while the test runs: every call is counted exactly.
    limits = CallerLimits(reads_per_second=0.001, read_burst=8)
    running = serve(embedded_redis.url, limits=limits)
    try:
        with channel(running.target) as opened:
            stub = service_pb2_grpc.TablelogServiceStub(opened)
            games = [create(stub, as_caller("creator", club)).game_id for _ in range(5)]
            ann = as_caller("ann", club)

            def export(*names: str) -> service_pb2.ExportRecordResponse:
                request = service_pb2.ExportRecordRequest(game_ids=names)
                answer: service_pb2.ExportRecordResponse = stub.ExportRecord(
                    request, metadata=ann, timeout=10
                )
                return answer

            one, two, three, four, five = games
            # 3 games, each named two or three times: 3 of 8 reads.
            assert export(one, two, three, one, two, three, one).games == 3
            # One game named 500 times: 1 (4 spent).
            assert export(*[one] * 500).games == 1
            # 5 games, 4 reads left: refused, nothing exported.
            with pytest.raises(grpc.RpcError) as refused:
                export(*games)
            assert refused.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
            info, retry = refusal_details(refused.value)
            assert (info.reason, info.metadata["kind"]) == ("RATE_LIMITED", "reads")
            assert retry is not None
            # The refused call spent its own read only: 3 left, and 3 games take them.
            assert export(three, four, five).games == 3
            with pytest.raises(grpc.RpcError) as spent:
                export(one)
            assert spent.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
            # Another caller's reads are its own.
            assert (
                stub.ExportRecord(
                    service_pb2.ExportRecordRequest(game_ids=games),
                    metadata=as_caller("bob", club),
                    timeout=10,
                ).games
                == 5
            )
    finally:
        running.stop()


def test_changes_have_a_rate_of_their_own_and_a_refused_change_changes_nothing(
    stub: service_pb2_grpc.TablelogServiceStub, club: str
) -> None:
    ann, bob = as_caller("ann", club), as_caller("bob", club)
    line = splendor_line(seed=3)
    game = create(stub, ann)
    version = game.version
    for notation in line[:3]:
        version = stub.RecordMove(
            service_pb2.RecordMoveRequest(
                game_id=game.game_id, notation=notation, expected_version=version
            ),
            metadata=ann,
            timeout=10,
        ).game.version
    with pytest.raises(grpc.RpcError) as refused:
        stub.RecordMove(
            service_pb2.RecordMoveRequest(
                game_id=game.game_id, notation=line[3], expected_version=version
            ),
            metadata=ann,
            timeout=10,
        )
    assert refused.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    info, retry = refusal_details(refused.value)
    assert (info.reason, info.metadata["kind"]) == ("RATE_LIMITED", "changes")
    assert retry is not None
    # Reads are counted apart, and the refused move was not stored.
    read = stub.GetGame(service_pb2.GetGameRequest(game_id=game.game_id), metadata=ann)
    assert read.game.version == version
    # Bob records the same move: his bucket is full.
    moved = stub.RecordMove(
        service_pb2.RecordMoveRequest(
            game_id=game.game_id, notation=line[3], expected_version=version
        ),
        metadata=bob,
        timeout=10,
    )
    assert moved.game.version == version + 1


def watch(stub: service_pb2_grpc.TablelogServiceStub, game_id: str, who: Any) -> grpc.Future[Any]:
    """An open watch (its first message received, so the server counts it)."""
    call: Any = stub.WatchGame(
        service_pb2.WatchGameRequest(game_id=game_id, from_revision=1), metadata=who, timeout=60
    )
    next(call)
    return call  # type: ignore[no-any-return]


def watch_refused(
    stub: service_pb2_grpc.TablelogServiceStub, game_id: str, who: Any
) -> tuple[Any, Any]:
    with pytest.raises(grpc.RpcError) as refused:
        watch(stub, game_id, who)
    assert refused.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    return refusal_details(refused.value)


def test_watches_past_the_limit_per_caller_and_per_club_are_refused(
    stub: service_pb2_grpc.TablelogServiceStub, club: str
) -> None:
    ann, bob, cat = (as_caller(name, club) for name in ("ann", "bob", "cat"))
    game = create(stub, as_caller("creator", club))
    first, second = watch(stub, game.game_id, ann), watch(stub, game.game_id, ann)
    info, retry = watch_refused(stub, game.game_id, ann)
    assert (info.reason, info.metadata["scope"], info.metadata["limit"]) == (
        "TOO_MANY_WATCHES",
        "caller",
        "2",
    )
    assert retry.retry_delay.seconds > 0
    third = watch(stub, game.game_id, bob)  # the club's third
    info, _ = watch_refused(stub, game.game_id, cat)
    assert (info.metadata["scope"], info.metadata["limit"]) == ("club", "3")
    # Another club is counted apart.
    elsewhere = watch(stub, game.game_id, as_caller("cat", club + "-other"))
    # A watch that ends gives its slot back.
    first.cancel()
    deadline = time.monotonic() + 10
    while True:
        try:
            again = watch(stub, game.game_id, ann)
            break
        except grpc.RpcError:
            assert time.monotonic() < deadline, "the cancelled watch's slot never came back"
            time.sleep(0.05)
    for call in (second, third, elsewhere, again):
        call.cancel()


def stored_bytes(url: str, game_ids: list[str]) -> int:
    """What the games' streams hold, read from Redis itself."""
    with redis.Redis.from_url(url) as client:
        return sum(
            len(fields[b"e"])
            for game_id in game_ids
            for _, fields in client.xrange(f"tl:{{{game_id}}}:events")
        )


def counted(url: str, club: str) -> int:
    """The club's quota counter, read from Redis itself."""
    with redis.Redis.from_url(url) as client:
        return int(client.get(f"tl:club:{club}:bytes") or 0)


def test_a_club_past_its_stored_bytes_is_refused_and_nothing_is_appended(
    embedded_redis: EmbeddedRedis, club: str
) -> None:
    """Two server instances share the club's counter: the quota holds across them."""
    quota, lease = 6_000, 500
    first = serve(embedded_redis.url, club_storage=quota, club_lease=lease)
    second = serve(embedded_redis.url, club_storage=quota, club_lease=lease)
    ann = as_caller("ann", club)
    line = splendor_line(seed=5)
    try:
        with channel(first.target) as one, channel(second.target) as two:
            stubs = [service_pb2_grpc.TablelogServiceStub(c) for c in (one, two)]
            game = create(stubs[0], ann)
            version, played = game.version, 0
            while True:
                request = service_pb2.RecordMoveRequest(
                    game_id=game.game_id, notation=line[played], expected_version=version
                )
                try:
                    # Each instance in turn: the counter is in Redis, not in either.
                    answer = stubs[played % 2].RecordMove(request, metadata=ann, timeout=10)
                except grpc.RpcError as error:
                    refused = error
                    break
                version, played = answer.game.version, played + 1
                assert played < len(line), "the quota was never reached"
            assert played > 4  # both instances appended before the quota was reached
            assert refused.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
            info, retry = refusal_details(refused)
            assert info.reason == "CLUB_STORAGE_FULL"
            assert info.metadata["club"] == club
            assert info.metadata["limit"] == str(quota)
            used, needed = int(info.metadata["used"]), int(info.metadata["needed"])
            assert used <= quota < used + needed
            assert retry is None  # waiting frees no bytes
            # Nothing was appended: the club stores at most its quota.
            for stub in stubs:
                read = stub.GetGame(
                    service_pb2.GetGameRequest(game_id=game.game_id), metadata=as_caller("x", club)
                )
                assert read.game.version == version
            stored = stored_bytes(embedded_redis.url, [game.game_id])
            assert stored <= counted(embedded_redis.url, club) <= quota
            # A new game of the club is refused before it is even listed.
            with redis.Redis.from_url(embedded_redis.url) as direct:
                listed = direct.zcard("tl:{club:local}:games")
                for stub in stubs:
                    with pytest.raises(grpc.RpcError) as creating:
                        create(stub, as_caller("bob", club))
                    assert refusal_details(creating.value)[0].reason == "CLUB_STORAGE_FULL"
                assert direct.zcard("tl:{club:local}:games") == listed
            # Another club still records.
            other = create(stubs[1], as_caller("ann", club + "-other"))
            assert other.version >= 1
    finally:
        first.stop()
        second.stop()
    # Stopped, the instances gave their unused leases back: the counter is what is stored.
    assert counted(embedded_redis.url, club) == stored


def returned_to_counters(url: str) -> int:
    """How many times Redis was asked to take bytes back from a counter (DECRBY)."""
    with redis.Redis.from_url(url) as client:
        stats = client.info("commandstats").get("cmdstat_decrby", {})
        return int(stats.get("calls", 0))


def test_an_append_refused_by_the_store_gives_its_bytes_back(
    embedded_redis: EmbeddedRedis, club: str
) -> None:
    """Instance B builds a move on the head it cached, A appended meanwhile: the append
    script refuses B's (stale) after B took its bytes; they go back. With lease 0 (a lease
    per append) the counter is the stored bytes exactly, at every step."""
    first = serve(embedded_redis.url, club_storage=1 << 20, club_lease=0)
    second = serve(embedded_redis.url, club_storage=1 << 20, club_lease=0)
    ann = as_caller("ann", club)
    line = splendor_line(seed=5)
    try:
        with channel(first.target) as one, channel(second.target) as two:
            a, b = (service_pb2_grpc.TablelogServiceStub(c) for c in (one, two))
            game = create(a, ann)
            b.GetGame(service_pb2.GetGameRequest(game_id=game.game_id), metadata=ann)  # cached
            a.RecordMove(
                service_pb2.RecordMoveRequest(
                    game_id=game.game_id, notation=line[0], expected_version=game.version
                ),
                metadata=ann,
                timeout=10,
            )
            stored = stored_bytes(embedded_redis.url, [game.game_id])
            assert counted(embedded_redis.url, club) == stored
            returned = returned_to_counters(embedded_redis.url)
            with pytest.raises(grpc.RpcError) as refused:
                b.RecordMove(
                    service_pb2.RecordMoveRequest(
                        game_id=game.game_id, notation=line[0], expected_version=game.version
                    ),
                    metadata=ann,
                    timeout=10,
                )
            assert refusal_details(refused.value)[0].reason == "STALE_VERSION"
            assert returned_to_counters(embedded_redis.url) == returned + 1
            assert stored_bytes(embedded_redis.url, [game.game_id]) == stored
            assert counted(embedded_redis.url, club) == stored
    finally:
        first.stop()
        second.stop()


def test_concurrent_recorders_on_two_instances_never_pass_the_quota(
    embedded_redis: EmbeddedRedis, club: str
) -> None:
    quota = 40_000
    first = serve(embedded_redis.url, club_storage=quota, club_lease=700)
    second = serve(embedded_redis.url, club_storage=quota, club_lease=700)
    games: list[str] = []

    def record(seat: int) -> str:
        """A game recorded through both instances in turn until the quota stops it."""
        who = as_caller(f"recorder-{seat}", club)
        line = splendor_line(seed=seat)
        with channel(first.target) as one, channel(second.target) as two:
            stubs = [service_pb2_grpc.TablelogServiceStub(c) for c in (one, two)]
            try:
                game = create(stubs[seat % 2], who)
            except grpc.RpcError as error:
                return refusal_details(error)[0].reason  # type: ignore[no-any-return]
            games.append(game.game_id)
            version = game.version
            for played, notation in enumerate(line):
                request = service_pb2.RecordMoveRequest(
                    game_id=game.game_id, notation=notation, expected_version=version
                )
                try:
                    answer = stubs[played % 2].RecordMove(request, metadata=who, timeout=30)
                except grpc.RpcError as error:
                    return refusal_details(error)[0].reason  # type: ignore[no-any-return]
                version = answer.game.version
        return "GAME_ENDED"

    try:
        with ThreadPoolExecutor(6) as pool:
            endings = list(pool.map(record, range(6)))
        assert set(endings) == {"CLUB_STORAGE_FULL"}
        stored = stored_bytes(embedded_redis.url, games)
        assert stored <= counted(embedded_redis.url, club) <= quota
    finally:
        first.stop()
        second.stop()
    assert counted(embedded_redis.url, club) == stored


def test_token_buckets_refill_at_their_rate_and_stay_bounded() -> None:
    now = [0.0]
    buckets = TokenBuckets(rate=2.0, burst=3, tracked=4, clock=lambda: now[0])
    assert [buckets.take("a") for _ in range(3)] == [0.0, 0.0, 0.0]
    assert buckets.take("a") == pytest.approx(0.5)
    now[0] += 0.5
    assert buckets.take("a") == 0.0
    assert buckets.take("a") == pytest.approx(0.5)
    # Several at once are taken all or none; more than the burst from a full bucket,
    # which it leaves in debt.
    now[0] += 1.25
    assert buckets.take("a", 3) == pytest.approx(0.25)
    assert buckets.take("a", 2) == 0.0
    assert buckets.take("a") == pytest.approx(0.25)
    now[0] += 1.5
    assert buckets.take("a", 5) == 0.0
    assert buckets.take("a") == pytest.approx(1.5)
    # Idle callers are forgotten first once more than `tracked` are kept.
    for name in "bcde":
        buckets.take(name)
    assert len(buckets) <= 4
    now[0] += 10
    for name in "fghij":
        buckets.take(name)
    assert len(buckets) <= 4


def test_watch_counts_refuse_without_counting() -> None:
    counts = WatchCounts(per_caller=1, per_club=2)
    ann, bob, cat = (CallerKeys(name, "local") for name in ("ann", "bob", "cat"))
    assert counts.open(ann) is None
    assert counts.open(ann) == ("caller", 1)
    assert counts.open(bob) is None
    assert counts.open(cat) == ("club", 2)
    assert (counts.of_caller("ann"), counts.of_club("local")) == (1, 2)
    counts.close(ann)
    assert counts.open(cat) is None
    assert (counts.of_caller("ann"), counts.of_club("local")) == (0, 2)


@pytest.mark.parametrize(
    ("peer", "host"),
    [
        ("ipv4:10.0.0.5:51234", "ipv4:10.0.0.5"),
        ("ipv6:[::1]:5123", "ipv6:[::1]"),
        ("ipv6:%5B::1%5D:5123", "ipv6:%5B::1%5D"),
        ("unix:/run/tablelog.sock", "unix:/run/tablelog.sock"),
    ],
)
def test_a_peer_is_its_machine_whatever_its_port(peer: str, host: str) -> None:
    assert peer_host(peer) == host


def test_serve_takes_its_limits_from_flags_and_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    defaults = build_parser().parse_args(["serve"])
    assert caller_limits(defaults) == CallerLimits()
    assert defaults.club_storage_bytes == 1 << 30
    monkeypatch.setenv("TABLELOG_READS_PER_SECOND", "2.5")
    monkeypatch.setenv("TABLELOG_CLUB_STORAGE_BYTES", "500M")
    given = build_parser().parse_args(
        ["serve", "--change-burst", "7", "--max-watches-per-club", "9"]
    )
    assert caller_limits(given) == CallerLimits(
        reads_per_second=2.5, change_burst=7, watches_per_club=9
    )
    assert given.club_storage_bytes == 500 << 20
    for wrong in (["--club-storage-bytes", "12Q"], ["--changes-per-second", "0"]):
        with pytest.raises(SystemExit):
            build_parser().parse_args(["serve", *wrong])


def test_serve_takes_the_request_id_retention_as_a_duration(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert build_parser().parse_args(["serve"]).request_id_retention == 3 * 86400
    given = build_parser().parse_args(["serve", "--request-id-retention", "36h"])
    assert given.request_id_retention == 36 * 3600
    monkeypatch.setenv("TABLELOG_REQUEST_ID_RETENTION", "90")
    assert build_parser().parse_args(["serve"]).request_id_retention == 90
    assert build_parser().parse_args(["serve"]).cache_check_interval == 3600
    checked = build_parser().parse_args(["serve", "--cache-check-interval", "10m"])
    assert checked.cache_check_interval == 600
    # Under a minute could forget a request id while its client still retries it.
    for wrong in ("59s", "0", "-3d", "3w", "forever", "4000d"):
        with pytest.raises(SystemExit):
            build_parser().parse_args(["serve", "--request-id-retention", wrong])


def test_by_default_each_authenticated_member_has_a_rate_of_its_own(
    embedded_redis: EmbeddedRedis,
) -> None:
    """Without a key function of the test's own, the limits count the member the gate
    authenticated (`tablelog.service.access.authentication.member_keys`): one member's burst leaves
    another member of the same machine and club served."""
    running = BackgroundServer(
        embedded_redis.url,
        chain=CHAIN,
        caller_limits=CallerLimits(reads_per_second=0.5, read_burst=5),
        owner_token=OWNER_TOKEN,
    ).start()
    try:
        with Client(running.target, token=OWNER_TOKEN) as owner:
            ann = owner.create_token(owner.add_member("Ann", "recorder").member_id).token
            bob = owner.create_token(owner.add_member("Bob", "spectator").member_id).token
        with (
            Client(running.target, token=ann) as as_ann,
            Client(running.target, token=bob) as as_bob,
        ):
            for _ in range(5):
                as_ann.game_types()
            with pytest.raises(TablelogError) as refused:
                as_ann.game_types()
            assert refused.value.code == grpc.StatusCode.RESOURCE_EXHAUSTED
            assert refused.value.reason == "RATE_LIMITED"
            assert as_bob.game_types()
    finally:
        running.stop()
