"""Move notation (docs/notation/castello-methoni.md).

    build mountain c3|c4 own c3 left c4    wall on c3|c4, own house on c3, left neighbour's on c4
    build sea a1|sea own a1                a sea edge: only the builder's house
    build sea c5|sea own c5 into c20       no tower left: the new castle joins the one at c20
    trade forest                           merge c20       stop       end
    redraw forest hill hill sea marsh      (table mode: the revealed hand; dealt mode: redraw)
    first p2       mission p2 m3       draw forest       (chance moves)

Seats are `own`, `left` (the next seat clockwise, seat + 1) and `right` (seat - 1) in a build,
`p1`..`p5` elsewhere; player names are accepted too. Canonical text is lowercase.
"""

from __future__ import annotations

from tablelog.replay.core import AmbiguousNotation, IllegalMove, NotationError
from tablelog.replay.games.castello_methoni.components import SEA
from tablelog.replay.games.castello_methoni.rules import (
    NO_CELL,
    PLAY,
    State,
    build_items,
    card_index,
    cell_index,
    check_bounds,
    closing_region,
    own_castles_beside,
    resolve_edge,
)
from tablelog.v1 import castello_methoni_pb2 as pb

CARD_SYNONYMS = {"market": SEA, "market/sea": SEA, "marketsea": SEA, "market-sea": SEA}
STOP_WORDS = {("stop",), ("stop", "merging"), ("done",), ("no", "merge"), ("nomerge",)}
END_WORDS = {("end",), ("end", "turn"), ("pass",)}


def _tokens(text: str) -> list[str]:
    return text.replace("|", " | ").replace(",", " ").lower().split()


def _card(state: State, token: str, text: str) -> str:
    token = CARD_SYNONYMS.get(token, token)
    try:
        return state.board.card_name(card_index(state.board, token))
    except IllegalMove as error:
        raise NotationError(error.message, text) from None


def _cell(state: State, token: str, text: str) -> int:
    try:
        return cell_index(state.board, token)
    except IllegalMove as error:
        raise NotationError(error.message, text) from None


def _seat(state: State, token: str, text: str, builder: bool = False) -> int:
    n, seat = state.ctx.n, state.current
    if builder:
        if token in ("own", "me", "self"):
            return seat
        if token == "left":
            return (seat + 1) % n
        if token == "right":
            return (seat - 1) % n
    if len(token) >= 2 and token[0] == "p" and token[1:].isdigit() and 1 <= int(token[1:]) <= n:
        return int(token[1:]) - 1
    matches = [i for i, name in enumerate(state.ctx.players) if name.strip().lower() == token]
    if len(matches) == 1:
        return matches[0]
    raise NotationError(f"{token!r} is not a seat (p1..p{n} or a player's name).", text)


def _who(state: State, seat: int) -> str:
    n, me = state.ctx.n, state.current
    if seat == me:
        return "own"
    if seat == (me + 1) % n:
        return "left"
    if seat == (me - 1) % n:
        return "right"
    return f"p{seat + 1}"


def parse(text: str, state: State) -> pb.CastelloMethoniMove:
    if not isinstance(text, str):
        raise NotationError("A move is text.", str(text))
    words = _tokens(text)
    if not words:
        raise NotationError("Empty move.", text)
    head, rest = words[0], words[1:]
    if tuple(words) in STOP_WORDS:
        return pb.CastelloMethoniMove(stop_merging=pb.CastelloMethoniStopMerging())
    if tuple(words) in END_WORDS:
        return pb.CastelloMethoniMove(end_turn=pb.CastelloMethoniEndTurn())
    if head == "build":
        return _parse_build(rest, state, text)
    if head == "trade" and len(rest) == 1:
        return pb.CastelloMethoniMove(
            trade=pb.CastelloMethoniTrade(card=_card(state, rest[0], text))
        )
    if head == "merge" and len(rest) == 1:
        index = _cell(state, rest[0], text)
        castle = state.cell_castle[index]
        if castle and state.castles[castle - 1] is not None:
            index = min(state.castle(castle).cells)  # canonical: the castle's first cell
        return pb.CastelloMethoniMove(merge=pb.CastelloMethoniMerge(cell=state.board.names[index]))
    if head == "redraw":
        cards = sorted((_card(state, t, text) for t in rest), key=lambda c: _card_order(state, c))
        return pb.CastelloMethoniMove(redraw=pb.CastelloMethoniRedraw(revealed=cards))
    if head == "first" and len(rest) == 1:
        seat = _seat(state, rest[0], text)
        return pb.CastelloMethoniMove(first_player=pb.CastelloMethoniFirstPlayer(seat=seat))
    if head == "mission" and len(rest) == 2:
        seat = _seat(state, rest[0], text)
        names = [m.name for m in state.board.missions]
        if rest[1] not in names:
            raise NotationError(
                f"There is no mission {rest[1]!r}; they are {', '.join(names)}.", text
            )
        return pb.CastelloMethoniMove(mission=pb.CastelloMethoniMission(seat=seat, mission=rest[1]))
    if head == "draw" and len(rest) == 1:
        return pb.CastelloMethoniMove(draw=pb.CastelloMethoniDraw(card=_card(state, rest[0], text)))
    raise NotationError(
        "Not a Castello Methoni move: try 'build <card> <cell>|<cell> own <cell> left <cell>', "
        "'trade <card>', 'merge <cell>', 'stop', 'end' or 'redraw'.",
        text,
    )


