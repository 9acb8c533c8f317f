// DualPipeV pairs a forward with a backward on two compute streams, and the
// simulator starts a pair together (their shares of the device). With
// ZeRO-3 and every collective on one stream, the gather for the paired
// forward F{PP=0,MB=3} queues behind the reduce-scatters of the
// weight-gradient launches that follow its partner BI{PP=3,MB=1}: waiting
// for the partner never ends. A device starts each launch when its own
// stream allows, so the simulator then starts the launch alone; it used to
// report `deadlock: stream "compute" of @step.pp0 never gets past
// 'BI{PP=3,MB=1}'` for programs that verify and run (piper-search's ZeRO-3
// DualPipeV candidates on one collective stream were `invalid`).
// RUN: rm -rf %t && mkdir -p %t
// RUN: piper-gen --config=tiny-gpt --layers=4 --pp=4 --mesh=pp=2,dp=2 --batch=1 -o %t/gpt.mlir
// RUN: piper-compile %t/gpt.mlir --directives=%S/Inputs/dualpipev-zero3-one-stream.json --emit=programs -o %t/programs.mlir
// RUN: piper-opt %t/programs.mlir --piper-simulate="costs=unit" -o /dev/null | FileCheck %s --match-full-lines

// CHECK:      step time 142, bubble 33.8%, communication exposed 0 and hidden 0 per device
// CHECK-NEXT: program    role           compute          comm       exposed          idle  bubble  peak MiB
// CHECK-NEXT: @step.pp0  {pp=0}             100             0             0            42   29.6%       0.1
// CHECK-NEXT: @step.pp1  {pp=1}              88             0             0            54   38.0%       0.1
