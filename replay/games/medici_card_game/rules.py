"""Medici: The Card Game, the rules (see RULES.md; sections cited as §A1-A7).

The state is immutable; `apply` returns a new one. A turn is recorded as the player's
decisions (`flip`: turn over one more card; `take`) and the table's reveals (chance)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from tablelog.replay.components import quoted
from tablelog.replay.copying import replacer
from tablelog.replay.core import (
    CHANCE,
    DEALT,
    TERMINAL,
    GameOver,
    IllegalMove,
    InvalidSetup,
    counted,
    no_such_seat,
    recorded_component,
)
from tablelog.replay.games.medici_card_game.components import DECK_COMPONENT, Deck, load_deck
from tablelog.replay.games.medici_common.components import GOODS
from tablelog.replay.games.medici_common.rules import (
    SHIP_REWARDS,
    Payout,
    check_start,
    pay_period,
    ranked_shares,
    start_next_period,
    start_pending,
)
from tablelog.v1 import game_pb2
from tablelog.v1.medici_card_game_pb2 import (
    MediciCardGameFlip,
    MediciCardGameMove,
    MediciCardGameOptions,
    MediciCardGameReveal,
    MediciCardGameStartPlayer,
    MediciCardGameTake,
)

ROUNDS: Final = 3
MAX_REVEALS: Final = 3
TAKE_WINDOW: Final = 3
SOURCED_SHIP_REWARDS: Final = frozenset({4})
"""§A4 step 1, G-A2: only the 4-player ship-reward table is sourced (seed-KO example)."""
SHIP_REWARDS_NOTE: Final = (
    "The ship-reward table for {n} players is UNSOURCED (approximate, Rules G-A2): only the "
    "4-player table (30/20/10/0) is sourced; this one is the board game's ({table}). Set the "
    "`ship_rewards` option to use another."
)

# Phases: whose decision it is.
PLAY: Final = 0  # the current player: flip or take
REVEAL: Final = 1  # chance: the table records the card turned over
START: Final = 2  # chance: the start player among those tied for fewest florins
OVER: Final = 3
CHANCE_ACTIONS: Final = frozenset({"reveal", "start_player"})
"""The moves the table records (a card turned over, a start player after a tie)."""


@dataclass(frozen=True, slots=True)
class Rules:
    """What a game fixes at creation: players, deck and the options' numbers."""

    players: tuple[str, ...]
    deck: Deck
    capacity: int
    ship_rewards: tuple[int, ...]
    ship_rewards_approximate: bool
    """G-A2: the default table of a player count other than 4 (unsourced), not an option."""
    majority_rewards: tuple[int, ...]
    majority_needs_icon: bool
    volume_threshold: int
    big_threshold: int
    strict: bool
    dealt: bool


@dataclass(frozen=True, slots=True)
class State:
    rules: Rules
    round: int
    phase: int
    current: int
    start: int
    revealed: int
    final_turn: bool
    market: tuple[int, ...]
    deck_size: int
    unseen: tuple[int, ...]
    ships: tuple[tuple[int, ...], ...]
    holds: tuple[int, ...]
    warehouse: tuple[tuple[int, ...], ...]
    stored: tuple[int, ...]
    boxed: int
    florins: tuple[int, ...]
    payouts: tuple[tuple[Payout, ...], ...]
    tied: tuple[int, ...] = ()


replace: Final = replacer(State)
"""A copy of a state with some fields changed (`tablelog.replay.copying`: state copies dominate
folding)."""


