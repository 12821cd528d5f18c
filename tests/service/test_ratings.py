"""Ratings recomputed from the changed game on (`tablelog.service.memory.standings.rate_from`) equal
ratings computed from scratch, after seeded random changes of a run of games: a game added at the
end, one changed or gone in the middle, one inserted earlier, and a merge of players. And the
read models kept game by game (`tablelog.service.memory.views`) answer what the pure functions
compute from zero."""

from __future__ import annotations

import random

from google.protobuf.timestamp_pb2 import Timestamp

from tablelog.service.memory import roster as rosters
from tablelog.service.memory.standings import (
    Range,
    game_type_stats,
    in_order,
    places_of,
    player_record,
    rate_from,
    rating_histories,
    standings,
)
from tablelog.service.memory.views import ClubMemory
from tablelog.service.recording.game_index import normalised_player
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
    before = {player: list(rows) for player, rows in first.entries.items()}
    games.append(outcome(99, rng))
    second = rate_from(games, roster, first)  # continued in place
    assert second is first
    changed = {player for player, rows in second.entries.items() if rows != before.get(player)}
    assert changed == {rosters.implicit_id(seat.name) for seat in games[-1].seats}
    # The rating objects before the new game are the very same objects: nothing was redone.
    for player, rows in before.items():
        assert all(a[1] is b[1] for a, b in zip(rows, second.entries[player], strict=False))


def test_a_cut_run_takes_back_only_the_games_cut() -> None:
    """`RatingRun.cut` at the last game touches that game's players alone; cut at the start
    it forgets everything; continued with a `start` it equals a run from zero."""
    rng = random.Random(5)
    roster = rosters.Roster()
    games = [outcome(i, rng) for i in range(30)]
    run = rate_from(games, roster, None)
    kept = {player: list(rows) for player, rows in run.entries.items()}
    run.cut(29)
    assert len(run.keys) == len(run.rated) == 29
    last = {rosters.implicit_id(seat.name) for seat in games[-1].seats}
    for player, rows in kept.items():
        assert run.entries.get(player, []) == (rows[:-1] if player in last else rows)
    games[-1] = outcome(29, rng, sequence=11)
    assert rate_from(games, roster, run, start=29).histories() == rating_histories(games, roster)
    run.cut(0)
    assert (run.keys, run.rated, run.entries) == ([], [], {})


def game_outcome(
    rng: random.Random, game_id: str, minute: int, sequence: int, names: list[str]
) -> standings_pb2.GameOutcome:
    """An outcome of splendor or medici with figures (some not whole: exact sums matter)."""
    found = outcome(minute, rng, sequence=sequence)
    found.game_id = game_id
    found.game = rng.choice(("splendor", "medici"))
    found.ended_time.nanos = rng.choice((0, 5))
    found.figures["moves"] = float(rng.randrange(20, 90))
    winners = [seat for seat in found.seats if seat.place == 1]
    for index, seat in enumerate(found.seats):
        seat.name = rng.choice(names) if rng.random() < 0.3 else seat.name
        seat.win_share = 1 / len(winners) if seat.place == 1 else 0.0
        seat.first = index == 0
        seat.figures["decisions"] = rng.choice((3.0, 0.1, 7.25, 12.0))
    return found


MERGES = [("Bob", "anne"), ("Cleo", "Dan"), ("Bob", "Eve")]


def test_views_kept_game_by_game_equal_answers_from_zero() -> None:
    """`ClubMemory` and its views, changed game by game (games ended, amended, undone or
    abandoned, old ones imported out of time order, merges of players), read in between,
    answer what the pure functions compute from zero over the same outcomes: the standings,
    every player's record, the game type's statistics, per season; and the first spelling of
    a name."""
    rng = random.Random(2828)
    names = ["Ann", "ANN ", "anne", "Bob", "Cleo", "Dan", "Eve"]
    roster = rosters.Roster()
    seasons = [Range(), Range("early", 0, 40 * 60), Range("late", 40 * 60, 10**9)]
    truth: dict[str, standings_pb2.GameOutcome] = {}
    memory = ClubMemory("c", 0, 0, [], roster)
    minute, made = 10, 0
    for step in range(160):
        roll = rng.random()
        if roll < 0.4 or not truth:
            made, minute = made + 1, minute + rng.choice((0, 1, 3))  # (equal times: by id)
            found = game_outcome(rng, f"g{made:03d}", minute, 10, names)
        elif roll < 0.55:  # an amend: the same game, a later sequence, another result
            old = truth[rng.choice(sorted(truth))]
            found = game_outcome(
                rng, old.game_id, old.ended_time.seconds // 60, old.sequence + 1, names
            )
        elif roll < 0.7:  # an undo of the last move, or an abandon: no outcome
            game_id = rng.choice(sorted(truth))
            del truth[game_id]
            assert memory.change(game_id, None)
            found = None
        elif roll < 0.85:  # an old game imported: before games already read
            made += 1
            found = game_outcome(rng, f"i{made:03d}", rng.randrange(0, minute), 10, names)
        elif roster.version < len(MERGES):  # a merge: the views are built again
            event = clubs_pb2.RosterEvent(version=roster.version + 1)
            event.players_merged.CopyFrom(rosters.merge(roster, *MERGES[roster.version]))
            roster = rosters.advance(roster, event)
            memory.set_roster(roster, roster.version)
            found = None
        else:
            found = None
        if found is not None:
            truth[found.game_id] = found
            assert memory.change(found.game_id, found)
            assert not memory.change(found.game_id, found)  # the same again: nothing changes
        game, season = rng.choice(("splendor", "medici")), rng.choice(seasons)
        view = memory.view(game, season)
        table = view.table()  # read between changes: ratings continued, not from zero
        for row in table[:3]:  # (records kept across changes: stale ones would show below)
            view.record(row.player_id, table)
        if step % 8 and step != 159:
            continue
        ordered = in_order(truth.values())
        assert memory.games() == sorted({o.game for o in ordered})
        for name in names:
            first = next((s.name for o in ordered for s in o.seats if _same(s.name, name)), None)
            assert memory.first_spelling(name) == first, (step, name)
        chosen = [o for o in ordered if o.game == game and season.holds(o)]
        assert [o.game_id for o in view.outcomes] == [o.game_id for o in chosen]
        histories = rating_histories(chosen, roster)  # (from zero, once for every record)
        from_zero = standings(chosen, roster, histories)
        assert table == from_zero, step
        assert view.stats() == game_type_stats(chosen, game), step
        for player_id in {roster.id_of(s.name) for o in chosen for s in o.seats}:
            wanted = player_record(chosen, roster, player_id, game, from_zero, histories)
            assert view.record(player_id, table) == wanted, (step, player_id)
        assert view.record("pl_nobody", table) is None


def _same(a: str, b: str) -> bool:
    return normalised_player(a) == normalised_player(b)
