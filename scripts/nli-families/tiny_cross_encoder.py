"""Tiny random-weight NLI cross-encoders of each family, and their PyTorch forward.

The modules below are written from the way Hugging Face's modelling code runs these models in eager
mode (BertForSequenceClassification, ElectraForSequenceClassification): learned absolute positions
0..S-1, a segment (token type) embedding added to every token, post-LN encoder layers with exact
GELU, the additive finfo.min attention mask, and the family's head on the first token. DeBERTa-v2/v3
(tiny_deberta_v2.py) and BART (tiny_bart.py) have modules of their own. A model is
exported to ONNX with torch.onnx (as Hugging Face's own exports are made), so todeval's runner can
load it with --model DIR; `forward` then gives the logits todeval's probabilities are checked
against, on token ids the test supplies.

  /usr/bin/python3 tiny_cross_encoder.py build JOB.json
  /usr/bin/python3 tiny_cross_encoder.py forward JOB.json OUT.json

build's JOB.json is a list of models, each {"family": "bert"|"electra"|"deberta-v2"|"bart", "out": DIR, "vocabSize": N,
"padId": P, "labels": "three"|"two", "segments": true|false, "seed": S, "std": X}: each gets
DIR/onnx/model.onnx, DIR/config.json (family, sizes, id2label) and DIR/torch-state.pt (the test
writes tokenizer.json beside them). forward's JOB.json is a list of {"dir": DIR, "rows": [{"ids":
[...], "typeIds": [...]}]}; each row is run alone (no padding) and OUT.json gets, per job, the list
of its rows' logits. One process per step: torch takes seconds to import.
"""
import argparse
import json
import math
import os
import sys
import warnings

warnings.filterwarnings("ignore")

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tiny_bart  # noqa: E402
import tiny_deberta_v2  # noqa: E402

SIZES = dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64, max_position_embeddings=128, type_vocab_size=2)
LABELS = {
    "three": {"0": "entailment", "1": "neutral", "2": "contradiction"},
    "two": {"0": "entailment", "1": "not_entailment"},
}


class Embeddings(nn.Module):
    """word + absolute position + segment embeddings, LayerNorm (BERT; ELECTRA at embedding_size)."""

    def __init__(self, cfg, width):
        super().__init__()
        self.word_embeddings = nn.Embedding(cfg["vocab_size"], width, padding_idx=cfg["pad_token_id"])
        self.position_embeddings = nn.Embedding(cfg["max_position_embeddings"], width)
        self.token_type_embeddings = nn.Embedding(cfg["type_vocab_size"], width)
        self.LayerNorm = nn.LayerNorm(width, eps=cfg["layer_norm_eps"])

    def forward(self, input_ids, token_type_ids):
        seq = input_ids.shape[1]
        positions = torch.arange(seq, dtype=torch.long, device=input_ids.device).unsqueeze(0)
        x = self.word_embeddings(input_ids) + self.token_type_embeddings(token_type_ids) + self.position_embeddings(positions)
        return self.LayerNorm(x)


