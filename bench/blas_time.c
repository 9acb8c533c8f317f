/*===- blas_time.c - Time every BLAS GEMM of a process (LD_PRELOAD) --------===
 *
 * Part of the Piper project, under the Apache License v2.0 with LLVM
 * Exceptions. See LICENSE for license information.
 * SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
 *
 *===-----------------------------------------------------------------------===
 *
 * bench/gpt-step.sh preloads this into piper-run to split a step into GEMMs
 * and everything else without perf: cblas_sgemm and cblas_dgemm (the only
 * BLAS calls of the kernel library, lib/Kernels) are timed with
 * CLOCK_MONOTONIC around OpenBLAS's own, and at exit the totals go to the
 * file named by PIPER_BLAS_TIME ("calls seconds"). A preloaded library
 * comes first in the global scope, so the plan's calls bind here even though
 * piper-run dlopens the plan with RTLD_LOCAL.
 *
 *===-----------------------------------------------------------------------===
 */

#include <cblas.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double total;
static long calls;

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* OpenBLAS's own symbol: the plan's dependencies are not in the global
 * scope, so RTLD_NEXT may not see it; dlopen returns the loaded copy. */
static void *openblas(const char *name) {
  static void *handle;
  if (!handle)
    handle = dlopen("libopenblas.so.0", RTLD_NOW);
  void *fn = handle ? dlsym(handle, name) : NULL;
  if (!fn) {
    fprintf(stderr, "blas_time: no %s in libopenblas.so.0\n", name);
    abort();
  }
  return fn;
}

#define GEMM(NAME, T)                                                          \
  typedef void (*NAME##_fn)(                                                   \
      const enum CBLAS_ORDER, const enum CBLAS_TRANSPOSE,                      \
      const enum CBLAS_TRANSPOSE, const blasint, const blasint, const blasint, \
      const T, const T *, const blasint, const T *, const blasint, const T,    \
      T *, const blasint);                                                     \
  void NAME(const enum CBLAS_ORDER o, const enum CBLAS_TRANSPOSE ta,           \
            const enum CBLAS_TRANSPOSE tb, const blasint m, const blasint n,   \
            const blasint k, const T alpha, const T *a, const blasint lda,     \
            const T *b, const blasint ldb, const T beta, T *c,                 \
            const blasint ldc) {                                               \
    static NAME##_fn real;                                                     \
    if (!real)                                                                 \
      real = (NAME##_fn)openblas(#NAME);                                       \
    double start = now();                                                      \
    real(o, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);             \
    total += now() - start;                                                    \
    ++calls;                                                                   \
  }

GEMM(cblas_sgemm, float)
GEMM(cblas_dgemm, double)

__attribute__((destructor)) static void report(void) {
  const char *path = getenv("PIPER_BLAS_TIME");
  FILE *out = path ? fopen(path, "w") : NULL;
  if (!out)
    return;
  fprintf(out, "%ld %.9f\n", calls, total);
  fclose(out);
}
