"""Recording by touch (issue 25) in a real browser: Debian's Chromium through Playwright, as a
phone (390 px, touch screen), against a live `tablelog serve`.

For each of the five games a game is recorded by taps alone: the test asks the API for the
legal moves (as any client would), picks one with a seeded random choice, and taps its
touches on the board (found on the page by their `data-touch` ids), then the record button
of the bar; no notation is typed. The same moves are recorded by notation in a second game
through the API, and both games must end in exactly the same state (the full view, the
result and the recorded notations). To keep the suite's time bounded, each game records a
bounded prefix (`MOVES` moves, the table's reveals and draws included) by default.

The whole games (marked `long`, deselected by default; `.ci/run` runs them with
`pytest -m long`): each game's seeded random game (tests.support.play.random_game, its
fewest players, table mode) is recorded to its end by taps alone, each next move's touches
found among the API's listed moves by its notation; the same notations recorded through
the API in a second game must give the same state, result and history. The time of each
(taps in the browser, notation through the API; for Splendor also notation typed in the
page) is printed and written to the artefacts.

A dealt game is tapped in each seat's own view (the page of the seat to move, its blind
reserve shown to it only). At 390 px the page asks for the pictures' phone layout: every
touchable a finger's tap acts on is at least 44 CSS px (fit to the width for four games;
Castello Methoni's smaller ones zoom the board on a tap and act zoomed: docs/benchmarks.md,
"Touch targets"). The create form
offers each game's options as ListGameTypes names them and sends those set.

A wrong tap (an element no legal move goes on with) is refused inline and changes nothing:
neither the taps so far nor the game. A tapped move the server refuses (another member
recorded first and the phone did not hear it; the game deleted between the taps and the
record) is said in the bar in the server's words, and nothing is recorded. The board is
played with the keyboard too (Tab, Enter or Space). At 390 px every other control of the
page (buttons, links, fields, chips, the move list's rows) is 44 x 44 CSS px. An ended game
tied on points shows its tie-break, on the page and in the list. Screenshots of each game's
recording bar at 390 px are saved with the test's artefacts (scripts/screenshot_touch.py
writes the docs' copies).

Skipped without chromium or the playwright package, unless CI is set: there it fails."""

from __future__ import annotations

import random
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from tablelog.replay.picture import PHONE_WIDTH
from tablelog.replay.registry import all_games
from tablelog.v1 import mercado_de_lisboa_pb2, service_pb2
from tablelog_client.sdk import Client
from tests.service.support import ServeProcess
from tests.support.browser import PLAYER_NAMES, artefacts_dir, record_example_games
from tests.support.play import random_game
from tests.support.touching import TOUCH_PHONE, tap, touch_page, wait_board

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

pytestmark = pytest.mark.slow

MOVES = 14
"""Moves recorded by taps in each game: past each game's setup reveals into its play."""
SEED = 5
TARGET_PX = 44
"""WCAG 2.5.5's touch target, in CSS px."""
WHOLE_SEED = 3
"""The seeded random game each game records whole by taps (the `long` tests)."""


@pytest.fixture(scope="module")
def serve(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ServeProcess, str]]:
    serve = ServeProcess(tmp_path_factory.mktemp("touch"), http=True).start()
    try:
        (printed,) = serve.read_lines(1)
        assert printed.startswith("web app: http://"), serve.output
        yield serve, printed.removeprefix("web app: ").strip()
    finally:
        serve.stop()


