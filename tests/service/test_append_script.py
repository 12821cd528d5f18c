"""The append script's typed values (service/store/script.py) against the script itself:
the header a call packs is the one the script's pattern reads, and every status word the
script can answer is one the store knows."""

from __future__ import annotations

import re
from importlib import resources

from tablelog.service.store.script import (
    AppendCall,
    RequestEntry,
    ScriptReply,
    ScriptStatus,
    SeedOp,
)

SCRIPT = (
    resources.files("tablelog.service.store").joinpath("append.lua").read_text(encoding="utf-8")
)


def lua_header_pattern() -> re.Pattern[str]:
    """The script's Lua pattern for ARGV[1], as a Python regular expression."""
    found = re.search(r'string\.match\(ARGV\[1\], "([^"]+)"\)', SCRIPT)
    assert found is not None
    return re.compile(found.group(1).replace("%d", r"\d").replace("%S", r"\S"))


def test_the_header_a_call_packs_is_the_one_the_script_reads() -> None:
    pattern = lua_header_pattern()
    call = AppendCall(
        expected_sequence=7,
        expected_revision=None,
        new_revision=6,
        seed_op=SeedOp.DELETE,
        fingerprint="",
        now_ms=1_700_000_000_123,
        retention_ms=259_200_000,
        request_id="r",
        prev_hash=b"p" * 32,
        last_hash=b"l" * 32,
        seed=b"",
        summary=b"s",
        events=(b"e1", b"e2"),
    )
    argv = call.argv()
    matched = pattern.match(argv[0])
    assert matched is not None
    assert matched.groups() == ("7", "-", "6", "del", "2", "-", "1700000000123", "259200000")
    assert argv[1:6] == ["r", b"p" * 32, b"l" * 32, b"", b"s"]
    assert argv[6:] == [b"e1", b"e2"]  # ARGV[7 .. 6+n]
    with_revision = call._replace(expected_revision=5, fingerprint="ab", seed_op=SeedOp.KEEP)
    matched = pattern.match(with_revision.argv()[0])
    assert matched is not None
    assert matched.groups() == ("7", "5", "6", "-", "2", "ab", "1700000000123", "259200000")


def test_every_status_the_script_answers_is_read() -> None:
    words = set(re.findall(r'return "([a-z]+)', SCRIPT))
    assert words == {status.value for status in ScriptStatus}
    assert ScriptReply.parse(b"ok 3 4") == ScriptReply(ScriptStatus.OK, first=3, last=4)
    assert ScriptReply.parse(b"reused 3:4") == ScriptReply(ScriptStatus.REUSED, first=3, last=4)
    assert ScriptReply.parse(b"chain 9 8") == ScriptReply(
        ScriptStatus.CHAIN, sequence=9, revision=8
    )
    assert ScriptReply.parse(b"missing") == ScriptReply(ScriptStatus.MISSING)


def test_a_request_entry_reads_as_the_script_decides() -> None:
    entry = RequestEntry.parse(b"3:4 ab")
    assert (entry.first, entry.last) == (3, 4)
    assert entry.same_request("ab")
    assert not entry.same_request("cd")
    old = RequestEntry.parse(b"3:4")  # stored before fingerprints: taken as the same
    assert old.same_request("cd")
    assert not old.expired(10**13, 1)  # stored before retention: kept until the keys expire
    timed = RequestEntry.parse(b"3:4 ab 1000")
    assert timed.same_request("ab")
    assert not timed.same_request("cd")
    assert not timed.expired(now_ms=1500, retention_ms=500)
    assert timed.expired(now_ms=1501, retention_ms=500)
