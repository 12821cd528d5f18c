"""Screenshots of recording by touch (issue 25): each game's board and recording bar on a
390 px phone, in the middle of composing a move by taps.

    python scripts/screenshot_touch.py        # rewrite docs/screenshots/touch-<game>.png

Starts `tablelog serve` on free ports with its embedded Redis in a temporary data directory,
records the first lines of each game's seeded example (tests/support/browser.py, as the
browser tests do), opens the game on a phone with a touch screen, and taps the touches of
the listed move with the most of them, all but the last (`touch-<game>.png`: the board
highlights what may come next, the bar lists the moves left with their words when they are
few), then the last (`touch-<game>-words.png`: the bar says the move in words, to be
recorded with one more tap). Needs chromium and the dev extra (playwright). The images
depend on the machine's fonts, so no test checks them fresh.
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
from tests.support.browser import chromium, missing_browser, record_example_games  # noqa: E402
from tests.support.touching import tap, touch_page, wait_board  # noqa: E402

SCREENSHOTS = ROOT / "docs" / "screenshots"
MOVES = 20


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
            with Client(serve.address, token=serve.token) as client, chromium() as browser:
                for game in record_example_games(client, MOVES):
                    page = touch_page(browser, f"{base}games/{game.game_id}#{fragment}")
                    wait_board(page, game.revisions)
                    _to_move, moves = client.legal_moves(game.game_id)
                    longest = max(moves, key=lambda move: len(move.touches))
                    for touch_id in longest.touches[:-1] or longest.touches:
                        tap(page, touch_id)
                    target = SCREENSHOTS / f"touch-{game.name}.png"
                    page.screenshot(path=str(target))
                    print(f"wrote {target.relative_to(ROOT)}")
                    if len(longest.touches) > 1:
                        tap(page, longest.touches[-1])
                    target = SCREENSHOTS / f"touch-{game.name}-words.png"
                    page.screenshot(path=str(target))
                    print(f"wrote {target.relative_to(ROOT)}")
                    page.context.close()
        finally:
            serve.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
