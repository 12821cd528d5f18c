"""deploy/compose.yaml without Docker: its structure checked, then what it describes started
on this machine: Redis by the compose's own command with its redis.conf and password
secret, two `tablelog serve` by the image's ENTRYPOINT with the compose's environment, the
containers' paths (secrets, volumes, /tmp) mapped to directories of the test."""

from __future__ import annotations

import json
import os
import re
import ssl
import stat
import subprocess
import urllib.request
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import redis
import yaml

from tablelog.service.store.embedded import free_port
from tablelog_client import Client, TablelogError
from tests.deploy.support import (
    DEPLOY,
    Mounts,
    clean_environment,
    compose_interpolate,
    compose_shell,
    image_program,
    load_yaml,
    make_secrets,
    missing_tool,
    redis_command,
    redis_server,
    served_names_under,
    serving,
    status_by_name,
)
from tests.deploy.test_image import (
    exec_form,
    final_stage,
    healthcheck_command,
    image_environment,
    on_port,
)
from tests.service.helpers import splendor_line

OPERATOR_NAME = "tablelog.club.example"
"""The name an operator serves the web app by (docs/deploy.md's example), set as the deploy
says: TABLELOG_HTTP_HOSTS in the environment of `docker compose up`."""
REBOUND_NAME = "rebound.example"
"""A name nobody set: a page of it whose DNS points at the host (DNS rebinding)."""

UNITS = {"": 1, "k": 1 << 10, "kb": 1 << 10, "m": 1 << 20, "mb": 1 << 20, "g": 1 << 30}
UNITS["gb"] = 1 << 30


def size(text: str) -> int:
    """A Redis or Compose size ("640mb", "1g") in bytes."""
    match = re.fullmatch(r"(\d+)\s*([a-z]*)", str(text).strip().lower())
    assert match, f"not a size: {text}"
    assert match.group(2) in UNITS, f"not a unit: {text}"
    return int(match.group(1)) * UNITS[match.group(2)]


def redis_settings(text: str) -> dict[str, str]:
    settings: dict[str, str] = {}
    for line in text.splitlines():
        words = line.split(None, 1)
        if words and not words[0].startswith("#"):
            settings[words[0].lower()] = words[1].strip() if len(words) > 1 else ""
    return settings


def compose() -> dict[str, Any]:
    loaded: dict[str, Any] = load_yaml(DEPLOY / "compose.yaml")
    return loaded


def check_against_the_compose_specification(described: dict[str, Any]) -> None:
    """Raises ValueError where `described` (YAML merge keys resolved) is not a valid
    Compose file: unknown keys, values of the wrong kind, bad sizes, ports or conditions."""
    try:
        from compose_spec import PyCompose
    except ImportError:
        missing_tool("compose-spec", "pip install -e '.[dev]' on x86-64 Linux")
    PyCompose.from_json(json.dumps(described))


def test_the_file_follows_the_compose_specification() -> None:
    check_against_the_compose_specification(compose())


@pytest.mark.parametrize(
    ("where", "mistake"),
    [
        ("depends_on", "depend_on"),
        ("condition: service_healthy", "condition: healthy"),
        ("memory: 1g", "memory: 1gigabyte"),
        ("file: ./secrets/chain.key", "path: ./secrets/chain.key"),
    ],
)
def test_the_specification_check_refuses_a_mistake(where: str, mistake: str) -> None:
    text = (DEPLOY / "compose.yaml").read_text(encoding="utf-8")
    assert where in text
    with pytest.raises(ValueError):  # noqa: PT011 (the binding raises no finer error)
        check_against_the_compose_specification(yaml.safe_load(text.replace(where, mistake)))


def tablelog_services(services: dict[str, Any]) -> dict[str, Any]:
    return {
        name: service
        for name, service in services.items()
        if service.get("build", {}).get("dockerfile") == "deploy/Dockerfile"
    }


