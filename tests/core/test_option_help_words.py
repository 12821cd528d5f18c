"""Option help is written for players (issue 26): `tablelog games` and the web app show it,
so it cites no section of the rules reference ("§10 #13", "G-B3", "RULES.md E1"); the
citation lives in a comment beside it."""

from __future__ import annotations

import re

from tablelog.replay.registry import all_games

INTERNAL_REFERENCE = re.compile(
    r"§|RULES\.md|\bG-[A-Z]\d|\([A-E]\d\)|\b[A-E]\d (?:variant|table)\b"
)


def test_no_option_help_cites_the_rules_reference() -> None:
    cited = [
        f"{name} {doc.name}: {doc.description}"
        for name, game in all_games().items()
        for doc in game.option_docs
        if INTERNAL_REFERENCE.search(doc.description)
    ]
    assert cited == []
