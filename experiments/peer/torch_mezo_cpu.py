"""What a user would run instead of zosched's CPU testbed: MeZO on PyTorch.

One MeZO ZO-SGD step exactly as MeZO's reference trainer takes it: the
parameters are perturbed in place, z drawn again from the step's seed each
time (+eps, -2 eps, +eps back, then the update -lr * g * z), on an
OPT-shaped pre-LN decoder with a tied head over the label words at the last
position (the model of experiments/peer/opt-peer-51m.pbtxt).

Run with Debian's interpreter and packages (python3-torch, which multiplies
through the BLAS alternative: install libopenblas0-pthread, the default
reference BLAS is about 10x slower), with OpenBLAS left to pick its kernel
and its pool held to the run's threads:

  env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE OPENBLAS_NUM_THREADS=1 \
      OMP_NUM_THREADS=1 /usr/bin/python3 torch_mezo_cpu.py --steps 5 --threads 1

Prints one line of KEY=VALUE fields after `torch VERSION`:
  threads       --threads
  blas          the BLAS torch was built against (its BLAS_INFO)
  blas_lib      the BLAS library this process loaded (none: none found)
  openblas_core the kernel OpenBLAS chose (openblas_get_corename(); none
                when the BLAS is not OpenBLAS)
  core_isa      that kernel's widest vector ISA: avx512, avx2, avx, sse, none
  cpu_isa       the CPU's widest of those that OpenBLAS has kernels for
  aten_cpu      the ISA of torch's own (non-BLAS) kernels
  gemm_gflops   an fp32 GEMM of the model's fc1 shape, (batch*seq x hidden)
                times (hidden x ffn), on --threads threads: 2 * batch *
                seq * hidden * ffn FLOPs over the median of 10 timed runs
  step_s        the median over --steps timed steps after two untimed ones
  tokens_per_s  2 * batch * seq / step_s (two forwards a step)
"""
import argparse
import ctypes
import re
import statistics
import time

import torch
from torch import nn


