"""What each viewer may see of a Splendor state, and its text rendering.

RULES.md §3 and §4C, E13: tokens, purchased cards, nobles and the number of reserved cards
are public; a card reserved blind from a deck is known to its owner only (and to nobody
while the recorder has not named it, in table mode). The order of the decks is never shown.
"""

from __future__ import annotations

from dataclasses import replace
from functools import lru_cache

from tablelog.replay.core import CHANCE, DEALT, FULL, TERMINAL, Viewer
from tablelog.replay.games.splendor.components import GEMS, LETTERS, Card, Components, Noble
from tablelog.replay.games.splendor.rules import (
    PHASE_NAMES,
    SLOTS,
    State,
    _pending_slots,
    gem_value,
    tokens_message,
    tokens_tuple,
    unseen_cards,
)
from tablelog.v1.splendor_pb2 import (
    SplendorCard,
    SplendorMarketRow,
    SplendorNoble,
    SplendorPlayerView,
    SplendorReservedCard,
    SplendorView,
)


@lru_cache(maxsize=1024)
def _card(card: Card) -> SplendorCard:
    """The message of a card; cached, so callers only copy it (never mutate it)."""
    return SplendorCard(
        id=card.id,
        level=card.level,
        bonus=gem_value(card.bonus + 1),
        points=card.points,
        cost=tokens_message(card.cost),
        text=card.text,
    )


@lru_cache(maxsize=256)
def _noble(noble: Noble) -> SplendorNoble:
    return SplendorNoble(
        id=noble.id, points=noble.points, requires=tokens_message(noble.requires), text=noble.text
    )


def pending_reveal(state: State) -> str:
    """What the table must reveal now, in words."""
    if state.who != CHANCE:
        return ""
    if state.deal:
        level = state.players[state.deal - 1].reserved[-1][1]
        return f"deal the level-{level} card {state.rules.names[state.deal - 1]} drew blind"
    if state.refill[0]:
        return f"reveal a level-{state.refill[0]} card into slot {state.refill[1]}"
    for lv in range(3):
        for s in range(SLOTS):
            if state.decks[lv] and not state.market[lv][s]:
                return f"reveal a level-{lv + 1} card into slot {s + 1}"
    due = state.nobles_due
    return f"reveal {due} more noble{'' if due == 1 else 's'}"


def view(state: State, viewer: Viewer) -> SplendorView:
    """RULES.md §3, §4C, E13: the state as `viewer` (a seat, SPECTATOR or FULL) may see it."""
    comps: Components = state.rules.components
    players = []
    for seat, p in enumerate(state.players):
        reserved = []
        for card_id, level, blind in p.reserved:
            entry = SplendorReservedCard(level=level, from_deck=blind, unknown=not card_id)
            if card_id and (not blind or viewer is FULL or viewer == seat):
                entry.card.CopyFrom(_card(comps.card(card_id)))
            elif card_id:
                entry.hidden = True
            reserved.append(entry)
        bonuses = tokens_message(p.bonuses)
        players.append(
            SplendorPlayerView(
                name=state.rules.names[seat],
                tokens=tokens_message(p.tokens),
                bonuses=bonuses,
                purchased=[_card(comps.card(c)) for c in p.purchased],
                reserved=reserved,
                nobles=[_noble(comps.nobles[n]) for n in p.nobles],
                prestige=p.card_points + p.noble_points,
                card_points=p.card_points,
                noble_points=p.noble_points,
            )
        )
    market = [
        SplendorMarketRow(
            level=lv + 1,
            slots=[_card(comps.card(c)) if c else SplendorCard() for c in state.market[lv]],
            deck_size=state.decks[lv],
        )
        for lv in range(3)
    ]
    who = state.who
    return SplendorView(
        bank=tokens_message(state.bank),
        market=market,
        nobles=[_noble(comps.nobles[n]) for n in state.nobles],
        players=players,
        first_player=state.rules.first_player,
        final_round=state.triggered,
        pending_reveal=pending_reveal(state),
        current_player=state.current,
        awaiting="" if who in (CHANCE, TERMINAL) else PHASE_NAMES[state.phase],
        game_over=who == TERMINAL,
        passes=state.passes,
        nobles_to_reveal=state.nobles_due,
        unseen_cards=[_card(comps.card(c)) for c in _tray_cards(state, viewer)],
        unseen_nobles=[_noble(comps.nobles[n]) for n in _tray_nobles(state, viewer)],
    )


def _lists_moves_to(state: State, viewer: Viewer) -> bool:
    """Whether `viewer` may see the tray: in table mode, whoever may see the legal moves (as
    ListLegalMoves decides), since what it leaves out tells where a hidden card is; in dealt
    mode only the full view, the server's own, as no one at the table names a card there
    (the server deals it), and a card listed as unseen just before it is dealt to another
    seat's blind reserve must not appear in what that seat's neighbours read."""
    if state.rules.mode == DEALT:
        return viewer is FULL
    who = state.who
    return (who >= 0 and viewer == who) or not hides_from(state, viewer)


