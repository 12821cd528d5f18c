"""Splendor's rules: the state, `apply`, the legal moves, chance and the result.

Every rule function cites its section of `RULES.md` (a copy of the rules reference).

A turn is an action (§4), then the end-of-turn steps (§3): the market refill (a chance
move: the table reveals the new card), the return of tokens above 10, the noble visit and
the end-game check. The return and the noble choice are decisions of the player: they ride
on the action as tails (`returned`, `noble`) or, when the action leaves them open, are the
player's next move (`discard`, `choose_noble`). Nothing is chosen for the player, except
the one noble that qualifies when only one does (§7: the visit cannot be refused).

The state is a frozen value built from tuples and small ints; `apply` never computes the
legal moves (it checks the move it is given), so folding stays fast.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Final, cast

from tablelog.replay.copying import maker, replacer
from tablelog.replay.core import (
    CHANCE,
    DEALT,
    TABLE,
    TERMINAL,
    GameOver,
    IllegalMove,
    InvalidSetup,
    clip,
    no_such_seat,
)
from tablelog.replay.games.splendor import components
from tablelog.replay.games.splendor.components import GEMS, GOLD, Card, Components
from tablelog.v1 import game_pb2
from tablelog.v1.splendor_pb2 import (
    SplendorBuy,
    SplendorDiscard,
    SplendorGem,
    SplendorMove,
    SplendorNobleChoice,
    SplendorOptions,
    SplendorReserve,
    SplendorRevealCard,
    SplendorRevealNoble,
    SplendorTakeDifferent,
    SplendorTakeSame,
    SplendorTokens,
)

COLOURS: Final = (*GEMS, "gold")
TOKEN_LIMIT: Final = 10
RESERVE_LIMIT: Final = 3
WINNING_POINTS: Final = 15
SLOTS: Final = 4
GEMS_PER_COLOUR: Final = {2: 4, 3: 5, 4: 7}
"""RULES.md §2: tokens per gem colour by player count; gold is always 5."""
GOLD_TOKENS: Final = 5

# What the seat to move must decide (RULES.md §3).
ACTION: Final = 0
DISCARD: Final = 1
NOBLE: Final = 2
PHASE_NAMES: Final = ("action", "discard", "noble")
CHANCE_ACTIONS: Final = frozenset({"reveal_card", "reveal_noble"})
"""The moves the table records: a card or a noble revealed (§2, §4)."""

ONGOING: Final = 0
COMPLETED: Final = game_pb2.TERMINATION_COMPLETED
DEADLOCK: Final = game_pb2.TERMINATION_DEADLOCK

Reserved = tuple[int, int, bool]
"""A reserved card: (card id, or 0 while nobody has named it; level; taken blind from the deck)."""


@dataclass(frozen=True, slots=True)
class Rules:
    """What a game's creation fixes: components, players, mode and options."""

    components: Components
    players: int
    mode: int
    first_player: int
    take_fewer_anytime: bool
    gems_per_colour: int
    names: tuple[str, ...]

    @property
    def last_seat(self) -> int:
        """RULES.md §8: the round ends with the seat before the first player."""
        return (self.first_player - 1) % self.players

    @property
    def nobles_shown(self) -> int:
        """RULES.md §2: players + 1 nobles are revealed."""
        return min(self.players + 1, len(self.components.nobles))


@dataclass(frozen=True, slots=True)
class Player:
    tokens: tuple[int, ...]
    """Six counts: white, blue, green, red, black, gold."""
    bonuses: tuple[int, ...]
    """Five counts: the purchased cards per bonus colour (RULES.md §6)."""
    purchased: tuple[int, ...]
    reserved: tuple[Reserved, ...]
    nobles: tuple[int, ...]
    card_points: int
    noble_points: int

    @property
    def prestige(self) -> int:
        """RULES.md §5: card points plus the nobles' points."""
        return self.card_points + self.noble_points


@dataclass(frozen=True, slots=True)
class State:
    rules: Rules
    bank: tuple[int, ...]
    market: tuple[tuple[int, ...], ...]
    """Three rows (levels 1-3) of four slots; 0 is an empty slot."""
    decks: tuple[int, ...]
    """Face-down cards left per level."""
    unseen: int
    """Bit mask of the card ids nobody has seen yet (the deck, and unnamed blind reserves)."""
    nobles: tuple[int, ...]
    """The nobles on the table, in the order they were revealed."""
    nobles_due: int
    """Nobles still to be revealed at setup."""
    players: tuple[Player, ...]
    current: int
    phase: int
    refill: tuple[int, int]
    """(level, slot) the table must refill now, or (0, 0)."""
    deal: int
    """Dealt mode: seat + 1 whose blind reserve the table must deal now, or 0."""
    triggered: bool
    """Someone has reached 15: the round is being played out (RULES.md §8)."""
    passes: int
    over: int
    passing: bool
    """The action of the turn still being completed (a discard or noble choice) was a pass."""
    who: int


replace: Final = replacer(State)
"""A copy of a state with some fields changed (`tablelog.replay.copying`: state copies dominate
folding)."""
new_state: Final = maker(State)
"""`State(*fields)` stored slot by slot (`tablelog.replay.copying`): every move builds a state, and
the frozen `__init__` was a fifth of `apply`."""
new_player: Final = maker(Player)
"""`Player(*fields)` stored slot by slot: most moves change the player who moves."""


# ----------------------------------------------------------------------------------------
# Setup


def setup(
    players: Sequence[str],
    options: SplendorOptions | None,
    mode: int,
    components_files: Mapping[str, game_pb2.ComponentFile],
) -> State:
    """RULES.md §2: the bank for the player count; the layout arrives as reveals."""
    count = len(players)
    if count not in GEMS_PER_COLOUR:
        raise InvalidSetup("PLAYER_COUNT", f"Splendor is for 2 to 4 players, not {count}.")
    if mode not in (TABLE, DEALT):
        raise InvalidSetup("MODE", "Splendor is recorded in table or dealt mode.")
    opts = options if isinstance(options, SplendorOptions) else SplendorOptions()
    if opts.first_player >= count:
        raise InvalidSetup(
            "OPTIONS",
            no_such_seat("first_player", opts.first_player, players),
        )
    comps = components.load(components_files)
    if len(comps.nobles) < count + 1:
        raise InvalidSetup(
            "COMPONENTS",
            f"{count} players need {count + 1} nobles; the file has {len(comps.nobles)}.",
        )
    return initial_state(
        Rules(
            components=comps,
            players=count,
            mode=mode,
            first_player=opts.first_player,
            take_fewer_anytime=opts.allow_take_fewer_anytime,
            gems_per_colour=GEMS_PER_COLOUR[count],
            names=tuple(players),
        )
    )


