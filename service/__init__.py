"""The tablelog service: the gRPC API over a Redis-stream event store (see docs/service.md)."""
