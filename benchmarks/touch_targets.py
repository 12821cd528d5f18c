"""How large each game's touch targets are on a phone (issue 25, WCAG 2.5.5: 44 x 44 CSS px),
fit to the phone's width and with the board's Zoom, in Debian's Chromium.

    .venv/bin/python benchmarks/touch_targets.py                 # 360, 390 and 430 px
    .venv/bin/python benchmarks/touch_targets.py --widths 390

Starts `tablelog serve` on free ports with its embedded Redis in a temporary data directory,
records the first lines of each game's seeded example (as the browser tests do), opens each
game at each width (a phone with a touch screen, portrait: the web app asks for the pictures'
phone layout) and measures every touchable (`data-touch`) element's bounding box, fit to the
width and then zoomed. A touchable of 44 px fit acts at a tap on the fit board; a smaller
one only zooms the board there, and acts zoomed (the web app's rule). Printed per game and
kind of touchable (the id's first word: `slot`, `bank`, `edge`...): how many, the smallest
width and height fit, how many of them are under 44 px fit, the smallest side zoomed, and
the smallest ACTING side (fit when 44 px or more, else zoomed); then per game and width the
smallest fit and acting sides. The exit status is 1 if an acting touchable is under 44 px:
the test tests/web/test_touch_recording.py asserts the same at 390 px.
"""

from __future__ import annotations

import argparse
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
from tests.support.touching import wait_board  # noqa: E402

TARGET_PX = 44.0
MOVES = 20
HEADER = (
    "| width | game | touchable | count | fit: smallest w x h px | under 44 fit | zoom "
    "| zoomed: smallest side px | acting: smallest side px |"
)
_BOXES = """() => Object.fromEntries(
  Array.from(document.querySelectorAll("#touch-board [data-touch]")).map((element) => {
    const box = element.getBoundingClientRect();
    return [element.getAttribute("data-touch"), [box.width, box.height]];
  }))"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--widths", type=int, nargs="+", default=[360, 390, 430])
    args = parser.parse_args()
    problem = missing_browser()
    if problem is not None:
        raise SystemExit(problem)
    failed = False
    with tempfile.TemporaryDirectory() as data:
        serve = ServeProcess(Path(data), http=True).start()
        try:
            (printed,) = serve.read_lines(1)
            base, fragment = printed.removeprefix("web app: ").strip().split("#", 1)
            with Client(serve.address, token=serve.token) as client, chromium() as browser:
                games = record_example_games(client, MOVES)
                print(HEADER)
                print("|---|---|---|---|---|---|---|---|---|")
                summary: list[str] = []
                for width in args.widths:
                    for game in games:
                        context = browser.new_context(
                            viewport={"width": width, "height": 844},
                            has_touch=True,
                            is_mobile=True,
                        )
                        page = context.new_page()
                        page.goto(f"{base}games/{game.game_id}#{fragment}")
                        wait_board(page, game.revisions)
                        fit: dict[str, list[float]] = page.evaluate(_BOXES)
                        board = page.locator("#touch-board svg.touch-picture").bounding_box()
                        page.locator("#zoom").tap()
                        zoomed: dict[str, list[float]] = page.evaluate(_BOXES)
                        wide = page.locator("#touch-board svg.touch-picture").bounding_box()
                        assert board is not None
                        assert wide is not None
                        kinds: dict[str, list[str]] = {}
                        for touch_id in fit:
                            kinds.setdefault(touch_id.split("-")[0].split(".")[0], []).append(
                                touch_id
                            )
                        # What a finger's tap acts on: the fit board's touchable when it is
                        # 44 px, else the zoomed board's (a smaller one zooms, acts zoomed).
                        acting = {
                            i: min(fit[i]) if min(fit[i]) >= TARGET_PX - 0.5 else min(zoomed[i])
                            for i in fit
                        }
                        for kind, ids in sorted(kinds.items()):
                            small = [i for i in ids if min(fit[i]) < TARGET_PX - 0.5]
                            least_zoomed = min(min(zoomed[i]) for i in ids)
                            least_acting = min(acting[i] for i in ids)
                            failed |= least_acting < TARGET_PX - 0.5
                            print(
                                f"| {width} | {game.name} | {kind} | {len(ids)} "
                                f"| {min(fit[i][0] for i in ids):.1f} x "
                                f"{min(fit[i][1] for i in ids):.1f} | {len(small)} "
                                f"| {wide['width'] / board['width']:.1f}x | {least_zoomed:.1f} "
                                f"| {least_acting:.1f} |"
                            )
                        under = sum(min(box) < TARGET_PX - 0.5 for box in fit.values())
                        summary.append(
                            f"| {width} | {game.name} | {len(fit)} | {under} "
                            f"| {min(min(box) for box in fit.values()):.1f} "
                            f"| {min(acting.values()):.1f} |"
                        )
                        context.close()
                print()
                print(
                    "| width | game | touchables | under 44 fit | smallest side fit px "
                    "| smallest acting side px |"
                )
                print("|---|---|---|---|---|---|")
                print("\n".join(summary))
        finally:
            serve.stop()
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
