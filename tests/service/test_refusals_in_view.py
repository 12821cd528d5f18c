"""Refusals worded from what the caller may see (`tablelog.service.recording.refusals`).

The property: two full states a spectator cannot tell apart (the same spectator's view,
different hidden components: a blind reserve, a card in a hand, a mission, a tile removed
unseen, hidden coins) give a spectator-view caller the same refusal for every move both
refuse. A hidden component is thereby answered as an absent one: the twin holds an absent
component where the state holds the hidden one. Random dealt games of all five games,
stopped at a random move; the candidates are every legal move of the state, of its twin
and of the state as the spectator may know it, typed and as notation, plus (Splendor) a
purchase naming each card, hidden or absent. The same candidates are then inserted by
AmendMove (a recorder may amend) where the state and its twin stand, before a move played
next, which is checked again after them: the refusals, of the move put in or naming the
next move as one that no longer applies, are compared alike.

And over the API (the issue's case): a recorder typing `buy <card>` for the seat that
reserved blind, in RecordMove or in AmendMove (replacing a move, or inserting one), gets the
same words for the hidden card as for a card still in the deck."""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import itertools
import random
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import grpc
import pytest
from google.protobuf.message import Message
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tablelog.replay import fold as folding
from tablelog.replay.core import DEALT, SPECTATOR, TERMINAL, RulesError
from tablelog.replay.games.splendor.rules import State as SplendorState
from tablelog.service.api.server import BackgroundServer
from tablelog.service.errors import AmendRefused
from tablelog.service.recording.amending import amended_in_view
from tablelog.service.recording.refusals import worded_for
from tablelog.service.store.embedded import EmbeddedRedis
from tablelog.v1 import splendor_pb2
from tablelog_client import Client, TablelogError
from tests.service.helpers import CHAIN, OWNER_TOKEN
from tests.support.play import choose, new_position

Twin = Callable[[Any, random.Random], Any]


def splendor_twin(state: Any, rng: random.Random) -> Any:
    """A blind reserve of another seat swapped for an unseen card of its level."""
    hidden = [
        (seat, index, card, level)
        for seat, player in enumerate(state.players)
        for index, (card, level, blind) in enumerate(player.reserved)
        if blind and card
    ]
    seat, index, card, level = rng.choice(hidden)
    absent = [
        c.id
        for c in _cards(state)
        if c.level == level and state.unseen >> c.id & 1 and c.id != card
    ]
    if not absent:
        return None
    other = rng.choice(absent)
    player = state.players[seat]
    reserved = list(player.reserved)
    reserved[index] = (other, level, True)
    players = list(state.players)
    players[seat] = dataclasses.replace(player, reserved=tuple(reserved))
    unseen = (state.unseen | 1 << card) & ~(1 << other)
    return dataclasses.replace(state, players=tuple(players), unseen=unseen)


def _cards(state: Any) -> list[Any]:
    """Every card of a Splendor game's components (the table is indexed by id)."""
    return [c for c in state.rules.components.cards if c is not None]


def methoni_twin(state: Any, rng: random.Random) -> Any:
    """A card in a seat's hand swapped for one in the draw pile, or a mission for one
    nobody holds."""
    from tablelog.replay.games.castello_methoni.rules import draw_composition

    if state.hands is not None and rng.random() < 0.7:
        pile = draw_composition(state)
        held = [
            (seat, kind)
            for seat, hand in enumerate(state.hands)
            for kind, n in enumerate(hand)
            if n
        ]
        spare = [kind for kind, n in enumerate(pile) if n > 0]
        if held and spare:
            seat, kind = rng.choice(held)
            other = rng.choice([k for k in spare if k != kind] or spare)
            hand = list(state.hands[seat])
            hand[kind] -= 1
            hand[other] += 1
            hands = list(state.hands)
            hands[seat] = tuple(hand)
            return state._replace(hands=tuple(hands))
    assigned = [seat for seat, m in enumerate(state.missions) if m >= 0]
    free = [m for m in range(len(state.board.missions)) if m not in state.missions]
    if not assigned or not free:
        return None
    seat = rng.choice(assigned)
    missions = list(state.missions)
    missions[seat] = rng.choice(free)
    return state._replace(missions=tuple(missions))