def test_two_interchangeable_instances_share_one_redis_and_one_chain_key() -> None:
    services = compose()["services"]
    instances = tablelog_services(services)
    assert len(instances) == 2
    first, second = instances.values()
    assert first["environment"] == second["environment"]
    environment = first["environment"]
    assert environment["TABLELOG_REDIS_URL"].startswith("redis://redis:")
    assert environment["TABLELOG_CHAIN_KEY_FILE"] == "/run/secrets/chain-key"
    for service in instances.values():
        assert service["depends_on"]["redis"]["condition"] == "service_healthy"
        assert "memory" in service["deploy"]["resources"]["limits"]
    # Each its own data volume (its owner token), each its own port on the host.
    volumes = [service["volumes"][0].split(":")[0] for service in instances.values()]
    ports = [service["ports"][0].rsplit(":", 1)[0] for service in instances.values()]
    assert len(set(volumes)) == 2
    assert len(set(ports)) == 2
    assert all(port.startswith("127.0.0.1:") for port in ports)


def instance_settings(service: dict[str, Any], operator: dict[str, str]) -> dict[str, str]:
    """An instance's environment as its container has it: the image's ENV, then the
    compose's, read with the operator's environment (Compose's interpolation)."""
    settings = image_environment(final_stage())
    for name, value in service["environment"].items():
        settings[name] = compose_interpolate(str(value), operator)
    return settings


@pytest.mark.parametrize("operator", [{}, {"TABLELOG_HTTP_HOSTS": OPERATOR_NAME}])
def test_the_http_port_serves_the_names_the_operator_sets_and_no_other(
    operator: dict[str, str],
) -> None:
    """The instances listen on every interface: without names their Host check let any
    name through (a DNS-rebinding page of a site pointed at this host). The compose names
    localhost unless the operator sets TABLELOG_HTTP_HOSTS."""
    for service in tablelog_services(compose()["services"]).values():
        settings = instance_settings(service, operator)
        assert settings["TABLELOG_HTTP_ADDRESS"].startswith("0.0.0.0:")
        served = served_names_under(settings)
        assert served is not None, "every name is answered"
        assert "localhost" in served
        assert REBOUND_NAME not in served
        assert (OPERATOR_NAME in served) == bool(operator)


def test_every_secret_is_a_file_that_make_secrets_writes(tmp_path: Path) -> None:
    declared = compose()["secrets"]
    made = {p.name for p in make_secrets(tmp_path / "secrets").iterdir()}
    for name, secret in declared.items():
        path = Path(secret["file"])
        assert path.parent == Path("secrets"), f"{name}: {path}"
        assert path.name in made, f"{name}: make-secrets.sh writes no {path.name}"
    for name, service in compose()["services"].items():
        assert set(service.get("secrets", [])) <= set(declared), name
        for value in service.get("environment", {}).values():
            if str(value).startswith("/run/secrets/"):
                assert Path(value).name in service["secrets"], f"{name}: {value}"


def test_the_secret_files_are_0600_for_their_containers_user(tmp_path: Path) -> None:
    """Main left them 0644. Run as root (as the deploy says: sudo), each secret belongs to
    the user its container reads it as: the server's uid 10001, Redis's 999."""
    made = make_secrets(tmp_path / "secrets")
    modes = {p.name: stat.S_IMODE(p.stat().st_mode) for p in made.iterdir()}
    owners = {p.name: p.stat().st_uid for p in made.iterdir()}
    assert stat.S_IMODE(made.stat().st_mode) == 0o700
    if os.geteuid() != 0:
        pytest.skip("not root: the files cannot be given to the containers' users")
    for name in ("chain.key", "redis-password", "tls.key", "redis-server-password"):
        assert modes[name] == 0o600, (name, oct(modes[name]))
    assert owners["chain.key"] == owners["redis-password"] == owners["tls.key"] == 10001
    assert owners["redis-server-password"] == 999
    assert (made / "redis-server-password").read_text() == (made / "redis-password").read_text()


