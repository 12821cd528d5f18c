-- Compare-and-append of one or more events to a game's stream, atomically.
-- The caller side (these positions as typed values) is service/store/script.py: change both together.
--
-- KEYS[1] the stream      tl:{<game_id>}:events
-- KEYS[2] the head hash   tl:{<game_id>}:head     (sequence, revision, last_hash, summary)
-- KEYS[3] request ids     tl:{<game_id>}:requests (request id -> "first:last fingerprint
--                         ms": the sequences, what the request asked, when it was stored)
-- KEYS[4] the deal seed   tl:{<game_id>}:seed     (dealt mode, until revealed)
-- KEYS[5] request order   tl:{<game_id>}:request-order (list of "<ms> <request id>", oldest
--                         first: which ids to forget first)
--
-- ARGV[1] a header of eight words: the expected sequence (0: the game must not exist yet),
--         the expected revision or "-" when any revision will do (annotations), the
--         revision after the append, the seed operation ("-" keep, "set", "del"), n,
--         the number of events, the request's fingerprint (hex SHA-256 of what the
--         request asks, "-" for none) stored with the request id, the caller's clock
--         (milliseconds since the epoch) and the request ids' retention (milliseconds)
-- ARGV[2] request id, or ""
-- ARGV[3] hash of the event at the expected sequence ("" for a new game)
-- ARGV[4] hash of the last appended event
-- ARGV[5] seed value (with "set")
-- ARGV[6] the game summary after the append (stored for listing)
-- ARGV[7 .. 6+n] the serialized events
--
-- Replies (one string; the status word first, one round of parsing for the caller):
--   "ok <first> <last>"            appended as sequences first..last
--   "duplicate <first>:<last>"     this request id was appended before, by this same request
--   "reused <first>:<last>"        this request id was appended before, by another request
--   "stale <sequence> <revision>"  the expected revision is not the current one
--   "moved <sequence> <revision>"  right revision, but other events came first
--   "missing"                      no such game
--   "exists <sequence> <revision>" creating a game that exists
--   "chain <sequence> <revision>"  the caller's previous hash is not the stored one
--   "damaged <sequence> <revision>" the stream does not end where the head says it does

local expected_sequence, expected_revision, new_revision, seed_op, count, fingerprint, now,
  retention = string.match(ARGV[1], "^(%d+) (%S+) (%d+) (%S+) (%d+) (%S+) (%d+) (%d+)$")
expected_sequence = tonumber(expected_sequence)
count = tonumber(count)
-- Request ids are kept `retention` ms (docs/service.md, Idempotency): an older one is
-- forgotten, and its request id answered as a new request. Each call forgets at most 128 of
-- them (bounded work); the rest go at the next calls, or all at once when the two keys expire
-- (see below: a game no longer changed keeps none).
-- (A list rather than a sorted set: half the memory, and ids are stored in time order but
-- for the clocks of several servers, which only delays forgetting an id by their skew.)
local cutoff = tonumber(now) - tonumber(retention)
for _ = 1, 128 do
  local oldest = redis.call("LINDEX", KEYS[5], 0)
  if not oldest then
    break
  end
  local at, id = string.match(oldest, "^(%d+) (.*)$")
  if tonumber(at) >= cutoff then
    break
  end
  redis.call("LPOP", KEYS[5])
  -- Only if the hash still holds this storing of the id (not a later one, made after this
  -- one was forgotten).
  local entry = redis.call("HGET", KEYS[3], id)
  if entry and string.match(entry, " (%d+)$") == at then
    redis.call("HDEL", KEYS[3], id)
  end
end
local request_id = ARGV[2]
if request_id ~= "" then
  local prior = redis.call("HGET", KEYS[3], request_id)
  if prior then
    -- "<first>:<last> <fingerprint> <ms>": a key reused for another request is refused
    -- (an entry stored before fingerprints, "<first>:<last>", is taken as the same; one
    -- stored before retention, without <ms>, is kept until the keys expire).
    local range, stored, at = string.match(prior, "^(%S+) ?(%S*) ?(%d*)$")
    if at ~= "" and tonumber(at) < cutoff then
      prior = false  -- past the retention, not yet forgotten: a new request
    end
  end
  if prior then
    local range, stored = string.match(prior, "^(%S+) ?(%S*)")
    if stored ~= "" and stored ~= fingerprint then
      return "reused " .. range
    end
    return "duplicate " .. range
  end
end

local head = redis.call("HMGET", KEYS[2], "sequence", "revision", "last_hash")
local sequence = tonumber(head[1] or "0")
local revision = tonumber(head[2] or "0")
local position = " " .. tostring(sequence) .. " " .. tostring(revision)

if expected_sequence == 0 then
  if sequence ~= 0 then
    return "exists" .. position
  end
elseif sequence == 0 then
  return "missing"
end
if expected_revision ~= "-" and tonumber(expected_revision) ~= revision then
  return "stale" .. position
end
if sequence ~= expected_sequence then
  return "moved" .. position
end
if (head[3] or "") ~= ARGV[3] then
  return "chain" .. position
end
if sequence > 0 then
  -- Only this script writes a game's stream, so it still ends where the head says: as many
  -- entries as the head's sequence, the last one event <sequence> whose stored bytes end in
  -- the head's hash. Anything else was changed outside it (entries deleted, cut off or
  -- sealed again): the caller verifies the whole stream. Two O(1) reads; an edit inside an
  -- earlier event is found by verifying the stream (a cold load, VerifyGame), not here.
  if redis.call("XLEN", KEYS[1]) ~= sequence then
    return "damaged" .. position
  end
  local last = redis.call("XREVRANGE", KEYS[1], "+", "-", "COUNT", 1)[1]
  if last[1] ~= tostring(sequence) .. "-0" or string.sub(last[2][2] or "", -32) ~= head[3] then
    return "damaged" .. position
  end
end

for i = 1, count do
  -- The entry id is the event's sequence number, so ranges by sequence are direct reads.
  redis.call("XADD", KEYS[1], tostring(sequence + i) .. "-0", "e", ARGV[6 + i])
end
local last = sequence + count
redis.call(
  "HSET", KEYS[2],
  "sequence", tostring(last),
  "revision", new_revision,
  "last_hash", ARGV[4],
  "summary", ARGV[6]
)
if seed_op == "set" then
  redis.call("SET", KEYS[4], ARGV[5])
elseif seed_op == "del" then
  redis.call("DEL", KEYS[4])
end
local result = tostring(sequence + 1) .. ":" .. tostring(last)
if request_id ~= "" then
  redis.call("HSET", KEYS[3], request_id, result .. " " .. fingerprint .. " " .. now)
  redis.call("RPUSH", KEYS[5], now .. " " .. request_id)
  -- Both keys outlive every id in them by at least the retention: given 1.5 retentions when
  -- less than one is left (not at every append: each PEXPIRE is one more line in the AOF
  -- and to the replicas), so a game no longer changed drops them within 1.5 retentions.
  retention = tonumber(retention)
  if math.min(redis.call("PTTL", KEYS[3]), redis.call("PTTL", KEYS[5])) < retention then
    local keep = string.format("%d", math.floor(retention * 1.5))
    redis.call("PEXPIRE", KEYS[3], keep)
    redis.call("PEXPIRE", KEYS[5], keep)
  end
end
return "ok " .. tostring(sequence + 1) .. " " .. tostring(last)
