//===- ShareKernels.cpp - One copy of each kernel for all programs --------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "piper/Compile/ShareKernels.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/AttrTypeSubElements.h"
#include "mlir/IR/SymbolTable.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/xxhash.h"

using namespace mlir;
using namespace mlir::piper;

namespace {

/// Whether `fn` is a kernel the lowering generated: an outlined linalg op
/// (OutlineKernels.cpp) or an attention kernel. Program, chunk and entry
/// functions are per role and stay.
bool isKernel(LLVM::LLVMFuncOp fn) {
  StringRef name = fn.getSymName();
  return !fn.isExternal() && (name.starts_with("piper_kernel") ||
                              name.starts_with("piper_attention"));
}

/// The declarations `fn` calls or refers to, in order of first use; none
/// (and false) when it refers to anything its module defines.
bool collectDeclarations(LLVM::LLVMFuncOp fn, SymbolTable &symbols,
                         SmallVectorImpl<LLVM::LLVMFuncOp> &declarations) {
  std::optional<SymbolTable::UseRange> uses = SymbolTable::getSymbolUses(fn);
  if (!uses)
    return false;
  for (const SymbolTable::SymbolUse &use : *uses) {
    auto callee = dyn_cast_or_null<LLVM::LLVMFuncOp>(
        symbols.lookup(use.getSymbolRef().getRootReference()));
    if (!callee || !callee.isExternal())
      return false;
    if (!llvm::is_contained(declarations, callee))
      declarations.push_back(callee);
  }
  return true;
}

/// `fn`'s text under a fixed name, followed by its declarations': equal
/// keys compute the same thing with the same calls.
std::string keyOf(LLVM::LLVMFuncOp fn,
                  ArrayRef<LLVM::LLVMFuncOp> declarations) {
  StringAttr name = fn.getSymNameAttr();
  fn.setSymName("piper_shared_key");
  std::string key;
  llvm::raw_string_ostream os(key);
  fn->print(os, OpPrintingFlags().useLocalScope());
  fn.setSymNameAttr(name);
  for (LLVM::LLVMFuncOp declaration : declarations) {
    os << "\n";
    declaration->print(os, OpPrintingFlags().useLocalScope());
  }
  return key;
}

/// The shared modules being filled, each with its size so far.
class SharedParts {
public:
  SharedParts(MLIRContext *context, unsigned count) {
    for (unsigned i = 0; i < std::max(count, 1u); ++i) {
      modules.push_back(ModuleOp::create(UnknownLoc::get(context)));
      sizes.push_back(0);
    }
  }

  /// Adds a copy of `fn` named `name` (external, hidden) and of its
  /// `declarations` to the smallest part.
  void add(LLVM::LLVMFuncOp fn, StringRef name,
           ArrayRef<LLVM::LLVMFuncOp> declarations, size_t size) {
    size_t part = std::min_element(sizes.begin(), sizes.end()) - sizes.begin();
    sizes[part] += size;
    ModuleOp module = *modules[part];
    SymbolTable symbols(module);
    for (LLVM::LLVMFuncOp declaration : declarations)
      if (!symbols.lookup(declaration.getSymName()))
        symbols.insert(declaration->clone());
    auto copy = cast<LLVM::LLVMFuncOp>(fn->clone());
    copy.setSymName(name);
    copy.setLinkage(LLVM::Linkage::External);
    copy.setVisibility_(LLVM::Visibility::Hidden);
    symbols.insert(copy);
  }

  /// The parts that hold something.
  SmallVector<OwningOpRef<ModuleOp>> take() {
    SmallVector<OwningOpRef<ModuleOp>> filled;
    for (auto [module, size] : llvm::zip(modules, sizes))
      if (size > 0)
        filled.push_back(std::move(module));
    return filled;
  }

private:
  SmallVector<OwningOpRef<ModuleOp>> modules;
  SmallVector<size_t> sizes;
};

/// Points every reference to a key of `renamed` in `program` at its value,
/// in one walk.
void renameUses(ModuleOp program, const llvm::StringMap<StringAttr> &renamed) {
  AttrTypeReplacer replacer;
  replacer.addReplacement(
      [&](FlatSymbolRefAttr ref) -> std::optional<Attribute> {
        auto it = renamed.find(ref.getValue());
        if (it == renamed.end())
          return std::nullopt;
        return FlatSymbolRefAttr::get(it->second);
      });
  replacer.recursivelyReplaceElementsIn(program, /*replaceAttrs=*/true,
                                        /*replaceLocs=*/false,
                                        /*replaceTypes=*/false);
}

/// Makes `fn` a declaration named `name`, or erases it where another kernel
/// of its module already became that declaration.
void replaceWithDeclaration(LLVM::LLVMFuncOp fn, StringAttr name,
                            SymbolTable &symbols) {
  symbols.remove(fn);
  if (symbols.lookup(name)) {
    fn.erase();
    return;
  }
  fn.getBody().dropAllReferences();
  fn.getBody().getBlocks().clear();
  fn.setSymNameAttr(name);
  fn.setLinkage(LLVM::Linkage::External);
  symbols.insert(fn);
}

} // namespace

SmallVector<OwningOpRef<ModuleOp>>
mlir::piper::shareKernels(ArrayRef<ModuleOp> programs, unsigned parts) {
  if (programs.empty())
    return {};
  SharedParts shared(ModuleOp(programs.front()).getContext(), parts);
  // Key -> shared name; the name is the key's hash, made unique should two
  // keys ever hash alike.
  llvm::StringMap<std::string> names;
  llvm::StringSet<> taken;
  for (ModuleOp program : programs) {
    SymbolTable symbols(program);
    SmallVector<LLVM::LLVMFuncOp> kernels;
    for (auto fn : program.getOps<LLVM::LLVMFuncOp>())
      if (isKernel(fn))
        kernels.push_back(fn);
    llvm::StringMap<StringAttr> renamed;
    SmallVector<std::pair<LLVM::LLVMFuncOp, StringAttr>> moved;
    for (LLVM::LLVMFuncOp fn : kernels) {
      SmallVector<LLVM::LLVMFuncOp> declarations;
      if (!collectDeclarations(fn, symbols, declarations))
        continue;
      std::string key = keyOf(fn, declarations);
      auto [it, inserted] = names.try_emplace(key);
      if (inserted) {
        std::string name;
        llvm::raw_string_ostream os(name);
        os << kSharedKernelPrefix
           << llvm::format_hex_no_prefix(llvm::xxh3_64bits(key), 16);
        for (unsigned n = 1; !taken.insert(name).second; ++n)
          name = (name + "_" + std::to_string(n));
        it->second = name;
        shared.add(fn, name, declarations, key.size());
      }
      auto name = StringAttr::get(program.getContext(), it->second);
      renamed[fn.getSymName()] = name;
      moved.emplace_back(fn, name);
    }
    renameUses(program, renamed);
    for (auto [fn, name] : moved)
      replaceWithDeclaration(fn, name, symbols);
  }
  return shared.take();
}