def test_redis_persists_refuses_writes_inside_its_memory_limit_and_needs_a_password() -> None:
    redis_service = compose()["services"]["redis"]
    mounted = {v.split(":")[1]: v.split(":")[0] for v in redis_service["volumes"]}
    conf_path = mounted["/usr/local/etc/redis/redis.conf"]
    conf = redis_settings((DEPLOY / conf_path).read_text(encoding="utf-8"))
    assert conf["appendonly"] == "yes"
    assert conf["appendfsync"] in ("always", "everysec")
    assert conf["dir"] == "/data"
    assert mounted["/data"] == "redis-data"  # a named volume: the AOF outlives the container
    assert conf["maxmemory-policy"] == "noeviction"
    limit = size(redis_service["deploy"]["resources"]["limits"]["memory"])
    # The rest is for the AOF rewrite's fork, the clients' buffers and Redis itself.
    assert 0 < size(conf["maxmemory"]) <= limit * 0.7
    assert conf.get("protected-mode", "yes") == "yes"
    assert "requirepass" not in conf  # from the secret, never in the file
    command = " ".join(redis_service["command"])
    assert "/run/secrets/redis-server-password" in command  # Redis's own copy
    assert "requirepass" in command


@dataclass(frozen=True)
class Deployment:
    """What compose.yaml started, here: the two instances' addresses and owner tokens."""

    targets: list[str]
    tokens: list[str]
    ca: str
    redis: redis.Redis
    instance_env: list[dict[str, str]]
    web_apps: list[str]
    """Each instance's HTTP port (the web app and the API for browsers), in TLS."""


@pytest.fixture
def deployment(tmp_path: Path) -> Iterator[Deployment]:
    redis_server()  # the containers' `redis-server`: Debian's, on PATH
    described = compose()
    services = described["services"]
    secrets = make_secrets(tmp_path / "secrets")
    secret_files = {
        f"/run/secrets/{name}": secrets / Path(secret["file"]).name
        for name, secret in described["secrets"].items()
    }
    password = secret_files["/run/secrets/redis-password"].read_text(encoding="utf-8").strip()
    with ExitStack() as stack:
        # Redis: the compose's entrypoint and command, its redis.conf, its volume.
        redis_service = services["redis"]
        data, container_tmp = tmp_path / "redis-data", tmp_path / "redis-tmp"
        data.mkdir()
        container_tmp.mkdir()
        volumes = {**secret_files, "/data": data, "/tmp": container_tmp}
        conf = Mounts(volumes).apply((DEPLOY / "redis.conf").read_text(encoding="utf-8"))
        (tmp_path / "redis.conf").write_text(conf, encoding="utf-8")
        mounted_conf = next(v for v in redis_service["volumes"] if v.startswith("./redis.conf:"))
        redis_mounts = Mounts({**volumes, mounted_conf.split(":")[1]: tmp_path / "redis.conf"})
        port = free_port()
        # Its network is the test's: loopback, a port of the test's.
        command = [
            *redis_service["entrypoint"],
            redis_mounts.apply(compose_shell(redis_service["command"][0]))
            + f" --port {port} --bind 127.0.0.1",
        ]
        client = stack.enter_context(redis_command(command, port, password))
        check = redis_service["healthcheck"]["test"]
        assert check[0] == "CMD-SHELL"
        probe = redis_mounts.apply(compose_shell(check[1])).replace(
            "redis-cli", f"redis-cli -p {port}"
        )
        assert subprocess.run(["sh", "-c", probe], timeout=30).returncode == 0

        stage = final_stage()
        targets, tokens, environments, pages = [], [], [], []
        for name, service in tablelog_services(services).items():
            volume, inside = service["volumes"][0].split(":")[:2]
            mounts = Mounts({**secret_files, inside: tmp_path / volume})
            settings = instance_settings(service, {"TABLELOG_HTTP_HOSTS": OPERATOR_NAME})
            settings = {k: mounts.apply(v) for k, v in settings.items()}
            settings["TABLELOG_REDIS_URL"] = settings["TABLELOG_REDIS_URL"].replace(
                "redis:6379",
                f"127.0.0.1:{port}",  # the service name, resolved
            )
            published = free_port()
            host = settings["TABLELOG_ADDRESS"].rsplit(":", 1)[0]
            settings["TABLELOG_ADDRESS"] = f"{host}:{published}"
            web = free_port()
            settings["TABLELOG_HTTP_ADDRESS"] = on_port(settings["TABLELOG_HTTP_ADDRESS"], web)
            pages.append(f"https://localhost:{web}/")
            env = clean_environment(**settings)
            entrypoint = image_program(
                exec_form(next(s for s in stage if s.name == "ENTRYPOINT").value)
            )
            stack.enter_context(serving(entrypoint, env))
            targets.append(f"localhost:{published}")
            token_file = Path(settings["TABLELOG_DATA_DIR"]) / "owner.token"
            tokens.append(token_file.read_text(encoding="utf-8").strip())
            environments.append(env)
            assert name
        yield Deployment(targets, tokens, str(secrets / "tls.crt"), client, environments, pages)


