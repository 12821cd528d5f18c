"""Server reflection that answers for methods too: grpc-python's servicer looks a symbol up
with the descriptor pool's `FindFileContainingSymbol`, which knows messages, enums,
services and fields but not a service's methods, so `grpcurl describe
tablelog.v1.TablelogService.RecordMove` (a `file_containing_symbol` request for a method,
as grpcurl, Postman and `buf curl` send) was NOT_FOUND for every method (upstream:
grpc/grpc#34743). When the pool does not know a symbol whose parent is a service with a
method of that name, the service's file is answered, as the C++ and Go servers do."""

from __future__ import annotations

from typing import Any

from grpc_reflection.v1alpha import reflection


class ReflectionServicer(reflection.aio.ReflectionServicer):
    # (types-grpcio-reflection declares only the public surface: the hook and the pool are
    # grpc_reflection's BaseReflectionServicer's, unchanged since 1.x)
    def _file_containing_symbol(self, request: Any, fully_qualified_name: str) -> Any:
        answer = super()._file_containing_symbol(request, fully_qualified_name)  # type: ignore[misc]
        if not answer.HasField("error_response"):
            return answer
        service_name, _, method = fully_qualified_name.rpartition(".")
        try:
            service = self._pool.FindServiceByName(service_name)  # type: ignore[attr-defined]
        except KeyError:
            return answer
        if method not in service.methods_by_name:
            return answer
        return super()._file_containing_symbol(request, service_name)  # type: ignore[misc]