class Layer(nn.Module):
    """One post-LN encoder layer: self-attention, residual + LayerNorm, GELU feed-forward, residual + LayerNorm."""

    def __init__(self, cfg):
        super().__init__()
        H = cfg["hidden_size"]
        self.heads = cfg["num_attention_heads"]
        self.query = nn.Linear(H, H)
        self.key = nn.Linear(H, H)
        self.value = nn.Linear(H, H)
        self.attention_output = nn.Linear(H, H)
        self.attention_norm = nn.LayerNorm(H, eps=cfg["layer_norm_eps"])
        self.intermediate = nn.Linear(H, cfg["intermediate_size"])
        self.output = nn.Linear(cfg["intermediate_size"], H)
        self.output_norm = nn.LayerNorm(H, eps=cfg["layer_norm_eps"])

    def split(self, x):
        b, s, h = x.shape
        return x.view(b, s, self.heads, h // self.heads).transpose(1, 2)

    def forward(self, h, additive_mask):
        q, k, v = self.split(self.query(h)), self.split(self.key(h)), self.split(self.value(h))
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(q.shape[-1]) + additive_mask
        context = torch.matmul(F.softmax(scores, dim=-1), v).transpose(1, 2).reshape(h.shape)
        a = self.attention_norm(self.attention_output(context) + h)
        return self.output_norm(self.output(F.gelu(self.intermediate(a))) + a)


class CrossEncoder(nn.Module):
    """BertForSequenceClassification (pooler: dense + tanh on [CLS], then a linear classifier) or
    ElectraForSequenceClassification (embeddings at embedding_size projected to the hidden size;
    head on [CLS]: dense, GELU, out_proj)."""

    def __init__(self, cfg):
        super().__init__()
        self.family = cfg["model_type"]
        H = cfg["hidden_size"]
        width = cfg.get("embedding_size", H)
        self.embeddings = Embeddings(cfg, width)
        self.embeddings_project = nn.Linear(width, H) if width != H else None
        self.layers = nn.ModuleList(Layer(cfg) for _ in range(cfg["num_hidden_layers"]))
        self.dense = nn.Linear(H, H)
        self.classifier = nn.Linear(H, len(cfg["id2label"]))

    def forward(self, input_ids, attention_mask, token_type_ids):
        h = self.embeddings(input_ids, token_type_ids)
        if self.embeddings_project is not None:
            h = self.embeddings_project(h)
        additive = (1.0 - attention_mask[:, None, None, :].to(h.dtype)) * torch.finfo(h.dtype).min
        for layer in self.layers:
            h = layer(h, additive)
        first = h[:, 0]
        if self.family == "electra":
            return self.classifier(F.gelu(self.dense(first)))
        return self.classifier(torch.tanh(self.dense(first)))


class WithoutSegments(nn.Module):
    """The same model exported without a token_type_ids input (segment 0 everywhere)."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, input_ids, attention_mask):
        return self.model(input_ids, attention_mask, torch.zeros_like(input_ids))


def build(job):
    a = argparse.Namespace(
        family=job["family"],
        out=job["out"],
        vocab_size=job["vocabSize"],
        pad_id=job["padId"],
        labels=job.get("labels", "three"),
        no_segments=not job.get("segments", True),
        seed=job.get("seed", 7),
        std=job.get("std", 0.3),
    )
    torch.manual_seed(a.seed)
    if a.family == "deberta-v2":
        cfg = tiny_deberta_v2.tiny_config(a.vocab_size, a.pad_id, not a.no_segments)
        margin = tiny_deberta_v2.bucket_margin(cfg["position_buckets"], cfg["max_relative_positions"], cfg["max_position_embeddings"])
        if margin < 1e-4:
            raise SystemExit(f"log buckets {margin} from an integer: onnxruntime and PyTorch could bucket a distance apart")
    elif a.family == "bart":
        cfg = tiny_bart.tiny_config(a.vocab_size, a.pad_id)
    else:
        cfg = dict(SIZES)
        cfg.update(model_type=a.family, vocab_size=a.vocab_size, pad_token_id=a.pad_id, layer_norm_eps=1e-12)
        cfg["architectures"] = ["BertForSequenceClassification" if a.family == "bert" else "ElectraForSequenceClassification"]
        if a.family == "electra":
            cfg["embedding_size"] = 16
    cfg["id2label"] = LABELS[a.labels]
    cfg["label2id"] = {v: int(k) for k, v in cfg["id2label"].items()}
    model = module_for(cfg).eval()
    # Large random weights, so pairs get clearly different probabilities and a wrong segment id shows.
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "norm" in name.lower():
                continue
            p.normal_(0.0, a.std)
    os.makedirs(os.path.join(a.out, "onnx"), exist_ok=True)
    torch.save(model.state_dict(), os.path.join(a.out, "torch-state.pt"))
    with open(os.path.join(a.out, "config.json"), "w") as f:
        json.dump(cfg, f, indent=1)
    ids = torch.full((2, 7), 5, dtype=torch.long)
    mask = torch.ones_like(ids)
    dyn = {0: "batch_size", 1: "sequence_length"}
    if a.family == "bart" or (a.family == "deberta-v2" and a.no_segments):
        # What hub exports of these take (BART never had segments; DeBERTa-v3's type_vocab_size is 0).
        ids[:, 0], ids[:, -1], ids[:, 3] = 0, 2, 2
        args, names = (ids, mask), ["input_ids", "attention_mask"]
        exported = model
    elif a.no_segments:
        args, names = (ids, mask), ["input_ids", "attention_mask"]
        exported = WithoutSegments(model)
    else:
        args, names = (ids, mask, torch.zeros_like(ids)), ["input_ids", "attention_mask", "token_type_ids"]
        exported = model
    torch.onnx.export(
        exported,
        args,
        os.path.join(a.out, "onnx", "model.onnx"),
        input_names=names,
        output_names=["logits"],
        dynamic_axes={**{n: dyn for n in names}, "logits": {0: "batch_size"}},
        opset_version=17,
    )


def forward(job):
    with open(os.path.join(job["dir"], "config.json")) as f:
        cfg = json.load(f)
    model = module_for(cfg).eval()
    model.load_state_dict(torch.load(os.path.join(job["dir"], "torch-state.pt")))
    out = []
    with torch.no_grad():
        for r in job["rows"]:
            ids = torch.tensor([r["ids"]], dtype=torch.long)
            types = torch.tensor([r["typeIds"]], dtype=torch.long)
            if cfg["model_type"] == "bart":
                logits = model(ids, torch.ones_like(ids))
            else:
                logits = model(ids, torch.ones_like(ids), types)
            out.append(logits[0].tolist())
    return out


def module_for(cfg):
    if cfg["model_type"] == "deberta-v2":
        return tiny_deberta_v2.DebertaV2CrossEncoder(cfg)
    if cfg["model_type"] == "bart":
        return tiny_bart.BartCrossEncoder(cfg)
    return CrossEncoder(cfg)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("cmd", choices=["build", "forward"])
    ap.add_argument("job")
    ap.add_argument("out", nargs="?")
    a = ap.parse_args()
    torch.set_num_threads(1)
    with open(a.job) as f:
        jobs = json.load(f)
    if a.cmd == "build":
        for job in jobs:
            build(job)
        return 0
    results = [forward(job) for job in jobs]
    with open(a.out, "w") as f:
        json.dump(results, f)
    return 0


if __name__ == "__main__":
    sys.exit(main())
