"""Who the caller is and what they may do.

`identity` (clubs, members, roles, tokens, the `Caller`), `members` (their table in Redis),
`authentication` (the gate every call passes: bearer token to `Caller`), `authorization`
(the one table of which role may call which RPC), `anonymous` (the refusal budget of callers
without a valid token), `watch_rights` (an open watch's rights checked again as it runs),
`admission` and `quotas` (limits per caller), `local_owner` (the local club and its owner's
token on one machine), `club_admin` (the operator's work on whole clubs).

May import `store` and the shared modules; never `recording`, `memory` or the ports (`api`).
"""
