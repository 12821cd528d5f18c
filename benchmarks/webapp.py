"""The web app's size and stepping speed, against issue 13's targets and a floor measured in
the same run.

    .venv/bin/python benchmarks/webapp.py              # a 200-move game
    .venv/bin/python benchmarks/webapp.py --moves 120  # quicker

- JavaScript: the gzipped size of every script the page loads (service/webapp/assets, the
  committed build); target at most 300 KB.
- Stepping: a `tablelog serve` on a free port (embedded Redis, its HTTP port on), a
  four-player Splendor game of `--moves` recorded moves, its page opened in Debian's Chromium
  (tests/support/browser.py), then timed inside the page with performance.now(), from the
  key press (or the click on a move) until the picture of the new revision is in the page
  (its data-revision set, which the app does once the image is decoded):
  - step: ArrowRight at a reading pace (a pause before each press), revision after revision:
    what a reader stepping through a game waits; target: a p50 of at most 50 ms (the p95
    is printed too, and the machine's load average with it);
  - rapid: ArrowRight pressed again as soon as the picture is in;
  - jump: a click on a move far from any seen, on a page opened afresh and left to settle
    (its picture fetched then: nothing cached but the first block of revisions).
- The floor: the page's own GetState (picture on) for the same revisions, by fetch over
  the Connect protocol (binary), timed to the last byte: what any client pays for a picture
  it does not have. jump/floor says what the app adds to that.
The exit status is 1 when a target is missed.
"""

from __future__ import annotations

import argparse
import gzip
import os
import random
import statistics
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
    record_long_game,
)

SCRIPT_TARGET_KB = 300.0
STEP_TARGET_MS = 50.0
BLOCK = 32
SETTLE_MS = 1500
"""How long a page opened afresh is left to fetch its first pictures before a jump."""
"""Revisions the app fetches pictures for in one replay (clients/web/src/picture.ts)."""
WEBAPP = ROOT / "service" / "webapp"

STEPS_JS = """
async ([count, pauseMs]) => {
  const picture = document.getElementById("picture");
  const shown = (revision) => new Promise((resolve) => {
    if (picture.dataset.revision === revision) { resolve(); return; }
    const watcher = new MutationObserver(() => {
      if (picture.dataset.revision === revision) { watcher.disconnect(); resolve(); }
    });
    watcher.observe(picture, { attributes: true, attributeFilter: ["data-revision"] });
  });
  const times = [];
  for (let i = 0; i < count; i++) {
    if (pauseMs) { await new Promise((resolve) => setTimeout(resolve, pauseMs)); }
    const next = String(Number(picture.dataset.revision) + 1);
    const started = performance.now();
    document.dispatchEvent(new KeyboardEvent("keydown", { key: "ArrowRight", bubbles: true }));
    await shown(next);
    times.push(performance.now() - started);
  }
  return times;
}
"""

JUMPS_JS = """
async (revisions) => {
  const picture = document.getElementById("picture");
  const times = [];
  for (const revision of revisions) {
    const wanted = String(revision);
    const button = document.querySelector(`#moves li[data-revision="${wanted}"] button`);
    const started = performance.now();
    const done = new Promise((resolve) => {
      const watcher = new MutationObserver(() => {
        if (picture.dataset.revision === wanted) { watcher.disconnect(); resolve(); }
      });
      watcher.observe(picture, { attributes: true, attributeFilter: ["data-revision"] });
    });
    button.click();
    await done;
    times.push(performance.now() - started);
  }
  return times;
}
"""

# GetStateRequest {game_id = 1, revision = 2, picture = 4} in the protobuf wire format, by
# hand: the floor must not include this app's code.
FLOOR_JS = """
async ([gameId, revisions]) => {
  const token = sessionStorage.getItem("tablelog.token");
  const varint = (n) => {
    const out = [];
    for (; n > 127; n = Math.floor(n / 128)) { out.push((n & 127) | 128); }
    return [...out, n];
  };
  const id = new TextEncoder().encode(gameId);
  const times = [];
  for (const revision of revisions) {
    const body = new Uint8Array(
      [0x0a, ...varint(id.length), ...id, 0x10, ...varint(revision), 0x20, 1]);
    const started = performance.now();
    const answer = await fetch("/tablelog.v1.TablelogService/GetState", {
      method: "POST",
      headers: { "content-type": "application/proto", "connect-protocol-version": "1",
                 authorization: `Bearer ${token}` },
      body,
    });
    const bytes = await answer.arrayBuffer();
    if (!answer.ok || bytes.byteLength < 1000) { throw new Error(`GetState: ${answer.status}`); }
    times.push(performance.now() - started);
  }
  return times;
}
"""


