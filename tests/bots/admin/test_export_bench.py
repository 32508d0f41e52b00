"""bench/export.py runs and keeps ragbot's exports under the 100 MB peak-RSS goal (slow: `make bench`)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.support.paths import ROOT


@pytest.mark.slow
def test_export_benchmark_small_run() -> None:
    done = subprocess.run([sys.executable, str(ROOT / "bench" / "export.py"), "--rows", "50000", "--json"],
                          capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr
    results = json.loads(done.stdout.splitlines()[-1])
    ragbot = [r for r in results if r["exporter"].startswith("ragbot")]
    assert len(ragbot) == 2 and all(r["peak_rss_mb"] <= 100 for r in ragbot)
    assert all(r["rows"] == 50000 for r in results)