def make_rules(
    players: Sequence[str],
    options: MediciCardGameOptions,
    mode: int,
    components: Mapping[str, game_pb2.ComponentFile],
) -> Rules:
    """Rules §A2, §A4, §A7: capacity, reward tables and the options."""
    n = len(players)
    if not 2 <= n <= 6:
        raise InvalidSetup("PLAYER_COUNT", f"Medici: The Card Game is for 2 to 6, not {n}.")
    if options.first_player >= n:
        raise InvalidSetup(
            "FIRST_PLAYER", no_such_seat("first_player", options.first_player, players)
        )
    deck_file = recorded_component(components, DECK_COMPONENT, "Medici: The Card Game")
    deck = load_deck(deck_file.content)
    if options.ship_rewards:
        rewards = tuple(options.ship_rewards)
        if len(rewards) > n:
            raise InvalidSetup(
                "SHIP_REWARDS", f"{len(rewards)} ship rewards given for only {n} places."
            )
    else:
        rewards = SHIP_REWARDS[n]
    approximate = not options.ship_rewards and n not in SOURCED_SHIP_REWARDS
    second = 0 if n == 2 and options.two_player_second_place_pays_nothing else 5
    big = options.big_volume_threshold or (10 if n == 2 else 8)
    return Rules(
        players=tuple(players),
        deck=deck,
        capacity=7 if n == 2 else 5,
        ship_rewards=rewards + (0,) * (n - len(rewards)),
        ship_rewards_approximate=approximate,
        majority_rewards=(10, second, *([0] * n)),
        majority_needs_icon=not options.majority_without_icons,
        volume_threshold=7 if n == 2 else 5,
        big_threshold=big if options.big_volume_bonus else 0,
        strict=deck.verified or mode == DEALT,
        dealt=mode == DEALT,
    )


def ship_rewards_note(rules: Rules) -> str:
    """G-A2: the warning shown with an unsourced default ship-reward table ("" otherwise)."""
    if not rules.ship_rewards_approximate:
        return ""
    table = "/".join(str(r) for r in rules.ship_rewards)
    return SHIP_REWARDS_NOTE.format(n=len(rules.players), table=table)


def setup(
    players: Sequence[str],
    options: MediciCardGameOptions | None,
    mode: int,
    components: Mapping[str, game_pb2.ComponentFile],
) -> State:
    """Rules §A2, §A7: the rules for these players, options and recorded deck file, and the
    state before the first move, the options' first player starting round 1."""
    chosen = options if options is not None else MediciCardGameOptions()
    return initial_state(make_rules(players, chosen, mode, components), chosen.first_player)


def initial_state(rules: Rules, first_player: int) -> State:
    """Rules §A2: the whole deck shuffled face down, an empty market, 0 florins each."""
    n = len(rules.players)
    state = State(
        rules=rules,
        round=1,
        phase=PLAY,
        current=first_player,
        start=first_player,
        revealed=0,
        final_turn=False,
        market=(),
        deck_size=rules.deck.total,
        unseen=rules.deck.counts,
        ships=((),) * n,
        holds=(0,) * n,
        warehouse=((0,) * len(GOODS),) * n,
        stored=(0,) * n,
        boxed=0,
        florins=(0,) * n,
        payouts=((),) * n,
    )
    return _begin_turn(state, first_player, False)


def is_full(state: State, seat: int) -> bool:
    """Rules §A3: a ship whose hold holds `capacity` cards without a green flag is full."""
    return state.holds[seat] >= state.rules.capacity


def ship_value(state: State, seat: int) -> int:
    """Rules §A4 step 1: the sum of the values of every card on the ship."""
    kinds = state.rules.deck.kinds
    return sum(kinds[k].value for k in state.ships[seat])


# --- turn flow -------------------------------------------------------------------------------


def _begin_turn(state: State, seat: int, final_turn: bool) -> State:
    """Rules §A3 step 1: a turn starts with a reveal, mandatory when the market is empty; with
    nothing to reveal and nothing to take the round ends (G-A6, G-A7)."""
    if not state.market:
        if state.deck_size == 0:
            return _end_round(state)
        phase = REVEAL
    else:
        phase = PLAY
    return replace(state, phase=phase, current=seat, revealed=0, final_turn=final_turn, tied=())


def _after_take(state: State) -> State:
    """Rules §A3: full ships sit out; when all but one are full, that player takes exactly
    one more turn and the round ends (G-A9)."""
    if state.final_turn:
        return _end_round(state)
    capacity = state.rules.capacity
    holds = state.holds
    n = len(holds)
    open_seats = [s for s in range(n) if holds[s] < capacity]
    if not open_seats:
        return _end_round(state)
    if len(open_seats) == 1:
        return _begin_turn(state, open_seats[0], True)
    seat = state.current
    for step in range(1, n + 1):
        candidate = (seat + step) % n
        if holds[candidate] < capacity:
            return _begin_turn(state, candidate, False)
    raise AssertionError("unreachable: an open seat exists")


def score_ships(rules: Rules, values: Sequence[int]) -> list[int]:
    """Rules §A4 step 1, §A5: ship values ranked, rewards by player count, ties pool their
    places and share in multiples of 5; the lowest ship gets nothing."""
    return ranked_shares(values, rules.ship_rewards, unit=5)