def initial_state(rules: Rules) -> State:
    """RULES.md §2: the bank by player count; the market and nobles come as reveals."""
    comps = rules.components
    empty = Player((0,) * 6, (0,) * 5, (), (), (), 0, 0)
    bank = (rules.gems_per_colour,) * 5 + (GOLD_TOKENS,)
    decks = tuple(len(ids) for ids in comps.levels)
    unseen = comps.level_masks[0] | comps.level_masks[1] | comps.level_masks[2]
    state = State(
        rules=rules,
        bank=bank,
        market=((0,) * SLOTS,) * 3,
        decks=decks,
        unseen=unseen,
        nobles=(),
        nobles_due=rules.nobles_shown,
        players=(empty,) * rules.players,
        current=rules.first_player,
        phase=ACTION,
        refill=(0, 0),
        deal=0,
        triggered=False,
        passes=0,
        over=ONGOING,
        passing=False,
        who=CHANCE,
    )
    who = _who(ONGOING, (0, 0), 0, state.nobles_due, state.market, decks, state.current, True)
    return state if who == CHANCE else replace(state, who=who)
    return state


def _who(
    over: int,
    refill: tuple[int, int],
    deal: int,
    nobles_due: int,
    market: tuple[tuple[int, ...], ...],
    decks: tuple[int, ...],
    current: int,
    setup: bool,
) -> int:
    if over:
        return TERMINAL
    if refill[0] or deal or nobles_due:
        return CHANCE
    if setup:  # RULES.md §2.1: the layout is complete when no row with a deck has a gap
        for level in range(3):
            if decks[level] and not all(market[level]):
                return CHANCE
    return current


# ----------------------------------------------------------------------------------------
# Small helpers


def gem_value(index: int) -> SplendorGem.ValueType:
    """The SplendorGem enum value of a 1-based gem number (1 white ... 6 gold)."""
    return cast("SplendorGem.ValueType", index)


def gem_values(numbers: Iterable[int]) -> list[SplendorGem.ValueType]:
    """The SplendorGem enum values of 1-based gem numbers (`gem_value` of each)."""
    return cast("list[SplendorGem.ValueType]", list(numbers))


def pass_move() -> SplendorMove:
    move = SplendorMove()
    getattr(move, "pass").SetInParent()
    return move


def tokens_tuple(tokens: SplendorTokens) -> tuple[int, int, int, int, int, int]:
    return (tokens.white, tokens.blue, tokens.green, tokens.red, tokens.black, tokens.gold)


def tokens_message(counts: tuple[int, ...] | list[int]) -> SplendorTokens:
    message = SplendorTokens()
    for name, count in zip(COLOURS, counts, strict=False):
        if count:
            setattr(message, name, count)
    return message


def set_tokens(message: SplendorTokens, counts: Sequence[int]) -> None:
    """Store `counts` (white ... gold) in `message`, a token field of a move: the field is
    set even when every count is zero (as `CopyFrom(tokens_message(counts))` sets it)."""
    message.SetInParent()
    white, blue, green, red, black, gold = counts
    # Only the non-zero counts, as `tokens_message` stores them.
    if white:
        message.white = white
    if blue:
        message.blue = blue
    if green:
        message.green = green
    if red:
        message.red = red
    if black:
        message.black = black
    if gold:
        message.gold = gold


def reveal_card_move(level: int, slot: int, card_id: int) -> SplendorMove:
    """The table turns up `card_id` into (level, slot); slot 0 deals a blind reserve."""
    # Fields set in place: building the nested messages by keyword costs twice as much.
    move = SplendorMove()
    reveal = move.reveal_card
    reveal.level = level
    reveal.slot = slot
    reveal.card = card_id
    return move


def counts_text(counts: tuple[int, ...] | list[int]) -> str:
    """`2 red and 1 gold`."""
    parts = [f"{n} {COLOURS[c]}" for c, n in enumerate(counts) if n]
    if not parts:
        return "nothing"
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


def whereabouts(state: State, card_id: int) -> str:
    """Where a card that is not unseen is, in words (for refusals)."""
    for lv, row in enumerate(state.market):
        if card_id in row:
            return f"it is in the market (level {lv + 1}, slot {row.index(card_id) + 1})"
    for seat, player in enumerate(state.players):
        if card_id in player.purchased:
            return f"{state.rules.names[seat]} bought it"
        if any(entry[0] == card_id for entry in player.reserved):
            return f"{state.rules.names[seat]} has it reserved"
    return "it has already been seen"


def need_of(card: Card, bonuses: tuple[int, ...]) -> list[int]:
    """RULES.md §4D: need[c] = max(0, cost[c] - bonus[c])."""
    cost = card.cost
    return [
        cost[0] - bonuses[0] if cost[0] > bonuses[0] else 0,
        cost[1] - bonuses[1] if cost[1] > bonuses[1] else 0,
        cost[2] - bonuses[2] if cost[2] > bonuses[2] else 0,
        cost[3] - bonuses[3] if cost[3] > bonuses[3] else 0,
        cost[4] - bonuses[4] if cost[4] > bonuses[4] else 0,
    ]


def canonical_payment(need: list[int], tokens: tuple[int, ...]) -> list[int] | None:
    """RULES.md §4D, E8: coloured tokens first, gold for the shortfall; None if unaffordable."""
    pay = [0] * 6
    short = 0
    for c in range(5):
        n = need[c]
        if n:
            have = tokens[c]
            if have >= n:
                pay[c] = n
            else:
                pay[c] = have
                short += n - have
    if short > tokens[GOLD]:
        return None
    pay[GOLD] = short
    return pay


def qualifying_nobles(state: State, bonuses: tuple[int, ...]) -> list[int]:
    """RULES.md §7, E9: nobles whose requirement the bonuses meet (tokens never count)."""
    nobles = state.rules.components.nobles
    found = []
    for noble_id in state.nobles:
        req = nobles[noble_id].requires
        if (
            bonuses[0] >= req[0]
            and bonuses[1] >= req[1]
            and bonuses[2] >= req[2]
            and bonuses[3] >= req[3]
            and bonuses[4] >= req[4]
        ):
            found.append(noble_id)
    return found


# ----------------------------------------------------------------------------------------
# apply


