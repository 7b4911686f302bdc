"""Placeholder: filled in by the chapter that needs it."""

__all__: list[str] = []
