//===- MeshGroups.h - Groups of devices over mesh axes ----------*- C++ -*-===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The devices that differ only on some axes of a mesh form a group (a
// collective's communicator, a ZeRO group, the parts of a split tensor); its
// size is the product of those axes' sizes. One definition for the lowering
// (ReplicaLayout.cpp, LocalBodies.cpp, ProgramComm.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_LIB_CONVERSION_MESHGROUPS_H
#define PIPER_LIB_CONVERSION_MESHGROUPS_H

#include "piper/Dialect/Piper/IR/PiperOps.h"

#include <string>

namespace mlir::piper {

/// The group over the axes of `mesh` that `isMember` selects: their names in
/// mesh order and the product of their sizes.
template <typename IsMember>
int64_t meshGroup(MeshOp mesh, IsMember isMember,
                  SmallVectorImpl<std::string> *names = nullptr) {
  int64_t size = 1;
  for (MeshAxisAttr axis : mesh.getAxisList()) {
    if (!isMember(axis.getName()))
      continue;
    size *= axis.getSize();
    if (names)
      names->push_back(axis.getName().str());
  }
  return size;
}

/// The product of the sizes of `axes` (names) of `mesh`.
inline int64_t meshGroupSize(ArrayRef<std::string> axes, MeshOp mesh) {
  return meshGroup(mesh, [&](StringRef name) {
    return llvm::is_contained(axes, name.str());
  });
}

/// The product of the sizes of `axes` (an ArrayAttr of StringAttr) of `mesh`,
/// and their names in mesh order.
inline int64_t meshGroupSize(ArrayAttr axes, MeshOp mesh,
                             SmallVectorImpl<std::string> *names = nullptr) {
  return meshGroup(
      mesh,
      [&](StringRef name) {
        return llvm::any_of(axes, [&](Attribute a) {
          return cast<StringAttr>(a).getValue() == name;
        });
      },
      names);
}

} // namespace mlir::piper

#endif // PIPER_LIB_CONVERSION_MESHGROUPS_H
