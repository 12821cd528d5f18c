"""Invariants checked after every move of random play (RULES.md §1, §6)."""

from __future__ import annotations

from typing import Any

from tablelog.replay.games.castello_methoni.rules import HOUSES, TOWERS, VILLAS, State


def total_ducats(state: State) -> int:
    return sum(state.ducats) + state.bank + sum(state.market_ducats)


def expected_total(state: State) -> int:
    from tablelog.replay.games.castello_methoni.rules import BANK_START, START_DUCATS

    return START_DUCATS[state.ctx.n] * state.ctx.n + BANK_START + sum(state.board.market_ducats)


def regions_from_scratch(state: State) -> list[tuple[frozenset[int], bool]]:
    """Every region of non-castle cells, and whether it is enclosed, computed naively."""
    board = state.board
    seen: set[int] = set()
    found = []
    for start in range(len(board.cell_ids)):
        if start in seen or state.cell_castle[start]:
            continue
        region = {start}
        stack = [start]
        while stack:
            cell = stack.pop()
            for other, edge in board.neighbours[cell]:
                if not (state.walls >> edge) & 1 and other not in region:
                    assert not state.cell_castle[other], "an open edge leads into a castle"
                    region.add(other)
                    stack.append(other)
        seen |= region
        enclosed = all(state.sea_walls[c] >= board.sea_edges[c] for c in region)
        found.append((frozenset(region), enclosed))
    return found


def check(before: Any, after: Any) -> None:
    state: State = after
    board, n = state.board, state.ctx.n
    assert total_ducats(state) == expected_total(state), "ducats not conserved"
    assert min(state.ducats) >= 0
    assert state.bank >= 0
    walls_on_board = bin(state.walls).count("1") + sum(state.sea_walls)
    assert walls_on_board + state.wall_supply == board.walls_by_players[n], "walls not conserved"
    live = list(state.live_castles())
    for seat in range(n):
        on_cells = sum(row[seat] for row in state.houses)
        in_castles = sum(c.houses[seat] for c in live)
        assert on_cells + in_castles + state.houses_left[seat] == HOUSES, "houses not conserved"
        villas = sum(c.villas[seat] for c in live)
        assert villas + state.villas_left[seat] == VILLAS, "villas not conserved"
        towers = sum(1 for c in live if c.owner == seat)
        assert towers + state.towers_left[seat] == TOWERS, "one tower per castle"
        for c in live:
            assert c.houses[seat] < 3 or state.villas_left[seat] == 0, "missed an upgrade"
    # Castles are exactly the enclosed regions: no open region is enclosed, castle cells agree.
    for region, enclosed in regions_from_scratch(state):
        assert not enclosed, f"region {sorted(region)} is enclosed but not a castle"
    for castle in live:
        for cell in castle.cells:
            assert state.cell_castle[cell] == castle.id
            assert not any(state.houses[cell]), "a positioned house inside a castle"
            assert state.sea_walls[cell] == board.sea_edges[cell], "castle open to the sea"
            for other, edge in board.neighbours[cell]:
                # Walls built inside a region before it closed stay inside the castle.
                if other not in castle.cells:
                    assert (state.walls >> edge) & 1, "castle border must be walled"
    assert sum(1 for c in state.cell_castle if c) == sum(len(c.cells) for c in live)
    if state.hands is not None:
        assert all(sum(h) == k for h, k in zip(state.hands, state.hand_sizes, strict=True))
        assert all(x >= 0 for h in state.hands for x in h)
    cards = sum(state.hand_sizes) + sum(state.discard) + state.draw_pile
    if state.hands is not None or state.phase != 0:
        assert cards == sum(board.deck) or state.phase in (0, 1), "cards not conserved"