def _tray_cards(state: State, viewer: Viewer) -> list[int]:
    """Issue 25, RULES.md §2, §4C, §4D: the cards a legal move may name that the picture
    shows nowhere else: what the table may reveal into the empty slots, or what the seat to
    move may name for the blind reserve it buys (table mode)."""
    if state.who == TERMINAL or not _lists_moves_to(state, viewer):
        return []
    if state.who == CHANCE:
        levels = {level for level, _slot in _pending_slots(state)}
        if state.deal:
            levels = {state.players[state.deal - 1].reserved[-1][1]}
    else:
        player = state.players[state.current]
        levels = {level for card_id, level, _blind in player.reserved if not card_id}
    return [c for level in sorted(levels) for c in unseen_cards(state, level)]


def _tray_nobles(state: State, viewer: Viewer) -> list[int]:
    """RULES.md §2: the nobles the table may reveal at setup."""
    if state.who != CHANCE or not state.nobles_due or not _lists_moves_to(state, viewer):
        return []
    return [n for n in state.rules.components.nobles if n not in state.nobles]


def _tokens(counts: tuple[int, ...]) -> str:
    return " ".join(f"{LETTERS[c]}{n}" for c, n in enumerate(counts)) if any(counts) else "-"


def render(v: SplendorView) -> str:
    """A terminal rendering of a view: nobles, market, bank, then each player."""
    lines = []
    if v.game_over:
        status = "game over"
    elif v.pending_reveal:
        status = f"the table must {v.pending_reveal}"
    else:
        name = v.players[v.current_player].name if v.current_player < len(v.players) else "?"
        status = f"{name} to play ({v.awaiting or 'action'})"
    if v.final_round and not v.game_over:
        status += "; final round"
    lines.append(f"Splendor: {status}")
    nobles = "  ".join(f"{i}) {n.text}" for i, n in enumerate(v.nobles, start=1)) or "none"
    lines.append(f"Nobles: {nobles}")
    for row in reversed(v.market):
        cells = [
            f"{i}) {c.text}" if c.id else f"{i}) ----" for i, c in enumerate(row.slots, start=1)
        ]
        lines.append(f"Level {row.level} [deck {row.deck_size:2d}]: " + "  ".join(cells))
    lines.append(f"Bank: {_tokens(tokens_tuple(v.bank))}  (w u g r k = {', '.join(GEMS)}; y gold)")
    for seat, p in enumerate(v.players):
        marker = "*" if seat == v.current_player and not v.game_over else " "
        first = " (first)" if seat == v.first_player else ""
        tokens = tokens_tuple(p.tokens)
        lines.append(
            f"{marker} {p.name}{first}: {p.prestige} prestige (cards {p.card_points}, nobles "
            f"{p.noble_points}); tokens {_tokens(tokens)} ({sum(tokens)}); "
            f"bonuses {_tokens(tokens_tuple(p.bonuses)[:5])}; {len(p.purchased)} "
            f"card{'' if len(p.purchased) == 1 else 's'} bought"
        )
        held = []
        for i, r in enumerate(p.reserved, start=1):
            if r.card.id:
                held.append(f"h{i} {r.card.text}{' (blind)' if r.from_deck else ''}")
            elif r.hidden:
                held.append(f"h{i} [hidden level-{r.level} card]")
            else:
                held.append(f"h{i} [level-{r.level} card, not yet named]")
        if held:
            lines.append("    reserved: " + ", ".join(held))
        if p.nobles:
            lines.append("    nobles: " + ", ".join(n.text for n in p.nobles))
    return "\n".join(lines)


def hides_from(state: State, viewer: Viewer) -> bool:
    """RULES.md §4C, E13: whether `state` holds something `viewer` may not see: a card
    reserved blind and named (dealt, or typed by the recorder) that another seat holds.
    The order of the decks is never in the state; what is unseen is public by its count."""
    if viewer is FULL:
        return False
    return any(
        card_id and blind
        for seat, player in enumerate(state.players)
        if seat != viewer
        for card_id, _level, blind in player.reserved
    )


def redact(state: State, viewer: Viewer) -> State:
    """RULES.md §4C, E13: the state as `viewer` may know it: every card reserved blind by
    another seat unnamed again (id 0, as in table mode before the recorder names it) and
    counted among the unseen cards, so that a move naming it is checked as a move naming
    any card still in the deck."""
    if viewer is FULL:
        return state
    unseen = state.unseen
    players = list(state.players)
    for seat, player in enumerate(players):
        if seat == viewer or not any(blind and card for card, _lv, blind in player.reserved):
            continue
        reserved = []
        for card_id, level, blind in player.reserved:
            if blind and card_id:
                unseen |= 1 << card_id
                card_id = 0
            reserved.append((card_id, level, blind))
        players[seat] = replace(player, reserved=tuple(reserved))
    return replace(state, players=tuple(players), unseen=unseen)
