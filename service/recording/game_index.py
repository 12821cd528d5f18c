"""ListGames: a club's games newest first, filtered by game kind, status and player, a page
at a time by an opaque cursor, in O(page) at any depth (the index is
`tablelog.service.store.game_index`).

The player filter compares names as a person would (`normalised_player`): a seat's whole
name, ignoring case (Unicode NFKC casefolding: "ANN", "ann" and "Ａｎｎ" are one name) and
whitespace around it and within it; never a part of a name ("Ann" does not find "Anna").

The index is kept from the games' head summaries, the truth for what a game is:

- a game is indexed before its creation is appended (so no game exists unlisted), and
  again after an append that changes its status (a follow-up: the append script cannot
  touch the club's keys, which are in another cluster slot), from the summary the append
  stored;
- a listing checks every game it returns against its summary and repairs the entry of one
  the index has wrong (a follow-up lost to a crash or an outage; the creation time of a
  creation that lost a race for the game id), leaving it out of that page;
- `rebuild_game_index` recreates every index from the summaries: at start-up when the
  stored index is older than the layout (`ensure_game_index`, which also lists the games
  recorded before this index), and with `tablelog serve --reindex`.

What a lost follow-up can leave wrong until then: a game that ended listed as in progress
is left out of the ended games (it is repaired once a listing of the games in progress, or
of every status, reads it)."""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import unicodedata

from tablelog.replay.registry import find_game
from tablelog.service.access.identity import LOCAL_CLUB
from tablelog.service.errors import InvalidRequest
from tablelog.service.limits import check_page_size
from tablelog.service.logs import get_logger
from tablelog.service.store import EventStore, StoreUnavailable
from tablelog.service.store.game_index import (
    INDEX_VERSION,
    POSITION,
    IndexEntry,
    game_of,
    position_of,
)
from tablelog.v1 import events_pb2, service_pb2

REBUILD_BATCH = 100
"""Games read per round trip by a rebuild (their summaries and their creation events, which
may carry component files: a batch's reply stays bounded)."""

SCAN_BATCH = 2_000
"""Keys a rebuild's SCAN step looks at (a game has a few keys, one of them its head)."""

CURSOR_FORMAT = b"1"
"""The first byte of a cursor's payload: the position format it carries."""

CURSOR_CHECK = 6
"""Bytes of the digest that binds a cursor to its filter and detects a changed one."""

PLAYER_KEY_BYTES = 16
"""Bytes of the digest of a name that key a player's sets: far from any collision among a
club's players, and a bounded key whatever the name."""

log = get_logger("tablelog.game_index")


def index_club(created: events_pb2.GameCreated) -> str:
    """The club whose listing shows a game: its creator's; a game recorded before clubs is
    the local club's (as `tablelog.service.access.authentication.GameClubs` scopes it)."""
    return created.club or LOCAL_CLUB


def normalised_player(name: str) -> str:
    """A player's name as the player filter compares it: NFKC casefolded (the Unicode
    caseless match of compatibility forms), its runs of whitespace made one space and
    the whitespace around it dropped, as CreateGame tells two players apart."""
    folded = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", name).casefold())
    return " ".join(folded.split())


def player_key(name: str) -> str:
    """The key of a player's sets in the index: a digest of `normalised_player(name)`; ""
    for a name that is nothing but whitespace (no filter)."""
    normalised = normalised_player(name)
    if not normalised:
        return ""
    digest = hashlib.blake2b(normalised.encode(), digest_size=PLAYER_KEY_BYTES)
    return digest.hexdigest()


def entry_of(summary: service_pb2.GameSummary) -> IndexEntry:
    """What the index holds of a game, from its head summary."""
    created = summary.created_time
    keys = (player_key(player.name) for player in summary.players)
    # Each player once, in seat order: two seats whose names only NFKC tells apart (CreateGame
    # does not) are one player to the filter.
    seated = tuple(dict.fromkeys(key for key in keys if key))
    return IndexEntry(
        game_id=summary.game_id,
        position=position_of(summary.game_id, created.seconds, created.nanos),
        # A kind is a registry name (no spaces); a summary without one matches no filter.
        kind=summary.game or "-",
        status=summary.status,
        revision=summary.version,
        players=seated,
    )


def _check(kind: str, status: int, player: str, payload: bytes) -> bytes:
    label = b"tablelog/list-games\0%s\0%d\0" % (kind.encode(), status)
    if player:  # added after the other filters: the tokens of a listing without one still page
        label += b"player\0%s\0" % player.encode()
    return hashlib.sha256(label + payload).digest()[:CURSOR_CHECK]


def cursor_token(kind: str, status: int, position: str, player: str = "") -> str:
    """The page token that goes on after `position` in the listing of `kind` in `status`
    with the player whose key is `player`. Not a secret: a made-up cursor only positions a
    listing its caller may read anyway; the digest refuses a token changed in transit or
    given to another filter."""
    payload = CURSOR_FORMAT + position.encode()
    token = base64.urlsafe_b64encode(payload + _check(kind, status, player, payload))
    return token.rstrip(b"=").decode()


