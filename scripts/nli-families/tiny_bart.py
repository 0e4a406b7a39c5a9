"""BartForSequenceClassification (facebook/bart-large-mnli's architecture), written from the way
Hugging Face's modeling_bart runs it in eager mode, for tiny random-weight cross-encoders
(tiny_cross_encoder.py).

What the family does, and this module therefore carries:
- an encoder-decoder: the encoder reads the pair; the decoder reads the same ids shifted right by
  one (shift_tokens_right: decoder_start_token_id first), under a causal mask only (no padding
  mask: a token never sees what follows it, so right padding changes nothing before it), and
  attends to the encoder through the encoder's padding mask;
- learned positions numbered from 2 (BartLearnedPositionalEmbedding's offset), one table for the
  encoder and one for the decoder, the token table shared, embed_scale 1 (scale_embedding false),
  LayerNorm on the embeddings (layernorm_embedding);
- post-LN layers (self-attention, [cross-attention,] GELU feed-forward), queries scaled by
  head_dim^-0.5 before the product, masks added as finfo.min;
- the head on the decoder's state at the row's last </s> (eos_token_id): dense, tanh, out_proj.
  HF selects every </s> and keeps the last (all rows must hold as many); the index of the last one
  per row is taken here, which is the same token whenever HF's selection is defined.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

POSITION_OFFSET = 2


class Attention(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.heads = heads
        self.head_dim = d // heads
        self.scaling = self.head_dim ** -0.5
        self.q_proj = nn.Linear(d, d)
        self.k_proj = nn.Linear(d, d)
        self.v_proj = nn.Linear(d, d)
        self.out_proj = nn.Linear(d, d)

    def shape(self, x):
        b, s = x.shape[0], x.shape[1]
        return x.view(b, s, self.heads, self.head_dim).transpose(1, 2)

    def forward(self, h, kv, additive_mask):
        q = self.shape(self.q_proj(h) * self.scaling)
        k, v = self.shape(self.k_proj(kv)), self.shape(self.v_proj(kv))
        scores = torch.matmul(q, k.transpose(-1, -2)) + additive_mask
        context = torch.matmul(F.softmax(scores, dim=-1), v).transpose(1, 2)
        return self.out_proj(context.reshape(h.shape[0], h.shape[1], -1))


class EncoderLayer(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        d = cfg["d_model"]
        self.self_attn = Attention(d, cfg["encoder_attention_heads"])
        self.self_attn_layer_norm = nn.LayerNorm(d)
        self.fc1 = nn.Linear(d, cfg["encoder_ffn_dim"])
        self.fc2 = nn.Linear(cfg["encoder_ffn_dim"], d)
        self.final_layer_norm = nn.LayerNorm(d)

    def forward(self, h, mask):
        h = self.self_attn_layer_norm(h + self.self_attn(h, h, mask))
        return self.final_layer_norm(h + self.fc2(F.gelu(self.fc1(h))))


class DecoderLayer(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        d = cfg["d_model"]
        self.self_attn = Attention(d, cfg["decoder_attention_heads"])
        self.self_attn_layer_norm = nn.LayerNorm(d)
        self.encoder_attn = Attention(d, cfg["decoder_attention_heads"])
        self.encoder_attn_layer_norm = nn.LayerNorm(d)
        self.fc1 = nn.Linear(d, cfg["decoder_ffn_dim"])
        self.fc2 = nn.Linear(cfg["decoder_ffn_dim"], d)
        self.final_layer_norm = nn.LayerNorm(d)

    def forward(self, h, causal, encoded, cross_mask):
        h = self.self_attn_layer_norm(h + self.self_attn(h, h, causal))
        h = self.encoder_attn_layer_norm(h + self.encoder_attn(h, encoded, cross_mask))
        return self.final_layer_norm(h + self.fc2(F.gelu(self.fc1(h))))


class BartCrossEncoder(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        d = cfg["d_model"]
        self.pad_id = cfg["pad_token_id"]
        self.eos_id = cfg["eos_token_id"]
        self.start_id = cfg["decoder_start_token_id"]
        self.shared = nn.Embedding(cfg["vocab_size"], d, padding_idx=self.pad_id)
        self.encoder_positions = nn.Embedding(cfg["max_position_embeddings"] + POSITION_OFFSET, d)
        self.decoder_positions = nn.Embedding(cfg["max_position_embeddings"] + POSITION_OFFSET, d)
        self.encoder_embedding_norm = nn.LayerNorm(d)
        self.decoder_embedding_norm = nn.LayerNorm(d)
        self.encoder_layers = nn.ModuleList(EncoderLayer(cfg) for _ in range(cfg["encoder_layers"]))
        self.decoder_layers = nn.ModuleList(DecoderLayer(cfg) for _ in range(cfg["decoder_layers"]))
        self.dense = nn.Linear(d, d)
        self.out_proj = nn.Linear(d, len(cfg["id2label"]))

    def embed(self, ids, positions, norm):
        index = torch.cumsum(torch.ones_like(ids[0]), 0) - 1 + POSITION_OFFSET
        return norm(self.shared(ids) + positions(index).unsqueeze(0))

    def forward(self, input_ids, attention_mask):
        minimum = torch.finfo(torch.float32).min
        # [B, 1, 1, S]: 0 where a key is a token, the float minimum where it is padding.
        pad_mask = (1.0 - attention_mask[:, None, None, :].to(torch.float32)) * minimum
        h = self.embed(input_ids, self.encoder_positions, self.encoder_embedding_norm)
        for layer in self.encoder_layers:
            h = layer(h, pad_mask)
        # shift_tokens_right: the decoder starts with decoder_start_token_id and reads the ids one behind.
        start = torch.full_like(input_ids[:, :1], self.start_id)
        decoder_ids = torch.cat([start, input_ids[:, :-1]], dim=1)
        steps = torch.cumsum(torch.ones_like(input_ids[0]), 0)
        causal = (steps[None, :] > steps[:, None]).to(torch.float32) * minimum
        y = self.embed(decoder_ids, self.decoder_positions, self.decoder_embedding_norm)
        for layer in self.decoder_layers:
            y = layer(y, causal, h, pad_mask)
        # The row's last </s>: the largest position holding eos.
        positions = torch.cumsum(torch.ones_like(input_ids), 1) - 1
        last = torch.max(torch.where(input_ids == self.eos_id, positions, torch.zeros_like(positions)), dim=1).values
        rep = torch.gather(y, 1, last.view(-1, 1, 1).expand(-1, 1, y.shape[2])).squeeze(1)
        return self.out_proj(torch.tanh(self.dense(rep)))


def tiny_config(vocab_size, pad_id):
    """A tiny facebook/bart-large-mnli-shaped config.json (<s> 0, <pad> 1, </s> 2, as its tokenizer)."""
    return dict(
        model_type="bart",
        architectures=["BartForSequenceClassification"],
        vocab_size=vocab_size,
        pad_token_id=pad_id,
        bos_token_id=0,
        eos_token_id=2,
        decoder_start_token_id=2,
        forced_eos_token_id=2,
        d_model=32,
        encoder_layers=2,
        decoder_layers=2,
        encoder_attention_heads=4,
        decoder_attention_heads=4,
        encoder_ffn_dim=64,
        decoder_ffn_dim=64,
        activation_function="gelu",
        max_position_embeddings=128,
        scale_embedding=False,
        normalize_before=False,
    )
