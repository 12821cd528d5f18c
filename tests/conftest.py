"""Settings for every test."""

from __future__ import annotations

import os

# Every `tablelog serve` a test starts leaves the HTTP port off unless the test asks for
# one (--http-address): its default, 127.0.0.1:8080, is one port for the whole machine,
# and tests run in parallel.
os.environ.setdefault("TABLELOG_HTTP_ADDRESS", "off")
