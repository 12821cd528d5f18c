"""The web app in a real browser (Debian's Chromium, driven by Playwright) against a live
`tablelog serve` on its embedded Redis: the list and its filters, a game of each kind stepped
through revision by revision and compared with the API, the pictures checked component by
component (and saved as PNG screenshots), annotating, recording (a move, a refused move,
undo and redo), the viewer choice, a phone-sized screen, and a move recorded by another
client (the Python client over gRPC) appearing live, also after the stream drops.

Skipped without chromium or the playwright package, unless CI is set: there it fails."""

from __future__ import annotations

import random
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from tablelog.replay import fold as folding
from tablelog.replay.core import CHANCE, TERMINAL
from tablelog.v1 import game_pb2, service_pb2
from tablelog_client.sdk import Client, TablelogError
from tests.service.helpers import splendor_line
from tests.service.support import ServeProcess
from tests.support.browser import (
    PHONE,
    ExampleGame,
    artefacts_dir,
    open_page,
    record_example_games,
    shown_picture,
)
from tests.support.play import choose, new_position, random_game
from tests.web.pictures import check_picture

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page, Route

pytestmark = pytest.mark.slow

MOVES = 10
"""Lines recorded in each example game: enough for every kind to leave its setup."""
LIVE_SECONDS = 2.0


@dataclass
class Live:
    serve: ServeProcess
    client: Client
    signed_in: str
    """The address `tablelog serve` printed for the web app: it signs the owner in."""
    games: list[ExampleGame]

    @property
    def web(self) -> str:
        return self.signed_in.split("#", 1)[0]

    def url(self, path: str) -> str:
        """`path` on the web app, signing the owner in (every page opens a tab of its own)."""
        return f"{self.web}{path.lstrip('/')}#{self.signed_in.split('#', 1)[1]}"


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Live]:
    serve = ServeProcess(tmp_path_factory.mktemp("web"), http=True).start()
    try:
        (printed,) = serve.read_lines(1)
        assert printed.startswith("web app: http://"), serve.output
        signed_in = printed.removeprefix("web app: ").strip()
        with Client(serve.address, token=serve.token) as client:
            games = record_example_games(client, MOVES)
            yield Live(serve, client, signed_in, games)
    finally:
        serve.stop()


