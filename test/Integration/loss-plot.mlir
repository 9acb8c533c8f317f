// --plot=FILE.svg: piper-run and piper-interp draw the loss per step as a
// self-contained SVG at the end of the run: one point per step, x from the
// first step (left edge of the plot, x = 70) to the last (right edge, 700),
// with the tool and model or plan in the title; an unwritable path is one
// error line and a non-zero exit.
// RUN: rm -rf %t && mkdir -p %t
// RUN: piper-gen --model=mlp --config=tiny-mlp --dtype=f64 --mesh=dp=1 -o %t/mlp.mlir
// RUN: piper-interp %t/mlp.mlir --steps=3 --optimizer=adamw --plot=%t/interp.svg
// RUN: FileCheck %s --check-prefix=SVG --input-file=%t/interp.svg -DTOOL=interp
// RUN: piper-compile %t/mlp.mlir -o %t/mlp.plan
// RUN: piper-run %t/mlp.plan --steps=3 --plot=%t/run.svg
// RUN: FileCheck %s --check-prefix=SVG --input-file=%t/run.svg -DTOOL=run
// RUN: not piper-run %t/mlp.plan --steps=1 --plot=%t/missing/run.svg 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: not piper-interp %t/mlp.mlir --steps=1 --plot=%t/missing/run.svg 2>&1 | FileCheck %s --check-prefix=BAD

// SVG: <svg xmlns="http://www.w3.org/2000/svg"
// SVG: >piper-[[TOOL]] {{.*}}mlp{{.*}}</text>
// SVG: <polyline fill="none" stroke="#1f77b4" stroke-width="1.5" points="70,{{[0-9.]+}} 385,{{[0-9.]+}} 700,{{[0-9.]+}}"/>
// SVG: >training loss</text>
// SVG: </svg>

// BAD: cannot write {{.*}}missing/run.svg: No such file or directory