def check_bounds(state: State, move: SplendorMove) -> None:
    """RULES.md §1, §3-§4: every count and index of `move` within what the game's components
    allow (no more tokens of a colour than the game has, at most the five gem colours, a
    level 0-3, a slot 0-4, a reserved position 0-3), checked before the move is formatted,
    so no field value makes that unbounded work (one letter is written per token)."""
    # Only the parts the move sets are looked at, each read once: a part it does not set
    # reads as zeros, within every bound (this runs twice per move read, in parse and in
    # format). The checks run in a fixed order: the `returned` tail, the action's tokens,
    # its colours, its places.
    kind = move.WhichOneof("action")
    if move.HasField("returned"):
        _check_token_counts(state, move.returned)
    if kind == "take_different":
        if len(move.take_different.gems) > len(GEMS):
            raise IllegalMove(
                "TAKE_DIFFERENT_COUNT",
                f"Take 1 to 3 different colours, not {len(move.take_different.gems)}.",
            )
    elif kind == "reveal_card":
        reveal = move.reveal_card
        level, slot = reveal.level, reveal.slot
        if level > 3 or slot > SLOTS:  # the game's three levels (`_check_place` says which)
            _check_place(state, level, slot, 0)
    elif kind == "buy":
        buy = move.buy
        if buy.HasField("payment"):
            _check_token_counts(state, buy.payment)
        level, slot, reserved = buy.level, buy.slot, buy.reserved
        if level > 3 or slot > SLOTS or reserved > RESERVE_LIMIT:
            _check_place(state, level, slot, reserved)
    elif kind == "reserve":
        reserve = move.reserve
        level, slot = reserve.level, reserve.slot
        if level > 3 or slot > SLOTS:
            _check_place(state, level, slot, 0)
    elif kind == "discard":
        _check_token_counts(state, move.discard.tokens)


def _check_token_counts(state: State, tokens: SplendorTokens) -> None:
    """RULES.md §1-§2: no more tokens of a colour than the game has."""
    counts = tokens_tuple(tokens)
    per_gem = state.rules.gems_per_colour
    if max(counts[:GOLD]) <= per_gem and counts[GOLD] <= GOLD_TOKENS:
        return
    for colour, count in enumerate(counts):
        limit = GOLD_TOKENS if colour == GOLD else per_gem
        if count > limit:
            raise IllegalMove(
                "TOO_MANY_TOKENS",
                f"This game has {limit} {COLOURS[colour]} tokens; a move cannot name "
                f"{clip(str(count), 12)}.",
            )


def _check_place(state: State, level: int, slot: int, reserved: int) -> None:
    """RULES.md §1, §3.1, §4C: a level among the game's decks, a market slot, a reserved
    position within the reserve limit (0 for a part the move does not name)."""
    levels = len(state.rules.components.levels)
    if level > levels:
        raise IllegalMove("NO_SUCH_PLACE", f"There is no level {level}: the highest is {levels}.")
    if slot > SLOTS:
        raise IllegalMove("NO_SUCH_PLACE", f"There is no slot {slot}: the highest is {SLOTS}.")
    if reserved > RESERVE_LIMIT:
        raise IllegalMove(
            "NO_SUCH_PLACE",
            f"There is no reserved card {reserved}: the highest is {RESERVE_LIMIT}.",
        )


def apply(state: State, move: SplendorMove) -> State:
    """The state after `move`; raises IllegalMove naming the rule broken."""
    if state.over:
        raise GameOver()
    kind = move.WhichOneof("action")
    if kind is None:
        raise IllegalMove("NO_ACTION", "A Splendor move must say what is done.")
    if state.who == CHANCE:
        if move.HasField("returned") or move.noble:
            # RULES.md §3.2, §7: returns and noble visits end a player's turn, not a reveal.
            raise IllegalMove(
                "REVEAL_WITH_TAIL",
                "A reveal records only what the table turned up: tokens are returned and "
                "nobles chosen on a player's turn.",
            )
        if kind == "reveal_card":
            return _reveal_card(state, move.reveal_card)
        if kind == "reveal_noble":
            return _reveal_noble(state, move.reveal_noble)
        raise IllegalMove(
            "REVEAL_PENDING", "The table must first record what was revealed before anyone plays."
        )
    if kind in ("reveal_card", "reveal_noble"):
        raise IllegalMove(
            "NO_REVEAL_PENDING",
            f"Nothing is waiting to be revealed: it is {state.rules.names[state.current]}'s turn.",
        )
    phase = state.phase
    if phase == DISCARD:
        if kind != "discard":
            total = sum(state.players[state.current].tokens)
            raise IllegalMove(
                "DISCARD_PENDING",
                f"You hold {total} tokens: return {total - TOKEN_LIMIT} before anything else.",
            )
        if move.HasField("returned"):
            raise IllegalMove("DISCARD_TWICE", "A discard has no `return` tail of its own.")
        return _discard_step(state, move)
    if phase == NOBLE:
        if kind != "choose_noble":
            raise IllegalMove(
                "NOBLE_CHOICE_PENDING",
                "Several nobles visit you: choose which one before anything else.",
            )
        if move.HasField("returned") or move.noble:
            raise IllegalMove("NOBLE_TWICE", "A noble choice has no tails of its own.")
        return _noble_step(state, move.choose_noble.noble)
    if kind == "discard":
        total = sum(state.players[state.current].tokens)
        raise IllegalMove(
            "DISCARD_NOT_NEEDED",
            f"Tokens are returned only to get down to 10 at the end of a turn; you hold {total}.",
        )
    if kind == "choose_noble":
        raise IllegalMove("NO_NOBLE_CHOICE", "No noble choice is pending.")
    return _action(state, move, kind)


