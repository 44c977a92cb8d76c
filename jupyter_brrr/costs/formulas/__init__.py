"""The cost formulas, one module per family of ops; each registers its formulas in
``costs.formula_registry`` where it defines them. Importing this package registers them all.

==================  ==========================================================================
``matmul``          mm, addmm, bmm, baddbmm, mv, dot, matmul, linear, scaled and int8 mm
``convolution``     every convolution op's argument layout, forward and backward
``attention``       scaled dot-product attention and its fused kernels' ops
``elementwise``     unary, binary, ternary ops and comparisons, FLOPs per output element
``reduction``       sum, mean, var, argmax, any ...: FLOPs per input element
``pooling``         max, average and adaptive pools
``normalisation``   layer, RMS, group and batch norms
``softmax``         softmax and log-softmax
``gathers``         embeddings and their bags, index_select, gather, scatters, index_put, NLL loss
``recurrent``       cuDNN's RNN, LSTM and GRU
``optimizers``      _foreach_* ops and the fused optimizers (from their kernels' launches
                    beyond 30 tensors)
``copies``          copies, casts, fills
``compiled``        torch.compile's generated kernels (estimates)
==================  ==========================================================================
"""

from . import (
    attention,
    compiled,
    convolution,
    copies,
    elementwise,
    gathers,
    matmul,
    normalisation,
    optimizers,
    pooling,
    recurrent,
    reduction,
    softmax,
)

__all__ = [
    "attention",
    "compiled",
    "convolution",
    "copies",
    "elementwise",
    "gathers",
    "matmul",
    "normalisation",
    "optimizers",
    "pooling",
    "recurrent",
    "reduction",
    "softmax",
]
