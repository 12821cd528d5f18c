"""Castello Methoni (Leo Colovini, Mandoo Games 2019): walls, castles, merges and markets on a
board given as data. Rules: RULES.md; notation: docs/notation/castello-methoni.md."""

from tablelog.replay.games.castello_methoni.game import CastelloMethoni

GAME = CastelloMethoni()

__all__ = ["GAME", "CastelloMethoni"]
