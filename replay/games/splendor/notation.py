"""Splendor move notation (documented with an example game in docs/notation/splendor.md).

Canonical forms (lowercase, one space between words)::

    take w u g            take r r              pass
    reserve 2.3           reserve 2.deck
    buy 1.4               buy h2                buy h2 2g1:w2u3r3   (naming a blind reserve)
    ... pay u2 y1         ... return r k        ... noble u4g4      (tails, in this order)
    return r k            noble u4g4            (the same decisions as moves of their own)
    reveal 2.3 2g1:w2u3r3  reveal 2.deck 2g1:w2u3r3  reveal noble u4g4   (the table)

Gems are `w u g r k` (white, blue, green, red, black) and gold is `y`. A card is its level,
bonus letter, points, `:` and its cost in gem order (`2g1:w2u3r3`); a noble is its
requirement (`u4g4`). Input is lenient: any case and spacing, gem names (`red`, `ruby`),
counts (`r2`, `2r`, `rr`), `noble 2` for the second noble on the table, `buy 2g1:w2u3r3`
or `reserve 2g1:w2u3r3` to find a card wherever the player can reach it, and a bare card
(`2g1:w2u3r3`) for what the table reveals.
"""

from __future__ import annotations

import re
from typing import Final

from tablelog.replay.core import CHANCE, AmbiguousNotation, IllegalMove, NotationError
from tablelog.replay.games.splendor.components import LETTERS, Components, cost_text
from tablelog.replay.games.splendor.rules import (
    SLOTS,
    State,
    canonical_payment,
    check_bounds,
    gem_value,
    gem_values,
    legal_moves,
    need_of,
    pass_move,
    reveal_card_move,
    set_tokens,
    tokens_tuple,
)
from tablelog.v1.splendor_pb2 import SplendorBuy, SplendorMove

GEM_WORDS: Final = {
    "w": 0, "white": 0, "diamond": 0, "diamonds": 0,
    "u": 1, "blue": 1, "sapphire": 1, "sapphires": 1,
    "g": 2, "green": 2, "emerald": 2, "emeralds": 2,
    "r": 3, "red": 3, "ruby": 3, "rubies": 3,
    "k": 4, "black": 4, "onyx": 4, "onyxes": 4,
    "y": 5, "gold": 5, "joker": 5, "jokers": 5, "yellow": 5,
}  # fmt: skip
VERBS: Final = {
    "take": "take", "t": "take", "get": "take", "takes": "take",
    "reserve": "reserve", "res": "reserve", "hold": "reserve", "reserves": "reserve",
    "buy": "buy", "b": "buy", "purchase": "buy", "buys": "buy",
    "pass": "pass", "passes": "pass",
    "return": "return", "discard": "return", "ret": "return", "returns": "return",
    "noble": "noble", "n": "noble",
    "reveal": "reveal", "flip": "reveal", "deal": "reveal", "reveals": "reveal",
}  # fmt: skip
TAILS: Final = {
    "pay": "pay", "paying": "pay", "pays": "pay",
    "return": "return", "discard": "return", "ret": "return", "returns": "return",
    "noble": "noble", "n": "noble",
}  # fmt: skip
NOTHING: Final = {"nothing", "none", "-", "0"}

_COUNT_FIRST = re.compile(r"^(\d{1,2})([wugrky])$")
_LETTERS = re.compile(r"^(?:[wugrky]\d{0,2})+$")
_LETTER_ITEM = re.compile(r"([wugrky])(\d{0,2})")
_CARD = re.compile(r"^([123])([wugrk])(\d):((?:[wugrk]\d)*)$")
_COST_ITEM = re.compile(r"([wugrk])(\d)")
_CARD_START = re.compile(r"^[123][wugrk]\d:")
"""The start of a card's printed name (level, bonus, points): a word so begun is a card."""
_PLACE = re.compile(r"^([123])[.\-/]?(deck|d|[1-9])$")
_HAND = re.compile(r"^h([1-9]?)$")
_CARD_ID = re.compile(r"^#(\d{1,5})$")


