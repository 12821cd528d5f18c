"""Building the gRPC server (separately from running it, so tests use a free port), and
running it: in the foreground for `tablelog serve`, or in a background thread for tests."""

from __future__ import annotations

import asyncio
import gc
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import grpc
from grpc import aio
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection, reflection_pb2_grpc

from tablelog.replay.registry import all_games
from tablelog.service.access.admission import Admission
from tablelog.service.access.authentication import GameClubs, Gate, member_keys
from tablelog.service.access.club_admin import ClubAdmin
from tablelog.service.access.identity import new_token
from tablelog.service.access.local_owner import register_owner_token
from tablelog.service.access.members import MemberStore
from tablelog.service.access.quotas import CallerLimits, KeysOf
from tablelog.service.api.clubs import ClubServicer
from tablelog.service.api.health import StoreProbe
from tablelog.service.api.http_api import HandlerTable
from tablelog.service.api.http_port import HttpPort, start_http_port
from tablelog.service.api.interceptors import Registrar, add_servicer
from tablelog.service.api.operators import OperatorServicer
from tablelog.service.api.readiness import Readiness
from tablelog.service.api.reflection import ReflectionServicer
from tablelog.service.api.servicer import TablelogServicer
from tablelog.service.api.standings_api import StandingsServicer
from tablelog.service.api.transport import TlsFiles
from tablelog.service.limits import MAX_MESSAGE_BYTES
from tablelog.service.memory.players import ClubPlayers
from tablelog.service.memory.projector import Projector
from tablelog.service.memory.roster_store import RosterStore
from tablelog.service.metrics import SERVERS
from tablelog.service.recording.checkpoints import DEFAULT_INTERVAL
from tablelog.service.recording.heads import DEFAULT_CACHE_BYTES
from tablelog.service.recording.pictures import PictureLimits, Pictures
from tablelog.service.recording.recorder import Recorder
from tablelog.service.recording.watching import WatchHub, WatchLimits
from tablelog.service.store import DEFAULT_POOL_SIZE, EventStore, RedisEventStore
from tablelog.service.store.chain import Chain
from tablelog.service.store.club_storage import DEFAULT_LEASE
from tablelog.service.store.cluster import ReplicaWait
from tablelog.service.store.data_disk import DataDisk
from tablelog.service.store.memory import MemoryStore
from tablelog.service.store.redis_store import REQUEST_ID_RETENTION
from tablelog.v1 import (
    clubs_pb2,
    clubs_pb2_grpc,
    service_pb2,
    service_pb2_grpc,
    standings_pb2,
    standings_pb2_grpc,
)

HOT_METHODS = frozenset({"RecordMove"})
"""The call a recorder makes on every move: it keeps grpc's registered-method path (the
others save a microsecond or two there and would cost every call one, see `Registrar`)."""
SERVICE_NAME = service_pb2.DESCRIPTOR.services_by_name["TablelogService"].full_name
CLUB_SERVICE_NAME = clubs_pb2.DESCRIPTOR.services_by_name["ClubService"].full_name
OPERATOR_SERVICE_NAME = clubs_pb2.DESCRIPTOR.services_by_name["OperatorService"].full_name
STANDINGS_SERVICE_NAME = standings_pb2.DESCRIPTOR.services_by_name["StandingsService"].full_name
PRESERIALIZED_METHODS = frozenset({"WatchGame"})
"""Methods whose handlers yield messages already serialized (each watch update is
serialized once for all its watchers): their serializer passes bytes through."""


@dataclass
class Built:
    server: aio.Server
    port: int
    recorder: Recorder
    health: health.aio.HealthServicer
    probe: StoreProbe | None
    """Keeps `health` in step with Redis (started by `mark_serving`)."""
    watching: WatchHub
    members: MemberStore
    gate: Gate
    handlers: HandlerTable
    """The API's handlers, prepared as for the gRPC server, for the HTTP port
    (`tablelog.service.api.http_port`)."""
    http: HttpPort | None = None
    """The HTTP port, once started (`start_http`)."""
    projector: Projector | None = None
    """Club memory's projector (started by `mark_serving`)."""
    readiness: Readiness = field(default_factory=Readiness)
    """What `/readyz` on the HTTP port says (`tablelog.service.api.readiness`)."""


