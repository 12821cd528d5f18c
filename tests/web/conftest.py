"""What every web test shares: one headless Chromium per module (Debian's chromium through
Playwright), skipped without it or the playwright package, failed without it under CI."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

from tests.support.browser import chromium, missing_browser
from tests.support.tools import unavailable

if TYPE_CHECKING:
    from playwright.sync_api import Browser


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    problem = missing_browser()
    if problem is not None:
        unavailable(problem)
    with chromium() as found:
        yield found
