"""Mercado de Lisboa (1-4 players, with the solo campaign). Rules: RULES.md in this package."""

from tablelog.replay.games.mercado_de_lisboa.game import (
    MercadoDeLisboa,
    MercadoDeLisboaRecordedUnderV1,
)

GAME = MercadoDeLisboa()
EARLIER_RULES = (MercadoDeLisboaRecordedUnderV1(),)
"""The rules of earlier rules versions, for the games recorded under them."""

__all__ = ["EARLIER_RULES", "GAME", "MercadoDeLisboa", "MercadoDeLisboaRecordedUnderV1"]
