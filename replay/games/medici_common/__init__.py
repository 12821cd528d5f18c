"""What Medici: The Card Game and Medici (the auction game) share, in the files every game
package has: `components.py` (the five goods, reading the CSV component files), `rules.py`
(ships ranked by value, ranked payouts with pooled tie splits, the payout of a round or day,
the poorest-player start), `scoring.py` (the final result), `notation.py` (good words and the
`start N` move), `views.py` (the common lines of `render`) and `picture.py` (goods tiles and
cards, seats and money, face-down piles, the goods tracks). No `GAME` here, so the registry
does not list this package.

Rules: replay/games/medici_card_game/RULES.md (§A4-A5) and replay/games/medici/RULES.md
(§B5-B6)."""
