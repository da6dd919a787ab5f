#!/usr/bin/env python3
"""Host (CPU) time per framework operation on this machine's CUDA GPU: the time the Python
thread spends issuing an op, measured as TransformerEngine issue #2053 measured it (a batch of
calls enqueued after a synchronize, fewer than the launch queue holds, timed on the host).

Usage: python3 scripts/measure/host_ops.py > host_ops.txt   (needs PyTorch with CUDA)
Prints the CPU model, the library versions and, per op, the median over repeats of the host
microseconds per call. Nothing in the simulator reads this file; docs/calibration.md quotes
its output with the machine it ran on.
"""
import platform
import statistics
import subprocess
import time

import torch
import torch.nn.functional as F

BATCH = 200  # calls per timed batch: under the launch queue's 1,024 entries
REPEATS = 25


def host_us(fn, batch=BATCH, repeats=REPEATS, sync_each=False):
    for _ in range(20):
        fn()
    torch.cuda.synchronize()
    samples = []
    for _ in range(repeats):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(batch):
            fn()
        t1 = time.perf_counter()
        samples.append((t1 - t0) / batch * 1e6)
    torch.cuda.synchronize()
    return statistics.median(samples), min(samples)


def gpu_us(fn, batch=50):
    for _ in range(5):
        fn()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    torch.cuda.synchronize()
    start.record()
    for _ in range(batch):
        fn()
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) / batch * 1e3


def main():
    cpu = "?"
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
        for line in out.splitlines():
            if line.startswith("Model name"):
                cpu = line.split(":", 1)[1].strip()
    except OSError:
        pass
    print(f"cpu: {cpu}")
    print(f"python {platform.python_version()}, torch {torch.__version__}, cuda {torch.version.cuda}, "
          f"gpu {torch.cuda.get_device_name(0)}")
    dev = torch.device("cuda")
    bf = torch.bfloat16
    rows = []

    one = torch.zeros(1, device=dev)
    rows.append(("elementwise add_ on 1 element (one kernel)", lambda: one.add_(1)))
    rows.append(("torch.empty((1024,), cuda) (no kernel)", lambda: torch.empty((1024,), device=dev)))
    big = torch.zeros(16 * 64, 128, device=dev, dtype=bf)
    rows.append(("torch.split into 16 views (no kernel)", lambda: torch.split(big, 64)))
    a = torch.randn(128, 128, device=dev, dtype=bf)
    rows.append(("torch.mm 128x128x128 bf16 (one cuBLAS GEMM)", lambda: torch.mm(a, a)))
    x = torch.randn(8192, 2048, device=dev, dtype=bf)
    lin = torch.nn.Linear(2048, 2048, device=dev, dtype=bf)
    with torch.no_grad():
        rows.append(("nn.Linear forward, 8192 x 2048 -> 2048 bf16, no grad (TE #2053's shape)", lambda: lin(x)))
    xs = torch.randn(64, 2048, device=dev, dtype=bf)
    ws = [torch.randn(1024, 2048, device=dev, dtype=bf) for _ in range(16)]
    chunks = torch.split(torch.randn(16 * 64, 2048, device=dev, dtype=bf), 64)

    def expert_loop():
        for c, w in zip(chunks, ws):
            F.linear(c, w)
    s2 = torch.cuda.Stream()
    ev = torch.cuda.Event()

    def record_wait():
        ev.record()
        s2.wait_event(ev)
    rows.append(("event record + other stream's wait_event", record_wait))
    counts = torch.arange(16, device=dev, dtype=torch.int64)

    def dtoh_sync():
        counts.add_(0)
        counts.tolist()
    xg = torch.randn(64, 2048, device=dev, dtype=bf, requires_grad=True)
    wg = torch.randn(2048, 2048, device=dev, dtype=bf, requires_grad=True)

    def fwd_bwd():
        y = F.linear(xg, wg)
        y.sum().backward()

    print(f"{'op':75s} {'host us/call median':>20s} {'min':>8s}")
    for name, fn in rows:
        med, mn = host_us(fn)
        print(f"{name:75s} {med:20.2f} {mn:8.2f}")
    med, mn = host_us(expert_loop, batch=20)
    print(f"{'16 x F.linear over split chunks (a grouped MLP as a loop), per GEMM':75s} {med / 16:20.2f} {mn / 16:8.2f}")
    med, mn = host_us(dtoh_sync, batch=50)
    print(f"{'one kernel + .tolist() of 16 int64 (device-to-host copy and wait)':75s} {med:20.2f} {mn:8.2f}")
    med, mn = host_us(fwd_bwd, batch=20)
    print(f"{'F.linear 64x2048x2048 forward + sum + backward (autograd), whole':75s} {med:20.2f} {mn:8.2f}")
    with torch.no_grad():
        print(f"gpu time of the nn.Linear forward above: {gpu_us(lambda: lin(x)):.2f} us")
    print(f"gpu time of torch.mm 128^3: {gpu_us(lambda: torch.mm(a, a)):.2f} us")


if __name__ == "__main__":
    main()
