"""What every request is bounded by before any work is done with it: the input limits, the
checks that enforce them (refused with INVALID_ARGUMENT + BadRequest) and the page tokens."""

from __future__ import annotations

import base64
import re
from collections.abc import Sequence

from tablelog.service.errors import InvalidRequest
from tablelog.v1 import game_pb2

MAX_MESSAGE_BYTES = 16 * 1024 * 1024
"""One request or response message on either port (gRPC, HTTP)."""
MAX_NOTATION = 200
MAX_COMMENT = 4_000
MAX_REASON = 500
MAX_TITLE = 200
MAX_PLAYER_NAME = 64
MAX_PLAYERS = 16
MAX_REQUEST_ID = 128
MAX_PAGE_SIZE = 1_000
DEFAULT_PAGE_SIZE = 100
MAX_IMPORT_EVENTS = 100_000
MAX_IMPORT_SOURCE = 200
MAX_RECORD_TEXT = 8 << 20
"""The longest text record imported or exported, in characters (some 150,000 moves)."""
MAX_RECORD_GAMES = 1_000
"""The most games one text record exports or imports."""
MAX_RECORD_MOVES = 100_000
"""The most moves (variations' included) one imported text record holds, as an imported
history holds at most MAX_IMPORT_EVENTS events: each is parsed and checked by the rules."""
MAX_RECORD_TAGS = 32
"""The most descriptive tags (`[Event "..."]`, `[Site "..."]`, ...) one game keeps."""
MAX_RECORD_TAG_NAME = 40
MAX_RECORD_TAG_VALUE = 200
MAX_COMPONENT_BYTES = 1 << 20
"""One component file's content (1 MiB)."""
MAX_COMPONENTS_BYTES = 4 << 20
"""All the component files of one CreateGame or ImportGame together (4 MiB)."""
MAX_VARIATION_MOVES = 200
"""Moves in one line of a variation (a whole game of Splendor is about 100 moves)."""
MAX_VARIATION_TOTAL = 1_000
"""Moves in all the lines of one variation together."""
MAX_VARIATION_DEPTH = 8
"""Lines nested inside lines: 1 for a variation without alternatives."""
MAX_VARIATION_TEXT = 20_000
"""Characters of all the comments inside one variation together."""
GLYPHS = frozenset({"", "!", "?", "!!", "??", "!?", "?!"})
GAME_ID = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")


ECHOED_LENGTH = 80
"""A client's text quoted back in a refusal (a game name, a file name) is cut to this."""


def clip(text: str, limit: int = ECHOED_LENGTH) -> str:
    """`text` shortened for an error message: a refusal never echoes a long input back."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def check_game_id(game_id: str) -> str:
    if not GAME_ID.match(game_id):
        raise InvalidRequest("game_id", "A game id is 1-64 lowercase letters, digits, '-' or '_'.")
    return game_id


def check_length(name: str, value: str, limit: int) -> str:
    if len(value) > limit:
        raise InvalidRequest(name, f"{name} is {len(value)} characters; the limit is {limit}.")
    return value


def check_components(field_name: str, components: Sequence[game_pb2.ComponentFile]) -> None:
    """Each file at most MAX_COMPONENT_BYTES, all together at most MAX_COMPONENTS_BYTES."""
    total = 0
    for index, component in enumerate(components):
        size = len(component.content)
        if size > MAX_COMPONENT_BYTES:
            raise InvalidRequest(
                f"{field_name}[{index}].content",
                f"Component file {clip(component.name)!r} is {size:,} bytes; "
                f"the limit is {MAX_COMPONENT_BYTES:,} per file.",
            )
        total += size
    if total > MAX_COMPONENTS_BYTES:
        raise InvalidRequest(
            field_name,
            f"The component files are {total:,} bytes together; the limit is "
            f"{MAX_COMPONENTS_BYTES:,}.",
        )


def check_page_size(page_size: int) -> int:
    """The size of a page a request asks for (0: the default)."""
    if page_size < 0 or page_size > MAX_PAGE_SIZE:
        raise InvalidRequest("page_size", f"page_size must be 0-{MAX_PAGE_SIZE}.")
    return page_size or DEFAULT_PAGE_SIZE


def page_bounds(page_size: int, page_token: str) -> tuple[int, int]:
    """(offset, size) from a request's page_size and opaque page_token."""
    size = check_page_size(page_size)
    offset = 0
    if page_token:
        try:
            offset = int(base64.urlsafe_b64decode(page_token.encode()).decode().removeprefix("o:"))
        except (ValueError, UnicodeDecodeError) as exc:
            raise InvalidRequest("page_token", "That page_token was not issued here.") from exc
        if offset < 0:
            raise InvalidRequest("page_token", "That page_token was not issued here.")
    return offset, size


def page_token(offset: int) -> str:
    return base64.urlsafe_b64encode(f"o:{offset}".encode()).decode()
