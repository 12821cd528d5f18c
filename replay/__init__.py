"""The rules core and the fold: pure Python, no I/O (see DESIGN.md and replay/core.py)."""
