"""The event store, one module per responsibility:

    base.py         the abstract store (`EventStore`) and the values it answers with
    chain.py        the chain format: how events are linked and sealed with a keyed hash
    chain_keys.py   where the chain keys come from (the key file, or the data directory's)
    club_storage.py the clubs' stored-bytes quota, leased from counters in Redis
    game_index.py   the clubs' listing index (ListGames): sorted sets by filter, kept by a script
    errors.py       what a store refuses or cannot do
    redis_store.py  the Redis backend (`RedisEventStore`) and its key layout
    calls.py        every Redis call made one way: time limit, outage, errors said as such
    cluster.py      the Redis and Redis Cluster clients, made alike from a URL
    checkpoint_storage.py  where checkpoints are kept beside a game's stream
    result_storage.py  where a game's sealed result (club memory) is kept beside its stream
    memory.py       club memory's keys: the feed of changed games, outcomes, checkpoint
    embedded.py     the embedded Redis of `tablelog serve`: durability, supervision
    data_disk.py    the embedded Redis's data disk: a Redis lost to it said so
    script.py       the append script's arguments and replies as typed values
    append.lua      the compare-and-append script itself (runs inside Redis)
    watchdog.py     the time limit on Redis calls
    packing.py      command packing by hiredis on the asyncio connections
    pool.py         the request path's bounded connection pool

The lowest room of the service: it imports only the shared `logs` module, never `access`,
`recording`, `memory` or the ports (`api`). The names below are what the rest of the service
uses.
"""

from tablelog.service.store.base import AppendResult, EventStore, StoredHead
from tablelog.service.store.errors import (
    ChainMismatch,
    ClubStorageFull,
    CorruptEvent,
    GameExists,
    GameNotFound,
    IdempotencyKeyReused,
    SequenceMoved,
    StaleVersion,
    StoreDiskFailing,
    StoreError,
    StoreFull,
    StoreUnavailable,
    TamperedHistory,
)
from tablelog.service.store.pool import DEFAULT_POOL_SIZE
from tablelog.service.store.redis_store import STORE_TIMEOUT, RedisEventStore
from tablelog.service.store.script import SeedOp

__all__ = [
    "DEFAULT_POOL_SIZE",
    "STORE_TIMEOUT",
    "AppendResult",
    "ChainMismatch",
    "ClubStorageFull",
    "CorruptEvent",
    "EventStore",
    "GameExists",
    "GameNotFound",
    "IdempotencyKeyReused",
    "RedisEventStore",
    "SeedOp",
    "SequenceMoved",
    "StaleVersion",
    "StoreDiskFailing",
    "StoreError",
    "StoreFull",
    "StoreUnavailable",
    "StoredHead",
    "TamperedHistory",
]
