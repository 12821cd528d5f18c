"""TLS on the gRPC port, and the refusal of plaintext on an address other machines reach
(docs/service.md, Transport)."""

from __future__ import annotations

import inspect
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest

from tablelog.service.api import cli as service_cli
from tablelog.service.api import healthcheck as service_healthcheck
from tablelog.service.api.server import BackgroundServer
from tablelog.service.api.transport import (
    TlsFiles,
    TransportError,
    check_listening,
    is_loopback,
    tls_files,
)
from tablelog.service.store.embedded import EmbeddedRedis
from tablelog.v1 import service_pb2, service_pb2_grpc
from tablelog_client import Client, TablelogError
from tablelog_client.sdk import open_channel
from tests.service.helpers import CHAIN
from tests.service.support import Certificates, ServeProcess, make_certificates, run_serve


@pytest.fixture(scope="module")
def certificates(tmp_path_factory: pytest.TempPathFactory) -> Certificates:
    return make_certificates(tmp_path_factory.mktemp("tls"))


@pytest.fixture(scope="module")
def tls_server(
    embedded_redis: EmbeddedRedis, certificates: Certificates
) -> Iterator[BackgroundServer]:
    running = BackgroundServer(
        embedded_redis.url,
        chain=CHAIN,
        tls=TlsFiles(certificates.certificate, certificates.key),
    ).start()
    yield running
    running.stop()


def test_a_client_with_the_ca_records_over_tls(
    tls_server: BackgroundServer, certificates: Certificates
) -> None:
    with Client(tls_server.target, ca=str(certificates.ca), token=tls_server.owner_token) as client:
        game = client.create_game("splendor", ["Ann", "Bob"])
        assert client.get_game(game.game_id).version == game.version


