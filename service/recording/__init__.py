"""The recording use cases: every change and every read of a game.

`recorder` is the one object the ports call; `usecases`, `amending`, `records` and
`variations` are the changes, `appending` their one append path, `building` the events they
build, `seat_audit` a seat binding recorded before it is made, `memory_feed` the ended games
noted for club memory; `reads`, `views` and `entitlement` what each caller sees, `refusals`
a refused move worded as its caller may see it, `pictures` the drawn pictures' cache;
`heads`, `checkpoints` and `verification` the cached heads, the sealed checkpoints and the
chain walk; `watching` the live tails; `game_index` the clubs' listings; `offload` the
worker processes of the heavy pure reads; `priority` changes served before the readers'
steps.

May import `access`, `store` and the shared modules; never club memory (`memory`) or the
ports (`api`).
"""