def _action(state: State, move: SplendorMove, kind: str) -> State:
    """RULES.md §3, §4: one action, then the end-of-turn steps (§3.2-§3.4: return tokens
    above 10, noble visit, end-game check)."""
    seat = state.current
    me = state.players[seat]
    bank = list(state.bank)
    tokens = list(me.tokens)
    market = state.market
    decks = state.decks
    unseen = state.unseen
    reserved = me.reserved
    purchased = me.purchased
    bonuses = me.bonuses
    card_points = me.card_points
    refill = (0, 0)
    deal = 0
    passed = False
    if kind == "take_different":
        _take_different(state, move.take_different.gems[:], bank, tokens)
    elif kind == "take_same":
        _take_same(move.take_same.gem, bank, tokens)
    elif kind == "reserve":
        market, decks, reserved, refill, deal = _reserve(state, move.reserve, bank, tokens)
    elif kind == "buy":
        market, unseen, reserved, refill, card = _buy(state, move.buy, bank, tokens)
        purchased = (*purchased, card.id)
        b = list(bonuses)
        b[card.bonus] += 1
        bonuses = tuple(b)
        card_points += card.points
    elif kind == "pass":
        _check_pass(state)
        passed = True
    else:  # pragma: no cover - every oneof member is handled above
        raise IllegalMove("NO_ACTION", f"Unknown action {kind}.")
    player = new_player(
        tuple(tokens), bonuses, purchased, reserved, me.nobles, card_points, me.noble_points
    )
    # The end-of-turn steps follow every action, so they run here, not in a call of their own
    # passing the whole new state (a tenth of `apply`).
    total = sum(tokens)
    returned = tokens_tuple(move.returned) if move.HasField("returned") else None
    if returned is not None and not any(returned):
        returned = None
    if total > TOKEN_LIMIT:
        if returned is None:
            if move.noble:
                raise IllegalMove(
                    "NOBLE_BEFORE_DISCARD",
                    f"You hold {total} tokens: return {total - TOKEN_LIMIT} before the noble "
                    "visit.",
                )
            return _build(
                state,
                player,
                tuple(bank),
                market,
                decks,
                unseen,
                refill,
                deal,
                DISCARD,
                state.passes,
                state.nobles,
                passed,
            )
        player, new_bank = _return_tokens(player, tuple(bank), returned, total)
    elif returned is not None:
        raise IllegalMove(
            "DISCARD_NOT_NEEDED",
            f"Tokens are returned only to get down to 10 at the end of a turn; you hold {total}.",
        )
    else:
        new_bank = tuple(bank)
    return _nobles_and_end(
        state, move.noble, player, new_bank, market, decks, unseen, refill, deal, passed
    )


def _take_different(state: State, gems: Sequence[int], bank: list[int], tokens: list[int]) -> None:
    """RULES.md §4A, E1: one token each of 3 different gem colours (fewer only when fewer
    colours are in the bank, unless `allow_take_fewer_anytime`)."""
    for gem in gems:
        if not 1 <= gem <= 5:
            _check_gem(gem)  # says which rule the gem breaks
    if len(set(gems)) != len(gems):
        raise IllegalMove(
            "TAKE_DIFFERENT_REPEATS",
            "Taking different colours means one token of each; take 2 of one colour is "
            "a separate action.",
        )
    if not 1 <= len(gems) <= 3:
        raise IllegalMove(
            "TAKE_DIFFERENT_COUNT", f"Take 1 to 3 different colours, not {len(gems)}."
        )
    for gem in gems:
        if not bank[gem - 1]:
            raise IllegalMove(
                "TAKE_EMPTY_PILE", f"There are no {GEMS[gem - 1]} tokens left in the bank."
            )
    if len(gems) < 3 and not state.rules.take_fewer_anytime:
        available = sum(1 for c in range(5) if bank[c])
        if len(gems) < min(3, available):
            raise IllegalMove(
                "TAKE_FEWER_THAN_AVAILABLE",
                f"Take {min(3, available)} different colours: {available} colours are in the "
                f"bank, and fewer may be taken only when fewer are available.",
            )
    for gem in gems:
        bank[gem - 1] -= 1
        tokens[gem - 1] += 1


def _check_gem(gem: int) -> None:
    """RULES.md §4A/B: only the five gem colours can be taken; gold only by reserving."""
    if gem == 6:
        raise IllegalMove(
            "TAKE_GOLD", "Gold cannot be taken: you get gold only by reserving a card."
        )
    if not 1 <= gem <= 5:
        raise IllegalMove("UNKNOWN_GEM", "Name a gem colour: white, blue, green, red or black.")


def _take_same(gem: int, bank: list[int], tokens: list[int]) -> None:
    """RULES.md §4B, E2: two tokens of one colour whose pile holds at least 4 before."""
    _check_gem(gem)
    have = bank[gem - 1]
    if have < 4:
        raise IllegalMove(
            "TAKE_TWO_NEEDS_FOUR",
            f"Take 2 needs at least 4 {GEMS[gem - 1]} tokens in the bank; there are {have}.",
        )
    bank[gem - 1] -= 2
    tokens[gem - 1] += 2


def _reserve(
    state: State, reserve: SplendorReserve, bank: list[int], tokens: list[int]
) -> tuple[
    tuple[tuple[int, ...], ...], tuple[int, ...], tuple[Reserved, ...], tuple[int, int], int
]:
    """RULES.md §4C, E3, E4: reserve a face-up card or the top of a deck, and take a gold
    if the bank has one."""
    me = state.players[state.current]
    if len(me.reserved) >= RESERVE_LIMIT:
        raise IllegalMove("RESERVE_LIMIT", "You can hold at most 3 reserved cards.")
    level, slot = reserve.level, reserve.slot
    if not 1 <= level <= 3:
        raise IllegalMove("NO_SUCH_LEVEL", f"Levels are 1, 2 and 3, not {level}.")
    market = state.market
    decks = state.decks
    refill = (0, 0)
    deal = 0
    if slot == 0:
        if not decks[level - 1]:
            raise IllegalMove(
                "RESERVE_EMPTY_DECK", f"The level-{level} deck is empty: there is nothing to draw."
            )
        d = list(decks)
        d[level - 1] -= 1
        decks = tuple(d)
        entry: Reserved = (0, level, True)
        if state.rules.mode == DEALT:
            deal = state.current + 1
    else:
        card_id = _market_card(state, level, slot)
        row = list(market[level - 1])
        row[slot - 1] = 0
        market = _set_row(market, level, tuple(row))
        entry = (card_id, level, False)
        if decks[level - 1]:
            refill = (level, slot)
    if bank[GOLD]:
        bank[GOLD] -= 1
        tokens[GOLD] += 1
    return market, decks, (*me.reserved, entry), refill, deal


def _set_row(
    market: tuple[tuple[int, ...], ...], level: int, row: tuple[int, ...]
) -> tuple[tuple[int, ...], ...]:
    if level == 1:
        return (row, market[1], market[2])
    if level == 2:
        return (market[0], row, market[2])
    return (market[0], market[1], row)


def _market_card(state: State, level: int, slot: int) -> int:
    """RULES.md §3.1, E12: a market slot 1-4 of level 1-3 that holds a card."""
    if not 1 <= level <= 3:
        raise IllegalMove("NO_SUCH_LEVEL", f"Levels are 1, 2 and 3, not {level}.")
    if not 1 <= slot <= SLOTS:
        raise IllegalMove("NO_SUCH_SLOT", f"Market slots are 1 to 4 from the left, not {slot}.")
    card_id = state.market[level - 1][slot - 1]
    if not card_id:
        raise IllegalMove("EMPTY_SLOT", f"Level {level}, slot {slot} is empty.")
    return card_id


