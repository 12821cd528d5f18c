"""Sealed game results: what club memory derived from a game's events, kept beside its stream
so that a rebuild need not fold the game again (docs/service.md, "Club memory's sealed
results"; an optimisation, never the truth).

A result is what the projector's fold of a game gave (`GameOutcome`: seats, places, scores,
win shares, the first seat, the insights' figures, the end time; or nothing, for a game
that is not over) together with the head it was folded at (the sequence, revision and
chain hash of the last event folded), the club the game belongs to, the game type and the
version of the code that derived it (`derivation`). It is written by every fold of the
projector (a game ended, reopened, abandoned or amended; an import) and of a refolding
rebuild, deflated and sealed with the chain's signing key over the game id and all of the
above, under a domain of its own.

A rebuild (`Projector.rebuild_club`) takes a game's outcome from its result only when the
seal holds under a trusted key for this game id, the result names the club being rebuilt,
its head is the stream's stored head (the head hash the append script keeps with the
stream) and it was derived by this code; otherwise (missing, damaged, stale, another club's,
older code) it folds the game from its verified stream and writes the result again. So
whoever can write to Redis but has not the chain key can drop or damage a result (the game
is then folded) but cannot forge one, nor move one to another game or club; and what a
rebuild trusts is exactly what a checkpoint's reader trusts: that the events up to the
head the result names are the ones it was folded from. A stream edited in the middle
under an unchanged head and last entry is not seen by a rebuild that uses results (it is
by `tablelog projections rebuild --refold`, which folds every game from its verified
events, and by VerifyGame).
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import inspect
import secrets
import struct
import zlib
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Final

from tablelog.replay.registry import find_game
from tablelog.service.store import StoredHead
from tablelog.service.store.chain import Chain

FORMAT: Final = "1"
"""The result's layout and the outcome's meaning; a change of either is a new format (and
every result of an older one is folded again)."""
MAX_RESULT_BYTES: Final = 64 << 10
"""A stored result larger than this is not read (a game's outcome is a few hundred bytes)."""

_DOMAIN: Final = b"tablelog/game-result/v1\0"
_MAGIC: Final = b"TLGR1"
_HEADER: Final = struct.Struct(">QQ32sBBBB")
"""sequence, revision, last hash; the lengths of the key id, club, game and version."""
_TAG_BYTES: Final = 32


class DamagedResult(Exception):
    """Stored bytes that are not a sound result of this game."""


@dataclass(frozen=True, slots=True)
class GameResult:
    """What a result says, once its seal is checked."""

    sequence: int
    revision: int
    last_hash: bytes
    """The hash of the last event folded: the stream's head when the result was made."""
    club: str
    game: str
    version: str
    outcome: bytes
    """The `GameOutcome`, serialized deterministically (exactly the bytes club memory's
    outcomes hash holds); empty for a game that gives none."""

    def matches(self, head: StoredHead) -> bool:
        return (self.sequence, self.revision, self.last_hash) == (
            head.sequence,
            head.revision,
            head.last_hash,
        )


@functools.cache
def derivation(game: str) -> str:
    """The version of the code that derives `game`'s outcome: the format and a digest of
    the sources it runs (the rules core, the game's package, its insights, the outcome's
    own code). Any change to them makes every older result of that game type stale, so
    a rebuild after an upgrade folds again whatever the new code might derive otherwise;
    nobody has to remember to bump a number."""
    # (imported here: the outcome's code imports this module's users)
    from tablelog.service.memory import standings

    digest = hashlib.sha256(FORMAT.encode())
    package = Path(inspect.getfile(type(find_game(game)))).parent
    core = Path(inspect.getfile(find_game)).parent
    files = [
        *(core / name for name in ("core.py", "fold.py", "insights.py", "registry.py")),
        *sorted(package.glob("*.py")),
        Path(inspect.getfile(standings)),
    ]
    for path in files:
        digest.update(path.name.encode() + b"\0")
        try:
            digest.update(path.read_bytes())
        except OSError:
            digest.update(_installed())
    return f"{FORMAT}-{digest.hexdigest()[:16]}"


def _installed() -> bytes:
    """Installed without sources: the version of the package the code came with, else
    this process's own (its results are then used by no other process: folded again)."""
    try:
        return metadata.version("tablelog").encode()
    except metadata.PackageNotFoundError:
        return secrets.token_bytes(16)


def _tag(secret: bytes, game_id: str, signed: bytes) -> bytes:
    game = game_id.encode()
    return hmac.digest(
        secret, b"".join((_DOMAIN, len(game).to_bytes(2, "big"), game, signed)), "sha256"
    )


def seal(chain: Chain, game_id: str, result: GameResult) -> bytes:
    """`result` as stored: a header (with the signing key's id), the tag under that key
    over the game id, the header and the deflated outcome, then the deflated outcome."""
    key_id, club, game, version = (
        text.encode() for text in (chain.signing.key_id, result.club, result.game, result.version)
    )
    header = (
        _MAGIC
        + _HEADER.pack(
            result.sequence,
            result.revision,
            result.last_hash,
            len(key_id),
            len(club),
            len(game),
            len(version),
        )
        + key_id
        + club
        + game
        + version
    )
    packed = zlib.compress(result.outcome, 1) if result.outcome else b""
    return header + _tag(chain.signing.secret, game_id, header + packed) + packed


def unseal(chain: Chain, game_id: str, data: bytes) -> GameResult:
    """The result stored for `game_id`, its tag checked under the key it names (which must
    be trusted here). DamagedResult otherwise."""
    fixed = len(_MAGIC) + _HEADER.size
    if len(data) < fixed + _TAG_BYTES or not data.startswith(_MAGIC):
        raise DamagedResult("not a result")
    if len(data) > MAX_RESULT_BYTES:
        raise DamagedResult("larger than any result is written")
    sequence, revision, last_hash, *lengths = _HEADER.unpack_from(data, len(_MAGIC))
    texts: list[str] = []
    at = fixed
    for length in lengths:
        texts.append(data[at : at + length].decode("utf-8", "replace"))
        at += length
    key_id, club, game, version = texts
    secret = chain.trusted.get(key_id)
    if secret is None:
        raise DamagedResult(f"sealed under chain key {key_id[:16]!r}, not trusted here")
    tag = data[at : at + _TAG_BYTES]
    packed = data[at + _TAG_BYTES :]
    if len(tag) < _TAG_BYTES or not hmac.compare_digest(
        tag, _tag(secret, game_id, data[:at] + packed)
    ):
        raise DamagedResult("its seal does not hold")
    outcome = b""
    if packed:
        inflater = zlib.decompressobj()
        try:
            outcome = inflater.decompress(packed, MAX_RESULT_BYTES)
        except zlib.error as exc:
            raise DamagedResult(f"its outcome does not inflate: {exc}") from None
        if not inflater.eof or inflater.unconsumed_tail:
            raise DamagedResult("its outcome is larger than any result is written")
    return GameResult(sequence, revision, last_hash, club, game, version, outcome)


def usable(result: GameResult, club_id: str, head: StoredHead) -> str:
    """Why a rebuild of `club_id` may not take `result` for a game whose stored head is
    `head` ("" when it may): another club's, stale (the stream moved on since), or derived
    by other code."""
    if result.club != club_id:
        return "another club's"
    if not result.matches(head):
        return "stale"
    try:
        current = derivation(result.game)
    except Exception:  # a game type this server does not know: fold it (and say why there)
        return "unknown game"
    if result.version != current:
        return "older code"
    return ""
