"""Club memory's charts (service/memory/charts.py): pure SVG text, the same bytes for the same data,
well-formed, one point per rated game and one bar count per score, and only numbers drawn."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from tablelog.service.memory.charts import rating_chart, score_chart
from tablelog.v1 import standings_pb2

SVG = "{http://www.w3.org/2000/svg}"


def points(n: int) -> list[standings_pb2.RatingPoint]:
    return [
        standings_pb2.RatingPoint(
            game_id=f"g{i}",
            mu=25 + i * 0.7,
            sigma=8.3 - i * 0.4,
            ordinal=25 + i * 0.7 - 3 * (8.3 - i * 0.4),
        )
        for i in range(n)
    ]


def test_the_rating_chart_has_a_point_per_game_and_is_deterministic() -> None:
    history = points(9)
    drawn = rating_chart(history)
    assert drawn == rating_chart(points(9))
    root = ET.fromstring(drawn)
    assert root.tag == f"{SVG}svg"
    assert len(root.findall(f"{SVG}circle")) == 9
    assert len(root.findall(f"{SVG}polyline")) == 2
    assert "now 30.6 plus or minus 5.1" in root.attrib["aria-label"]
    # Numbers and fixed words only: game ids never reach the picture.
    assert "g3" not in drawn


def test_the_score_chart_counts_every_score() -> None:
    scores = [12, 15, 15, 9, 22, 15, 30, 9]
    root = ET.fromstring(score_chart(scores))
    counted = [
        int(re.search(r": (\d+)$", bar.findtext(f"{SVG}title") or "").group(1))  # type: ignore[union-attr]
        for bar in root.findall(f"{SVG}rect")[1:]
    ]
    assert sum(counted) == len(scores)
    assert len(counted) <= 10


def test_empty_charts_say_so() -> None:
    assert "no rated games" in rating_chart([])
    assert "no scores" in score_chart([])
    ET.fromstring(rating_chart(points(1)))
    ET.fromstring(score_chart([7]))
