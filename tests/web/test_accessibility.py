"""axe-core (clients/web's dev dependency, the engine of the common accessibility checkers)
finds no serious or critical violation on the game list, a game page with its tappable board,
and the recording bar with taps under way, on a phone with a touch screen (issue 25).

Skipped without chromium, the playwright package or clients/web/node_modules (`npm ci`),
unless CI is set: there it fails."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from tablelog_client.sdk import Client
from tests.service.support import ServeProcess
from tests.support.tools import unavailable
from tests.support.touching import TOUCH_PHONE, tap, wait_board

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

pytestmark = pytest.mark.slow

AXE = Path(__file__).resolve().parents[2] / "clients" / "web" / "node_modules" / "axe-core"
AXE_SCRIPT = AXE / "axe.min.js"
SERIOUS = {"serious", "critical"}


@pytest.fixture(scope="module", autouse=True)
def axe_core() -> None:
    if not AXE_SCRIPT.exists():
        unavailable("axe-core is not installed (cd clients/web && npm ci)")


@pytest.fixture(scope="module")
def serve(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ServeProcess, str]]:
    serve = ServeProcess(tmp_path_factory.mktemp("axe"), http=True).start()
    try:
        (printed,) = serve.read_lines(1)
        yield serve, printed.removeprefix("web app: ").strip()
    finally:
        serve.stop()


def phone(browser: Browser, url: str) -> Page:
    # The page's Content-Security-Policy admits scripts from its own origin only; axe is
    # the test's, put in through the browser's own channel.
    context = browser.new_context(
        viewport=TOUCH_PHONE,  # type: ignore[arg-type]
        has_touch=True,
        is_mobile=True,
        bypass_csp=True,
    )
    page = context.new_page()
    page.goto(url)
    return page


def serious_violations(page: Page) -> list[str]:
    page.evaluate(AXE_SCRIPT.read_text(encoding="utf-8"))
    found: dict[str, Any] = page.evaluate("async () => await axe.run(document)")
    return [
        f"{v['id']} ({v['impact']}): {v['help']} — {[n['target'] for n in v['nodes']][:3]}"
        for v in found["violations"]
        if v["impact"] in SERIOUS
    ]


def test_the_list_a_game_page_and_the_recording_bar_have_no_serious_violation(
    serve: tuple[ServeProcess, str], browser: Browser
) -> None:
    process, signed_in = serve
    web, token = signed_in.split("#", 1)
    with Client(process.address, token=process.token) as client:
        game = client.create_game("splendor", ["Ann", "Bob"], mode="dealt")
        client.record(game.game_id, "take w u g")
        head = client.get_game(game.game_id).version
    listing = phone(browser, signed_in)
    listing.wait_for_selector("tr[data-game-id]")
    assert serious_violations(listing) == []
    page = phone(browser, f"{web}games/{game.game_id}#{token}")
    wait_board(page, head)
    assert serious_violations(page) == []
    tap(page, "bank-r")
    tap(page, "bank-k")
    assert serious_violations(page) == []
