"""A thin Python client of tablelog: the `tablelog` CLI and a small SDK (`Client`).

Thin: it carries messages. The server parses notation, checks rules and renders states."""

from tablelog_client.sdk import Client, TablelogError

__all__ = ["Client", "TablelogError"]
