"""The web app marks a game's steps and notes imported unverified (issue 23: an import
accepted with accept_unverified read as genuine in the web app, "(recorded by ...)"): every
entry of the move list and every annotation that came in with the import says "unverified
import", with the audit's words in its title; a game imported verified, and a step recorded
here after the import, say nothing of the kind. In Chromium, against `tablelog serve`."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

from tablelog_client.sdk import Client
from tests.service.support import ServeProcess
from tests.support.browser import open_page

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

pytestmark = pytest.mark.slow

MOVES = ["reveal 1.1 1w0:u1g2r1k1", "reveal 1.2 1g0:u1r2k2"]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ServeProcess, str]]:
    serve = ServeProcess(tmp_path_factory.mktemp("web"), http=True).start()
    try:
        (printed,) = serve.read_lines(1)
        yield serve, printed.removeprefix("web app: ").strip()
    finally:
        serve.stop()


def shown(page: Page, version: int) -> list[tuple[str, str]]:
    """Each listed step's classes and text (not the folded setup's own row), once the page
    shows `version`."""
    page.wait_for_selector(f'#picture[data-revision="{version}"]', timeout=10_000)
    page.wait_for_selector(f'.moves li[data-revision="{version}"]')
    found: list[tuple[str, str]] = page.eval_on_selector_all(
        ".moves li[data-revision]", "items => items.map(i => [i.className, i.innerText])"
    )
    return found


def test_steps_and_notes_imported_unverified_are_marked(
    served: tuple[ServeProcess, str], browser: Browser
) -> None:
    serve, signed_in = served
    web, token = signed_in.split("#", 1)
    with Client(serve.address, token=serve.token) as client:
        game_id = client.create_game("splendor", ["Ann", "Bob"]).game_id
        for line in MOVES:
            client.record(game_id, line)
        client.annotate(game_id, "a fine reveal", revision=2)
        events = client.export(game_id)
        verified = client.import_events(events).game_id
        for event in events:
            event.ClearField("hash")  # an unkeyed history: verifiable by no key here
            event.ClearField("prev_hash")
            event.ClearField("chain_key_id")
        unverified = client.import_events(events, accept_unverified=True).game_id
        client.record(unverified, "reveal 1.3 1w0:u2g2k1")  # recorded here: genuine
        version = client.get_game(unverified).version

        page = open_page(browser, f"{web}games/{unverified}#{token}")
        steps = shown(page, version)
        assert len(steps) == version
        *imported, recorded_here = steps
        for classes, text in imported:
            assert "unverified" in classes.split(), (classes, text)
            assert "(unverified import)" in text, text
        assert "unverified" not in recorded_here[0].split()
        assert "unverified" not in recorded_here[1]
        title = page.get_attribute(".moves li .move .unverified", "title") or ""
        assert "imported unverified" in title
        assert "the export's word" in title
        page.wait_for_selector(".notes .note")
        assert "(unverified import)" in page.inner_text(".notes .note")

        page = open_page(browser, f"{web}games/{verified}#{token}")
        steps = shown(page, client.get_game(verified).version)
        assert steps
        assert not any("unverified" in text or "unverified" in c for c, text in steps)
        page.wait_for_selector(".notes .note")
        assert "unverified" not in page.inner_text(".notes .note")
