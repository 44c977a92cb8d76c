"""A DDP training job on the CPU (gloo) where rank HEAVY does twice the work of the others: its
batch is twice as large, so every layer's forward and backward take twice as long. Recorded with
jupyter_brrr.record.job_profiler.

With MODE "joins", each step also begins with 6 all-reduces of a small tensor, before each of
which the other ranks sleep 5 ms: they arrive last there, 5 ms late, as often as the heavy rank
arrives last at DDP's bucketed all-reduces of the backward pass (one per layer, 6), much later.
The heavy rank is still the one that costs the others most.

    torchrun --nproc-per-node 2 ddp_twice.py OUT HEAVY [MODE]
"""

import sys
import time

import torch
import torch.distributed as dist
from torch import nn

from jupyter_brrr.record import job_profiler

out, heavy = sys.argv[1], int(sys.argv[2])
joins = len(sys.argv) > 3 and sys.argv[3] == "joins"
torch.set_num_threads(1)
dist.init_process_group("gloo")
rank = dist.get_rank()
torch.manual_seed(0)
model = nn.Sequential(*[nn.Linear(768, 768) for _ in range(6)])
x = torch.randn(1024 if rank == heavy else 512, 768)
flag = torch.zeros(1)
# One bucket per layer (a layer's 2.4 MB is over 2 MB): one all-reduce per layer.
ddp = nn.parallel.DistributedDataParallel(model, bucket_cap_mb=2)
opt = torch.optim.SGD(ddp.parameters(), lr=0.01)
with job_profiler(out, wait=1, warmup=1, active=3) as prof:
    for _ in range(5):
        if joins:
            for _ in range(6):
                if rank != heavy:
                    time.sleep(0.005)
                dist.all_reduce(flag)
        opt.zero_grad()
        ddp(x).pow(2).mean().backward()
        opt.step()
        prof.step()
dist.destroy_process_group()
