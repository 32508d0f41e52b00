"""Issue 10 item 12: a second `ragbot ask` waits for the process holding the knowledge base, then answers.

qdrant-edge's lock between processes ("WouldBlock") cannot be made reliably here (this engine
build on this file system does not take it), so the locked open is injected.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from core.errors import StoreUnavailableError
from core.stores import qdrant_embedded
from tests.bots.test_cli import kb, run  # noqa: F401  (kb is a fixture)


def locked_for(monkeypatch: pytest.MonkeyPatch, calls: int) -> list[int]:
    """The first ``calls`` opens of the knowledge base fail as when another process holds it."""
    real = qdrant_embedded.EdgeVectorStore.collection_info
    seen = [0]

    async def collection_info(self: Any, name: str) -> Any:
        seen[0] += 1
        if seen[0] <= calls:
            try:
                raise OSError("Resource temporarily unavailable: WouldBlock")
            except OSError as exc:
                raise StoreUnavailableError("the knowledge base is open in another ragbot process") from exc
        return await real(self, name)

    monkeypatch.setattr(qdrant_embedded.EdgeVectorStore, "collection_info", collection_info)
    return seen


def test_ask_waits_for_the_other_process_then_answers(
    kb: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch  # noqa: F811
) -> None:
    assert run(capsys, "ingest", str(kb), "--no-progress")[0] == 0
    seen = locked_for(monkeypatch, 3)
    code, out, err = run(capsys, "ask", "--json", "how do I install ragbot?")
    assert code == 0, err
    assert err.count("waiting up to 60 s") == 1 and json.loads(out)["status"] == "answered"
    assert seen[0] >= 4


def test_ask_gives_up_after_the_wait_with_a_clear_message(
    kb: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch  # noqa: F811
) -> None:
    assert run(capsys, "ingest", str(kb), "--no-progress")[0] == 0
    monkeypatch.setenv("RAGBOT_STORE_WAIT", "1")
    locked_for(monkeypatch, 1000)
    code, _, err = run(capsys, "ask", "how do I install ragbot?")
    assert code == 1 and "still in use by another ragbot process after 1 s" in err
    assert "Traceback" not in err


def test_other_store_failures_are_not_waited_on(
    kb: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch  # noqa: F811
) -> None:
    assert run(capsys, "ingest", str(kb), "--no-progress")[0] == 0

    async def damaged(self: Any, name: str) -> Any:
        raise StoreUnavailableError("the knowledge base looks damaged")

    monkeypatch.setattr(qdrant_embedded.EdgeVectorStore, "collection_info", damaged)
    code, _, err = run(capsys, "ask", "how do I install ragbot?")
    assert code == 1 and "damaged" in err and "waiting" not in err