# ----------------------------------------------------------------------------------------
# format


def _letters(counts: tuple[int, ...], repeat: bool) -> str:
    if repeat:
        return " ".join(LETTERS[c] for c, n in enumerate(counts) for _ in range(n)) or "nothing"
    return " ".join(f"{LETTERS[c]}{n}" for c, n in enumerate(counts) if n) or "nothing"


_GEM_LETTERS: Final = dict(enumerate(LETTERS, start=1))
"""The letter of each gem number (1 white ... 6 gold); any other number is written `?`."""


def _gem_letter(gem: int) -> str:
    return _GEM_LETTERS.get(gem, "?")


def card_text(comps: Components, card_id: int) -> str:
    cards = comps.cards
    card = cards[card_id] if 0 < card_id < len(cards) else None  # `comps.card`, looked up once
    return card.text if card is not None else f"#{card_id}"


def noble_text(comps: Components, noble_id: int) -> str:
    noble = comps.nobles.get(noble_id)
    return noble.text if noble is not None else f"#{noble_id}"


def _place(level: int, slot: int) -> str:
    return f"{level}.{slot if slot else 'deck'}"


def format_move(move: SplendorMove, state: State) -> str:
    """The canonical text of `move` (see the module docstring)."""
    check_bounds(state, move)
    comps = state.rules.components
    kind = move.WhichOneof("action")
    # The text is built directly, the most frequent moves first (a reveal follows most
    # turns), each field read once.
    if kind == "reveal_card":
        reveal = move.reveal_card
        text = f"reveal {_place(reveal.level, reveal.slot)} {card_text(comps, reveal.card)}"
    elif kind == "take_different":
        text = " ".join(["take", *[_gem_letter(g) for g in sorted(move.take_different.gems)]])
    elif kind == "buy":
        buy = move.buy
        level, reserved, card_id = buy.level, buy.reserved, buy.card
        if level:
            text = f"buy {level}.{buy.slot}"
        elif reserved:
            text = f"buy h{reserved}"
        else:
            text = "buy"
        if card_id or not (level or reserved):
            text += " " + card_text(comps, card_id)
        if buy.HasField("payment"):
            text += " pay " + _letters(tokens_tuple(buy.payment), repeat=False)
    elif kind == "take_same":
        letter = _gem_letter(move.take_same.gem)
        text = f"take {letter} {letter}"
    elif kind == "reserve":
        reserve = move.reserve
        text = "reserve " + _place(reserve.level, reserve.slot)
    elif kind == "pass":
        text = "pass"
    elif kind == "discard":
        text = "return " + _letters(tokens_tuple(move.discard.tokens), repeat=True)
    elif kind == "choose_noble":
        text = "noble " + noble_text(comps, move.choose_noble.noble)
    elif kind == "reveal_noble":
        text = "reveal noble " + noble_text(comps, move.reveal_noble.noble)
    else:
        text = "nothing"
    if move.HasField("returned"):
        text += " return " + _letters(tokens_tuple(move.returned), repeat=True)
    noble = move.noble
    if noble:
        text += " noble " + noble_text(comps, noble)
    return text


def detail(move: SplendorMove, state: State) -> str:
    """The card a move takes by its place (`buy 1.3`, `buy h2`, `reserve 2.3`), as its
    printed text (`1k0:g3`): a record that reads without replaying it (issue 26). Empty
    when the text names the card already (`buy h2 2g1:w2u3r3`), for a blind reserve
    (`reserve 2.deck`: its face is hidden, RULES.md §4C), and for a place that holds no
    card (the move is then refused, not described)."""
    kind = move.WhichOneof("action")
    card_id = 0
    if kind == "buy":
        buy = move.buy
        if buy.card:
            return ""
        if buy.level:
            card_id = _market_at(state, buy.level, buy.slot)
        elif buy.reserved:
            # A card in the hand is bought face up (§4D): its face is public from then on.
            reserved = state.players[state.current].reserved
            if 1 <= buy.reserved <= len(reserved):
                card_id = reserved[buy.reserved - 1][0]
    elif kind == "reserve":
        card_id = _market_at(state, move.reserve.level, move.reserve.slot)
    return card_text(state.rules.components, card_id) if card_id else ""


