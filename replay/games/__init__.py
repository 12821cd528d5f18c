"""One package per game. Each exposes `GAME`, an object satisfying `replay.core.Game`."""