def mercado_twin(state: Any, rng: random.Random) -> Any:
    """Another amount of hidden coins for one seat."""
    seat = rng.randrange(state.rules.players)
    ledger = list(state.ledger)
    row = list(ledger[seat])
    row[0] += rng.choice([-3, -1, 1, 2, 5, 20])
    ledger[seat] = tuple(row)
    return dataclasses.replace(state, ledger=tuple(ledger))


def medici_twin(state: Any, rng: random.Random) -> Any:
    """A tile removed unseen swapped for another kind still in the bag."""
    index = rng.randrange(len(state.removed))
    kind = state.removed[index]
    others = [k for k, n in enumerate(state.unseen) if n > 0 and k != kind]
    if not others:
        return None
    other = rng.choice(others)
    unseen = list(state.unseen)
    unseen[kind] += 1
    unseen[other] -= 1
    removed = list(state.removed)
    removed[index] = other
    return dataclasses.replace(state, unseen=tuple(unseen), removed=tuple(removed))


TWINS: dict[str, tuple[int, Twin | None]] = {
    "splendor": (3, splendor_twin),
    "castello_methoni": (3, methoni_twin),
    "mercado_de_lisboa": (2, mercado_twin),
    "medici": (3, medici_twin),
    "medici_card_game": (3, None),  # nothing recorded is hidden (RULES.md §A3)
}


def hidden_position(name: str, seed: int, stop: float) -> folding.Position | None:
    """A dealt game played at random until something is hidden from the spectator, then
    up to `stop` x 40 moves on, at a player's turn while something is still hidden; None
    when the game gives none within its first 300 moves."""
    players, _twin = TWINS[name]
    rng = random.Random(seed)
    position = new_position(name, players, mode=DEALT)
    game = position.game
    found: folding.Position | None = None
    further = int(stop * 40)
    for _ in range(300):
        if game.to_move(position.state) == TERMINAL:
            break
        inner = choose(game, position.state, rng)
        position = folding.record(position, position.table.wrap(inner), "")
        if game.to_move(position.state) >= 0 and game.hides_from(position.state, SPECTATOR):
            found = position
            if further <= 0:
                break
        if found is not None:
            further -= 1
    return found


def candidates(position: folding.Position, twin: Any) -> Iterator[Message | str]:
    game, state = position.game, position.state
    seen: set[bytes] = set()
    for source in (state, twin, game.redact(state, SPECTATOR)):
        for move in game.legal_moves(source):
            key = move.SerializeToString(deterministic=True)
            if key in seen or game.is_chance(move):
                continue
            seen.add(key)
            yield move
            with contextlib.suppress(RulesError):
                yield game.format(move, source)
    if isinstance(state, SplendorState):
        for card in _cards(state):
            yield splendor_pb2.SplendorMove(buy=splendor_pb2.SplendorBuy(card=card.id))
            yield f"buy {card.text}"


def refusal_for_spectator(position: folding.Position, move: Message | str) -> str | None:
    """What the service tells a spectator-view caller for `move` (None: accepted), as
    `tablelog.service.recording.usecases.Commands.record_move` checks it."""

    def check(at: folding.Position) -> Any:
        inner = at.game.parse(move, at.state) if isinstance(move, str) else move
        return folding.check_move(at, at.table.wrap(inner))

    try:
        check(position)
    except RulesError as refused:
        told = worded_for(SPECTATOR, position, refused, check)
        return f"{type(told).__name__} {told.code}: {told}"
    return None


AMENDED_CANDIDATES = 40
"""How many of an example's candidates are also inserted by AmendMove."""


def amendment_refusal_for_spectator(
    position: folding.Position, revision: int, move: Message | str
) -> tuple[str, str] | None:
    """What the service tells a spectator-view caller (a recorder) inserting `move` before
    the move named `revision` (None: accepted), as `tablelog.service.recording.amending.
    Amending.amend_move` checks it: the move put in ("put", the refusal), then the moves
    after it ("later")."""
    typed = None if isinstance(move, str) else position.table.wrap(move)
    try:
        amended_in_view(
            position,
            folding.INSERT,
            revision,
            move=typed,
            notation=move if isinstance(move, str) else None,
            seat=None,
            viewer=SPECTATOR,
            drop_tail=False,
        )
    except RulesError as refused:
        return "put", f"{type(refused).__name__} {refused.code}: {refused}"
    except AmendRefused as refused:
        return "later", f"{refused.reason}: {refused} {sorted(refused.metadata.items())}"
    return None


