"""16 clients race to record the next move of one game, through two service instances on
one Redis (the embedded one, and a Redis Cluster): exactly one wins per version, the others
are told STALE_VERSION."""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Iterator

import pytest

from tablelog.service.api.server import BackgroundServer, background_server
from tablelog.service.store.embedded import EmbeddedRedis
from tablelog_client import Client, TablelogError
from tests.service.helpers import CHAIN, OWNER_TOKEN, splendor_line
from tests.support.cluster import LocalCluster

pytestmark = pytest.mark.slow

CLIENTS = 16
ROUNDS = 12


@pytest.fixture(params=["embedded", "cluster"])
def two_instances(request: pytest.FixtureRequest) -> Iterator[list[str]]:
    """The addresses of two service instances on one Redis."""
    if request.param == "embedded":
        server: BackgroundServer = request.getfixturevalue("server")
        embedded: EmbeddedRedis = request.getfixturevalue("embedded_redis")
        with background_server(embedded.url, CHAIN, OWNER_TOKEN) as second:
            yield [server.target, second.target]
        return
    cluster: LocalCluster = request.getfixturevalue("redis_cluster")
    with (
        background_server(cluster.url, CHAIN, OWNER_TOKEN) as first,
        background_server(cluster.url, CHAIN, OWNER_TOKEN) as second,
    ):
        yield [first.target, second.target]


def test_sixteen_clients_race_for_each_version(two_instances: list[str]) -> None:
    line = splendor_line(seed=17)[:ROUNDS]
    clients = [Client(two_instances[i % 2], token=OWNER_TOKEN) for i in range(CLIENTS)]
    try:
        game = clients[0].create_game("splendor", ["Ann", "Bob"])
        outcomes: Counter[str] = Counter()
        version = game.version
        for notation in line:
            barrier = threading.Barrier(CLIENTS)
            results: list[str] = [""] * CLIENTS

            def race(
                index: int,
                expected: int = version,
                text: str = notation,
                barrier: threading.Barrier = barrier,
                results: list[str] = results,
            ) -> None:
                barrier.wait()
                try:
                    clients[index].record(game.game_id, text, expected_version=expected)
                    results[index] = "won"
                except TablelogError as error:
                    results[index] = error.reason

            threads = [threading.Thread(target=race, args=(i,)) for i in range(CLIENTS)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join(60)
            round_outcome = Counter(results)
            assert round_outcome == {"won": 1, "STALE_VERSION": CLIENTS - 1}, round_outcome
            outcomes.update(round_outcome)
            version += 1
        events = clients[1].export(game.game_id)
        assert [e.sequence for e in events] == list(range(1, len(events) + 1))
        assert [e.move_recorded.notation for e in events[1:]] == line
        assert clients[1].verify(game.game_id).ok
        assert outcomes["won"] == ROUNDS
    finally:
        for each in clients:
            each.close()
