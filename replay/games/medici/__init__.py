"""Medici, the auction board game (Reiner Knizia), 3-6 players (2 in the 2016 edition).
Rules: RULES.md; notation: docs/notation/medici.md."""

from tablelog.replay.games.medici.game import Medici

GAME = Medici()

__all__ = ["GAME", "Medici"]