@pytest.mark.parametrize("name", sorted(TWINS))
@settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(seed=st.integers(0, 10_000), stop=st.floats(0, 1), twin_seed=st.integers(0, 1000))
def test_hidden_components_are_refused_as_absent_ones(
    name: str, seed: int, stop: float, twin_seed: int
) -> None:
    position = hidden_position(name, seed, stop)
    make_twin = TWINS[name][1]
    if make_twin is None:
        assert position is None  # the game hides nothing, so no refusal can tell
        return
    if position is None:
        return
    game = position.game
    twin_state = make_twin(position.state, random.Random(twin_seed))
    if twin_state is None:
        return
    twin = dataclasses.replace(position, state=twin_state)
    # The twin is one the spectator cannot tell from the state.
    assert game.view(twin_state, SPECTATOR) == game.view(position.state, SPECTATOR)
    tried = list(candidates(position, twin_state))
    for move in tried:
        here = refusal_for_spectator(position, move)
        there = refusal_for_spectator(twin, move)
        if here is not None and there is not None:
            assert here == there, f"{name} {move!r}: {here} / {there}"
    # AmendMove (a recorder may amend): moves of the same candidates (a sample: an
    # amendment costs about three checks of a move) inserted where the state and its twin
    # stand, before a move played next, which is then checked again after them.
    rng = random.Random(twin_seed)
    nxt = choose(game, position.state, rng)
    envelope = position.table.wrap(nxt)
    notation = game.format(nxt, position.state)
    try:
        after = folding.record(position, envelope, notation)
        after_twin = folding.record(twin, envelope, notation)
    except RulesError:
        return  # the next move tells the twins apart (it buys the hidden card)
    if game.view(after.state, SPECTATOR) != game.view(after_twin.state, SPECTATOR):
        return
    for move in rng.sample(tried, min(len(tried), AMENDED_CANDIDATES)):
        amended_here = amendment_refusal_for_spectator(after, after.revision, move)
        amended_there = amendment_refusal_for_spectator(after_twin, after.revision, move)
        # A move put in that the full state accepts is taken, as RecordMove records it (it
        # happened at the table): its refusal then names the next move, if that no longer
        # applies. Refusals of the same kind are compared.
        if amended_here and amended_there and amended_here[0] == amended_there[0]:
            assert amended_here == amended_there, f"{name} amend {move!r}"


def test_the_full_states_words_told_the_hidden_card_apart() -> None:
    """Why the property needs `worded_for`: in the full state's words (main's), a seat's
    own blind reserve is refused as unaffordable, a card in the deck as not available; in
    the spectator's they are refused alike, and the comparisons of the property run."""
    for seed, stop in itertools.product(range(30), (0.025, 0.05)):
        position = hidden_position("splendor", seed, stop)
        if position is None:
            continue
        state = position.state
        mine = [c for c, _lv, blind in state.players[state.current].reserved if blind and c]
        if not mine:
            continue
        comps = state.rules.components
        hidden = comps.card(mine[0])
        absent = next(
            c
            for c in _cards(state)
            if c.level == hidden.level and state.unseen >> c.id & 1 and c.id != hidden.id
        )
        words = {}
        for card in (hidden, absent):
            text = f"buy {card.text}"
            full = _refusal(position, text)
            if full is None:
                break  # affordable: bought at the table, nothing to compare
            told = refusal_for_spectator(position, text)
            assert told is not None
            words[card.id] = (full.code, told.split(":")[0])
        else:
            assert words[hidden.id][0] != words[absent.id][0]  # the full state tells apart
            assert words[hidden.id][1] == words[absent.id][1]  # the spectator's does not
            return
    pytest.fail("no seed gave a current seat an unaffordable blind reserve")


def _refusal(position: folding.Position, text: str) -> RulesError | None:
    try:
        folding.check_move(position, position.table.wrap(position.game.parse(text, position.state)))
    except RulesError as refused:
        return refused
    return None


# Over the API: the case, as a recorder.


@pytest.fixture(scope="module")
def served(embedded_redis: EmbeddedRedis) -> Iterator[BackgroundServer]:
    running = BackgroundServer(embedded_redis.url, chain=CHAIN, owner_token=OWNER_TOKEN).start()
    yield running
    running.stop()


def _refused(call: Callable[[], object]) -> TablelogError:
    with pytest.raises(TablelogError) as info:
        call()
    return info.value


@dataclasses.dataclass(frozen=True)
class BlindReserve:
    """A 2-player dealt Splendor game in which Ann reserved a level-3 card blind."""

    recorder_token: str
    game_id: str
    blind: int  # the card she holds, which only the full view shows
    blind_text: str
    deck: list[Any]  # level 3, not in the market: any of them could be hers