def _card_order(state: State, name: str) -> int:
    return card_index(state.board, name)


def _parse_build(words: list[str], state: State, text: str) -> pb.CastelloMethoniMove:
    """`build <card> <a>|<b> [<who> <cell>]... [other <who>]`; missing houses are completed
    when only one legal placement fits, otherwise the candidates are listed."""
    if len(words) < 4 or words[2] != "|":
        raise NotationError("A build reads 'build <card> <cell>|<cell or sea> ...'.", text)
    board = state.board
    card = _card(state, words[0], text)
    first, second = (words[3], words[1]) if words[1] == SEA else (words[1], words[3])
    try:
        a, b, key = resolve_edge(state, first, second)
    except IllegalMove as error:
        raise NotationError(error.message, text) from None
    sides = (a,) if b == NO_CELL else (a, b)
    placements: list[tuple[int, int]] = []
    rest = words[4:]
    into = ""
    if "into" in rest:
        at = rest.index("into")
        if at + 1 >= len(rest):
            raise NotationError(
                "'into' names a cell of the castle to merge into: 'into c20'.", text
            )
        into = _canonical_into(state, key, board.names[_cell(state, rest[at + 1], text)])
        rest = rest[:at] + rest[at + 2 :]
    if len(rest) % 2:
        raise NotationError("Houses are written as pairs: '<own|left|right> <cell>'.", text)
    for who, where in zip(rest[::2], rest[1::2], strict=True):
        if who == "other":
            seat = _seat(state, where, text, builder=True)
            used = {c for _, c in placements}
            free = [c for c in sides if c not in used]
            if len(free) != 1:
                raise NotationError("'other' needs exactly one house placed before it.", text)
            placements.append((seat, free[0]))
            continue
        seat = _seat(state, who, text, builder=True)
        cell = _cell(state, where, text)
        placements.append((seat, cell))
    given = {(s, board.names[c]) for s, c in placements}

    def literal() -> pb.CastelloMethoniMove:
        """The build as written, for the rules to refuse (made only then: it is rare)."""
        return pb.CastelloMethoniMove(
            build=pb.CastelloMethoniBuild(
                card=card,
                cell=board.names[a],
                other=SEA if b == NO_CELL else board.names[b],
                houses=[
                    pb.CastelloMethoniHouse(seat=s, cell=board.names[c]) for s, c in placements
                ],
                into=into,
            )
        )

    if state.phase != PLAY or state.cards_played >= 2:
        return literal()
    candidates = [
        item
        for item in build_items(state, [card_index(board, card)], only_edge=key)
        if isinstance(item[4], tuple) and given <= set(item[4]) and item[5] == into
    ]
    exact = [item for item in candidates if isinstance(item[4], tuple) and set(item[4]) == given]
    chosen = exact or candidates
    if len(chosen) == 1:
        near, far, houses = chosen[0][2], chosen[0][3], chosen[0][4]
        assert isinstance(houses, tuple)
        return pb.CastelloMethoniMove(
            build=pb.CastelloMethoniBuild(
                card=card,
                cell=str(near),
                other=str(far),
                houses=[pb.CastelloMethoniHouse(seat=s, cell=c) for s, c in houses],
                into=into,
            )
        )
    if len(chosen) > 1:
        texts = [_format_build_item(state, item) for item in chosen]
        raise AmbiguousNotation(
            f"{text!r} fits {len(chosen)} legal builds: say where the houses go.", text, texts
        )
    return literal()


def _canonical_into(state: State, key: int, into: str) -> str:
    """RULES.md §6.4: `into` as a castle's first cell, or "" for the castle the build merges
    into anyway (the lowest id). A cell that is no such choice stays for the rules to refuse."""
    region = closing_region(state, key)
    if region is None or state.towers_left[state.current]:
        return into
    target = state.cell_castle[cell_index(state.board, into)]
    beside = own_castles_beside(state, region)
    if target not in beside:
        return into
    return "" if target == beside[0] else state.board.names[min(state.castle(target).cells)]


def _format_build_item(state: State, item: tuple[object, ...]) -> str:
    _, card, cell, other, houses, into = item
    assert isinstance(houses, tuple)
    placed = " ".join(f"{_who(state, s)} {c}" for s, c in houses)
    merged = f" into {into}" if into else ""
    return f"build {card} {cell}|{other} {placed}".strip() + merged


def format_move(move: pb.CastelloMethoniMove, state: State) -> str:
    check_bounds(state, move)
    kind = move.WhichOneof("action")
    if kind == "build":
        m = move.build
        placed = " ".join(f"{_who(state, h.seat)} {h.cell.lower()}" for h in m.houses)
        merged = f" into {m.into.lower()}" if m.into else ""
        return (
            f"build {m.card.lower()} {m.cell.lower()}|{m.other.lower()} {placed}".strip() + merged
        )
    if kind == "trade":
        return f"trade {move.trade.card.lower()}"
    if kind == "merge":
        return f"merge {move.merge.cell.lower()}"
    if kind == "stop_merging":
        return "stop"
    if kind == "end_turn":
        return "end"
    if kind == "redraw":
        return " ".join(["redraw", *(c.lower() for c in move.redraw.revealed)])
    if kind == "first_player":
        return f"first p{move.first_player.seat + 1}"
    if kind == "mission":
        return f"mission p{move.mission.seat + 1} {move.mission.mission.lower()}"
    if kind == "draw":
        return f"draw {move.draw.card.lower()}"
    return "?"
