"""A one-rank job that trains a few steps and then aborts at interpreter exit, after its
script has returned: the teardown crash gloo's threads have caused in real jobs.

    abort_at_exit.py STEPS WHEN     (WHEN "exit": abort at exit; "now": abort before the trace)
"""

import atexit
import os
import sys

import torch
from torch import nn

steps, when = int(sys.argv[1]), sys.argv[2]
model = nn.Linear(32, 32)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
x = torch.randn(8, 32)
for step in range(steps):
    opt.zero_grad()
    model(x).sum().backward()
    opt.step()
    if when == "now" and step == 1:
        os.abort()  # inside the profiled steps: no trace is written
atexit.register(os.abort)
