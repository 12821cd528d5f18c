"""deploy/kubernetes without a cluster: each overlay rendered by kustomize (with the Secrets
deploy/make-secrets.sh makes), validated against the Kubernetes API's schemas offline, its
workloads checked for what running them needs; and the Redis Cluster's own config and
commands run on this machine: six redis-servers started by the StatefulSet's command, joined
by the Job's script."""

from __future__ import annotations

import copy
import random
import shutil
import socket
import subprocess
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest
import redis
from redis.cluster import RedisCluster

from tests.deploy.support import (
    KUBERNETES,
    Mounts,
    clean_environment,
    load_all_yaml,
    make_secrets,
    missing_tool,
    redis_command,
    redis_server,
    served_names_under,
)
from tests.deploy.test_compose import redis_settings, size
from tests.deploy.test_image import final_stage, healthcheck_command, only

try:
    # Typed in its code but shipped without a py.typed marker.
    from kubernetes_validate import utils as schemas  # type: ignore[import-untyped]
except ImportError:
    schemas = None

OVERLAYS = ("redis-cluster", "external-redis")
KUBERNETES_VERSIONS = ("1.30.0", "1.37.0")
"""The oldest release still maintained by the usual providers, and the newest the schemas
know."""

Resource = dict[str, Any]


def kustomize_command() -> list[str]:
    if shutil.which("kubectl"):
        return ["kubectl", "kustomize"]
    if shutil.which("kustomize"):
        return ["kustomize", "build"]
    missing_tool("kubectl or kustomize", "go install sigs.k8s.io/kustomize/kustomize/v5")
    raise AssertionError("unreachable")


def render(directory: Path) -> list[Resource]:
    built = subprocess.run(
        [*kustomize_command(), str(directory)], capture_output=True, text=True, timeout=120
    )
    assert built.returncode == 0, built.stderr
    return load_all_yaml(built.stdout)