def build_server(
    store: EventStore,
    address: str = "127.0.0.1:0",
    *,
    log_rpcs: bool = True,
    reuse_port: bool = False,
    redis_url: str | None = None,
    data_disk: DataDisk | None = None,
    watch_limits: WatchLimits | None = None,
    tls: TlsFiles | None = None,
    caller_limits: CallerLimits | None = None,
    keys_of: KeysOf = member_keys,
    gate: Gate | None = None,
    head_cache_bytes: int = DEFAULT_CACHE_BYTES,
    checkpoint_interval: int = DEFAULT_INTERVAL,
    picture_limits: PictureLimits | None = None,
) -> Built:
    """A server bound to `address` (port 0: a free port), not yet started. `log_rpcs`
    writes one structured line per RPC (off only to measure what logging costs);
    `reuse_port` lets several processes share the address (`tablelog serve --workers`);
    `redis_url`, the store's Redis, is probed for health (see `tablelog.service.api.health`; without
    it, health says SERVING for as long as the server runs), and `data_disk`, the embedded
    Redis's data directory, looked at when Redis fails (see `tablelog.service.store.data_disk`);
    `watch_limits` bounds the watchers and watched games (see
    `tablelog.service.recording.watching`); `tls` serves TLS instead of plaintext (see
    `tablelog.service.api.transport`); `gate` authenticates and authorizes every call but health and
    reflection (by default one on the store's Redis, see `tablelog.service.access.authentication`);
    `caller_limits` then bounds each caller's rate and watches (see
    `tablelog.service.access.quotas`), telling callers apart by `keys_of` (by default the
    authenticated member and its club). `head_cache_bytes` bounds the cached game heads (see
    `tablelog.service.recording.heads`); `checkpoint_interval` is the events between two checkpoints
    of a game (see `tablelog.service.recording.checkpoints`); `picture_limits` bounds the pictures'
    cache and the processes that draw them (see `tablelog.service.recording.pictures`)."""
    if not isinstance(store, RedisEventStore):
        raise TypeError("the server keeps its members in the event store's Redis")
    server = aio.server(options=server_options(reuse_port))
    recorder = Recorder(store, head_cache_bytes, checkpoint_interval, Pictures(picture_limits))
    members = MemberStore(store.redis, calls=store.calls)
    games = GameClubs(store)
    gate = gate or Gate(members, games)
    # Watch tails block on their own connections, never on the request path's pool.
    watching = WatchHub(
        store, store.dedicated, watch_limits, heads=recorder.heads, changes=recorder.changes
    )
    servicer = TablelogServicer(recorder, watching, members, games, gate)
    admission = Admission(caller_limits, keys_of) if caller_limits else None
    servicer.charge = admission.charge if admission is not None else None
    # Only the per-move call is a grpc registered method (see `Registrar`); the other
    # methods, health and reflection are served by their generic handlers.
    add_servicer(
        service_pb2_grpc.add_TablelogServiceServicer_to_server,
        servicer,
        _PreserializingRegistrar(
            server, log=log_rpcs, registered=HOT_METHODS, gate=gate, admission=admission
        ),
    )
    rosters = RosterStore(store.redis, calls=store.calls)
    players = ClubPlayers(rosters, recorder, members)
    clubs = ClubServicer(members, gate, recorder, players)
    projector = Projector(MemoryStore(store.redis, calls=store.calls), rosters, recorder)
    standings = StandingsServicer(projector)
    add_servicer(
        clubs_pb2_grpc.add_ClubServiceServicer_to_server,
        clubs,
        Registrar(server, log=log_rpcs, registered=(), gate=gate, admission=admission),
    )
    operators = OperatorServicer(ClubAdmin(members, store), gate, recorder)
    add_servicer(
        clubs_pb2_grpc.add_OperatorServiceServicer_to_server,
        operators,
        Registrar(server, log=log_rpcs, registered=(), gate=gate, admission=admission),
    )
    add_servicer(
        standings_pb2_grpc.add_StandingsServiceServicer_to_server,
        standings,
        Registrar(server, log=log_rpcs, registered=(), gate=gate, admission=admission),
    )
    # The same handlers again, wrapped alike, for the HTTP port (`tablelog.service.api.http_api`).
    handlers = HandlerTable()
    add_servicer(
        service_pb2_grpc.add_TablelogServiceServicer_to_server,
        servicer,
        Registrar(handlers, log=log_rpcs, gate=gate, admission=admission),
    )
    add_servicer(
        clubs_pb2_grpc.add_ClubServiceServicer_to_server,
        clubs,
        Registrar(handlers, log=log_rpcs, gate=gate, admission=admission),
    )
    add_servicer(
        clubs_pb2_grpc.add_OperatorServiceServicer_to_server,
        operators,
        Registrar(handlers, log=log_rpcs, gate=gate, admission=admission),
    )
    add_servicer(
        standings_pb2_grpc.add_StandingsServiceServicer_to_server,
        standings,
        Registrar(handlers, log=log_rpcs, gate=gate, admission=admission),
    )
    plain = Registrar(server, log=False, registered=())
    health_servicer = health.aio.HealthServicer()
    add_servicer(health_pb2_grpc.add_HealthServicer_to_server, health_servicer, plain)
    add_servicer(
        reflection_pb2_grpc.add_ServerReflectionServicer_to_server,
        ReflectionServicer(  # answers for methods too (api/reflection.py)
            (
                SERVICE_NAME,
                CLUB_SERVICE_NAME,
                STANDINGS_SERVICE_NAME,
                OPERATOR_SERVICE_NAME,
                health.SERVICE_NAME,
                reflection.SERVICE_NAME,
            )
        ),
        plain,
    )
    port = (
        server.add_secure_port(address, tls.credentials())
        if tls is not None
        else server.add_insecure_port(address)
    )
    if port == 0:
        raise OSError(f"cannot listen on {address}")
    all_games()  # import every game now, not in the first CreateGame
    tune_gc()
    probe = (
        StoreProbe(redis_url, store, health_servicer, HEALTH_NAMES, data_disk=data_disk)
        if redis_url is not None
        else None
    )
    built = Built(
        server,
        port,
        recorder,
        health_servicer,
        probe,
        watching,
        members,
        gate,
        handlers,
        projector=projector,
    )
    built.readiness.probe = probe
    return built


