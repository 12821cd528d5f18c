"""Recording by touch in the web app (issue 25), for the browser tests (tests/web) and the
screenshots of the recording bar (scripts/screenshot_touch.py): a phone with a touch screen,
and taps on the board's `data-touch` elements, found from the API's `LegalMove.touches`,
never typed notation."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

TOUCH_PHONE = {"width": 390, "height": 844}
"""A phone in portrait, the size the issue asks the board to work at (360-430 px)."""

# A point inside the element that a tap there reaches: its own painted shapes' centres (and
# points around them) tried in turn, keeping one where the element hit is the element or
# inside it with no other touchable that may come next in between (the board resolves a
# tap from the element hit outwards to the first touchable that may come next).
_POINT = """
(id) => {
  const board = document.getElementById("touch-board");
  const target = board && board.querySelector(`[data-touch="${CSS.escape(id)}"]`);
  if (!target) return null;
  target.scrollIntoView({ block: "center", inline: "center" });
  const painted = "rect, circle, polygon, line, text, path, ellipse";
  const shapes = [target, ...target.querySelectorAll(painted)];
  const reaches = (hit) => {
    if (!hit || !target.contains(hit)) return false;
    for (let at = hit; at && at !== target; at = at.parentElement) {
      if (at.hasAttribute && at.hasAttribute("data-touch") && at.classList.contains("touch-next")) {
        return false;
      }
    }
    return true;
  };
  for (const shape of shapes) {
    const box = shape.getBoundingClientRect();
    if (box.width === 0 && box.height === 0) continue;
    const spots = [[0.5, 0.5], [0.3, 0.5], [0.7, 0.5], [0.5, 0.3], [0.5, 0.7],
                   [0.2, 0.2], [0.8, 0.8], [0.35, 0.65], [0.65, 0.35]];
    for (const [fx, fy] of spots) {
      const x = box.left + box.width * fx;
      const y = box.top + box.height * fy;
      if (x < 0 || y < 0 || x >= window.innerWidth || y >= window.innerHeight) continue;
      if (reaches(document.elementFromPoint(x, y))) {
        const whole = target.getBoundingClientRect();
        return [x, y, Math.min(whole.width, whole.height) * (window.visualViewport?.scale ?? 1)];
      }
    }
  }
  return null;
}
"""


def touch_page(browser: Browser, url: str) -> Page:
    """A new tab at `url` on a phone-sized screen with touch."""
    context = browser.new_context(
        viewport=TOUCH_PHONE,  # type: ignore[arg-type]
        has_touch=True,
        is_mobile=True,
    )
    page = context.new_page()
    page.goto(url)
    return page


FINGER_PX = 44
"""WCAG 2.5.5's touch target: a smaller touchable acts only on the zoomed board."""


def tap(page: Page, touch_id: str) -> None:
    """A finger's tap on the board element `touch_id`, where the finger reaches it. On the
    fit board a touchable under 44 CSS px does not act: the tap zooms the board in there
    (Castello Methoni's edges), and the finger taps it again, zoomed, as a person does."""
    point = page.evaluate(_POINT, touch_id)
    assert point is not None, f"no point of the board reaches {touch_id!r}"
    fit = page.get_attribute("#zoom", "aria-pressed") != "true"
    page.touchscreen.tap(point[0], point[1])
    if fit and point[2] < FINGER_PX - 0.5:
        page.wait_for_selector('#zoom[aria-pressed="true"]', timeout=5_000)
        point = page.evaluate(_POINT, touch_id)
        assert point is not None, f"no point of the zoomed board reaches {touch_id!r}"
        page.touchscreen.tap(point[0], point[1])


def wait_board(page: Page, revision: int) -> None:
    """Waits until the board takes taps for the head `revision`."""
    page.wait_for_selector(
        f'#picture[data-revision="{revision}"]', state="attached", timeout=15_000
    )
    page.wait_for_selector("#touch-board:not([hidden]) svg", timeout=15_000)
    page.wait_for_function(
        "document.querySelector('#tap-words').textContent.includes('tap the board')",
        timeout=15_000,
    )
