"""The web app's address `tablelog serve` prints signs the local owner in only where whoever
opens it could read the owner's token anyway: on a loopback address. The token it carries
is a 12-hour one minted for it, never `owner.token` (tests/service/test_http_port.py::
test_serve_prints_the_web_apps_address_and_serves_it)."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from tablelog.service.api.cli import signs_in


def _args(data_dir: Path, http_address: str) -> argparse.Namespace:
    return argparse.Namespace(data_dir=data_dir, http_address=http_address)


@pytest.mark.parametrize("address", ["127.0.0.1:8080", "localhost:8080", "[::1]:8080"])
def test_a_loopback_address_signs_the_owner_in(tmp_path: Path, address: str) -> None:
    (tmp_path / "owner.token").write_text("tlm_abc\n", encoding="utf-8")
    assert signs_in(_args(tmp_path, address))


@pytest.mark.parametrize("address", ["0.0.0.0:8080", "192.168.1.20:8080", "club.example:443"])
def test_any_other_address_signs_no_one_in(tmp_path: Path, address: str) -> None:
    (tmp_path / "owner.token").write_text("tlm_abc\n", encoding="utf-8")
    assert not signs_in(_args(tmp_path, address))


def test_no_token_file_signs_no_one_in(tmp_path: Path) -> None:
    assert not signs_in(_args(tmp_path, "127.0.0.1:8080"))
