"""Every admin and exporting command: one line on a broken data dir, a missing store, a locked database
or a bad argument, never a traceback; ``| head -1`` on an exporting command exits cleanly."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from bots.cli import main

COMMANDS = [["stats"], ["stats", "--json"], ["logs", "show", "abcdef123456"], ["logs", "export"],
            ["feedback", "export"], ["logs", "purge", "--older-than", "90d"]]


def one_line(capsys: pytest.CaptureFixture[str], argv: list[str]) -> tuple[int, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    return code, lines[0]


@pytest.mark.parametrize("argv", COMMANDS, ids=" ".join)
def test_broken_data_dir(argv: list[str], admin_env: pytest.MonkeyPatch, tmp_path: Path,
                         capsys: pytest.CaptureFixture[str]) -> None:
    not_a_folder = tmp_path / "file"
    not_a_folder.write_text("x")
    admin_env.setenv("RAGBOT_DATA_DIR", str(not_a_folder))
    code, line = one_line(capsys, argv)
    assert code == 2 and line.startswith("ragbot: error:") and str(not_a_folder) in line


@pytest.mark.parametrize("argv", COMMANDS, ids=" ".join)
def test_missing_store(argv: list[str], admin_env: pytest.MonkeyPatch, tmp_path: Path,
                       capsys: pytest.CaptureFixture[str]) -> None:
    admin_env.setenv("RAGBOT_DATA_DIR", str(tmp_path / "empty"))
    code, line = one_line(capsys, argv)
    assert code == 2 and ("no database yet" in line or "no activity log yet" in line)


@pytest.mark.parametrize("argv", COMMANDS, ids=" ".join)
def test_locked_database(argv: list[str], big_db: Path, admin_env: pytest.MonkeyPatch, tmp_path: Path,
                         capsys: pytest.CaptureFixture[str]) -> None:
    data = tmp_path / "data"
    data.mkdir()
    source, copy = sqlite3.connect(big_db / "ragbot.sqlite3"), sqlite3.connect(data / "ragbot.sqlite3")
    source.backup(copy)
    source.close()
    copy.close()
    admin_env.setattr("storage.base.BUSY_TIMEOUT_MS", 50)
    admin_env.setenv("RAGBOT_DATA_DIR", str(data))
    holder = sqlite3.connect(data / "ragbot.sqlite3", isolation_level=None)
    holder.execute("PRAGMA journal_mode=DELETE")
    holder.execute("BEGIN EXCLUSIVE")  # another process writing, for longer than the busy timeout
    try:
        code, line = one_line(capsys, argv)
    finally:
        holder.rollback()
        holder.close()
    assert code == 1 and "locked" in line and "details in" in line


@pytest.mark.parametrize("argv", [["stats", "--since", "yesterday"], ["stats", "--top", "0"],
                                  ["stats", "--since", "1d", "--until", "2d"],
                                  ["logs", "purge", "--older-than", "2999-01-01"],
                                  ["logs", "purge"], ["feedback", "export", "--format", "xml"],
                                  ["logs", "export", "--since", "soon"]], ids=" ".join)
def test_bad_argument(argv: list[str], big_db: Path, admin_env: pytest.MonkeyPatch,
                      capsys: pytest.CaptureFixture[str]) -> None:
    admin_env.setenv("RAGBOT_DATA_DIR", str(big_db))
    try:
        code, line = one_line(capsys, argv)
    except SystemExit as exc:  # argparse's own refusals: exit 2, one line
        code = int(exc.code or 0)
        line = capsys.readouterr().err.strip()
        assert "\n" not in line
    assert code == 2 and line.startswith("ragbot: error:")


def test_doctor_reports_each_problem_as_a_failed_check(admin_env: pytest.MonkeyPatch, tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    admin_env.setenv("RAGBOT_DATA_DIR", str(tmp_path / "empty"))
    assert main(["doctor"]) == 1
    out = capsys.readouterr().out
    assert "FAIL vector store   collection 'ragbot' does not exist  -> fix: ragbot ingest PATH" in out
    admin_env.setenv("RAGBOT_TOP_K", "99")  # settings that cannot be read: still one check line
    assert main(["doctor"]) == 1
    out = capsys.readouterr().out.strip()
    assert out.startswith("FAIL settings") and "RAGBOT_TOP_K" in out and "\n" not in out


@pytest.mark.parametrize("argv", [["logs", "export"], ["logs", "export", "--format", "csv"],
                                  ["feedback", "export"]], ids=" ".join)
def test_head_1_exits_cleanly(argv: list[str], big_db: Path, tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAGBOT_")}
    env["RAGBOT_DATA_DIR"] = str(big_db)
    shell = f"{sys.executable} -m bots.cli {' '.join(argv)} | head -1; exit ${{PIPESTATUS[0]}}"
    done = subprocess.run(["bash", "-c", shell], env=env, cwd=tmp_path, capture_output=True, text=True,
                          timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert len(done.stdout.splitlines()) == 1 and done.stderr == ""
