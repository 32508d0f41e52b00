"""``ragbot ingest`` on bad folders (issue 10 items 1, 6, 7): exit codes, messages, nothing lost."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, cast

import pytest

from bots import control
from bots.runtime import Runtime
from core.ingest.options import IngestOptions
from core.models import IngestSummary
from tests.bots.test_cli import kb, run  # noqa: F401  (kb is a fixture)

SECRET = "SLACK_BOT_TOKEN=placeholder-never-in-chat"


@pytest.fixture
def folders(kb: Path) -> Path:  # noqa: F811 (the fixture, by name)
    """``kb``'s guide (3 pages) plus a link to a secret, an empty folder and a folder of PDFs."""
    tmp_path = kb.parent
    (tmp_path / "secret.env").write_text(SECRET, encoding="utf-8")
    (kb / "deployment-config.md").symlink_to(tmp_path / "secret.env")
    (tmp_path / "empty").mkdir()
    (tmp_path / "exports").mkdir()
    for name in ("a.pdf", "b.pdf", "c.pdf", "d.docx"):
        (tmp_path / "exports" / name).write_bytes(b"%PDF-1.4")
    return tmp_path


def test_empty_and_unsupported_folders_exit_2_and_claim_nothing(
    folders: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(capsys, "ingest", str(folders / "empty"), "--no-progress")
    assert code == 2 and out == ""
    assert err.strip().splitlines() == [
        f"ragbot: error: nothing to ingest in '{folders / 'empty'}': the folder is empty "
        "(hidden files and build folders are not read)"]
    code, _, err = run(capsys, "ingest", str(folders / "exports"), "--no-progress")
    assert code == 2 and "3 .pdf, 1 .docx: not supported" in err and "Traceback" not in err
    assert not (folders / "data" / "ingest-roots.json").exists()
    # The real folder is not refused as "another folder": nothing was claimed.
    code, out, err = run(capsys, "ingest", str(folders / "guide"), "--no-progress")
    assert code == 0, err
    assert "3 files" in out and "deployment-config.md: symbolic link, not followed" in err
    roots = json.loads((folders / "data" / "ingest-roots.json").read_text("utf-8"))
    assert roots == {"ragbot": str(folders / "guide")}
    code, out, _ = run(capsys, "ask", "--json", "what is the SLACK_BOT_TOKEN value?")
    assert "never-in-chat" not in out


def test_an_emptied_folder_is_refused_dry_run_lists_and_prune_removes(
    folders: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    docs = folders / "guide"
    assert run(capsys, "ingest", str(docs), "--no-progress")[0] == 0
    (docs / "install.md").unlink()
    (docs / "slack.md").unlink()
    code, out, err = run(capsys, "ingest", str(docs), "--no-progress")
    assert code == 2 and out == "" and "refusing to remove 2 of 3 chunks (2 of 3 documents)" in err
    code, out, _ = run(capsys, "ingest", str(docs), "--no-progress", "--dry-run")
    assert code == 0 and out.startswith("dry run, nothing written: 1 files: 0 chunks to add")
    assert "  remove install.md (" in out and "  remove slack.md (" in out
    code, out, _ = run(capsys, "ingest", str(docs), "--no-progress", "--prune")
    assert code == 0 and "2 removed" in out


async def test_options_reach_a_running_server_and_its_summary_comes_back(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen: list[IngestOptions] = []

    async def ingest(runtime: object, source: str, **kwargs: Any) -> IngestSummary:
        seen.append(kwargs["options"])
        return IngestSummary(files=1, dry_run=True, changes=["remove old.md (2 chunks)"],
                             files_skipped=["users.txt: symbolic link, not followed"])

    monkeypatch.setattr(control, "ingest", ingest)
    options = IngestOptions(follow_symlinks=True, prune=False, dry_run=True)
    reply = await control.handle_request(cast(Runtime, object()), {
        "op": "ingest", "source": "/docs", "options": options.as_request()})
    assert seen == [options]
    summary = IngestSummary.model_validate(json.loads(json.dumps(reply["summary"])))
    assert summary.dry_run and summary.changes == ["remove old.md (2 chunks)"] and summary.files_skipped
    assert IngestOptions.from_request(None) == IngestOptions() == IngestOptions.from_request({"bogus": 1})


def test_ignore_files_leave_out_what_they_name_and_the_summary_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("RAGBOT_DATA_DIR", str(tmp_path / "data"))
    docs = tmp_path / "docs"
    for name in ("guide.md", "agent-context/tools.md", "notes.draft.md", "api/keys.md", "api/internal.md"):
        (docs / name).parent.mkdir(parents=True, exist_ok=True)
        (docs / name).write_text(f"# {name}\n\nText about rotating keys in {name}.\n", encoding="utf-8")
    (docs / ".mintignore").write_text("# not published\nagent-context/\n*.draft.md\n", encoding="utf-8")
    (docs / "api" / ".ragbotignore").write_text("!\n[z-a].md\ninternal.md\n", encoding="utf-8")  # 2 bad lines
    code, out, err = run(capsys, "ingest", str(docs), "--no-progress")
    assert code == 0 and out.startswith("2 files"), (out, err)
    assert ("note: 3 left out as .ragbotignore or .mintignore says: agent-context/, notes.draft.md, "
            "api/internal.md") in err
    (docs / ".mintignore").write_text("*.draft.md\n", encoding="utf-8")  # published again: read again
    code, out, _ = run(capsys, "ingest", str(docs), "--no-progress")
    assert code == 0 and out.startswith("3 files")