def _pass_bytes(serialize: Callable[[Any], bytes] | None) -> Callable[[Any], bytes]:
    def serializer(message: Any) -> bytes:
        if isinstance(message, bytes):
            return message
        assert serialize is not None
        return serialize(message)

    return serializer


def _preserialized(
    method: str, handler: grpc.RpcMethodHandler[Any, Any] | None
) -> grpc.RpcMethodHandler[Any, Any] | None:
    if handler is None or method.rsplit("/", 1)[-1] not in PRESERIALIZED_METHODS:
        return handler
    # grpc's handlers are named tuples.
    replaced: grpc.RpcMethodHandler[Any, Any] = handler._replace(  # type: ignore[attr-defined]
        response_serializer=_pass_bytes(handler.response_serializer)
    )
    return replaced


class _PreserializedHandler(grpc.GenericRpcHandler):
    def __init__(self, inner: grpc.GenericRpcHandler) -> None:
        self._inner = inner

    def service(
        self, handler_call_details: grpc.HandlerCallDetails
    ) -> grpc.RpcMethodHandler[Any, Any] | None:
        return _preserialized(
            handler_call_details.method, self._inner.service(handler_call_details)
        )


class _PreserializingRegistrar(Registrar):
    """A `Registrar` whose `PRESERIALIZED_METHODS` take bytes from their handlers."""

    def add_generic_rpc_handlers(self, handlers: Sequence[grpc.GenericRpcHandler]) -> None:
        super().add_generic_rpc_handlers([_PreserializedHandler(h) for h in handlers])

    def add_registered_method_handlers(
        self, service: str, handlers: dict[str, grpc.RpcMethodHandler[Any, Any]]
    ) -> None:
        super().add_registered_method_handlers(
            service, {name: _preserialized(name, h) or h for name, h in handlers.items()}
        )


