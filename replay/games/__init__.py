"""One package per game. Each exposes `GAME`, an object satisfying `tablelog.replay.core.Game`."""
