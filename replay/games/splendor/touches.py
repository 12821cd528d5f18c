"""Which touches on Splendor's picture (`picture.py`'s `data-touch` ids) select each legal
move, in tap order (issue 25; cut to the shortest unambiguous start by `tablelog.replay.touch`).

Ids: `bank-w` .. `bank-k`, `bank-y` (gold) for the bank's piles; `slot-L.S` a market slot,
`deck-L` a level's deck; `noble-N` a noble on offer; `pS-tokens-w` .. `pS-tokens-y` a seat's
tokens, `pS-bonuses` its cards (where a bought card goes), `pS-reserved` its reserve (where a
reserved card goes), `pS-hand-I` its I-th reserved card (seats and hands counted from 1, as
`h1` in the notation); `pass`; and, when the table must turn a card or a noble up or a
player names a blind reserve, the tray: `tray-card-ID` and `tray-noble-ID`.

- take different gems (§4A): the bank piles, in any order;
- take two of a colour (§4B): the pile, twice;
- reserve (§4C): the slot or the deck, then your reserve;
- buy (§4D): the slot or your reserved card, then your cards, then (a blind reserve not yet
  named) the card from the tray, then the tokens paid, gold first (only the start that tells
  one payment from another is kept: the usual payment is two taps);
- return tokens over ten (§3.2): your tokens, in any order;
- choose a noble (§7): the noble;
- the table's reveal (§2, §4C, §4D refill): the card in the tray, then the slot it goes to
  when several are empty (setup); a noble: the noble in the tray.
"""

from __future__ import annotations

from tablelog.replay.games.splendor.components import GOLD, LETTERS
from tablelog.replay.games.splendor.rules import State, canonical_payment, need_of, tokens_tuple
from tablelog.replay.touch import Touches
from tablelog.v1.splendor_pb2 import SplendorMove


def seat_id(seat: int) -> str:
    """A seat's prefix: `p1` for seat 0."""
    return f"p{seat + 1}"


def bank_id(colour: int) -> str:
    """A bank pile (colour index 0 white .. 5 gold)."""
    return f"bank-{LETTERS[colour]}"


def tokens_id(seat: int, colour: int) -> str:
    return f"{seat_id(seat)}-tokens-{LETTERS[colour]}"


def _tokens(seat: int, counts: tuple[int, ...], gold_first: bool = False) -> tuple[str, ...]:
    order = (GOLD, 0, 1, 2, 3, 4) if gold_first else range(6)
    return tuple(tokens_id(seat, c) for c in order for _ in range(counts[c]))


def touches(move: SplendorMove, state: State) -> Touches:
    """The full path of touches of `move`, legal in `state` (see the module's docstring)."""
    me = state.current
    action = move.WhichOneof("action")
    if action == "take_different":
        return Touches(tuple(bank_id(g - 1) for g in move.take_different.gems), any_order=True)
    if action == "take_same":
        pile = bank_id(move.take_same.gem - 1)
        return Touches((pile, pile))
    if action == "reserve":
        level, slot = move.reserve.level, move.reserve.slot
        where = f"slot-{level}.{slot}" if slot else f"deck-{level}"
        return Touches((where, f"{seat_id(me)}-reserved"))
    if action == "buy":
        return Touches(_buy(move, state))
    if action == "pass":
        return Touches(("pass",))
    if action == "discard":
        return Touches(_tokens(me, tokens_tuple(move.discard.tokens)), any_order=True)
    if action == "choose_noble":
        return Touches((f"noble-{move.choose_noble.noble}",))
    if action == "reveal_card":
        reveal = move.reveal_card
        where = f"slot-{reveal.level}.{reveal.slot}" if reveal.slot else f"deck-{reveal.level}"
        return Touches((f"tray-card-{reveal.card}", where))
    if action == "reveal_noble":
        return Touches((f"tray-noble-{move.reveal_noble.noble}",))
    return Touches(())


def _buy(move: SplendorMove, state: State) -> tuple[str, ...]:
    """RULES.md §4D, E8: where the card is, where it goes, the card named, the payment."""
    buy = move.buy
    me = state.current
    player = state.players[me]
    comps = state.rules.components
    if buy.reserved:
        path: tuple[str, ...] = (f"{seat_id(me)}-hand-{buy.reserved}", f"{seat_id(me)}-bonuses")
        card_id = player.reserved[buy.reserved - 1][0] or buy.card
        if not player.reserved[buy.reserved - 1][0] and buy.card:
            path += (f"tray-card-{buy.card}",)
    else:
        path = (f"slot-{buy.level}.{buy.slot}", f"{seat_id(me)}-bonuses")
        card_id = state.market[buy.level - 1][buy.slot - 1]
    paid: tuple[int, ...]
    if buy.HasField("payment"):
        paid = tokens_tuple(buy.payment)
    elif not card_id:
        # A blind reserve bought before anyone names it: the table names it next (§4C).
        paid = (0,) * 6
    else:
        canonical = canonical_payment(need_of(comps.card(card_id), player.bonuses), player.tokens)
        paid = tuple(canonical) if canonical is not None else (0,) * 6
    return path + _tokens(me, paid, gold_first=True)