@pytest.fixture(scope="module")
def artefacts(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return artefacts_dir(tmp_path_factory.getbasetemp() / "artefacts")


def page_url(signed_in: str, game_id: str) -> str:
    web, token = signed_in.split("#", 1)
    return f"{web}games/{game_id}#{token}"


def record_by_taps(page: Page, client: Client, game_id: str, rng: random.Random) -> str:
    """One move chosen at random among the listed ones, recorded by tapping its touches."""
    version = client.get_game(game_id).version
    wait_board(page, version)
    _to_move, moves = client.legal_moves(game_id)
    move = moves[rng.randrange(len(moves))]
    tap_and_record(page, move)
    page.wait_for_selector(
        f'#picture[data-revision="{version + 1}"]', state="attached", timeout=15_000
    )
    return move.notation


def tap_move(
    page: Page,
    client: Client,
    game_id: str,
    notation: str,
    viewer: service_pb2.Viewer | None = None,
) -> None:
    """The listed move written `notation` (listed for `viewer`, the page's), recorded by
    tapping its touches (never typed)."""
    version = client.get_game(game_id).version
    wait_board(page, version)
    _to_move, moves = client.legal_moves(game_id, viewer=viewer)
    (move,) = [move for move in moves if move.notation == notation]
    tap_and_record(page, move)
    wait_head(page, client, game_id, version)


def tap_and_record(page: Page, move: service_pb2.LegalMove) -> None:
    """Taps `move`'s touches, checks that the bar offers that move (its notation, and its
    words as the server says them), then taps Record."""
    for touch_id in move.touches:
        tap(page, touch_id)
    # The bar says the move once the page has matched the taps (a moment later on a busy
    # machine: CI once read it before).
    page.locator("#tap-record", has_text=f"Record: {move.notation}").wait_for(timeout=10_000)
    assert page.inner_text("#tap-record").strip() == f"Record: {move.notation}"
    assert page.inner_text("#tap-words").startswith(move.words), move.notation
    tap_record(page)


def wait_head(page: Page, client: Client, game_id: str, version: int) -> None:
    """Waits until a move is recorded after `version` and the page shows the new head. The
    move that ends a game is followed by the end's own event: the head then moves on by two
    revisions, so the page is waited for at the head the server has."""
    deadline = time.monotonic() + 15
    while (head := client.get_game(game_id).version) == version:
        assert time.monotonic() < deadline, f"no move was recorded after revision {version}"
        time.sleep(0.05)
    page.wait_for_selector(f'#picture[data-revision="{head}"]', state="attached", timeout=15_000)


def type_move(page: Page, client: Client, game_id: str, notation: str) -> None:
    """The move typed in notation in the page's recording panel, as before taps."""
    version = client.get_game(game_id).version
    page.wait_for_selector(f'#picture[data-revision="{version}"]', state="attached")
    page.fill("#notation", notation)
    page.press("#notation", "Enter")
    wait_head(page, client, game_id, version)


def tap_record(page: Page) -> None:
    box = page.locator("#tap-record").bounding_box()
    assert box is not None
    page.touchscreen.tap(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)


@pytest.mark.parametrize("name", sorted(all_games()))
def test_a_game_recorded_by_taps_ends_as_the_same_game_recorded_by_notation(
    name: str, serve: tuple[ServeProcess, str], browser: Browser, artefacts: Path
) -> None:
    process, signed_in = serve
    players = PLAYER_NAMES[: all_games()[name].min_players]
    with Client(process.address, token=process.token) as client:
        tapped = client.create_game(name, players)
        typed = client.create_game(name, players)
        page = touch_page(browser, page_url(signed_in, tapped.game_id))
        rng = random.Random(SEED)
        notations = []
        for number in range(MOVES):
            if client.get_game(tapped.game_id).to_move.WhichOneof("who") == "terminal":
                break
            notations.append(record_by_taps(page, client, tapped.game_id, rng))
            if number == MOVES // 2:
                page.screenshot(path=str(artefacts / f"touch-{name}.png"))
        for notation in notations:
            client.record(typed.game_id, notation)
        assert_same_games(client, tapped.game_id, typed.game_id, notations)


def assert_same_games(client: Client, tapped: str, typed: str, notations: list[str]) -> None:
    by_taps = client.state(tapped, full=True)
    by_notation = client.state(typed, full=True)
    assert by_taps.view == by_notation.view
    assert by_taps.result == by_notation.result
    recorded = [
        item.event.move_recorded.notation
        for item in client.replay(tapped, 1, full=True)
        if item.event.WhichOneof("body") == "move_recorded"
    ]
    assert recorded == notations


@pytest.mark.long
@pytest.mark.parametrize("name", sorted(all_games()))
def test_a_whole_game_recorded_by_taps_ends_as_the_same_game_recorded_by_notation(
    name: str, serve: tuple[ServeProcess, str], browser: Browser, artefacts: Path
) -> None:
    process, signed_in = serve
    count = all_games()[name].min_players
    played = random_game(name, count, seed=WHOLE_SEED)
    players = PLAYER_NAMES[:count]
    with Client(process.address, token=process.token) as client:
        tapped = client.create_game(name, players)
        typed = client.create_game(name, players)
        page = touch_page(browser, page_url(signed_in, tapped.game_id))
        started = time.perf_counter()
        for notation in played.notations:
            tap_move(page, client, tapped.game_id, notation)
        by_taps = time.perf_counter() - started
        assert client.get_game(tapped.game_id).to_move.WhichOneof("who") == "terminal"
        started = time.perf_counter()
        for notation in played.notations:
            client.record(typed.game_id, notation)
        by_notation = time.perf_counter() - started
        assert_same_games(client, tapped.game_id, typed.game_id, played.notations)
        line = (
            f"{name}: {len(played.notations)} moves, by taps {by_taps:.1f} s "
            f"({1000 * by_taps / len(played.notations):.0f} ms a move), by notation through "
            f"the API {by_notation:.2f} s"
        )
        if name == "splendor":
            # The measure: a whole Splendor game by taps against the same game typed
            # in notation in the same page's recording panel.
            in_page = client.create_game(name, players)
            page = touch_page(browser, page_url(signed_in, in_page.game_id))
            started = time.perf_counter()
            for notation in played.notations:
                type_move(page, client, in_page.game_id, notation)
            by_typing = time.perf_counter() - started
            assert_same_games(client, in_page.game_id, typed.game_id, played.notations)
            line += f", typed in the page {by_typing:.1f} s"
        print(line)
        with (artefacts / "whole-games-by-taps.txt").open("a") as times:
            times.write(line + "\n")


def test_a_dealt_game_is_tapped_in_each_seat_s_own_view(
    serve: tuple[ServeProcess, str], browser: Browser
) -> None:
    """Dealt mode, each move tapped on the page of the seat to move's own view (its hidden
    cards shown, the others' hidden): a blind reserve (hidden from the other seat) and then
    that seat's moves with the reserved card in its hand are all reachable by taps."""
    process, signed_in = serve
    web, token = signed_in.split("#", 1)
    rng = random.Random(SEED)
    with Client(process.address, token=process.token) as client:
        game = client.create_game("splendor", ["Ann", "Bob"], mode="dealt")
        pages: dict[int, Page] = {}
        notations = []
        by_seat: dict[int, list[str]] = {}
        for _ in range(6):
            seat = client.get_game(game.game_id).to_move.seat
            if seat not in pages:
                url = f"{web}games/{game.game_id}?view=seat-{seat}#{token}"
                pages[seat] = touch_page(browser, url)
            viewer = service_pb2.Viewer(seat=seat)
            _to_move, moves = client.legal_moves(game.game_id, viewer=viewer)
            # Each seat reserves blind from a deck first, then plays at random.
            blind = [m.notation for m in moves if m.notation.endswith(".deck")]
            reserved = any(n.endswith(".deck") for n in by_seat.setdefault(seat, []))
            notation = (
                blind[0] if blind and not reserved else moves[rng.randrange(len(moves))].notation
            )
            tap_move(pages[seat], client, game.game_id, notation, viewer)
            notations.append(notation)
            by_seat[seat].append(notation)
        recorded = [
            item.event.move_recorded.notation
            for item in client.replay(game.game_id, 1, full=True)
            if item.event.WhichOneof("body") == "move_recorded"
        ]
        # The server's deals (reveals) come between the players' moves.
        assert [n for n in recorded if not n.startswith("reveal ")] == notations
        assert {
            seat for seat, mine in by_seat.items() if any(n.endswith(".deck") for n in mine)
        } == {0, 1}


def test_a_wrong_tap_is_refused_and_changes_nothing(
    serve: tuple[ServeProcess, str], browser: Browser
) -> None:
    process, signed_in = serve
    with Client(process.address, token=process.token) as client:
        game = client.create_game("splendor", ["Ann", "Bob"], mode="dealt")
        page = touch_page(browser, page_url(signed_in, game.game_id))
        wait_board(page, game.version)
        tap(page, "bank-w")
        tap(page, "bank-u")
        before = page.inner_text("#tap-words")
        # A card in the market does not go on a take of tokens: dimmed, and refused.
        assert "touch-dim" in (page.get_attribute('[data-touch="slot-1.1"]', "class") or "")
        page.evaluate(
            """() => document.querySelector('[data-touch="slot-1.1"]')
                .dispatchEvent(new MouseEvent("click", { bubbles: true }))"""
        )
        assert "No legal move goes on with" in page.inner_text("#tap-error")
        assert page.inner_text("#tap-words") == before
        assert page.is_disabled("#tap-record")
        assert client.get_game(game.game_id).version == game.version
        # The blue taken back, the taps go another way: two white.
        page.locator("#tap-back").tap()
        tap(page, "bank-w")
        assert page.inner_text("#tap-record").strip() == "Record: take w w"
        assert page.inner_text("#tap-words") == "Ann takes 2 white."
        # White and blue leave a few takes of three: each offered with its words.
        page.locator("#tap-back").tap()
        tap(page, "bank-u")
        choices = page.locator("#tap-choices .tap-choice").all_inner_texts()
        assert len(choices) == 3, choices
        for colour, letter in (("green", "g"), ("red", "r"), ("black", "k")):
            said = f"Ann takes white, blue and {colour}."
            assert any(said in c and f"take w u {letter}" in c for c in choices), choices
        page.locator("#tap-clear").tap()
        assert page.is_disabled("#tap-record")
        assert client.get_game(game.game_id).version == game.version


def test_the_recording_panel_speaks_of_the_revision_shown(
    serve: tuple[ServeProcess, str], browser: Browser
) -> None:
    process, signed_in = serve
    with Client(process.address, token=process.token) as client:
        game = client.create_game("splendor", ["Ann", "Bob"], mode="dealt")
        client.record(game.game_id, "take w u g")
        head = client.get_game(game.game_id).version
        page = touch_page(browser, page_url(signed_in, game.game_id))
        wait_board(page, head)
        assert "latest revision" in page.inner_text("#record-at")
        page.locator("#previous").tap()
        page.wait_for_selector(f'#picture[data-revision="{head - 1}"]', state="attached")
        assert page.is_hidden("#tap-bar")
        assert page.is_hidden("#touch-board")
        assert f"Revision {head - 1} is shown" in page.inner_text("#record-at")
        assert page.is_hidden("#record-controls")
        page.locator("#go-head").tap()
        wait_board(page, head)
        # Zoomed, the board is wider than the phone and scrolls; its taps still work.
        page.locator("#zoom").tap()
        zoomed = page.locator("#touch-board svg.touch-picture").bounding_box()
        assert zoomed is not None
        assert zoomed["width"] > 2 * 390
        tap(page, "bank-r")
        assert "bank" in page.inner_text("#tap-words")
        page.locator("#zoom").tap()
        # A watcher on a phone reads the moves before any recording control.
        moves = page.locator("#moves").bounding_box()
        recorder = page.locator("#recorder").bounding_box()
        assert moves is not None
        assert recorder is not None
        assert moves["y"] < recorder["y"]


def test_an_ended_game_shows_its_final_scores(
    serve: tuple[ServeProcess, str], browser: Browser
) -> None:
    process, signed_in = serve
    played = random_game("medici-card-game", 3, seed=2)
    with Client(process.address, token=process.token) as client:
        game = client.create_game("medici-card-game", ["Ann", "Bob", "Cleo"])
        for notation in played.notations:
            client.record(game.game_id, notation)
        ended = client.get_game(game.game_id)
        page = touch_page(browser, page_url(signed_in, game.game_id))
        page.wait_for_selector("#scores table.scores")
        rows = page.locator("#scores tbody tr")
        assert rows.count() == 3
        result = ended.result
        winners = {ended.players[seat].name for seat in result.winners}
        shown = {
            rows.nth(i).locator("td").nth(0).inner_text(): rows.nth(i).locator("td")
            for i in range(3)
        }
        for score in result.scores:
            cells = shown[ended.players[score.seat].name]
            assert cells.nth(1).inner_text() == str(score.total)
        assert {
            rows.nth(i).locator("td").nth(0).inner_text()
            for i in range(3)
            if rows.nth(i).locator("td").nth(3).inner_text()
        } == winners
        assert page.is_hidden("#tap-bar")
        assert page.is_hidden("#tiebreak") == (not result.tiebreak)
        # The list says who won, with the points.
        listing = touch_page(browser, signed_in)
        row = listing.locator(f'tr[data-game-id="{game.game_id}"]')
        row.wait_for()
        assert list_line(ended) in row.inner_text()


def list_line(game: service_pb2.GameSummary) -> str:
    """What the list says of an ended game's result: the winner (or the shared win), each
    player's points, and the tie-break the rules applied, as the server gives them."""
    result = game.result
    names = [game.players[seat].name for seat in result.winners]
    won = f"shared win: {' and '.join(names)}" if len(names) > 1 else f"won by {names[0]}"
    ranked = sorted(result.scores, key=lambda score: -score.total)
    points = ", ".join(f"{game.players[s.seat].name} {s.total}" for s in ranked)
    tiebreak = f" · tie-break: {result.tiebreak}" if result.tiebreak else ""
    return f"{won} · {points}{tiebreak}"


TIE_BROKEN = {
    "splendor": 13,
    "medici-card-game": 9,
}
"""Seeded random two-player games that end tied on points: Splendor's seed 13 is decided by
its tie-break (17 each, the fewer development cards win: RULES.md §8), the Medici card
game's seed 9 is a shared win (160 florins each: Rules §A5)."""


@pytest.mark.parametrize("name", sorted(TIE_BROKEN))
def test_an_ended_game_tied_on_points_shows_its_tie_break(
    name: str, serve: tuple[ServeProcess, str], browser: Browser
) -> None:
    """Issue 25: an ended game's score table gives names, points, tie-break and winner, on
    the page and in the list; the tie-break is the rule the server's result names (the
    client decides nothing), said with the players it was applied to."""
    process, signed_in = serve
    played = random_game(name, 2, seed=TIE_BROKEN[name])
    with Client(process.address, token=process.token) as client:
        game = client.create_game(name, ["Ann", "Bob"], title=f"Tied {name}")
        for notation in played.notations:
            client.record(game.game_id, notation)
        ended = client.get_game(game.game_id)
        result = ended.result
        assert result.tiebreak
        totals = {ended.players[s.seat].name: s.total for s in result.scores}
        assert totals["Ann"] == totals["Bob"]
        page = touch_page(browser, page_url(signed_in, game.game_id))
        page.wait_for_selector("#scores table.scores")
        rows = page.locator("#scores tbody tr")
        shown = {
            rows.nth(i).locator("td").nth(0).inner_text(): [
                rows.nth(i).locator("td").nth(column).inner_text() for column in (1, 3)
            ]
            for i in range(rows.count())
        }
        winners = [ended.players[seat].name for seat in result.winners]
        said = "shared win" if len(winners) > 1 else "winner"
        assert shown == {
            player: [str(total), said if player in winners else ""]
            for player, total in totals.items()
        }
        tiebreak = page.inner_text("#tiebreak")
        assert result.tiebreak in tiebreak
        assert f"Ann and Bob tied on {totals['Ann']}" in tiebreak, tiebreak
        listing = touch_page(browser, signed_in)
        row = listing.locator(f'tr[data-game-id="{game.game_id}"]')
        row.wait_for()
        assert list_line(ended) in row.inner_text()
        page.context.close()
        listing.context.close()


def test_the_share_button_gives_a_read_only_link_that_opens_the_game(
    serve: tuple[ServeProcess, str], browser: Browser
) -> None:
    process, signed_in = serve
    with Client(process.address, token=process.token) as client:
        game = client.create_game("splendor", ["Ann", "Bob"], mode="dealt")
        page = touch_page(browser, page_url(signed_in, game.game_id))
        wait_board(page, game.version)
        page.locator("#share").tap()
        page.wait_for_selector("#share-link")
        link = page.get_attribute("#share-link", "href") or ""
        assert link.startswith(f"{signed_in.split('#', 1)[0]}games/{game.game_id}#token=tll_")
        reader = touch_page(browser, link)
        reader.wait_for_selector(f'#picture[data-revision="{game.version}"]', state="attached")
        assert reader.is_hidden("#tap-bar")


def test_a_game_is_created_from_the_web_app_with_the_club_s_names(
    serve: tuple[ServeProcess, str], browser: Browser
) -> None:
    process, signed_in = serve
    with Client(process.address, token=process.token) as client:
        client.create_game("splendor", ["Zelda", "Yann"])
        page = touch_page(browser, signed_in)
        page.wait_for_selector("tr[data-game-id]")
        page.locator("#create summary").tap()
        offered = page.eval_on_selector_all(
            "#known-players option", "options => options.map(o => o.value)"
        )
        assert {"Zelda", "Yann"} <= set(offered)
        page.select_option("#new-game", "mercado-de-lisboa")
        page.select_option("#new-mode", "table")
        page.fill("#new-title", "Friday table 2")
        players = page.locator("#new-players input.new-player")
        players.nth(0).fill("Zelda")
        players.nth(1).fill("Xavier")
        page.locator("#new-submit").tap()
        page.wait_for_url("**/games/*", timeout=15_000)
        game_id = page.url.split("/games/", 1)[1].split("?", 1)[0].split("#", 1)[0]
        made = client.get_game(game_id)
        assert made.game == "mercado-de-lisboa"
        assert [p.name for p in made.players] == ["Zelda", "Xavier"]
        assert made.title == "Friday table 2"
        wait_board(page, made.version)
        # Refused (one player is too few for Castello Methoni): said under the form.
        page.goto(signed_in)
        page.wait_for_selector("tr[data-game-id]")
        page.locator("#create summary").tap()
        page.select_option("#new-game", "castello-methoni")
        page.locator("#new-players input.new-player").nth(0).fill("Zelda")
        page.locator("#new-submit").tap()
        page.wait_for_selector("#new-error:not(:empty)")


def test_a_game_is_created_from_the_web_app_with_its_options(
    serve: tuple[ServeProcess, str], browser: Browser
) -> None:
    process, signed_in = serve
    with Client(process.address, token=process.token) as client:
        page = touch_page(browser, signed_in)
        page.wait_for_selector("#create summary")
        page.locator("#create summary").tap()
        # Each game's options are the ones ListGameTypes names, each with its description.
        for info in client.game_types():
            page.select_option("#new-game", info.name)
            shown = page.eval_on_selector_all(
                "#new-options .new-option", "inputs => inputs.map(i => i.dataset.option)"
            )
            assert shown == [option.name for option in info.options], info.name
        page.select_option("#new-game", "mercado-de-lisboa")
        page.select_option('[data-option="money"]', "MERCADO_DE_LISBOA_MONEY_OPEN")
        page.locator('[data-option="clamp_penalty_at_zero"]').check()
        page.fill('[data-option="first_player"]', "1")
        players = page.locator("#new-players input.new-player")
        players.nth(0).fill("Ann")
        players.nth(1).fill("Bob")
        page.locator("#new-submit").tap()
        page.wait_for_url("**/games/*", timeout=15_000)
        game_id = page.url.split("/games/", 1)[1].split("?", 1)[0].split("#", 1)[0]
        made = client.get_game(game_id).options.mercado_de_lisboa
        assert made.money == mercado_de_lisboa_pb2.MERCADO_DE_LISBOA_MONEY_OPEN
        assert made.clamp_penalty_at_zero
        assert made.first_player == 1
        assert made.stage == 0
        # An option the game refuses (no third seat to start) is said under the form and
        # creates nothing.
        before = len(list(client.list_games()))
        page.goto(signed_in)
        page.wait_for_selector("#create summary")
        page.locator("#create summary").tap()
        page.select_option("#new-game", "splendor")
        page.locator('[data-option="allow_take_fewer_anytime"]').check()
        page.fill('[data-option="first_player"]', "5")
        players = page.locator("#new-players input.new-player")
        players.nth(0).fill("Ann")
        players.nth(1).fill("Bob")
        page.locator("#new-submit").tap()
        page.wait_for_selector("#new-error:not(:empty)")
        assert "first" in page.inner_text("#new-error").lower()
        assert len(list(client.list_games())) == before


_BOXES = """() => Object.fromEntries(
  Array.from(document.querySelectorAll("#touch-board [data-touch]")).map((element) => {
    const box = element.getBoundingClientRect();
    return [element.getAttribute("data-touch"), [box.width, box.height]];
  }))"""


FIT_TO_A_FINGER = frozenset({"medici", "medici-card-game", "mercado-de-lisboa", "splendor"})
"""The games whose phone layout gives every touchable 44 px fit to a 390 px phone; Castello
Methoni's map keeps its edges' sides small (two triangles of about 16 x 29 px)."""


def test_every_acting_touchable_is_a_finger_wide(
    serve: tuple[ServeProcess, str], browser: Browser
) -> None:
    """WCAG 2.5.5 at 390 px, the pictures' phone layout: what a finger's tap acts on is 44 CSS
    px at least. Fit to the width, every touchable of the games in FIT_TO_A_FINGER is; a
    smaller one (Castello Methoni's) does not act on the fit board: a tap on it zooms the
    board in there and taps nothing, and zoomed it is 44 px and acts
    (benchmarks/touch_targets.py measures 360 to 430 px)."""
    process, signed_in = serve
    with Client(process.address, token=process.token) as client:
        games = record_example_games(client, 20)
        assert {game.name for game in games} >= FIT_TO_A_FINGER
        for game in games:
            page = touch_page(browser, page_url(signed_in, game.game_id))
            wait_board(page, game.revisions)
            fit: dict[str, list[float]] = page.evaluate(_BOXES)
            assert fit, game.name
            assert max(width for width, _ in fit.values()) <= TOUCH_PHONE["width"]
            # The page asked for the phone layout (its pictures are PHONE_WIDTH units wide).
            view_box = page.get_attribute("#touch-board svg.touch-picture", "viewBox") or ""
            assert view_box.startswith(f"0 0 {PHONE_WIDTH} "), view_box
            small = {touch_id: box for touch_id, box in fit.items() if min(box) < TARGET_PX - 0.5}
            _to_move, moves = client.legal_moves(game.game_id)
            if game.name in FIT_TO_A_FINGER:
                assert not small, f"{game.name}: under {TARGET_PX} px fit: {small}"
                assert page.is_hidden("#zoom-hint")
            else:
                assert small, game.name
                assert all(touch_id.startswith("edge-") for touch_id in small), small.keys()
                assert "smaller than a finger" in page.inner_text("#zoom-hint")
                # A finger on a small first touch zooms there; nothing is tapped yet.
                first = next(m.touches[0] for m in moves if m.touches[0] in small)
                point = page.evaluate(_CENTRE, first)
                page.touchscreen.tap(point[0], point[1])
                page.wait_for_selector('#zoom[aria-pressed="true"]')
                assert "tap the board" in page.inner_text("#tap-words")
                assert page.is_hidden("#zoom-hint")
                zoomed: dict[str, list[float]] = page.evaluate(_BOXES)
                assert zoomed.keys() == fit.keys()
                still = {i: zoomed[i] for i in small if min(zoomed[i]) < TARGET_PX - 0.5}
                assert not still, f"{game.name}: under {TARGET_PX} px zoomed: {still}"
            # A tap acts: the first touch of a listed move, where the board shows it.
            tap(page, moves[0].touches[0])
            assert page.locator("#tap-error").inner_text() == ""
            assert "tap the board" not in page.inner_text("#tap-words")
            page.context.close()


_CENTRE = """(id) => {
  const element = document.querySelector(`#touch-board [data-touch="${CSS.escape(id)}"]`);
  element.scrollIntoView({ block: "center", inline: "center" });
  const box = element.getBoundingClientRect();
  return [box.left + box.width / 2, box.top + box.height / 2];
}"""


_BACKGROUND = """() => {
  const svg = document.querySelector("#touch-board svg.touch-picture");
  const box = svg.getBoundingClientRect();
  for (let fy = 0.1; fy < 0.95; fy += 0.05) {
    for (let fx = 0.95; fx > 0.6; fx -= 0.02) {
      const x = box.left + fx * box.width;
      const y = box.top + fy * box.height;
      if (y > 0 && y < window.innerHeight && document.elementFromPoint(x, y) === svg) {
        return [x, y, fx];
      }
    }
  }
  return null;
}"""


def test_a_tap_between_touchables_zooms_that_region_in(
    serve: tuple[ServeProcess, str], browser: Browser
) -> None:
    process, signed_in = serve
    with Client(process.address, token=process.token) as client:
        game = client.create_game("splendor", ["Ann", "Bob"], mode="dealt")
        page = touch_page(browser, page_url(signed_in, game.game_id))
        wait_board(page, game.version)
        found = page.evaluate(_BACKGROUND)
        assert found is not None, "no background on the right of the board"
        x, y, across = found
        page.touchscreen.tap(x, y)
        page.wait_for_selector('#zoom[aria-pressed="true"]')
        # The region tapped (on the right) is brought under the middle of the screen.
        scroll = page.locator("#board-scroll")
        left = scroll.evaluate("element => element.scrollLeft")
        width = scroll.evaluate("element => element.scrollWidth")
        middle = (left + TOUCH_PHONE["width"] / 2) / width
        assert abs(middle - across) < 0.1 or left >= width - TOUCH_PHONE["width"] - 1
        assert page.inner_text("#tap-error") == ""
        assert client.get_game(game.game_id).version == game.version
        # Zoomed, a tap there changes nothing more; taps on touchables still compose.
        tap(page, "bank-w")
        assert "bank" in page.inner_text("#tap-words")


def test_the_layout_follows_the_screen_s_width(
    serve: tuple[ServeProcess, str], browser: Browser
) -> None:
    """A phone turned to landscape (or a window widened past 600 px) gets the wide pictures,
    and back: each layout's own picture, its touches tapped the same."""
    process, signed_in = serve
    with Client(process.address, token=process.token) as client:
        game = client.create_game("splendor", ["Ann", "Bob"], mode="dealt")
        page = touch_page(browser, page_url(signed_in, game.game_id))
        wait_board(page, game.version)
        board = "#touch-board svg.touch-picture"
        assert (page.get_attribute(board, "viewBox") or "").startswith(f"0 0 {PHONE_WIDTH} ")
        page.set_viewport_size({"width": 1000, "height": 700})
        page.wait_for_selector(f'{board}[viewBox^="0 0 880 "]', timeout=15_000)
        page.set_viewport_size(TOUCH_PHONE)  # type: ignore[arg-type]
        page.wait_for_selector(f'{board}[viewBox^="0 0 {PHONE_WIDTH} "]', timeout=15_000)
        tap(page, "bank-w")
        assert "bank" in page.inner_text("#tap-words")


# Every control a finger may press, visible on the page, with its box in CSS px. A checkbox
# or radio is pressed through its label (the label is its target), so the label is measured.
# WCAG 2.5.5's "inline" exception (a link in a sentence, sized by the line it sits in) is
# a link whose parent has text of its own (not only other elements) beside it.
_CONTROLS = """() => {
  const selector = [
    "button", "a[href]", "input:not([type=hidden])", "select", "textarea", "summary",
    "[role=button]", "[tabindex]:not([tabindex='-1'])", ".legal-move", ".moves .step",
  ].join(", ");
  const seen = new Set();
  const found = [];
  for (let element of document.querySelectorAll(selector)) {
    if (element.matches("input[type=checkbox], input[type=radio]")) {
      element = element.closest("label") ?? element;
    }
    if (seen.has(element)) continue;
    seen.add(element);
    const box = element.getBoundingClientRect();
    const style = getComputedStyle(element);
    if (box.width === 0 || box.height === 0 || style.visibility === "hidden") continue;
    if (element.closest("[hidden], details:not([open]) > :not(summary)")) continue;
    let inline = false;
    if (element.matches("a") && style.display === "inline") {
      const block = element.parentElement;
      const own = Array.from(block.childNodes)
        .filter((node) => node.nodeType === Node.TEXT_NODE)
        .map((node) => node.textContent ?? "").join("").trim();
      inline = own.length > 0;
    }
    const touch = element.getAttribute("data-touch");
    const text = (element.textContent ?? "").trim().slice(0, 24);
    const name = element.id ? `#${element.id}`
      : touch ? `[data-touch=${touch}]`
      : `${element.tagName.toLowerCase()}.${element.className || ""} "${text}"`;
    found.push({ name, width: box.width, height: box.height, inline });
  }
  return found;
}"""


def under_a_finger(page: Page, where: str) -> list[str]:
    """The visible controls of `page` under 44 x 44 CSS px (WCAG 2.5.5), links in a
    sentence excepted; asserts that there are controls to measure."""
    controls: list[dict[str, Any]] = page.evaluate(_CONTROLS)
    assert len(controls) >= 3, (where, controls)
    return [
        f"{where}: {c['name']} {c['width']:.1f} x {c['height']:.1f}"
        for c in controls
        if not c["inline"] and min(c["width"], c["height"]) < TARGET_PX - 0.5
    ]


def test_every_control_of_the_page_is_a_finger_wide_on_a_phone(
    serve: tuple[ServeProcess, str], browser: Browser
) -> None:
    """WCAG 2.5.5 at 390 px with touch, beyond the board: every visible control (buttons,
    links, inputs, selects, the legal-move chips, the move list's rows, the recording bar's
    buttons, the create form) is at least 44 x 44 CSS px, on the game list, on a game page
    mid-move with the recording bar open, and on the create form."""
    process, signed_in = serve
    small: list[str] = []
    with Client(process.address, token=process.token) as client:
        game = client.create_game("splendor", ["Ann", "Bob"], mode="dealt", title="Phone")
        client.record(game.game_id, "take w u g")
        client.record(game.game_id, "take r k w")
        version = client.get_game(game.game_id).version
        page = touch_page(browser, page_url(signed_in, game.game_id))
        wait_board(page, version)
        page.wait_for_selector("#legal-moves .legal-move")
        page.wait_for_selector("#moves .step")
        tap(page, "bank-w")
        tap(page, "bank-u")
        page.wait_for_selector("#tap-choices .tap-choice")
        small += under_a_finger(page, "game page")
        page.locator("#share").tap()
        page.wait_for_selector("#share-link")
        small += under_a_finger(page, "game page, shared")
        page.goto(signed_in)
        page.wait_for_selector("tr[data-game-id]")
        small += under_a_finger(page, "list")
        page.locator("#create summary").tap()
        page.select_option("#new-game", "mercado-de-lisboa")
        page.wait_for_selector('[data-option="clamp_penalty_at_zero"]')
        small += under_a_finger(page, "create form")
        page.context.close()
    assert not small, "\n".join(small)


def offline_page(browser: Browser, url: str) -> Page:
    """A phone's tab at `url` that does not hear the game's live updates (its WatchGame
    stream refused, as on a table's bad wifi): what others record meanwhile reaches it only
    through its own calls' answers."""
    context = browser.new_context(
        viewport=TOUCH_PHONE,  # type: ignore[arg-type]
        has_touch=True,
        is_mobile=True,
    )
    context.route("**/tablelog.v1.TablelogService/WatchGame", lambda route: route.abort())
    page = context.new_page()
    page.goto(url)
    return page


def players_moves(client: Client, game_id: str) -> list[str]:
    """The moves recorded in `game_id`, the server's deals (a dealt game's reveals) left out."""
    return [
        item.event.move_recorded.notation
        for item in client.replay(game_id, 1, full=True)
        if item.event.WhichOneof("body") == "move_recorded"
        and not item.event.move_recorded.notation.startswith("reveal ")
    ]


def test_a_tapped_move_the_server_refuses_is_said_in_the_bar_and_changes_nothing(
    serve: tuple[ServeProcess, str], browser: Browser
) -> None:
    """Between the taps and the record button, another member records a move (the phone
    did not hear it): the server refuses the tapped move, the bar says the server's words,
    and the game holds the other member's move only. Then the club's owner deletes the game
    between the taps and the record: the bar says the refusal, and nothing is recorded."""
    process, signed_in = serve
    with Client(process.address, token=process.token) as owner:
        game = owner.create_game("splendor", ["Ann", "Bob"], mode="dealt")
        cleo = owner.add_member("Cleo", "recorder")
        page = offline_page(browser, page_url(signed_in, game.game_id))
        wait_board(page, game.version)
        for touch_id in ("bank-w", "bank-u", "bank-g"):
            tap(page, touch_id)
        page.locator("#tap-record", has_text="Record: take w u g").wait_for()
        with Client(process.address, token=owner.create_token(cleo.member_id).token) as other:
            other.record(game.game_id, "take w w")
        moved = owner.get_game(game.game_id).version
        tap_record(page)
        page.wait_for_selector("#tap-error:not(:empty)", timeout=10_000)
        said = page.inner_text("#tap-error")
        assert "The game has moved on" in said, said
        assert "(STALE_VERSION)" in said, said
        assert players_moves(owner, game.game_id) == ["take w w"]
        assert owner.get_game(game.game_id).version == moved
        # The page has caught up with the move it missed: its board is the new head's, Bob's
        # turn, with the refusal still said in the bar.
        wait_board(page, moved)
        assert "Bob to move" in page.inner_text("#tap-words")
        assert page.inner_text("#tap-error") == said
        # A tap goes on from the new head (and the refusal, answered, is no longer said).
        tap(page, "bank-r")
        assert page.inner_text("#tap-error") == ""
        tap(page, "bank-r")
        page.locator("#tap-record", has_text="Record: take r r").wait_for()
        owner.delete_game(game.game_id, reason="a test game")
        tap_record(page)
        page.wait_for_selector("#tap-error:not(:empty)", timeout=10_000)
        said = page.inner_text("#tap-error")
        assert "deleted" in said, said
        assert "nothing can be recorded in it any more" in said, said
        assert "(GAME_DELETED)" in said, said
        assert players_moves(owner, game.game_id) == ["take w w"]
        page.context.close()


def test_a_typed_move_refused_as_stale_brings_the_page_to_the_game_as_it_is(
    serve: tuple[ServeProcess, str], browser: Browser
) -> None:
    """The recording panel's typed move, refused because another member recorded first (the
    phone did not hear it): the panel says so, and the page shows the head the server has,
    its legal moves and its board, as the refusal promises ("the list now shows their
    move")."""
    process, signed_in = serve
    with Client(process.address, token=process.token) as owner:
        game = owner.create_game("splendor", ["Ann", "Bob"], mode="dealt")
        page = offline_page(browser, page_url(signed_in, game.game_id))
        wait_board(page, game.version)
        owner.record(game.game_id, "take w w")
        moved = owner.get_game(game.game_id).version
        page.fill("#notation", "take w u g")
        page.press("#notation", "Enter")
        page.locator("#record-error", has_text="Someone recorded first").wait_for()
        assert "(STALE_VERSION)" in page.inner_text("#record-error")
        wait_board(page, moved)
        assert "Bob to move" in page.inner_text("#legal-note")
        assert players_moves(owner, game.game_id) == ["take w w"]
        page.context.close()


_FOCUSED = """() => {
  const at = document.activeElement;
  return at ? [at.id, at.getAttribute("data-touch"), at.getAttribute("class") ?? ""] : null;
}"""


def tab_to(page: Page, *, touch_id: str = "", element_id: str = "") -> None:
    """Presses Tab until the focus is on the board's `touch_id` (or the element
    `element_id`), asserting that every touchable the focus passes may come next."""
    for _ in range(400):
        page.keyboard.press("Tab")
        found = page.evaluate(_FOCUSED)
        assert found is not None
        at_id, at_touch, classes = found
        if at_touch:
            assert "touch-next" in classes.split(), f"{at_touch} is in the tab order, dimmed"
        if (touch_id and at_touch == touch_id) or (element_id and at_id == element_id):
            return
    raise AssertionError(f"Tab never reached {touch_id or element_id}")


def test_the_board_is_played_with_the_keyboard(
    serve: tuple[ServeProcess, str], browser: Browser
) -> None:
    """Issue 25, item 5: the board's touchables that may come next are reached with Tab and
    chosen with Enter or Space, and a move so chosen is recorded (no mouse, no finger)."""
    process, signed_in = serve
    with Client(process.address, token=process.token) as client:
        game = client.create_game("splendor", ["Ann", "Bob"], mode="dealt")
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        page = context.new_page()
        page.goto(page_url(signed_in, game.game_id))
        wait_board(page, game.version)
        # Dimmed touchables are out of the tab order: a market card goes on no take.
        tab_to(page, touch_id="bank-w")
        page.keyboard.press("Enter")
        assert "bank" in page.inner_text("#tap-words")
        tab_to(page, touch_id="bank-u")
        page.keyboard.press(" ")
        tab_to(page, touch_id="bank-g")
        page.keyboard.press("Enter")
        page.locator("#tap-record", has_text="Record: take w u g").wait_for()
        assert page.inner_text("#tap-words").startswith("Ann takes white, blue and green.")
        assert "touch-dim" in (page.get_attribute('[data-touch="slot-1.1"]', "class") or "")
        assert page.get_attribute('[data-touch="slot-1.1"]', "tabindex") == "-1"
        tab_to(page, element_id="tap-record")
        page.keyboard.press("Enter")
        wait_head(page, client, game.game_id, game.version)
        assert players_moves(client, game.game_id) == ["take w u g"]
        context.close()
