"""What the Python tests share: where the checkout, the data and the servers are, and the CLI run directly."""

import json
import os
import shutil
import subprocess
import unittest
from pathlib import Path
from typing import Any, Dict, List

REPO = Path(__file__).resolve().parents[2]
# The data dir as todeval's tests find it: $TODEVAL_DATA, else ../shared/data beside the checkout.
DATA = Path(os.environ.get("TODEVAL_DATA") or str(REPO.parent / "shared" / "data"))
PREDICTIONS = DATA / "multiwoz" / "predictions"
SYSTEMS = ("damd", "hdsa", "augpt", "uniconv", "lava")

#: Set by test/python-package.test.ts, which starts the servers (`node bin/todeval.js serve`).
SERVER_URL = os.environ.get("TODEVAL_TEST_URL")
SERVER_TOKEN = os.environ.get("TODEVAL_TEST_TOKEN")
OVERLOAD_URL = os.environ.get("TODEVAL_TEST_OVERLOAD_URL")
#: A server with todeval serve's default limits (1 MiB bodies, 64 items), for the large-body tests.
BIG_URL = os.environ.get("TODEVAL_TEST_BIG_URL")
OVERLOAD_PENDING = int(os.environ.get("TODEVAL_TEST_OVERLOAD_PENDING", "0"))
MODEL = os.environ.get("TODEVAL_TEST_MODEL")

needs_data = unittest.skipUnless(
    all((PREDICTIONS / f"{s}.json").is_file() for s in SYSTEMS),
    f"{PREDICTIONS} lacks the five systems' predictions: set TODEVAL_DATA to the data dir",
)
needs_server = unittest.skipUnless(SERVER_URL and OVERLOAD_URL, "no live server: npm test (test/python-package.test.ts) sets TODEVAL_TEST_URL and TODEVAL_TEST_OVERLOAD_URL")
needs_big_server = unittest.skipUnless(BIG_URL, "no live server with the default limits: npm test (test/python-package.test.ts) sets TODEVAL_TEST_BIG_URL")
needs_model = unittest.skipUnless(MODEL, "no NLI model: npm test (test/python-package.test.ts) sets TODEVAL_TEST_MODEL to the lexical stand-in")


def cli_argv() -> List[str]:
    """The CLI the tests compare with, run directly (not through the package): $TODEVAL_BIN or this checkout's."""
    entry = os.environ.get("TODEVAL_BIN") or str(REPO / "bin" / "todeval.js")
    return [shutil.which("node") or "node", entry] if entry.endswith(".js") else [entry]


def cli_json(*args: str) -> Dict[str, Any]:
    """`todeval ARGS` (printing JSON), asserted to succeed."""
    done = subprocess.run(cli_argv() + list(args), capture_output=True, text=True, stdin=subprocess.DEVNULL)
    if done.returncode != 0:
        raise AssertionError(f"todeval {' '.join(args)} exited {done.returncode}: {done.stderr}")
    return json.loads(done.stdout)


def load_predictions(system: str) -> Dict[str, Any]:
    return json.loads((PREDICTIONS / f"{system}.json").read_text(encoding="utf-8"))