@pytest.fixture(scope="module")
def checkout(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """deploy/kubernetes with the Secrets' files made as base/kustomization.yaml says."""
    copied = tmp_path_factory.mktemp("kubernetes") / "kubernetes"
    shutil.copytree(KUBERNETES, copied, ignore=shutil.ignore_patterns("secrets"))
    make_secrets(copied / "base" / "secrets", "tablelog.league.svc")
    return copied


@pytest.fixture(scope="module")
def rendered(checkout: Path) -> dict[str, list[Resource]]:
    return {overlay: render(checkout / overlay) for overlay in OVERLAYS}


def named(resources: list[Resource], kind: str, name: str | None = None) -> list[Resource]:
    return [
        r
        for r in resources
        if r["kind"] == kind and (name is None or r["metadata"]["name"] == name)
    ]


def one(resources: list[Resource], kind: str, name: str) -> Resource:
    found = named(resources, kind, name)
    assert len(found) == 1, f"{kind}/{name}: {len(found)} rendered"
    return found[0]


def pod_specs(resources: list[Resource]) -> Iterator[tuple[Resource, Resource]]:
    for resource in resources:
        if resource["kind"] in ("Deployment", "StatefulSet", "Job"):
            yield resource, resource["spec"]["template"]["spec"]


def validate(resource: Resource, version: str) -> None:
    if schemas is None:
        missing_tool("kubernetes-validate", "pip install -e '.[dev]'")
    schemas.validate(resource, version, strict=True)


def test_the_secrets_are_made_from_files_that_are_not_committed() -> None:
    ignored = subprocess.run(
        ["git", "check-ignore", "-q", str(KUBERNETES / "base" / "secrets" / "chain.key")],
        cwd=KUBERNETES,
        timeout=30,
    )
    assert ignored.returncode == 0


@pytest.mark.parametrize("overlay", OVERLAYS)
@pytest.mark.parametrize("version", KUBERNETES_VERSIONS)
def test_every_rendered_resource_is_valid_for_the_kubernetes_api(
    rendered: dict[str, list[Resource]], overlay: str, version: str
) -> None:
    for resource in rendered[overlay]:
        validate(resource, version)


def test_the_schemas_refuse_a_misspelt_field(rendered: dict[str, list[Resource]]) -> None:
    """The validation above can fail: a field the API does not know is refused."""
    deployment = copy.deepcopy(one(rendered["external-redis"], "Deployment", "tablelog"))
    deployment["spec"]["template"]["spec"]["containers"][0]["readinesProbe"] = {}
    with pytest.raises(schemas.ValidationError if schemas else Exception):
        validate(deployment, KUBERNETES_VERSIONS[-1])


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_every_secret_and_config_map_a_pod_uses_is_rendered(
    rendered: dict[str, list[Resource]], overlay: str
) -> None:
    resources = rendered[overlay]
    secrets = {r["metadata"]["name"] for r in named(resources, "Secret")}
    config_maps = {r["metadata"]["name"] for r in named(resources, "ConfigMap")}
    for workload, spec in pod_specs(resources):
        for volume in spec.get("volumes", []):
            if "secret" in volume:
                assert volume["secret"]["secretName"] in secrets, workload["metadata"]["name"]
            if "configMap" in volume:
                assert volume["configMap"]["name"] in config_maps, workload["metadata"]["name"]
        for container in spec["containers"]:
            for source in container.get("envFrom", []):
                assert source["configMapRef"]["name"] in config_maps


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_every_container_runs_bounded_and_without_root(
    rendered: dict[str, list[Resource]], overlay: str
) -> None:
    for workload, spec in pod_specs(rendered[overlay]):
        name = workload["metadata"]["name"]
        assert spec["securityContext"]["runAsNonRoot"] is True, name
        assert spec["securityContext"]["runAsUser"] > 0, name
        assert spec.get("automountServiceAccountToken") is False, name
        for container in spec["containers"]:
            assert container["securityContext"]["allowPrivilegeEscalation"] is False, name
            assert container["securityContext"]["capabilities"]["drop"] == ["ALL"], name
            assert "cpu" in container["resources"]["requests"], name
            assert "memory" in container["resources"]["limits"], name
            image = container["image"]
            assert ":" in image, f"{name}: {image}"
            assert not image.endswith(":latest"), f"{name}: {image}"


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_tablelog_runs_as_the_images_user_and_is_probed_by_the_images_check(
    rendered: dict[str, list[Resource]], overlay: str
) -> None:
    deployment = one(rendered[overlay], "Deployment", "tablelog")
    spec = deployment["spec"]["template"]["spec"]
    stage = final_stage()
    uid = only(stage, "USER").value.split(":")[0]
    assert spec["securityContext"]["runAsUser"] == int(uid)
    (container,) = spec["containers"]
    check = healthcheck_command(stage)
    for probe in ("startupProbe", "readinessProbe"):
        assert container[probe]["exec"]["command"] == check, probe
    # Liveness must not follow Redis (issue 27): the same check, answered whatever the store.
    assert container["livenessProbe"]["exec"]["command"] == [*check, "--live"]
    settings = one(rendered[overlay], "ConfigMap", container["envFrom"][0]["configMapRef"]["name"])
    # The check reads the address from the same environment as the server.
    assert settings["data"]["TABLELOG_ADDRESS"].startswith("0.0.0.0:")
    assert settings["data"]["TABLELOG_REDIS_URL"]
    environment = {e["name"]: e.get("value") for e in container["env"]}
    assert environment["TABLELOG_TLS_CERT"]
    assert environment["TABLELOG_TLS_KEY"]
    mounted = [m["mountPath"] for m in container["volumeMounts"]]
    for path in ("TABLELOG_TLS_CERT", "TABLELOG_CHAIN_KEY_FILE", "TABLELOG_REDIS_PASSWORD_FILE"):
        assert any(environment[path].startswith(m + "/") for m in mounted), path
    assert settings["data"]["TABLELOG_HTTP_ADDRESS"].startswith("0.0.0.0:")
    grpc, http = (
        int(settings["data"][name].rsplit(":", 1)[1])
        for name in ("TABLELOG_ADDRESS", "TABLELOG_HTTP_ADDRESS")
    )
    assert container["ports"] == [
        {"name": "grpc", "containerPort": grpc},
        {"name": "http", "containerPort": http},
    ]


def container_environment(resources: list[Resource], container: Resource) -> dict[str, str]:
    """What a container's process finds in its environment: its ConfigMaps' data (envFrom),
    then its own `env` values (a value from a Secret or a field is not known here)."""
    found: dict[str, str] = {}
    for source in container.get("envFrom", []):
        found.update(one(resources, "ConfigMap", source["configMapRef"]["name"])["data"])
    found.update({e["name"]: e["value"] for e in container.get("env", []) if "value" in e})
    return found


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_the_http_port_serves_the_names_set_and_no_other(
    rendered: dict[str, list[Resource]], overlay: str
) -> None:
    """The pods listen on every interface: without names their Host check let any name
    through (a DNS-rebinding page). The ConfigMap names the Service's (TABLELOG_HTTP_HOSTS,
    which the operator extends: docs/deploy.md)."""
    resources = rendered[overlay]
    (container,) = one(resources, "Deployment", "tablelog")["spec"]["template"]["spec"][
        "containers"
    ]
    environment = container_environment(resources, container)
    assert environment["TABLELOG_HTTP_ADDRESS"].startswith("0.0.0.0:")
    served = served_names_under(environment)
    assert served is not None, "every name is answered"
    service = one(resources, "Service", "tablelog")["metadata"]["name"]
    assert service in served
    assert "localhost" in served  # kubectl port-forward
    assert "rebound.example" not in served


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_clients_reach_every_pod_and_a_drain_keeps_one(
    rendered: dict[str, list[Resource]], overlay: str
) -> None:
    resources = rendered[overlay]
    deployment = one(resources, "Deployment", "tablelog")
    labels = deployment["spec"]["template"]["metadata"]["labels"]
    service = one(resources, "Service", "tablelog")
    # Headless: DNS answers every ready pod, so round_robin clients use them all.
    assert service["spec"]["clusterIP"] == "None"
    assert service["spec"]["selector"].items() <= labels.items()
    assert service["spec"]["ports"][0]["targetPort"] == "grpc"
    budget = one(resources, "PodDisruptionBudget", "tablelog")
    assert budget["spec"]["selector"]["matchLabels"].items() <= labels.items()
    assert 1 <= budget["spec"]["minAvailable"] < deployment["spec"]["replicas"]
    assert deployment["spec"]["strategy"]["rollingUpdate"]["maxUnavailable"] == 0


def test_the_redis_cluster_is_six_nodes_joined_by_the_job(
    rendered: dict[str, list[Resource]],
) -> None:
    resources = rendered["redis-cluster"]
    nodes = one(resources, "StatefulSet", "tablelog-redis")
    service = one(resources, "Service", nodes["spec"]["serviceName"])
    assert service["spec"]["clusterIP"] == "None"
    assert nodes["spec"]["replicas"] == 6
    job = one(resources, "Job", "tablelog-redis-cluster-create")
    (creator,) = job["spec"]["template"]["spec"]["containers"]
    listed = next(e["value"] for e in creator["env"] if e["name"] == "REDIS_NODES").split()
    service_name = service["metadata"]["name"]
    assert listed == [f"{nodes['metadata']['name']}-{i}.{service_name}:6379" for i in range(6)]
    deployment = one(resources, "Deployment", "tablelog")
    settings_name = deployment["spec"]["template"]["spec"]["containers"][0]["envFrom"][0]
    settings = one(resources, "ConfigMap", settings_name["configMapRef"]["name"])
    assert settings["data"]["TABLELOG_REDIS_URL"] == f"redis+cluster://{service_name}:6379"


def test_each_redis_node_persists_and_refuses_writes_inside_its_memory_limit(
    rendered: dict[str, list[Resource]],
) -> None:
    resources = rendered["redis-cluster"]
    nodes = one(resources, "StatefulSet", "tablelog-redis")
    spec = nodes["spec"]["template"]["spec"]
    (config_volume,) = [v for v in spec["volumes"] if "configMap" in v]
    config = one(resources, "ConfigMap", config_volume["configMap"]["name"])
    conf = redis_settings(config["data"]["redis.conf"])
    assert conf["cluster-enabled"] == "yes"
    assert conf["appendonly"] == "yes"
    assert conf["maxmemory-policy"] == "noeviction"
    limit = size(spec["containers"][0]["resources"]["limits"]["memory"].replace("Gi", "g"))
    assert 0 < size(conf["maxmemory"]) <= limit * 0.7
    assert "requirepass" not in conf
    assert conf.get("protected-mode", "yes") == "yes"
    (claim,) = nodes["spec"]["volumeClaimTemplates"]
    data = next(m for m in spec["containers"][0]["volumeMounts"] if m["name"] == "data")
    assert claim["metadata"]["name"] == "data"
    assert conf["dir"] == data["mountPath"]


# ----------------------------------------------------------- the cluster, run here


def cluster_ports(count: int) -> list[int]:
    """Ports free with their cluster bus port (port + 10000), which must stay below 65536."""
    chosen: list[int] = []
    rng = random.Random()
    while len(chosen) < count:
        port = rng.randrange(20000, 30000)
        if port in chosen:
            continue
        try:
            for candidate in (port, port + 10000):
                with socket.socket() as probe:
                    probe.bind(("127.0.0.1", candidate))
        except OSError:
            continue
        chosen.append(port)
    return chosen


def container_env(container: Resource, **given: str) -> dict[str, str]:
    """The container's env as the kubelet expands it ($(VAR) of earlier entries), with
    `given` for what the downward API would fill."""
    env: dict[str, str] = {}
    for entry in container.get("env", []):
        if "value" in entry:
            value = entry["value"]
            for name, known in env.items():
                value = value.replace(f"$({name})", known)
            env[entry["name"]] = value
        else:
            env[entry["name"]] = given[entry["name"]]
    return env


@pytest.mark.long  # (brought up for real: .ci/run runs it; README, Quick start)
def test_the_nodes_command_and_the_jobs_script_make_a_working_cluster(
    rendered: dict[str, list[Resource]], checkout: Path, tmp_path: Path
) -> None:
    redis_server()
    resources = rendered["redis-cluster"]
    nodes = one(resources, "StatefulSet", "tablelog-redis")
    spec = nodes["spec"]["template"]["spec"]
    (node,) = spec["containers"]
    config = one(resources, "ConfigMap", spec["volumes"][0]["configMap"]["name"])
    password_file = checkout / "base" / "secrets" / "redis-password"
    password = password_file.read_text(encoding="utf-8").strip()
    ports = cluster_ports(6)
    with ExitStack() as stack:
        for index, port in enumerate(ports):
            pod = tmp_path / f"pod-{index}"
            for directory in ("data", "tmp", "config"):
                (pod / directory).mkdir(parents=True)
            mounts = Mounts(
                {
                    "/data": pod / "data",
                    "/tmp": pod / "tmp",
                    "/etc/redis": pod / "config",
                    "/etc/redis-auth/password": password_file,
                }
            )
            conf = mounts.apply(config["data"]["redis.conf"])
            (pod / "config" / "redis.conf").write_text(conf, encoding="utf-8")
            # The pod's own network: loopback and a port of the test's, named "localhost"
            # (the name a pod announces resolves to it).
            script = mounts.apply(node["args"][0]) + f" --port {port} --bind 127.0.0.1"
            env = clean_environment(
                **container_env(node, POD_NAME=f"tablelog-redis-{index}"),
            )
            env["ANNOUNCE_HOSTNAME"] = "localhost"
            stack.enter_context(redis_command([*node["command"], script], port, password, env))

        job = one(resources, "Job", "tablelog-redis-cluster-create")
        (creator,) = job["spec"]["template"]["spec"]["containers"]
        job_env = container_env(creator)
        job_env["REDIS_NODES"] = " ".join(f"localhost:{port}" for port in ports)
        job_env["REDIS_PASSWORD_FILE"] = str(password_file)
        job_script = [*creator["command"], *creator["args"]]
        created = subprocess.run(
            job_script, env=clean_environment(**job_env), capture_output=True, text=True,
            timeout=180,
        )  # fmt: skip
        assert created.returncode == 0, created.stdout + created.stderr
        assert "cluster created" in created.stdout
        # Run again (the Job retried, or applied anew): nothing to do.
        again = subprocess.run(
            job_script, env=clean_environment(**job_env), capture_output=True, text=True,
            timeout=60,
        )  # fmt: skip
        assert again.returncode == 0, again.stdout + again.stderr
        assert "nothing to create" in again.stdout

        readiness = node["readinessProbe"]["exec"]["command"]
        for port in ports:
            probe = Mounts({"/etc/redis-auth/password": password_file}).apply(readiness[-1])
            probe = probe.replace("redis-cli", f"redis-cli -p {port}")
            assert subprocess.run([*readiness[:-1], probe], timeout=30).returncode == 0

        cluster = RedisCluster(host="127.0.0.1", port=ports[0], password=password)
        try:
            assert len(cluster.cluster_nodes()) == 6
            assert str(cluster.cluster_info()["cluster_state"]) == "ok"
            for game in ("a", "b", "c", "d", "e", "f"):
                cluster.set(f"tl:{{{game}}}:head", game)
            assert [cluster.get(f"tl:{{{g}}}:head") for g in "abcdef"] == [
                g.encode() for g in "abcdef"
            ]
        finally:
            cluster.close()
        with pytest.raises(redis.AuthenticationError):
            redis.Redis(port=ports[0]).ping()