@pytest.fixture(scope="module")
def artefacts(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return artefacts_dir(tmp_path_factory.getbasetemp() / "artefacts")


def game_named(live: Live, name: str) -> ExampleGame:
    return next(game for game in live.games if game.name == name)


def wait_shown(page: Page, revision: int) -> None:
    page.wait_for_selector(f'#picture[data-revision="{revision}"]', timeout=10_000)


def text(page: Page, selector: str) -> str:
    return page.inner_text(selector).strip()


def listed_games(page: Page) -> list[str]:
    """The ids of the games the list shows, in order."""
    ids: list[str] = page.eval_on_selector_all(
        "tr[data-game-id]", "rows => rows.map(row => row.dataset.gameId)"
    )
    return ids


def expected_steps(client: Client, game: ExampleGame) -> dict[int, tuple[str, str]]:
    """Each revision's (player, move text) as the API tells them: the move's notation, and
    the seat whose decision it was (the table's for a chance move)."""
    steps: dict[int, tuple[str, str]] = {}
    to_move = None
    for item in client.replay(game.game_id, 1, full=True):
        event = item.event
        body = event.WhichOneof("body")
        if body == "game_created":
            steps[event.revision] = ("", "game created")
        elif body == "move_recorded":
            assert to_move is not None
            who = to_move.WhichOneof("who")
            player = game.players[to_move.seat] if who == "seat" else "table"
            # A move naming a card by its place only shows the card beside it (issue 26).
            notation = event.move_recorded.notation
            steps[event.revision] = (
                player,
                f"{notation} ({item.detail})" if item.detail else notation,
            )
        if body not in ("annotation_added", "annotation_removed"):
            to_move = item.state.to_move
    return steps


def test_the_printed_address_signs_the_owner_in_and_lists_the_games(
    live: Live, browser: Browser
) -> None:
    assert re.fullmatch(r"http://127\.0\.0\.1:\d+/#token=tlm_[A-Za-z0-9_-]+", live.signed_in)
    page = open_page(browser, live.signed_in)
    page.wait_for_selector("table.games")
    assert "token" not in page.url, "the token stays out of the address bar"
    # Newest first, as the API lists them (other tests of this module add games too).
    api = [game.game_id for game in live.client.list_games()]
    assert listed_games(page) == api[:20]
    assert {game.game_id for game in live.games} <= set(api)
    assert "(owner)" in text(page, "#who")

    page.select_option("select[name=game]", "medici")
    page.click("#filters button[type=submit]")
    page.wait_for_url(re.compile(r"game=medici"))
    page.wait_for_selector("table.games")
    assert listed_games(page) == [game.game_id for game in live.client.list_games("medici")]
    assert game_named(live, "medici").game_id in listed_games(page)

    page.goto(f"{live.web}?player=cleo")
    page.wait_for_selector("table.games")
    with_cleo = [
        game.game_id
        for game in live.client.list_games()
        if any(player.name == "Cleo" for player in game.players)
    ]
    assert listed_games(page) == with_cleo[:20]
    assert [game.game_id for game in live.client.list_games(player="cleo")] == with_cleo
    assert game_named(live, "castello-methoni").game_id in with_cleo

    page.goto(f"{live.web}?status=ended")
    page.wait_for_selector("#no-games")


def test_a_dealt_games_text_record_imports_from_the_page_as_a_table_game(
    live: Live, browser: Browser
) -> None:
    """Issue 26, item 6: pasted into the page, a dealt game's record becomes a table game."""
    dealt = live.client.create_game("splendor", ["Ann", "Bob"], mode="dealt").game_id
    live.client.record(dealt, "take w u g")
    text = live.client.export_record([dealt])
    assert '[Mode "dealt"]' in text
    page = open_page(browser, live.url("/"))
    page.wait_for_selector("#create-game", state="attached")
    page.click("#create summary")
    page.fill("#import-text", text)
    page.click("#import-submit")
    page.wait_for_url("**/games/*", timeout=15_000)
    game_id = page.url.split("/games/", 1)[1].split("?", 1)[0].split("#", 1)[0]
    assert game_id != dealt
    imported = live.client.get_game(game_id)
    assert imported.mode == game_pb2.MODE_TABLE
    assert imported.player_move_count == 1


def test_the_owner_deletes_a_game_from_its_page(live: Live, browser: Browser) -> None:
    """Issue 26: the club's owner deletes a game on its page (after saying yes); it says who
    deleted it and when, takes no more changes, and leaves the list; a "no" changes nothing."""
    game_id = live.client.create_game("splendor", ["Uma", "Val"], title="to delete").game_id
    page = open_page(browser, live.url(f"/games/{game_id}"))
    page.wait_for_selector("#delete-game", state="visible")
    page.once("dialog", lambda dialog: dialog.dismiss())
    page.click("#delete-game")
    assert live.client.get_game(game_id).status == service_pb2.GAME_STATUS_IN_PROGRESS
    page.once("dialog", lambda dialog: dialog.accept())
    page.click("#delete-game")
    page.locator("#game-status", has_text="Deleted by ").wait_for()
    assert page.is_hidden("#delete-game")
    assert page.is_hidden("#recorder")
    deleted = live.client.get_game(game_id)
    assert deleted.status == service_pb2.GAME_STATUS_DELETED
    assert text(page, "#game-status").startswith(f"Deleted by {deleted.deletion.by} on ")
    listing = open_page(browser, live.url("/"))
    listing.wait_for_selector("table.games")
    assert game_id not in listed_games(listing)
    # Opened again, the page says so and offers no change.
    again = open_page(browser, live.url(f"/games/{game_id}"))
    again.locator("#game-status", has_text="Deleted by ").wait_for()
    assert again.is_hidden("#delete-game")
    assert again.is_hidden("#annotate")


def test_the_list_pages_through_the_games(live: Live, browser: Browser) -> None:
    extra = [
        live.client.create_game("medici-card-game", ["Pat", "Quinn"]).game_id for _ in range(21)
    ]
    page = open_page(browser, live.url("/?game=medici-card-game"))
    page.wait_for_selector("table.games")
    first = listed_games(page)
    assert len(first) == 20
    page.click("#next-page")
    page.wait_for_selector("#first-page")
    second = listed_games(page)
    assert set(first).isdisjoint(second)
    assert set(first) | set(second) == {*extra, game_named(live, "medici-card-game").game_id}
    assert page.query_selector("#next-page") is None


def test_the_list_filters_by_player_on_the_server(live: Live, browser: Browser) -> None:
    """Every game of the club with a seat of that name, however it was typed, a page at a
    time; a longer name that starts with it is another player."""
    spellings = ["Rita", "RITA", " rita ", "Ｒｉｔａ"]
    made = [
        live.client.create_game("splendor", [spellings[i % 4], "Sam"]).game_id for i in range(23)
    ]
    live.client.create_game("splendor", ["Ritae", "Sam"])
    for game_id in made[::5]:
        live.client.abandon(game_id)
    page = open_page(browser, live.url("/"))
    page.wait_for_selector("table.games")
    page.fill("input[name=player]", "  rITA ")
    page.click("#filters button[type=submit]")
    page.wait_for_url(re.compile(r"player=rITA"))
    page.wait_for_selector("table.games")
    first = listed_games(page)
    assert first == made[::-1][:20]
    assert first == [game.game_id for game in live.client.list_games(player="rita")][:20]
    page.click("#next-page")
    page.wait_for_selector("#first-page")
    assert listed_games(page) == made[::-1][20:]
    assert page.query_selector("#next-page") is None

    page.goto(f"{live.web}?player=rita&status=abandoned")
    page.wait_for_selector("table.games")
    abandoned = live.client.list_games(status="abandoned", player="Rita")
    assert listed_games(page) == [game.game_id for game in abandoned] == made[::5][::-1]
    page.goto(f"{live.web}?player=rit")
    page.wait_for_selector("#no-games")


@pytest.mark.parametrize(
    "name", ["splendor", "medici-card-game", "medici", "castello-methoni", "mercado-de-lisboa"]
)
def test_every_revision_shows_what_the_api_has(
    live: Live, browser: Browser, artefacts: Path, name: str
) -> None:
    game = game_named(live, name)
    steps = expected_steps(live.client, game)
    assert sorted(steps) == list(range(1, game.revisions + 1))
    page = open_page(browser, live.url(f"/games/{game.game_id}?r=1"))
    wait_shown(page, 1)
    pictured = {1, game.revisions // 2, game.revisions}
    for revision in range(1, game.revisions + 1):
        if revision > 1:
            page.keyboard.press("ArrowRight")
            wait_shown(page, revision)
        assert text(page, "#revision") == f"Revision {revision} of {game.revisions}"
        assert (text(page, "#current-player"), text(page, "#current-move")) == steps[revision]
        assert page.url.endswith(f"?r={revision}")
        current = page.query_selector("#moves li[aria-current]")
        assert current is not None
        assert current.get_attribute("data-revision") == str(revision)
        if revision in pictured:
            state = live.client.state(game.game_id, revision, full=True, picture=True)
            svg = shown_picture(page)
            assert svg == state.picture
            check_picture(name, state.view, svg)
            page.screenshot(path=str(artefacts / f"{name}-r{revision}.png"), full_page=True)

    page.keyboard.press("Home")
    wait_shown(page, 1)
    page.keyboard.press("End")
    wait_shown(page, game.revisions)
    page.keyboard.press("ArrowLeft")
    wait_shown(page, game.revisions - 1)
    page.click('#moves li[data-revision="3"] button.step')
    wait_shown(page, 3)
    # The players' moves are numbered as the text record numbers them; the setup's table
    # events before the first player's move folded into one row (issue 26).
    numbered = [s for s, (player, _) in sorted(steps.items()) if player not in ("", "table")]
    if numbered:
        first = page.query_selector(f'#moves li[data-revision="{numbered[0]}"] .rev')
        assert first is not None
        assert first.inner_text() == "1."
    if steps.get(2, ("",))[0] == "table":
        assert page.query_selector("#moves li.setup-row") is not None
    # The address names the position: opened again, it shows the same revision.
    page.goto(live.url(f"/games/{game.game_id}?r=4"))
    wait_shown(page, 4)
    assert (text(page, "#current-player"), text(page, "#current-move")) == steps[4]


def test_a_player_named_table_is_not_folded_into_the_setup(live: Live, browser: Browser) -> None:
    """The setup row folds the table's events as the server's `toMove` says, not by the
    name the move list shows: a player may be called "table"."""
    game_id = live.client.create_game("splendor", ["table", "Bob"]).game_id
    played = random_game("splendor", 2, 1, keep_states=True)  # table mode: reveals recorded
    game = played.position.game
    first = next(i for i, s in enumerate(played.states) if game.to_move(s) != CHANCE)
    assert first > 0
    for notation in played.notations[: first + 2]:
        live.client.record(game_id, notation)
    last = first + 3  # revision 1 is the creation; the move at index i is revision i + 2
    page = open_page(browser, live.url(f"/games/{game_id}?r={last}"))
    wait_shown(page, last)
    assert page.query_selector("#moves li.setup-row") is not None
    folded = page.eval_on_selector_all(
        "#moves li.entry.setup", "rows => rows.map(row => Number(row.dataset.revision))"
    )
    assert folded == list(range(2, first + 2))
    for revision, number in ((first + 2, "1."), (first + 3, "2.")):
        row = page.query_selector(f'#moves li[data-revision="{revision}"]')
        assert row is not None
        assert "setup" not in (row.get_attribute("class") or "").split()
        assert text(page, f'#moves li[data-revision="{revision}"] .rev') == number
    assert text(page, f'#moves li[data-revision="{first + 2}"] .player') == "table"


def test_an_annotation_added_on_the_page_is_listed_with_its_move(
    live: Live, browser: Browser
) -> None:
    game = game_named(live, "splendor")
    page = open_page(browser, live.url(f"/games/{game.game_id}?r=5"))
    wait_shown(page, 5)
    page.select_option("#annotation-glyph", "!?")
    page.fill("#annotation-comment", "a bold reveal <b>not markup</b>")
    page.click("#annotate-submit")
    note = page.wait_for_selector('#moves li[data-revision="5"] .note')
    assert note is not None
    assert "a bold reveal <b>not markup</b>" in note.inner_text()
    assert text(page, '#moves li[data-revision="5"] .glyphs') == "!?"
    (stored,) = [a for a in live.client.annotations(game.game_id) if a.revision == 5]
    assert (stored.glyph, stored.comment) == ("!?", "a bold reveal <b>not markup</b>")

    # A revision that is no move (the creation is; an undo is not) is refused inline.
    page.fill("#annotation-comment", "")
    page.select_option("#annotation-glyph", "")
    page.click("#annotate-submit")
    assert "Choose a glyph, write a comment or give an alternative line" in text(
        page, "#annotation-error"
    )


def new_splendor(live: Live) -> tuple[str, int]:
    """A Splendor game whose layout is revealed: Ann to move."""
    summary = live.client.create_game("splendor", ["Ann", "Bob"])
    version = summary.version
    for notation in random_game("splendor", 2, seed=13).notations:
        if not notation.startswith("reveal"):
            break
        answer = live.client.record(summary.game_id, notation, expected_version=version)
        version = answer.game.version
    return summary.game_id, version


def test_recording_from_the_page_with_a_refusal_undo_and_redo(live: Live, browser: Browser) -> None:
    game_id, version = new_splendor(live)
    page = open_page(browser, live.url(f"/games/{game_id}"))
    wait_shown(page, version)
    page.wait_for_selector("#legal-moves button.legal-move")

    page.fill("#notation", "buy 1.1")
    page.click("#record")
    page.wait_for_selector("#record-error:not(:empty)")
    with pytest.raises(TablelogError) as refused:
        live.client.record(game_id, "buy 1.1", expected_version=version)
    assert refused.value.message in text(page, "#record-error")
    assert refused.value.reason in text(page, "#record-error")
    assert live.client.get_game(game_id).version == version

    # The filter reads the moves' words too (LegalMove.words): "white" finds the takes of it.
    page.fill("#legal-filter", "white")
    whites: list[str] = page.eval_on_selector_all(
        "#legal-moves button", "buttons => buttons.map(b => b.dataset.notation)"
    )
    assert whites
    assert all(n.startswith("take ") and " w" in n for n in whites), whites
    # (A reserve's words say the gold it takes: "take" finds the takes and the reserves.)
    page.fill("#legal-filter", "take")
    offered: list[str] = page.eval_on_selector_all(
        "#legal-moves button", "buttons => buttons.map(b => b.dataset.notation)"
    )
    assert offered
    assert offered[0].startswith("take ")
    assert [n for n in offered if not n.startswith(("take ", "reserve "))] == []
    page.click("#legal-moves button.legal-move >> nth=0")
    assert page.input_value("#notation") == offered[0]
    page.click("#record")
    wait_shown(page, version + 1)
    assert text(page, "#current-move") == offered[0]
    assert text(page, "#current-player") == "Ann"
    assert text(page, "#record-error") == ""

    page.click("#undo")
    wait_shown(page, version + 2)
    assert text(page, "#current-move") == f"undo: {offered[0]}"
    page.click("#redo")
    wait_shown(page, version + 3)
    assert text(page, "#current-move") == f"redo: {offered[0]}"
    assert live.client.get_game(game_id).version == version + 3


def test_the_recording_panel_fits_a_phone(live: Live, browser: Browser, artefacts: Path) -> None:
    game_id, version = new_splendor(live)
    page = open_page(browser, live.url(f"/games/{game_id}"), viewport=PHONE)
    wait_shown(page, version)
    page.wait_for_selector("#legal-moves button.legal-move")
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= PHONE["width"], f"the page scrolls sideways: {width} px wide"
    for selector in ("#notation", "#record", "#undo", "#redo", "#legal-filter", "#picture"):
        box = page.locator(selector).bounding_box()
        assert box is not None, selector
        assert 0 <= box["x"] <= box["x"] + box["width"] <= PHONE["width"], (selector, box)
    page.screenshot(path=str(artefacts / "phone-record.png"), full_page=True)


def test_the_viewer_choice_shows_that_seat_s_picture(live: Live, browser: Browser) -> None:
    game = game_named(live, "castello-methoni")
    page = open_page(browser, live.url(f"/games/{game.game_id}?r={game.revisions}"))
    wait_shown(page, game.revisions)
    page.select_option("#viewer", "seat-1")
    page.wait_for_selector('#picture[data-view="seat-1"]')
    assert "view=seat-1" in page.url
    seat = live.client.state(game.game_id, game.revisions, seat=1, picture=True)
    assert shown_picture(page) == seat.picture
    full = live.client.state(game.game_id, game.revisions, full=True, picture=True)
    assert seat.picture != full.picture, "a seat's view hides the other hands"


def test_a_move_recorded_elsewhere_appears_live_and_after_a_drop(
    live: Live, browser: Browser
) -> None:
    game_id, version = new_splendor(live)
    page = open_page(browser, live.url(f"/games/{game_id}"))
    wait_shown(page, version)
    page.wait_for_selector("#live-status:has-text('live')")
    _to_move, legal = live.client.legal_moves(game_id)
    started = time.monotonic()
    live.client.record(game_id, legal[0].notation, expected_version=version)
    wait_shown(page, version + 1)
    assert time.monotonic() - started < LIVE_SECONDS
    assert text(page, "#current-move") == legal[0].notation

    # The stream drops (the next watch is cut off, and a move is recorded meanwhile): the
    # page watches again from the revision after the last it has, and gets that move.
    dropped: list[str] = []

    def drop_once(route: Route) -> None:
        if dropped:
            route.continue_()
            return
        _to_move, legal = live.client.legal_moves(game_id)
        dropped.append(legal[0].notation)
        live.client.record(game_id, legal[0].notation, expected_version=version + 1)
        route.abort("connectionreset")

    page.route("**/tablelog.v1.TablelogService/WatchGame", drop_once)
    # Every text the live status takes, however briefly: "reconnecting" may last less than
    # a poll of the page, as the next watch can succeed at once.
    page.add_init_script(
        """window.__statuses = [];
        new MutationObserver(() => {
          const shown = document.getElementById("live-status");
          const now = shown ? shown.textContent || "" : "";
          if (window.__statuses[window.__statuses.length - 1] !== now) window.__statuses.push(now);
        }).observe(document, {childList: true, characterData: true, subtree: true});"""
    )
    page.reload()
    wait_shown(page, version + 2)
    statuses = page.evaluate("window.__statuses")
    assert any("reconnecting" in status for status in statuses), statuses
    assert text(page, "#current-move") == dropped[0]
    assert text(page, "#revision") == f"Revision {version + 2} of {version + 2}"


def test_a_shared_link_opens_its_game_read_only(live: Live, browser: Browser) -> None:
    """A link token (`tablelog share`) reads one game as a spectator: the app opens that
    game, shows the spectator's picture, and offers no recording or annotating."""
    game = game_named(live, "splendor")
    link = live.client.create_link_token(game.game_id).token
    page = open_page(browser, f"{live.web}#token={link}")
    page.wait_for_url(re.compile(f"/games/{game.game_id}"))
    wait_shown(page, game.revisions)
    spectator = live.client.state(game.game_id, game.revisions, picture=True)
    assert shown_picture(page) == spectator.picture
    assert page.locator("#recorder").is_hidden()
    assert page.locator("#annotate").is_hidden()


VARIATION_PLAYERS = ["Ann", "Bob"]
VARIATION_LINE = splendor_line(seed=31)
VARIATION_ANCHOR = 20
"""The annotated move's revision in a game of VARIATION_LINE[:24]: a player's move."""


def variation_game(live: Live) -> str:
    game_id = live.client.create_game("splendor", VARIATION_PLAYERS).game_id
    for notation in VARIATION_LINE[:24]:
        live.client.record(game_id, notation)
    return game_id


def alternative_line(played: list[str], length: int, seed: int) -> list[str]:
    """`length` random legal moves (by the rules core) after `played`, from the position
    before the annotated move, the first unlike the game's own."""
    position = new_position("splendor", VARIATION_PLAYERS)
    texts: list[str] = []
    rng = random.Random(seed)
    for text in [*VARIATION_LINE[: VARIATION_ANCHOR - 2], *played]:
        inner = position.game.parse(text, position.state)
        position = folding.record(position, position.table.wrap(inner), text)
    while len(texts) < length and position.to_move() != TERMINAL:
        inner = choose(position.game, position.state, rng)
        text = position.game.format(inner, position.state)
        if not (played or texts) and text == VARIATION_LINE[position.move_count]:
            continue
        texts.append(text)
        position = folding.record(position, position.table.wrap(inner), text)
    return texts


def variation_steps(
    live: Live, game_id: str, path: str, first_mover: str = ""
) -> list[tuple[str, str, str]]:
    """Each move of the line `path` as the API replays it: (mover, notation, picture), the
    mover being whoever was to move before it; for a nested line's first move, the mover of
    the move it replaces (`first_mover`: the replay streams no position before it)."""
    steps: list[tuple[str, str, str]] = []
    to_move = None
    for item in live.client.replay(
        game_id, VARIATION_ANCHOR - 1, full=True, picture=True, variation=path
    ):
        if item.HasField("variation"):
            assert to_move is not None
            mover = (
                VARIATION_PLAYERS[to_move.seat] if to_move.WhichOneof("who") == "seat" else "table"
            )
            mover = first_mover if first_mover and not steps else mover
            steps.append((mover, item.event.move_recorded.notation, item.state.picture))
        if item.event.WhichOneof("body") not in ("annotation_added", "annotation_removed"):
            to_move = item.state.to_move
    return steps


def test_stepping_into_a_variation_and_back(live: Live, browser: Browser) -> None:
    game_id = variation_game(live)
    line = alternative_line([], 4, seed=1)
    nested = alternative_line(line[:1], 2, seed=2)
    note = live.client.annotate(
        game_id, "what if", revision=VARIATION_ANCHOR, variation=[*line[:2], nested, *line[2:]]
    )
    key = note.annotation_id
    steps = variation_steps(live, game_id, key)
    assert [notation for _, notation, _ in steps] == line
    page = open_page(browser, live.url(f"/games/{game_id}?r={VARIATION_ANCHOR}"))
    wait_shown(page, VARIATION_ANCHOR)
    listed = f'#moves li[data-revision="{VARIATION_ANCHOR}"] ol.variation[data-path="{key}/"]'
    shown: list[str] = page.eval_on_selector_all(
        f"{listed} > li > button.variation-move", "buttons => buttons.map(b => b.innerText)"
    )
    assert [" ".join(text.split()) for text in shown] == [f"{p}: {n}" for p, n, _ in steps]

    def check_shown(path: str, number: int, expected: tuple[str, str, str]) -> None:
        page.wait_for_selector(
            f'#picture[data-variation="{path}"][data-variation-move="{number}"]', timeout=10_000
        )
        assert text(page, "#revision") == f"Revision {VARIATION_ANCHOR} of 25"
        assert (text(page, "#current-player"), text(page, "#current-move")) == expected[:2]
        assert shown_picture(page) == expected[2]
        vl = path.split("/", 1)[1]
        query = f"?r={VARIATION_ANCHOR}&v={key}&vm={number}" + (f"&vl={vl}" if vl else "")
        assert page.url.endswith(query)

    page.click(f'{listed} button.variation-move[data-move="2"]')
    check_shown(f"{key}/", 2, steps[1])
    page.keyboard.press("ArrowRight")
    check_shown(f"{key}/", 3, steps[2])
    page.keyboard.press("ArrowLeft")
    page.keyboard.press("ArrowLeft")
    check_shown(f"{key}/", 1, steps[0])
    # A nested line, by Enter on its move; the address opens it again.
    nested_steps = variation_steps(live, game_id, f"{key}/2.1", first_mover=steps[1][0])
    assert [notation for _, notation, _ in nested_steps] == nested
    page.focus(f'button.variation-move[data-path="{key}/2.1"][data-move="2"]')
    page.keyboard.press("Enter")
    check_shown(f"{key}/2.1", 2, nested_steps[1])
    page.goto(live.url(f"/games/{game_id}?r={VARIATION_ANCHOR}&v={key}&vm=1&vl=2.1"))
    check_shown(f"{key}/2.1", 1, nested_steps[0])
    page.keyboard.press("Escape")
    page.wait_for_selector(f'#picture[data-revision="{VARIATION_ANCHOR}"]:not([data-variation])')
    assert page.url.endswith(f"?r={VARIATION_ANCHOR}")
    assert text(page, "#current-move") == VARIATION_LINE[VARIATION_ANCHOR - 2]
    main = live.client.state(game_id, VARIATION_ANCHOR, full=True, picture=True)
    assert shown_picture(page) == main.picture


def test_a_variation_added_on_the_page_is_checked_by_the_server(
    live: Live, browser: Browser
) -> None:
    game_id = variation_game(live)
    line = alternative_line([], 2, seed=5)
    illegal = [*line, "take w w", "take w w"]
    with pytest.raises(TablelogError) as refused:
        live.client.annotate(game_id, "x", revision=VARIATION_ANCHOR, variation=illegal)
    page = open_page(browser, live.url(f"/games/{game_id}?r={VARIATION_ANCHOR}"))
    wait_shown(page, VARIATION_ANCHOR)
    page.fill("#annotation-comment", "x")
    page.fill("#annotation-variation", "; ".join(illegal))
    page.click("#annotate-submit")
    page.wait_for_selector("#annotation-error:not(:empty)")
    said = text(page, "#annotation-error")
    error = refused.value
    assert error.reason == "ILLEGAL_VARIATION_MOVE"
    assert error.message in said
    assert f'move {error.metadata["path"]} "take w w"' in said
    assert f"rule {error.metadata['rule']}" in said
    assert not live.client.annotations(game_id)

    page.fill("#annotation-variation", "\n".join(line))
    page.click("#annotate-submit")
    added = page.wait_for_selector(
        f'#moves li[data-revision="{VARIATION_ANCHOR}"] ol.variation button.variation-move >> nth=1'
    )
    assert added is not None
    assert text(page, "#annotation-error") == ""
    (stored,) = live.client.annotations(game_id)
    assert [move.notation for move in stored.variation.moves] == line
    assert line[1] in added.inner_text()


def test_a_past_picture_comes_over_get_and_the_browser_keeps_it(
    live: Live, browser: Browser
) -> None:
    """Issue 24's immutable past pictures (issue 27's HTTP caching): the page fetches a past
    revision's picture for a chosen viewer with a Connect GET that the server marks
    immutable, so opening it again is answered by the browser's cache, not the server."""
    game = game_named(live, "castello-methoni")
    address = live.url(f"/games/{game.game_id}?r=3&view=seat-1")
    context = browser.new_context()
    page = context.new_page()
    answers: list[tuple[str, str, str]] = []

    def seen(response: Any) -> None:
        if response.url.split("?")[0].endswith("TablelogService/GetState"):
            answers.append(
                (
                    response.request.method,
                    response.headers.get("cache-control", ""),
                    response.url,
                )
            )

    page.on("response", seen)
    page.goto(address)
    wait_shown(page, 3)
    past = [answer for answer in answers if answer[1] == "private, max-age=31536000, immutable"]
    assert past, answers
    assert all(method == "GET" for method, _, _ in answers)
    page.goto("about:blank")
    page.goto(address)
    wait_shown(page, 3)
    # The second page's GetState of that revision never reached the network.
    sizes = page.evaluate(
        """() => performance.getEntriesByType("resource")
            .filter((entry) => entry.name.includes("TablelogService/GetState"))
            .map((entry) => [entry.name, entry.transferSize])"""
    )
    kept = [name for name, size in sizes if name == past[0][2] and size == 0]
    assert kept, sizes
    context.close()