def script_kilobytes() -> float:
    """The gzipped size of the scripts index.html loads, in KB (1000 bytes)."""
    scripts = sorted((WEBAPP / "assets").glob("*.js"))
    if not scripts:
        raise SystemExit("no built scripts in service/webapp/assets: run scripts/build_webapp.py")
    return sum(len(gzip.compress(p.read_bytes(), 9)) for p in scripts) / 1000


def summary(times: list[float]) -> tuple[float, float]:
    ordered = sorted(times)
    return statistics.median(ordered), ordered[max(0, round(0.95 * len(ordered)) - 1)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--moves", type=int, default=200, help="moves in the game (200)")
    parser.add_argument("--pause-ms", type=int, default=150, help="pause before each step")
    parser.add_argument("--jumps", type=int, default=12, help="jumps to unseen revisions")
    args = parser.parse_args()

    kilobytes = script_kilobytes()
    print(f"JavaScript: {kilobytes:.1f} KB gzipped (target <= {SCRIPT_TARGET_KB:.0f} KB)")
    problem = missing_browser()
    if problem is not None:
        raise SystemExit(f"stepping needs a browser: {problem}")

    missed = kilobytes > SCRIPT_TARGET_KB
    with tempfile.TemporaryDirectory() as data:
        serve = ServeProcess(Path(data), http=True).start()
        try:
            (printed,) = serve.read_lines(1)
            signed_in = printed.removeprefix("web app: ").strip()
            base, fragment = signed_in.split("#", 1)
            with Client(serve.address, token=serve.token) as client:
                game_id = record_long_game(client, args.moves)
                head = client.get_game(game_id).version
            with chromium() as browser:
                page = open_page(browser, f"{base}games/{game_id}?r=1#{fragment}")
                page.wait_for_selector('#picture[data-revision="1"]', timeout=30_000)
                half = (head - 1) // 2
                paced = page.evaluate(STEPS_JS, [half, args.pause_ms])
                rapid = page.evaluate(STEPS_JS, [head - 1 - half - 1, 0])
                # Each jump from a page opened afresh (nothing cached but the first block),
                # to a revision past the blocks fetched around the first.
                chosen = random.Random(13).sample(range(2 * BLOCK + 1, head + 1), args.jumps)
                jumps = []
                for revision in chosen:
                    page.goto(f"{base}games/{game_id}?r=1")
                    page.wait_for_selector('#picture[data-revision="1"]', timeout=30_000)
                    page.wait_for_timeout(SETTLE_MS)
                    jumps += page.evaluate(JUMPS_JS, [revision])
                page.goto(f"{base}games/{game_id}?r=1")
                page.wait_for_selector('#picture[data-revision="1"]', timeout=30_000)
                page.wait_for_timeout(SETTLE_MS)
                floor = page.evaluate(FLOOR_JS, [game_id, chosen])
        finally:
            serve.stop()

    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"Stepping a {args.moves}-move game ({head} revisions) in Chromium (load {load}):")
    floor_p50, floor_p95 = summary(floor)
    for label, times, target in (
        (f"step (paced {args.pause_ms} ms)", paced, STEP_TARGET_MS),
        ("rapid step", rapid, None),
        ("jump to an unseen revision", jumps, None),
    ):
        p50, p95 = summary(times)
        verdict = ""
        if target is not None:
            ok = p50 <= target
            missed = missed or not ok
            verdict = f"  target <= {target:.0f} ms: {'met' if ok else 'MISSED'}"
        print(
            f"  {label:28s} p50 {p50:6.1f} ms  p95 {p95:6.1f} ms  "
            f"({p50 / floor_p50:4.2f}x the floor){verdict}"
        )
    print(
        f"  {'floor: GetState by fetch':28s} p50 {floor_p50:6.1f} ms  p95 {floor_p95:6.1f} ms"
        "  (the picture's round trip, no app code)"
    )
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
