"""From a tap on the board to the highlight of what may come next (issue 25), in a phone-sized
Chromium with its CPU slowed four times, per game.

    .venv/bin/python benchmarks/touch_latency.py             # 40 taps per game
    .venv/bin/python benchmarks/touch_latency.py --compare   # and as the board did before

Starts `tablelog serve` on free ports with its embedded Redis in a temporary data directory,
records the first lines of each game's seeded example (as the browser tests do), opens each
game on a 390 px phone with a touch screen, slows the page's CPU 4x (Chrome DevTools
Protocol, Emulation.setCPUThrottlingRate), then repeatedly taps the first touch of a listed
move and takes it back. Each tap is timed in the page, from the click event to the frame
after the board's classes changed (the handler, the narrowing, the style recalculation and
the paint), and the handler alone (until the click's dispatch returns: the narrowing and the
class writes, no rendering). Printed: p50 and p95 per game, and the target, p95 <= 50 ms;
the script exits with status 1 when a game misses it. The floor measured in the same run:
the same frame wait with no tap, which no update can beat (p50 and p95: on a shared machine
its p95 says how much of a tap's p95 is the machine's), and the frame after the least change
the page can show (the colour of the bar's words), which a tap, which changes more, cannot
beat either: what the browser spends on any frame that changes something.

`--compare` also times, in the same page and interleaved with them (blocks of ten taps
each way), taps drawn as the board drew them before its layer of marks: the picture's
touchables restyled (`RESTYLED`, the style sheet's former rules, put back in the page, the
marks hidden), so that the two are measured under the same load.
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
from tests.support.touching import touch_page, wait_board  # noqa: E402

TAPS = 40
MOVES = 20
TARGET_MS = 50.0
THROTTLE = 4
BLOCK = 10
"""Taps in a row of one way of drawing, with --compare."""
RESTYLED = """
.touch-marks { display: none !important; }
.touch-picture .touch-dim { opacity: 0.4; }
.touch-picture .edge-target.touch-next { fill: #2457c5; fill-opacity: 0.16; }
.touch-picture .touch-tapped { filter: drop-shadow(0 0 3px #e8a400); }
.touch-picture .edge-target.touch-tapped { fill: #e8a400; fill-opacity: 0.4; filter: none; }
"""
"""The board's highlight before its layer of marks (clients/web/src/style.css until then):
every touchable whose state a tap changed restyled, the dimmed ones by their opacity."""
_STYLE = """
(css) => {
  let sheet = document.getElementById("benchmark-style");
  if (!sheet) {
    sheet = document.createElement("style");
    sheet.id = "benchmark-style";
    document.head.append(sheet);
  }
  sheet.textContent = css;
}
"""

_TIMED_TAP = """
async ([id, tap]) => {
  const frame = () => new Promise((done) => requestAnimationFrame(() => setTimeout(done, 0)));
  const element = document.querySelector(`#touch-board [data-touch="${CSS.escape(id)}"]`);
  const started = performance.now();
  if (tap) {
    element.dispatchEvent(new MouseEvent("click", { bubbles: true }));
  }
  const handled = performance.now() - started;
  await frame();
  const took = performance.now() - started;
  document.getElementById("tap-clear").click();
  await frame();
  return [took, handled];
}
"""


_ONE_CHANGE = """
async (dark) => {
  const frame = () => new Promise((done) => requestAnimationFrame(() => setTimeout(done, 0)));
  const words = document.getElementById("tap-words");
  const started = performance.now();
  words.style.color = dark ? "#000" : "#111";
  await frame();
  return performance.now() - started;
}
"""


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--compare", action="store_true", help="also time the restyled board")
    parser.add_argument("--taps", type=int, default=TAPS, help="taps per game (and per way)")
    parser.add_argument("--only", action="append", help="this game only (repeatable)")
    args = parser.parse_args()
    problem = missing_browser()
    if problem is not None:
        raise SystemExit(problem)
    missed = []
    with tempfile.TemporaryDirectory() as data:
        serve = ServeProcess(Path(data), http=True).start()
        try:
            (printed,) = serve.read_lines(1)
            base, fragment = printed.removeprefix("web app: ").strip().split("#", 1)
            with Client(serve.address, token=serve.token) as client, chromium() as browser:
                extra = " restyled p50 ms | restyled p95 ms |" if args.compare else ""
                print(
                    "| game | legal moves | tap p50 ms | tap p95 ms | handler p50 ms "
                    "| handler p95 ms | frame floor p50 ms | frame floor p95 ms "
                    "| one change p50 ms |" + extra
                )
                rule = "|---|---|---|---|---|---|---|---|---|"
                print(rule + ("---|---|" if args.compare else ""))
                for game in record_example_games(client, MOVES):
                    if args.only and game.name not in args.only:
                        continue
                    page = touch_page(browser, f"{base}games/{game.game_id}#{fragment}")
                    wait_board(page, game.revisions)
                    session = page.context.new_cdp_session(page)
                    session.send("Emulation.setCPUThrottlingRate", {"rate": THROTTLE})
                    _to_move, moves = client.legal_moves(game.game_id)
                    firsts = sorted({move.touches[0] for move in moves})
                    timed: list[list[float]] = []
                    restyled: list[float] = []
                    floor: list[float] = []
                    for start in range(0, args.taps, BLOCK):
                        ids = [firsts[i % len(firsts)] for i in range(start, start + BLOCK)]
                        timed += [page.evaluate(_TIMED_TAP, [touch, True]) for touch in ids]
                        floor += [page.evaluate(_TIMED_TAP, [firsts[0], False])[0]]
                        if args.compare:
                            page.evaluate(_STYLE, RESTYLED)
                            restyled += [page.evaluate(_TIMED_TAP, [t, True])[0] for t in ids]
                            page.evaluate(_STYLE, "")
                            floor += [page.evaluate(_TIMED_TAP, [firsts[0], False])[0]]
                    taps = [took for took, _handled in timed]
                    handler = [handled for _took, handled in timed]
                    floor += [page.evaluate(_TIMED_TAP, [firsts[0], False])[0] for _ in range(6)]
                    changed = [page.evaluate(_ONE_CHANGE, i % 2 == 0) for i in range(16)]
                    p95 = percentile(taps, 0.95)
                    before = (
                        f" {percentile(restyled, 0.5):.1f} | {percentile(restyled, 0.95):.1f} |"
                        if args.compare
                        else ""
                    )
                    print(
                        f"| {game.name} | {len(moves)} | {percentile(taps, 0.5):.1f} "
                        f"| {p95:.1f} | {percentile(handler, 0.5):.1f} "
                        f"| {percentile(handler, 0.95):.1f} | {percentile(floor, 0.5):.1f} "
                        f"| {percentile(floor, 0.95):.1f} | {percentile(changed, 0.5):.1f} |"
                        + before
                    )
                    if p95 > TARGET_MS:
                        missed.append(game.name)
                    page.context.close()
        finally:
            serve.stop()
    if missed:
        print(f"p95 over {TARGET_MS:g} ms: {', '.join(missed)}")
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