@pytest.mark.long  # (brought up for real: .ci/run runs it; README, Quick start)
def test_what_compose_describes_records_through_both_instances(deployment: Deployment) -> None:
    first, second = (
        Client(target, token=token, ca=deployment.ca)
        for target, token in zip(deployment.targets, deployment.tokens, strict=True)
    )
    with first, second:
        game = first.create_game("splendor", ["Ana", "Ben"]).game_id
        version = first.get_game(game).version
        for index, notation in enumerate(splendor_line(seed=4)[:12]):
            recorder = (first, second)[index % 2]
            version = recorder.record(game, notation, expected_version=version).game.version
        assert second.get_game(game).version == first.get_game(game).version == version
        assert second.verify(game).ok
        assert first.verify(game).ok
    context = ssl.create_default_context(cafile=deployment.ca)
    for page in deployment.web_apps:
        with urllib.request.urlopen(page, context=context, timeout=10) as answer:
            assert answer.status == 200
            assert b"<html" in answer.read().lower()
        # The names set (TABLELOG_HTTP_HOSTS) and only those; readiness by any name.
        assert status_by_name(page, "/", OPERATOR_NAME, deployment.ca) == 200
        assert status_by_name(page, "/", REBOUND_NAME, deployment.ca) == 421
        assert status_by_name(page, "/readyz", "172.18.0.3", deployment.ca) == 200
    for env in deployment.instance_env:
        check = subprocess.run(
            image_program(healthcheck_command(final_stage())), env=env, timeout=60
        )
        assert check.returncode == 0
    # The compose's Redis: durable, bounded, closed without the password.
    config = deployment.redis.config_get("*")
    assert config["appendonly"] == "yes"
    assert config["maxmemory-policy"] == "noeviction"
    assert int(str(config["maxmemory"])) > 0
    port = deployment.redis.connection_pool.connection_kwargs["port"]
    with pytest.raises(redis.AuthenticationError):
        redis.Redis(port=port).ping()


@pytest.mark.slow
def test_a_full_redis_refuses_the_change_and_keeps_serving_reads(deployment: Deployment) -> None:
    """At maxmemory the deployment's noeviction policy refuses writes: the move is
    refused with RESOURCE_EXHAUSTED (not INTERNAL), nothing is recorded, reads go on."""
    with Client(deployment.targets[0], token=deployment.tokens[0], ca=deployment.ca) as client:
        game = client.create_game("splendor", ["Ana", "Ben"]).game_id
        line = splendor_line(seed=5)
        version = client.record(game, line[0]).game.version
        used = int(deployment.redis.info("memory")["used_memory"])
        deployment.redis.config_set("maxmemory", str(used // 2))
        try:
            with pytest.raises(TablelogError) as refused:
                client.record(game, line[1], expected_version=version)
            assert refused.value.code.name == "RESOURCE_EXHAUSTED"
            assert refused.value.reason == "STORE_FULL"
            assert client.get_game(game).version == version
            assert client.verify(game).ok
        finally:
            deployment.redis.config_set("maxmemory", "640mb")
        assert client.record(game, line[1], expected_version=version).game.version > version
