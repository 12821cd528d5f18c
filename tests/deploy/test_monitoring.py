"""docs/deploy.md's alert rules and deploy/grafana's dashboard ask only for what the server
exports: every metric a query names is one of `tablelog.service.metrics`' samples, and every label
it matches or groups by is one that metric carries (a renamed metric or label fails here,
not in an operator's silent dashboard)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import yaml

from tablelog.service import metrics

ROOT = Path(__file__).resolve().parents[2]
METRIC = re.compile(r"\btablelog_[a-z_]+\b")
MATCHERS = re.compile(r"(tablelog_[a-z_]+)\{([^}]*)\}")
GROUPING = re.compile(r"\b(?:by|without)\s*\(([^)]*)\)")


def exported() -> dict[str, set[str]]:
    """Every sample name the registry exports, with its label names (calls observed first,
    so that the labelled families have samples)."""
    metrics.observe_call("RecordMove", "grpc", "OK", 0.001)
    metrics.refused("ILLEGAL_MOVE")
    metrics.CHECKPOINT_WRITES.labels("written")
    found: dict[str, set[str]] = {}
    for family in metrics.REGISTRY.collect():
        for sample in family.samples:
            found.setdefault(sample.name, set()).update(sample.labels)
    return found


def alert_queries() -> list[str]:
    text = (ROOT / "docs" / "deploy.md").read_text(encoding="utf-8")
    section = text.split("## Monitoring", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```yaml\n(.*?)```", section, re.S)
    assert block, "docs/deploy.md's Monitoring section has no alert rules"
    rules = yaml.safe_load(block.group(1))["groups"][0]["rules"]
    assert all({"alert", "expr", "annotations"} <= set(rule) for rule in rules)
    return [str(rule["expr"]) for rule in rules]


def dashboard_queries() -> list[str]:
    dashboard = json.loads(
        (ROOT / "deploy" / "grafana" / "tablelog-dashboard.json").read_text(encoding="utf-8")
    )
    assert dashboard["uid"]
    assert dashboard["title"]
    assert dashboard["panels"]
    ids = [panel["id"] for panel in dashboard["panels"]]
    assert len(ids) == len(set(ids))
    queries = []
    for panel in dashboard["panels"]:
        assert {"x", "y", "w", "h"} <= set(panel["gridPos"]), panel["title"]
        assert panel["targets"], panel["title"]
        queries += [target["expr"] for target in panel["targets"]]
    return queries


def problems(query: str, known: dict[str, set[str]]) -> list[str]:
    found = []
    names = set(METRIC.findall(query))
    if not names:
        found.append(f"{query}: names no tablelog metric")
    for name in names - set(known):
        found.append(f"{query}: {name} is not exported")
    for name, matchers in MATCHERS.findall(query):
        for label in re.findall(r"(\w+)\s*(?:=~|!~|!=|=)", matchers):
            if label not in known.get(name, set()):
                found.append(f"{query}: {name} has no label {label}")
    carried = set().union(*(known.get(name, set()) for name in names)) | {"le"}
    for grouped in GROUPING.findall(query):
        for label in (part.strip() for part in grouped.split(",") if part.strip()):
            if label not in carried:
                found.append(f"{query}: no metric it names has the label {label}")
    return found


def test_the_alerts_ask_for_what_the_server_exports() -> None:
    known = exported()
    queries = alert_queries()
    assert len(queries) >= 4
    assert [p for q in queries for p in problems(q, known)] == []


def test_the_dashboard_asks_for_what_the_server_exports() -> None:
    known = exported()
    assert [p for q in dashboard_queries() for p in problems(q, known)] == []


def test_the_check_catches_a_renamed_metric_or_label() -> None:
    known = exported()
    assert problems("rate(tablelog_rpc_total[5m])", known)
    assert problems('rate(tablelog_rpc_calls_total{status="OK"}[5m])', known)
    assert problems("sum by (game_id) (tablelog_watchers)", known)
    assert not problems('sum by (code) (rate(tablelog_rpc_calls_total{code!="OK"}[5m]))', known)