def server_options(reuse_port: bool = False) -> list[tuple[str, int]]:
    """The gRPC server's channel options (also used by the benchmark's floor server)."""
    return [
        ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
        ("grpc.max_send_message_length", MAX_MESSAGE_BYTES),
        # Off by default, so a second server on a taken port fails instead of sharing it.
        ("grpc.so_reuseport", 1 if reuse_port else 0),
        ("grpc.keepalive_permit_without_calls", 1),
        ("grpc.http2.min_ping_interval_without_data_ms", 10_000),
    ]


def tune_gc() -> None:
    """Cached positions keep every state of a game's history alive (undo needs them), so
    the cyclic collector's full passes walk a large, long-lived heap over and over while
    it finds little garbage. Move what exists at start-up out of its sight and collect the
    young generation less often (measured on a loop of RecordMove calls: about 15% less
    CPU per call). So a full pass is rare (twice in a 40-minute long club night), and what a
    reference cycle holds stays that long: the request path and the watches make none that
    hold a game (tests/service/test_call_frames.py, test_watch_memory.py)."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(20_000, 20, 100)


HEALTH_NAMES = ("", SERVICE_NAME, CLUB_SERVICE_NAME)
"""The names the health service answers for: the server as a whole and both services."""


async def mark_serving(built: Built) -> None:
    """SERVING, from now on as long as Redis answers (see `tablelog.service.api.health`)."""
    for name in HEALTH_NAMES:
        await built.health.set(name, health_pb2.HealthCheckResponse.SERVING)
    if built.probe is not None:
        built.probe.start()
    if built.projector is not None:
        built.projector.start(built.projector.store.clubs)
    built.readiness.started = True
    SERVERS.add(built)


async def stop_serving(built: Built, grace: float) -> None:
    """NOT_SERVING for good (load balancers stop sending calls), then stop the server,
    letting calls in progress finish for up to `grace` seconds."""
    built.readiness.stopping = True
    SERVERS.discard(built)
    if built.probe is not None:
        await asyncio.to_thread(built.probe.stop)
    if built.projector is not None:
        await built.projector.stop()
    await built.health.enter_graceful_shutdown()
    if built.http is not None:
        await asyncio.gather(built.server.stop(grace=grace), built.http.stop(grace))
    else:
        await built.server.stop(grace=grace)
    await built.watching.close()
    await built.recorder.pictures.close()
    await built.recorder.settle()  # the checkpoint writes in flight, before the store closes


class BackgroundServer:
    """A tablelog server on its own event loop in a thread (tests, benchmarks), sealing with
    `chain` (instances of one deployment share it). `owner_token` (by default a new one) is
    made a token of the local club's owner (`tablelog.service.access.local_owner`).

    `recorder` is only for assertions made from the server's own loop (`run`)."""

    def __init__(
        self,
        redis_url: str,
        address: str = "127.0.0.1:0",
        *,
        chain: Chain,
        pool_size: int = DEFAULT_POOL_SIZE,
        watch_limits: WatchLimits | None = None,
        tls: TlsFiles | None = None,
        caller_limits: CallerLimits | None = None,
        keys_of: KeysOf = member_keys,
        club_storage: int | None = None,
        club_lease: int = DEFAULT_LEASE,
        owner_token: str | None = None,
        gate: Gate | None = None,
        http_address: str | None = None,
        http_cors_origins: Sequence[str] = (),
        replica_wait: ReplicaWait | None = None,
        request_id_retention: float = REQUEST_ID_RETENTION,
    ) -> None:
        self.redis_url = redis_url
        self.request_id_retention = request_id_retention
        self.http_address = http_address
        self.http_cors_origins = http_cors_origins
        self.replica_wait = replica_wait
        self.club_lease = club_lease
        self.tls = tls
        self.caller_limits = caller_limits
        self.keys_of = keys_of
        self.club_storage = club_storage
        self.owner_token = owner_token or new_token()
        self.gate = gate
        self.chain = chain
        self.address = address
        self.pool_size = pool_size
        self.watch_limits = watch_limits
        self.port = 0
        self.built: Built | None = None
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._stop: asyncio.Event | None = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._main, name="tablelog-server", daemon=True)

    @property
    def target(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def http_url(self) -> str:
        """The HTTP port's base URL (with `http_address`), without the final slash."""
        if self.built is None or self.built.http is None:
            raise RuntimeError("this server was started without an HTTP port (http_address)")
        return self.built.http.url.rstrip("/")

    def start(self) -> BackgroundServer:
        self._thread.start()
        self._ready.wait(30)
        if self._error is not None:
            raise self._error
        return self

    def _main(self) -> None:
        asyncio.set_event_loop(self._loop)
        self._loop.run_until_complete(self._serve())

    async def _serve(self) -> None:
        try:
            store = RedisEventStore.from_url(
                self.redis_url,
                chain=self.chain,
                pool_size=self.pool_size,
                club_storage=self.club_storage,
                club_lease=self.club_lease,
                replica_wait=self.replica_wait,
                request_id_retention=self.request_id_retention,
            )
            self.built = build_server(
                store,
                self.address,
                redis_url=self.redis_url,
                watch_limits=self.watch_limits,
                tls=self.tls,
                caller_limits=self.caller_limits,
                keys_of=self.keys_of,
                gate=self.gate,
            )
            await register_owner_token(self.built.members, self.owner_token)
            self.port = self.built.port
            await self.built.server.start()
            if self.http_address is not None:
                self.built.http = await start_http_port(
                    self.built.handlers.handlers,
                    self.http_address,
                    tls=self.tls,
                    cors_origins=self.http_cors_origins,
                    readiness=self.built.readiness,
                    gate=self.built.gate,
                )
            await mark_serving(self.built)
            self._stop = asyncio.Event()
        except BaseException as exc:
            self._error = exc
            self._ready.set()
            raise
        self._ready.set()
        await self._stop.wait()
        await stop_serving(self.built, grace=1)
        await store.close()

    def run(self, coroutine: object) -> object:
        """Run a coroutine on the server's loop (to inspect the recorder)."""
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop).result(60)  # type: ignore[arg-type]

    def stop(self) -> None:
        if self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(30)
        self._loop.close()


