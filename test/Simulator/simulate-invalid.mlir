// RUN: split-file %s %t
// RUN: piper-opt %t/device.mlir -verify-diagnostics --piper-simulate="device=tpu" -o /dev/null
// RUN: piper-opt %t/format.mlir -verify-diagnostics --piper-simulate="format=png" -o /dev/null
// RUN: piper-opt %t/costs.mlir -verify-diagnostics --piper-simulate="costs=free" -o /dev/null
// RUN: piper-opt %t/none.mlir -verify-diagnostics --piper-simulate -o /dev/null
// RUN: not piper-opt %t/ok.mlir --piper-simulate="calibration=%S/Inputs/missing.json" -o /dev/null 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: not piper-opt %t/ok.mlir --piper-simulate="calibration=%S/Inputs/bad-calibration.json" -o /dev/null 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: not piper-opt %t/ok.mlir --piper-simulate="calibration=%t/not-json.json" -o /dev/null 2>&1 | FileCheck %s --check-prefix=JSON

// A calibration file that does not exist, that is not JSON, or whose
// times are not numbers, is an error naming the file.
// MISSING: error: cannot open calibration file '{{.*}}missing.json': No such file or directory
// BAD: error: calibration file '{{.*}}bad-calibration.json': 'launches_us.F{PP=0,MB=0}' must be a number
// JSON: error: calibration file '{{.*}}not-json.json': [1:16, byte=16]: Expected : after object key

//--- device.mlir
// An unknown device names the table.
// expected-error@+1 {{unknown device 'tpu'; expected one of a100, h100, h200}}
module {
  piper.mesh @mesh axes = [pp = 1]
  func.func @step(%x: tensor<4xf32>) -> tensor<4xf32> {
    return %x : tensor<4xf32>
  }
  piper.program @step.pp0 role {pp = 0} of @mesh step @step streams ["compute"] {
    %x = piper.input 0 : tensor<4xf32>
    piper.output 0 %x : tensor<4xf32>
  }
}

//--- format.mlir
// Only the three formats exist.
// expected-error@+1 {{unknown format 'png'; expected summary, chrome or svg}}
module {
}

//--- costs.mlir
// Only unit and model costs exist.
// expected-error@+1 {{unknown costs 'free'; expected model or unit}}
module {
}

//--- none.mlir
// Nothing to simulate before partitioning.
// expected-error@+1 {{no piper.program to simulate; partition a scheduled DAG first (--piper-partition)}}
module {
}

//--- ok.mlir
module {
  piper.mesh @mesh axes = [pp = 1]
  func.func @step(%x: tensor<4xf32>) -> tensor<4xf32> {
    return %x : tensor<4xf32>
  }
  piper.program @step.pp0 role {pp = 0} of @mesh step @step streams ["compute"] {
    %x = piper.input 0 : tensor<4xf32>
    piper.output 0 %x : tensor<4xf32>
  }
}

//--- not-json.json
{"launches_us" 1}