def score_warehouses(
    rules: Rules, icons: Sequence[Sequence[int]]
) -> list[tuple[list[int], list[int]]]:
    """Rules §A4 step 2c-e, §A5, G-A3, G-A4, G-A8: per good, majorities 10/5 by icons (shares
    in multiples of 5, at least one icon to place unless the option says otherwise) and the
    volume bonus: +10 at 5+ icons (7+ with 2 players), +20 at the variant's threshold.
    Returns, per good, (majority shares, volume bonuses) by seat."""
    n = len(icons)
    out: list[tuple[list[int], list[int]]] = []
    for g in range(len(GOODS)):
        counts = [icons[s][g] for s in range(n)]
        qualifies = [c > 0 for c in counts] if rules.majority_needs_icon else None
        majority = ranked_shares(counts, rules.majority_rewards, unit=5, qualifies=qualifies)
        volume = [
            20
            if rules.big_threshold and c >= rules.big_threshold
            else 10
            if c >= rules.volume_threshold
            else 0
            for c in counts
        ]
        out.append((majority, volume))
    return out


def _end_round(state: State) -> State:
    """Rules §A4 (ship value, then unload and warehouse majorities), §A6 (market back into
    the deck, next round started by the poorest player; a tie is a chance move)."""
    rules = state.rules
    kinds = rules.deck.kinds
    n = len(rules.players)
    values = [ship_value(state, s) for s in range(n)]
    warehouse = [list(w) for w in state.warehouse]
    stored = list(state.stored)
    boxed = state.boxed
    for s in range(n):
        for k in state.ships[s]:
            kind = kinds[k]
            if kind.to_warehouse and kind.good >= 0:
                warehouse[s][kind.good] += kind.icons
                stored[s] += 1
            else:
                boxed += 1
    r = state.round
    florins, payouts = pay_period(
        state,
        r,
        score_ships(rules, values),
        score_warehouses(rules, warehouse),
        ("majority", "volume"),
    )
    scored = replace(
        state,
        ships=((),) * n,
        holds=(0,) * n,
        warehouse=tuple(tuple(w) for w in warehouse),
        stored=tuple(stored),
        boxed=boxed,
        florins=florins,
        payouts=payouts,
        final_turn=False,
        revealed=0,
    )
    if r == ROUNDS:
        return replace(scored, phase=OVER)
    unseen = list(state.unseen)
    for k in state.market:
        unseen[k] += 1
    scored = replace(
        scored,
        round=r + 1,
        market=(),
        deck_size=state.deck_size + len(state.market),
        unseen=tuple(unseen),
    )
    return start_next_period(scored, START, _begin_round)


def _begin_round(state: State, seat: int) -> State:
    """Rules §A6: the next round starts with an empty market and `seat`'s turn."""
    return _begin_turn(replace(state, start=seat), seat, False)


# --- moves -----------------------------------------------------------------------------------


def check_bounds(state: State, move: MediciCardGameMove) -> None:
    """Rules §A1, §A3: the fields of `move` within what the deck and the market allow (a card
    kind of this deck, at most the 3 positions in reach), checked before the move is
    formatted or applied, so no field value makes either do unbounded work."""
    action = move.WhichOneof("action")
    if action == "reveal" and move.reveal.card not in state.rules.deck.by_name:
        raise IllegalMove(
            "UNKNOWN_CARD", f"There is no card {quoted(move.reveal.card)} in this deck."
        )
    if action == "take" and len(move.take.positions) > TAKE_WINDOW:
        raise IllegalMove(
            "TAKE_OUT_OF_REACH",
            f"Only the last {TAKE_WINDOW} cards can be taken (positions 1-3); the move names "
            f"{len(move.take.positions)} positions.",
        )


def apply(state: State, move: MediciCardGameMove) -> State:
    """Rules §A3 (flip, reveal, take) and §A5 (the start player after a tie): dispatch
    `move` to its rule after checking that the game is in the phase that move belongs to."""
    action = move.WhichOneof("action")
    phase = state.phase
    if phase == OVER:
        raise GameOver()
    if action == "take":
        _expect_player(state)
        return take(state, move.take.positions)
    if action == "reveal":
        if phase != REVEAL:
            _no_reveal(state)
        return reveal(state, move.reveal.card)
    if action == "flip":
        _expect_player(state)
        return flip(state)
    if action == "start_player":
        if phase != START:
            raise IllegalMove(
                "NO_START_PENDING", "No start player is being chosen: the round is under way."
            )
        return choose_start(state, move.start_player.seat)
    raise IllegalMove("EMPTY_MOVE", "The move names no action (flip, reveal, take or start).")


