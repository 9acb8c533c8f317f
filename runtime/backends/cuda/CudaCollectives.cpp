//===- CudaCollectives.cpp - NCCL communicators and plan collectives ------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The communication half of plan_abi.h's Part 1 on NCCL, with the MPI
// backend's semantics (runtime/backends/mpi/PlanBackend.cpp): inputs are
// packed on the compute stream (they may be strided slices; packing is the
// "copied out at once" of the header), the communicator's stream waits for
// that, and the collective runs there; a program's wait makes the compute
// stream wait for the recorded event. Scaling is NCCL's pre-multiplied sum
// (scale * sum = sum of scale * x), reduce_scatter zero-pads the flattened
// gradient to members x chunk, all_gather keeps the whole tensor's elements.
// NCCL point-to-point has no tags: between two ranks, messages match in
// posting order, which is the programs' order.
//
//===----------------------------------------------------------------------===//

#include "CudaBackend.h"
#include "Device.h"

#include "../mpi/Internal.h"

using namespace piper::cuda;
using piper::plan::Element;

namespace {
const char *at(const piper_memref_view &v, size_t elt) {
  return piper_memref_data(&v, elt);
}
char *mutableAt(const piper_memref_view &v, size_t elt) {
  return piper_memref_data(&v, elt);
}
} // namespace

//===----------------------------------------------------------------------===//
// Communicators
//===----------------------------------------------------------------------===//

bool CudaBackend::makeComm(ncclComm_t &comm, int color, int key,
                           const std::string &what) {
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  if (partition.partitioned) {
    CtaLimits l = ctaLimits(partition.communication);
    config.minCTAs = l.minCTAs;
    config.maxCTAs = l.maxCTAs;
  }
  return nccl(n->ncclCommSplit(world, color, key, &comm, &config), what);
}

bool CudaBackend::addCommunicator(const std::vector<std::string> &axes,
                                  const std::string &streamName) {
  std::vector<const char *> names;
  for (const std::string &axis : axes)
    names.push_back(axis.c_str());
  uint32_t mask = 0;
  if (piper::rt::axisMask(context->mesh, names.size(), names.data(), &mask) !=
      PIPER_RT_OK)
    return false;
  CUstream &stream = streamsByName[streamName];
  if (!stream && d->cuStreamCreateWithPriority(&stream, CU_STREAM_NON_BLOCKING,
                                               highPriority) != CUDA_SUCCESS) {
    PIPER_RT_ERROR(PIPER_RT_ERROR_UNAVAILABLE,
                   "cannot create the CUDA stream '%s'", streamName.c_str());
    return false;
  }
  // Every rank splits the world for every communicator, in manifest order.
  SplitPlan plan = splitFor(context->mesh, self, mask);
  std::string name = piper::rt::describeAxes(context->mesh, mask) +
                     " of stream '" + streamName + "'";
  ncclComm_t comm = nullptr;
  if (!makeComm(comm, plan.color, plan.key, "communicator " + name)) {
    PIPER_RT_ERROR(PIPER_RT_ERROR_COMMUNICATION, "%s", errors.message.c_str());
    return false;
  }
  comms.push_back(comm);
  commStreams.push_back(stream);
  commPlans.push_back(std::move(plan));
  commNames.push_back(name);
  return true;
}

ncclComm_t CudaBackend::commAt(int64_t index, const char *what) {
  if (index >= 0 && static_cast<size_t>(index) < comms.size() && comms[index])
    return comms[index];
  fail(std::string(what) + ": the plan has no communicator #" +
       std::to_string(index));
  return nullptr;
}

//===----------------------------------------------------------------------===//
// Point to point
//===----------------------------------------------------------------------===//

void CudaBackend::send(const View &v, Element e, int64_t offset, int64_t tag) {
  size_t count = static_cast<size_t>(piper_memref_numel(&v));
  void *copy = scratch(count * e.size, compute);
  if (copy && gather(v, e.size, copy, compute))
    sends.push_back(
        {copy, count, e.dtype, static_cast<int>(self + offset), tag});
}

void CudaBackend::recv(const View &v, Element e, int64_t offset, int64_t) {
  flushSends(&v, e, static_cast<int>(self + offset));
}

