"""
A generation loop that keeps, per turn, the most faithful of the candidates of two models, reranked
by `todeval serve` (one shared, batched NLI model for every worker that calls it).

    todeval serve &                                   # http://127.0.0.1:8765
    PYTHONPATH=python python3 examples/python/generation_loop.py

TODEVAL_URL and TODEVAL_TOKEN name another server. The two models are stubbed by fixed lists so
that this runs anywhere; `generate` below says where your models go.
"""

import json
import os
from typing import Dict, List, Tuple

from todeval.client import Client

NUM_RETURN_SEQUENCES = 3

# Stand-ins for two models: per turn, NUM_RETURN_SEQUENCES (text, sequence log-likelihood) pairs.
FIXED_OUTPUTS: Dict[str, Dict[str, List[Tuple[str, float]]]] = {
    "model-a": {
        "turn-0": [("Shall I set an alarm for 7 am?", -2.1), ("An alarm, then.", -1.2), ("Okay.", -0.4)],
        "turn-1": [("Sure.", -0.6), ("Please confirm: an alarm at 6:30 am.", -2.4), ("Alarm set.", -1.0)],
        "turn-2": [("Noted.", -0.5), ("One moment.", -0.9), ("Is that all?", -1.1)],
    },
    "model-b": {
        "turn-0": [("Okay.", -0.5), ("Anything else?", -1.3), ("Sure thing.", -0.8)],
        "turn-1": [("Setting it now.", -0.9), ("Done.", -0.4), ("Right away.", -1.0)],
        "turn-2": [("Do you want the alarm at 8:45 am?", -2.0), ("Alright.", -0.6), ("Got it.", -0.7)],
    },
}


def generate(model: str, turn: Dict[str, str], num_return_sequences: int) -> List[Tuple[str, float]]:
    """
    Candidates of one model for one turn: (text, sequence log-likelihood). With Hugging Face:

        out = model.generate(**inputs, do_sample=True, num_return_sequences=n,
                             return_dict_in_generate=True, output_scores=True)
        texts = tokenizer.batch_decode(out.sequences[:, inputs["input_ids"].shape[1]:], skip_special_tokens=True)
        scores = model.compute_transition_scores(out.sequences, out.scores, normalize_logits=True).sum(-1)
        return list(zip(texts, scores.tolist()))
    """
    return FIXED_OUTPUTS[model][turn["id"]][:num_return_sequences]


def main() -> None:
    client = Client(os.environ.get("TODEVAL_URL", "http://127.0.0.1:8765"), os.environ.get("TODEVAL_TOKEN"))
    turns = [{"id": f"turn-{i}", "time": t} for i, t in enumerate(["7 am", "6:30 am", "8:45 am"])]
    # One request for the whole batch of turns (the client splits it to the server's --max-items).
    items = []
    for turn in turns:
        candidates = []
        for model in ("model-a", "model-b"):
            for k, (text, likelihood) in enumerate(generate(model, turn, NUM_RETURN_SEQUENCES)):
                candidates.append({"system": f"{model}/{k}", "text": text, "likelihood": likelihood})
        items.append({
            "id": turn["id"],
            "service": "Alarm_1",
            "context": "I need an alarm for tomorrow morning.",  # the user turn before (premise of the context retry)
            "actions": [{"act": "CONFIRM", "slot": "new_alarm_time", "values": [turn["time"]]}],
            "candidates": candidates,
        })
    for result in client.rerank(items):
        chosen = result["chosen"]
        print(json.dumps({
            "id": result["id"],
            "chosen": {"system": chosen["system"], "text": chosen["text"], "fidelity": chosen["fidelity"]},
            "fidelity": [c["fidelity"] for c in result["candidates"]],
        }))


if __name__ == "__main__":
    main()
