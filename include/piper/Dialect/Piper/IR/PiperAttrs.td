//===- PiperAttrs.td - Piper attributes --------------------*- tablegen -*-===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_DIALECT_PIPER_IR_PIPERATTRS_TD
#define PIPER_DIALECT_PIPER_IR_PIPERATTRS_TD

include "piper/Dialect/Piper/IR/PiperBase.td"

//===----------------------------------------------------------------------===//
// LinkClass
//===----------------------------------------------------------------------===//

def Piper_LinkClass : I32EnumAttr<"LinkClass",
    "kind of interconnect joining the devices along a mesh axis", [
  I32EnumAttrCase<"NVLink", 0, "nvlink">,
  I32EnumAttrCase<"PCIe", 1, "pcie">,
  I32EnumAttrCase<"InfiniBand", 2, "infiniband">,
  I32EnumAttrCase<"RoCE", 3, "roce">,
  I32EnumAttrCase<"EFA", 4, "efa">,
  I32EnumAttrCase<"Ethernet", 5, "ethernet">
]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::piper";
}

//===----------------------------------------------------------------------===//
// PassKind
//===----------------------------------------------------------------------===//

def Piper_PassKind : I32EnumAttr<"PassKind",
    "which pass of the training step a chunk belongs to", [
  I32EnumAttrCase<"F", 0, "F">,
  I32EnumAttrCase<"B", 1, "B">,
  I32EnumAttrCase<"BI", 2, "BI">,
  I32EnumAttrCase<"BW", 3, "BW">,
  I32EnumAttrCase<"UPD", 4, "UPD">
]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::piper";
}

def Piper_PassKindAttr : EnumAttr<Piper_Dialect, Piper_PassKind, "pass"> {
  let summary = "pass of a chunk: F, B, BI, BW or UPD";
  let assemblyFormat = "$value";
}

//===----------------------------------------------------------------------===//
// CollectiveKind
//===----------------------------------------------------------------------===//

def Piper_CollectiveKind : I32EnumAttr<"CollectiveKind",
    "a collective communication over mesh axes", [
  I32EnumAttrCase<"AllReduce", 0, "all_reduce">,
  I32EnumAttrCase<"ReduceScatter", 1, "reduce_scatter">,
  I32EnumAttrCase<"AllGather", 2, "all_gather">,
  I32EnumAttrCase<"AllToAll", 3, "all_to_all">
]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::piper";
}

def Piper_CollectiveKindAttr
    : EnumAttr<Piper_Dialect, Piper_CollectiveKind, "collective"> {
  let summary = "all_reduce, reduce_scatter, all_gather or all_to_all";
  let assemblyFormat = "$value";
}

//===----------------------------------------------------------------------===//
// InitKind
//===----------------------------------------------------------------------===//

def Piper_InitKind : I32EnumAttr<"InitKind",
    "how a parameter is initialised", [
  I32EnumAttrCase<"Normal", 0, "normal">,
  I32EnumAttrCase<"Zeros", 1, "zeros">,
  I32EnumAttrCase<"Ones", 2, "ones">
]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::piper";
}

//===----------------------------------------------------------------------===//
// MeshAxisAttr
//===----------------------------------------------------------------------===//

def Piper_MeshAxisAttr : Piper_Attr<"MeshAxis", "axis"> {
  let summary = "one named axis of a device mesh, with its interconnect";
  let description = [{
    A mesh axis has a name, a size (number of devices along it) and,
    optionally, the class of link joining the devices along it with that
    link's bandwidth (GB/s, i.e. 10^9 bytes per second, per device and
    direction) and latency (microseconds). The
    link data lets the cost model describe heterogeneous clusters, e.g.
    pipeline stages inside a node over NVLink and data parallel replicas
    across nodes over InfiniBand.

    Inside `piper.mesh` the `#piper.axis<...>` wrapper is omitted.

    Example:

    ```mlir
    #piper.axis<dp = 4 : infiniband(bandwidth = 25.0, latency = 5.0)>
    #piper.axis<tp = 8 : nvlink>
    #piper.axis<pp = 2>
    ```

    **Constraints:**
    - `size` >= 1.
    - `bandwidth` and `latency`, when given, are > 0 and need a link class.
  }];
  let parameters = (ins
    "::mlir::StringAttr":$name,
    "int64_t":$size,
    OptionalParameter<"std::optional<::mlir::piper::LinkClass>">:$link,
    OptionalParameter<"::mlir::FloatAttr">:$bandwidth,
    OptionalParameter<"::mlir::FloatAttr">:$latency
  );
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// Parses `name = size (: link (bandwidth = f, latency = f)?)?`, the form
    /// shared by `#piper.axis<...>` and the axis list of `piper.mesh`.
    static ::mlir::piper::MeshAxisAttr parseBody(::mlir::AsmParser &parser);
    /// Prints the body in the form `parseBody` reads.
    void printBody(::mlir::AsmPrinter &printer) const;
  }];
}

//===----------------------------------------------------------------------===//
// PlacementAttr
//===----------------------------------------------------------------------===//