def test_the_ca_comes_from_the_environment_too(
    tls_server: BackgroundServer, certificates: Certificates, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TABLELOG_CA", str(certificates.ca))
    with Client(tls_server.target, token=tls_server.owner_token) as client:
        assert client.game_types()


def test_a_client_trusting_another_ca_is_refused_the_handshake(
    tls_server: BackgroundServer, tmp_path: Path
) -> None:
    stranger = make_certificates(tmp_path, "stranger")
    with (
        Client(tls_server.target, ca=str(stranger.ca), timeout=5) as client,
        pytest.raises(TablelogError) as refused,
    ):
        client.game_types()
    assert refused.value.code == grpc.StatusCode.UNAVAILABLE


def test_a_client_trusting_only_the_system_cas_is_refused(tls_server: BackgroundServer) -> None:
    with grpc.secure_channel(tls_server.target, grpc.ssl_channel_credentials()) as channel:
        stub = service_pb2_grpc.TablelogServiceStub(channel)
        with pytest.raises(grpc.RpcError) as refused:
            stub.ListGameTypes(service_pb2.ListGameTypesRequest(), timeout=5)
    assert refused.value.code() == grpc.StatusCode.UNAVAILABLE


def test_plaintext_to_the_tls_port_fails(tls_server: BackgroundServer) -> None:
    with open_channel(tls_server.target) as channel:
        stub = service_pb2_grpc.TablelogServiceStub(channel)
        with pytest.raises(grpc.RpcError) as refused:
            stub.ListGameTypes(service_pb2.ListGameTypesRequest(), timeout=5)
    assert refused.value.code() == grpc.StatusCode.UNAVAILABLE


def test_a_missing_ca_file_is_said_plainly(tmp_path: Path) -> None:
    with pytest.raises(TablelogError, match="cannot read the CA file"):
        Client("127.0.0.1:1", ca=str(tmp_path / "nowhere.pem"))


@pytest.mark.parametrize(
    ("address", "loopback"),
    [
        ("127.0.0.1:50051", True),
        ("127.0.0.2:50051", True),
        ("localhost:50051", True),
        ("[::1]:50051", True),
        ("unix:/run/tablelog.sock", True),
        ("0.0.0.0:50051", False),
        ("[::]:50051", False),
        ("192.168.1.20:50051", False),
        ("tablelog.example:50051", False),
        (":50051", False),
    ],
)
def test_which_addresses_only_this_machine_reaches(address: str, loopback: bool) -> None:
    assert is_loopback(address) is loopback


def test_plaintext_off_loopback_needs_tls_or_an_explicit_allowance(
    certificates: Certificates,
) -> None:
    with pytest.raises(TransportError, match="--allow-insecure"):
        check_listening("0.0.0.0:50051", None, allow_insecure=False)
    check_listening("0.0.0.0:50051", None, allow_insecure=True)
    check_listening("0.0.0.0:50051", TlsFiles(certificates.certificate, certificates.key), False)
    check_listening("127.0.0.1:50051", None, allow_insecure=False)


def test_tls_needs_both_files_and_readable_pem(certificates: Certificates, tmp_path: Path) -> None:
    with pytest.raises(TransportError, match="--tls-key is missing"):
        tls_files(str(certificates.certificate), None)
    assert tls_files(None, None) is None
    (tmp_path / "empty.pem").write_text("")
    with pytest.raises(TransportError, match="holds no PEM certificate"):
        TlsFiles(tmp_path / "empty.pem", certificates.key).credentials()
    with pytest.raises(TransportError, match="cannot read --tls-key"):
        TlsFiles(certificates.certificate, tmp_path / "missing.key").credentials()


@pytest.mark.slow
def test_serve_refuses_every_interface_without_tls(tmp_path: Path) -> None:
    refused = run_serve("--address", "0.0.0.0:0", "--data-dir", str(tmp_path / "data"))
    assert refused.returncode == 2
    assert "refusing to listen on 0.0.0.0:0 without TLS" in refused.stderr
    assert "--allow-insecure" in refused.stderr
    assert not (tmp_path / "data").exists()  # refused before anything was started


@pytest.mark.slow
def test_serve_on_every_interface_with_allow_insecure(tmp_path: Path) -> None:
    serving = ServeProcess(tmp_path / "data", "--allow-insecure")
    serving.extra = (*serving.extra, "--address", f"0.0.0.0:{serving.port}")
    serving.start()
    try:
        with Client(serving.address, token=serving.token) as client:
            assert client.game_types()
    finally:
        assert serving.stop() == 0


@pytest.mark.slow
def test_serve_with_tls_on_every_interface(tmp_path: Path, certificates: Certificates) -> None:
    serving = ServeProcess(
        tmp_path / "data",
        "--tls-cert", str(certificates.certificate),
        "--tls-key", str(certificates.key),
    )  # fmt: skip
    serving.extra = (*serving.extra, "--address", f"0.0.0.0:{serving.port}")
    serving.start()
    try:
        with Client(serving.address, ca=str(certificates.ca), token=serving.token) as client:
            game = client.create_game("splendor", ["Ann", "Bob"])
            assert client.get_game(game.game_id).game_id == game.game_id
        with Client(serving.address, timeout=5) as plaintext, pytest.raises(TablelogError):
            plaintext.game_types()
    finally:
        assert serving.stop() == 0


@pytest.mark.slow
def test_serve_refuses_a_certificate_without_its_key(
    tmp_path: Path, certificates: Certificates
) -> None:
    refused = run_serve("--tls-cert", str(certificates.certificate), "--data-dir", str(tmp_path))
    assert refused.returncode == 2
    assert "--tls-key is missing" in refused.stderr


def healthcheck(target: str, **env: str) -> int:
    """`python -m tablelog.service.api.healthcheck` as the image runs it, for the server at
    `target`."""
    settings = {k: v for k, v in os.environ.items() if not k.startswith("TABLELOG_")}
    checked = subprocess.run(
        [sys.executable, "-m", "tablelog.service.api.healthcheck"],
        env={**settings, "TABLELOG_ADDRESS": f"0.0.0.0:{target.rsplit(':', 1)[1]}", **env},
        capture_output=True,
        timeout=30,
    )
    return checked.returncode


@pytest.mark.slow
def test_the_image_healthcheck_speaks_tls_when_the_server_does(
    tls_server: BackgroundServer, certificates: Certificates, embedded_redis: EmbeddedRedis
) -> None:
    tls = {"TABLELOG_TLS_CERT": str(certificates.certificate)}
    assert healthcheck(tls_server.target, **tls, TABLELOG_CA=str(certificates.ca)) == 0
    # Without a CA the certificate itself is trusted (grpc accepts it as its anchor)...
    assert healthcheck(tls_server.target, **tls) == 0
    # ...but the name expected must be on it.
    assert (
        healthcheck(
            tls_server.target,
            **tls,
            TABLELOG_CA=str(certificates.ca),
            TABLELOG_TLS_SERVER_NAME="elsewhere.example",
        )
        == 1
    )
    assert healthcheck(tls_server.target) == 1  # plaintext to a TLS port
    plain = BackgroundServer(embedded_redis.url, chain=CHAIN).start()
    try:
        assert healthcheck(plain.target) == 0
    finally:
        plain.stop()


DEPLOY = Path(__file__).resolve().parents[2] / "deploy"


def test_the_deploy_files_name_only_settings_serve_reads() -> None:
    """A misspelt variable in a manifest would be ignored in silence."""
    read = set(re.findall(r"TABLELOG_[A-Z_]+", inspect.getsource(service_cli)))
    read |= set(re.findall(r"TABLELOG_[A-Z_]+", inspect.getsource(service_healthcheck)))
    manifests = (p for p in DEPLOY.glob("kubernetes/**/*") if p.is_file())
    for path in (DEPLOY / "compose.yaml", DEPLOY / "Dockerfile", *manifests):
        named = set(re.findall(r"TABLELOG_[A-Z_]+", path.read_text()))
        assert named <= read, f"{path.name}: {sorted(named - read)}"
