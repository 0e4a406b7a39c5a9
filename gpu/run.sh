#!/usr/bin/env bash
# The GPU check in one go, on a machine with no Node and no network (see docs/gpu.md):
# unpack the bundle written by `npm run gpu:bundle`, build the random roberta-large (fp32 + fp16) on
# the spot, then 1. CUDA vs CPU correctness, 2. bench:nli sweep fp32/fp16, 3. the PyTorch peer on the
# same token ids, 4. `todeval score` over the whole SGD test set. Results land in --out.
#
#   bash gpu/run.sh --parts 'DIR1 DIR2 ...' [--device cuda|cpu] [--size large|tiny] [--quick] [--out DIR] [--work DIR]
#       [--phases correctness,bench-nli,peer-torch,score]
#
# A second call on the same (still warm) machine may leave out --parts: the unpacked bundle and the
# built models in --work are reused, so the phases can be spread over calls of limited length.
#
# --device cpu --size tiny --quick is the dry run the test suite does on every CI run, so this script
# cannot rot between GPU runs.
set -euo pipefail

PHASES="correctness,bench-nli,peer-torch,score"; PARTS=""; DEVICE=cuda; SIZE=large; QUICK=0; OUTDIR="${OUT:-$PWD/gpu-results}"; WORK=/tmp/todeval-gpu; DATA=""
while [ $# -gt 0 ]; do
  case "$1" in
    --parts) PARTS="$2"; shift 2 ;;
    --device) DEVICE="$2"; shift 2 ;;
    --size) SIZE="$2"; shift 2 ;;
    --quick) QUICK=1; shift ;;
    --out) OUTDIR="$2"; shift 2 ;;
    --work) WORK="$2"; shift 2 ;;
    --data-dir) DATA="$2"; shift 2 ;;
    --phases) PHASES="$2"; shift 2 ;;
    *) echo "run.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
[ -n "$PARTS" ] || [ -d "$WORK/todeval" ] || { echo "run.sh: --parts 'DIR ...' (the folders holding bundle.part-*) is required" >&2; exit 2; }
want() { case ",$PHASES," in *",$1,"*) return 0 ;; *) return 1 ;; esac; }
mkdir -p "$OUTDIR" "$WORK"
LOG="$OUTDIR/run.log"
say() { echo "== $(date -u +%H:%M:%S) $*" | tee -a "$LOG"; }
phase() { # phase NAME command...: run, tee the output, record the wall time
  local name="$1"; shift
  local t0; t0=$(date +%s.%N)
  say "$name"
  set +e
  "$@" 2>&1 | tee -a "$LOG"
  local rc=${PIPESTATUS[0]}
  set -e
  local t1; t1=$(date +%s.%N)
  awk -v n="$name" -v a="$t0" -v b="$t1" -v rc="$rc" 'BEGIN { printf "%s\t%.2f\t%s\n", n, b - a, rc }' >> "$OUTDIR/phases.tsv"
  return 0
}

APP="$WORK/todeval"
ORTBIN="$APP/node_modules/onnxruntime-node/bin/napi-v6/linux/x64"
if [ -n "$PARTS" ]; then
  # 1. unpack: the parts are one tar stream cut into pieces, each piece in its own folder.
  say "unpack"
  files=$(for d in $PARTS; do ls "$d"/bundle.part-* ; done | sort -t- -k2)
  cat $files | tar -x -C "$WORK"
  mkdir -p "$WORK/bin"
  xz -dc "$WORK/node.xz" > "$WORK/bin/node" && chmod +x "$WORK/bin/node"
  tar -xJf "$WORK/app.tar.xz" -C "$WORK"
  tar -xJf "$WORK/deps.tar.xz" -C "$WORK"   # todeval/node_modules: the bundler caches it apart from app
  if [ -f "$WORK/data.tar.xz" ]; then mkdir -p "$WORK/data" && tar -xJf "$WORK/data.tar.xz" -C "$WORK/data"; fi
  if [ -f "$WORK/providers_cuda.so.xz" ]; then
    xz -T0 -dc "$WORK/providers_cuda.so.xz" > "$ORTBIN/libonnxruntime_providers_cuda.so"
    cp "$WORK/libonnxruntime_providers_shared.so" "$WORK/todeval-cuda-provider.json" "$ORTBIN/"
  fi
  rm -f "$WORK"/*.xz
fi
export PATH="$WORK/bin:$PATH"
[ -n "$DATA" ] || DATA="$WORK/data"
export TODEVAL_DATA="$DATA" XDG_CACHE_HOME="$WORK/cache" HF_HUB_CACHE="$WORK/cache/hub"

if [ "$DEVICE" = cuda ]; then
  # The CUDA 13 libraries of the machine's PyTorch (site-packages/nvidia/**/lib): no system toolkit needed.
  NVLIBS=$(python3 - <<'PY'
import os, site
dirs = set()
for root in site.getsitepackages() + [site.getusersitepackages()]:
    nv = os.path.join(root, "nvidia")
    for d, _, files in os.walk(nv):
        if any(f.startswith("lib") and ".so" in f for f in files):
            dirs.add(d)
print(":".join(sorted(dirs)))
PY
)
  export LD_LIBRARY_PATH="$NVLIBS${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$OUTDIR/gpu.txt"
