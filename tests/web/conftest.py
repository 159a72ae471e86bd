from __future__ import annotations

from collections.abc import Iterator

import pytest

fastapi = pytest.importorskip("fastapi", reason="the web extra is not installed (pip install 'wanka[web]')")


@pytest.fixture(scope="session")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    from fastapi.testclient import TestClient

    from wanka.web import create_app

    db = tmp_path_factory.mktemp("serve") / "runs.db"
    with TestClient(create_app(db), raise_server_exceptions=False) as c:
        yield c
