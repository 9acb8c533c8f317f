# REQUIRES: torch
# What piper.trace cannot import fails with one line that names the op, the
# module path and the source line (Inputs/unsupported.py).
#
# RUN: not %python_torch %S/Inputs/unsupported.py sort > %t.sort
# RUN: count 1 < %t.sort
# RUN: FileCheck %s --check-prefix=SORT --input-file=%t.sort
# SORT: {{.*}}unsupported.py:25: error: unsupported op torch.sort (in module 'inner', code: h, _ = torch.sort(h, dim=-1))
#
# RUN: not %python_torch %S/Inputs/unsupported.py gelu | FileCheck %s --check-prefix=GELU
# GELU: {{.*}}unsupported.py:45: error: unsupported op GELU with approximate='none' (piper.gelu is the tanh approximation: use approximate='tanh') (in module 'act', code: return F.cross_entropy(self.act(self.fc(x)), y))
#
# RUN: not %python_torch %S/Inputs/unsupported.py broadcast | FileCheck %s --check-prefix=BCAST
# BCAST: {{.*}}unsupported.py:55: error: operator.mul broadcasts tensor<4x8xf32> and tensor<8xf32>; Piper's elementwise ops take equal shapes (in module '<root>', code: return F.cross_entropy(self.fc(x) * self.gain, y))
#
# A softmax(masked_fill(q @ k^T * scale)) @ v whose mask is not causal is
# not piper.attention.
# RUN: not %python_torch %S/Inputs/unsupported.py mask | FileCheck %s --check-prefix=MASK
# MASK: {{.*}}unsupported.py:71: error: the attention mask is not causal (masked exactly where key position > query position) (in module '<root>', code: h = (att @ q).transpose(1, 2).reshape(B, T, C))