def _blind_reserve(owner: Client, *moves: str) -> tuple[BlindReserve, Any]:
    """Ann reserves from the level-3 deck, Bob takes; then `moves`. Returns the game and
    the last move's answer."""
    member = owner.add_member(f"rita-{uuid.uuid4().hex[:6]}", "recorder")
    recorder_token = owner.create_token(member.member_id).token
    game = owner.create_game("splendor", ["Ann", "Bob"], mode="dealt")
    version = game.version
    for move in ("reserve 3.deck", "take w u g", *moves):
        answer = owner.record(game.game_id, move, expected_version=version)
        version = answer.game.version
    full = owner.state(game.game_id, full=True).view.splendor
    blind = full.players[0].reserved[0].card.id
    assert blind  # the owner sees it
    market = {c.id for row in full.market for c in row.slots}
    cards = _cards(new_position("splendor", 2).state)
    reserve = BlindReserve(
        recorder_token=recorder_token,
        game_id=game.game_id,
        blind=blind,
        blind_text=next(c.text for c in cards if c.id == blind),
        deck=[c for c in cards if c.level == 3 and c.id not in market],
    )
    return reserve, answer


def test_a_recorder_gets_the_same_words_for_a_blind_reserve_as_for_a_deck_card(
    served: BackgroundServer,
) -> None:
    """Main told the hidden card BUY_UNAFFORDABLE ("needs ... you are N short") and every
    card still in the deck BUY_CARD_NOT_AVAILABLE."""
    with Client(served.target, token=OWNER_TOKEN, timeout=30) as owner:
        game, last = _blind_reserve(owner)
        head = last.game.version
        # The owner (the full view) is told the truth about the hidden card.
        told = _refused(
            lambda: owner.record(game.game_id, f"buy {game.blind_text}", expected_version=head)
        )
        assert told.metadata.get("rule") == "BUY_UNAFFORDABLE"
    rules = {}
    with Client(served.target, token=game.recorder_token, timeout=30) as recorder:
        for card in game.deck:
            text = f"buy {card.text}"
            refused = _refused(
                functools.partial(recorder.record, game.game_id, text, expected_version=head)
            )
            assert refused.code is grpc.StatusCode.FAILED_PRECONDITION
            rules[card.id] = refused.metadata.get("rule")
    assert game.blind in rules
    assert len(set(rules.values())) == 1, rules


@pytest.mark.parametrize("change", ["replace", "insert"])
def test_a_recorder_amending_gets_the_same_words_for_a_blind_reserve_as_for_a_deck_card(
    served: BackgroundServer, change: str
) -> None:
    """AmendMove checked the move it puts in against the full state: a recorder replacing
    Ann's move (or inserting one before it) with `buy <card>` was told BUY_UNAFFORDABLE for
    the card she reserved blind and BUY_CARD_NOT_AVAILABLE for every card still in the deck
    (failed before AmendMove's refusals were worded from the caller's view). Now each is
    refused as the view has it: any of those cards could be her blind reserve."""
    with Client(served.target, token=OWNER_TOKEN, timeout=30) as owner:
        game, anns = _blind_reserve(owner, "take w u k")
        (target,) = [e.revision for e in anns.events if e.move_recorded.notation == "take w u k"]
        head = anns.game.version
        # The owner (the full view) is told the truth about the hidden card.
        told = _refused(
            lambda: owner.amend(
                game.game_id, target, f"buy {game.blind_text}", change=change, expected_version=head
            )
        )
        assert told.metadata.get("rule") == "BUY_UNAFFORDABLE"
    answers: dict[int, tuple[object, ...]] = {}
    with Client(served.target, token=game.recorder_token, timeout=30) as recorder:
        for card in game.deck:
            refused = _refused(
                functools.partial(
                    recorder.amend,
                    game.game_id,
                    target,
                    f"buy {card.text}",
                    change=change,
                    expected_version=head,
                )
            )
            # The words name the card and what it costs, which everyone may know; that
            # they are the words of the view is the property test's to hold.
            answers[card.id] = (refused.code, refused.reason, refused.metadata.get("rule"))
        assert recorder.get_game(game.game_id).version == head  # refused: nothing appended
    assert game.blind in answers
    assert len(set(answers.values())) == 1, {answers[game.blind]} | set(answers.values())