class DecoderBlock(nn.Module):
    """Pre-LN OPT block: causal multi-head attention, then a ReLU FFN of 4h."""

    def __init__(self, hidden, heads, ffn):
        super().__init__()
        self.heads = heads
        self.norm_attention = nn.LayerNorm(hidden)
        self.norm_ffn = nn.LayerNorm(hidden)
        self.q_proj, self.k_proj, self.v_proj, self.out_proj = (
            nn.Linear(hidden, hidden) for _ in range(4))
        self.fc1 = nn.Linear(hidden, ffn)
        self.fc2 = nn.Linear(ffn, hidden)

    def split_heads(self, x):
        batch, seq, hidden = x.shape
        return x.view(batch, seq, self.heads, hidden // self.heads).transpose(1, 2)

    def forward(self, x):
        batch, seq, hidden = x.shape
        y = self.norm_attention(x)
        q, k, v = (self.split_heads(p(y)) for p in (self.q_proj, self.k_proj, self.v_proj))
        scores = q @ k.transpose(-1, -2) * (hidden // self.heads) ** -0.5
        future = torch.ones(seq, seq, dtype=torch.bool).triu(1)
        attention = scores.masked_fill(future, float("-inf")).softmax(dim=-1) @ v
        x = x + self.out_proj(attention.transpose(1, 2).reshape(batch, seq, hidden))
        return x + self.fc2(torch.relu(self.fc1(self.norm_ffn(x))))


class OptClassifier(nn.Module):
    """Token and learned positions (OPT's offset of 2), the blocks, the final
    LayerNorm, and the tied head's label-word logits at the last token."""

    def __init__(self, vocab, hidden, layers, heads, ffn, seq):
        super().__init__()
        self.tokens = nn.Embedding(vocab, hidden)
        self.positions = nn.Embedding(seq + 2, hidden)
        self.blocks = nn.ModuleList(DecoderBlock(hidden, heads, ffn) for _ in range(layers))
        self.final_norm = nn.LayerNorm(hidden)

    def loss(self, ids, labels, label_words):
        x = self.tokens(ids) + self.positions(torch.arange(ids.shape[1]) + 2)
        for block in self.blocks:
            x = block(x)
        last = self.final_norm(x)[:, -1]
        logits = last @ self.tokens.weight[label_words].T
        return nn.functional.cross_entropy(logits, labels)


def add_scaled_normals(model, seed, scale):
    """θ += scale · z, z regenerated from `seed` (MeZO's in-place perturbation)."""
    torch.manual_seed(seed)
    for parameter in model.parameters():
        z = torch.normal(0.0, 1.0, size=parameter.shape)
        parameter.data.add_(z, alpha=scale)


# OpenBLAS's x86-64 kernels (openblas_get_corename(), lower case) by the
# widest vector ISA they use; any other kernel counts as sse.
CORE_ISA = {"skylakex": "avx512", "cooperlake": "avx512", "sapphirerapids": "avx512",
            "haswell": "avx2", "zen": "avx2", "sandybridge": "avx", "bulldozer": "avx",
            "piledriver": "avx", "steamroller": "avx", "excavator": "avx"}

# The /proc/cpuinfo flags each ISA needs for OpenBLAS's kernels, widest first.
ISA_FLAGS = (("avx512", {"avx512f", "avx512bw", "avx512dq", "avx512vl"}),
             ("avx2", {"avx2", "fma"}), ("avx", {"avx"}))


def cpu_isa():
    """The CPU's widest ISA of ISA_FLAGS, else sse."""
    with open("/proc/cpuinfo") as cpuinfo:
        flags = next((set(line.split(":", 1)[1].split()) for line in cpuinfo
                      if line.startswith("flags")), set())
    return next((isa for isa, needed in ISA_FLAGS if needed <= flags), "sse")


def blas_fields():
    """What multiplies in this process: the fields blas .. aten_cpu."""
    config = torch.__config__.show()
    with open("/proc/self/maps") as maps:
        libraries = [line.split()[-1] for line in maps if ".so" in line]
    openblas = next((path for path in libraries if "libopenblas" in path), None)
    core, isa = "none", "none"
    if openblas:
        corename = ctypes.CDLL(openblas).openblas_get_corename
        corename.restype = ctypes.c_char_p
        core = corename().decode()
        isa = CORE_ISA.get(core.lower(), "sse")
    blas_info = re.search(r"BLAS_INFO=(\w+)", config)
    aten = re.search(r"CPU capability usage: (\S+)", config)
    return {
        "blas": blas_info.group(1) if blas_info else "unknown",
        "blas_lib": openblas or next((path for path in libraries if "blas" in path), "none"),
        "openblas_core": core, "core_isa": isa, "cpu_isa": cpu_isa(),
        "aten_cpu": aten.group(1) if aten else "unknown",
    }


def gemm_gflops(rows, inner, columns):
    """GFLOP/s of the fp32 product (rows x inner) @ (inner x columns), as
    nn.Linear computes it: median of 10 timed runs after 2 untimed."""
    x, weight = torch.randn(rows, inner), torch.randn(columns, inner)
    seconds = []
    for _ in range(12):
        start = time.perf_counter()
        nn.functional.linear(x, weight)
        seconds.append(time.perf_counter() - start)
    return 2 * rows * inner * columns / statistics.median(seconds[2:]) / 1e9


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for name, default in (("hidden", 512), ("layers", 8), ("heads", 8), ("ffn", 2048),
                          ("vocab", 50272), ("seq", 64), ("batch", 16), ("steps", 5),
                          ("threads", 1)):
        parser.add_argument("--" + name, type=int, default=default)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    model = OptClassifier(args.vocab, args.hidden, args.layers, args.heads, args.ffn, args.seq)
    ids = torch.randint(0, args.vocab, (args.batch, args.seq))
    labels = torch.randint(0, 2, (args.batch,))
    label_words = torch.tensor([6587, 372])  # " terrible", " great"
    gflops = gemm_gflops(args.batch * args.seq, args.hidden, args.ffn)
    eps, lr = 1e-3, 1e-6
    seconds = []
    with torch.no_grad():
        for step in range(args.steps + 2):
            start = time.perf_counter()
            seed = 1000 + step
            add_scaled_normals(model, seed, eps)
            loss_plus = model.loss(ids, labels, label_words)
            add_scaled_normals(model, seed, -2 * eps)
            loss_minus = model.loss(ids, labels, label_words)
            add_scaled_normals(model, seed, eps)
            g = (loss_plus - loss_minus).item() / (2 * eps)
            add_scaled_normals(model, seed, -lr * g)
            seconds.append(time.perf_counter() - start)
    median = statistics.median(seconds[2:])
    fields = {"threads": args.threads, **blas_fields(), "gemm_gflops": f"{gflops:.1f}",
              "step_s": f"{median:.4f}",
              "tokens_per_s": f"{2 * args.batch * args.seq / median:.0f}"}
    print(f"torch {torch.__version__} " + " ".join(f"{k}={v}" for k, v in fields.items()))


if __name__ == "__main__":
    main()