def _buy(
    state: State, buy: SplendorBuy, bank: list[int], tokens: list[int]
) -> tuple[tuple[tuple[int, ...], ...], int, tuple[Reserved, ...], tuple[int, int], Card]:
    """RULES.md §4D, E5, E8: buy a market card or one of your own reserved cards, paying
    the cost less your bonuses (canonically, or with an explicit validated payment)."""
    me = state.players[state.current]
    market = state.market
    unseen = state.unseen
    reserved = me.reserved
    refill = (0, 0)
    comps = state.rules.components
    # Each field read once (a message field costs a lookup per read).
    at_level, at_slot, from_reserve, named = buy.level, buy.slot, buy.reserved, buy.card
    if from_reserve and (at_level or at_slot):
        raise IllegalMove(
            "BUY_TWO_PLACES",
            "Name one place for the card you buy: a market slot (like 1.2) or one of your "
            f"reserved cards (like h{from_reserve}), not both.",
        )
    if at_level:
        card_id = _market_card(state, at_level, at_slot)
        if named and named != card_id:
            raise IllegalMove(
                "BUY_CARD_MISMATCH",
                f"Level {at_level}, slot {at_slot} holds {comps.card(card_id).text}, "
                f"not {_card_text(state, named)}.",
            )
        row = list(market[at_level - 1])
        row[at_slot - 1] = 0
        market = _set_row(market, at_level, tuple(row))
        if state.decks[at_level - 1]:
            refill = (at_level, at_slot)
    elif from_reserve:
        index = from_reserve
        if not 1 <= index <= len(reserved):
            raise IllegalMove(
                "NO_SUCH_RESERVE",
                f"You have {len(reserved)} reserved card{'' if len(reserved) == 1 else 's'}; "
                f"there is no reserved card {index}.",
            )
        card_id, level, _blind = reserved[index - 1]
        if card_id:
            if named and named != card_id:
                raise IllegalMove(
                    "BUY_CARD_MISMATCH",
                    f"Your reserved card {index} is {comps.card(card_id).text}, "
                    f"not {_card_text(state, named)}.",
                )
        else:
            card_id = named
            if not card_id:
                raise IllegalMove(
                    "BUY_UNNAMED_CARD",
                    f"Your reserved card {index} was drawn blind from the level-{level} deck: "
                    "name the card you buy.",
                )
            if not comps.has_card(card_id):
                raise IllegalMove("NO_SUCH_CARD", f"There is no card with id {card_id}.")
            if comps.card(card_id).level != level:
                raise IllegalMove(
                    "BUY_WRONG_LEVEL",
                    f"Your reserved card {index} came from the level-{level} deck; "
                    f"{comps.card(card_id).text} is a level-{comps.card(card_id).level} card.",
                )
            if not unseen >> card_id & 1:
                raise IllegalMove(
                    "CARD_ALREADY_SEEN",
                    f"{comps.card(card_id).text} cannot be your blind reserve: "
                    f"{whereabouts(state, card_id)}.",
                )
            unseen &= ~(1 << card_id)
        reserved = reserved[: index - 1] + reserved[index:]
    elif named:
        card_id = named
        if not comps.has_card(card_id):
            raise IllegalMove("NO_SUCH_CARD", f"There is no card with id {card_id}.")
        for seat, other in enumerate(state.players):
            if seat != state.current and any(e[0] == card_id for e in other.reserved):
                raise IllegalMove(
                    "BUY_OTHERS_RESERVE",
                    f"{comps.card(card_id).text} is reserved by {state.rules.names[seat]}; "
                    "only the player who reserved a card can buy it.",
                )
        raise IllegalMove(
            "BUY_CARD_NOT_AVAILABLE",
            f"{comps.card(card_id).text} is neither in the market nor among your reserved cards.",
        )
    else:
        raise IllegalMove(
            "BUY_NO_CARD", "Say which card you buy: a market slot or one of your reserved cards."
        )
    card = comps.card(card_id)
    need = need_of(card, me.bonuses)
    if buy.HasField("payment"):
        pay = _check_payment(card, need, tokens_tuple(buy.payment), me.tokens)
    else:
        canonical = canonical_payment(need, me.tokens)
        if canonical is None:
            short = sum(max(0, need[c] - me.tokens[c]) for c in range(5))
            raise IllegalMove(
                "BUY_UNAFFORDABLE",
                f"{card.text} needs {counts_text(need)} after your bonuses; you are "
                f"{short} short and hold {me.tokens[GOLD]} gold.",
            )
        pay = canonical
    for c in range(6):
        if pay[c]:
            tokens[c] -= pay[c]
            bank[c] += pay[c]
    return market, unseen, reserved, refill, card


def _card_text(state: State, card_id: int) -> str:
    comps = state.rules.components
    return comps.card(card_id).text if comps.has_card(card_id) else f"card {card_id}"


def _check_payment(
    card: Card, need: list[int], pay: tuple[int, ...], tokens: tuple[int, ...]
) -> list[int]:
    """RULES.md §4D: pay[c] + gold[c] = need[c], pay[c] <= tokens[c], total gold <= held."""
    for c in range(6):
        if pay[c] > tokens[c]:
            raise IllegalMove(
                "PAY_NOT_HELD",
                f"You pay {pay[c]} {COLOURS[c]} but hold only {tokens[c]}.",
            )
    for c in range(5):
        if pay[c] > need[c]:
            raise IllegalMove(
                "PAY_TOO_MUCH",
                f"{card.text} needs only {need[c]} {GEMS[c]} after your bonuses; you pay {pay[c]}.",
            )
    short = sum(need[c] - pay[c] for c in range(5))
    if pay[GOLD] != short:
        raise IllegalMove(
            "PAY_WRONG_GOLD",
            f"{card.text} needs {counts_text(need)} after your bonuses: with "
            f"{counts_text(pay[:5])} the gold must cover {short}, not {pay[GOLD]}.",
        )
    return list(pay)


def _check_pass(state: State) -> None:
    """RULES.md E7: a pass only when no other action is legal. Buying a blind reserve nobody
    has named yet does not count: its owner sees the card and the record does not (E7, table
    mode)."""
    if not _may_pass(state):
        raise IllegalMove(
            "PASS_NOT_ALLOWED", "You may pass only when no action at all is possible."
        )


