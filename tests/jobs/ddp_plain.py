"""A DDP job with no profiler code of its own, for run_job (which steps its profiler at each
optimizer.step()). Rank SLOW sleeps SECONDS before each forward; STEPS training steps.

    ddp_plain.py SLOW SECONDS STEPS      (SLOW "fail": raise before doing anything)
"""

import sys
import time

import torch
import torch.distributed as dist
from torch import nn

if sys.argv[1] == "fail":
    raise RuntimeError("failing on purpose, before init_process_group")
slow, delay, steps = int(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3])
dist.init_process_group("gloo")
rank = dist.get_rank()
torch.manual_seed(0)
ddp = nn.parallel.DistributedDataParallel(nn.Sequential(*[nn.Linear(128, 128) for _ in range(3)]))
opt = torch.optim.SGD(ddp.parameters(), lr=0.01)
x = torch.randn(16, 128)
for _ in range(steps):
    opt.zero_grad()
    if rank == slow:
        time.sleep(delay)
    ddp(x).sum().backward()
    opt.step()
dist.destroy_process_group()