/// Posts the staged sends and, with `into`, the receive into it, as one
/// NCCL group on the point-to-point stream after the compute stream's work;
/// the compute stream then waits for the receive.
bool CudaBackend::flushSends(const View *into, Element e, int peer) {
  if (!p2p) {
    fail("point-to-point: the communicator was aborted");
    return false;
  }
  CUevent begin = nullptr;
  order(compute, p2pStream);
  spanBegin(p2pStream, begin);
  bool ok = nccl(n->ncclGroupStart(), "point-to-point group");
  for (const Send &s : sends)
    ok = ok && nccl(n->ncclSend(s.data, s.count, ncclType(s.dtype), s.peer, p2p,
                                p2pStream),
                    "send (peer rank " + std::to_string(s.peer) + ", tag " +
                        std::to_string(s.tag) + ")");
  if (into)
    ok = ok && nccl(n->ncclRecv(mutableAt(*into, e.size),
                                static_cast<size_t>(piper_memref_numel(into)),
                                ncclType(e.dtype), peer, p2p, p2pStream),
                    "recv (peer rank " + std::to_string(peer) + ")");
  ok = nccl(n->ncclGroupEnd(), "point-to-point group") && ok;
  spanEnd(p2pStream, begin, into ? "recv" : "send", "comm", "p2p");
  for (const Send &s : sends)
    release(s.data, p2pStream);
  sends.clear();
  if (into)
    order(p2pStream, compute);
  return ok;
}

bool CudaBackend::move(void *data, size_t count, piper_rt_dtype dtype, int from,
                       int to, int) {
  if ((self != from && self != to) || from == to)
    return true;
  size_t elt = 0;
  piper_rt_dtype_size(dtype, &elt);
  void *stage = scratch(count * elt, p2pStream);
  if (!stage || !drain(compute, "move"))
    return false;
  bool ok = true;
  if (self == from)
    ok = check(d->cuMemcpyHtoDAsync(reinterpret_cast<CUdeviceptr>(stage), data,
                                    count * elt, p2pStream),
               "move");
  ok = ok && (self == from ? nccl(n->ncclSend(stage, count, ncclType(dtype), to,
                                              p2p, p2pStream),
                                  "move to rank " + std::to_string(to))
                           : nccl(n->ncclRecv(stage, count, ncclType(dtype),
                                              from, p2p, p2pStream),
                                  "move from rank " + std::to_string(from)));
  if (ok && self == to)
    ok = check(d->cuMemcpyDtoHAsync(data, reinterpret_cast<CUdeviceptr>(stage),
                                    count * elt, p2pStream),
               "move");
  ok = ok && drain(p2pStream, "move");
  release(stage, p2pStream);
  return ok;
}

//===----------------------------------------------------------------------===//
// Collectives
//===----------------------------------------------------------------------===//

/// All-reduce of `count` packed elements at `data` into `out` on
/// communicator `index`'s stream, scaled.
bool CudaBackend::reduce(void *data, int64_t count, Element e, int64_t index,
                         double scale, const char *what, void *out) {
  ncclComm_t comm = comms[index];
  CUstream stream = commStreams[index];
  ncclRedOp_t op = ncclSum;
  float f = static_cast<float>(scale);
  bool premul = scale != 1.0;
  if (premul &&
      !nccl(n->ncclRedOpCreatePreMulSum(
                &op, e.dtype == PIPER_RT_F64 ? static_cast<void *>(&scale) : &f,
                ncclType(e.dtype), ncclScalarHostImmediate, comm),
            std::string(what) + " scale"))
    return false;
  CUevent begin = nullptr;
  spanBegin(stream, begin);
  bool ok = nccl(n->ncclAllReduce(data, out, static_cast<size_t>(count),
                                  ncclType(e.dtype), op, comm, stream),
                 std::string(what) + " on " + commNames[index]);
  spanEnd(stream, begin, what, "comm", "comm " + commNames[index]);
  if (premul)
    n->ncclRedOpDestroy(op, comm);
  return ok;
}

void CudaBackend::iallReduce(const View &in, const View &out, Element e,
                             int64_t index, double scale) {
  if (!commAt(index, "all_reduce"))
    return;
  char *data = mutableAt(out, e.size);
  if (gather(in, e.size, data, compute) && order(compute, commStreams[index]))
    reduce(data, piper_memref_numel(&in), e, index, scale, "all_reduce", data);
}