def _expect_player(state: State) -> None:
    if state.phase == REVEAL:
        raise IllegalMove(
            "REVEAL_PENDING", "The table must first record the card that was turned over."
        )
    if state.phase == START:
        raise IllegalMove(*start_pending("round"))


def _no_reveal(state: State) -> None:
    if state.phase == START:
        raise IllegalMove(*start_pending("round"))
    raise IllegalMove(
        "NO_REVEAL_PENDING",
        "No card is being turned over: the player must flip first or take from the market.",
    )


def flip(state: State) -> State:
    """Rules §A3 step 1: turn over one more card; at most 3 per turn, none from an empty deck."""
    if state.revealed >= MAX_REVEALS:
        raise IllegalMove(
            "REVEAL_LIMIT",
            f"You may reveal at most {MAX_REVEALS} cards a turn; you have revealed "
            f"{state.revealed}: take from the market now.",
        )
    if state.deck_size == 0:
        raise IllegalMove(
            "DECK_EMPTY", "The deck is empty: no more cards can be revealed; take from the market."
        )
    return replace(state, phase=REVEAL)


def reveal(state: State, name: str) -> State:
    """Rules §A3 step 1 and the engine decision on G-A1: the card must be a real kind; its
    copies are counted only when the deck is verified (or dealt from the placeholder deck)."""
    deck = state.rules.deck
    k = deck.by_name.get(name, -1)
    if k < 0:
        raise IllegalMove("UNKNOWN_CARD", f"There is no card {quoted(name)} in this deck.")
    unseen = state.unseen
    left = unseen[k]
    if left == 0:
        if state.rules.strict:
            raise IllegalMove(
                "CARD_NOT_IN_DECK",
                f"No {name} is left in the deck: all {deck.counts[k]} are already out.",
            )
    else:
        unseen = (*unseen[:k], left - 1, *unseen[k + 1 :])
    return replace(
        state,
        phase=PLAY,
        market=(*state.market, k),
        deck_size=state.deck_size - 1,
        unseen=unseen,
        revealed=state.revealed + 1,
    )


def take(state: State, positions: Sequence[int]) -> State:
    """Rules §A3 step 2, G-A5: take the last card placed (position 1) and any of the two
    before it (positions 2 and 3); optional cards must fit in the hold (green flags always
    fit); the market closes its gaps."""
    market = state.market
    size = len(market)
    if size == 0:
        raise IllegalMove("MARKET_EMPTY", "The market is empty: turn over a card first.")
    chosen = set(positions)
    if len(chosen) != len(positions):
        raise IllegalMove("TAKE_REPEATED", "Each card can be taken only once.")
    for p in chosen:
        if p > TAKE_WINDOW or p < 1:
            raise IllegalMove(
                "TAKE_OUT_OF_REACH",
                f"Only the last {TAKE_WINDOW} cards can be taken (positions 1-3), not {p}.",
            )
        if p > size:
            raise IllegalMove(
                "TAKE_NO_SUCH_CARD",
                f"The market has {counted(size, 'card')}; there is no position {p}.",
            )
    if 1 not in chosen:
        raise IllegalMove(
            "TAKE_MUST_INCLUDE_LAST", "You must take the last card placed (position 1)."
        )
    kinds = state.rules.deck.kinds
    seat = state.current
    hold = state.holds[seat]
    capacity = state.rules.capacity
    taken = [market[size - p] for p in sorted(chosen, reverse=True)]
    new_hold = hold + sum(1 for k in taken if kinds[k].takes_hold)
    if new_hold > capacity:
        raise IllegalMove(
            "HOLD_FULL",
            f"Your ship holds {capacity} cards without a green flag; you have {hold} and "
            f"those cards would make {new_hold}.",
        )
    rest = tuple(k for i, k in enumerate(market) if size - i not in chosen)
    ships = state.ships
    holds = state.holds
    after = replace(
        state,
        market=rest,
        ships=(*ships[:seat], (*ships[seat], *taken), *ships[seat + 1 :]),
        holds=(*holds[:seat], new_hold, *holds[seat + 1 :]),
    )
    return _after_take(after)


