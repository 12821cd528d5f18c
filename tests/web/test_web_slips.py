"""The web app and the slips of issue 26: the text box sends a line that names its mover
as typed, and the server refuses it when it is not that player's turn (one check for every
client); the list's moves column counts the players' moves, as the text record numbers
them."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tablelog_client.sdk import Client
from tests.service.support import ServeProcess
from tests.support.browser import open_page

if TYPE_CHECKING:
    from playwright.sync_api import Browser

pytestmark = pytest.mark.slow

LAYOUT = [
    "reveal 1.1 1w0:u1g2r1k1",
    "reveal 1.2 1g0:u1r2k2",
    "reveal 1.3 1w0:u2g2k1",
    "reveal 1.4 1k0:w1u2g1r1",
    "reveal 2.1 2g3:g6",
    "reveal 2.2 2u3:u6",
    "reveal 2.3 2u1:u2g3k3",
    "reveal 2.4 2g2:u5g3",
    "reveal 3.1 3w3:u3g3r5k3",
    "reveal 3.2 3w5:w3k7",
    "reveal 3.3 3g5:u7g3",
    "reveal 3.4 3u4:w6u3k3",
    "reveal noble g3r3k3",
    "reveal noble r4k4",
    "reveal noble u3g3r3",
]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ServeProcess, str]]:
    serve = ServeProcess(tmp_path_factory.mktemp("web"), http=True).start()
    try:
        (printed,) = serve.read_lines(1)
        yield serve, printed.removeprefix("web app: ").strip()
    finally:
        serve.stop()


def test_the_text_box_names_its_mover_and_the_list_counts_players_moves(
    served: tuple[ServeProcess, str], browser: Browser, tmp_path: Path
) -> None:
    serve, signed_in = served
    web, token = signed_in.split("#", 1)
    with Client(serve.address, token=serve.token) as client:
        game_id = client.create_game("splendor", ["Ann", "Bob"]).game_id
        for line in LAYOUT:
            client.record(game_id, line)
        version = client.get_game(game_id).version
        page = open_page(browser, f"{web}games/{game_id}#{token}")
        page.wait_for_selector(f'#picture[data-revision="{version}"]', timeout=10_000)
        page.fill("#notation", "Bob: take w u g")
        page.click("#record")
        page.wait_for_selector("#record-error:not(:empty)")
        shown = page.inner_text("#record-error")
        assert "It is Ann's turn, not Bob's." in shown
        assert "NOT_YOUR_TURN" in shown
        assert client.get_game(game_id).version == version  # nothing recorded
        page.fill("#notation", "Ann: take w u g")
        page.click("#record")
        page.wait_for_selector(f'#picture[data-revision="{version + 1}"]', timeout=10_000)
        assert list(client.state(game_id).moves)[-1] == "take w u g"

        listing = open_page(browser, f"{web}#{token}")
        listing.wait_for_selector(f'tr[data-game-id="{game_id}"]')
        cells = listing.eval_on_selector_all(
            f'tr[data-game-id="{game_id}"] td', "cells => cells.map(c => c.innerText.trim())"
        )
        assert cells[3] == "1"  # Ann's move; the table's 15 reveals are not counted
