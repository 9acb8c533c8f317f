# REQUIRES: torch
# piper.trace's mesh and placements: the mesh becomes `piper.mesh @mesh`;
# each parameter takes the first placement whose pattern matches its
# state_dict name (dims in the IR's layout, so a linear weight's dim 1 is its
# output features), and the rest are replicated over dp, as piper-gen
# places them. piper-opt verifies the result (axes divide the dims).
#
# RUN: %python_torch %s > %t.mlir
# RUN: piper-opt %t.mlir -o /dev/null
# RUN: FileCheck %s --input-file=%t.mlir

# CHECK: piper.mesh @mesh axes = [dp = 2, tp = 2]
# CHECK-LABEL: func.func @step(
# CHECK-SAME: tensor<8x16xf64> {piper.param = #piper.param<"up.weight", normal({{.*}}), placement = #piper.placement<@mesh, [{}, {tp}], replicated = {dp}, zero = 1>>}
# CHECK-SAME: tensor<16xf64> {piper.param = #piper.param<"up.bias", zeros, placement = #piper.placement<@mesh, [{}], replicated = {dp}, zero = 3>>}
# CHECK-SAME: tensor<16x8xf64> {piper.param = #piper.param<"down.weight", normal({{.*}}), placement = #piper.placement<@mesh, [{}, {}], replicated = {dp}>>}

import torch
import torch.nn as nn
import torch.nn.functional as F

import piper


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.up = nn.Linear(8, 16)
        self.down = nn.Linear(16, 8, bias=False)
        nn.init.zeros_(self.up.bias)

    def forward(self, x, y):
        return F.cross_entropy(self.down(F.relu(self.up(x))), y)


if __name__ == "__main__":
    torch.set_default_dtype(torch.float64)
    torch.manual_seed(0)
    traced = piper.trace(
        MLP(), (torch.randn(4, 8), torch.zeros(4, dtype=torch.long)),
        mesh={"dp": 2, "tp": 2},
        placements={"up.weight": piper.Placement(dims=[(), ("tp",)], zero=1),
                    "*.bias": piper.Placement(zero=3)})
    print(traced.mlir, end="")
