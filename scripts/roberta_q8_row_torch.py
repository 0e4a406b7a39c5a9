"""PyTorch forward of todeval's per-row int8 (dtype q8, signature q8-row) RoBERTa, for
test/torch-parity-q8.test.ts.

Written for this project from the way Hugging Face's modeling_roberta runs
RobertaForSequenceClassification in eager mode (embeddings word + position + token type -> LayerNorm,
position ids counted from the non-pad tokens, post-LN encoder layers with matmul + softmax attention
under the additive finfo.min mask and exact erf GELU, <s> -> dense -> tanh -> out_proj), with every
Linear layer and embedding table replaced by the arithmetic of src/nli/onnx-builder/quantize.ts's
row scheme (docs/nli.md, "q8 arithmetic"):

  weight W [in, out], per output column j:  w_scale_j = f32(max_i |W_ij| / 63),
                                            W_q = clip(rint(W / w_scale), -63, 63)   (int8)
  activation x, per row (last axis):        a = max(max x, -min x, f32(1e-30)),
                                            s = f32(a / 127),  r = f32(127 / a),
                                            x_q = rint(f32(x * r))  (half to even, |x_q| <= 127)
  y = f32(f32(f32(sum_k x_q,k W_q,kj) * w_scale_j) * s) + b                (the sum in int64: exact)
  a Linear whose input is c x' with c a power of two (GELU's * 0.5) quantizes x' instead and carries
  c in its column scales, w_scale_j * c (quantize.ts powerOfTwoFolds): the same levels and the same
  y, bit for bit; the file's scales and its steps are checked in that form, the forward in this one.
  embedding table T, per tensor:            t_scale = f32(max |T| / 127), T_q = rint(T / t_scale)
                                            row = f32(f32(T_q[id]) * t_scale)

The weights are quantized here from the fp32 export's initializers (not read from the q8 file), so
the file todeval wrote is checked too: its int8 values and scales must be these, byte for byte.

  /usr/bin/python3 roberta_q8_row_torch.py instrument Q8.onnx OUT.onnx MANIFEST.json
      writes a copy of the q8 file whose graph also outputs, for every int8 MatMul, its float input,
      its uint8 activations and its rescaled output, and for every embedding lookup its dequantized
      rows (MANIFEST.json names them), so a test can capture what onnxruntime computed at each step.
  /usr/bin/python3 roberta_q8_row_torch.py check FP32_MODEL_DIR Q8.onnx RUN.json OUT.json
      RUN.json (from the test): {"ids": [[...]], "padId": P, "logits": [[...]] (onnxruntime, the q8
      file as todeval runs it), "captured": {name: flat list}, "shapes": {name: dims} (the
      instrumented file's outputs, same batch), "manifest": instrument's MANIFEST.json}.
      OUT.json: the checks' figures and verdicts (see check()); exit 0 whether or not they pass.
  /usr/bin/python3 roberta_q8_row_torch.py mutate Q8.onnx OUT.onnx swap|scale-ulp
      a copy of the q8 file with one deliberate defect (see mutate()), which the checks must catch.
"""
import json
import math
import os
import sys
import warnings

os.environ.setdefault("OMP_NUM_THREADS", "1")
warnings.filterwarnings("ignore")

import numpy as np  # noqa: E402
import onnx  # noqa: E402
from onnx import helper, numpy_helper  # noqa: E402

# torch only for the commands that compute with it (check; and an import of this module): instrument
# and mutate only read and write ONNX, and importing torch cost each of those runs about a CPU-second
# (five of the parity test's eight runs).
if __name__ != "__main__" or sys.argv[1:2] not in (["instrument"], ["mutate"]):
    import torch  # noqa: E402
    import torch.nn.functional as F  # noqa: E402, N812

WEIGHT_QMAX = 63  # 7-bit weights (int8.ts INT7_QMAX)
ACT_QMAX = 127  # activation levels each side of zero point 128
TABLE_QMAX = 127  # embedding tables, per tensor
MIN_AMAX = np.float32(1e-30)  # quantize.ts ROW_MIN_AMAX


