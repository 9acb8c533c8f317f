// RUN: piper-opt %s -split-input-file -verify-diagnostics

func.func private @body(tensor<4xf32>) -> tensor<4xf32>

// Node names identify nodes: they are unique.
func.func @duplicate_name_is_rejected(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = piper.dag -> tensor<4xf32> {
    // expected-note@+1 {{the other node}}
    %a = piper.task "F{PP=0}" @body(%x) {tags = {PP = 0}, pass = #piper<pass F>} : (tensor<4xf32>) -> tensor<4xf32>
    // expected-error@+1 {{'piper.task' op has the name 'F{PP=0}' of another node of the DAG}}
    %b = piper.task "F{PP=0}" @body(%a) {tags = {PP = 0}, pass = #piper<pass F>} : (tensor<4xf32>) -> tensor<4xf32>
    piper.dag_yield %b : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

func.func private @body(tensor<4xf32>) -> tensor<4xf32>

// Temporal edges name nodes of the DAG.
func.func @unknown_after_is_rejected(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = piper.dag -> tensor<4xf32> {
    // expected-error@+1 {{'piper.task' op is ordered after 'F{PP=9}', which is not a node of the DAG}}
    %a = piper.task "F{PP=0}" @body(%x) {tags = {PP = 0}, pass = #piper<pass F>, after = ["F{PP=9}"]} : (tensor<4xf32>) -> tensor<4xf32>
    piper.dag_yield %a : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

func.func private @body(tensor<4xf32>) -> tensor<4xf32>

// A node is not ordered after itself.
func.func @self_edge_is_rejected(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = piper.dag -> tensor<4xf32> {
    // expected-error@+1 {{'piper.task' op 'F{PP=0}' is ordered after itself}}
    %a = piper.task "F{PP=0}" @body(%x) {tags = {PP = 0}, pass = #piper<pass F>, after = ["F{PP=0}"]} : (tensor<4xf32>) -> tensor<4xf32>
    piper.dag_yield %a : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

func.func private @body(tensor<4xf32>) -> tensor<4xf32>

// A task's types are its body's.
func.func @callee_type_mismatch_is_rejected(%x: tensor<8xf32>) -> tensor<8xf32> {
  %r = piper.dag -> tensor<8xf32> {
    // expected-error@+1 {{'piper.task' op types differ from those of @body}}
    %a = piper.task "F{PP=0}" @body(%x) {tags = {PP = 0}, pass = #piper<pass F>} : (tensor<8xf32>) -> tensor<8xf32>
    piper.dag_yield %a : tensor<8xf32>
  }
  return %r : tensor<8xf32>
}

// -----

// A task calls a function.
func.func @unknown_callee_is_rejected(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = piper.dag -> tensor<4xf32> {
    // expected-error@+1 {{'piper.task' op calls @missing, which is not a function}}
    %a = piper.task "F{PP=0}" @missing(%x) {tags = {PP = 0}, pass = #piper<pass F>} : (tensor<4xf32>) -> tensor<4xf32>
    piper.dag_yield %a : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

// The DAG yields its result types.
func.func @yield_mismatch_is_rejected(%x: tensor<4xf32>) -> tensor<8xf32> {
  // expected-error@+1 {{'piper.dag' op yields 1 values whose types differ from its 1 results}}
  %r = piper.dag -> tensor<8xf32> {
    piper.dag_yield %x : tensor<4xf32>
  }
  return %r : tensor<8xf32>
}

// -----

// piper.pass on an op is a pass kind.
func.func @bad_pass_attribute_is_rejected(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'piper.pass' must be a pass kind such as #piper<pass BW>, got "BW"}}
  %r = piper.relu %x {piper.pass = "BW"} : tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// Unknown piper attributes on ops are typos.
func.func @unknown_op_attribute_is_rejected(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{unknown piper operation attribute 'piper.passs'}}
  %r = piper.relu %x {piper.passs = 1} : tensor<4xf32>
  return %r : tensor<4xf32>
}


// -----

// A DAG holds nodes; computation lives in their bodies.
func.func @op_in_dag_is_rejected(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = piper.dag -> tensor<4xf32> {
    // expected-error@+1 {{'piper.relu' op is inside a piper.dag, which holds only nodes (piper.task, piper.transfer, piper.collective, piper.microbatch, piper.accumulate)}}
    %a = piper.relu %x : tensor<4xf32>
    piper.dag_yield %a : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}
