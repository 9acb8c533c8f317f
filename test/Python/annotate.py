# REQUIRES: torch
# piper.annotate: blocks tag what is traced inside them; PP and EP take the
# next index of their tag in trace order unless given one; blocks nest (an
# EP block inside PP = 1 gives both tags); ops outside every block join the
# chunk before them (or the first); values leave a chunk only through its
# yield. Outside a trace annotate does nothing, and bad tags are rejected.
#
# RUN: %python_torch %s > %t.mlir
# RUN: piper-opt %t.mlir -o /dev/null
# RUN: FileCheck %s --input-file=%t.mlir

import torch
import torch.nn as nn
import torch.nn.functional as F

import piper


class Tagged(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(4, 4, bias=False)
        self.b = nn.Linear(4, 4, bias=False)
        self.c = nn.Linear(4, 4, bias=False)
        self.d = nn.Linear(4, 4, bias=False)

    def forward(self, x, y):
        h = torch.relu(self.a(x))            # before any block: joins PP = 0
        with piper.annotate("PP"):
            h = self.b(h)
        with piper.annotate("PP"):
            h = torch.tanh(h)
            with piper.annotate("EP"):
                h = self.c(h)
            h = torch.sigmoid(h)
        with piper.annotate("PP", 5):
            h = self.d(h)
        return F.cross_entropy(h, y)         # after the last block: PP = 5


# CHECK-LABEL: func.func @step(
# CHECK-SAME:    %[[A:[^:]*]]: tensor<4x4xf64> {piper.param = #piper.param<"a.weight"
# CHECK:         %[[S0:.*]] = piper.annotate {PP = 0} -> tensor<2x4xf64> {
# CHECK-NEXT:      piper.linear %x, %[[A]]
# CHECK-NEXT:      piper.relu
# CHECK-NEXT:      %[[B:.*]] = piper.linear
# CHECK-NEXT:      piper.yield %[[B]]
# CHECK:         %[[S1:.*]] = piper.annotate {PP = 1} -> tensor<2x4xf64> {
# CHECK-NEXT:      %[[T:.*]] = piper.tanh %[[S0]]
# CHECK-NEXT:      %[[E:.*]] = piper.annotate {EP = 0} -> tensor<2x4xf64> {
# CHECK-NEXT:        %[[C:.*]] = piper.linear %[[T]]
# CHECK-NEXT:        piper.yield %[[C]]
# CHECK-NEXT:      }
# CHECK-NEXT:      %[[SIG:.*]] = piper.sigmoid %[[E]]
# CHECK-NEXT:      piper.yield %[[SIG]]
# CHECK:         %[[S5:.*]] = piper.annotate {PP = 5} -> tensor<f64> {
# CHECK-NEXT:      piper.linear %[[S1]]
# CHECK-NEXT:      %[[L:.*]] = piper.cross_entropy
# CHECK-NEXT:      piper.yield %[[L]] : tensor<f64>
# CHECK:         return %[[S5]] : tensor<f64>

# Eager: annotate is a no-op; a misspelt tag is an error.
# CHECK: // eager loss ok
# CHECK: // ValueError: piper.annotate: tag 'pp' must be an upper-case identifier such as PP or EP (PASS and MB are reserved)

if __name__ == "__main__":
    torch.set_default_dtype(torch.float64)
    torch.manual_seed(0)
    m = Tagged()
    x = torch.randn(2, 4)
    y = torch.tensor([1, 3])
    print(piper.trace(m, (x, y)).mlir, end="")
    loss = m(x, y)
    print("// eager loss %s" % ("ok" if loss.dim() == 0 else "bad"))
    try:
        with piper.annotate("pp"):
            pass
    except ValueError as e:
        print("// ValueError: %s" % e)