# ---------------------------------------------------------------- quantization, as the row scheme does it
def quantize_columns(w):
    """[in, out] float32 -> (int8 values, float32 scale per column). Quotients in float64, as int8.ts divides."""
    amax = np.abs(w).max(axis=0)
    scale = np.where(amax > 0, (amax.astype(np.float64) / WEIGHT_QMAX).astype(np.float32), np.float32(1))
    q = np.clip(np.rint(w.astype(np.float64) / scale.astype(np.float64)), -WEIGHT_QMAX, WEIGHT_QMAX).astype(np.int8)
    return q, scale


def quantize_table(t):
    amax = float(np.abs(t).max())
    scale = np.float32(amax / TABLE_QMAX) if amax > 0 else np.float32(1)
    q = np.clip(np.rint(t.astype(np.float64) / np.float64(scale)), -TABLE_QMAX, TABLE_QMAX).astype(np.int8)
    return q, scale


def quantize_rows(x):
    """float32 [..., K] -> (scaled x * r, int64 levels in [-127, 127], float32 row scale [..., 1]): one IEEE op per step."""
    amax = torch.maximum(torch.maximum(x.amax(-1, keepdim=True), -x.amin(-1, keepdim=True)), torch.tensor(MIN_AMAX))
    s = amax / torch.tensor(np.float32(ACT_QMAX))
    r = torch.tensor(np.float32(ACT_QMAX)) / amax
    v = x * r
    q = torch.round(v).clamp(-128, 127).to(torch.int64)  # torch.round: half to even, as QuantizeLinear
    return v, q, s


def int8_matmul(x, lin):
    """The int8 MatMul before its bias Add, (f32(sum x_q W_q) * w_scale) * s, the sum exact in int64."""
    v, q, s = quantize_rows(x)
    return (torch.matmul(q, lin["wq"]).to(torch.float32) * lin["scale"]) * s, {"v": v, "q": q, "s": s}


# ---------------------------------------------------------------- the model
def power_of_two(a):
    """A float32 scalar's value if it is a power of two in [2^-8, 2^8] (positive, mantissa zero), else None."""
    if a.dtype != np.float32 or a.size != 1:
        return None
    b = int(a.reshape(-1).view(np.uint32)[0])
    e = ((b >> 23) & 0xFF) - 127
    return 2.0 ** e if b >> 31 == 0 and b & 0x7FFFFF == 0 and abs(e) <= 8 else None


def power_of_two_folds(graph, f):
    """quantize.ts powerOfTwoFolds, read from the fp32 graph: {weight name: c} for each MatMul that reads a
    Mul by a scalar power of two c whose product only MatMuls by weights (each weight read once) read."""
    readers, uses = {}, {}
    for n in graph.node:
        for i in set(n.input):
            readers.setdefault(i, []).append(n)
        for i in n.input:
            uses[i] = uses.get(i, 0) + 1
    outputs = {o.name for o in graph.output}
    folds = {}
    for n in graph.node:
        if n.op_type != "Mul" or n.domain not in ("", "ai.onnx") or len(n.input) != 2 or n.output[0] in outputs or n.input[0] == n.input[1]:
            continue
        k = next((i for i in (0, 1) if n.input[i] in f and power_of_two(f[n.input[i]]) is not None), None)
        users = readers.get(n.output[0], [])
        if k is None or not users:
            continue
        if all(u.op_type == "MatMul" and u.input[0] == n.output[0] and u.input[1] in f and f[u.input[1]].ndim == 2 and uses[u.input[1]] == 1 for u in users):
            for u in users:
                folds[u.input[1]] = power_of_two(f[n.input[k]])
    return folds