def _market_at(state: State, level: int, slot: int) -> int:
    """The card id in a market slot (0: none, or no such slot; the deck is slot 0)."""
    if 1 <= level <= len(state.market) and 1 <= slot <= len(state.market[level - 1]):
        return state.market[level - 1][slot - 1]
    return 0


# ----------------------------------------------------------------------------------------
# parse


def _counts(words: list[str], text: str) -> list[int]:
    """A list of tokens: `r k`, `rk`, `r2 y1`, `2r`, `red black`."""
    counts = [0] * 6
    if len(words) == 1 and words[0] in NOTHING:
        return counts
    if not words:
        raise NotationError("Name the tokens (e.g. `r k` or `u2 y1`).", text)
    for word in words:
        if word in GEM_WORDS:
            counts[GEM_WORDS[word]] += 1
            continue
        match = _COUNT_FIRST.match(word)
        if match:
            counts[LETTERS.index(match.group(2))] += int(match.group(1))
            continue
        if _LETTERS.match(word):
            for letter, number in _LETTER_ITEM.findall(word):
                counts[LETTERS.index(letter)] += int(number) if number else 1
            continue
        raise NotationError(f"{word!r} is not a list of tokens (gems are w u g r k, gold y).", text)
    return counts


def _card(word: str, comps: Components, text: str) -> int | None:
    """A card named as printed (`2g1:w2u3r3`, costs in any order) or by id (`#57`)."""
    # Most cards are named as printed, which is how records write them: every printed name
    # reads back as its own card below (one digit per count, costs in gem order), so the
    # table answers first and only other spellings are taken apart.
    printed = comps.by_text.get(word)
    if printed is not None:
        return printed
    match = _CARD_ID.match(word)
    if match:
        card_id = int(match.group(1))
        if not comps.has_card(card_id):
            raise NotationError(f"There is no card {word}.", text)
        return card_id
    match = _CARD.match(word)
    if not match:
        started = _CARD_START.match(word)
        if started is not None:
            # `1r0:u2g`: a card begun, its cost cut short or misspelt; saying so beats "not a
            # Splendor move" (issue 26).
            raise NotationError(
                f"Card cost cut short in {word!r}: after the `:` each gem of the cost takes "
                "its count, in gem letters w u g r k (like `2g1:w2u3r3`).",
                text,
            )
        return None
    cost = [0] * 5
    for letter, number in _COST_ITEM.findall(match.group(4)):
        cost[LETTERS.index(letter)] += int(number)
    name = f"{match.group(1)}{match.group(2)}{match.group(3)}:{cost_text(tuple(cost))}"
    found = comps.by_text.get(name)
    if found is None:
        raise NotationError(f"There is no card {name} in this game.", text)
    return found


def _noble(words: list[str], state: State, text: str) -> int:
    """A noble by requirement (`u4g4`) or by its position on the table (`2`)."""
    comps = state.rules.components
    if len(words) != 1:
        raise NotationError("Name one noble, e.g. `noble u4g4` or `noble 2`.", text)
    word = words[0]
    if word.isdigit() and len(word) <= 2:
        index = int(word)
        if not 1 <= index <= len(state.nobles):
            raise NotationError(
                f"There are {len(state.nobles)} nobles on the table; there is no noble {index}.",
                text,
            )
        return state.nobles[index - 1]
    match = _CARD_ID.match(word)
    if match and int(match.group(1)) in comps.nobles:
        return int(match.group(1))
    if not _LETTERS.match(word) or "y" in word:
        raise NotationError(f"{word!r} does not name a noble (e.g. `u4g4`).", text)
    counts = _counts([word], text)
    name = cost_text(tuple(counts[:5]))
    noble_id = comps.noble_by_text.get(name)
    if noble_id is None:
        raise NotationError(f"There is no noble {name} in this game.", text)
    return noble_id


