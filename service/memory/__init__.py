"""Club memory: standings, ratings and statistics as projections of the recorded games.

`roster` (the club's players, a pure fold of its roster changes) and `roster_store` (those
changes in Redis), `players` (seats matched to players), `projector` (follows the games'
events into the read models, with a stored position; rebuilt from the streams on demand),
`results` (a game's outcome sealed beside its stream, for the rebuild), `standings` (tables,
ratings, head-to-head, statistics: pure functions of the outcomes), `views` (the same kept
game by game per instance, so a read after a change costs the change) and `charts` (their
SVG charts). A projection is never the truth: docs/club-memory.md.

May import `recording`, `access`, `store` and the shared modules; never the ports (`api`).
"""