class Weights:
    """The fp32 export's initializers by Hugging Face name, and their row-scheme int8 versions."""

    def __init__(self, model_dir):
        self.cfg = json.load(open(os.path.join(model_dir, "config.json")))
        proto = onnx.load(os.path.join(model_dir, "onnx", "model.onnx"))
        self.f = {t.name: numpy_helper.to_array(t) for t in proto.graph.initializer}
        self.folds = power_of_two_folds(proto.graph, self.f)
        self.linears = {}
        self.tables = {}

    def linear(self, prefix):
        """scale32: the scheme's column scales; fileScale32: as the q8 file carries them (times a folded power of two, exact)."""
        if prefix not in self.linears:
            wq, scale = quantize_columns(self.f[f"{prefix}.weight"])  # [in, out], as the MatMul reads it
            file_scale = (scale * np.float32(self.folds.get(f"{prefix}.weight", 1.0))).astype(np.float32)
            self.linears[prefix] = {"wq": torch.from_numpy(wq.astype(np.int64)), "scale": torch.from_numpy(scale),
                                    "b": torch.from_numpy(self.f[f"{prefix}.bias"].copy()), "wq8": wq, "scale32": scale,
                                    "fileScale32": file_scale}
        return self.linears[prefix]

    def file_linear(self, prefix):
        """The Linear as the q8 file computes it: its input is the folded Mul's other input, its scales fileScale32."""
        lin = self.linear(prefix)
        return {**lin, "scale": torch.from_numpy(lin["fileScale32"])}

    def table(self, name):
        if name not in self.tables:
            self.tables[name] = quantize_table(self.f[name])
        return self.tables[name]

    def tensor(self, name):
        return torch.from_numpy(self.f[name].copy())


def embed(W, name, index):
    q, scale = W.table(name)
    return torch.from_numpy(q[index.numpy()].astype(np.float32)) * torch.tensor(scale)


def forward(W, ids, mask, record=None):
    """Logits of the q8-row model; `record` (a dict) gets each int8 MatMul's scaled input, levels and row scale by layer name."""
    cfg = W.cfg
    H, heads, pad = cfg["hidden_size"], cfg["num_attention_heads"], cfg.get("pad_token_id", 1)
    eps = cfg.get("layer_norm_eps", 1e-5)

    def lin(x, prefix):
        y, detail = int8_matmul(x, W.linear(prefix))
        if record is not None:
            record[prefix] = detail
        return y + W.linear(prefix)["b"]

    def ln(x, prefix):
        return F.layer_norm(x, (H,), W.tensor(f"{prefix}.weight"), W.tensor(f"{prefix}.bias"), eps)

    not_pad = ids.ne(pad).to(torch.int64)
    positions = torch.cumsum(not_pad, dim=1) * not_pad + pad
    e = "roberta.embeddings"
    x = embed(W, f"{e}.word_embeddings.weight", ids) + embed(W, f"{e}.position_embeddings.weight", positions)
    x = ln(x + embed(W, f"{e}.token_type_embeddings.weight", torch.zeros_like(ids)), f"{e}.LayerNorm")
    ext = (1.0 - mask[:, None, None, :].to(torch.float32)) * torch.finfo(torch.float32).min
    d = H // heads
    split = lambda t: t.view(t.shape[0], t.shape[1], heads, d).permute(0, 2, 1, 3)  # noqa: E731
    for i in range(cfg["num_hidden_layers"]):
        p = f"roberta.encoder.layer.{i}"
        q, k, v = (split(lin(x, f"{p}.attention.self.{n}")) for n in ("query", "key", "value"))
        probs = F.softmax(torch.matmul(q, k.transpose(-1, -2)) * np.float32(1 / math.sqrt(d)) + ext, dim=-1)
        ctx = torch.matmul(probs, v).permute(0, 2, 1, 3).reshape(x.shape)
        a = ln(lin(ctx, f"{p}.attention.output.dense") + x, f"{p}.attention.output.LayerNorm")
        x = ln(lin(F.gelu(lin(a, f"{p}.intermediate.dense")), f"{p}.output.dense") + a, f"{p}.output.LayerNorm")
    return lin(torch.tanh(lin(x[:, 0, :], "classifier.dense")), "classifier.out_proj")


