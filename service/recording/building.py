"""Building events on a game's position: numbering each new event, applying it through the
fold (so a refused move changes nothing), and dealing chance moves from dealt mode's seed.
Pure: nothing here reads or writes the store."""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Sequence

from google.protobuf.message import Message

from tablelog.replay import fold as folding
from tablelog.replay.core import CHANCE, DEALT, TERMINAL, HistoryError
from tablelog.v1 import events_pb2, game_pb2

ENDING_BODIES = frozenset({"game_ended", "game_abandoned"})
"""The events after which a game is over (and dealt mode's seed revealed)."""


DEALING_BY_REVISION = 0
"""Dealt games recorded before `GameCreated.dealing_scheme` existed: the outcome of the
move recorded at revision r is drawn with the ticket of r. Kept so those games still
verify; a move taken back and played again at a later revision could draw another card."""
DEALING_BY_COUNT = 1
"""The k-th chance move in effect (setup reveals included) is drawn with a ticket of k and
of the outcomes it is drawn from: an outcome depends only on the seed and on what has been
dealt, so taking a move back and playing it again deals the same card (nothing can be
fished by undoing). The outcomes are part of the key so that draws from different decks at
the same k are independent: with k alone, looking at a blind level-1 card (ticket mod 40)
and taking it back would tell something of the level-2 card the same ticket gives (mod 30:
their common factor 10)."""
DEALING_SCHEME = DEALING_BY_COUNT
"""The scheme new dealt games record."""


def deal_key(position: folding.Position, outcomes: Sequence[tuple[Message, int]]) -> bytes:
    """What the chance move after `position`, drawn from `outcomes` (the game's
    `chance_outcomes` there), is drawn by under the game's scheme."""
    scheme = position.table.created.dealing_scheme
    if scheme == DEALING_BY_COUNT:
        drawn_from = hashlib.sha256()
        for outcome, weight in outcomes:
            text = outcome.SerializeToString(deterministic=True)
            drawn_from.update(len(text).to_bytes(4, "big") + text + weight.to_bytes(4, "big"))
        number = (position.chance_count + 1).to_bytes(8, "big")
        return b"tablelog/deal/count/" + number + drawn_from.digest()
    if scheme == DEALING_BY_REVISION:
        return b"tablelog/deal/" + (position.revision + 1).to_bytes(8, "big")
    raise HistoryError(
        "DEALING_SCHEME", f"This game names dealing scheme {scheme}, which this server lacks."
    )


def deal_ticket(seed: bytes, key: bytes, total: int) -> int:
    """The ticket a dealt chance move is drawn with: HMAC-SHA256 of its `deal_key` under the
    seed, reduced to the outcomes' total weight. Deterministic, so VerifyGame re-draws
    every dealt outcome once the seed is revealed."""
    digest = hmac.new(seed, key, "sha256").digest()
    return int.from_bytes(digest, "big") % total


def with_defaults(
    given: Sequence[game_pb2.ComponentFile], defaults: Sequence[game_pb2.ComponentFile]
) -> list[game_pb2.ComponentFile]:
    """The component files a new game records: each given file replaces the default of the
    same name, and the other defaults are kept, so a stored game never depends on the data
    files packaged with a later version of its rules. Unknown names are left for the game
    to refuse."""
    replacing = {component.name: component for component in given}
    kept = [replacing.pop(default.name, default) for default in defaults]
    return kept + list(replacing.values())


def next_event(position: folding.Position, **body: Message) -> events_pb2.Event:
    """An event with `body`, numbered to follow `position`."""
    return events_pb2.Event(sequence=position.sequence + 1, **body)  # type: ignore[arg-type]


def push(
    position: folding.Position, events: list[events_pb2.Event], event: events_pb2.Event
) -> folding.Position:
    """Set the event's revision, apply it through the fold, keep it."""
    body = event.WhichOneof("body")
    event.revision = position.revision + (1 if body in folding.HISTORY_BODIES else 0)
    after = folding.advance(position, event)
    events.append(event)
    return after


def deal_and_end(
    position: folding.Position, events: list[events_pb2.Event], seed: bytes | None
) -> folding.Position:
    """Dealt mode: the chance moves that follow, drawn from the seed. Then GameEnded
    when the game is over (revealing the seed)."""
    game = position.game
    while position.table.mode == DEALT and position.to_move() == CHANCE:
        if seed is None:
            raise HistoryError("NO_SEED", "This dealt game has lost its seed.")
        outcomes = game.chance_outcomes(position.state)
        total = sum(weight for _, weight in outcomes)
        ticket = deal_ticket(seed, deal_key(position, outcomes), total)
        inner = folding.pick_outcome(outcomes, ticket)
        recorded = events_pb2.MoveRecorded(
            move=position.table.wrap(inner),
            notation=game.format(inner, position.state),
            dealt=True,
        )
        position = push(position, events, next_event(position, move_recorded=recorded))
    if position.status is folding.Status.IN_PROGRESS and position.to_move() == TERMINAL:
        ended = events_pb2.GameEnded(result=game.result(position.state), seed=seed or b"")
        position = push(position, events, next_event(position, game_ended=ended))
    return position
