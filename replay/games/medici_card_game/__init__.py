"""Medici: The Card Game (Reiner Knizia; Grail Games 2017), 2-6 players. Rules: RULES.md;
notation: docs/notation/medici-card-game.md."""

from tablelog.replay.games.medici_card_game.game import MediciCardGame

GAME = MediciCardGame()

__all__ = ["GAME", "MediciCardGame"]
