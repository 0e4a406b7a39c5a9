"""
A training loop that reports mwzeval's numbers every epoch, computed by todeval: the only change
from an mwzeval loop is the import.

    PYTHONPATH=python python3 examples/python/epoch_loop.py --epochs 2

The model is a stand-in: at epoch k it "predicts" the responses of the k-th published system in
<data>/multiwoz/predictions (damd, hdsa, ...), so the loop runs without a GPU or a checkpoint.
Put your model's predictions where `predict` is called.
"""

import argparse
import json
import os
import sys
from pathlib import Path

from todeval.mwzeval import Evaluator  # was: from mwzeval.metrics import Evaluator


class StandInModel:
    """Answers every test dialogue with a published system's responses, one system per epoch."""

    def __init__(self, predictions_dir: Path):
        self.files = sorted(predictions_dir.glob("*.json"))
        if not self.files:
            sys.exit(f"epoch_loop: no predictions in {predictions_dir}")
        self.epoch = 0

    def train_one_epoch(self) -> str:
        """Loads the next system's responses; returns its name."""
        file = self.files[self.epoch % len(self.files)]
        self.epoch += 1
        self.current = json.loads(file.read_text(encoding="utf-8"))
        return file.stem

    def predict(self, dialog_id: str) -> list:
        return self.current[dialog_id]


def main() -> None:
    data = Path(os.environ.get("TODEVAL_DATA", "../shared/data"))
    parser = argparse.ArgumentParser(description="mwzeval numbers per epoch, computed by todeval")
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--data-dir", type=Path, default=data, help="todeval's data dir (default $TODEVAL_DATA or ../shared/data)")
    args = parser.parse_args()

    model = StandInModel(args.data_dir / "multiwoz" / "predictions")
    # As in mwzeval: one Evaluator for the whole run (todeval caches the ground truth on disk).
    e = Evaluator(bleu=True, success=True, richness=True, data_dir=args.data_dir)
    for epoch in range(1, args.epochs + 1):
        stand_in = model.train_one_epoch()
        my_predictions = {}
        for dialog_id in model.current:  # your test-set loop
            my_predictions[dialog_id] = model.predict(dialog_id)
        results = e.evaluate(my_predictions)
        print(json.dumps({
            "epoch": epoch,
            "stand_in": stand_in,
            "bleu": results["bleu"],
            "inform": results["success"]["inform"]["total"],
            "success": results["success"]["success"]["total"],
            "richness": results["richness"],
        }))


if __name__ == "__main__":
    main()