def pad_batch(rows, pad_id):
    T = max(len(r) for r in rows)
    ids = torch.full((len(rows), T), pad_id, dtype=torch.int64)
    mask = torch.zeros((len(rows), T), dtype=torch.int64)
    for i, r in enumerate(rows):
        ids[i, : len(r)] = torch.tensor(r)
        mask[i, : len(r)] = 1
    return ids, mask


# ---------------------------------------------------------------- instrumenting the q8 file
def instrument(q8_path, out_path, manifest_path):
    """The int8 MatMuls (MatMulIntegerToFloat then Mul by the row scale), their inputs, and the
    embedding lookups (Gather of an int8 table, DequantizeLinear), found from the graph's wiring."""
    m = onnx.load(q8_path)
    g = m.graph
    producer = {o: n for n in g.node for o in n.output}
    consumers = {}
    for n in g.node:
        for i in n.input:
            consumers.setdefault(i, []).append(n)
    inits = {t.name for t in g.initializer}
    matmuls, lookups, extra = [], [], []
    for n in g.node:
        if n.op_type == "MatMulIntegerToFloat":
            quant = producer[n.input[0]]  # QuantizeLinear(x * r, 1, 128)
            scaled = producer[quant.input[0]]  # Mul(x, r)
            x = scaled.input[0]
            rescale = next(c for c in consumers[n.output[0]] if c.op_type == "Mul")
            weight = n.input[1][: -len("_quantized")] if n.input[1].endswith("_quantized") else n.input[1]
            matmuls.append({"weight": weight, "x": x, "u8": quant.output[0], "y": rescale.output[0]})
            extra += [x, quant.output[0], rescale.output[0]]
        elif n.op_type == "DequantizeLinear" and producer.get(n.input[0]) is not None and producer[n.input[0]].op_type == "Gather":
            gather = producer[n.input[0]]
            if gather.input[0] in inits:
                table = gather.input[0][: -len("_quantized")]
                lookups.append({"table": table, "indices": gather.input[1], "y": n.output[0]})
                extra += [n.output[0]] + ([] if gather.input[1] in inits else [gather.input[1]])
    have = {o.name for o in g.output}
    for name in dict.fromkeys(extra):
        if name not in have:
            g.output.append(helper.make_empty_tensor_value_info(name))
    onnx.save(m, out_path)
    json.dump({"matmuls": matmuls, "lookups": lookups, "outputs": [o.name for o in g.output]}, open(manifest_path, "w"), indent=1)


# ---------------------------------------------------------------- mutations (the tests' proof that the checks can fail)
def mutate(q8_path, out_path, kind):
    """swap: two int8 weights of one row of classifier.out_proj swapped (hidden unit 0's weights to
    labels 0 and 1). scale-ulp: one column scale of layer 0's query weight one float32 ulp larger."""
    m = onnx.load(q8_path)
    name = {"swap": "classifier.out_proj.weight_quantized", "scale-ulp": "roberta.encoder.layer.0.attention.self.query.weight_scale"}[kind]
    t = next(t for t in m.graph.initializer if t.name == name)
    a = numpy_helper.to_array(t).copy()
    flat = a.reshape(-1)
    if kind == "swap":
        flat[0], flat[1] = flat[1].copy(), flat[0].copy()
        assert flat[0] != flat[1]
    else:
        flat[0] = np.nextafter(flat[0], np.float32(np.inf))
    t.CopyFrom(numpy_helper.from_array(a, t.name))
    onnx.save(m, out_path)


# ---------------------------------------------------------------- the checks
U = 2.0 ** -24  # float32 unit roundoff


def bits(a):
    return np.ascontiguousarray(a, dtype=np.float32).view(np.uint32)


def ulp(a):
    a = np.abs(np.asarray(a, dtype=np.float32))
    return (np.nextafter(a, np.float32(np.inf)) - a).astype(np.float64)


