"""Views and the terminal rendering of Medici: The Card Game. Nothing is hidden but the order
of the deck, so every viewer sees the same view. Approximate data stays marked: the
placeholder deck counts (G-A1) and the unsourced ship-reward tables of 2, 3, 5 and 6 players
(G-A2)."""

from __future__ import annotations

from tablelog.replay.core import Viewer
from tablelog.replay.games.medici_card_game import rules
from tablelog.replay.games.medici_card_game.components import UNVERIFIED_NOTE, CardKind
from tablelog.replay.games.medici_common.components import GOODS
from tablelog.replay.games.medici_common.views import (
    payout_lines,
    table_lines,
    tied_start_text,
    winners_line,
)
from tablelog.v1.medici_card_game_pb2 import (
    MediciCardGameCard,
    MediciCardGameGoodCount,
    MediciCardGamePayout,
    MediciCardGameSeatView,
    MediciCardGameUnseen,
    MediciCardGameView,
)


def card_message(kind: CardKind) -> MediciCardGameCard:
    return MediciCardGameCard(
        name=kind.name,
        good=GOODS[kind.good] if kind.good >= 0 else "",
        value=kind.value,
        icons=kind.icons,
        green_flag=kind.green_flag,
        takes_hold=kind.takes_hold,
    )


def view(state: rules.State) -> MediciCardGameView:
    r = state.rules
    kinds = r.deck.kinds
    phase = state.phase
    out = MediciCardGameView(
        round=state.round,
        market=[card_message(kinds[k]) for k in state.market],
        deck_size=state.deck_size,
        start_player=state.start,
        current_player=state.current,
        revealed_this_turn=state.revealed,
        final_turn=state.final_turn,
        game_over=phase == rules.OVER,
        deck_unverified=not r.deck.verified,
        deck_note="" if r.deck.verified else UNVERIFIED_NOTE,
        unseen=[
            MediciCardGameUnseen(card=k.name, count=c)
            for k, c in zip(kinds, state.unseen, strict=True)
        ],
        boxed=state.boxed,
        ship_rewards_approximate=r.ship_rewards_approximate,
        ship_rewards_note=rules.ship_rewards_note(r),
        ship_rewards=r.ship_rewards,
    )
    if phase == rules.REVEAL:
        out.pending_reveal = f"the card {r.players[state.current]} turned over"
    elif phase == rules.START:
        out.pending_reveal = tied_start_text(r.players, state.tied, f"round {state.round}")
    elif phase == rules.PLAY:
        out.awaiting = "flip or take" if rules.can_flip(state) else "take"
    for seat, name in enumerate(r.players):
        out.seats.append(
            MediciCardGameSeatView(
                name=name,
                florins=state.florins[seat],
                ship=[card_message(kinds[k]) for k in state.ships[seat]],
                ship_value=rules.ship_value(state, seat),
                hold_used=state.holds[seat],
                hold_capacity=r.capacity,
                full=rules.is_full(state, seat),
                warehouse=[
                    MediciCardGameGoodCount(good=g, icons=state.warehouse[seat][i])
                    for i, g in enumerate(GOODS)
                ],
                payouts=[
                    MediciCardGamePayout(round=w, label=label, florins=f)
                    for w, label, f in state.payouts[seat]
                ],
            )
        )
    return out


def render(v: MediciCardGameView) -> str:
    lines = [
        f"Medici: The Card Game - round {v.round} of 3" + (" - game over" if v.game_over else "")
    ]
    if v.deck_unverified:
        lines.append("NOTE: deck copy counts are UNVERIFIED placeholders (approximate deck).")
    rewards = "/".join(str(r) for r in v.ship_rewards)
    if v.ship_rewards_approximate:
        lines.append(
            f"NOTE: ship rewards {rewards} are UNSOURCED for {len(v.seats)} players "
            "(approximate, G-A2: only the 4-player table is sourced)."
        )
    market = " ".join(c.name for c in v.market) or "(empty)"
    lines.append(f"Deck: {v.deck_size} cards   Boxed: {v.boxed}")
    lines.append(f"Market (first .. last = position 1): {market}")
    header = ["seat", "florins", "hold", "value", "ship", "warehouse icons"]
    rows = []
    for i, s in enumerate(v.seats):
        marks = "*" if not v.game_over and not v.pending_reveal and i == v.current_player else " "
        hold = f"{s.hold_used}/{s.hold_capacity}" + (" full" if s.full else "")
        stock = " ".join(f"{g.good} {g.icons}" for g in s.warehouse if g.icons) or "-"
        ship = " ".join(c.name for c in s.ship) or "-"
        rows.append(
            [f"{marks}{i + 1} {s.name}", str(s.florins), hold, str(s.ship_value), ship, stock]
        )
    lines.extend(table_lines(header, rows))
    if v.game_over:
        lines.append(winners_line([s.name for s in v.seats], [s.florins for s in v.seats]))
    elif v.pending_reveal:
        lines.append(f"The table records {v.pending_reveal}.")
    else:
        who = v.seats[v.current_player].name
        extra = " (final turn of the round)" if v.final_turn else ""
        lines.append(f"{who} to {v.awaiting}{extra}; revealed this turn: {v.revealed_this_turn}")
    lines.extend(
        payout_lines(
            [(s.name, [(p.round, p.label, p.florins) for p in s.payouts], "") for s in v.seats],
            "r",
        )
    )
    return "\n".join(lines)


def hides_from(state: rules.State, viewer: Viewer) -> bool:
    """RULES.md §A3 step 1: nothing recorded is hidden (only the order of the face-down deck
    is secret, and no state records it), so no state hides anything from any viewer."""
    return False


def redact(state: rules.State, viewer: Viewer) -> rules.State:
    """RULES.md §A3 step 1: nothing recorded is hidden, so every viewer may know it all."""
    del viewer
    return state
