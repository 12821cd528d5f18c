"""Club memory on a real Redis Cluster with two service instances, each running its own
projector over the same clubs (idempotent updates, no lease): games recorded, reopened and
amended through both instances are projected once each, both instances serve the same
models, and a rebuild through one (from the games' sealed results, or every game folded)
gives the models both had."""

from __future__ import annotations

import random

import pytest

from tablelog.service.api.server import background_server
from tablelog_client import Client
from tests.service.helpers import CHAIN, OWNER_TOKEN
from tests.service.test_club_memory import play
from tests.service.test_players import _club
from tests.service.test_projection_rebuild import amend_after_end, caught_up, models
from tests.support.cluster import LocalCluster

pytestmark = pytest.mark.slow


def test_two_instances_project_a_club_on_the_cluster(redis_cluster: LocalCluster) -> None:
    rng = random.Random(7)
    with (
        background_server(redis_cluster.url, CHAIN, OWNER_TOKEN) as first,
        background_server(redis_cluster.url, CHAIN, OWNER_TOKEN) as second,
    ):
        _club_id, token = _club(first)
        with (
            Client(first.target, token=token, timeout=30) as one,
            Client(second.target, token=token, timeout=30) as two,
        ):
            ended = []
            for seed in range(6):
                through = one if seed % 2 else two
                game = "splendor" if seed % 3 else "medici-card-game"
                ended.append(play(through, game, rng.sample(["Ann", "Bob", "Cleo"], 2), seed))
            two.undo(ended[0])
            assert amend_after_end(one, ended[3], rng) or amend_after_end(one, ended[4], rng)
            one.merge_players("Ann", "Cleo")
            caught_up(one)
            caught_up(two)
            games = ["medici-card-game", "splendor"]
            seen_by_one = models(one, games)
            assert models(two, games) == seen_by_one
            assert one.standings("splendor").lag.projected_games >= 4
            # Every game from its sealed result (read across the games' slots), then every
            # game folded again: the same models on both instances each time.
            for refold, folded in ((False, 0), (True, len(ended))):
                assert one.rebuild_projections(refold=refold).folded == folded
                caught_up(two)
                assert models(two, games) == seen_by_one
                assert models(one, games) == seen_by_one
