"""Find a game by name. Every package under `replay/games/` that exposes `GAME` is a game."""

from __future__ import annotations

import importlib
import pkgutil
from functools import cache
from typing import Any

from tablelog.replay import games
from tablelog.replay.core import Game, InvalidSetup
from tablelog.v1 import game_pb2


@cache
def all_games() -> dict[str, Game[Any, Any]]:
    """Every registered game, by registry name, in name order."""
    found: dict[str, Game[Any, Any]] = {}
    for module in pkgutil.iter_modules(games.__path__):
        package = importlib.import_module(f"{games.__name__}.{module.name}")
        game: Game[Any, Any] | None = getattr(package, "GAME", None)
        if game is not None:
            found[game.name] = game
    return dict(sorted(found.items()))


def find_game(name: str) -> Game[Any, Any]:
    """The game registered as `name` (case and `_`/`-` are forgiven)."""
    key = name.strip().lower().replace("_", "-")
    known = all_games()
    if key not in known:
        raise InvalidSetup(
            "UNKNOWN_GAME",
            # Clipped: the name is a caller's text, and refusals never echo it in full.
            f"There is no game called {name[:40]!r}; known games: {', '.join(known)}.",
        )
    return known[key]


@cache
def _earlier_rules() -> dict[tuple[str, str], Game[Any, Any]]:
    """Games under an earlier rules version (a package's `EARLIER_RULES`), by (name, version)."""
    found: dict[tuple[str, str], Game[Any, Any]] = {}
    for module in pkgutil.iter_modules(games.__path__):
        package = importlib.import_module(f"{games.__name__}.{module.name}")
        earlier: tuple[Game[Any, Any], ...] = getattr(package, "EARLIER_RULES", ())
        for game in earlier:
            found[game.name, game.rules_version] = game
    return found


def rules_recorded_under(game: Game[Any, Any], rules_version: str) -> Game[Any, Any]:
    """`game` under the rules a game was recorded with: the current rules, or the earlier
    version the game kept (a rules change that alters the outcome of a recorded history gets
    a new version; games recorded before it keep folding as they did). An unknown version
    gives the current rules; the fold then refuses it."""
    if not rules_version or rules_version == game.rules_version:
        return game
    return _earlier_rules().get((game.name, rules_version), game)


def describe(game: Game[Any, Any]) -> game_pb2.GameInfo:
    """The game's metadata as clients see it (`ListGameTypes`)."""
    return game_pb2.GameInfo(
        name=game.name,
        title=game.title,
        min_players=game.min_players,
        max_players=game.max_players,
        modes=list(game.modes),
        options=[
            game_pb2.OptionInfo(name=o.name, description=o.description, default_value=o.default)
            for o in game.option_docs
        ],
        rules_version=game.rules_version,
        notation_doc=game.notation_doc,
    )
