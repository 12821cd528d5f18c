"""Splendor's moves in a player's words (issue 25: the recording bar confirms a move composed
by taps with them): "Ann buys 1k0:g3 from slot 1.3", "The table reveals 2g1:w2u3r3 into slot
2.3". Built from the same pieces as the notation (`notation.py`), so that a card, a noble or a
place reads as a recorder types it."""

from __future__ import annotations

from tablelog.replay.core import CHANCE, FULL, Viewer, spoken_list
from tablelog.replay.games.splendor.components import GEMS
from tablelog.replay.games.splendor.notation import card_text, detail, noble_text
from tablelog.replay.games.splendor.rules import State, tokens_tuple, visible_to
from tablelog.v1.splendor_pb2 import SplendorMove

_GEM_NAMES = (*GEMS, "gold")
"""Token colours in the order of a token count (white, blue, green, red, black, gold)."""


def _tokens(counts: tuple[int, ...]) -> str:
    """Counted tokens: "2 red and 1 gold"."""
    return spoken_list([f"{n} {_GEM_NAMES[c]}" for c, n in enumerate(counts) if n]) or "nothing"


def _colour(gem: int) -> str:
    """A gem enum value (1 white .. 6 gold) as its colour."""
    return _GEM_NAMES[gem - 1] if 1 <= gem <= len(_GEM_NAMES) else f"gem {gem}"


def words(move: SplendorMove, state: State, viewer: Viewer) -> str:
    """RULES.md §4 (A take of three colours, B of two alike, C reserve, D purchase), §3.2 (the
    return down to 10 tokens), §7 (a noble's visit) and §2/§4 (the table's reveals), said for
    `viewer`. A card is named only where every viewer may see it once the move is made (as
    `detail` names it); a card dealt to a blind reserve (dealt mode) is named only to the seat
    that reserved it (§4C, E13: `visible_to`), and so is a blind reserve it may buy, until
    the move names the card (a table game's `buy h2 2g1:w2u3r3`)."""
    comps = state.rules.components
    names = state.rules.names
    kind = move.WhichOneof("action")
    if state.who == CHANCE:
        if kind == "reveal_noble":
            return f"The table reveals the noble {noble_text(comps, move.reveal_noble.noble)}."
        reveal = move.reveal_card
        if reveal.slot:
            card = card_text(comps, reveal.card)
            return f"The table reveals {card} into slot {reveal.level}.{reveal.slot}."
        holder = names[state.deal - 1] if 1 <= state.deal <= len(names) else "a player"
        if visible_to(move, state, viewer):
            card = card_text(comps, reveal.card)
            return f"The table deals {card} face down to {holder}'s reserve."
        return f"The table deals a level-{reveal.level} card face down to {holder}'s reserve."
    who = names[state.current] if 0 <= state.current < len(names) else f"Seat {state.current}"
    if kind == "take_different":
        said = f"takes {spoken_list([_colour(g) for g in sorted(move.take_different.gems)])}"
    elif kind == "take_same":
        said = f"takes 2 {_colour(move.take_same.gem)}"
    elif kind == "reserve":
        reserve = move.reserve
        if reserve.slot:
            said = f"reserves {detail(move, state)} from slot {reserve.level}.{reserve.slot}"
        else:  # §4C: the top card of a deck, face down: nobody has seen it
            said = f"reserves the top level-{reserve.level} card face down"
        if state.bank[5]:  # §4C: and takes a gold, while the bank has one
            said += " and takes a gold"
    elif kind == "buy":
        buy = move.buy
        card = card_text(comps, buy.card) if buy.card else detail(move, state)
        where = f"slot {buy.level}.{buy.slot}" if buy.level else f"reserve h{buy.reserved}"
        reserved = state.players[state.current].reserved if buy.reserved else ()
        blind = 1 <= buy.reserved <= len(reserved) and reserved[buy.reserved - 1][2]
        if blind and not buy.card and viewer is not FULL and viewer != state.current:
            # §4C, E13: a card reserved face down is its holder's secret until it is bought;
            # another viewer is told of the move, not of the card.
            said = f"buys the card reserved face down from {where}"
        else:
            said = f"buys {card or 'a card'} from {where}"
        if buy.HasField("payment"):
            said += f", paying {_tokens(tokens_tuple(buy.payment))}"
    elif kind == "pass":
        said = "passes"
    elif kind == "discard":
        said = f"returns {_tokens(tokens_tuple(move.discard.tokens))}"
    elif kind == "choose_noble":
        said = f"takes the noble {noble_text(comps, move.choose_noble.noble)}"
    else:
        said = "does nothing"
    if move.HasField("returned"):
        said += f", returns {_tokens(tokens_tuple(move.returned))}"
    if move.noble:
        said += f", and the noble {noble_text(comps, move.noble)} visits"
    return f"{who} {said}."
