"""Headless Chromium for the HTML tests: Debian's chromium driven by Playwright (which
downloads no browser of its own); a module using it is skipped where either is missing."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from typing import Any

import pytest

#: the bundled banks every HTML test opens
BANKS = ("default", "note", "practice", "slips", "quiz")
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
needs_chromium = pytest.mark.skipif(
    CHROMIUM is None, reason="needs Debian's chromium (apt-get install chromium)"
)


def launched() -> Iterator[Any]:
    """A headless Chromium for a module's tests (a fixture's body), closed after them."""
    playwright = pytest.importorskip("playwright.sync_api")
    with playwright.sync_playwright() as p:
        chromium = p.chromium.launch(
            executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"]
        )
        yield chromium
        chromium.close()