def divergence_bound(cfg, longest):
    """rho: how far apart, relatively, two correct float32 evaluations of the float parts can put a
    row's scale s (first order, standard rounding-error bounds; docs/nli.md "q8 parity with PyTorch").
    Each float stage between int8 steps (LayerNorm over H, softmax and attention sums over T, GELU,
    tanh, bias and residual adds) forms every element with at most n = max(H, I, T) + 16 roundings,
    so one evaluation is within gamma_n = n u / (1 - n u) of exact and two within 2 gamma_n; LayerNorm's
    normalization can enlarge an input's relative error by up to sqrt(H) (|x_hat| <= sqrt(H)); the
    stages' errors add: S = 2 per layer (attention, feed-forward) + embeddings + classifier."""
    H, I = cfg["hidden_size"], cfg["intermediate_size"]
    n = max(H, I, longest) + 16
    gamma = n * U / (1 - n * U)
    stages = 2 * cfg["num_hidden_layers"] + 2
    return stages * 2 * math.sqrt(H) * gamma


def check(model_dir, q8_path, run_path, out_path):
    W = Weights(model_dir)
    run = json.load(open(run_path))
    manifest = run["manifest"]
    cap = {k: np.array(v) for k, v in run["captured"].items()}
    shape = lambda name: run["shapes"][name]  # noqa: E731
    q8 = {t.name: numpy_helper.to_array(t) for t in onnx.load(q8_path).graph.initializer}
    out = {"torch": torch.__version__}

    # 1. The file's int8 weights and scales are the scheme's, byte for byte.
    mismatched = []
    for mm in manifest["matmuls"]:
        lin = W.linear(mm["weight"][: -len(".weight")])
        if not (np.array_equal(q8[mm["weight"] + "_quantized"], lin["wq8"]) and np.array_equal(bits(q8[mm["weight"] + "_scale"]), bits(lin["fileScale32"]))):
            mismatched.append(mm["weight"])
    for lk in manifest["lookups"]:
        q, scale = W.table(lk["table"])
        if not (np.array_equal(q8[lk["table"] + "_quantized"], q) and np.array_equal(bits(q8[lk["table"] + "_scale"]), bits(scale))):
            mismatched.append(lk["table"])
    out["weights"] = {"checked": len(manifest["matmuls"]) + len(manifest["lookups"]), "mismatched": mismatched, "pass": not mismatched}

    # 2. Each int8 step fed onnxruntime's own input gives onnxruntime's levels and output, bit for bit
    #    (tolerance 0: the same IEEE operations on the same float32 values, and integer sums, which
    #    are exact in int64 here and in onnxruntime's int32: |sum| <= K * 127 * 63 < 2^31).
    steps = []
    with torch.inference_mode():
        for mm in manifest["matmuls"]:
            x = torch.from_numpy(cap[mm["x"]].astype(np.float32).reshape(shape(mm["x"])))
            y, d = int8_matmul(x, W.file_linear(mm["weight"][: -len(".weight")]))
            y = y.numpy()
            ort_q = cap[mm["u8"]].astype(np.int64).reshape(d["q"].shape) - 128
            ort_y = cap[mm["y"]].astype(np.float32).reshape(y.shape)
            steps.append({"op": mm["weight"], "n": int(y.size), "levelsDiffer": int((d["q"].numpy() != ort_q).sum()), "bitsDiffer": int((bits(y) != bits(ort_y)).sum()), "maxAbs": float(np.abs(y - ort_y).max())})
        for lk in manifest["lookups"]:
            given = q8[lk["indices"]] if lk["indices"] in q8 else cap[lk["indices"]].reshape(shape(lk["indices"]))
            y = embed(W, lk["table"], torch.from_numpy(np.asarray(given, dtype=np.int64))).numpy()
            ort_y = cap[lk["y"]].astype(np.float32).reshape(y.shape)
            steps.append({"op": lk["table"], "n": int(y.size), "levelsDiffer": 0, "bitsDiffer": int((bits(y) != bits(ort_y)).sum()), "maxAbs": float(np.abs(y - ort_y).max())})
    out["steps"] = {"list": steps, "pass": all(st["levelsDiffer"] == 0 and st["bitsDiffer"] == 0 for st in steps)}

    # 3. PyTorch's own forward from the token ids against onnxruntime's logits (the q8 file as todeval
    #    runs it). z_j = f32(f32(f32(A_j) c_j) s) + b_j: with the last layer's levels equal, A_j, c_j
    #    and b_j are equal and only the row scale s (set by the float parts upstream) can differ:
    #      |dz_j| <= |t_j| (rho + 4u) + F 63 c_j s + ulp(t_j) + ulp(z_j),    t_j = f32(f32(A_j) c_j) s
    #    with |ds| / s <= rho (divergence_bound) and F the row's levels that flipped at a rounding
    #    boundary (each moves A_j by |W_q| <= 63; a flip is allowed only where both evaluations of
    #    x * r lie within 127 rho of the same half-integer). Every other level of every int8 step
    #    must agree too (a level that moved without a boundary is a defect upstream).
    ids, mask = pad_batch(run["ids"], run["padId"])
    rho = divergence_bound(W.cfg, ids.shape[1])
    record = {}
    with torch.inference_mode():
        logits = forward(W, ids, mask, record)
    ort_logits = np.array(run["logits"], dtype=np.float32)
    bad_levels, flips = {}, {}
    last = None
    for mm in manifest["matmuls"]:
        prefix = mm["weight"][: -len(".weight")]
        mine = record[prefix]
        x_ort = torch.from_numpy(cap[mm["x"]].astype(np.float32).reshape(shape(mm["x"])))
        v_ort, q_ort, s_ort = quantize_rows(x_ort)  # onnxruntime's levels and scale (check 2 shows they are the ones it used)
        if mine["q"].shape != q_ort.shape:
            bad_levels[prefix] = "shape"
            continue
        differ = (mine["q"] != q_ort).numpy()
        half = (np.maximum(mine["q"].numpy(), q_ort.numpy()) - 0.5)
        at_boundary = (np.abs(mine["v"].numpy() - half) <= 127 * rho) & (np.abs(v_ort.numpy() - half) <= 127 * rho) & (np.abs(mine["q"].numpy() - q_ort.numpy()) == 1)
        if (differ & ~at_boundary).any():
            bad_levels[prefix] = int((differ & ~at_boundary).sum())
        if differ.any():
            flips[prefix] = int(differ.sum())
        if prefix == "classifier.out_proj":
            last = {"s": mine["s"].numpy().astype(np.float64), "s_ort": s_ort.numpy().astype(np.float64), "flips": differ.sum(axis=-1, keepdims=True),
                    "t": int8_matmul(x_ort, W.linear(prefix))[0].numpy().astype(np.float64)}
    c = W.linear("classifier.out_proj")["scale32"].astype(np.float64)
    t = last["t"]
    tol = np.abs(t) * (rho + 4 * U) + last["flips"] * 63 * c * last["s_ort"] + ulp(t) + ulp(ort_logits)
    diff = np.abs(logits.numpy().astype(np.float64) - ort_logits.astype(np.float64))
    scale_div = float(np.max(np.abs(last["s"] - last["s_ort"]) / last["s_ort"]))
    out["forward"] = {
        "logits": logits.numpy().tolist(), "maxAbsDiff": float(diff.max()), "tolerance": tol.tolist(), "minTolerance": float(tol.min()),
        "rho": rho, "scaleDivergence": scale_div, "flips": flips, "levelsOffBoundary": bad_levels,
        "maxAbsLogit": float(np.abs(ort_logits).max()),
        "pass": bool((diff <= tol).all()) and not bad_levels and scale_div <= rho,
    }
    out["pass"] = out["weights"]["pass"] and out["steps"]["pass"] and out["forward"]["pass"]
    json.dump(out, open(out_path, "w"), indent=1)


if __name__ == "__main__":
    cmd = sys.argv[1] if len(sys.argv) > 1 else ""
    if cmd == "instrument" and len(sys.argv) == 5:
        instrument(*sys.argv[2:])
    elif cmd == "check" and len(sys.argv) == 6:
        check(*sys.argv[2:])
    elif cmd == "mutate" and len(sys.argv) == 5 and sys.argv[4] in ("swap", "scale-ulp"):
        mutate(*sys.argv[2:])
    else:
        sys.exit(__doc__)
