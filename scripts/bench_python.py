"""
npm run bench:python: the Python package's Evaluator, warm (one todeval process for the object's
life) against one CLI run per call, on DAMD's predictions: the first call, one dialogue after
warm-up, and the 1,000 dialogues with all four metrics. Prints the figures side by side with their
ratio and the load average, which on a shared machine says more about them than anything else.

    npm run bench:python [-- --repeat 5]
"""

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
import warnings
from pathlib import Path
from typing import Callable, List

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "python"))

from todeval import TodevalWarning  # noqa: E402
from todeval.mwzeval import Evaluator  # noqa: E402

DATA = Path(os.environ.get("TODEVAL_DATA") or REPO.parent / "shared" / "data")
DAMD = DATA / "multiwoz" / "predictions" / "damd.json"


def timed(fn: Callable[[], object], repeat: int) -> List[float]:
    out = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        out.append(time.perf_counter() - start)
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=5, help="runs per figure (the median is printed)")
    repeat = parser.parse_args().repeat
    if not DAMD.is_file():
        sys.exit(f"bench:python: {DAMD} not found: set TODEVAL_DATA to the data dir")
    warnings.simplefilter("ignore", TodevalWarning)  # DAMD's off-ontology slots, once per call
    predictions = json.loads(DAMD.read_text(encoding="utf-8"))
    first_id = next(iter(predictions))
    with tempfile.TemporaryDirectory(prefix="todeval-bench-python-") as tmp:
        one = Path(tmp) / "one.json"
        one.write_text(json.dumps({first_id: predictions[first_id]}), encoding="utf-8")
        metrics = dict(bleu=True, success=True, richness=True, dst=True, data_dir=str(DATA))
        load_before = os.getloadavg()

        cold = Evaluator(**metrics, warm=False)
        # Not counted: puts the files (ground-truth cache, database, code) in the page cache, so
        # that neither first call below pays for the disk and the other not.
        cold.evaluate(str(one))
        first_cold = timed(lambda: cold.evaluate(str(one)), 1)[0]
        with Evaluator(**metrics) as warm:
            first_warm = timed(lambda: warm.evaluate(str(one)), 1)[0]  # starts the process
            one_warm = timed(lambda: warm.evaluate(str(one)), repeat * 2)
            one_cold = timed(lambda: cold.evaluate(str(one)), repeat)
            all_warm = timed(lambda: warm.evaluate(str(DAMD)), repeat)
            all_cold = timed(lambda: cold.evaluate(str(DAMD)), repeat)
            same = warm.evaluate(str(DAMD)).report == cold.evaluate(str(DAMD)).report
        load_after = os.getloadavg()

    med = statistics.median
    rows = [
        ("first call (starts Node)", first_cold, first_warm),
        ("one dialogue, after the first call", med(one_cold), med(one_warm)),
        ("1,000 dialogues x 4 metrics", med(all_cold), med(all_warm)),
    ]
    print(f"Evaluator(bleu, success, richness, dst) on {DAMD.name}; median of {repeat} runs ({repeat * 2} for one dialogue warm)")
    print(f"{'':38} {'one run per call':>17} {'warm':>9} {'ratio':>7}")
    for name, c, w in rows:
        print(f"{name:38} {c:16.3f}s {w:8.3f}s {c / w:6.2f}x")
    print(f"warm and one-shot reports identical: {same}")
    print(f"load average (1, 5, 15 min): before {', '.join(f'{x:.2f}' for x in load_before)}; after {', '.join(f'{x:.2f}' for x in load_after)} on {os.cpu_count()} CPUs")


if __name__ == "__main__":
    main()
