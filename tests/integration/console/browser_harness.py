"""A headless chromium (Debian's, through its chromedriver) with a WebAuthn virtual authenticator, for the
console's browser tests, and screenshots saved as test artifacts.

Without chromium or chromedriver the tests skip, unless CANAL_REQUIRE_BROWSER=1 (CI), which fails them
(`sudo scripts/ensure-browser` installs both). Screenshots go to CANAL_ARTIFACTS (default
artifacts/console/ in the repository, which git ignores).
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from selenium import webdriver
from selenium.common.exceptions import WebDriverException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.virtual_authenticator import VirtualAuthenticatorOptions

REQUIRE_BROWSER = os.environ.get("CANAL_REQUIRE_BROWSER") == "1"
REPO = Path(__file__).resolve().parents[3]
BROWSERS = ("chromium", "chromium-browser", "google-chrome")
# a name the browser resolves to 127.0.0.1 (no DNS involved): a site whose DNS was rebound to this host
REBOUND_HOST = "rebound.test"


def artifacts_dir() -> Path:
    folder = Path(os.environ.get("CANAL_ARTIFACTS") or REPO / "artifacts" / "console")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def find_browser() -> tuple[str, str] | str:
    """(browser, chromedriver) paths, or why there are none."""
    browser = next((found for name in BROWSERS if (found := shutil.which(name))), None)
    driver = shutil.which("chromedriver")
    if browser is None or driver is None:
        missing = " and ".join(n for n, p in (("chromium", browser), ("chromedriver", driver)) if p is None)
        return f"{missing} not installed (sudo scripts/ensure-browser)"
    return browser, driver


def need_browser() -> tuple[str, str]:
    found = find_browser()
    if isinstance(found, str):
        if REQUIRE_BROWSER:
            pytest.fail(f"CANAL_REQUIRE_BROWSER=1 but {found}")
        pytest.skip(f"{found}; set CANAL_REQUIRE_BROWSER=1 to fail")
    return found


def start_chromium(profile: Path, *, width: int = 1280, height: int = 900) -> webdriver.Chrome:
    """A headless chromium with its own throwaway profile; --no-sandbox only as root (chromium refuses
    to start as root with its sandbox on)."""
    browser, driver = need_browser()
    options = webdriver.ChromeOptions()
    options.binary_location = browser
    args = ["--headless=new", f"--user-data-dir={profile}", f"--window-size={width},{height}",
            "--disable-dev-shm-usage", "--no-first-run", "--no-default-browser-check",
            "--disable-background-networking", "--disable-component-update", "--disable-sync",
            f"--host-resolver-rules=MAP {REBOUND_HOST} 127.0.0.1"]
    if os.geteuid() == 0:
        args.append("--no-sandbox")
    for arg in args:
        options.add_argument(arg)
    profile.mkdir(parents=True, exist_ok=True)
    try:
        return webdriver.Chrome(options=options, service=Service(driver))
    except WebDriverException as exc:
        if REQUIRE_BROWSER:
            raise
        pytest.skip(f"chromium did not start: {exc.msg}")


def add_passkey_authenticator(driver: webdriver.Chrome) -> str:
    """A virtual platform authenticator (CTAP2, internal transport, resident keys, user verification
    that always succeeds): navigator.credentials.create/get answer without a person. Returns its id."""
    options = VirtualAuthenticatorOptions()
    options.protocol = VirtualAuthenticatorOptions.Protocol.CTAP2
    options.transport = VirtualAuthenticatorOptions.Transport.INTERNAL
    options.has_resident_key = True
    options.has_user_verification = True
    options.is_user_verified = True
    options.is_user_consenting = True
    driver.add_virtual_authenticator(options)
    return str(driver.virtual_authenticator_id)


class Shots:
    """Saves a PNG of the page under a name, in the artifacts folder (the same name overwrites)."""

    def __init__(self, driver: webdriver.Chrome, folder: Path) -> None:
        self.driver, self.folder = driver, folder
        self.saved: list[Path] = []

    def __call__(self, name: str) -> Path:
        path = self.folder / f"{name}.png"
        if not self.driver.save_screenshot(str(path)):
            raise AssertionError(f"no screenshot of {self.driver.current_url} saved to {path}")
        self.saved.append(path)
        return path


def wait_for(check: Callable[[], object], timeout: float = 10, what: str = "the page") -> object:
    """Polls check() until it returns something true; fails naming what it waited for."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            found = check()
        except WebDriverException:
            found = None
        if found:
            return found
        if time.monotonic() > deadline:
            raise AssertionError(f"waited {timeout:g} s for {what}")
        time.sleep(0.05)
