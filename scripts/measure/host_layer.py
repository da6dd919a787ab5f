#!/usr/bin/env python3
"""Host time per launched kernel of an eager training step of GPT-style transformer layers
(forward and backward under autograd), on this machine's CUDA GPU: the layers are written op by
op as Megatron-style eager code would run them (no fusion, no torch.compile, no CUDA graphs),
kept small so that the GPU always waits for the host, and the kernels are counted with
torch.profiler.

Usage: python3 scripts/measure/host_layer.py > host_layer.txt   (needs PyTorch with CUDA)
"""
import statistics
import time

import torch
import torch.nn.functional as F
from torch.profiler import ProfilerActivity, profile


class Layer(torch.nn.Module):
    def __init__(self, h, heads):
        super().__init__()
        self.heads = heads
        self.ln1 = torch.nn.LayerNorm(h)
        self.qkv = torch.nn.Linear(h, 3 * h)
        self.proj = torch.nn.Linear(h, h)
        self.ln2 = torch.nn.LayerNorm(h)
        self.fc1 = torch.nn.Linear(h, 4 * h)
        self.fc2 = torch.nn.Linear(4 * h, h)

    def forward(self, x):  # x: [s, b, h]
        s, b, h = x.shape
        q, k, v = self.qkv(self.ln1(x)).chunk(3, dim=-1)
        shape = (s, b * self.heads, h // self.heads)
        q, k, v = (t.reshape(shape).transpose(0, 1) for t in (q, k, v))
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        a = a.transpose(0, 1).reshape(s, b, h)
        x = x + F.dropout(self.proj(a), 0.1)
        return x + F.dropout(self.fc2(F.gelu(self.fc1(self.ln2(x)))), 0.1)


def main():
    torch.manual_seed(0)
    dev = torch.device("cuda")
    h, heads, layers, s, b = 256, 4, 8, 128, 1
    model = torch.nn.Sequential(*[Layer(h, heads) for _ in range(layers)]).to(dev, torch.bfloat16)
    x = torch.randn(s, b, h, device=dev, dtype=torch.bfloat16, requires_grad=True)

    def step():
        model(x).float().sum().backward()

    for _ in range(10):
        step()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        step()
        torch.cuda.synchronize()
    kernels = sum(1 for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA)
    samples = []
    for _ in range(30):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        step()
        t1 = time.perf_counter()
        torch.cuda.synchronize()
        t2 = time.perf_counter()
        samples.append((t1 - t0, t2 - t0))
    host = statistics.median(t[0] for t in samples)
    total = statistics.median(t[1] for t in samples)
    print(f"{layers} layers, h {h}, seq {s}, micro-batch {b}, bf16, eager forward + backward")
    print(f"kernels per step (profiler): {kernels}, per layer: {kernels / layers:.1f}")
    print(f"host time per step: {host * 1e3:.3f} ms (until backward() returns), "
          f"to the GPU's end: {total * 1e3:.3f} ms")
    print(f"host us per kernel: {host / kernels * 1e6:.2f}; per layer: {host / layers * 1e3:.3f} ms")


if __name__ == "__main__":
    main()
