"""Reflection answers for a method (issue 27; grpc/grpc#34743): `grpcurl describe
tablelog.v1.TablelogService.RecordMove` sends `file_containing_symbol` with the method's
full name, which grpc-python's reflection answered NOT_FOUND for every method."""

from __future__ import annotations

from typing import Any

import grpc
import pytest
from google.protobuf import descriptor_pb2
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

from tablelog.service.api.server import BackgroundServer, channel
from tablelog.v1 import clubs_pb2, service_pb2
from tests.service.helpers import OWNER_TOKEN

METHODS = [
    (service.full_name, method.name)
    for module in (service_pb2, clubs_pb2)
    for service in module.DESCRIPTOR.services_by_name.values()
    for method in service.methods
]


def file_containing(server: BackgroundServer, symbol: str) -> Any:
    with channel(server.target, OWNER_TOKEN) as opened:
        stub: Any = reflection_pb2_grpc.ServerReflectionStub(opened)
        request = reflection_pb2.ServerReflectionRequest(file_containing_symbol=symbol)
        (answer,) = list(stub.ServerReflectionInfo(iter([request]), timeout=10))
        return answer


def test_every_method_is_described_by_its_services_file(server: BackgroundServer) -> None:
    assert len(METHODS) >= 30
    for service, method in METHODS:
        answer = file_containing(server, f"{service}.{method}")
        assert answer.HasField("file_descriptor_response"), (service, method)
        files = [
            descriptor_pb2.FileDescriptorProto.FromString(data)
            for data in answer.file_descriptor_response.file_descriptor_proto
        ]
        described = {
            f"{proto.package}.{s.name}": {m.name for m in s.method}
            for proto in files
            for s in proto.service
        }
        assert method in described[service], (service, method)


@pytest.mark.parametrize(
    "symbol",
    ["tablelog.v1.TablelogService.NoSuchMethod", "tablelog.v1.NoSuchService.RecordMove"],
)
def test_an_unknown_method_is_still_not_found(server: BackgroundServer, symbol: str) -> None:
    answer = file_containing(server, symbol)
    assert answer.HasField("error_response")
    assert answer.error_response.error_code == grpc.StatusCode.NOT_FOUND.value[0]