def _split(words: list[str]) -> tuple[list[str], dict[str, list[str]]]:
    """The verb's arguments, then the tails (`pay`, `return`, `noble`)."""
    head: list[str] = []
    tails: dict[str, list[str]] = {}
    current: list[str] = head
    for word in words:
        tail = TAILS.get(word)
        if tail is not None:
            if tail in tails:
                raise NotationError(f"The `{tail}` tail is given twice.", " ".join(words))
            tails[tail] = []
            current = tails[tail]
        else:
            current.append(word)
    return head, tails


_COLON: Final = re.compile(r"\s*:\s*")
_COST_PART: Final = re.compile(r"(:[wugrk0-9]*[0-9])\s+([wugrk][0-9])")
_SEPARATED_CARD: Final = re.compile(r"\s:|:\s|:[wugrk0-9]*[0-9]\s+[wugrk][0-9]")
"""Where `_COLON` or `_COST_PART` would change the text: a space beside a colon, or
between the parts of a cost."""


def _joined_cards(text: str) -> str:
    """A card name typed with separators inside it, which the notation ignores
    (`1w0 : u1, g1, r1, k1` is `1w0:u1g1r1k1`): the spaces around its colon and between
    the parts of its cost removed, so that a card is one word again."""
    if ":" not in text or not _SEPARATED_CARD.search(text):
        return text  # no card named by its cost, or each written as one word (as records do)
    text = _COLON.sub(":", text)
    while (joined := _COST_PART.sub(r"\1\2", text)) != text:
        text = joined
    return text


def parse(text: str, state: State) -> SplendorMove:
    """Read a move typed by a recorder (see the module docstring). A move that names more
    than the game has (`return u10` with 4 blue tokens in the game) is not read: whatever
    parses can be formatted."""
    move = _read_move(text, state)
    try:
        check_bounds(state, move)
    except IllegalMove as beyond:
        raise NotationError(beyond.message, text) from None
    return move


def _read_move(text: str, state: State) -> SplendorMove:
    if not isinstance(text, str):
        raise NotationError("A move is a line of text.", repr(text))
    words = _joined_cards(
        text.lower().replace(",", " ").replace(";", " ").replace("+", " ")
    ).split()
    if not words:
        raise NotationError("Type a move, e.g. `take w u g` or `buy 1.4`.", text)
    comps = state.rules.components
    verb = VERBS.get(words[0])
    if verb is None:
        card_id = _card(words[0], comps, text)
        if card_id is not None and len(words) == 1:
            return _reveal_shortcut(card_id, state, text)
        raise NotationError(
            f"{words[0]!r} is not a Splendor move: use take, reserve, buy, pass, return, "
            "noble or reveal.",
            text,
        )
    if verb == "reveal":
        return _parse_reveal(words[1:], state, text)
    if verb == "noble" and state.who == CHANCE:
        return _reveal_noble_move(_noble(words[1:], state, text))
    if verb == "return":
        head, tails = _split(words[1:])
        if "pay" in tails or "return" in tails:
            raise NotationError("A return of tokens takes only a `noble` tail.", text)
        move = SplendorMove()
        set_tokens(move.discard.tokens, _counts(head, text))
        if "noble" in tails:
            move.noble = _noble(tails["noble"], state, text)
        return move
    head, tails = _split(words[1:])
    if verb == "take":
        move = _parse_take(head, text)
    elif verb == "reserve":
        move = _parse_reserve(head, state, text)
    elif verb == "buy":
        move = _parse_buy(head, tails.pop("pay", None), state, text)
    elif verb == "pass":
        if head:
            raise NotationError("`pass` takes no arguments.", text)
        move = pass_move()
    else:  # verb == "noble": the choice among several qualifying nobles
        if tails:
            raise NotationError("A noble choice takes no tails.", text)
        move = SplendorMove()
        move.choose_noble.noble = _noble(head, state, text)
        return move
    if "pay" in tails:
        raise NotationError("Only a purchase has a `pay` tail.", text)
    if "return" in tails:
        set_tokens(move.returned, _counts(tails["return"], text))
    if "noble" in tails:
        move.noble = _noble(tails["noble"], state, text)
    return move