/// In-body all-reduce (tensor parallelism), and the clip's host scalar:
/// host memory is staged through the device and copied back at once.
void CudaBackend::allReduce(const View &in, const View &out, Element e,
                            int64_t index, double scale) {
  if (!commAt(index, "all_reduce"))
    return;
  CUmemorytype type = CU_MEMORYTYPE_HOST;
  const char *source = at(in, e.size);
  bool device = d->cuPointerGetAttribute(
                    &type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                    reinterpret_cast<CUdeviceptr>(source)) == CUDA_SUCCESS &&
                type == CU_MEMORYTYPE_DEVICE;
  if (device) {
    iallReduce(in, out, e, index, scale);
    order(commStreams[index], compute);
    return;
  }
  int64_t count = piper_memref_numel(&in);
  size_t bytes = static_cast<size_t>(count) * e.size;
  std::vector<char> packed(bytes);
  piper_memref_gather(&in, e.size, packed.data());
  void *stage = scratch(bytes, compute);
  if (!stage ||
      !check(d->cuMemcpyHtoDAsync(reinterpret_cast<CUdeviceptr>(stage),
                                  packed.data(), bytes, compute),
             "all_reduce") ||
      !order(compute, commStreams[index]) ||
      !reduce(stage, count, e, index, scale, "all_reduce", stage) ||
      !check(d->cuMemcpyDtoHAsync(mutableAt(out, e.size),
                                  reinterpret_cast<CUdeviceptr>(stage), bytes,
                                  commStreams[index]),
             "all_reduce") ||
      !drain(commStreams[index], "all_reduce on " + commNames[index])) {
    release(stage, commStreams[index]);
    return;
  }
  release(stage, commStreams[index]);
}

void CudaBackend::ireduceScatter(const View &in, const View &out, Element e,
                                 int64_t index, double scale) {
  ncclComm_t comm = commAt(index, "reduce_scatter");
  if (!comm)
    return;
  CUstream stream = commStreams[index];
  size_t chunk = static_cast<size_t>(piper_memref_numel(&out));
  size_t bytes = chunk * commSize(index) * e.size;
  char *whole = static_cast<char *>(scratch(bytes, compute));
  if (!whole ||
      !check(d->cuMemsetD8Async(reinterpret_cast<CUdeviceptr>(whole), 0, bytes,
                                compute),
             "reduce_scatter padding") ||
      !gather(in, e.size, whole, compute) || !order(compute, stream)) {
    release(whole, compute);
    return;
  }
  ncclRedOp_t op = ncclSum;
  float f = static_cast<float>(scale);
  bool premul = scale != 1.0;
  if (!premul ||
      nccl(n->ncclRedOpCreatePreMulSum(
               &op, e.dtype == PIPER_RT_F64 ? static_cast<void *>(&scale) : &f,
               ncclType(e.dtype), ncclScalarHostImmediate, comm),
           "reduce_scatter scale")) {
    CUevent begin = nullptr;
    spanBegin(stream, begin);
    nccl(n->ncclReduceScatter(whole, mutableAt(out, e.size), chunk,
                              ncclType(e.dtype), op, comm, stream),
         "reduce_scatter on " + commNames[index]);
    spanEnd(stream, begin, "reduce_scatter", "comm",
            "comm " + commNames[index]);
    if (premul)
      n->ncclRedOpDestroy(op, comm);
  }
  release(whole, stream);
}

void CudaBackend::iallGather(const View &in, const View &out, Element e,
                             int64_t index) {
  ncclComm_t comm = commAt(index, "all_gather");
  if (!comm)
    return;
  CUstream stream = commStreams[index];
  size_t chunk = static_cast<size_t>(piper_memref_numel(&in));
  size_t bytes = static_cast<size_t>(piper_memref_numel(&out)) * e.size;
  void *mine = scratch(chunk * e.size, compute);
  void *all = scratch(chunk * commSize(index) * e.size, compute);
  if (mine && all && gather(in, e.size, mine, compute) &&
      order(compute, stream)) {
    CUevent begin = nullptr;
    spanBegin(stream, begin);
    if (nccl(
            n->ncclAllGather(mine, all, chunk, ncclType(e.dtype), comm, stream),
            "all_gather on " + commNames[index]))
      check(d->cuMemcpyAsync(
                reinterpret_cast<CUdeviceptr>(mutableAt(out, e.size)),
                reinterpret_cast<CUdeviceptr>(all), bytes, stream),
            "all_gather");
    spanEnd(stream, begin, "all_gather", "comm", "comm " + commNames[index]);
  }
  release(mine, stream);
  release(all, stream);
}

