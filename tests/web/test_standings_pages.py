"""Club memory's pages in a real browser (Chromium via Playwright) against a live `tablelog
serve`: the standings page shows the API's table for a game type and season, a player's page
shows their record, head to head and the server's two charts (loaded as images), and both
fit a phone. Screenshots are saved with the other web artefacts.

Skipped without chromium or the playwright package, unless CI is set: there it fails."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

from tablelog_client.sdk import Client
from tests.service.support import ServeProcess
from tests.service.test_club_memory import play
from tests.support.browser import PHONE, artefacts_dir, open_page

if TYPE_CHECKING:
    from playwright.sync_api import Browser

pytestmark = pytest.mark.slow

SEATS = (["Ann", "Bob", "Cleo"], ["Bob", "Cleo"], ["Cleo", "Ann"], ["Ann", "Bob"])


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Client]]:
    serve = ServeProcess(tmp_path_factory.mktemp("memory-web"), http=True).start()
    try:
        (printed,) = serve.read_lines(1)
        signed_in = printed.removeprefix("web app: ").strip()
        with Client(serve.address, token=serve.token) as client:
            for seed, seats in enumerate(SEATS, start=20):
                play(client, "medici-card-game", list(seats), seed)
            deadline = time.monotonic() + 30
            while client.standings("medici-card-game").lag.projected_games < len(SEATS):
                assert time.monotonic() < deadline, "the projector never caught up"
                time.sleep(0.05)
            yield signed_in, client
    finally:
        serve.stop()


def url(signed_in: str, path: str) -> str:
    web, _, token = signed_in.partition("#")
    return f"{web}{path.lstrip('/')}#{token}"


def test_the_standings_page_shows_the_apis_table(
    served: tuple[str, Client], browser: Browser, tmp_path_factory: pytest.TempPathFactory
) -> None:
    signed_in, client = served
    year = time.gmtime().tm_year
    page = open_page(browser, url(signed_in, f"/standings?game=medici-card-game&season={year}"))
    page.wait_for_selector("#standings tbody tr, #page-error", timeout=10_000)
    assert page.query_selector("#page-error") is None, page.inner_text("#app")
    expected = client.standings("medici-card-game", str(year))
    shown = page.eval_on_selector_all(
        "#standings tbody tr", "rows => rows.map(r => [...r.cells].map(c => c.innerText))"
    )
    assert [row[1] for row in shown] == [r.display_name for r in expected.rows]
    assert [int(row[2]) for row in shown] == [r.games for r in expected.rows]
    assert [int(row[4]) for row in shown] == [r.points for r in expected.rows]
    summary = page.inner_text("#standings-summary")
    assert summary.startswith(f"medici-card-game, season {year} ({year}-01-01 to {year}-12-31)")
    assert summary.endswith(f"{len(SEATS)} game(s); up to date ({len(SEATS)} ended games)")
    assert page.input_value("#standings-game") == "medici-card-game"
    artefacts = artefacts_dir(tmp_path_factory.getbasetemp() / "artefacts")
    page.screenshot(path=str(artefacts / "standings.png"), full_page=True)
    # A player's name leads to their page.
    page.click(f'#standings a.player:text-is("{expected.rows[0].display_name}")')
    page.wait_for_selector("#player-name", timeout=10_000)
    assert page.inner_text("#player-name") == expected.rows[0].display_name
    page.close()


def test_a_players_page_shows_the_record_and_the_charts(
    served: tuple[str, Client], browser: Browser, tmp_path_factory: pytest.TempPathFactory
) -> None:
    signed_in, client = served
    record = client.player_record("Ann")
    (game,) = record.games
    page = open_page(browser, url(signed_in, "/players/ann"))
    page.wait_for_selector("#player-name", timeout=10_000)
    assert page.inner_text("#player-name") == "Ann"
    text = page.inner_text('section[data-game="medici-card-game"] p.record')
    assert text.startswith(f"{game.standing.games} game(s), ")
    assert f"{game.standing.points} points" in text
    for chart in ("rating-chart", "score-chart"):
        selector = f"#{chart}-medici-card-game"
        loaded = page.eval_on_selector(selector, "img => img.complete && img.naturalWidth")
        assert loaded == 480, chart
    opponents = page.eval_on_selector_all(
        ".head-to-head tbody tr", "rows => rows.map(r => r.cells[0].innerText)"
    )
    assert opponents == [h.opponent_name for h in game.head_to_head]
    artefacts = artefacts_dir(tmp_path_factory.getbasetemp() / "artefacts")
    page.screenshot(path=str(artefacts / "player-ann.png"), full_page=True)
    phone = open_page(browser, url(signed_in, "/players/Ann"), viewport=PHONE)
    phone.wait_for_selector("#rating-chart-medici-card-game", timeout=10_000)
    width = phone.evaluate("document.documentElement.scrollWidth")
    assert width <= PHONE["width"], "the player's page is wider than a phone"
    phone.screenshot(path=str(artefacts / "player-ann-phone.png"), full_page=True)
    phone.close()
    page.close()


def test_an_unknown_player_is_told(served: tuple[str, Client], browser: Browser) -> None:
    signed_in, _client = served
    page = open_page(browser, url(signed_in, "/players/Nobody%20Here"))
    page.wait_for_selector("#page-error", timeout=10_000)
    assert "PLAYER_NOT_FOUND" in page.inner_text("#page-error")
    page.close()