@contextmanager
def background_server(
    redis_url: str,
    chain: Chain,
    owner_token: str | None = None,
    replica_wait: ReplicaWait | None = None,
) -> Iterator[BackgroundServer]:
    server = BackgroundServer(
        redis_url, chain=chain, owner_token=owner_token, replica_wait=replica_wait
    ).start()
    try:
        yield server
    finally:
        server.stop()


def channel(target: str, token: str | None = None) -> grpc.Channel:
    """A channel to a server; with `token`, every call on it carries it as its bearer."""
    opened = grpc.insecure_channel(
        target,
        options=[
            ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
            ("grpc.max_send_message_length", MAX_MESSAGE_BYTES),
        ],
    )
    if token is None:
        return opened
    return grpc.intercept_channel(opened, _Bearer(token))


class _Bearer(grpc.UnaryUnaryClientInterceptor, grpc.UnaryStreamClientInterceptor):
    """Adds `authorization: Bearer <token>` to every call."""

    def __init__(self, token: str) -> None:
        self._metadata = ("authorization", f"Bearer {token}")

    def _with_token(self, details: Any) -> Any:
        metadata = [*(details.metadata or ()), self._metadata]
        return details._replace(metadata=metadata)

    def intercept_unary_unary(self, continuation: Any, details: Any, request: Any) -> Any:
        return continuation(self._with_token(details), request)

    def intercept_unary_stream(self, continuation: Any, details: Any, request: Any) -> Any:
        return continuation(self._with_token(details), request)
