"""The CLI tests run the real `tablelog` command against a live server (the service tests'
session fixtures: an embedded Redis and a server on a free port)."""

from tests.service.conftest import client, embedded_redis, game_id, server

__all__ = ["client", "embedded_redis", "game_id", "server"]
