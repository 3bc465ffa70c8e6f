"""Start-up refusals: settings that must stop the process, naming what is wrong."""

from __future__ import annotations

import pytest

from runtime.settings import ConfigError, load_settings


def refused(monkeypatch: pytest.MonkeyPatch, says: str, **env: str) -> None:
    """With `env` set (over what the test set before), loading the settings fails with a ConfigError
    matching `says`."""
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    with pytest.raises(ConfigError, match=says):
        load_settings()