def _may_pass(state: State) -> bool:
    """RULES.md E7: no action is possible, other than buying an unnamed blind reserve."""
    return all(_buys_unnamed_reserve(move) for move in _actions(state))


def _buys_unnamed_reserve(move: SplendorMove) -> bool:
    """A buy of a reserved card that names the card: only an unnamed blind reserve is bought
    that way in the listed moves (RULES.md §4C, E7)."""
    return move.HasField("buy") and bool(move.buy.reserved) and bool(move.buy.card)


def _return_tokens(
    player: Player, bank: tuple[int, ...], returned: tuple[int, ...], total: int
) -> tuple[Player, tuple[int, ...]]:
    """RULES.md §3.2, E6: return tokens of your choice (gold too) down to exactly 10."""
    excess = total - TOKEN_LIMIT
    if sum(returned) != excess:
        raise IllegalMove(
            "DISCARD_WRONG_COUNT",
            f"You hold {total} tokens and must return exactly {excess}, not {sum(returned)}.",
        )
    tokens = list(player.tokens)
    b = list(bank)
    for c in range(6):
        if returned[c] > tokens[c]:
            raise IllegalMove(
                "DISCARD_NOT_HELD",
                f"You return {returned[c]} {COLOURS[c]} but hold only {tokens[c]}.",
            )
        tokens[c] -= returned[c]
        b[c] += returned[c]
    return (
        new_player(
            tuple(tokens),
            player.bonuses,
            player.purchased,
            player.reserved,
            player.nobles,
            player.card_points,
            player.noble_points,
        ),
        tuple(b),
    )


def _nobles_and_end(
    state: State,
    chosen: int,
    player: Player,
    bank: tuple[int, ...],
    market: tuple[tuple[int, ...], ...],
    decks: tuple[int, ...],
    unseen: int,
    refill: tuple[int, int],
    deal: int,
    passed: bool,
) -> State:
    """RULES.md §7: a noble visits if one qualifies (the player picks among several; at most
    one per turn); then §8, E7, E11: the end-game check, then the next seat."""
    nobles = state.nobles
    qualifying = qualifying_nobles(state, player.bonuses) if nobles else []
    if chosen:
        _check_noble_choice(state, chosen, qualifying)
    elif len(qualifying) == 1:
        chosen = qualifying[0]
    elif len(qualifying) > 1:
        return _build(
            state,
            player,
            bank,
            market,
            decks,
            unseen,
            refill,
            deal,
            NOBLE,
            state.passes,
            nobles,
            passed,
        )
    if chosen:
        player, nobles = _visit(state, player, chosen)
    # The end of the turn, here rather than in a function of its own: it follows every
    # turn, and a call passing the whole new state costs a tenth of `apply`.
    rules = state.rules
    seat = state.current
    triggered = state.triggered or player.card_points + player.noble_points >= WINNING_POINTS
    passes = state.passes + 1 if passed else 0
    over = ONGOING
    if triggered and seat == rules.last_seat:
        over = COMPLETED
    elif passes >= rules.players:
        over = DEADLOCK
    players = state.players
    players = (*players[:seat], player, *players[seat + 1 :])
    current = (seat + 1) % rules.players
    return new_state(
        rules,
        bank,
        market,
        decks,
        unseen,
        nobles,
        state.nobles_due,
        players,
        current,
        ACTION,
        refill,
        deal,
        triggered,
        passes,
        over,
        False,
        TERMINAL if over else CHANCE if refill[0] or deal else current,
    )


def _check_noble_choice(state: State, chosen: int, qualifying: list[int]) -> None:
    """RULES.md §7: the noble named must be on the table and qualify."""
    if not qualifying:
        raise IllegalMove(
            "NOBLE_NOT_EARNED", "No noble visits you: your bonuses meet no noble's requirement."
        )
    nobles = state.rules.components.nobles
    if chosen not in state.nobles:
        raise IllegalMove(
            "NOBLE_NOT_ON_TABLE",
            f"That noble is not on the table; choose one of "
            f"{', '.join(nobles[n].text for n in qualifying)}.",
        )
    if chosen not in qualifying:
        raise IllegalMove(
            "NOBLE_NOT_QUALIFIED",
            f"Your bonuses do not meet {nobles[chosen].text}; choose one of "
            f"{', '.join(nobles[n].text for n in qualifying)}.",
        )


def _visit(state: State, player: Player, noble_id: int) -> tuple[Player, tuple[int, ...]]:
    noble = state.rules.components.nobles[noble_id]
    player = new_player(
        player.tokens,
        player.bonuses,
        player.purchased,
        player.reserved,
        (*player.nobles, noble_id),
        player.card_points,
        player.noble_points + noble.points,
    )
    return player, tuple(n for n in state.nobles if n != noble_id)


def _build(
    state: State,
    player: Player,
    bank: tuple[int, ...],
    market: tuple[tuple[int, ...], ...],
    decks: tuple[int, ...],
    unseen: int,
    refill: tuple[int, int],
    deal: int,
    phase: int,
    passes: int,
    nobles: tuple[int, ...],
    passed: bool,
) -> State:
    """The same player's turn continues with a pending decision (`phase`)."""
    seat = state.current
    players = state.players
    players = (*players[:seat], player, *players[seat + 1 :])
    return new_state(
        state.rules,
        bank,
        market,
        decks,
        unseen,
        nobles,
        state.nobles_due,
        players,
        seat,
        phase,
        refill,
        deal,
        state.triggered,
        passes,
        ONGOING,
        passed,
        CHANCE if refill[0] or deal else seat,
    )


def _discard_step(state: State, move: SplendorMove) -> State:
    """RULES.md §3.2: the return of tokens as a move of its own."""
    player = state.players[state.current]
    total = sum(player.tokens)
    returned = tokens_tuple(move.discard.tokens)
    player, bank = _return_tokens(player, state.bank, returned, total)
    return _nobles_and_end(
        state,
        move.noble,
        player,
        bank,
        state.market,
        state.decks,
        state.unseen,
        state.refill,
        state.deal,
        state.passing,
    )


def _noble_step(state: State, chosen: int) -> State:
    """RULES.md §7: the choice among several qualifying nobles as a move of its own."""
    player = state.players[state.current]
    if not chosen:
        raise IllegalMove("NOBLE_NOT_NAMED", "Name the noble who visits you.")
    return _nobles_and_end(
        state,
        chosen,
        player,
        state.bank,
        state.market,
        state.decks,
        state.unseen,
        state.refill,
        state.deal,
        state.passing,
    )


# ----------------------------------------------------------------------------------------
# Chance


