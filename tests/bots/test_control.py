"""Issue 10 items 2, 3 and 12: the control socket, the data folder's modes, a hand-off that is lost."""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import stat
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import cast

import pytest

from bots import control
from bots.control import call, peer_uid, ping, serve_control
from bots.runtime import Runtime
from core.private import PrivateLogHandler, open_private, private_dir, private_file
from tests.bots.test_cli import kb, run  # noqa: F401  (kb is a fixture)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@contextlib.contextmanager
def umask(value: int) -> Iterator[None]:
    old = os.umask(value)
    try:
        yield
    finally:
        os.umask(old)


async def test_control_socket_is_0600_under_umask_000(tmp_path: Path) -> None:
    path = tmp_path / "ragbot.sock"
    with umask(0):
        server = await serve_control(cast(Runtime, object()), path)
    try:
        assert mode(path) == 0o600
        assert await ping(path)
    finally:
        await server.aclose()
    assert not path.exists()


async def test_another_users_connection_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                   caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "ragbot.sock"
    server = await serve_control(cast(Runtime, object()), path)
    try:
        monkeypatch.setattr(control, "peer_uid", lambda sock: os.getuid() + 4242)
        reply = await call(path, {"op": "ingest", "source": "/root/secret.md"})
        assert reply is not None and not reply["ok"] and reply["exit_code"] == 2
        assert "permission denied" in reply["error"]
        assert not await ping(path)
        assert any("refused a control connection from uid" in r.getMessage() for r in caplog.records)
    finally:
        await server.aclose()


def test_peer_uid_reads_the_real_peer() -> None:
    left, right = socket.socketpair(socket.AF_UNIX)
    with left, right:
        assert peer_uid(left) == os.getuid()
    assert control.peer_allowed(os.getuid()) and control.peer_allowed(0)
    assert not control.peer_allowed(os.getuid() + 1) or os.getuid() + 1 == 0


@contextlib.contextmanager
def dying_server(path: Path) -> Iterator[list[bytes]]:
    """A 'ragbot serve' that takes one request and dies without replying."""
    received: list[bytes] = []
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(str(path))
    listener.listen(4)

    def serve() -> None:
        with contextlib.suppress(OSError):
            while True:
                conn, _ = listener.accept()
                with conn:
                    data = conn.recv(65536)
                    received.append(data)
                    if b'"ping"' in data:
                        conn.sendall(b'{"ok": true}\n')

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield received
    finally:
        with contextlib.suppress(OSError):
            listener.shutdown(socket.SHUT_RDWR)  # wakes the accept() above
        listener.close()
        thread.join(5)


def test_ingest_does_not_rerun_locally_when_the_server_died_mid_hand_off(
    kb: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]  # noqa: F811
) -> None:
    data = tmp_path / "data"
    data.mkdir()
    with dying_server(data / "ragbot.sock") as received:
        code, out, err = run(capsys, "ingest", str(kb), "--no-progress")
    assert code == 1
    assert "stopped before it finished the ingest" in err and "whether the ingest was done is unknown" in err
    assert "Traceback" not in err and not out
    assert any(b'"op": "ingest"' in r for r in received)
    assert not (data / "qdrant").exists()  # nothing was ingested locally behind the user's back


def test_data_folder_and_what_is_in_it_are_private_whatever_the_umask(
    kb: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]  # noqa: F811
) -> None:
    data = tmp_path / "data"
    with umask(0):
        assert run(capsys, "ingest", str(kb), "--no-progress")[0] == 0
        assert run(capsys, "ask", "how do I install ragbot?")[0] == 0
        assert run(capsys, "logs", "export", "-o", str(tmp_path / "export.jsonl"))[0] == 0
    assert mode(data) == 0o700
    for name in ("ragbot.sqlite3", "ragbot.sqlite3-wal", "ragbot.sqlite3-shm", "ragbot.log"):
        if (data / name).exists() or name in ("ragbot.sqlite3", "ragbot.log"):
            assert mode(data / name) == 0o600, name
    assert mode(tmp_path / "export.jsonl") == 0o600


def test_an_install_made_under_a_wide_umask_is_narrowed_on_the_next_run(
    kb: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]  # noqa: F811
) -> None:
    data = tmp_path / "data"
    run(capsys, "ingest", str(kb), "--no-progress")
    os.chmod(data, 0o755)
    for name in ("ragbot.sqlite3", "ragbot.log"):
        os.chmod(data / name, 0o644)
    assert run(capsys, "logs", "export")[0] == 0
    assert mode(data) == 0o700
    assert mode(data / "ragbot.sqlite3") == 0o600 and mode(data / "ragbot.log") == 0o600


def test_private_helpers_leave_shared_folders_and_devices_alone(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o1777)
    private_dir(shared)
    assert mode(shared) == 0o1777  # a sticky shared folder such as /tmp is not ours to narrow
    with umask(0):
        private_file(tmp_path / "new")
        assert mode(tmp_path / "new") == 0o600
        with open_private(tmp_path / "out.txt", "w") as out:
            out.write("x")
        assert mode(tmp_path / "out.txt") == 0o600
    with open_private(Path(os.devnull), "w") as out:
        out.write("x")
    assert mode(Path(os.devnull)) == 0o666


def test_the_log_file_rotates_and_every_file_stays_private(tmp_path: Path) -> None:
    handler = PrivateLogHandler(tmp_path / "ragbot.log", max_bytes=2000, backups=2)
    logger = logging.getLogger("test.rotation")
    logger.propagate = False
    logger.addHandler(handler)
    try:
        with umask(0):
            for i in range(200):
                logger.warning("line %d %s", i, "x" * 50)
    finally:
        logger.removeHandler(handler)
        handler.close()
    files = sorted(p.name for p in tmp_path.iterdir())
    assert files == ["ragbot.log", "ragbot.log.1", "ragbot.log.2"]
    assert all(mode(tmp_path / f) == 0o600 for f in files)
    assert all((tmp_path / f).stat().st_size <= 2100 for f in files)
