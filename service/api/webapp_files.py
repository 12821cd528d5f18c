"""The web app's files on the HTTP port (`tablelog.service.api.http_port`): the built web client
(clients/web, built into the package directory `service/webapp/` so that installing the
package is enough to serve it).

Starlette's StaticFiles serves them: content types from the file names, ETag and
Last-Modified with 304 answers, HEAD, and no path outside the directory (it resolves
symbolic links and `..` and refuses what leaves it). Around it: `/games/...` paths that
name no file, `/standings` and `/players/...` get `index.html` (the app routes them in the
browser), content-hashed assets are cached for a year, everything else is revalidated on
each use, and a miss is a plain 404 rather than an exception."""

from __future__ import annotations

import re
from pathlib import Path

from starlette.exceptions import HTTPException
from starlette.responses import PlainTextResponse, Response
from starlette.staticfiles import StaticFiles
from starlette.types import Scope

WEBAPP_DIRECTORY = Path(__file__).parents[1] / "webapp"
APP_ROUTED = "games"
"""The first path segment of the pages the web app routes itself (in the browser):
they get index.html."""
HASHED = re.compile(r"[-.](?=[A-Za-z0-9_]*\d)[A-Za-z0-9_]{8,}\.[A-Za-z0-9]+$")
"""A content-hashed file name: a segment of 8 or more letters and digits (one digit at
least) before the extension, as bundlers name them (app-5XK2J7QD.js, index.4f9c2b1a.css)."""
MEMORY_ROUTED = frozenset({"standings", "players"})
"""Club memory's pages (`/standings`, `/players/<name>`), routed by the app too; a player's
name may hold a dot, so no file extension is looked for."""
IMMUTABLE = "public, max-age=31536000, immutable"
REVALIDATE = "no-cache"


def is_hashed(path: str) -> bool:
    return HASHED.search(path.rsplit("/", 1)[-1]) is not None


class WebappFiles(StaticFiles):
    """See the module's docstring."""

    def __init__(self, directory: Path = WEBAPP_DIRECTORY) -> None:
        super().__init__(directory=directory, html=True)

    async def get_response(self, path: str, scope: Scope) -> Response:
        try:
            response = await super().get_response(path, scope)
        except HTTPException as refused:
            if refused.status_code == 404 and _routed_by_app(path):
                response = await super().get_response("index.html", scope)
            else:
                return PlainTextResponse(refused.detail, status_code=refused.status_code)
        if response.status_code in (200, 304):
            response.headers["cache-control"] = IMMUTABLE if is_hashed(path) else REVALIDATE
            response.headers["x-content-type-options"] = "nosniff"
        return response


def _routed_by_app(path: str) -> bool:
    first, _, rest = path.replace("\\", "/").partition("/")
    if first in MEMORY_ROUTED:
        return True
    return first == APP_ROUTED and "." not in rest.rsplit("/", 1)[-1]
