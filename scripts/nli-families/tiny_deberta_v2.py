"""DebertaV2ForSequenceClassification (DeBERTa-v2 and -v3), written from the way Hugging Face's
modeling_deberta_v2 runs it in eager mode, for tiny random-weight cross-encoders (tiny_cross_encoder.py).

What the family does that BERT does not, and what this module therefore carries:
- no absolute positions in the input (position_biased_input false, as in every v3 checkpoint):
  order enters only through relative positions inside attention;
- relative positions bucketed logarithmically past position_buckets / 2 (make_log_bucket_position),
  looked up in one shared table (rel_embeddings, LayerNorm'd: norm_rel_ebd "layer_norm");
- disentangled attention: content-to-content, content-to-position (c2p) and position-to-content
  (p2c) scores, the position projections sharing the content ones (share_att_key), all scaled by
  sqrt(head_size * 3);
- the embeddings multiplied by the attention mask, a 2-D (query x key) mask and a softmax that
  writes 0 where the mask is 0 (XSoftmax);
- segment embeddings only where type_vocab_size > 0 (v3 checkpoints have 0: their exports take no
  token_type_ids);
- the head: ContextPooler (dense on the first token, GELU), then the classifier.

Sizes are tensor operations throughout (never Python ints taken from a shape), so the exported
graph keeps batch and sequence dynamic.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


def make_log_bucket_position(relative_pos, bucket_size, max_position):
    """Relative positions beyond +-bucket_size/2 mapped to log-spaced buckets (HF's function of the same name)."""
    sign = torch.sign(relative_pos)
    mid = bucket_size // 2
    abs_pos = torch.where(
        (relative_pos < mid) & (relative_pos > -mid),
        torch.tensor(mid - 1).type_as(relative_pos),
        torch.abs(relative_pos),
    )
    log_pos = torch.ceil(torch.log(abs_pos / mid) / torch.log(torch.tensor((max_position - 1) / mid)) * (mid - 1)) + mid
    return torch.where(abs_pos <= mid, relative_pos.type_as(log_pos), log_pos * sign)


def bucket_margin(bucket_size, max_position, longest):
    """How far (float64) the log-bucket formula's value before ceil comes to an integer over every
    distance a row of `longest` tokens holds: onnxruntime and PyTorch evaluate it in float32 (~1e-7
    relative apart; the exporter folds the constant log, onnxruntime computes the other), so a
    margin well above that means both put every distance in the same bucket. The formula is an
    integer exactly at max_position - 1 (log over itself), hence max_relative_positions above the
    longest row in the tiny config."""
    mid = bucket_size // 2
    worst = 1.0
    for d in range(mid + 1, longest):
        v = math.log(d / mid) / math.log((max_position - 1) / mid) * (mid - 1)
        worst = min(worst, abs(v - round(v)))
    return worst


def build_relative_position(hidden, bucket_size, max_position):
    """[1, S, S] relative positions (query - key), bucketed (HF's build_relative_position)."""
    ids = torch.cumsum(torch.ones_like(hidden[0, :, 0], dtype=torch.long), 0) - 1
    rel = ids[:, None] - ids[None, :]
    if bucket_size > 0 and max_position > 0:
        rel = make_log_bucket_position(rel, bucket_size, max_position)
    return rel.to(torch.long).unsqueeze(0)


class DisentangledSelfAttention(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        H = cfg["hidden_size"]
        self.heads = cfg["num_attention_heads"]
        self.head_size = H // self.heads
        self.query_proj = nn.Linear(H, H)
        self.key_proj = nn.Linear(H, H)
        self.value_proj = nn.Linear(H, H)
        self.pos_att_type = cfg["pos_att_type"]
        self.position_buckets = cfg["position_buckets"]
        max_rel = cfg["max_relative_positions"]
        self.max_relative_positions = max_rel if max_rel >= 1 else cfg["max_position_embeddings"]
        self.pos_ebd_size = self.position_buckets if self.position_buckets > 0 else self.max_relative_positions

    def split(self, x):
        """[B, S, H] -> [B * heads, S, head_size] (HF's transpose_for_scores)."""
        b, s = x.shape[0], x.shape[1]
        return x.view(b, s, self.heads, self.head_size).permute(0, 2, 1, 3).reshape(-1, s, self.head_size)

    def forward(self, h, mask2d, relative_pos, rel_embeddings):
        q, k, v = self.split(self.query_proj(h)), self.split(self.key_proj(h)), self.split(self.value_proj(h))
        scale_factor = 1 + ("c2p" in self.pos_att_type) + ("p2c" in self.pos_att_type)
        scale = math.sqrt(self.head_size * scale_factor)
        scores = torch.bmm(q, k.transpose(-1, -2) / scale)
        scores = scores + self.disentangled_bias(q, k, relative_pos, rel_embeddings, scale_factor)
        b = h.shape[0]
        s = h.shape[1]
        scores = scores.view(b, self.heads, s, s)
        # XSoftmax: masked scores to the float minimum, softmax, masked probabilities to exactly 0.
        rmask = mask2d == 0
        probs = F.softmax(scores.masked_fill(rmask, torch.finfo(scores.dtype).min), dim=-1).masked_fill(rmask, 0.0)
        context = torch.bmm(probs.view(-1, s, s), v)
        return context.view(b, self.heads, s, self.head_size).permute(0, 2, 1, 3).reshape(b, s, self.heads * self.head_size)

    def disentangled_bias(self, q, k, relative_pos, rel_embeddings, scale_factor):
        span = self.pos_ebd_size
        rel = rel_embeddings[0 : span * 2, :].unsqueeze(0)
        # share_att_key: the position table goes through the content projections; HF repeats it
        # once per batch row for bmm, a broadcast matmul here computes the same dot products.
        pos_query = self.split(self.query_proj(rel))
        pos_key = self.split(self.key_proj(rel))
        n, s = q.shape[0], q.shape[1]

        def per_head(x, table):
            """[B * heads, S, d] x [heads, 2 span, d] -> [B * heads, S, 2 span]."""
            return torch.matmul(x.view(-1, self.heads, s, self.head_size), table.transpose(-1, -2)).view(n, s, -1)

        score = 0
        if "c2p" in self.pos_att_type:
            c2p_pos = torch.clamp(relative_pos + span, 0, span * 2 - 1)
            c2p = torch.gather(per_head(q, pos_key), dim=-1, index=c2p_pos.expand(n, s, s))
            score = score + c2p / math.sqrt(self.head_size * scale_factor)
        if "p2c" in self.pos_att_type:
            p2c_pos = torch.clamp(-relative_pos + span, 0, span * 2 - 1)
            p2c = torch.gather(per_head(k, pos_query), dim=-1, index=p2c_pos.expand(n, s, s)).transpose(-1, -2)
            score = score + p2c / math.sqrt(self.head_size * scale_factor)
        return score


class Layer(nn.Module):
    """DebertaV2Layer: attention, dense + residual + LayerNorm, GELU intermediate, dense + residual + LayerNorm."""

    def __init__(self, cfg):
        super().__init__()
        H, eps = cfg["hidden_size"], cfg["layer_norm_eps"]
        self.attention = DisentangledSelfAttention(cfg)
        self.attention_output = nn.Linear(H, H)
        self.attention_norm = nn.LayerNorm(H, eps=eps)
        self.intermediate = nn.Linear(H, cfg["intermediate_size"])
        self.output = nn.Linear(cfg["intermediate_size"], H)
        self.output_norm = nn.LayerNorm(H, eps=eps)

    def forward(self, h, mask2d, relative_pos, rel_embeddings):
        a = self.attention_norm(self.attention_output(self.attention(h, mask2d, relative_pos, rel_embeddings)) + h)
        return self.output_norm(self.output(F.gelu(self.intermediate(a))) + a)


class DebertaV2CrossEncoder(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        H, eps = cfg["hidden_size"], cfg["layer_norm_eps"]
        self.word_embeddings = nn.Embedding(cfg["vocab_size"], H, padding_idx=cfg["pad_token_id"])
        self.segments = cfg["type_vocab_size"] > 0
        if self.segments:
            self.token_type_embeddings = nn.Embedding(cfg["type_vocab_size"], H)
        self.embeddings_norm = nn.LayerNorm(H, eps=eps)
        self.position_buckets = cfg["position_buckets"]
        max_rel = cfg["max_relative_positions"]
        self.max_relative_positions = max_rel if max_rel >= 1 else cfg["max_position_embeddings"]
        span = self.position_buckets if self.position_buckets > 0 else self.max_relative_positions
        self.rel_embeddings = nn.Embedding(span * 2, H)
        self.rel_norm = nn.LayerNorm(H, eps=eps)
        self.layers = nn.ModuleList(Layer(cfg) for _ in range(cfg["num_hidden_layers"]))
        self.pooler = nn.Linear(H, cfg["pooler_hidden_size"])
        self.classifier = nn.Linear(cfg["pooler_hidden_size"], len(cfg["id2label"]))

    def forward(self, input_ids, attention_mask, token_type_ids=None):
        x = self.word_embeddings(input_ids)
        if self.segments:
            x = x + self.token_type_embeddings(token_type_ids)
        x = self.embeddings_norm(x) * attention_mask.unsqueeze(2).to(x.dtype)
        ext = attention_mask.unsqueeze(1).unsqueeze(2)
        mask2d = ext * ext.squeeze(-2).unsqueeze(-1)
        relative_pos = build_relative_position(x, self.position_buckets, self.max_relative_positions)
        rel_embeddings = self.rel_norm(self.rel_embeddings.weight)
        for layer in self.layers:
            x = layer(x, mask2d, relative_pos, rel_embeddings)
        return self.classifier(F.gelu(self.pooler(x[:, 0])))


def tiny_config(vocab_size, pad_id, segments):
    """A tiny DeBERTa-v3-shaped config.json: position_buckets 8, so the short test pairs reach the log
    buckets, and max_relative_positions 256 (v3: -1, i.e. max_position_embeddings) beyond any row."""
    return dict(
        model_type="deberta-v2",
        architectures=["DebertaV2ForSequenceClassification"],
        vocab_size=vocab_size,
        pad_token_id=pad_id,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=4,
        intermediate_size=64,
        hidden_act="gelu",
        max_position_embeddings=128,
        type_vocab_size=2 if segments else 0,
        layer_norm_eps=1e-7,
        relative_attention=True,
        max_relative_positions=256,
        position_buckets=8,
        pos_att_type=["p2c", "c2p"],
        share_att_key=True,
        norm_rel_ebd="layer_norm",
        position_biased_input=False,
        pooler_hidden_size=32,
        pooler_hidden_act="gelu",
    )
