"""Piper's PyTorch front end.

    import piper
    with piper.annotate("PP"):      # tag a pipeline stage, as Piper does
        x = block(x)
    traced = piper.trace(model, (idx,), loss=F.cross_entropy, loss_inputs=(y,))
    traced.write("model.mlir"); traced.write_params("params.txt")

See docs/YourModel.md.
"""

from .annotation import annotate
from .lower import TraceError
from .trace import Placement, TracedModel, trace

__all__ = ["annotate", "trace", "Placement", "TracedModel", "TraceError"]
