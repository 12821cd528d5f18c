"""Splendor (Space Cowboys, 2014), 2-4 players.

Rules: `RULES.md` (a copy of the rules reference). Notation: docs/notation/splendor.md.
"""

from tablelog.replay.games.splendor.game import Splendor

GAME = Splendor()

__all__ = ["GAME", "Splendor"]
