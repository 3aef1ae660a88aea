// cuBLASLt's handles as RAII objects, and its status checked with what was being done: what the
// GEMM workload (workloads/gemm_workload.hpp) and the GEMM -> reduce-scatter pipeline
// (methods/gemm_rs) share.
#pragma once

#include <cublasLt.h>

#include <string>
#include <vector>

#include "common/cuda_raii.hpp"

namespace p2pbench {

// Throws RuntimeFailure("<what>: <status name> (<status text>)") unless status is success.
void cublas_check(cublasStatus_t status, const std::string& what);

namespace detail {
struct LtHandleDestroy {
  void operator()(cublasLtHandle_t h) const;
};
struct LtMatmulDescDestroy {
  void operator()(cublasLtMatmulDesc_t d) const;
};
struct LtLayoutDestroy {
  void operator()(cublasLtMatrixLayout_t l) const;
};
struct LtPreferenceDestroy {
  void operator()(cublasLtMatmulPreference_t p) const;
};
}  // namespace detail

using LtHandle = UniqueHandle<cublasLtHandle_t, detail::LtHandleDestroy>;
using LtMatmulDesc = UniqueHandle<cublasLtMatmulDesc_t, detail::LtMatmulDescDestroy>;
using LtLayout = UniqueHandle<cublasLtMatrixLayout_t, detail::LtLayoutDestroy>;
using LtPreference = UniqueHandle<cublasLtMatmulPreference_t, detail::LtPreferenceDestroy>;

// Makes a cuBLASLt object with `create` (a cublasLt*Create call), checked.
template <typename Handle, typename Deleter, typename Create>
UniqueHandle<Handle, Deleter> make_lt(Create create, const std::string& what) {
  Handle h{};
  cublas_check(create(&h), what);
  return UniqueHandle<Handle, Deleter>(h);
}

LtHandle make_lt_handle(const std::string& what);
// A column-major layout of `type` with rows x cols and leading dimension ld.
LtLayout make_layout(cudaDataType_t type, uint64_t rows, uint64_t cols, uint64_t ld, const std::string& what);
// D = A B without transposes, bf16 operands, fp32 accumulation (CUBLAS_COMPUTE_32F).
LtMatmulDesc make_bf16_matmul(const std::string& what);
// Tells `op` the SMs its launches may use (CUBLASLT_MATMUL_DESC_SM_COUNT_TARGET; 0: the whole
// GPU): cuBLASLt sizes its persistent grids by it, and its heuristic answers for it.
void set_sm_count_target(cublasLtMatmulDesc_t op, int sms, const std::string& what);

// The heuristic's algorithms for D = A B (C = D), at most `most`, within `workspace_bytes` and
// the split-K reduction schemes of `reduction_mask` (CUBLASLT_REDUCTION_SCHEME_*); only those
// whose state is success and whose workspace fits, in the heuristic's order.
std::vector<cublasLtMatmulAlgo_t> heuristic_algorithms(cublasLtHandle_t handle, cublasLtMatmulDesc_t op,
                                                       cublasLtMatrixLayout_t a, cublasLtMatrixLayout_t b,
                                                       cublasLtMatrixLayout_t d, size_t workspace_bytes,
                                                       uint32_t reduction_mask, int most, const std::string& what);

}  // namespace p2pbench
