-- Compare-and-append of one or more events to a game's stream, atomically.
--
-- KEYS[1] the stream      tl:{<game_id>}:events
-- KEYS[2] the head hash   tl:{<game_id>}:head     (sequence, revision, last_hash, summary)
-- KEYS[3] request ids     tl:{<game_id>}:requests (request id -> "first:last" sequences)
-- KEYS[4] the deal seed   tl:{<game_id>}:seed     (dealt mode, until revealed)
--
-- ARGV[1] expected sequence (0: the game must not exist yet)
-- ARGV[2] expected revision, or "" when any revision will do (annotations)
-- ARGV[3] request id, or ""
-- ARGV[4] hash of the event at the expected sequence ("" for a new game)
-- ARGV[5] revision after the append
-- ARGV[6] hash of the last appended event
-- ARGV[7] seed operation: "" keep, "set" store ARGV[8], "del" remove
-- ARGV[8] seed value (with "set")
-- ARGV[9] the game summary after the append (stored for listing)
-- ARGV[10] n, the number of events; ARGV[11 .. 10+n] the serialized events
--
-- Replies (a status word first):
--   {"ok", first, last}                 appended as sequences first..last
--   {"duplicate", "first:last"}         this request id was appended before
--   {"stale", sequence, revision}       the expected revision is not the current one
--   {"moved", sequence, revision}       right revision, but other events came first
--   {"missing"}                         no such game
--   {"exists", sequence, revision}      creating a game that exists
--   {"chain", sequence, revision}       the caller's previous hash is not the stored one

local request_id = ARGV[3]
if request_id ~= "" then
  local prior = redis.call("HGET", KEYS[3], request_id)
  if prior then
    return {"duplicate", prior}
  end
end

local head = redis.call("HMGET", KEYS[2], "sequence", "revision", "last_hash")
local sequence = tonumber(head[1] or "0")
local revision = tonumber(head[2] or "0")
local expected_sequence = tonumber(ARGV[1])

if expected_sequence == 0 then
  if sequence ~= 0 then
    return {"exists", tostring(sequence), tostring(revision)}
  end
elseif sequence == 0 then
  return {"missing"}
end
if ARGV[2] ~= "" and tonumber(ARGV[2]) ~= revision then
  return {"stale", tostring(sequence), tostring(revision)}
end
if sequence ~= expected_sequence then
  return {"moved", tostring(sequence), tostring(revision)}
end
if (head[3] or "") ~= ARGV[4] then
  return {"chain", tostring(sequence), tostring(revision)}
end

local count = tonumber(ARGV[10])
for i = 1, count do
  -- The entry id is the event's sequence number, so ranges by sequence are direct reads.
  redis.call("XADD", KEYS[1], tostring(sequence + i) .. "-0", "e", ARGV[10 + i])
end
local last = sequence + count
redis.call(
  "HSET", KEYS[2],
  "sequence", tostring(last),
  "revision", ARGV[5],
  "last_hash", ARGV[6],
  "summary", ARGV[9]
)
if ARGV[7] == "set" then
  redis.call("SET", KEYS[4], ARGV[8])
elseif ARGV[7] == "del" then
  redis.call("DEL", KEYS[4])
end
local result = tostring(sequence + 1) .. ":" .. tostring(last)
if request_id ~= "" then
  redis.call("HSET", KEYS[3], request_id, result)
end
return {"ok", tostring(sequence + 1), tostring(last)}