def _reserve_move(level: int, slot: int) -> SplendorMove:
    move = SplendorMove()
    reserve = move.reserve
    reserve.level = level
    reserve.slot = slot
    return move


def _reveal_noble_move(noble_id: int) -> SplendorMove:
    move = SplendorMove()
    move.reveal_noble.noble = noble_id
    return move


def _parse_take(head: list[str], text: str) -> SplendorMove:
    counts = _counts(head, text)
    taken = [c for c in range(6) if counts[c]]
    if len(taken) == 1 and counts[taken[0]] == 2:
        move = SplendorMove()
        move.take_same.gem = gem_value(taken[0] + 1)
        return move
    if taken and max(counts) == 1:  # one token of each colour named
        move = SplendorMove()
        move.take_different.gems.extend(gem_values(c + 1 for c in taken))
        return move
    raise NotationError(
        "Take names up to 3 different colours (`take w u g`) or 2 of one colour (`take r r`).",
        text,
    )


def _parse_reserve(head: list[str], state: State, text: str) -> SplendorMove:
    if len(head) != 1:
        raise NotationError("Reserve one card: `reserve 2.3` or `reserve 2.deck`.", text)
    word = head[0]
    match = _PLACE.match(word)
    if match:
        level = int(match.group(1))
        where = match.group(2)
        slot = 0 if where in ("deck", "d") else int(where)
        if slot > SLOTS:
            raise NotationError(f"Market slots are 1 to {SLOTS}.", text)
        return _reserve_move(level, slot)
    if word in ("1", "2", "3"):
        level = int(word)
        candidates = [
            f"reserve {level}.{s + 1}" for s in range(SLOTS) if state.market[level - 1][s]
        ] + [f"reserve {level}.deck"]
        raise AmbiguousNotation(
            f"Reserve which level-{level} card: a market slot or the deck?", text, candidates
        )
    card_id = _card(word, state.rules.components, text)
    if card_id is None:
        raise NotationError(f"{word!r} is not a card place (e.g. `2.3` or `2.deck`).", text)
    for lv, row in enumerate(state.market):
        if card_id in row:
            return _reserve_move(lv + 1, row.index(card_id) + 1)
    raise NotationError(f"{word} is not in the market.", text)


def _parse_buy(head: list[str], pay: list[str] | None, state: State, text: str) -> SplendorMove:
    comps = state.rules.components
    if not 1 <= len(head) <= 2:
        raise NotationError("Buy one card: `buy 1.4` or `buy h2`.", text)
    move = SplendorMove()
    buy = move.buy
    buy.SetInParent()
    me = state.players[state.current]
    first = head[0]
    market_place = _PLACE.match(first)  # each pattern tried once: `_place_word`, spelled out
    hand = None if market_place else _HAND.match(first)
    is_place = market_place is not None or hand is not None
    named = _card(head[-1], comps, text) if len(head) == 2 or not is_place else None
    if len(head) == 2 and named is None:
        raise NotationError(f"{head[-1]!r} is not a card (e.g. `2g1:w2u3r3`).", text)
    if not is_place and named is None:
        raise NotationError(f"{first!r} is not a card or a card place (e.g. `1.4`).", text)
    if not is_place and len(head) == 2:
        raise NotationError(f"{first!r} is not a card place (e.g. `1.4` or `h2`).", text)
    if is_place:
        if market_place:
            where = market_place.group(2)
            if where in ("deck", "d"):
                raise NotationError("Only face-up or reserved cards can be bought.", text)
            slot = int(where)
            buy.level = int(market_place.group(1))
            buy.slot = slot
            if slot > SLOTS:
                raise NotationError(f"Market slots are 1 to {SLOTS}.", text)
        else:
            assert hand is not None
            if hand.group(1):
                buy.reserved = int(hand.group(1))
            elif len(me.reserved) == 1:
                buy.reserved = 1
            else:
                raise AmbiguousNotation(
                    "Buy which reserved card?",
                    text,
                    [f"buy h{i}" for i in range(1, len(me.reserved) + 1)],
                )
        if named is not None:
            buy.card = named
    elif named is not None:
        _locate(buy, named, state)
    if pay is not None:
        set_tokens(buy.payment, _counts(pay, text))
        _drop_canonical_payment(buy, state)
    return move


