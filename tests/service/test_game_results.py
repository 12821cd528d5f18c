"""Sealed game results (`tablelog.service.memory.results`): what a rebuild may take instead of
folding a game. The seal binds the game id, the club, the head and the deriving code; no
stored byte can change unseen, and nothing sealed for one game, club or head is usable for
another (the rebuild itself: tests/service/test_projection_rebuild.py)."""

from __future__ import annotations

import secrets

import pytest

from tablelog.service.memory import results
from tablelog.service.store import StoredHead
from tablelog.service.store.chain import Chain, ChainKey
from tests.service.helpers import CHAIN

HASH = bytes(range(32))
HEAD = StoredHead(164, 160, HASH)


def result(club: str = "club-a", outcome: bytes = b"\x0a\x03abc" * 20) -> results.GameResult:
    return results.GameResult(
        sequence=164,
        revision=160,
        last_hash=HASH,
        club=club,
        game="splendor",
        version=results.derivation("splendor"),
        outcome=outcome,
    )


def test_a_result_unseals_as_sealed_and_is_usable_at_its_head() -> None:
    for kept in (result(), result(outcome=b"")):
        data = results.seal(CHAIN, "g1", kept)
        assert results.unseal(CHAIN, "g1", data) == kept
        assert results.usable(kept, "club-a", HEAD) == ""


def test_every_changed_byte_is_seen() -> None:
    data = results.seal(CHAIN, "g1", result())
    for index in range(len(data)):
        changed = bytearray(data)
        changed[index] ^= 0x10
        with pytest.raises(results.DamagedResult):
            results.unseal(CHAIN, "g1", bytes(changed))
    with pytest.raises(results.DamagedResult):
        results.unseal(CHAIN, "g1", data[:-1])
    with pytest.raises(results.DamagedResult):
        results.unseal(CHAIN, "g1", data + b"\0")


def test_a_result_is_bound_to_its_game_and_key() -> None:
    data = results.seal(CHAIN, "g1", result())
    with pytest.raises(results.DamagedResult, match="seal"):
        results.unseal(CHAIN, "g2", data)  # copied to another game's key
    stranger = Chain(ChainKey.of(secrets.token_bytes(32)))
    with pytest.raises(results.DamagedResult, match="not trusted"):
        results.unseal(stranger, "g1", data)
    forged = results.seal(stranger, "g1", result())
    with pytest.raises(results.DamagedResult):
        results.unseal(CHAIN, "g1", forged)


def test_another_clubs_a_moved_heads_or_other_codes_result_is_not_usable() -> None:
    kept = result()
    assert results.usable(kept, "club-b", HEAD) == "another club's"
    assert results.usable(kept, "club-a", StoredHead(165, 161, HASH)) == "stale"
    assert results.usable(kept, "club-a", StoredHead(164, 160, bytes(32))) == "stale"
    older = results.GameResult(
        kept.sequence,
        kept.revision,
        kept.last_hash,
        kept.club,
        kept.game,
        "0-0000000000000000",
        kept.outcome,
    )
    assert results.usable(older, "club-a", HEAD) == "older code"


def test_the_deriving_code_is_named_per_game_type() -> None:
    assert results.derivation("splendor") != results.derivation("medici-card-game")
    assert results.derivation("splendor").startswith(results.FORMAT + "-")
