-- Compare-and-append of one or more events to a game's stream, atomically.
-- The caller side (these positions as typed values) is service/store/script.py: change both together.
--
-- KEYS[1] the stream      tl:{<game_id>}:events
-- KEYS[2] the head hash   tl:{<game_id>}:head     (sequence, revision, last_hash, summary)
-- KEYS[3] request ids     tl:{<game_id>}:requests (request id -> "first:last" sequences)
-- KEYS[4] the deal seed   tl:{<game_id>}:seed     (dealt mode, until revealed)
--
-- ARGV[1] a header of six words: the expected sequence (0: the game must not exist yet),
--         the expected revision or "-" when any revision will do (annotations), the
--         revision after the append, the seed operation ("-" keep, "set", "del"), n,
--         the number of events, and the request's fingerprint (hex SHA-256 of what the
--         request asks, "-" for none) stored with the request id
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

local expected_sequence, expected_revision, new_revision, seed_op, count, fingerprint =
  string.match(ARGV[1], "^(%d+) (%S+) (%d+) (%S+) (%d+) (%S+)$")
expected_sequence = tonumber(expected_sequence)
count = tonumber(count)
local request_id = ARGV[2]
if request_id ~= "" then
  local prior = redis.call("HGET", KEYS[3], request_id)
  if prior then
    -- "<first>:<last> <fingerprint>": a key reused for another request is refused
    -- (an entry stored before fingerprints, "<first>:<last>", is taken as the same).
    local range, stored = string.match(prior, "^(%S+) ?(%S*)$")
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
  redis.call("HSET", KEYS[3], request_id, result .. " " .. fingerprint)
end
return "ok " .. tostring(sequence + 1) .. " " .. tostring(last)
