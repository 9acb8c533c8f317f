// plan.json's evaluation and sampling entries (roles[k].eval, .sample) are
// checked before any rank runs: each damaged copy is one line naming the
// field, exit code 1.
// RUN: rm -rf %t && mkdir -p %t
// RUN: piper-gen --model=gpt --config=tiny-gpt --vocab=256 --seq=16 --dtype=f64 --mesh=dp=1 --batch=2 -o %t/gpt.mlir
// RUN: piper-compile %t/gpt.mlir -o %t/good.plan
// RUN: echo 'import json, shutil, sys' > %t/edit.py
// RUN: echo 'src, dst, what = sys.argv[1:]; shutil.rmtree(dst, True); shutil.copytree(src, dst)' >> %t/edit.py
// RUN: echo 'm = json.load(open(dst + "/plan.json")); r = m["roles"][0]' >> %t/edit.py
// RUN: echo 'if what == "input": r["eval"]["inputs"][0] = 999' >> %t/edit.py
// RUN: echo 'if what == "entry": r["eval"]["entry"] = r["entry"]' >> %t/edit.py
// RUN: echo 'if what == "missing": r["eval"]["entry"] = "piper_entry_nothing"' >> %t/edit.py
// RUN: echo 'if what == "logits": r["sample"]["logits"]["shape"] = [64]' >> %t/edit.py
// RUN: echo 'if what == "output": r["sample"]["outputs"] = [0, 0]' >> %t/edit.py
// RUN: echo 'json.dump(m, open(dst + "/plan.json", "w"))' >> %t/edit.py
// RUN: for w in input entry missing logits output; do python3 %t/edit.py %t/good.plan %t/$w.plan $w || exit 1; done
// RUN: not piper-run %t/input.plan 2>&1 | FileCheck %s --check-prefix=INPUT
// INPUT: piper-run: {{.*}}/plan.json: bad manifest: index 999 is not one of the role's inputs at plan.roles[0].eval.inputs[0]
// RUN: not piper-run %t/entry.plan 2>&1 | FileCheck %s --check-prefix=ENTRY
// ENTRY: piper-run: {{.*}}/plan.json: bad manifest: entry 'piper_entry_step.all' is not a plan entry point (piper_entry_...) other than the role's at plan.roles[0].eval.entry
// RUN: not piper-run %t/missing.plan 2>&1 | FileCheck %s --check-prefix=MISSING
// MISSING: piper-run: {{.*}}/step.all.so has no entry point 'piper_entry_nothing'
// RUN: not piper-run %t/logits.plan 2>&1 | FileCheck %s --check-prefix=LOGITS
// LOGITS: piper-run: {{.*}}/plan.json: bad manifest: expected [rows, vocabulary] at plan.roles[0].sample.logits.shape
// RUN: not piper-run %t/output.plan 2>&1 | FileCheck %s --check-prefix=OUTPUT
// OUTPUT: piper-run: {{.*}}/plan.json: bad manifest: index 0 is listed twice at plan.roles[0].sample.outputs[1]
