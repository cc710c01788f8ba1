"""A headless chromium with a WebAuthn virtual authenticator (browser_harness.py), and screenshots."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from browser_harness import Shots, add_passkey_authenticator, artifacts_dir, start_chromium
from console_team import ConsoleTeam, made_team
from selenium import webdriver


@pytest.fixture
def browser(tmp_path: Path) -> Iterator[webdriver.Chrome]:
    """A headless chromium (throwaway profile in tmp_path) holding a virtual passkey authenticator."""
    driver = start_chromium(tmp_path / "chromium-profile")
    try:
        add_passkey_authenticator(driver)
        yield driver
    finally:
        driver.quit()


@pytest.fixture
def shots(browser: webdriver.Chrome) -> Shots:
    """shots("login") saves the page as login.png in the artifacts folder (CANAL_ARTIFACTS)."""
    return Shots(browser, artifacts_dir())


@pytest.fixture(scope="module")
def console_team(docker_client: Any, sandbox_image: str) -> Iterator[ConsoleTeam]:
    """The agent's OS user (its Canal server serves the console) and an approver's, and their project."""
    if os.geteuid() != 0:
        pytest.fail("the console's end-to-end test creates OS users: run it as root (CI does)")
    with made_team(docker_client, "canal-console-") as made:
        yield made