def _reveal_card(state: State, reveal: SplendorRevealCard) -> State:
    """RULES.md §2.1, §3.1: the table turns up a card (setup or refill), or, in dealt mode,
    deals the identity of a blind reserve (slot 0). Only an unseen card can be revealed
    (§1: each card exists once), whichever slot is waiting."""
    level, slot, card_id = reveal.level, reveal.slot, reveal.card
    comps = state.rules.components
    if not 1 <= level <= 3:
        raise IllegalMove("NO_SUCH_LEVEL", f"Levels are 1, 2 and 3, not {level}.")
    if slot > SLOTS:
        raise IllegalMove("NO_SUCH_SLOT", f"Market slots are 1 to 4 from the left, not {slot}.")
    cards = comps.cards
    card = cards[card_id] if 0 < card_id < len(cards) else None  # `comps.card`, looked up once
    if card is None:
        raise IllegalMove("NO_SUCH_CARD", f"There is no card with id {card_id}.")
    if not state.unseen >> card_id & 1:
        # Checked before the place: whichever slot waits, a card seen cannot be turned up.
        raise IllegalMove(
            "CARD_ALREADY_SEEN",
            f"{card.text} cannot be revealed, it is already seen: {whereabouts(state, card_id)}.",
        )
    if card.level != level:
        raise IllegalMove(
            "REVEAL_WRONG_LEVEL", f"{card.text} is a level-{card.level} card, not level {level}."
        )
    unseen = state.unseen & ~(1 << card_id)
    if slot == 0:
        return _deal_blind(state, level, card_id, unseen)
    if state.deal:
        raise IllegalMove(
            "REVEAL_WRONG_SLOT",
            "The table must first deal the card just reserved from the deck (slot `deck`).",
        )
    if state.refill[0]:
        if (level, slot) != state.refill:
            raise IllegalMove(
                "REVEAL_WRONG_SLOT",
                f"The card to reveal goes to level {state.refill[0]}, slot {state.refill[1]}.",
            )
    elif state.market[level - 1][slot - 1] or not state.decks[level - 1]:
        raise IllegalMove(
            "REVEAL_WRONG_SLOT", f"Level {level}, slot {slot} is not waiting for a card."
        )
    row = list(state.market[level - 1])
    row[slot - 1] = card_id
    market = _set_row(state.market, level, tuple(row))
    counts = list(state.decks)
    counts[level - 1] -= 1
    decks = tuple(counts)
    setup = not state.refill[0]
    return new_state(
        state.rules,
        state.bank,
        market,
        decks,
        unseen,
        state.nobles,
        state.nobles_due,
        state.players,
        state.current,
        state.phase,
        (0, 0),
        0,
        state.triggered,
        state.passes,
        ONGOING,
        state.passing,
        _who(ONGOING, (0, 0), 0, state.nobles_due, market, decks, state.current, setup)
        if setup
        else state.current,
    )


def undealt(move: SplendorMove, state: State) -> SplendorMove | None:
    """A dealt game's move as a table game records it (issue 26): the card dealt face down
    to a blind reserve (a reveal into slot `deck`, RULES.md §4C) is not recorded at a table,
    where nobody sees it; a reserved card bought names itself when it comes to light
    (§4D, `buy h2 2g1:w2u3r3`), here from the card the server dealt."""
    kind = move.WhichOneof("action")
    if kind == "reveal_card" and move.reveal_card.slot == 0:
        return None
    if kind == "buy" and move.buy.reserved and not move.buy.card:
        reserved = state.players[state.current].reserved
        index = move.buy.reserved
        if 1 <= index <= len(reserved) and reserved[index - 1][2]:
            named = SplendorMove()
            named.CopyFrom(move)
            named.buy.card = reserved[index - 1][0]
            return named
    return move


def _deal_blind(state: State, level: int, card_id: int, unseen: int) -> State:
    """Dealt mode (RULES.md §4C): the server names the card a player drew blind."""
    if not state.deal:
        raise IllegalMove(
            "NO_BLIND_DEAL", "No card drawn blind from a deck is waiting to be dealt."
        )
    seat = state.deal - 1
    owner = state.players[seat]
    index = len(owner.reserved) - 1
    entry = owner.reserved[index]
    if entry[0] or entry[1] != level:
        raise IllegalMove(
            "REVEAL_WRONG_LEVEL",
            f"The card drawn blind came from the level-{entry[1]} deck, not level {level}.",
        )
    player = new_player(
        owner.tokens,
        owner.bonuses,
        owner.purchased,
        (*owner.reserved[:index], (card_id, level, True)),
        owner.nobles,
        owner.card_points,
        owner.noble_points,
    )
    players = (*state.players[:seat], player, *state.players[seat + 1 :])
    return new_state(
        state.rules,
        state.bank,
        state.market,
        state.decks,
        unseen,
        state.nobles,
        state.nobles_due,
        players,
        state.current,
        state.phase,
        (0, 0),
        0,
        state.triggered,
        state.passes,
        ONGOING,
        state.passing,
        state.current,
    )


def _reveal_noble(state: State, reveal: SplendorRevealNoble) -> State:
    """RULES.md §2.2: at setup the table reveals players + 1 nobles."""
    nobles = state.rules.components.nobles
    if not state.nobles_due:
        raise IllegalMove("NO_NOBLE_REVEAL", "All the nobles of this game are already revealed.")
    noble_id = reveal.noble
    if noble_id not in nobles:
        raise IllegalMove("NO_SUCH_NOBLE", f"There is no noble with id {noble_id}.")
    if noble_id in state.nobles:
        raise IllegalMove(
            "NOBLE_ALREADY_SEEN", f"The noble {nobles[noble_id].text} is already on the table."
        )
    due = state.nobles_due - 1
    revealed = (*state.nobles, noble_id)
    return new_state(
        state.rules,
        state.bank,
        state.market,
        state.decks,
        state.unseen,
        revealed,
        due,
        state.players,
        state.current,
        state.phase,
        (0, 0),
        0,
        state.triggered,
        state.passes,
        ONGOING,
        False,
        _who(ONGOING, (0, 0), 0, due, state.market, state.decks, state.current, True),
    )


def _pending_slots(state: State) -> list[tuple[int, int]]:
    """The (level, slot) pairs the table may reveal into now."""
    if state.refill[0]:
        return [state.refill]
    if state.deal:
        return []
    return [
        (lv + 1, s + 1)
        for lv in range(3)
        if state.decks[lv]
        for s in range(SLOTS)
        if not state.market[lv][s]
    ]


