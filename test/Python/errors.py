# REQUIRES: torch
# What piper.trace cannot import fails with one line that names the op, the
# module path and the source line (Inputs/unsupported.py).
#
# RUN: not %python_torch %S/Inputs/unsupported.py sort > %t.sort
# RUN: count 1 < %t.sort
# RUN: FileCheck %s --check-prefix=SORT --input-file=%t.sort
# SORT: {{.*}}unsupported.py:29: error: unsupported op torch.sort (in module 'inner', code: h, _ = torch.sort(h, dim=-1))
#
# Rotary tables whose positions are not consecutive (0, 2, 4, ...) are not
# piper.rope (any offset p..p+S-1 is: test/Python/neox.py).
# RUN: not %python_torch %S/Inputs/unsupported.py rope | FileCheck %s --check-prefix=ROPE
# ROPE: {{.*}}unsupported.py:56: error: the rotary tables are not cos/sin(position * theta^(-2c/4)) at positions p..p+3 for any theta and offset p >= 0 (fitted theta 2500.0, p = 0); piper.rope needs consecutive position ids and tables computed in the model's dtype (in module '<root>', code: q = q * emb.cos() + rot * emb.sin())
#
# RUN: not %python_torch %S/Inputs/unsupported.py broadcast | FileCheck %s --check-prefix=BCAST
# BCAST: {{.*}}unsupported.py:68: error: operator.mul broadcasts tensor<4x8xf32> and tensor<8xf32>; Piper's elementwise ops take equal shapes (in module '<root>', code: return F.cross_entropy(self.fc(x) * self.gain, y))
#
# A softmax(masked_fill(q @ k^T * scale)) @ v whose mask is not causal is
# not piper.attention.
# RUN: not %python_torch %S/Inputs/unsupported.py mask | FileCheck %s --check-prefix=MASK
# MASK: {{.*}}unsupported.py:84: error: the attention mask is not causal (masked exactly where key position > query position) (in module '<root>', code: h = (att @ q).transpose(1, 2).reshape(B, T, C))
#
# MoE: piper.router renormalises the top-k probabilities; routing weights
# used as torch.topk returns them are refused, naming the experts' call.
# RUN: not %python_torch %S/Inputs/unsupported.py topk | FileCheck %s --check-prefix=TOPK
# TOPK: {{.*}}unsupported.py:100: error: piper.router normalises the top-k probabilities to sum to 1 (norm_topk_prob): pass w / w.sum(dim=-1, keepdim=True) (in module 'experts', code: return F.cross_entropy(self.experts(x, w, idx), y))
