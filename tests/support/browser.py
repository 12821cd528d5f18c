"""Driving the web app in Debian's Chromium through Playwright, for the browser tests
(tests/web), the benchmark (benchmarks/webapp.py) and the README's screenshots
(scripts/screenshot_webapp.py): one setup for all three.

Playwright's own browser downloads are not used (nor reachable): it drives the system's
`chromium` through `executable_path`. Without it (or without the `playwright` package) the
browser tests are skipped, unless CI is set: there they fail, as .ci/run installs chromium.
"""

from __future__ import annotations

import base64
import contextlib
import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from tablelog.replay.registry import all_games
from tablelog_client.sdk import Client
from tests.support.play import random_game

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

CHROMIUM = "chromium"
SYSTEM_PATH = "/usr/bin:/usr/local/bin:/bin"
"""Where Debian puts its chromium: looked up there first (a snap or a wrapper earlier on PATH
is not the browser the tests were written against), then on PATH."""
CHROMIUM_ARGS = (
    "--headless",
    "--no-sandbox",  # root in CI and containers, where Chromium's sandbox cannot start
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)
PHONE = {"width": 360, "height": 740}
LAPTOP = {"width": 1280, "height": 900}
DATA_URL = "data:image/svg+xml;base64,"


def missing_browser() -> str | None:
    """Why the browser tests cannot run here (None: they can)."""
    try:
        import playwright.sync_api  # noqa: F401  (only whether it imports)
    except ImportError:
        return "the playwright package is not installed (pip install -e '.[dev]')"
    if _find_chromium() is None:
        return "chromium is not installed (apt-get install chromium)"
    return None


def _find_chromium() -> str | None:
    return shutil.which(CHROMIUM, path=SYSTEM_PATH) or shutil.which(CHROMIUM)


def chromium_path() -> str:
    return _find_chromium() or CHROMIUM


@contextlib.contextmanager
def chromium() -> Iterator[Browser]:
    """Debian's Chromium, headless, for the length of the block."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=chromium_path(), args=list(CHROMIUM_ARGS), headless=True
        )
        try:
            yield browser
        finally:
            browser.close()


def open_page(browser: Browser, url: str, viewport: dict[str, int] = LAPTOP) -> Page:
    """A new tab of its own (its own sessionStorage) at `url`."""
    context = browser.new_context(viewport=viewport)  # type: ignore[arg-type]
    page = context.new_page()
    page.goto(url)
    return page


def shown_picture(page: Page) -> str:
    """The SVG text of the picture the page shows."""
    source = page.get_attribute("#picture", "src") or ""
    assert source.startswith(DATA_URL), source[:80]
    return base64.b64decode(source[len(DATA_URL) :]).decode("utf-8")


@dataclass(frozen=True)
class ExampleGame:
    name: str
    game_id: str
    players: list[str]
    revisions: int


PLAYER_NAMES = ["Ann", "Bob", "Cleo", "Dev", "Eve", "Fay"]


def record_example_games(client: Client, moves: int, seed: int = 13) -> list[ExampleGame]:
    """One game of each registered kind, its fewest players (table mode), with the first
    `moves` lines of a seeded random game recorded through the API."""
    made = []
    for name, game in sorted(all_games().items()):
        played = random_game(name, game.min_players, seed=seed)
        players = PLAYER_NAMES[: game.min_players]
        summary = client.create_game(name, players, title=f"{game.title} at the club")
        version = summary.version
        for notation in played.notations[:moves]:
            answer = client.record(summary.game_id, notation, expected_version=version)
            version = answer.game.version
        made.append(ExampleGame(name, summary.game_id, players, version))
    return made


def record_long_game(client: Client, moves: int, seed: int = 7) -> str:
    """A four-player Splendor game (table mode) with the first `moves` lines of a seeded
    random game recorded (its games run to 230 moves and more), for the stepping benchmark.
    """
    played = random_game("splendor", 4, seed=seed)
    if len(played.notations) < moves:
        raise ValueError(f"the seeded game has only {len(played.notations)} moves")
    summary = client.create_game("splendor", PLAYER_NAMES[:4], title="A long game")
    version = summary.version
    for notation in played.notations[:moves]:
        version = client.record(summary.game_id, notation, expected_version=version).game.version
    return summary.game_id


def artefacts_dir(default: Path) -> Path:
    """Where screenshots go: $TABLELOG_ARTEFACTS, else `default`."""
    folder = Path(os.environ.get("TABLELOG_ARTEFACTS") or default)
    folder.mkdir(parents=True, exist_ok=True)
    return folder
