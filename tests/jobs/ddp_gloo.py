"""A DDP training job on the CPU (gloo) that records itself with jupyter_brrr.record.job_profiler;
rank SLOW is slowed on purpose: SECONDS of sleep in the backward pass of each of its 4 layers.

    torchrun --nproc-per-node 4 ddp_gloo.py OUT SLOW SECONDS
"""

import sys
import time

import torch
import torch.distributed as dist
from torch import nn

from jupyter_brrr.record import job_profiler

out, slow, delay = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
dist.init_process_group("gloo")
rank = dist.get_rank()
torch.manual_seed(0)
model = nn.Sequential(*[nn.Linear(256, 256) for _ in range(4)])
if rank == slow:
    for layer in model:
        layer.register_full_backward_hook(lambda *_: time.sleep(delay))
# One bucket per layer (a layer's 263 kB is over 0.25 MB): one all-reduce per layer.
ddp = nn.parallel.DistributedDataParallel(model, bucket_cap_mb=0.25)
opt = torch.optim.SGD(ddp.parameters(), lr=0.01)
x = torch.randn(32, 256)
known = torch.zeros(250_000)  # 1 MB all-reduced once a step: a collective of known size
with job_profiler(out, wait=1, warmup=1, active=3) as prof:
    for _ in range(5):
        opt.zero_grad()
        ddp(x).pow(2).mean().backward()
        opt.step()
        dist.all_reduce(known)
        prof.step()
dist.destroy_process_group()
