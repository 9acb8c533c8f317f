// A calibration's `collectives` section gives a collective kind its own
// link (what piper-calibrate fits from a traced run's all-reduces): it
// replaces the mesh axes' links for every collective of that kind. A
// two-member all-reduce in the ring model takes 2 latencies + bytes /
// bandwidth: 1000 us latency and an unbounded bandwidth make each of DP2's
// gradient all-reduces 2000 us; without the section NVLink's 6 us.
// RUN: rm -rf %t && mkdir -p %t
// RUN: echo '{"mesh": "mesh", "directives": [{"replicate": {"filter": {}, "devices": ["dp"]}}]}' > %t/dp.json
// RUN: echo '{"collectives": {"all_reduce": {"latency_us": 1000, "bandwidth_gbs": 1e9}}}' > %t/calibration.json
// RUN: piper-gen --config=tiny-gpt --mesh=dp=2 -o %t/gpt.mlir
// RUN: piper-compile %t/gpt.mlir --directives=%t/dp.json --emit=programs -o %t/programs.mlir
// RUN: piper-opt %t/programs.mlir --piper-simulate="calibration=%t/calibration.json format=chrome" -o /dev/null | FileCheck %s --check-prefix=CAL
// RUN: piper-opt %t/programs.mlir --piper-simulate="format=chrome" -o /dev/null | FileCheck %s --check-prefix=MODEL

// CAL:   {"name":"all_reduce(BW{PP=0}#20)","cat":"all_reduce",{{.*}}"dur":2000},
// CAL:   {"name":"all_reduce(BW{PP=0}#19)","cat":"all_reduce",{{.*}}"dur":2000},
// MODEL: {"name":"all_reduce(BW{PP=0}#20)","cat":"all_reduce",{{.*}}"dur":6.00683},