def _place_word(word: str) -> bool:
    return bool(_PLACE.match(word) or _HAND.match(word))


def _locate(buy: SplendorBuy, card_id: int, state: State) -> None:
    """`buy <card>`: the market slot or own reserve that holds it."""
    for lv, row in enumerate(state.market):
        if card_id in row:
            buy.level = lv + 1
            buy.slot = row.index(card_id) + 1
            return
    me = state.players[state.current]
    for index, (held, _level, _blind) in enumerate(me.reserved, start=1):
        if held == card_id:
            buy.reserved = index
            return
    level = state.rules.components.card(card_id).level
    for index, (held, held_level, _blind) in enumerate(me.reserved, start=1):
        if not held and held_level == level and state.unseen >> card_id & 1:
            buy.reserved = index
            buy.card = card_id
            return
    buy.card = card_id  # elsewhere: the rules say why it cannot be bought


def _drop_canonical_payment(buy: SplendorBuy, state: State) -> None:
    """An explicit payment equal to the canonical one is the canonical move."""
    comps = state.rules.components
    me = state.players[state.current]
    card_id = 0
    if buy.level and 1 <= buy.level <= 3 and 1 <= buy.slot <= SLOTS:
        card_id = state.market[buy.level - 1][buy.slot - 1]
    elif buy.reserved and buy.reserved <= len(me.reserved):
        card_id = me.reserved[buy.reserved - 1][0] or buy.card
    if not comps.has_card(card_id):
        return
    canonical = canonical_payment(need_of(comps.card(card_id), me.bonuses), me.tokens)
    if canonical is not None and tuple(canonical) == tokens_tuple(buy.payment):
        buy.ClearField("payment")


def _parse_reveal(args: list[str], state: State, text: str) -> SplendorMove:
    comps = state.rules.components
    if args and args[0] == "noble":
        return _reveal_noble_move(_noble(args[1:], state, text))
    if len(args) == 1:
        card_id = _card(args[0], comps, text)
        if card_id is None:
            raise NotationError(f"{args[0]!r} is not a card (e.g. `2g1:w2u3r3`).", text)
        return _reveal_shortcut(card_id, state, text)
    if len(args) != 2:
        raise NotationError("Reveal a card into a place: `reveal 2.3 2g1:w2u3r3`.", text)
    match = _PLACE.match(args[0])
    if not match:
        raise NotationError(f"{args[0]!r} is not a card place (e.g. `2.3` or `2.deck`).", text)
    slot = 0 if match.group(2) in ("deck", "d") else int(match.group(2))
    if slot > SLOTS:
        raise NotationError(f"Market slots are 1 to {SLOTS}.", text)
    card_id = _card(args[1], comps, text)
    if card_id is None:
        raise NotationError(f"{args[1]!r} is not a card (e.g. `2g1:w2u3r3`).", text)
    return reveal_card_move(int(match.group(1)), slot, card_id)


def _reveal_shortcut(card_id: int, state: State, text: str) -> SplendorMove:
    """A bare card while the table must reveal: the place it can go."""
    level = state.rules.components.card(card_id).level
    if state.who == CHANCE:
        if not state.unseen >> card_id & 1:
            # Wherever it would go, the rules refuse a card already seen and say where it is.
            return reveal_card_move(level, 1, card_id)
        if state.deal:
            return reveal_card_move(level, 0, card_id)
        if state.refill[0]:
            lv, slot = state.refill
            return reveal_card_move(lv, slot, card_id)
        row = state.market[level - 1]
        for s in range(SLOTS):
            if not row[s]:
                return reveal_card_move(level, s + 1, card_id)
    raise NotationError(
        "A card alone is a reveal, and the table has no card to reveal there now.", text
    )


def candidates(state: State) -> list[str]:
    """The canonical text of every legal move (for clients and error messages)."""
    return [format_move(move, state) for move in legal_moves(state)]
