"""The worked examples of seed-KO (../seeds/000_*.txt, RULES.md §A3-A5), exactly."""

from __future__ import annotations

from dataclasses import replace

from tablelog.replay.core import CHANCE, TABLE
from tablelog.replay.games.medici_card_game import GAME, rules
from tablelog.replay.games.medici_card_game.components import default_components
from tablelog.v1.medici_card_game_pb2 import MediciCardGameOptions
from tests.support.play import new_position, play, play_all

# The component files a game records at creation (setup never falls back to packaged data).
RECORDED = {c.name: c for c in GAME.default_components()}

NAMES = ["Juhee", "Minji", "Jeho"]


def _rules(players: int, options: MediciCardGameOptions | None = None) -> rules.Rules:
    names = [f"p{i + 1}" for i in range(players)]
    return rules.make_rules(
        names, options or MediciCardGameOptions(), 1, {"deck": default_components()[0]}
    )


def _ship(state: rules.State, seat: int) -> list[str]:
    kinds = state.rules.deck.kinds
    return [kinds[k].name for k in state.ships[seat]]


def test_three_player_turn_example() -> None:
    """Juhee reveals cloth 0, fur 3, green 2 and takes green 2 and fur 3; Minji reveals
    grain 5 and cloth 4 and takes the two cloths; Jeho reveals nothing and takes grain 5."""
    position = new_position("medici-card-game", NAMES)
    position = play_all(
        position,
        ["reveal cloth0", "flip", "reveal fur3", "flip", "reveal green2"],
    )
    state = position.state
    assert [state.rules.deck.kinds[k].name for k in state.market] == ["cloth0", "fur3", "green2"]
    # Three cards revealed: no fourth; the last card is taken with any of the two before it.
    assert [GAME.format(m, state) for m in GAME.legal_moves(state)] == [
        "take 1",
        "take 1 2",
        "take 1 3",
        "take 1 2 3",
    ]
    position = play(position, "take green2 fur3")
    assert position.moves()[-1].notation == "take 1 2"
    assert _ship(position.state, 0) == ["fur3", "green2"]
    assert position.state.holds[0] == 1  # the green 2 needs no hold space
    position = play_all(position, ["flip", "reveal grain5", "flip", "reveal cloth4"])
    position = play(position, "take cloth4 cloth0")
    assert position.moves()[-1].notation == "take 1 3"
    assert _ship(position.state, 1) == ["cloth0", "cloth4"]
    market = position.state.market
    assert [position.state.rules.deck.kinds[k].name for k in market] == ["grain5"]
    # Jeho may reveal nothing: the market is not empty.
    assert GAME.to_move(position.state) == 2
    position = play(position, "take 1")
    assert _ship(position.state, 2) == ["grain5"]
    assert not position.state.market
    # Juhee's next turn starts with an empty market: a reveal is mandatory.
    assert GAME.to_move(position.state) == CHANCE
    assert GAME.parse("fur2", position.state).WhichOneof("action") == "reveal"


def test_scoring_example_1_ship_values() -> None:
    """Four players, ships 20, 16, 16, 13: 30, then (20 + 10) / 2 = 15 each, then 0."""
    assert rules.score_ships(_rules(4), [20, 16, 16, 13]) == [30, 15, 15, 0]


def test_scoring_example_1_at_a_round_end() -> None:
    """Ships 20, 16, 16, 13 (the seed's numbers), scored by a real round end: the fourth
    player's final turn takes a green-flag dye (value 0), so the ships scored are exactly
    20, 16, 16, 13 and pay 30, 15, 15, 0."""
    state = GAME.setup(["Juhee", "Minji", "Jeho", "Seunghyun"], None, TABLE, RECORDED)
    by_name = state.rules.deck.by_name
    ships = [
        ["black7", "fur5", "grain5", "grain3", "grain0"],
        ["black7", "spice5", "spice4", "dye0", "cloth0"],
        ["black7", "dye5", "cloth4", "fur0", "spice0"],
        ["dye3", "cloth3", "fur3", "spice4"],
    ]
    unseen = list(state.unseen)
    for name in [n for ship in ships for n in ship] + ["dyeflag"]:
        unseen[by_name[name]] -= 1
    state = replace(
        state,
        ships=tuple(tuple(by_name[n] for n in ship) for ship in ships),
        holds=(5, 5, 5, 4),
        market=(by_name["dyeflag"],),
        deck_size=state.deck_size - 20,
        unseen=tuple(unseen),
        current=3,
        final_turn=True,
        phase=rules.PLAY,
    )
    assert [rules.ship_value(state, s) for s in range(4)] == [20, 16, 16, 13]
    flag = state.rules.deck.kinds[by_name["dyeflag"]]
    assert (flag.value, flag.takes_hold) == (0, False)
    after = GAME.apply(state, GAME.parse("take 1", state))
    assert after.round == 2
    ship_pay = [[f for r, label, f in p if label == "ship"] for p in after.payouts]
    assert ship_pay == [[30], [15], [15], [0]]
    result = GAME.result(after)
    for score in result.scores:
        assert score.total == sum(i.value for i in score.items)


