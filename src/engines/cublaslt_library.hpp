// cuBLASLt loaded at run time, the first time a GEMM is set up. libcublasLt is half a gigabyte
// with hundreds of thousands of relocations: linked, it cost every start of every binary (each
// --help, --dry-run and test) 0.1-0.2 s of system time, for the few runs that multiply matrices.
// The header's types are used as they are; only the calls go through this table.
#pragma once

#include <cublasLt.h>

namespace p2pbench {

struct CublasLtApi {
  decltype(&cublasLtCreate) Create = nullptr;
  decltype(&cublasLtDestroy) Destroy = nullptr;
  decltype(&cublasLtGetStatusName) GetStatusName = nullptr;
  decltype(&cublasLtGetStatusString) GetStatusString = nullptr;
  decltype(&cublasLtMatrixLayoutCreate) MatrixLayoutCreate = nullptr;
  decltype(&cublasLtMatrixLayoutDestroy) MatrixLayoutDestroy = nullptr;
  decltype(&cublasLtMatmulDescCreate) MatmulDescCreate = nullptr;
  decltype(&cublasLtMatmulDescDestroy) MatmulDescDestroy = nullptr;
  decltype(&cublasLtMatmulDescSetAttribute) MatmulDescSetAttribute = nullptr;
  decltype(&cublasLtMatmulPreferenceCreate) MatmulPreferenceCreate = nullptr;
  decltype(&cublasLtMatmulPreferenceDestroy) MatmulPreferenceDestroy = nullptr;
  decltype(&cublasLtMatmulPreferenceSetAttribute) MatmulPreferenceSetAttribute = nullptr;
  decltype(&cublasLtMatmulAlgoGetHeuristic) MatmulAlgoGetHeuristic = nullptr;
  decltype(&cublasLtMatmul) Matmul = nullptr;
};

// The library's functions, loaded on the first call (once per process, thread-safe) and never
// changed after. Throws RuntimeFailure naming the files tried and the loader's reason, or the
// function the library lacks.
const CublasLtApi& cublaslt();

}  // namespace p2pbench
