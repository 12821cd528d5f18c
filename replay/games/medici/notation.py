"""Move notation of Medici (docs/notation/medici.md).

draw              the drawer draws one more tile into the lot
auction           the drawer stops drawing: the lot goes to auction
draw cloth3       the table records the tile drawn (chance); `cloth3`, `gold` also read
bid 7 / pass      a bid, or a pass
remove cloth3     dealt mode: a tile removed unseen at the day's setup (chance)
start 2           the table picks seat 2 to start the day (a tie for fewest florins)

One line may stand for two moves (`split`): `draw cloth3` while the drawer decides is the
drawer's `draw` and the tile the table then draws.
"""

from __future__ import annotations

from tablelog.replay.core import NotationError
from tablelog.replay.games.medici import rules
from tablelog.replay.games.medici.rules import (
    bid_move,
    close_move,
    draw_more_move,
    draw_move,
    pass_move,
    remove_move,
    start_move,
)
from tablelog.replay.games.medici_common.notation import (
    GOOD_SYNONYMS,
    START_WORDS,
    compact,
    format_start,
    parse_start,
    words,
)
from tablelog.v1.medici_pb2 import MediciMove

DRAW_WORDS = frozenset({"draw", "d", "drawn", "draws"})
AUCTION_WORDS = frozenset({"auction", "a", "stop", "close", "done"})
BID_WORDS = frozenset({"bid", "b", "bids"})
PASS_WORDS = frozenset({"pass", "p", "passes", "no"})
REMOVE_WORDS = frozenset({"remove", "removed", "r"})
MAX_BID_DIGITS = 6


def tile_name(tokens: list[str], state: rules.State) -> str | None:
    """The tile kind named by `tokens` ("cloth 3", "Furs5", "gold")."""
    if not tokens:
        return None
    head = GOOD_SYNONYMS.get(tokens[0], tokens[0])
    name = head + "".join(tokens[1:])
    if name in state.rules.tiles.by_name:
        return name
    if name == "gold10" and "gold" in state.rules.tiles.by_name:
        return "gold"
    return None


def parse(text: str, state: rules.State) -> MediciMove:
    tokens = words(text)
    if not tokens:
        raise NotationError("Empty move.", text)
    head, rest = tokens[0], tokens[1:]
    if head in BID_WORDS:
        malformed = len(rest) != 1 or not rest[0].isdigit() or len(rest[0]) > MAX_BID_DIGITS
        if malformed or "-" in text:
            raise NotationError("A bid is `bid N` with N florins, e.g. `bid 7`.", text)
        return bid_move(int(rest[0]))
    if head in PASS_WORDS and not rest:
        return pass_move()
    if head in AUCTION_WORDS and not rest:
        return close_move()
    if head in DRAW_WORDS and not rest:
        return draw_more_move()
    if head in START_WORDS:
        return start_move(parse_start(rest, text, state.rules.players))
    if head in REMOVE_WORDS:
        name = tile_name(rest, state)
        if name is None:
            raise NotationError(f"Not a tile: {' '.join(rest)!r}.", text)
        return remove_move(name)
    name = tile_name(rest if head in DRAW_WORDS else tokens, state)
    if name is None:
        if compact(text).isdigit():
            raise NotationError("A bare number is not a move: write `bid 7`.", text)
        raise NotationError(
            f"Not a move or a tile: {text!r} (tiles look like cloth3, fur5, gold).", text
        )
    return draw_move(name)


def split(text: str, state: rules.State) -> tuple[str, ...]:
    """The moves a line stands for: `draw cloth3` typed while the drawer decides (§B3
    step 1: draw another tile, or auction) is the drawer's `draw` followed by the table's
    `draw cloth3`, the tile that came out of the bag. Any other line is one move."""
    if state.phase != rules.DECIDE:  # most lines: no need to read the words
        return (text,)
    tokens = words(text)
    if len(tokens) > 1 and tokens[0] in DRAW_WORDS:
        return ("draw", "draw " + " ".join(tokens[1:]))
    return (text,)


def format_move(move: MediciMove, state: rules.State) -> str:
    rules.check_bounds(state, move)
    action = move.WhichOneof("action")
    if action == "draw_more":
        return "draw"
    if action == "close_lot":
        return "auction"
    if action == "draw":
        return f"draw {move.draw.tile}"
    if action == "bid":
        return f"bid {move.bid.florins}"
    if action == "pass_bid":
        return "pass"
    if action == "remove":
        return f"remove {move.remove.tile}"
    if action == "start_player":
        return format_start(move.start_player.seat)
    raise NotationError("The move names no action.")