def cursor_position(kind: str, status: int, token: str, player: str = "") -> str:
    """The position a page token of the listing of `kind` in `status` with the player whose
    key is `player` goes on after; INVALID_ARGUMENT when it was not made by `cursor_token`
    for this listing."""
    refusal = InvalidRequest(
        "page_token",
        "That page_token was not issued here for this listing (game, status and player).",
    )
    try:
        raw = base64.urlsafe_b64decode(token.encode("ascii") + b"=" * (-len(token) % 4))
    except (UnicodeEncodeError, binascii.Error, ValueError) as exc:
        raise refusal from exc
    payload, check = raw[:-CURSOR_CHECK], raw[-CURSOR_CHECK:]
    if not payload.startswith(CURSOR_FORMAT) or not hmac.compare_digest(
        check, _check(kind, status, player, payload)
    ):
        raise refusal
    position = payload[len(CURSOR_FORMAT) :].decode("ascii", errors="replace")
    if not POSITION.match(position):
        raise refusal
    return position


async def list_games(
    store: EventStore,
    club: str,
    game: str,
    status: int,
    page_size: int,
    token: str,
    player: str = "",
) -> tuple[list[service_pb2.GameSummary], str]:
    """A page of `club`'s games of kind `game` in `status` with a seat of `player` (each:
    any when empty or 0; the name compared as `normalised_player` does), newest first,
    after the page `token` ended; and the token of the next page ("" when there is none).
    Reads the page's index entries and summaries, and as many more as the index has wrong
    among them (repaired as they are read)."""
    size = check_page_size(page_size)
    kind = find_game(game).name if game else ""
    player_filter = player_key(player)
    after = cursor_position(kind, status, token, player_filter) if token else None
    found: list[service_pb2.GameSummary] = []
    while True:
        wanted = size - len(found)
        # One more than needed: whether a next page exists is known without another call.
        positions = await store.list_game_ids(club, kind, status, after, wanted + 1, player_filter)
        blobs = await store.summaries([game_of(position) for position in positions[:wanted]])
        stale: list[IndexEntry] = []
        for position, blob in zip(positions, blobs, strict=False):
            after = position
            if blob is None:  # indexed before its creation, which is not (yet) stored
                continue
            summary = service_pb2.GameSummary.FromString(blob)
            entry = entry_of(summary)
            if (
                entry.position != position
                or entry.status == service_pb2.GAME_STATUS_DELETED
                or (kind and entry.kind != kind)
                or (status and entry.status != status)
                or (player_filter and player_filter not in entry.players)
            ):
                # Indexed by a creation that lost a race for the id, or not followed after
                # a change of status (a deletion among them): listed where its summary
                # says (a deleted game nowhere), not here.
                stale.append(entry)
                continue
            found.append(summary)
        if stale:
            await store.index_games(club, stale)
        if len(positions) <= wanted:
            return found, ""
        if len(found) == size:
            assert after is not None
            return found, cursor_token(kind, status, after, player_filter)


async def index_after_append(
    store: EventStore, created: events_pb2.GameCreated, summary: service_pb2.GameSummary
) -> None:
    """The follow-up of an append that changed a game's status. The move is stored whatever
    happens here: an outage leaves the entry to the repairs (see the module), not the
    caller with an error for a move that was recorded."""
    try:
        await store.index_games(index_club(created), [entry_of(summary)])
    except StoreUnavailable as exc:
        log.warning("game index not updated", game_id=summary.game_id, error=str(exc))


async def rebuild_game_index(store: EventStore, *, from_scratch: bool) -> int:
    """Index every stored game from its summary, `REBUILD_BATCH` games a round trip, and
    mark the index current; how many games were indexed. `from_scratch` deletes the indexes
    first (what no game's summary says any more goes with them); otherwise each entry is
    replaced unless the stored one is of a later revision, so appends may go on meanwhile."""
    if from_scratch:
        await store.clear_game_index()
    indexed = 0
    async for found in store.game_ids(SCAN_BATCH):
        for start in range(0, len(found), REBUILD_BATCH):
            indexed += await _index_stored(store, found[start : start + REBUILD_BATCH])
    await store.mark_game_index_version(INDEX_VERSION)
    return indexed


async def _index_stored(store: EventStore, game_ids: list[str]) -> int:
    """Index `game_ids` from their summaries and creations; how many were (a game without
    either is not stored yet, or any more)."""
    blobs = await store.summaries(game_ids)
    creations = await store.creations(game_ids)
    by_club: dict[str, list[IndexEntry]] = {}
    for blob, created in zip(blobs, creations, strict=True):
        if blob is not None and created is not None:
            summary = service_pb2.GameSummary.FromString(blob)
            by_club.setdefault(index_club(created), []).append(entry_of(summary))
    for club, entries in by_club.items():
        await store.index_games(club, entries)
    return sum(len(entries) for entries in by_club.values())


async def ensure_game_index(store: EventStore) -> int | None:
    """Build the listing index when the stored one is older than this layout (a store of
    games recorded before it, or a fresh one): how many games it indexed, None when it was
    current. Safe while other instances serve and when several start at once."""
    if await store.game_index_version() >= INDEX_VERSION:
        return None
    return await rebuild_game_index(store, from_scratch=False)
