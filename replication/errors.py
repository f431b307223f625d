"""The one exception type the CLI turns into a single clear error line and a non-zero exit."""

from __future__ import annotations


class HbrepError(Exception):
    """A user-facing failure: the message names the thing that is wrong, in one line."""

    exit_code: int = 1


class ConfigError(HbrepError):
    """A configuration value is missing, malformed or out of range (the message names the key)."""
