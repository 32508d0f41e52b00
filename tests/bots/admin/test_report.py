"""The HTML report: self-contained, escaped, and rendered by a real browser where Chromium is installed."""

from __future__ import annotations

import re
import shutil
import subprocess
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from bots.admin.gaps import group_unanswered, normalise
from bots.admin.report import render_html
from bots.admin.stats import gather


async def test_report_is_self_contained_and_escaped(big_db: Path, tmp_path: Path) -> None:
    now = datetime.now(UTC)
    stats = await gather(big_db / "ragbot.sqlite3", since=now - timedelta(days=15), until=now)
    stats.thumbs_down.append({"when": now.isoformat(), "platform": "slack", "query_id": "q1",
                              "question": "<script>alert(1)</script>", "status": "answered", "answer": "a&b"})
    page = render_html(stats)
    assert page.count("<svg") == 3
    assert "<script>alert(1)</script>" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert not re.search(r"<(script|link|img|iframe)\b", page), "the page must load nothing"
    references = set(re.findall(r"""(?:src|href)=["']?(https?://[^"' >]+)""", page))
    assert references <= {u for u, _, _ in stats.top_pages}, "only the cited pages' own links"


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")


@pytest.mark.skipif(CHROMIUM is None, reason="Chromium is not installed (apt-get install chromium)")
def test_report_renders_in_chromium(big_db: Path, tmp_path: Path) -> None:
    import asyncio

    now = datetime.now(UTC)
    page = tmp_path / "report.html"
    stats = asyncio.run(gather(big_db / "ragbot.sqlite3", since=now - timedelta(days=15), until=now))
    page.write_text(render_html(stats), encoding="utf-8")
    shot = tmp_path / "report.png"
    assert CHROMIUM is not None
    done = subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                           f"--user-data-dir={tmp_path / 'profile'}", "--window-size=1280,1600",
                           f"--screenshot={shot}", page.as_uri()],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-500:]
    data = shot.read_bytes()
    assert data.startswith(b"\x89PNG") and len(data) > 50_000  # charts and tables, not a blank page
    dump = subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu",
                           f"--user-data-dir={tmp_path / 'profile'}", "--dump-dom", page.as_uri()],
                          capture_output=True, text=True, timeout=120, check=False)
    assert "Coverage gaps" in dump.stdout and dump.stdout.count("<svg") == 3


def test_gaps_group_wordings_and_merge_repeats() -> None:
    asked = ["how do I install on windows?", "windows installation steps", "How do I install on Windows",
             "<@U1> pricing", "what is the price of ragbot", "how to deploy on kubernetes",
             "kubernetes deployment", "what is the meaning of life"]
    gaps = group_unanswered([(q, f"2026-11-0{i + 1}T00:00:00Z") for i, q in enumerate(asked)])
    by_question = {g.question: g for g in gaps}
    windows = by_question["how do I install on windows?"]
    assert windows.count == 3 and windows.variants == ["windows installation steps"]
    assert {g.count for g in gaps if "kubernetes" in g.question} == {2}
    assert "pricing" in by_question  # shown without the mention it was asked with
    assert by_question["what is the meaning of life"].count == 1
    assert normalise("<@U1>  Pricing?! ") == "pricing"
    assert group_unanswered([]) == []
