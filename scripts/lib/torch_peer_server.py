"""bench:nli's PyTorch contender, kept alive for the whole bench and fed round by round over a pipe.

  /usr/bin/python3 torch_peer_server.py PEER_DIR MODEL_DIR --threads N [--int8-engine onednn]

The model is the peer folder's (PEER_DIR/roberta_torch.py: HF-style eager
RobertaForSequenceClassification loaded with the initializers of a todeval random-weight export);
this file only imports it, so that the model and its int8 copy are built once and each of bench:nli's
small rounds costs a pipe message, not a process start and a 1.4 GB load. The peer script itself only
runs whole passes from a file.

Protocol: one JSON object per line on stdin, one JSON reply per line on stdout (logs go to stderr).
  {"op": "check", "padId", "rows", "batchLogits", "singleLogits"}
      -> {"batch", "single"}: max |logit diff| of torch fp32 vs ONNX Runtime's logits for the same
         rows (one padded batch, each alone)
  {"op": "run", "variant": "fp32"|"int8", "batch": B, "padId", "ids": [[...], ...], "batches"?: [[i, ...], ...]}
      -> {"seconds", "cpuSeconds", "logits": [[...], ...] in the order of ids, "real", "padded"}
         batches given: those rows of ids together (the bench cuts them as todeval's runner does);
         else B = 1: each row alone, otherwise length-sorted chunks of B rows (the peer's own plan).
         Each batch is padded to its longest row; padding and tensor building are inside the clock
  {"op": "quit"}
The first line written is {"ready": true, "torch", "threads", "blas", "int8Engine", "loadSeconds"}.
"""
import argparse
import json
import os
import sys
import time

ap = argparse.ArgumentParser()
ap.add_argument("peer_dir")
ap.add_argument("model_dir")
ap.add_argument("--threads", type=int, default=2)
ap.add_argument("--int8-engine", default="onednn")
args = ap.parse_args()

# Thread pools are sized when torch and the BLAS load: set them before the import.
for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[var] = str(args.threads)
os.environ.setdefault("GLOG_minloglevel", "2")
sys.path.insert(0, os.path.abspath(args.peer_dir))

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import roberta_torch as peer  # noqa: E402  (the peer folder's model; nothing of it is copied here)

torch.set_num_threads(args.threads)
torch.set_num_interop_threads(1)


def reply(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


t0 = time.perf_counter()
model, cfg, onnx_path = peer.load_from_onnx(args.model_dir)
engine = None
int8 = None
if args.int8_engine and args.int8_engine in torch.backends.quantized.supported_engines:
    engine = args.int8_engine
    torch.backends.quantized.engine = engine
    int8 = torch.ao.quantization.quantize_dynamic(model, {nn.Linear}, dtype=torch.qint8)
blas = sorted({ln.split()[-1] for ln in open("/proc/self/maps") if "libblas" in ln or "libopenblas" in ln or "libmkl" in ln})
reply({"ready": True, "torch": torch.__version__, "threads": torch.get_num_threads(), "blas": blas, "int8Engine": engine, "loadSeconds": time.perf_counter() - t0, "onnx": onnx_path})


def score(mod, ids, batch, pad_id, batches=None):
    t = time.perf_counter()
    c = time.process_time()  # every thread of this process: torch's OpenMP pool included
    out = [None] * len(ids)
    real = padded = 0
    for idx in batches if batches is not None else peer.plan(ids, batch):
        rows = [ids[i] for i in idx]
        x, m = peer.pad_batch(rows, pad_id)
        logits = mod(x, m)
        for k, i in enumerate(idx):
            out[i] = logits[k]
        real += sum(len(r) for r in rows)
        padded += x.numel()
    seconds = time.perf_counter() - t
    return seconds, time.process_time() - c, [o.tolist() for o in out], real, padded


with torch.inference_mode():
    for line in sys.stdin:
        if not line.strip():
            continue
        msg = json.loads(line)
        op = msg.get("op")
        if op == "quit":
            break
        try:
            if op == "check":
                pad_id = msg["padId"]
                rows = msg["rows"]
                x, m = peer.pad_batch(rows, pad_id)
                tb = model(x, m)
                ts = [model(*peer.pad_batch([r], pad_id))[0] for r in rows]
                db = max(abs(float(a) - b) for row, ort in zip(tb.tolist(), msg["batchLogits"]) for a, b in zip(row, ort))
                ds = max(abs(float(a) - b) for row, ort in zip(ts, msg["singleLogits"]) for a, b in zip(row.tolist(), ort))
                reply({"batch": db, "single": ds})
            elif op == "run":
                if msg["variant"] == "int8":
                    if int8 is None:
                        raise ValueError(f"no int8 model: quantized engine {args.int8_engine} not in {torch.backends.quantized.supported_engines}")
                    torch.backends.quantized.engine = engine
                    mod = int8
                else:
                    mod = model
                seconds, cpu_seconds, logits, real, padded = score(mod, msg["ids"], int(msg["batch"]), msg["padId"], msg.get("batches"))
                reply({"seconds": seconds, "cpuSeconds": cpu_seconds, "logits": logits, "real": real, "padded": padded})
            else:
                raise ValueError(f"unknown op {op!r}")
        except Exception as e:  # the bench reports it and stops
            reply({"error": f"{type(e).__name__}: {e}"})
