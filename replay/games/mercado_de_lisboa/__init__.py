"""Mercado de Lisboa (1-4 players, with the solo campaign). Rules: RULES.md in this package."""

from replay.games.mercado_de_lisboa.game import MercadoDeLisboa

GAME = MercadoDeLisboa()

__all__ = ["GAME", "MercadoDeLisboa"]