def Piper_PlacementAttr : Piper_Attr<"Placement", "placement"> {
  let summary = "how a tensor is laid out over a device mesh";
  let description = [{
    A placement names a mesh and, for every dimension of the tensor it
    describes, the mesh axes that split that dimension (major to minor). It
    lists the axes over which the tensor is explicitly replicated (the data
    parallel axes of a parameter) and, for parameters, the ZeRO stage:

    - `zero = 0`: parameters, gradients and optimizer state are replicated
      over the replicated axes (plain data parallelism);
    - `zero = 1`: optimizer state is sharded over the replicated axes;
    - `zero = 2`: gradients are also sharded (reduce-scatter instead of
      all-reduce);
    - `zero = 3`: parameters are also sharded and gathered before use.

    Mesh axes that neither split a dimension nor are listed as replicated
    are also replicated; listing them states the intent (and tells ZeRO
    which axes to shard over).

    Example:

    ```mlir
    // Column-parallel weight: dim 1 split over `tp`, replicated over `dp`
    // with ZeRO-1 optimizer state sharding.
    #piper.placement<@cluster, [{}, {tp} ], replicated = {dp}, zero = 1>
    // Expert weights [E, H, F]: experts split over `ep`.
    #piper.placement<@cluster, [{ep}, {}, {} ]>
    ```

    **Constraints:**
    - Each axis appears at most once across all dimensions and the
      replicated list.
    - `zero` is 0, 1, 2 or 3, and a non-zero stage needs at least one
      replicated axis to shard over.
    - A `piper.placement` attached directly to a function argument or
      result has `zero = 0`: ZeRO stages describe parameters
      (`#piper.param`).
    - Where the placement is used on a value (`piper.placement` on a
      function argument or result, `piper.param`): the mesh exists (looked
      up in the enclosing symbol tables, innermost first), every
      axis is an axis of that mesh, there is one entry per tensor dimension,
      and each dimension's size is divisible by the product of the sizes of
      its axes.
  }];
  let parameters = (ins
    "::mlir::FlatSymbolRefAttr":$mesh,
    ArrayRefParameter<"::mlir::ArrayAttr", "axes splitting each dim">:$dims,
    "::mlir::ArrayAttr":$replicated,
    "unsigned":$zero
  );
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// Verifies this placement against its mesh (looked up from
    /// `symbolContext`) and the type of the value it describes.
    ::llvm::LogicalResult verifyFor(
        ::mlir::Type type, ::mlir::Operation *symbolContext,
        ::llvm::function_ref<::mlir::InFlightDiagnostic()> emitError) const;

    /// Shape of the per-device shard of a tensor of `globalShape`, given the
    /// mesh (verified placement required).
    ::llvm::SmallVector<int64_t> getLocalShape(
        ::llvm::ArrayRef<int64_t> globalShape,
        ::mlir::piper::MeshOp mesh) const;

    /// All axes that split some dimension, in dimension order.
    ::llvm::SmallVector<::mlir::StringAttr> getSplitAxes() const;
  }];
}

//===----------------------------------------------------------------------===//
// ParamAttr
//===----------------------------------------------------------------------===//

def Piper_ParamAttr : Piper_Attr<"Param", "param"> {
  let summary = "marks a function argument as a trainable parameter";
  let description = [{
    Attached as `piper.param` to a function argument, declares that argument
    a trainable parameter with a globally unique name, an initialiser and,
    optionally, a placement. Initial values are a function of the run's seed
    and the parameter's name only (and of the global element index), never
    of the strategy: every device holding a shard reproduces exactly the
    values of the serial program.

    Initialisers: `normal(std)` (mean 0), `zeros`, `ones`.

    Example:

    ```mlir
    func.func @step(
        %wq: tensor<64x64xf32> {piper.param = #piper.param<"layers.0.attn.wq", normal(0.02),
              placement = #piper.placement<@mesh, [{}, {tp} ], replicated = {dp}, zero = 1>>},
        %g: tensor<64xf32> {piper.param = #piper.param<"layers.0.norm.weight", ones>},
        %x: tensor<8x64xf32>) -> tensor<f32>
    ```

    **Constraints:**
    - The name is non-empty.
    - `normal` has a standard deviation > 0; `zeros` and `ones` have none.
    - Where attached: the argument is a ranked tensor of floats, no other
      argument of the function has a parameter of the same name, the
      argument carries no separate `piper.placement`, and the placement (if
      any) is valid for the argument's type (see `#piper.placement`).
  }];
  let parameters = (ins
    "::mlir::StringAttr":$name,
    "::mlir::piper::InitKind":$init,
    OptionalParameter<"::mlir::FloatAttr">:$std,
    OptionalParameter<"::mlir::piper::PlacementAttr">:$placement
  );
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
}

//===----------------------------------------------------------------------===//
// OptStateAttr
//===----------------------------------------------------------------------===//

def Piper_OptStateAttr : Piper_Attr<"OptState", "state"> {
  let summary = "marks a value as one slot of a parameter's optimizer state";
  let description = [{
    Attached as `piper.state` to a function argument or result of a training
    step, names the parameter the state belongs to and the slot:
    `momentum_buffer` (SGD), `exp_avg`, `exp_avg_sq` and `step` (AdamW).
    Slots other than `step` have the parameter's type; `step` is a rank-0
    `i64` tensor counting completed steps. States start at zero. ZeRO-1
    shards these over the parameter's replicated axes.

    Example:

    ```mlir
    %m: tensor<16x32xf32> {piper.state = #piper.state<"layers.0.w", "exp_avg">}
    ```

    **Constraints:**
    - The slot is one of `momentum_buffer`, `exp_avg`, `exp_avg_sq`, `step`.
    - Where attached: the function has a `piper.param` of that name, and the
      value has the slot's type.
  }];
  let parameters = (ins "::mlir::StringAttr":$param, "::mlir::StringAttr":$slot);
  let assemblyFormat = "`<` $param `,` $slot `>`";
  let genVerifyDecl = 1;
}

#endif // PIPER_DIALECT_PIPER_IR_PIPERATTRS_TD
