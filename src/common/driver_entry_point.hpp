// Driver API functions fetched at run time through the runtime (cudaGetDriverEntryPointByVersion),
// so nothing links libcuda directly and a missing function is a clear error, not a load failure.
#pragma once

#include <cuda.h>  // types only
#include <cuda_runtime_api.h>

#include <stdexcept>
#include <string>

namespace p2pbench {

// A driver call's failure, named: "creating the transfer's green context: CUDA_ERROR_..."
class DriverFailure : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The driver's `symbol` in the ABI of CUDA `version` (1000 x major + 10 x minor).
template <typename Fn>
Fn driver_entry_point(const char* symbol, unsigned version) {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
  const cudaError_t err = cudaGetDriverEntryPointByVersion(symbol, &fn, version, cudaEnableDefault, &found);
  if (err != cudaSuccess || found != cudaDriverEntryPointSuccess || fn == nullptr) {
    cudaGetLastError();
    throw DriverFailure(std::string("the driver has no ") + symbol + " (CUDA " + std::to_string(version / 1000) + "." +
                        std::to_string(version % 1000 / 10) + " or newer needed" +
                        (err != cudaSuccess ? std::string(": ") + cudaGetErrorName(err) : std::string()) + ")");
  }
  return reinterpret_cast<Fn>(fn);
}

// "CUDA_ERROR_...": the driver's name of `result` ("CUresult N" where it has none).
inline std::string driver_error_name(CUresult result) {
  using GetErrorName = CUresult(CUDAAPI*)(CUresult, const char**);
  static const GetErrorName get_error_name = driver_entry_point<GetErrorName>("cuGetErrorName", 6000);
  const char* name = nullptr;
  get_error_name(result, &name);
  return name ? name : "CUresult " + std::to_string(int(result));
}

// Throws DriverFailure("<what>: CUDA_ERROR_...") unless `result` is CUDA_SUCCESS.
inline void driver_check(CUresult result, const std::string& what) {
  if (result != CUDA_SUCCESS) throw DriverFailure(what + ": " + driver_error_name(result));
}

}  // namespace p2pbench
