"""What Medici: The Card Game and Medici (the auction game) share: the five goods, ships
ranked by value, ranked payouts with pooled tie splits, the scoring of a round or day into
payout ledgers, the poorest-player start (and its `start N` notation), the final result,
reading component CSV files and the common lines of `render`. No `GAME` here, so the
registry does not list this package.

Rules: replay/games/medici_card_game/RULES.md (§A4-A5) and replay/games/medici/RULES.md
(§B5-B6)."""
