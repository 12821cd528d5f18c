"""The web app's address `tablelog serve` prints signs the local owner in only where whoever
opens it could read the owner's token anyway: on a loopback address."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from tablelog.service.api.cli import owner_fragment


def _args(data_dir: Path, http_address: str) -> argparse.Namespace:
    return argparse.Namespace(data_dir=data_dir, http_address=http_address)


@pytest.mark.parametrize("address", ["127.0.0.1:8080", "localhost:8080", "[::1]:8080"])
def test_a_loopback_address_carries_the_owner_s_token(tmp_path: Path, address: str) -> None:
    (tmp_path / "owner.token").write_text("tlm_abc\n", encoding="utf-8")
    assert owner_fragment(_args(tmp_path, address)) == "#token=tlm_abc"


@pytest.mark.parametrize("address", ["0.0.0.0:8080", "192.168.1.20:8080", "club.example:443"])
def test_any_other_address_carries_none(tmp_path: Path, address: str) -> None:
    (tmp_path / "owner.token").write_text("tlm_abc\n", encoding="utf-8")
    assert owner_fragment(_args(tmp_path, address)) == ""


def test_no_token_file_carries_none(tmp_path: Path) -> None:
    assert owner_fragment(_args(tmp_path, "127.0.0.1:8080")) == ""
