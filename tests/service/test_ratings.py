"""Ratings recomputed from the changed game on (`tablelog.service.memory.standings.rate_from`) equal
ratings computed from scratch, after seeded random changes of a run of games: a game added at the
end, one changed or gone in the middle, one inserted earlier, and a merge of players."""

from __future__ import annotations

import random

from google.protobuf.timestamp_pb2 import Timestamp

from tablelog.service.memory import roster as rosters
from tablelog.service.memory.standings import places_of, rate_from, rating_histories
from tablelog.v1 import clubs_pb2, standings_pb2

NAMES = ["Ann", "anne", "Bob", "Cleo", "Dan", "Eve"]


def outcome(
    index: int, rng: random.Random, sequence: int = 10, prefix: str = "g"
) -> standings_pb2.GameOutcome:
    """A game ending at minute `index`; (game id, sequence) names its content, as in the
    store (a game's record changes only with a new sequence)."""
    seated = rng.sample(NAMES, rng.choice((2, 3, 4)))
    scores = [rng.randrange(0, 6) for _ in seated]
    best = max(scores)
    winners = [i for i, s in enumerate(scores) if s == best]
    places = places_of(scores, winners)
    found = standings_pb2.GameOutcome(
        game_id=f"{prefix}{index:04d}", game="splendor", ended_time=Timestamp(seconds=index * 60),
        sequence=sequence,
    )  # fmt: skip
    for i, name in enumerate(seated):
        found.seats.append(standings_pb2.OutcomeSeat(name=name, place=places[i], score=scores[i]))
    return found


def test_ratings_from_the_changed_game_on_equal_ratings_from_scratch() -> None:
    rng = random.Random(28)
    roster = rosters.Roster()
    games = [outcome(i * 10, rng) for i in range(40)]
    run = rate_from(games, roster, None)
    for step in range(60):
        roll = rng.random()
        if roll < 0.4:
            games.append(outcome(1000 + step * 10, rng))
        elif roll < 0.6 and games:
            at = rng.randrange(len(games))
            old = games[at]
            games[at] = outcome(
                int(old.game_id[1:]), rng, sequence=old.sequence + 1, prefix=old.game_id[0]
            )
        elif roll < 0.75 and games:
            games.pop(rng.randrange(len(games)))
        elif roll < 0.9:
            games.insert(0, outcome(step, rng, prefix="i"))
            games.sort(key=lambda o: (o.ended_time.seconds, o.game_id))
        elif roster.version + 1 < len(NAMES):
            event = clubs_pb2.RosterEvent(version=roster.version + 1)
            event.players_merged.CopyFrom(rosters.merge(roster, "Ann", NAMES[roster.version + 1]))
            roster = rosters.advance(roster, event)
        run = rate_from(games, roster, run)
        assert run.histories() == rating_histories(games, roster), step


def test_an_added_game_rates_only_that_game() -> None:
    rng = random.Random(3)
    roster = rosters.Roster()
    games = [outcome(i, rng) for i in range(30)]
    first = rate_from(games, roster, None)
    games.append(outcome(99, rng))
    second = rate_from(games, roster, first)
    changed = {
        player for player, rows in second.entries.items() if rows != first.entries.get(player)
    }
    assert changed == {rosters.implicit_id(seat.name) for seat in games[-1].seats}
    # The rating objects before the new game are the very same objects: nothing was redone.
    for player, rows in first.entries.items():
        assert all(a[1] is b[1] for a, b in zip(rows, second.entries[player], strict=False))
