// REQUIRES: torch
// The cross-check can fail: the tiny GPT's dump with one gradient entry
// (the largest of layers.1.attn.wk) off by 1e-9 relative, ten times the
// script's limit, or with the loss off by 1e-12 relative, is a MISMATCH that
// names what differs, with exit status 1.

// RUN: piper-gen --model=gpt --config=tiny-gpt --dtype=f64 --pp=2 -o %t.mlir
// RUN: piper-interp %t.mlir --seed=3 --dump=%t.json
// RUN: %python_torch -c "import json, sys; d = json.load(open(sys.argv[1])); g = d['grads']['layers.1.attn.wk']['values']; i = max(range(len(g)), key=lambda i: abs(g[i])); g[i] *= 1 + 1e-9; json.dump(d, open(sys.argv[2], 'w'))" %t.json %t.grad.json
// RUN: not %python_torch %S/compare_with_torch.py %t.grad.json --model=gpt | FileCheck %s --check-prefix=GRAD
// RUN: %python_torch -c "import json, sys; d = json.load(open(sys.argv[1])); d['loss'] *= 1 + 1e-12; json.dump(d, open(sys.argv[2], 'w'))" %t.json %t.loss.json
// RUN: not %python_torch %S/compare_with_torch.py %t.loss.json --model=gpt | FileCheck %s --check-prefix=LOSS

// GRAD:      {{^}}max relative error over 6224 gradient entries: {{[0-9.e+-]+}} (layers.1.attn.wk[{{[0-9]+}}]:
// GRAD:      {{^}}gradient of 'layers.1.attn.wk' differs by {{[0-9.e+-]+}} relative (limit 1e-10){{$}}
// GRAD-NEXT: {{^}}MISMATCH{{$}}

// LOSS:      {{^}}loss differs by {{[0-9.e+-]+}} relative (limit 1e-13){{$}}
// LOSS:      {{^}}MISMATCH{{$}}

// Piper's dump of a different model family is refused, not compared.
// RUN: not %python_torch %S/compare_with_torch.py %t.json --model=moe 2>&1 | FileCheck %s --check-prefix=FAMILY
// FAMILY: error: the parameters of the dump are not those of --model=moe:
