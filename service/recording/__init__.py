"""The recording use cases: every change and every read of a game.

`recorder` is the one object the ports call; `usecases`, `amending`, `records` and
`variations` are the changes, `appending` their one append path, `building` the events they
build; `reads`, `views` and `entitlement` what each caller sees; `heads`, `checkpoints` and
`verification` the cached heads, the sealed checkpoints and the chain walk; `watching` the
live tails; `game_index` the clubs' listings.

May import `access`, `store` and the shared modules; never the ports (`api`).
"""
