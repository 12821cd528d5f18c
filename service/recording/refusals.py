"""Refusals worded from what the caller may see.

The service checks a move against the game's full state (it folds everything recorded),
so the rules' words for a refused move may name what the caller's view hides: a recorder
(the spectator's view of a dealt game) typing `buy <card>` for the seat that reserved that
card blind was told "needs ... you are 5 short", and "is neither in the market nor among
your reserved cards" for every other card, so forty tries found the hidden card.

So a move refused to a caller whose view hides something (`Game.hides_from`) is checked
again in the state as that caller may know it (`Game.redact`: what it may not see put
back among the unnamed components), and the caller gets that check's refusal: a function
of its view alone. When the move would pass in the caller's view and is refused only by
what it may not see, the caller gets one refusal that names nothing (reason ILLEGAL_MOVE,
rule `HIDDEN_INFORMATION`): the same words whatever the hidden components are.

A move the full state accepts is recorded as always: it happened at the table, and what it
reveals (a blind reserve bought) is public from then on.

RecordMove's refusals are worded here (`tablelog.service.recording.usecases`), and
AmendMove's (`tablelog.service.recording.amending.amended_in_view`): the move an amendment
puts in, checked in the position before the amended move, and the rule a later move it
breaks no longer meets, checked in the position before that move."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from tablelog.replay import fold as folding
from tablelog.replay.core import FULL, IllegalMove, RulesError, Viewer

HIDDEN_RULE = IllegalMove(
    "HIDDEN_INFORMATION",
    "This move cannot be recorded: it breaks a rule about something your view of the game "
    "does not show (another player's hidden cards, tiles, mission or coins).",
)
"""What a caller is told when only what it may not see refuses its move."""


def worded_for(
    viewer: Viewer,
    position: folding.Position,
    refused: RulesError,
    check: Callable[[folding.Position], Any],
) -> RulesError:
    """The refusal `viewer` is told for a move the rules refused (`refused`) at
    `position`: `refused` itself when the position hides nothing from `viewer`, else the
    refusal `check` (the same check, repeated on another position) meets in the position
    as `viewer` may know it, or `HIDDEN_RULE` when there it meets none."""
    game = position.game
    if viewer is FULL or not game.hides_from(position.state, viewer):
        return refused
    seen = dataclasses.replace(position, state=game.redact(position.state, viewer))
    try:
        check(seen)
    except RulesError as in_view:
        return in_view
    except Exception:  # a state the rules never meet: nothing to tell
        return HIDDEN_RULE
    return HIDDEN_RULE
