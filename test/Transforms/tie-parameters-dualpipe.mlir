// Bidirectional DualPipe's mirrored stages through partitioning: stage 1's
// update is placed on rank 1, but rank 0 also runs stage 1 (microbatches 2
// and 3) and reads its parameters. tieSharedParameters copies the update
// onto rank 0 together with the ZeRO-1 collectives around it on its group:
// the accumulated gradient (both directions) goes to rank 0 by a transfer,
// is reduce-scattered over dp there, updated, and all-gathered, so both
// programs write stage 1's updated parameters.
// RUN: rm -rf %t && mkdir -p %t
// RUN: python3 -c "import json, sys; d = json.load(open(sys.argv[1])); d['directives'].insert(-1, {'replicate': {'filter': {}, 'devices': ['dp'], 'zero': 1}}); print(json.dumps(d))" %S/../../examples/strategies/tiny-gpt-dualpipe-pp2.json > %t/dualpipe-z1.json
// RUN: piper-gen --config=tiny-mlp --pp=2 --dtype=f64 --mesh=dp=2,pp=2 --batch=1 -o %t/mlp.mlir
// RUN: piper-compile %t/mlp.mlir --directives=%t/dualpipe-z1.json --emit=programs -o %t/programs.mlir
// RUN: FileCheck %s --input-file=%t/programs.mlir
// RUN: piper-opt %t/programs.mlir --piper-verify-programs -o /dev/null
// (A program that reads a parameter without writing its update is
// rejected by --piper-verify-programs: verify-programs-invalid.mlir.)

// CHECK: %[[RS:.*]] = piper.collective "reduce_scatter(accumulate(BW{PP=1}#0)#0)" reduce_scatter %[[ACC:[0-9]+]] over ["dp"] of @mesh stream "dp_grad" {devices = {pp = 1 : i64}}
// CHECK-NEXT: %[[T:.*]] = piper.transfer "accumulate(BW{PP=1}#0)#0->{pp=0}" %[[ACC]] from {pp = 1 : i64} to {pp = 0 : i64}
// CHECK-NEXT: %[[RS0:.*]] = piper.collective "reduce_scatter(accumulate(BW{PP=1}#0)#0)@{pp=0}" reduce_scatter %[[T]] over ["dp"] of @mesh stream "dp_grad" {copy_of = "reduce_scatter(accumulate(BW{PP=1}#0)#0)", devices = {pp = 0 : i64}}
// CHECK: %[[U:.*]]:16 = piper.task "UPD{PP=1}" @step.UPD.PP1({{.*}}, %[[RS]], {{.*}}devices = {pp = 1 : i64}
// CHECK-NEXT: %[[U0:.*]]:16 = piper.task "UPD{PP=1}@{pp=0}" @step.UPD.PP1({{.*}}, %[[RS0]], {{.*}}copy_of = "UPD{PP=1}", devices = {pp = 0 : i64}
// CHECK: piper.collective "all_gather(UPD{PP=1}#1)" all_gather %[[U]]#1 over ["dp"] of @mesh stream "dp_param" {devices = {pp = 1 : i64}}
// CHECK-NEXT: piper.collective "all_gather(UPD{PP=1}#1)@{pp=0}" all_gather %[[U0]]#1 over ["dp"] of @mesh stream "dp_param" {copy_of = "all_gather(UPD{PP=1}#1)", devices = {pp = 0 : i64}}
// Rank 0 receives the gradient, reduces it, updates and gathers stage 1's
// parameters itself.
// CHECK-LABEL: piper.program @step.pp0
// CHECK: %[[G:.*]] = piper.recv "accumulate(BW{PP=1}#0)#0->{pp=0}" from @step.pp1
// CHECK: piper.comm "reduce_scatter(accumulate(BW{PP=1}#0)#0)@{pp=0}" reduce_scatter %[[G]] over ["dp"]
// CHECK: piper.launch "UPD{PP=1}@{pp=0}" @step.UPD.PP1(
// CHECK: piper.comm "all_gather(UPD{PP=1}#1)@{pp=0}" all_gather
// CHECK-LABEL: piper.program @step.pp1
// CHECK: piper.send "accumulate(BW{PP=1}#0)#0->{pp=0}" %{{.*}} to @step.pp0
