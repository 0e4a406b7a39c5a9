#!/usr/bin/env python3
"""The PyTorch peer on the GPU: Hugging Face transformers RobertaForSequenceClassification with the
roberta-large-mnli config and random weights (random weights cost what real ones cost), SDPA
attention, fp32 and fp16, timed on the very token ids bench:nli timed (its --dump-ids file),
length-sorted and batched under the same padded-token budgets, padding and host-to-device copies
inside the clock. Also measures the GPU's dense matmul rate, the roofline's other number.

  python3 gpu/peer_torch.py --config DIR --ids ids.json [--budgets 8192,32768] [--batch-size 1024]
      [--dtypes fp32,fp16] [--json out.json]
"""
import argparse
import json
import time

import torch
from transformers import RobertaConfig, RobertaForSequenceClassification


def matmul_tflops(dtype, n=8192, reps=20):
    a = torch.randn(n, n, device="cuda", dtype=dtype)
    b = torch.randn(n, n, device="cuda", dtype=dtype)
    for _ in range(3):
        a @ b
    torch.cuda.synchronize()
    t = time.perf_counter()
    for _ in range(reps):
        a @ b
    torch.cuda.synchronize()
    return 2 * n**3 * reps / (time.perf_counter() - t) / 1e12


def batches(lengths, budget, max_rows):
    """Length-sorted runs of rows whose padded size (rows x longest) fits the budget."""
    order = sorted(range(len(lengths)), key=lambda i: lengths[i])
    out, cur = [], []
    for i in order:
        longest = max([lengths[j] for j in cur] + [lengths[i]])
        if cur and (len(cur) + 1 > max_rows or (len(cur) + 1) * longest > budget):
            out.append(cur)
            cur = []
        cur.append(i)
    if cur:
        out.append(cur)
    return out


def run(model, ids, pad_id, plan, device):
    logits = [None] * len(ids)
    for rows in plan:
        width = max(len(ids[i]) for i in rows)
        x = torch.full((len(rows), width), pad_id, dtype=torch.long)
        m = torch.zeros((len(rows), width), dtype=torch.long)
        for r, i in enumerate(rows):
            x[r, : len(ids[i])] = torch.tensor(ids[i])
            m[r, : len(ids[i])] = 1
        out = model(input_ids=x.to(device, non_blocking=True), attention_mask=m.to(device, non_blocking=True)).logits
        res = out.float().cpu()
        for r, i in enumerate(rows):
            logits[i] = res[r]
    return logits


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--config", required=True, help="directory with config.json")
    ap.add_argument("--ids", required=True)
    ap.add_argument("--budgets", default="8192,16384,32768,65536")
    ap.add_argument("--batch-size", type=int, default=1024)
    ap.add_argument("--dtypes", default="fp32,fp16")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--json")
    a = ap.parse_args()

    data = json.load(open(a.ids))
    ids, pad_id = data["ids"], data["padId"]
    lengths = [len(r) for r in ids]
    cfg = RobertaConfig.from_pretrained(a.config)
    torch.manual_seed(0)
    dev = torch.device("cuda")
    result = {
        "torch": torch.__version__,
        "gpu": torch.cuda.get_device_name(0),
        "pairs": len(ids),
        "meanTokens": sum(lengths) / len(lengths),
        "matmulTflops": {"fp16": matmul_tflops(torch.float16), "fp32_no_tf32": None, "tf32": None},
        "figures": [],
    }
    torch.backends.cuda.matmul.allow_tf32 = False
    result["matmulTflops"]["fp32_no_tf32"] = matmul_tflops(torch.float32, reps=5)
    torch.backends.cuda.matmul.allow_tf32 = True
    result["matmulTflops"]["tf32"] = matmul_tflops(torch.float32, reps=10)
    torch.backends.cuda.matmul.allow_tf32 = False
    print(f"peer: torch {torch.__version__} on {result['gpu']}; dense matmul 8192^3: fp16 {result['matmulTflops']['fp16']:.0f} TFLOP/s, "
          f"fp32 {result['matmulTflops']['fp32_no_tf32']:.0f} (tf32 {result['matmulTflops']['tf32']:.0f})", flush=True)

    try:
        base = RobertaForSequenceClassification._from_config(cfg, attn_implementation="sdpa").eval()
    except (TypeError, ValueError):
        cfg._attn_implementation = "sdpa"
        base = RobertaForSequenceClassification(cfg).eval()
    result["attention"] = getattr(base.config, "_attn_implementation", "unknown")
    for dtype_name in a.dtypes.split(","):
        dtype = {"fp32": torch.float32, "fp16": torch.float16}[dtype_name]
        model = base.to(dev, dtype=dtype)
        for budget in [int(b) for b in a.budgets.split(",")]:
            plan = batches(lengths, budget, a.batch_size)
            with torch.inference_mode():
                run(model, ids[: min(len(ids), 2048)], pad_id, batches(lengths[:2048], budget, a.batch_size), dev)  # warm-up
                torch.cuda.synchronize()
                torch.cuda.reset_peak_memory_stats()
                best = None
                for _ in range(a.repeats):
                    t = time.perf_counter()
                    run(model, ids, pad_id, plan, dev)
                    torch.cuda.synchronize()
                    s = time.perf_counter() - t
                    best = s if best is None else min(best, s)
            fig = {"dtype": dtype_name, "budget": budget, "batches": len(plan), "seconds": best, "pairsPerSec": len(ids) / best,
                   "tokensPerSec": sum(lengths) / best, "peakMemMiB": torch.cuda.max_memory_allocated() / 2**20}
            result["figures"].append(fig)
            print(f"peer torch {dtype_name} sdpa, budget {budget}: {fig['pairsPerSec']:.0f} pairs/s ({len(plan)} batches, best of {a.repeats}, "
                  f"peak {fig['peakMemMiB']:.0f} MiB)", flush=True)
    if a.json:
        json.dump(result, open(a.json, "w"), indent=2)


if __name__ == "__main__":
    main()
