"""Club memory's charts as SVG text drawn on the server (issue 28): a player's rating over
time, with its uncertainty, and the distribution of their scores.

Why on the server: the web app shows them as images (an SVG in an <img> runs nothing and
touches nothing: `clients/web/src/picture.ts`), so no chart library enters the bundle or
its supply chain; the same picture serves every client (the CLI, the TypeScript and Go
clients) through the API; and, like the games' pictures (`replay/picture.py`), a chart is a
pure function of its data, byte for byte, tested in Python. The charts carry numbers only:
no name or other text from a user is drawn (the page says whose chart it is)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from tablelog.v1 import standings_pb2

WIDTH: Final = 480
HEIGHT: Final = 200
LEFT: Final = 44
RIGHT: Final = 12
TOP: Final = 12
BOTTOM: Final = 28


def _number(value: float) -> str:
    text = f"{value:.1f}"
    return text[:-2] if text.endswith(".0") else text


def _frame(body: list[str], label: str) -> str:
    head = (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" '
        f'viewBox="0 0 {WIDTH} {HEIGHT}" role="img" aria-label="{label}" '
        'font-family="sans-serif" font-size="11">'
    )
    return head + "".join(body) + "</svg>"


def _ticks(low: float, high: float, count: int = 4) -> list[float]:
    if high <= low:
        return [low]
    step = (high - low) / count
    return [low + step * i for i in range(count + 1)]


def rating_chart(history: Sequence[standings_pb2.RatingPoint]) -> str:
    """The rating (mu) after each game, a band of mu ± sigma around it, and the ordinal
    mu - 3 sigma the tables rank by, game after game (x: the player's games in order)."""
    plot_w = WIDTH - LEFT - RIGHT
    plot_h = HEIGHT - TOP - BOTTOM
    body = [f'<rect width="{WIDTH}" height="{HEIGHT}" fill="#ffffff"/>']
    if not history:
        body.append(
            f'<text x="{WIDTH // 2}" y="{HEIGHT // 2}" text-anchor="middle" fill="#555">'
            "no rated games</text>"
        )
        return _frame(body, "rating over time: no rated games")
    lows = [p.mu - p.sigma for p in history] + [p.ordinal for p in history]
    highs = [p.mu + p.sigma for p in history]
    low, high = min(lows), max(highs)
    if high - low < 1:
        low, high = low - 0.5, high + 0.5
    count = len(history)

    def y(value: float) -> float:
        return TOP + plot_h * (high - value) / (high - low)

    for tick in _ticks(low, high):
        body.append(
            f'<line x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{y(tick):.1f}" y2="{y(tick):.1f}" '
            'stroke="#e4e4e4"/>'
            f'<text x="{LEFT - 4}" y="{y(tick) + 4:.1f}" text-anchor="end" fill="#555">'
            f"{_number(tick)}</text>"
        )
    # One pass over the points, each coordinate formatted once: a player's record draws
    # every game they played (hundreds).
    span = high - low
    upper, lower, mu, ordinal, circles = [], [], [], [], []
    for i, point in enumerate(history):
        m, sigma = point.mu, point.sigma
        at = f"{LEFT + (plot_w * (i + 0.5) / count):.1f}"
        mu_y = f"{TOP + plot_h * (high - m) / span:.1f}"
        upper.append(f"{at},{TOP + plot_h * (high - (m + sigma)) / span:.1f}")
        lower.append(f"{at},{TOP + plot_h * (high - (m - sigma)) / span:.1f}")
        mu.append(f"{at},{mu_y}")
        ordinal.append(f"{at},{TOP + plot_h * (high - point.ordinal) / span:.1f}")
        circles.append(
            f'<circle cx="{at}" cy="{mu_y}" r="2.5" fill="#1f6feb">'
            f"<title>game {i + 1}: {_number(m)} ± {_number(sigma)}</title></circle>"
        )
    lower.reverse()
    body.append(
        f'<polygon points="{" ".join(upper)} {" ".join(lower)}" fill="#1f6feb" '
        'fill-opacity="0.15"/>'
    )
    body.append(
        f'<polyline points="{" ".join(mu)}" fill="none" stroke="#1f6feb" stroke-width="2"/>'
    )
    body.append(
        f'<polyline points="{" ".join(ordinal)}" fill="none" stroke="#8250df" '
        'stroke-width="1.5" stroke-dasharray="4 3"/>'
    )
    body.extend(circles)
    body.append(
        f'<text x="{LEFT}" y="{HEIGHT - 8}" fill="#555">game 1</text>'
        f'<text x="{WIDTH - RIGHT}" y="{HEIGHT - 8}" text-anchor="end" fill="#555">'
        f"game {count}</text>"
        f'<text x="{WIDTH // 2}" y="{HEIGHT - 8}" text-anchor="middle" fill="#1f6feb">'
        "rating ± uncertainty; dashed: ranked (mu - 3 sigma)</text>"
    )
    last = history[-1]
    return _frame(
        body,
        f"rating over {count} games, now {_number(last.mu)} plus or minus {_number(last.sigma)}",
    )


def score_chart(scores: Sequence[int], buckets: int = 10) -> str:
    """How often the player scored in each range of scores (equal widths from the lowest
    to the highest score)."""
    plot_w = WIDTH - LEFT - RIGHT
    plot_h = HEIGHT - TOP - BOTTOM
    body = [f'<rect width="{WIDTH}" height="{HEIGHT}" fill="#ffffff"/>']
    if not scores:
        body.append(
            f'<text x="{WIDTH // 2}" y="{HEIGHT // 2}" text-anchor="middle" fill="#555">'
            "no scores</text>"
        )
        return _frame(body, "score distribution: no scores")
    low, high = min(scores), max(scores)
    width = max(1, -(-(high - low + 1) // buckets))
    counts = [0] * (-(-(high - low + 1) // width))
    for score in scores:
        counts[(score - low) // width] += 1
    tallest = max(counts)
    bar_w = plot_w / len(counts)
    for tick in _ticks(0, tallest, min(4, tallest)):
        ty = TOP + plot_h * (1 - tick / tallest)
        body.append(
            f'<line x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{ty:.1f}" y2="{ty:.1f}" stroke="#e4e4e4"/>'
            f'<text x="{LEFT - 4}" y="{ty + 4:.1f}" text-anchor="end" fill="#555">'
            f"{_number(tick)}</text>"
        )
    for i, count in enumerate(counts):
        bar_h = plot_h * count / tallest
        first = low + i * width
        span = f"{first}" if width == 1 else f"{first}-{first + width - 1}"
        body.append(
            f'<rect x="{LEFT + i * bar_w + 1:.1f}" y="{TOP + plot_h - bar_h:.1f}" '
            f'width="{max(bar_w - 2, 1):.1f}" height="{bar_h:.1f}" fill="#2da44e">'
            f"<title>{span}: {count}</title></rect>"
        )
        if len(counts) <= 12 or i % 2 == 0:
            body.append(
                f'<text x="{LEFT + (i + 0.5) * bar_w:.1f}" y="{HEIGHT - 12}" '
                f'text-anchor="middle" fill="#555">{span}</text>'
            )
    return _frame(body, f"score distribution over {len(scores)} games, {low} to {high}")