void CudaBackend::shard(const View &in, const View &out, Element e,
                        int64_t index) {
  if (!commAt(index, "shard"))
    return;
  size_t chunk = static_cast<size_t>(piper_memref_numel(&out)) * e.size;
  size_t bytes = chunk * commSize(index);
  char *whole = static_cast<char *>(scratch(bytes, compute));
  if (whole &&
      check(d->cuMemsetD8Async(reinterpret_cast<CUdeviceptr>(whole), 0, bytes,
                               compute),
            "shard") &&
      gather(in, e.size, whole, compute))
    check(d->cuMemcpyAsync(
              reinterpret_cast<CUdeviceptr>(mutableAt(out, e.size)),
              reinterpret_cast<CUdeviceptr>(whole + member(index) * chunk),
              chunk, compute),
          "shard");
  release(whole, compute);
}

namespace {
/// `height` blocks of `width` bytes from pitch `srcPitch` to `dstPitch`.
CUresult copyBlocks(const Driver &d, char *dst, size_t dstPitch,
                    const char *src, size_t srcPitch, size_t width,
                    size_t height, CUstream stream) {
  CUDA_MEMCPY2D m = {};
  m.srcMemoryType = m.dstMemoryType = CU_MEMORYTYPE_DEVICE;
  m.srcDevice = reinterpret_cast<CUdeviceptr>(src);
  m.dstDevice = reinterpret_cast<CUdeviceptr>(dst);
  m.srcPitch = srcPitch;
  m.dstPitch = dstPitch;
  m.WidthInBytes = width;
  m.Height = height;
  return d.cuMemcpy2DAsync(&m, stream);
}
} // namespace

/// Expert parallelism's exchange (plan_abi.h): one NCCL group of a send and
/// a receive per member; the [E/N, N C, R] reordering is N 2-D copies.
void CudaBackend::allToAll(const View &in, const View &out, Element e,
                           int64_t index, int64_t direction) {
  ncclComm_t comm = commAt(index, "all_to_all");
  if (!comm)
    return;
  int64_t nm = commSize(index);
  const View &tokens = direction == 0 ? in : out;
  if (tokens.rank < 2 || tokens.sizes[0] % nm != 0) {
    fail("all_to_all (communicator #" + std::to_string(index) +
         "): the buffer does not split into " + std::to_string(nm) +
         " expert groups");
    return;
  }
  CUstream stream = commStreams[index];
  int64_t local = tokens.sizes[0] / nm, slots = tokens.sizes[1], row = 1;
  for (int64_t i = 2; i < tokens.rank; ++i)
    row *= tokens.sizes[i];
  size_t block = static_cast<size_t>(local * slots * row);
  size_t piece = static_cast<size_t>(slots * row) * e.size;
  size_t bytes = block * nm * e.size;
  char *sendBuf = static_cast<char *>(scratch(bytes, compute));
  char *recvBuf = static_cast<char *>(scratch(bytes, compute));
  char *packed = static_cast<char *>(scratch(bytes, compute));
  char *result = mutableAt(out, e.size);
  bool ok = sendBuf && recvBuf && packed;
  if (ok && direction == 0) {
    ok = gather(in, e.size, sendBuf, compute);
  } else if (ok) {
    ok = gather(in, e.size, packed, compute);
    // [E/N, N C, R] -> block j = [:, j C : (j+1) C].
    for (int64_t j = 0; ok && j < nm; ++j)
      ok = check(copyBlocks(*d, sendBuf + j * local * piece, piece,
                            packed + j * piece, nm * piece, piece, local,
                            compute),
                 "all_to_all");
  }
  ok = ok && order(compute, stream) &&
       nccl(n->ncclGroupStart(), "all_to_all group");
  for (int64_t j = 0; ok && j < nm; ++j)
    ok = nccl(n->ncclSend(sendBuf + j * block * e.size, block,
                          ncclType(e.dtype), static_cast<int>(j), comm, stream),
              "all_to_all send") &&
         nccl(n->ncclRecv(recvBuf + j * block * e.size, block,
                          ncclType(e.dtype), static_cast<int>(j), comm, stream),
              "all_to_all recv");
  ok = ok && nccl(n->ncclGroupEnd(), "all_to_all on " + commNames[index]);
  if (ok && direction == 0) {
    // recv [s][e][c] -> out [e][s C + c].
    for (int64_t s = 0; ok && s < nm; ++s)
      ok = check(copyBlocks(*d, result + s * piece, nm * piece,
                            recvBuf + s * local * piece, piece, piece, local,
                            stream),
                 "all_to_all");
  } else if (ok) {
    ok = check(d->cuMemcpyAsync(reinterpret_cast<CUdeviceptr>(result),
                                reinterpret_cast<CUdeviceptr>(recvBuf), bytes,
                                stream),
               "all_to_all");
  }
  order(stream, compute);
  for (char *p : {sendBuf, recvBuf, packed})
    release(p, stream);
}
