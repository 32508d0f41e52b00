"""Where the repository and the shared data sets are, from any test folder."""

from pathlib import Path

#: The checkout's root (the folder holding ``pyproject.toml``).
ROOT = Path(__file__).resolve().parents[2]
#: ``../shared/data`` beside the checkout; tests that need it skip when it is absent.
SHARED_DATA = ROOT.parent / "shared" / "data"
#: Files the tests read (grounding cases ...).
TEST_DATA = ROOT / "tests" / "data"
