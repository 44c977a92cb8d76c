"""The model zoo: workloads of many kinds, built from code with random weights (no downloads).

Each entry builds a model on a device and returns ``step()``, one call of the workload (a forward,
or a whole training step). Used by ``bench/zoo.py`` (coverage of the cost model on every model),
and to record traces on the H200. Models that need torchvision, timm or transformers are skipped
where those are not installed (the H200 machine has all three).

Sizes are chosen so that one step takes a few milliseconds to a few tens of milliseconds on an
H200: large enough to be GPU-bound where the model is, small enough that the zoo runs in minutes.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch import nn

Step = Callable[[], object]
MODELS: dict[str, Callable[[str], Step]] = {}
# What each model is, in words (the zoo's table prints it).
ABOUT: dict[str, str] = {}


def model(about: str) -> Callable[[Callable[[str], Step]], Callable[[str], Step]]:
    def register(build: Callable[[str], Step]) -> Callable[[str], Step]:
        MODELS[build.__name__] = build
        ABOUT[build.__name__] = about
        return build

    return register


def _no_grad(fn: Step) -> Step:
    def step() -> object:
        with torch.no_grad():
            return fn()

    return step


def _autocast(fn: Step, dtype: torch.dtype, device: str) -> Step:
    def step() -> object:
        with torch.autocast(device_type=device.split(":")[0], dtype=dtype):
            return fn()

    return step


def _train(net: nn.Module, loss_of: Callable[[], torch.Tensor], opt: torch.optim.Optimizer) -> Step:
    def step() -> object:
        opt.zero_grad(set_to_none=True)
        loss = loss_of()
        loss.backward()
        opt.step()
        return loss.detach()

    return step


# --- CNNs ----------------------------------------------------------------------------------------


@model("torchvision ResNet-50 inference, fp32 (cuDNN's default TF32), batch 32")
def resnet50_fp32_infer(device: str) -> Step:
    import torchvision

    net = torchvision.models.resnet50().to(device).eval()
    x = torch.randn(32, 3, 224, 224, device=device)
    return _no_grad(lambda: net(x))


@model("torchvision ResNet-50 training step, bf16 autocast, SGD, batch 64")
def resnet50_train_amp(device: str) -> Step:
    import torchvision

    net = torchvision.models.resnet50().to(device).to(memory_format=torch.channels_last)
    x = torch.randn(64, 3, 224, 224, device=device).to(memory_format=torch.channels_last)
    y = torch.randint(0, 1000, (64,), device=device)
    opt = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)

    def loss() -> torch.Tensor:
        with torch.autocast(device_type="cuda", dtype=torch.bfloat16):
            return F.cross_entropy(net(x), y)

    return _train(net, loss, opt)


@model("ResNet-18 training step, fp32 channels_last (PyTorch defaults: TF32 convolutions), SGD")
def resnet18_train_fp32(device: str) -> Step:
    import torchvision

    net = torchvision.models.resnet18().to(device).to(memory_format=torch.channels_last)
    x = torch.randn(64, 3, 224, 224, device=device).to(memory_format=torch.channels_last)
    y = torch.randint(0, 1000, (64,), device=device)
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    return _train(net, lambda: F.cross_entropy(net(x), y), opt)


@model("torchvision MobileNetV3-Large inference, fp16 (depthwise convolutions), batch 64")
def mobilenet_v3_fp16(device: str) -> Step:
    import torchvision

    net = torchvision.models.mobilenet_v3_large().to(device).half().eval()
    x = torch.randn(64, 3, 224, 224, device=device, dtype=torch.half)
    return _no_grad(lambda: net(x))


@model("timm EfficientNet-B0 inference, bf16 autocast (depthwise, SiLU, squeeze-excite)")
def efficientnet_b0_amp(device: str) -> Step:
    import timm

    net = timm.create_model("efficientnet_b0", pretrained=False).to(device).eval()
    x = torch.randn(64, 3, 224, 224, device=device)
    return _no_grad(_autocast(lambda: net(x), torch.bfloat16, device))


@model("timm ConvNeXt-Tiny inference, fp32 channels_last (7x7 depthwise, LayerNorm, GELU)")
def convnext_tiny_fp32(device: str) -> Step:
    import timm

    net = timm.create_model("convnext_tiny", pretrained=False).to(device).eval()
    net = net.to(memory_format=torch.channels_last)
    x = torch.randn(32, 3, 224, 224, device=device).to(memory_format=torch.channels_last)
    return _no_grad(lambda: net(x))


@model("torchvision R3D-18 video inference, fp16 (3-D convolutions), 8 clips of 16 frames")
def r3d_18_fp16(device: str) -> Step:
    import torchvision

    net = torchvision.models.video.r3d_18().to(device).half().eval()
    x = torch.randn(8, 3, 16, 112, 112, device=device, dtype=torch.half)
    return _no_grad(lambda: net(x))


@model("convolutional autoencoder, fp32, ConvTranspose2d upsampling, training step, Adam")
def conv_autoencoder_train(device: str) -> Step:
    net = nn.Sequential(
        nn.Conv2d(3, 64, 4, 2, 1),
        nn.BatchNorm2d(64),
        nn.ReLU(),
        nn.Conv2d(64, 128, 4, 2, 1),
        nn.BatchNorm2d(128),
        nn.ReLU(),
        nn.ConvTranspose2d(128, 64, 4, 2, 1),
        nn.BatchNorm2d(64),
        nn.ReLU(),
        nn.ConvTranspose2d(64, 3, 4, 2, 1),
        nn.Sigmoid(),
    ).to(device)
    x = torch.rand(64, 3, 128, 128, device=device)
    opt = torch.optim.Adam(net.parameters(), lr=1e-3)
    return _train(net, lambda: F.mse_loss(net(x), x), opt)


# --- transformers --------------------------------------------------------------------------------


class Block(nn.Module):
    """A GPT-2 style block: pre-LayerNorm, causal SDPA, GELU MLP."""

    def __init__(self, d: int, heads: int) -> None:
        super().__init__()
        self.heads = heads
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.fc, self.out = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=2)
        q, k, v = (z.view(b, t, self.heads, d // self.heads).transpose(1, 2) for z in (q, k, v))
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(a.transpose(1, 2).reshape(b, t, d))
        return x + self.out(F.gelu(self.fc(self.ln2(x))))


class GPT(nn.Module):
    def __init__(self, layers: int = 6, d: int = 768, heads: int = 12, vocab: int = 50304) -> None:
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        self.pos = nn.Embedding(2048, d)
        self.blocks = nn.ModuleList(Block(d, heads) for _ in range(layers))
        self.ln = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab, bias=False)

    def forward(self, idx: torch.Tensor) -> torch.Tensor:
        x = self.emb(idx) + self.pos(torch.arange(idx.shape[1], device=idx.device))
        for block in self.blocks:
            x = block(x)
        return self.head(self.ln(x))


@model("GPT (6 blocks, d=768) forward, bf16 weights, causal SDPA, batch 8 x 1024")
def gpt_fwd_bf16(device: str) -> Step:
    net = GPT().to(device, torch.bfloat16).eval()
    idx = torch.randint(0, 50304, (8, 1024), device=device)
    return _no_grad(lambda: net(idx))


@model("GPT (6 blocks) training step, bf16 autocast, AdamW (foreach, PyTorch's default)")
def gpt_train_adamw(device: str) -> Step:
    net = GPT().to(device)
    idx = torch.randint(0, 50304, (8, 512), device=device)
    opt = torch.optim.AdamW(net.parameters(), lr=1e-4)

    def loss() -> torch.Tensor:
        with torch.autocast(device_type="cuda", dtype=torch.bfloat16):
            logits = net(idx)
        return F.cross_entropy(logits.float().view(-1, logits.shape[-1]), idx.view(-1))

    return _train(net, loss, opt)


@model("GPT (6 blocks) training step, bf16 weights, fused AdamW")
def gpt_train_fused_adamw(device: str) -> Step:
    net = GPT().to(device, torch.bfloat16)
    idx = torch.randint(0, 50304, (8, 512), device=device)
    opt = torch.optim.AdamW(net.parameters(), lr=1e-4, fused=True)

    def loss() -> torch.Tensor:
        logits = net(idx)
        return F.cross_entropy(logits.view(-1, logits.shape[-1]), idx.view(-1))

    return _train(net, loss, opt)


@model("nn.TransformerEncoder (BERT-base size) inference, fp32, no_grad (the fast path)")
def encoder_fastpath_fp32(device: str) -> Step:
    layer = nn.TransformerEncoderLayer(768, 12, 3072, batch_first=True)
    net = nn.TransformerEncoder(layer, 6, enable_nested_tensor=False).to(device).eval()
    x = torch.randn(16, 256, 768, device=device)
    return _no_grad(lambda: net(x))


@model("nn.TransformerEncoder training step, fp16 autocast, Adam without foreach (for loop)")
def encoder_train_fp16(device: str) -> Step:
    layer = nn.TransformerEncoderLayer(512, 8, 2048, batch_first=True, norm_first=True)
    net = nn.TransformerEncoder(layer, 4).to(device)
    x = torch.randn(16, 256, 512, device=device)
    opt = torch.optim.Adam(net.parameters(), lr=1e-4, foreach=False)
    scaler = torch.amp.GradScaler("cuda")

    def step() -> object:
        opt.zero_grad(set_to_none=True)
        with torch.autocast(device_type="cuda", dtype=torch.float16):
            loss = net(x).float().pow(2).mean()
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        return loss.detach()

    return step


@model("Hugging Face GPT-2 small (from its config) forward, fp16, batch 8 x 512")
def hf_gpt2_fp16(device: str) -> Step:
    from transformers import GPT2Config, GPT2LMHeadModel

    net = GPT2LMHeadModel(GPT2Config()).to(device, torch.float16).eval()
    idx = torch.randint(0, 50257, (8, 512), device=device)
    return _no_grad(lambda: net(input_ids=idx).logits)


@model("Hugging Face BERT-base (from its config) forward, fp32 (TF32 matmuls off: the default)")
def hf_bert_fp32(device: str) -> Step:
    from transformers import BertConfig, BertModel

    net = BertModel(BertConfig()).to(device).eval()
    idx = torch.randint(0, 30522, (16, 256), device=device)
    return _no_grad(lambda: net(input_ids=idx).last_hidden_state)


@model("Hugging Face T5-small (from its config) encoder-decoder forward, bf16")
def hf_t5_bf16(device: str) -> Step:
    from transformers import T5Config, T5ForConditionalGeneration

    net = T5ForConditionalGeneration(T5Config()).to(device, torch.bfloat16).eval()
    src = torch.randint(0, 32128, (16, 256), device=device)
    tgt = torch.randint(0, 32128, (16, 128), device=device)
    return _no_grad(lambda: net(input_ids=src, decoder_input_ids=tgt).logits)


@model("torchvision ViT-B/16 inference, bf16 autocast, batch 32")
def vit_b16_amp(device: str) -> Step:
    import torchvision

    net = torchvision.models.vit_b_16().to(device).eval()
    x = torch.randn(32, 3, 224, 224, device=device)
    return _no_grad(_autocast(lambda: net(x), torch.bfloat16, device))


class RMSNorm(nn.Module):
    def __init__(self, d: int) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * self.weight


def _rope(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    x1, x2 = x.chunk(2, dim=-1)
    return x * cos + torch.cat((-x2, x1), dim=-1) * sin


class LlamaBlock(nn.Module):
    """RMSNorm, rotary embeddings, grouped-query attention, SwiGLU."""

    def __init__(
        self, d: int = 2048, heads: int = 16, kv_heads: int = 4, hidden: int = 5632
    ) -> None:
        super().__init__()
        self.heads, self.kv_heads, self.hd = heads, kv_heads, d // heads
        self.norm1, self.norm2 = RMSNorm(d), RMSNorm(d)
        self.q = nn.Linear(d, d, bias=False)
        self.kv = nn.Linear(d, 2 * kv_heads * self.hd, bias=False)
        self.o = nn.Linear(d, d, bias=False)
        self.gate = nn.Linear(d, hidden, bias=False)
        self.up = nn.Linear(d, hidden, bias=False)
        self.down = nn.Linear(hidden, d, bias=False)

    def forward(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
        b, t, d = x.shape
        h = self.norm1(x)
        q = self.q(h).view(b, t, self.heads, self.hd).transpose(1, 2)
        k, v = self.kv(h).view(b, t, 2, self.kv_heads, self.hd).permute(2, 0, 3, 1, 4)
        q, k = _rope(q, cos, sin), _rope(k, cos, sin)
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
        x = x + self.o(a.transpose(1, 2).reshape(b, t, d))
        h = self.norm2(x)
        return x + self.down(F.silu(self.gate(h)) * self.up(h))


def _rope_tables(t: int, hd: int, device: str) -> tuple[torch.Tensor, torch.Tensor]:
    inv = 1.0 / (10000 ** (torch.arange(0, hd, 2, device=device).float() / hd))
    angles = torch.outer(torch.arange(t, device=device).float(), inv)
    angles = torch.cat((angles, angles), dim=-1)
    return angles.cos().to(torch.bfloat16), angles.sin().to(torch.bfloat16)


@model("Llama-style blocks (4; RMSNorm, RoPE, GQA SDPA, SwiGLU) forward, bf16, batch 4 x 2048")
def llama_blocks_bf16(device: str) -> Step:
    blocks = nn.ModuleList(LlamaBlock() for _ in range(4)).to(device, torch.bfloat16).eval()
    x = torch.randn(4, 2048, 2048, device=device, dtype=torch.bfloat16)
    cos, sin = _rope_tables(2048, 128, device)

    def step() -> object:
        h = x
        for block in blocks:
            h = block(h, cos, sin)
        return h

    return _no_grad(step)


@model("KV-cache decode step: one new token per sequence, 8 x 4096 cached, Llama block, bf16")
def kv_cache_decode_bf16(device: str) -> Step:
    block = LlamaBlock().to(device, torch.bfloat16).eval()
    b, cached, hd = 8, 4096, 128
    k_cache = torch.randn(b, 4, cached + 1, hd, device=device, dtype=torch.bfloat16)
    v_cache = torch.randn_like(k_cache)
    x = torch.randn(b, 1, 2048, device=device, dtype=torch.bfloat16)
    cos, sin = (z[-1:] for z in _rope_tables(cached + 1, hd, device))

    def step() -> object:
        h = block.norm1(x)
        q = block.q(h).view(b, 1, 16, hd).transpose(1, 2)
        k, v = block.kv(h).view(b, 1, 2, 4, hd).permute(2, 0, 3, 1, 4)
        k_cache[:, :, cached : cached + 1] = _rope(k, cos, sin)
        v_cache[:, :, cached : cached + 1] = v
        a = F.scaled_dot_product_attention(_rope(q, cos, sin), k_cache, v_cache, enable_gqa=True)
        y = x + block.o(a.transpose(1, 2).reshape(b, 1, 2048))
        h = block.norm2(y)
        return y + block.down(F.silu(block.gate(h)) * block.up(h))

    return _no_grad(step)


@model(
    "scaled_dot_product_attention, each backend: flash (bf16 causal), efficient (fp32, mask), math (fp32), cuDNN (bf16)"
)
def sdpa_backends(device: str) -> Step:
    from torch.nn.attention import SDPBackend, sdpa_kernel

    q16 = torch.randn(8, 16, 2048, 128, device=device, dtype=torch.bfloat16)
    q32 = torch.randn(4, 16, 1024, 64, device=device)
    mask = torch.rand(1024, 1024, device=device) > 0.1

    def step() -> object:
        with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
            a = F.scaled_dot_product_attention(q16, q16, q16, is_causal=True)
        with sdpa_kernel(SDPBackend.EFFICIENT_ATTENTION):
            b = F.scaled_dot_product_attention(q32, q32, q32, attn_mask=mask)
        with sdpa_kernel(SDPBackend.MATH):
            c = F.scaled_dot_product_attention(q32, q32, q32)
        with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
            d = F.scaled_dot_product_attention(q16, q16, q16)
        return a, b, c, d

    return _no_grad(step)


@model("attention training step (SDPA forward and backward), bf16, 8 x 16 heads x 2048")
def sdpa_train_bf16(device: str) -> Step:
    q, k, v = (
        torch.randn(8, 16, 2048, 128, device=device, dtype=torch.bfloat16, requires_grad=True)
        for _ in range(3)
    )

    def step() -> object:
        out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        out.sum().backward()
        return out.detach()

    return step


@model("FlexAttention (compiled) with a sliding-window causal mask, bf16")
def flex_attention_bf16(device: str) -> Step:
    from torch.nn.attention.flex_attention import create_block_mask, flex_attention

    def sliding(b, h, q_idx, kv_idx):
        return (q_idx >= kv_idx) & (q_idx - kv_idx < 512)

    mask = create_block_mask(sliding, None, None, 2048, 2048, device=device)
    flex = torch.compile(flex_attention)
    q = torch.randn(8, 16, 2048, 128, device=device, dtype=torch.bfloat16)
    return _no_grad(lambda: flex(q, q, q, block_mask=mask))


class MoE(nn.Module):
    """Top-2 routing over 8 experts, tokens gathered per expert and scattered back."""

    def __init__(self, d: int = 1024, experts: int = 8, hidden: int = 4096) -> None:
        super().__init__()
        self.router = nn.Linear(d, experts, bias=False)
        self.w1 = nn.Parameter(torch.randn(experts, d, hidden) * 0.02)
        self.w2 = nn.Parameter(torch.randn(experts, hidden, d) * 0.02)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        tokens = x.view(-1, x.shape[-1])
        weights, chosen = self.router(tokens).softmax(-1).topk(2, dim=-1)
        out = torch.zeros_like(tokens)
        for e in range(self.w1.shape[0]):
            rows, slot = torch.where(chosen == e)
            h = F.gelu(tokens.index_select(0, rows) @ self.w1[e]) @ self.w2[e]
            out.index_add_(0, rows, h * weights[rows, slot, None])
        return out.view_as(x)


@model("mixture of experts layer (8 experts, top-2), bf16 forward, 8192 tokens")
def moe_bf16(device: str) -> Step:
    net = MoE().to(device, torch.bfloat16).eval()
    x = torch.randn(8, 1024, 1024, device=device, dtype=torch.bfloat16)
    return _no_grad(lambda: net(x))


# --- recurrent, embeddings, recommendation --------------------------------------------------------


@model("2-layer nn.GRU forward, fp32, batch 64 x 256 steps, hidden 512 (cuDNN)")
def gru_fwd(device: str) -> Step:
    net = nn.GRU(256, 512, num_layers=2, batch_first=True).to(device).eval()
    x = torch.randn(64, 256, 256, device=device)
    return _no_grad(lambda: net(x)[0])


@model("2-layer nn.LSTM training step, fp32, SGD (cuDNN forward and backward)")
def lstm_train(device: str) -> Step:
    net = nn.LSTM(256, 512, num_layers=2, batch_first=True).to(device)
    head = nn.Linear(512, 10).to(device)
    x = torch.randn(64, 128, 256, device=device)
    y = torch.randint(0, 10, (64,), device=device)
    opt = torch.optim.SGD([*net.parameters(), *head.parameters()], lr=0.1)
    return _train(net, lambda: F.cross_entropy(head(net(x)[0][:, -1]), y), opt)


@model("nn.EmbeddingBag lookup: 4M x 128 table, 65536 bags of 32 indices, sum mode")
def embedding_bag(device: str) -> Step:
    bag = nn.EmbeddingBag(4_000_000, 128, mode="sum").to(device)
    idx = torch.randint(0, 4_000_000, (65536 * 32,), device=device)
    offsets = torch.arange(0, 65536 * 32, 32, device=device)
    return _no_grad(lambda: bag(idx, offsets))


class DLRM(nn.Module):
    """A DLRM-style recommender: embedding-bag tables, bottom and top MLPs, dot interactions."""

    def __init__(self, tables: int = 8, rows: int = 1_000_000, d: int = 64) -> None:
        super().__init__()
        self.tables = nn.ModuleList(nn.EmbeddingBag(rows, d, mode="sum") for _ in range(tables))
        self.bottom = nn.Sequential(nn.Linear(13, 256), nn.ReLU(), nn.Linear(256, d), nn.ReLU())
        n = tables + 1
        self.top = nn.Sequential(nn.Linear(n * (n - 1) // 2 + d, 512), nn.ReLU(), nn.Linear(512, 1))

    def forward(
        self, dense: torch.Tensor, sparse: list[torch.Tensor], offsets: torch.Tensor
    ) -> torch.Tensor:
        x = self.bottom(dense)
        feats = torch.stack(
            [x, *(t(s, offsets) for t, s in zip(self.tables, sparse, strict=True))], dim=1
        )
        inter = torch.bmm(feats, feats.transpose(1, 2))
        i, j = torch.triu_indices(feats.shape[1], feats.shape[1], 1, device=feats.device)
        return self.top(torch.cat([x, inter[:, i, j]], dim=1))


@model("DLRM-style recommender training step: 8 embedding-bag tables of 1M rows, MLPs, SGD")
def dlrm_train(device: str) -> Step:
    net = DLRM().to(device)
    batch, per_bag = 8192, 16
    dense = torch.randn(batch, 13, device=device)
    sparse = [torch.randint(0, 1_000_000, (batch * per_bag,), device=device) for _ in range(8)]
    offsets = torch.arange(0, batch * per_bag, per_bag, device=device)
    y = torch.rand(batch, 1, device=device)
    opt = torch.optim.SGD(net.parameters(), lr=0.01)
    return _train(
        net, lambda: F.binary_cross_entropy_with_logits(net(dense, sparse, offsets), y), opt
    )


@model("speech front end: Conv1d stack and a bidirectional GRU, fp16 autocast forward")
def speech_conv_gru(device: str) -> Step:
    convs = nn.Sequential(
        nn.Conv1d(80, 256, 5, padding=2), nn.GELU(), nn.Conv1d(256, 256, 5, stride=2, padding=2)
    ).to(device)
    gru = nn.GRU(256, 256, batch_first=True, bidirectional=True).to(device)
    x = torch.randn(32, 80, 1024, device=device)

    def run() -> object:
        h = convs(x).transpose(1, 2)
        return gru(h)[0]

    return _no_grad(_autocast(run, torch.float16, device))


# --- diffusion -----------------------------------------------------------------------------------


class ResAttnBlock(nn.Module):
    """A diffusion UNet block: GroupNorm, SiLU, 3x3 convs with a time embedding, self-attention
    over the pixels, and a nearest-neighbour upsample."""

    def __init__(self, c: int = 320, t_dim: int = 1280) -> None:
        super().__init__()
        self.norm1, self.norm2, self.norm3 = (nn.GroupNorm(32, c) for _ in range(3))
        self.conv1, self.conv2 = nn.Conv2d(c, c, 3, padding=1), nn.Conv2d(c, c, 3, padding=1)
        self.time = nn.Linear(t_dim, c)
        self.attn = nn.MultiheadAttention(c, 8, batch_first=True)
        self.up = nn.Conv2d(c, c, 3, padding=1)

    def forward(self, x: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        h = self.conv1(F.silu(self.norm1(x))) + self.time(F.silu(t))[:, :, None, None]
        x = x + self.conv2(F.silu(self.norm2(h)))
        b, c, hh, ww = x.shape
        s = self.norm3(x).flatten(2).transpose(1, 2)
        x = x + self.attn(s, s, s, need_weights=False)[0].transpose(1, 2).view(b, c, hh, ww)
        return self.up(F.interpolate(x, scale_factor=2.0, mode="nearest"))


@model(
    "diffusion UNet block (GroupNorm, SiLU, convs, self-attention, upsample), fp16, 8 x 320 x 32 x 32"
)
def unet_block_fp16(device: str) -> Step:
    net = ResAttnBlock().to(device, torch.float16).eval()
    x = torch.randn(8, 320, 32, 32, device=device, dtype=torch.float16)
    t = torch.randn(8, 1280, device=device, dtype=torch.float16)
    return _no_grad(lambda: net(x, t))


# --- small, overhead-bound, low precision ---------------------------------------------------------


@model("20 x Linear(64, 64) with ReLU, batch 8, fp32 (launch-bound)")
def tiny_mlp(device: str) -> Step:
    layers = []
    for _ in range(20):
        layers += [nn.Linear(64, 64), nn.ReLU()]
    net = nn.Sequential(*layers).to(device).eval()
    x = torch.randn(8, 64, device=device)
    return _no_grad(lambda: net(x))


@model("fp8 (e4m3) matmuls through torch._scaled_mm, 8192 x 8192 x 8192, bf16 output")
def fp8_scaled_mm(device: str) -> Step:
    a = torch.randn(8192, 8192, device=device).to(torch.float8_e4m3fn)
    b = torch.randn(8192, 8192, device=device).to(torch.float8_e4m3fn).t()
    one = torch.ones((), device=device)
    return lambda: torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=torch.bfloat16)


@model("normalisation and elementwise chain: LayerNorm, GELU, dropout, residual add, bf16")
def norm_elementwise_bf16(device: str) -> Step:
    ln = nn.LayerNorm(4096).to(device, torch.bfloat16)
    x = torch.randn(8192, 4096, device=device, dtype=torch.bfloat16)
    return _no_grad(lambda: x + F.dropout(F.gelu(ln(x)), 0.1))


# --- compiled ------------------------------------------------------------------------------------


@model("GPT (6 blocks) forward under torch.compile (Inductor), bf16")
def gpt_fwd_compiled(device: str) -> Step:
    net = torch.compile(GPT().to(device, torch.bfloat16).eval())
    idx = torch.randint(0, 50304, (8, 1024), device=device)
    return _no_grad(lambda: net(idx))


@model("ResNet-18 training step under torch.compile, bf16 autocast (CompiledFunctionBackward)")
def resnet18_train_compiled(device: str) -> Step:
    import torchvision

    net = torchvision.models.resnet18().to(device).to(memory_format=torch.channels_last)
    fwd = torch.compile(net)
    x = torch.randn(64, 3, 224, 224, device=device).to(memory_format=torch.channels_last)
    y = torch.randint(0, 1000, (64,), device=device)
    opt = torch.optim.SGD(net.parameters(), lr=0.1)

    def loss() -> torch.Tensor:
        with torch.autocast(device_type="cuda", dtype=torch.bfloat16):
            return F.cross_entropy(fwd(x), y)

    return _train(net, loss, opt)


@model("20 x Linear(64, 64) MLP under torch.compile(mode='reduce-overhead') (CUDA graphs)")
def tiny_mlp_reduce_overhead(device: str) -> Step:
    layers = []
    for _ in range(20):
        layers += [nn.Linear(64, 64), nn.ReLU()]
    net = torch.compile(nn.Sequential(*layers).to(device).eval(), mode="reduce-overhead")
    x = torch.randn(8, 64, device=device)
    return _no_grad(lambda: net(x))


@model("Llama-style block under torch.compile, bf16, batch 4 x 2048")
def llama_block_compiled(device: str) -> Step:
    block = LlamaBlock().to(device, torch.bfloat16).eval()
    fn = torch.compile(block)
    x = torch.randn(4, 2048, 2048, device=device, dtype=torch.bfloat16)
    cos, sin = _rope_tables(2048, 128, device)
    return _no_grad(lambda: fn(x, cos, sin))


# Compiled models take most of the zoo's time (Inductor); they run last so that a time budget
# cuts them first.
COMPILED = (
    "flex_attention_bf16",
    "gpt_fwd_compiled",
    "resnet18_train_compiled",
    "tiny_mlp_reduce_overhead",
    "llama_block_compiled",
)


def ordered() -> list[str]:
    return [n for n in MODELS if n not in COMPILED] + [n for n in MODELS if n in COMPILED]


def math_mode() -> dict:
    """PyTorch's settings that decide which units a float32 matmul or convolution runs on."""
    return {
        "cudnn_allow_tf32": torch.backends.cudnn.allow_tf32,
        "matmul_allow_tf32": torch.backends.cuda.matmul.allow_tf32,
        "float32_matmul_precision": torch.get_float32_matmul_precision(),
        "fp16_reduced_precision_reduction": torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction,
        "bf16_reduced_precision_reduction": torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction,
    }