fi
echo "node $(node --version) at $(command -v node)" | tee -a "$LOG"
cd "$APP"
T="node dist/src/cli/main.js"
phase doctor $T doctor --device "$DEVICE"
$T doctor --device "$DEVICE" --json > "$OUTDIR/doctor.json" || { say "doctor: --device $DEVICE cannot run"; exit 2; }

# 2. the random roberta (fp32 and fp16), built here: 1.4 GB never travels.
M="$WORK/models/random-roberta-$SIZE"
[ -f "$M/onnx/model.onnx" ] || phase model-fp32 node dist/scripts/build-random-roberta.js --size "$SIZE" --dtype fp32 --out "$M"
[ -f "$M/onnx/model_fp16.onnx" ] || phase model-fp16 node dist/scripts/build-random-roberta.js --size "$SIZE" --dtype fp16 --out "$M"

# --quick is the CPU dry run of the test suite: every phase, at counts that keep it well under a
# minute on a busy 2-core box (CPU fp16 is slow: ORT casts around most ops).
if [ "$QUICK" = 1 ]; then NCHECK=8; NPAIRS=32; BUDGETS=2048; PADS=1; QLIMIT=10; else NCHECK=256; NPAIRS=8192; BUDGETS=8192,16384,32768,65536,131072; PADS=0.5,1; fi

# 3. correctness: the device vs CPU fp32
want correctness && phase correctness node dist/scripts/gpu-check.js --model "$M" --device "$DEVICE" --dtype fp32,fp16 --pairs "$NCHECK" --json "$OUTDIR/check.json"

# 4. throughput sweep, and the same token ids for the peer
want bench-nli && phase bench-nli node dist/scripts/bench-nli.js --model "$M" --device "$DEVICE" --dtype fp32,fp16 --budget "$BUDGETS" --batch-size 1024 --pad "$PADS" \
  --pairs "$NPAIRS" --round "$NPAIRS" --json "$OUTDIR/bench-nli.json" --dump-ids "$WORK/ids.json"

# 5. the PyTorch peer on the same pairs (skipped where torch or the GPU is absent)
if want peer-torch; then
  if [ "$DEVICE" = cuda ] && python3 -c 'import torch, transformers; assert torch.cuda.is_available()' 2>/dev/null; then
    phase peer-torch python3 "$WORK/gpu/peer_torch.py" --config "$M" --ids "$WORK/ids.json" --budgets "$BUDGETS" --batch-size 1024 --json "$OUTDIR/peer-torch.json"
  else
    say "peer-torch: skipped (needs python3 with torch + transformers and a CUDA GPU)"
  fi
fi

# 6. SGSAcc over the SGD test set: references + ground truth, then a second system reusing them.
if want score; then
  S="$WORK/score"; mkdir -p "$S"; rm -f "$S"/*
  LIMIT=(); [ "$QUICK" = 1 ] && LIMIT=(--limit "$QLIMIT")
  NLI=(--dataset sgd --model "$M" --device "$DEVICE" --dtype fp16 --chunk 4096 "${LIMIT[@]}")
  phase score-gold $T score "${NLI[@]}" --references "$S/refs.jsonl" --out "$S/gold.turns.jsonl" -o "$OUTDIR/score-gold.json"
  phase second-system node dist/scripts/second-system.js --out "$S/sys2.jsonl" "${LIMIT[@]}"
  phase score-second $T score "${NLI[@]}" --references "$S/refs.jsonl" --predictions "$S/sys2.jsonl" --out "$S/sys2.turns.jsonl" -o "$OUTDIR/score-second.json"
fi

say "phases (name, seconds, exit code):"
cat "$OUTDIR/phases.tsv" | tee -a "$LOG"
awk -F'\t' '$3 != 0 { bad = 1 } END { exit bad }' "$OUTDIR/phases.tsv"