def test_scoring_example_2_warehouse_majorities() -> None:
    """Three players. Dye: Juhee and Mincheol tie for first, (10 + 5) / 2 = 7.5 -> 5 each,
    Jeho third gets 0. Grain: Mincheol 10, Juhee and Jeho tie for second, (5 + 0) / 2 -> 0.
    Fur: Juhee 10. Cloth: Jeho 10."""
    # icons per seat in GOODS order (cloth, fur, grain, dye, spice)
    juhee = (0, 2, 1, 3, 0)
    mincheol = (0, 0, 3, 3, 0)
    jeho = (2, 0, 1, 1, 0)
    scored = rules.score_warehouses(_rules(3), [juhee, mincheol, jeho])
    cloth, fur, grain, dye, spice = (majority for majority, _ in scored)
    assert dye == [5, 5, 0]
    assert grain == [0, 10, 0]
    assert fur == [10, 0, 0]
    assert cloth == [0, 0, 10]
    assert spice == [0, 0, 0]
    assert all(volume == [0, 0, 0] for _, volume in scored)


def test_volume_bonus_thresholds_and_variant() -> None:
    """§A4 e: +10 at 5+ icons (7+ with 2 players); the variant pays 20 at 8+ (10+)."""
    three = _rules(3)
    scored = rules.score_warehouses(three, [(4, 0, 0, 0, 0), (5, 0, 0, 0, 0), (8, 0, 0, 0, 0)])
    assert scored[0][1] == [0, 10, 10]
    variant = _rules(3, MediciCardGameOptions(big_volume_bonus=True))
    scored = rules.score_warehouses(variant, [(4, 0, 0, 0, 0), (5, 0, 0, 0, 0), (8, 0, 0, 0, 0)])
    assert scored[0][1] == [0, 10, 20]
    two = _rules(2, MediciCardGameOptions(big_volume_bonus=True))
    scored = rules.score_warehouses(two, [(6, 0, 0, 0, 0), (10, 0, 0, 0, 0)])
    assert scored[0][1] == [0, 20]
    scored = rules.score_warehouses(_rules(2), [(6, 0, 0, 0, 0), (7, 0, 0, 0, 0)])
    assert scored[0][1] == [0, 10]


def test_zero_icons_and_two_player_options() -> None:
    """G-A4: by default a player without the good takes no place; G-A3: 10/5 with 2 players
    unless the option pays 10/0."""
    assert rules.score_warehouses(_rules(2), [(3, 0, 0, 0, 0), (0, 0, 0, 0, 0)])[0][0] == [10, 0]
    anyone = _rules(2, MediciCardGameOptions(majority_without_icons=True))
    assert rules.score_warehouses(anyone, [(3, 0, 0, 0, 0), (0, 0, 0, 0, 0)])[0][0] == [10, 5]
    assert rules.score_warehouses(_rules(2), [(3, 0, 0, 0, 0), (1, 0, 0, 0, 0)])[0][0] == [10, 5]
    nothing = _rules(2, MediciCardGameOptions(two_player_second_place_pays_nothing=True))
    assert rules.score_warehouses(nothing, [(3, 0, 0, 0, 0), (1, 0, 0, 0, 0)])[0][0] == [10, 0]


def test_ship_reward_tables_by_player_count() -> None:
    """§A4 (G-A2): the board game's tables; the option replaces them."""
    assert rules.score_ships(_rules(2), [9, 3]) == [20, 0]
    assert rules.score_ships(_rules(3), [9, 3, 1]) == [30, 15, 0]
    assert rules.score_ships(_rules(5), [5, 4, 3, 2, 1]) == [30, 20, 10, 5, 0]
    assert rules.score_ships(_rules(6), [6, 5, 4, 3, 2, 1]) == [30, 20, 15, 10, 5, 0]
    custom = _rules(3, MediciCardGameOptions(ship_rewards=[25, 10]))
    assert rules.score_ships(custom, [9, 3, 1]) == [25, 10, 0]
    # A three-way tie for first with 3 players: (30 + 15 + 0) / 3 = 15.
    assert rules.score_ships(_rules(3), [4, 4, 4]) == [15, 15, 15]
    # Two tie for first with 6 players: (30 + 20) / 2 = 25.
    assert rules.score_ships(_rules(6), [9, 9, 4, 3, 2, 1]) == [25, 25, 15, 10, 5, 0]
