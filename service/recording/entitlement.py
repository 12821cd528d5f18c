"""Which viewer a caller gets: the most its role entitles it to, never more than it may see.

`viewer_for` is the one decision, pure (a role, the seats the caller is bound to in the
game, whether the game reveals everything now, the viewer asked for). The reads take the
viewer it returns; asking for more than the role allows is refused with PERMISSION_DENIED,
reason `VIEW_NOT_ALLOWED`, metadata `asked` and `allowed`.

    role        entitled to                     why
    owner       full                            runs the club: members, games, everything
    recorder    spectator                       types only what the table revealed (table
                                                mode); must not read what the server deals
                                                in secret (dealt mode)
    player      its bound seat(s)               sees its own hand, nobody else's
    spectator   spectator                       public view only (link-token readers too)
    everyone    full, once the game reveals     `views.reveals_all`: a dealt game over,
                all (`revealed`)                or a table game ended whose rules show
                                                everything at the end
"""

from __future__ import annotations

import enum
from collections.abc import Collection
from typing import Final, Literal

from tablelog.replay import fold as folding
from tablelog.replay.core import FULL, SPECTATOR, Viewer
from tablelog.service.access.identity import Role
from tablelog.service.errors import PermissionDenied
from tablelog.service.recording.views import reveals_all, viewer_of, viewer_words
from tablelog.v1 import service_pb2


class _NotAsked(enum.Enum):
    NOT_ASKED = "not asked"


NOT_ASKED: Final = _NotAsked.NOT_ASKED
"""The request names no viewer: the caller gets the most it is entitled to."""

Asked = Viewer | Literal[_NotAsked.NOT_ASKED]
"""What a request asks for: a viewer, or NOT_ASKED."""


def allowed_viewers(role: Role, seats: Collection[int], revealed: bool) -> list[Viewer]:
    """The viewers the caller may ask for, the most entitled first. The full view covers
    every seat's (whoever may see it may ask for any seat), a seat's covers the spectator's,
    and the spectator's is allowed to everyone."""
    if revealed or role is Role.OWNER:
        return [FULL, SPECTATOR]
    if role is Role.PLAYER:
        return [*sorted(set(seats)), SPECTATOR]
    return [SPECTATOR]


def viewer_for(
    role: Role,
    seats: Collection[int],
    revealed: bool,
    asked: Asked = NOT_ASKED,
) -> Viewer:
    """The viewer a caller with `role`, bound to `seats` of this game (players; empty for
    anyone else), gets when it asks for `asked` (NOT_ASKED: the most it is entitled to; a
    player bound to several seats then gets the lowest). `revealed`: the game shows
    everything to everyone now (`tablelog.service.recording.views.reveals_all`). Asking for a
    view the caller is not entitled to raises PermissionDenied (`VIEW_NOT_ALLOWED`); a smaller
    view (a spectator's for an owner, say) is granted as asked."""
    allowed = allowed_viewers(role, seats, revealed)
    if asked is NOT_ASKED:
        return allowed[0]
    sees_all = FULL in allowed
    if asked in allowed or (sees_all and asked is not FULL and asked >= 0):
        return asked
    words = ", ".join(
        ["full", "any seat", "spectator"] if sees_all else [viewer_words(v) for v in allowed]
    )
    raise PermissionDenied(
        "VIEW_NOT_ALLOWED",
        f"A {role.value} may not see the {viewer_words(asked)} view of this game; it may "
        f"see: {words}.",
        metadata={"asked": viewer_words(asked), "allowed": words},
    )


def entitled_viewer(
    head: folding.Position,
    role: Role,
    seats: Collection[int],
    asked: service_pb2.Viewer | None,
) -> Viewer:
    """`viewer_for` on a request: `head` is the game's head (whether it reveals all is a
    matter of the game, whichever revision is read), `asked` the request's viewer field
    (None when unset); a seat outside the game is INVALID_ARGUMENT before any check."""
    wanted: Asked = NOT_ASKED
    if asked is not None and asked.WhichOneof("kind") is not None:
        wanted = viewer_of(asked, head.table.players)
    return viewer_for(role, seats, reveals_all(head), wanted)
