"""Screenshots of the web app's game page, one per game, for the README and docs/.

    python scripts/screenshot_webapp.py        # rewrite docs/screenshots/<game>.png

Starts `tablelog serve` on free ports with its embedded Redis in a temporary data directory,
records the first lines of each game's seeded example (tests/support/browser.py, as the
browser tests do), annotates one move, and photographs each game's page at its last
revision in Debian's Chromium through Playwright. Needs chromium and the dev extra
(playwright). The images depend on the machine's fonts, so no test checks them fresh.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
for extra in (ROOT, ROOT / "proto", ROOT / "clients" / "python"):
    if str(extra) not in sys.path:
        sys.path.insert(0, str(extra))

from tablelog_client.sdk import Client  # noqa: E402  (the path is set up just above)
from tests.service.support import ServeProcess  # noqa: E402
from tests.support.browser import (  # noqa: E402
    chromium,
    missing_browser,
    open_page,
    record_example_games,
)

SCREENSHOTS = ROOT / "docs" / "screenshots"
MOVES = 30
VIEWPORT = {"width": 1200, "height": 860}


def main() -> int:
    problem = missing_browser()
    if problem is not None:
        raise SystemExit(problem)
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as data:
        serve = ServeProcess(Path(data), http=True).start()
        try:
            (printed,) = serve.read_lines(1)
            base, fragment = printed.removeprefix("web app: ").strip().split("#", 1)
            with Client(serve.address, token=serve.token) as client:
                games = record_example_games(client, MOVES)
                for game in games:
                    client.annotate(
                        game.game_id, "the table's first decision", glyph="!?", revision=0
                    )
            with chromium() as browser:
                for game in games:
                    url = f"{base}games/{game.game_id}?r={game.revisions}#{fragment}"
                    page = open_page(browser, url, viewport=VIEWPORT)
                    page.wait_for_selector(f'#picture[data-revision="{game.revisions}"]')
                    page.wait_for_selector("#legal-moves button, #legal-note:not(:empty)")
                    target = SCREENSHOTS / f"{game.name}.png"
                    page.screenshot(path=str(target))
                    page.context.close()
                    print(f"wrote {target.relative_to(ROOT)}")
        finally:
            serve.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