def choose_start(state: State, seat: int) -> State:
    """Rules §A5: the poorest player starts rounds 2 and 3; a tie is broken at random."""
    check_start(seat, state.tied, state.rules.players, "round")
    return _begin_round(state, seat)


# --- move builders ----------------------------------------------------------------------------


def flip_move() -> MediciCardGameMove:
    return MediciCardGameMove(flip=MediciCardGameFlip())


def reveal_move(card: str) -> MediciCardGameMove:
    return MediciCardGameMove(reveal=MediciCardGameReveal(card=card))


def take_move(positions: tuple[int, ...]) -> MediciCardGameMove:
    return MediciCardGameMove(take=MediciCardGameTake(positions=positions))


def start_move(seat: int) -> MediciCardGameMove:
    return MediciCardGameMove(start_player=MediciCardGameStartPlayer(seat=seat))


# --- enumerations -----------------------------------------------------------------------------


def to_move(state: State) -> int:
    """Rules §A3, §A5: the current player while playing; the table (CHANCE) while a card
    is turned over or a tied start player is picked."""
    phase = state.phase
    if phase == PLAY:
        return state.current
    if phase == OVER:
        return TERMINAL
    return CHANCE


def legal_moves(state: State) -> list[MediciCardGameMove]:
    """Rules §A3: `flip` while allowed and every `take` of the current player; in a chance
    phase, every outcome (every kind when a lenient table recording names the card)."""
    phase = state.phase
    if phase == PLAY:
        moves = [take_move(p) for p in take_options(state)]
        if can_flip(state):
            moves.insert(0, flip_move())
        return moves
    if phase == REVEAL:
        kinds = state.rules.deck.kinds
        if state.rules.strict:
            return [reveal_move(kinds[k].name) for k, _ in reveal_weights(state)]
        return [reveal_move(k.name) for k in kinds]
    if phase == START:
        return [start_move(s) for s in state.tied]
    return []


def chance_outcomes(state: State) -> list[tuple[MediciCardGameMove, int]]:
    """Rules §A3 step 1, §A5: each card kind turned over, weighted by its unseen copies;
    each seat tied for fewest florins as the round's start player, weighted 1."""
    if state.phase == REVEAL:
        kinds = state.rules.deck.kinds
        return [(reveal_move(kinds[k].name), w) for k, w in reveal_weights(state)]
    if state.phase == START:
        return [(start_move(s), 1) for s in state.tied]
    return []


def take_options(state: State) -> list[tuple[int, ...]]:
    """Rules §A3 step 2, G-A5: every legal `take` (ascending positions) of the current
    player: position 1 plus any of positions 2 and 3 the market has, as long as the cards
    that use hold space fit the free hold."""
    size = len(state.market)
    if state.phase != PLAY or size == 0:
        return []
    kinds = state.rules.deck.kinds
    free = state.rules.capacity - state.holds[state.current]
    market = state.market
    out: list[tuple[int, ...]] = []
    for extra in ((), (2,), (3,), (2, 3)):
        if extra and extra[-1] > size:
            continue
        positions = (1, *extra)
        need = sum(1 for p in positions if kinds[market[size - p]].takes_hold)
        if need <= free:
            out.append(positions)
    return out


def can_flip(state: State) -> bool:
    """Rules §A3 step 1: the current player may turn over one more card while fewer than 3
    were revealed this turn and the deck is not empty."""
    return state.phase == PLAY and state.revealed < MAX_REVEALS and state.deck_size > 0


def reveal_weights(state: State) -> list[tuple[int, int]]:
    """Rules §A3 step 1, G-A1: (kind, unseen copies) for the next card turned over, each
    card of the deck equally likely; every kind once when a lenient table recording (the
    unverified deck) has run past the placeholder counts."""
    weights = [(k, c) for k, c in enumerate(state.unseen) if c > 0]
    if not weights:
        weights = [(k, 1) for k in range(len(state.unseen))]
    return weights


def visible_to(move: MediciCardGameMove, state: State, viewer: int | None) -> bool:
    """Rules §A3 step 1 and §A5: every card is turned over face up into the market, and the
    start player after a tie is announced, so no move carries hidden information (only the
    order of the face-down deck is secret, and no move records it): visible to every viewer."""
    return True
