# REQUIRES: torch
# What piper.trace cannot import fails with one line that names the op, the
# module path and the source line (Inputs/unsupported.py).
#
# RUN: not %python_torch %S/Inputs/unsupported.py sort > %t.sort
# RUN: count 1 < %t.sort
# RUN: FileCheck %s --check-prefix=SORT --input-file=%t.sort
# SORT: {{.*}}unsupported.py:25: error: unsupported op torch.sort (in module 'inner', code: h, _ = torch.sort(h, dim=-1))
#
# Rotary tables whose positions are not 0..S-1 are not piper.rope.
# RUN: not %python_torch %S/Inputs/unsupported.py rope | FileCheck %s --check-prefix=ROPE
# ROPE: {{.*}}unsupported.py:51: error: the rotary tables are not cos/sin(position * theta^(-2c/D)) at positions 0..3 for any theta (fitted 2500.0); piper.rope needs position ids 0..S-1 and tables computed in the model's dtype (in module '<root>', code: q = q * emb.cos() + rot * emb.sin())
#
# RUN: not %python_torch %S/Inputs/unsupported.py broadcast | FileCheck %s --check-prefix=BCAST
# BCAST: {{.*}}unsupported.py:63: error: operator.mul broadcasts tensor<4x8xf32> and tensor<8xf32>; Piper's elementwise ops take equal shapes (in module '<root>', code: return F.cross_entropy(self.fc(x) * self.gain, y))
#
# A softmax(masked_fill(q @ k^T * scale)) @ v whose mask is not causal is
# not piper.attention.
# RUN: not %python_torch %S/Inputs/unsupported.py mask | FileCheck %s --check-prefix=MASK
# MASK: {{.*}}unsupported.py:79: error: the attention mask is not causal (masked exactly where key position > query position) (in module '<root>', code: h = (att @ q).transpose(1, 2).reshape(B, T, C))