def unseen_cards(state: State, level: int) -> list[int]:
    mask = state.unseen
    return [i for i in state.rules.components.levels[level - 1] if mask >> i & 1]


def to_move(state: State) -> int:
    """RULES.md §4, §8: the seat whose decision it is, CHANCE while a reveal is due, or
    TERMINAL; kept up to date by every rule function in `who`."""
    return state.who


def visible_to(move: SplendorMove, state: State, viewer: int | None) -> bool:
    """RULES.md §4C, E13: a card dealt to a blind reserve (dealt mode, `reveal L.deck`)
    is seen only by the player who reserved it; every other move is public."""
    if viewer is None or move.WhichOneof("action") != "reveal_card":
        return True
    return move.reveal_card.slot != 0 or viewer == state.deal - 1


def chance_outcomes(state: State) -> list[tuple[SplendorMove, int]]:
    """The next reveal: each unseen card (or unrevealed noble) with weight 1."""
    if state.who != CHANCE:
        return []
    if state.deal:
        seat = state.deal - 1
        level = state.players[seat].reserved[-1][1]
        return [
            (SplendorMove(reveal_card=SplendorRevealCard(level=level, slot=0, card=c)), 1)
            for c in unseen_cards(state, level)
        ]
    slots = _pending_slots(state)
    if slots:
        level, slot = slots[0]
        return [
            (SplendorMove(reveal_card=SplendorRevealCard(level=level, slot=slot, card=c)), 1)
            for c in unseen_cards(state, level)
        ]
    return [
        (SplendorMove(reveal_noble=SplendorRevealNoble(noble=n)), 1)
        for n in state.rules.components.nobles
        if n not in state.nobles
    ]


# ----------------------------------------------------------------------------------------
# Legal moves


def legal_moves(state: State) -> list[SplendorMove]:
    """Every legal move. The player's tails (`returned`, `noble`) are left to the following
    `discard` / `choose_noble` moves, so each decision is listed once."""
    who = state.who
    if who == TERMINAL:
        return []
    if who == CHANCE:
        if state.refill[0] or state.deal:
            return [move for move, _ in chance_outcomes(state)]
        moves = [
            SplendorMove(reveal_card=SplendorRevealCard(level=lv, slot=s, card=c))
            for lv, s in _pending_slots(state)
            for c in unseen_cards(state, lv)
        ]
        if state.nobles_due:
            moves.extend(
                SplendorMove(reveal_noble=SplendorRevealNoble(noble=n))
                for n in state.rules.components.nobles
                if n not in state.nobles
            )
        return moves
    if state.phase == DISCARD:
        player = state.players[state.current]
        excess = sum(player.tokens) - TOKEN_LIMIT
        return [
            SplendorMove(discard=SplendorDiscard(tokens=tokens_message(r)))
            for r in _returns(player.tokens, excess)
        ]
    if state.phase == NOBLE:
        player = state.players[state.current]
        return [
            SplendorMove(choose_noble=SplendorNobleChoice(noble=n))
            for n in qualifying_nobles(state, player.bonuses)
        ]
    moves = list(_actions(state))
    if all(_buys_unnamed_reserve(move) for move in moves):
        moves.append(pass_move())
    return moves


def _returns(tokens: tuple[int, ...], excess: int) -> list[tuple[int, ...]]:
    """Every way to return `excess` tokens out of `tokens` (RULES.md §3.2)."""
    out: list[tuple[int, ...]] = []

    def walk(c: int, left: int, acc: tuple[int, ...]) -> None:
        if c == 6:
            if not left:
                out.append(acc)
            return
        for n in range(min(left, tokens[c]), -1, -1):
            walk(c + 1, left - n, (*acc, n))

    walk(0, excess, ())
    return out


def _actions(state: State) -> Iterator[SplendorMove]:
    """RULES.md §4: every action of the seat to move (without tails)."""
    rules = state.rules
    bank = state.bank
    me = state.players[state.current]
    available = [c for c in range(5) if bank[c]]
    if available:
        sizes = (
            range(1, min(3, len(available)) + 1)
            if rules.take_fewer_anytime
            else (min(3, len(available)),)
        )
        for size in sizes:
            for combo in combinations(available, size):
                yield SplendorMove(
                    take_different=SplendorTakeDifferent(gems=[gem_value(c + 1) for c in combo])
                )
    for c in range(5):
        if bank[c] >= 4:
            yield SplendorMove(take_same=SplendorTakeSame(gem=gem_value(c + 1)))
    if len(me.reserved) < RESERVE_LIMIT:
        for lv in range(3):
            for s in range(SLOTS):
                if state.market[lv][s]:
                    yield SplendorMove(reserve=SplendorReserve(level=lv + 1, slot=s + 1))
            if state.decks[lv]:
                yield SplendorMove(reserve=SplendorReserve(level=lv + 1, slot=0))
    comps = rules.components
    for lv in range(3):
        for s in range(SLOTS):
            card_id = state.market[lv][s]
            if card_id:
                for payment in payments(comps.card(card_id), me):
                    yield SplendorMove(buy=SplendorBuy(level=lv + 1, slot=s + 1, payment=payment))
    for index, (card_id, level, _blind) in enumerate(me.reserved, start=1):
        candidates = [card_id] if card_id else unseen_cards(state, level)
        for candidate in candidates:
            for payment in payments(comps.card(candidate), me):
                yield SplendorMove(
                    buy=SplendorBuy(
                        reserved=index, card=0 if card_id else candidate, payment=payment
                    )
                )


def payments(card: Card, me: Player) -> list[SplendorTokens | None]:
    """RULES.md §4D, E8: None for the canonical payment, then every other valid payment
    (gold spent in place of coloured tokens the player holds)."""
    need = need_of(card, me.bonuses)
    tokens = me.tokens
    canonical = canonical_payment(need, tokens)
    if canonical is None:
        return []
    found: list[SplendorTokens | None] = [None]
    spare = tokens[GOLD] - canonical[GOLD]
    if not spare:
        return found
    # Extra gold per colour: up to the coloured tokens the canonical payment spends there.
    limits = [canonical[c] for c in range(5)]
    if not any(limits):
        return found

    def walk(c: int, left: int, extra: tuple[int, ...]) -> None:
        if c == 5:
            if any(extra):
                pay = [canonical[i] - extra[i] for i in range(5)]
                pay.append(canonical[GOLD] + sum(extra))
                found.append(tokens_message(pay))
            return
        for n in range(min(left, limits[c]) + 1):
            walk(c + 1, left - n, (*extra, n))

    walk(0, spare, ())
    return found
