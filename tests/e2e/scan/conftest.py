"""What the scan tests share: the bundled quiz built as one scannable sheet."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.scan.builds import build_folder


@pytest.fixture(scope="module")
def quiz(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_folder(tmp_path_factory.mktemp("quiz"), "--scannable")
