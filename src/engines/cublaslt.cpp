#include "engines/cublaslt.hpp"

#include "common/errors.hpp"
#include "engines/cublaslt_library.hpp"

namespace p2pbench {

void cublas_check(cublasStatus_t status, const std::string& what) {
  if (status != CUBLAS_STATUS_SUCCESS)
    throw RuntimeFailure(what + ": " + cublaslt().GetStatusName(status) + " (" + cublaslt().GetStatusString(status) +
                         ")");
}

namespace detail {
void LtHandleDestroy::operator()(cublasLtHandle_t h) const { cublaslt().Destroy(h); }
void LtMatmulDescDestroy::operator()(cublasLtMatmulDesc_t d) const { cublaslt().MatmulDescDestroy(d); }
void LtLayoutDestroy::operator()(cublasLtMatrixLayout_t l) const { cublaslt().MatrixLayoutDestroy(l); }
void LtPreferenceDestroy::operator()(cublasLtMatmulPreference_t p) const { cublaslt().MatmulPreferenceDestroy(p); }
}  // namespace detail

LtHandle make_lt_handle(const std::string& what) {
  return make_lt<cublasLtHandle_t, detail::LtHandleDestroy>([](cublasLtHandle_t* h) { return cublaslt().Create(h); },
                                                            "creating the cuBLASLt handle of " + what);
}

LtLayout make_layout(cudaDataType_t type, uint64_t rows, uint64_t cols, uint64_t ld, const std::string& what) {
  return make_lt<cublasLtMatrixLayout_t, detail::LtLayoutDestroy>(
      [&](cublasLtMatrixLayout_t* l) { return cublaslt().MatrixLayoutCreate(l, type, rows, cols, int64_t(ld)); },
      "describing " + what);
}

LtMatmulDesc make_bf16_matmul(const std::string& what) {
  LtMatmulDesc op = make_lt<cublasLtMatmulDesc_t, detail::LtMatmulDescDestroy>(
      [](cublasLtMatmulDesc_t* d) { return cublaslt().MatmulDescCreate(d, CUBLAS_COMPUTE_32F, CUDA_R_32F); },
      "creating the matmul descriptor of " + what);
  const cublasOperation_t no_transpose = CUBLAS_OP_N;
  cublas_check(cublaslt().MatmulDescSetAttribute(op.get(), CUBLASLT_MATMUL_DESC_TRANSA, &no_transpose, sizeof no_transpose),
               "setting the A operation of " + what);
  cublas_check(cublaslt().MatmulDescSetAttribute(op.get(), CUBLASLT_MATMUL_DESC_TRANSB, &no_transpose, sizeof no_transpose),
               "setting the B operation of " + what);
  return op;
}

void set_sm_count_target(cublasLtMatmulDesc_t op, int sms, const std::string& what) {
  const int32_t target = sms;
  cublas_check(cublaslt().MatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_SM_COUNT_TARGET, &target, sizeof target),
               "setting the SM count target of " + what + " to " + std::to_string(sms));
}

std::vector<cublasLtMatmulAlgo_t> heuristic_algorithms(cublasLtHandle_t handle, cublasLtMatmulDesc_t op,
                                                       cublasLtMatrixLayout_t a, cublasLtMatrixLayout_t b,
                                                       cublasLtMatrixLayout_t d, size_t workspace_bytes,
                                                       uint32_t reduction_mask, int most, const std::string& what) {
  LtPreference pref = make_lt<cublasLtMatmulPreference_t, detail::LtPreferenceDestroy>(
      [](cublasLtMatmulPreference_t* p) { return cublaslt().MatmulPreferenceCreate(p); },
      "creating the heuristic preference of " + what);
  cublas_check(cublaslt().MatmulPreferenceSetAttribute(pref.get(), CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace_bytes,
                                                    sizeof workspace_bytes),
               "setting the workspace limit of " + what);
  cublas_check(cublaslt().MatmulPreferenceSetAttribute(pref.get(), CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK, &reduction_mask,
                                                    sizeof reduction_mask),
               "limiting the split-K reductions of " + what);
  std::vector<cublasLtMatmulHeuristicResult_t> results(static_cast<size_t>(most));
  int returned = 0;
  cublas_check(cublaslt().MatmulAlgoGetHeuristic(handle, op, a, b, d, d, pref.get(), most, results.data(), &returned),
               "asking cuBLASLt for the algorithms of " + what);
  std::vector<cublasLtMatmulAlgo_t> algos;
  for (int i = 0; i < returned; ++i)
    if (results[size_t(i)].state == CUBLAS_STATUS_SUCCESS && results[size_t(i)].workspaceSize <= workspace_bytes)
      algos.push_back(results[size_t(i)].algo);
  return algos;
}

}  // namespace p2pbench
