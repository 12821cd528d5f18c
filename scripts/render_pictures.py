"""Render every game's example picture to docs/pictures/<game>.svg (and its phone layout to
<game>-phone.svg), or check they are fresh.

    python scripts/render_pictures.py          # rewrite docs/pictures/*.svg
    python scripts/render_pictures.py --check  # exit 1 if rendering would change anything

The example of a game (every game in `replay.registry.all_games()` that draws pictures) is a
seeded random game (`tests/support/play.random_game`, its fewest players, dealt mode when the
game has it), a third of the way through its moves, so the table has something on it: drawn
as seat 0 sees it (another seat's hidden things face down), with the move that led there
framed. Pictures are deterministic, so the committed files are checked fresh by a test, like
the generated code.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
for extra in (ROOT, ROOT / "proto", ROOT / "clients" / "python"):
    if str(extra) not in sys.path:
        sys.path.insert(0, str(extra))

from tablelog.replay.core import DEALT, TABLE, Game  # noqa: E402  (the path is set up just above)
from tablelog.replay.picture import LAYOUTS, WIDE  # noqa: E402
from tablelog.replay.registry import all_games  # noqa: E402
from tests.support.play import random_game  # noqa: E402

PICTURES = ROOT / "docs" / "pictures"
SEED = 13
VIEWER = 0


def example(name: str, game: Game[Any, Any], layout: str = WIDE) -> str:
    """The example picture of `name` in `layout`: its seeded random game a third of the way
    in."""
    mode = DEALT if DEALT in game.modes else TABLE
    played = random_game(name, game.min_players, seed=SEED, mode=mode, keep_states=True)
    index = len(played.moves) // 3
    last = played.position.table.unwrap(played.moves[index - 1]) if index else None
    view = game.view(played.states[index], VIEWER)
    return game.picture(view, last_move=last, layout=layout) + "\n"


def drawing_games() -> dict[str, Game[Any, Any]]:
    """The registered games that draw pictures: all of them once every game has its
    `picture.py`; until then (a branch adding one game's picture) the ones that do."""
    return {name: game for name, game in all_games().items() if hasattr(game, "picture")}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only check freshness")
    args = parser.parse_args()
    stale = []
    rendered = {}
    for name, game in drawing_games().items():
        for layout in LAYOUTS:
            # The phone layout's example beside the wide one (issue 25): <game>-phone.svg.
            target = PICTURES / (f"{name}.svg" if layout == WIDE else f"{name}-{layout}.svg")
            rendered[target] = example(name, game, layout)
            if not target.exists() or target.read_text(encoding="utf-8") != rendered[target]:
                stale.append(target.name)
    if args.check:
        if stale:
            print("example pictures are stale:", ", ".join(stale))
            print("run: python scripts/render_pictures.py")
            return 1
        print(f"example pictures are fresh ({len(rendered)} files)")
        return 0
    PICTURES.mkdir(parents=True, exist_ok=True)
    for target, svg in rendered.items():
        target.write_text(svg, encoding="utf-8")
    print(f"wrote {len(rendered)} pictures; changed: {', '.join(stale) or 'none'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
