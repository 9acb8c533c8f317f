// Input for run-embed-test.sh: embed-opt, built out of tree against an
// installed Piper, must parse and print Piper IR and run a Piper pass.
// Not a lit test (lit.cfg.py excludes test/embed); the driver runs FileCheck
// with the ROUNDTRIP and SUMMARY prefixes.

// ROUNDTRIP: piper.mesh @cluster axes = [dp = 2 : nvlink(bandwidth = 300), pp = 2 : pcie]
piper.mesh @cluster axes = [dp = 2 : nvlink(bandwidth = 300.0), pp = 2 : pcie]

// ROUNDTRIP-LABEL: func.func @stage0(
// ROUNDTRIP-SAME:    %[[X:.*]]: tensor<4x8xf32>) -> tensor<4x8xf32>
// ROUNDTRIP:         %[[H:.*]] = piper.annotate {PP = 0} -> tensor<4x8xf32> {
// ROUNDTRIP:           %[[SUM:.*]] = arith.addf %[[X]], %[[X]] : tensor<4x8xf32>
// ROUNDTRIP:           piper.yield %[[SUM]] : tensor<4x8xf32>
// ROUNDTRIP:         }
// ROUNDTRIP:         return %[[H]] : tensor<4x8xf32>
func.func @stage0(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %h = piper.annotate {PP = 0} -> tensor<4x8xf32> {
    %sum = arith.addf %x, %x : tensor<4x8xf32>
    piper.yield %sum : tensor<4x8xf32>
  }
  return %h : tensor<4x8xf32>
}

// SUMMARY:      mesh @cluster: 4 devices
// SUMMARY-NEXT:   axis dp: size 2, nvlink, 300 GB/s
// SUMMARY-NEXT:   axis pp: size 2, pcie
// SUMMARY:      function @stage0
// SUMMARY-NEXT:   chunk {PP = 0}: 1 op
