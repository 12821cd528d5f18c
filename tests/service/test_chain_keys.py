"""The chain keys: kept outside Redis, generated once per data directory (private, atomic),
given by file for deployments, rotated by putting a new key first and keeping the old ones
(games recorded under them still verify)."""

from __future__ import annotations

import os
import stat
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tablelog.service.store.chain import ChainKey
from tablelog.service.store.chain_keys import (
    KEY_FILE_NAME,
    ChainKeyError,
    configured_chain,
    data_dir_chain,
    load_key_file,
    new_key_line,
    parse_key_file,
)
from tablelog_client import Client
from tests.service.helpers import splendor_line
from tests.service.support import ServeProcess, tablelog_command


def test_a_data_directory_key_is_made_once_private_and_the_same_for_every_process(
    tmp_path: Path,
) -> None:
    data_dir = tmp_path / "data"
    # Server processes starting together (`serve --workers`) agree on one key.
    with ThreadPoolExecutor(8) as pool:
        chains = list(pool.map(lambda _: data_dir_chain(data_dir), range(8)))
    assert len({chain.signing.key_id for chain in chains}) == 1
    key_file = data_dir / KEY_FILE_NAME
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    assert sorted(p.name for p in data_dir.iterdir()) == [KEY_FILE_NAME]  # no leftovers
    assert data_dir_chain(data_dir).signing == chains[0].signing
    assert chains[0].signing.secret.hex() in key_file.read_text()
    assert chains[0].signing.secret.hex() not in repr(chains[0])


def test_a_key_file_lists_the_signing_key_then_the_older_ones(tmp_path: Path) -> None:
    new, old = new_key_line(), new_key_line()
    given = tmp_path / "keys"
    given.write_text(f"# rotated\n{new}\n\n{old}\n")
    chain = configured_chain(str(given), tmp_path / "unused")
    assert chain.signing == ChainKey.of(bytes.fromhex(new))
    assert set(chain.trusted) == {chain.signing.key_id, ChainKey.of(bytes.fromhex(old)).key_id}
    assert not (tmp_path / "unused").exists()  # a given file: nothing generated


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("", "holds no key"),
        ("# only a comment\n", "holds no key"),
        ("zz" * 32, "hex"),
        ("ab" * 16, "at least 32 bytes"),
        ("ab" * 32 + "\n" + "cd" * 8, "line 2"),
    ],
)
def test_a_malformed_key_file_is_refused_clearly(text: str, problem: str) -> None:
    with pytest.raises(ChainKeyError, match=problem):
        parse_key_file(text, "keys")


def test_a_missing_or_oversized_key_file_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ChainKeyError, match="cannot read"):
        load_key_file(tmp_path / "absent")
    big = tmp_path / "big"
    big.write_text("# x\n" * 20_000)
    with pytest.raises(ChainKeyError, match="larger"):
        load_key_file(big)


@pytest.mark.slow
def test_serve_keeps_its_key_across_restarts_and_verifies_after_a_rotation(
    tmp_path: Path,
) -> None:
    data_dir = tmp_path / "data"
    line = splendor_line(seed=5)
    first = ServeProcess(data_dir).start()
    try:
        with Client(first.address, token=first.token, timeout=30) as client:
            game = client.create_game("splendor", ["Ann", "Bob"])
            for notation in line[:3]:
                client.record(game.game_id, notation)
            old_id = client.export(game.game_id)[0].chain_key_id
    finally:
        first.stop()
    key_file = data_dir / KEY_FILE_NAME
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    old_key = load_key_file(key_file).signing
    assert old_key.key_id == old_id

    # Rotation: a new key first, the old one kept below it, given as a file.
    rotated = tmp_path / "rotated.keys"
    new = new_key_line()
    rotated.write_text(f"{new}\n{old_key.secret.hex()}\n")
    second = ServeProcess(data_dir, "--chain-key-file", str(rotated)).start()
    try:
        with Client(second.address, token=second.token, timeout=30) as client:
            result = client.verify(game.game_id)
            assert result.ok
            assert result.keyed
            appended = client.record(game.game_id, line[3])
            assert appended.receipt.key_id == ChainKey.of(bytes.fromhex(new)).key_id
            result = client.verify(game.game_id, [appended.receipt])
            assert result.ok
            assert sorted(result.key_ids) == sorted({old_id, appended.receipt.key_id})
    finally:
        second.stop()

    # Without the old key, its events are no longer trusted: refused, not served.
    rotated.write_text(f"{new}\n")
    third = ServeProcess(data_dir, "--chain-key-file", str(rotated)).start()
    try:
        with Client(third.address, token=third.token, timeout=30) as client:
            result = client.verify(game.game_id)
            assert not result.ok
            assert result.first_bad_sequence == 1
            assert "does not trust" in result.problem
    finally:
        third.stop()


@pytest.mark.slow
def test_serve_refuses_a_key_file_it_cannot_use(tmp_path: Path) -> None:
    bad = tmp_path / "keys"
    bad.write_text("not a key\n")
    env = dict(os.environ, TABLELOG_REDIS_URL="", TABLELOG_CHAIN_KEY_FILE=str(bad))
    done = subprocess.run(
        [*tablelog_command(), "serve", "--data-dir", str(tmp_path / "data")],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )
    assert done.returncode == 1
    assert "line 1: a key is written in hex" in done.stderr
