"""Move notation of Medici: The Card Game (docs/notation/medici-card-game.md).

flip              the player turns over one more card
reveal fur3       the table records the card (chance); `fur3` alone also reads
take 1 2          take positions 1 (last card) and 2; `take fur3 green2` names the cards
start 2           the table picks seat 2 to start the round (a tie for fewest florins)

One line may stand for two moves (`split`): `flip fur3` (any word for `flip`) while a
player is to move is the player's `flip` and the table's `reveal fur3`.
"""

from __future__ import annotations

from tablelog.replay.core import AmbiguousNotation, NotationError
from tablelog.replay.games.medici_card_game import rules
from tablelog.replay.games.medici_card_game.rules import (
    flip_move,
    reveal_move,
    start_move,
    take_move,
)
from tablelog.replay.games.medici_common.notation import (
    GOOD_SYNONYMS,
    START_WORDS,
    compact,
    format_start,
    parse_start,
    words,
)
from tablelog.v1.medici_card_game_pb2 import MediciCardGameMove

FLIP_WORDS = frozenset({"flip", "f", "reveal", "turn", "draw"})
REVEAL_WORDS = frozenset({"reveal", "flip", "r", "draw", "turn"})
TAKE_WORDS = frozenset({"take", "t", "takes"})


def card_name(tokens: list[str], state: rules.State) -> str | None:
    """The card kind named by `tokens` ("fur 3", "Furs3", "dye flag", "green", "black 7")."""
    if not tokens:
        return None
    by_name = state.rules.deck.by_name
    head = GOOD_SYNONYMS.get(tokens[0], tokens[0])
    rest = tokens[1:]
    if len(tokens) >= 2 and tokens[0] in ("flag", "green") and tokens[1] in GOOD_SYNONYMS:
        head, rest = GOOD_SYNONYMS[tokens[1]], ["flag", *tokens[2:]]
    name = head + "".join(rest)
    if name in by_name:
        return name
    if not rest:
        # "green" or "black" alone: the one neutral kind of that colour, if unique.
        matches = [n for n in by_name if n.startswith(head) and n[len(head) :].isdigit()]
        if head in ("green", "black") and len(matches) == 1:
            return matches[0]
    return None


def _take_positions(tokens: list[str], text: str, state: rules.State) -> MediciCardGameMove:
    if not tokens:
        options = rules.take_options(state)
        if len(options) == 1:
            return take_move(options[0])
        if not options:
            raise NotationError("`take` needs positions: `take 1`, `take 1 2`, ...", text)
        raise AmbiguousNotation(
            "Which cards? Name the positions.", text, [format_take(o) for o in options]
        )
    if all(t.isdigit() for t in tokens):
        # "take 12" is "take 1 2"; a position is a single digit counted from the end.
        numbers = list(tokens[0]) if len(tokens) == 1 else tokens
        if any(len(n) > 1 or n == "0" for n in numbers):
            raise NotationError("Positions are counted from the end of the market: 1-3.", text)
        positions = sorted(int(n) for n in numbers)
        return take_move(tuple(positions))
    return _take_named(tokens, text, state)


def _take_named(tokens: list[str], text: str, state: rules.State) -> MediciCardGameMove:
    """`take fur3 green2`: the named cards among the last three of the market."""
    names: list[str] = []
    i = 0
    while i < len(tokens):
        for width in (3, 2, 1):
            name = card_name(tokens[i : i + width], state)
            if name is not None:
                names.append(name)
                i += width
                break
        else:
            raise NotationError(f"{tokens[i]!r} is not a card or a position.", text)
    market = state.market
    size = len(market)
    kinds = state.rules.deck.kinds
    window = {p: kinds[market[size - p]].name for p in range(1, min(3, size) + 1)}
    candidates: list[tuple[int, ...]] = []
    for option in rules.take_options(state) or [(1,), (1, 2), (1, 3), (1, 2, 3)]:
        if all(p in window for p in option) and sorted(window[p] for p in option) == sorted(names):
            candidates.append(option)
    if not candidates:
        shown = " ".join(f"{p}:{n}" for p, n in sorted(window.items()))
        raise NotationError(
            f"Those cards are not a take from the end of the market ({shown or 'empty'}).", text
        )
    if len(candidates) > 1:
        raise AmbiguousNotation(
            "Several cards match; name the positions.", text, [format_take(c) for c in candidates]
        )
    return take_move(candidates[0])


def format_take(positions: tuple[int, ...] | list[int]) -> str:
    return "take " + " ".join(str(p) for p in positions)


def parse(text: str, state: rules.State) -> MediciCardGameMove:
    tokens = words(text)
    if not tokens:
        raise NotationError("Empty move.", text)
    head, rest = tokens[0], tokens[1:]
    if head in TAKE_WORDS:
        return _take_positions(rest, text, state)
    if head in START_WORDS:
        return start_move(parse_start(rest, text, state.rules.players))
    if head in FLIP_WORDS and not rest:
        return flip_move()
    card_tokens = rest if head in REVEAL_WORDS else tokens
    name = card_name(card_tokens, state)
    if name is None:
        if compact(text).isdigit():
            raise NotationError("A bare number is not a move: write `take 1 2`.", text)
        raise NotationError(
            f"Not a move or a card: {text!r} (cards look like fur3, dye0, dyeflag, green2).",
            text,
        )
    return reveal_move(name)


def split(text: str, state: rules.State) -> tuple[str, ...]:
    """The moves a line stands for: `flip fur3` typed while a player is to move (§A3 step
    1: turn over one more card) is the player's `flip` followed by the table's
    `reveal fur3`, the card turned over. While the table is to reveal, `flip fur3` is the
    reveal alone, as before. Any other line is one move."""
    if state.phase != rules.PLAY:  # most lines: no need to read the words
        return (text,)
    tokens = words(text)
    if len(tokens) > 1 and tokens[0] in FLIP_WORDS:
        return ("flip", "reveal " + " ".join(tokens[1:]))
    return (text,)


def detail(move: MediciCardGameMove, state: rules.State) -> str:
    """The cards a `take 1 2` takes, by what is printed on them (`fur3 green2`), positions
    counted from the end of the market row (§A3 step 2): every market card is face up, so
    any viewer may read them (issue 26). Empty for any other move (their text names the
    card) and for a position the market does not have (the move is refused)."""
    if move.WhichOneof("action") != "take":
        return ""
    market = state.market
    size = len(market)
    kinds = state.rules.deck.kinds
    positions = sorted(move.take.positions)
    if not positions or not all(1 <= p <= size for p in positions):
        return ""
    return " ".join(kinds[market[size - p]].name for p in positions)


def format_move(move: MediciCardGameMove, state: rules.State) -> str:
    rules.check_bounds(state, move)
    action = move.WhichOneof("action")
    if action == "flip":
        return "flip"
    if action == "reveal":
        return f"reveal {move.reveal.card}"
    if action == "take":
        return format_take(sorted(move.take.positions))
    if action == "start_player":
        return format_start(move.start_player.seat)
    raise NotationError("The move names no action.")
