"""A line of notation that names its mover: `Cleo: take u g k`, the form the shell and the
move lists print a move in, or `table: reveal 1.1` for the table's reveal.

The name is the recorder's word for who is moving, checked against whose decision it is
(NOT_YOUR_TURN when it is not theirs), so a move typed for one player is never recorded for
another. It is read here, once, for every client that sends notation (the shell, a piped
record, `tablelog move`, the web app's text box). Pure: no I/O."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final

from tablelog.replay.core import CHANCE, IllegalMove, NotYourTurn, clip, seats_named

TABLE_NAMES: Final = ("table", "the table")
"""The words that name the table (chance) as the mover."""

NAMED: Final = re.compile(r"\s*([^:\s][^:]*?)\s*:\s+(\S.*)", re.DOTALL)
"""A name, a colon and a space before the move. A colon with no space after it is part of
a move (Splendor's card codes read `1k0:g3`), never a name's end."""


def named_mover(text: str, players: Sequence[str]) -> tuple[int | None, str]:
    """The mover `text` names (a seat, CHANCE for the table, None when it names nobody)
    and the move after the name. A name that is no player of the game is refused: the
    line was meant for someone, and guessing whom is how a move lands on the wrong seat."""
    match = NAMED.fullmatch(text)
    if match is None:
        return None, text
    name, move = match[1], match[2]
    if name.casefold() in TABLE_NAMES:
        return CHANCE, move
    for seat, player in enumerate(players):
        if player.casefold() == name.casefold():
            return seat, move
    raise IllegalMove(
        "UNKNOWN_PLAYER",
        f"{clip(name)} is not a player of this game: the players are {seats_named(players)}.",
    )


def check_named_mover(named: int, to_move: int, players: Sequence[str]) -> None:
    """Refuse a line whose named mover is not the one to decide now (NOT_YOUR_TURN)."""
    if named == to_move:
        return

    def who(seat: int) -> str:
        return "the table" if seat == CHANCE else players[seat]

    if to_move == CHANCE:
        raise NotYourTurn(f"It is not {who(named)}'s turn: the table must reveal first.")
    if to_move < 0:
        return  # the game is over: the rules say so in their own words
    raise NotYourTurn(f"It is {who(to_move)}'s turn, not {who(named)}'s.")
