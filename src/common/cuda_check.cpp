#include "common/cuda_check.hpp"

namespace p2pbench {

CudaError::CudaError(cudaError_t code, const std::string& what)
    : RuntimeFailure(what + ": " + cudaGetErrorName(code) + " (" + cudaGetErrorString(code) + ")"),
      code_(code) {}

bool CudaError::sticky() const {
  switch (code_) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorHardwareStackError:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorLaunchTimeout:
    case cudaErrorAssert:
    case cudaErrorECCUncorrectable:
    case cudaErrorNvlinkUncorrectable:
    case cudaErrorContained:         // an error contained by the GPU: the process must end
    case cudaErrorExternalDevice:
    case cudaErrorTensorMemoryLeak:
    case cudaErrorUnknown:
      return true;
    default:
      return false;
  }
}

void cuda_check(cudaError_t err, const std::string& what) {
  if (err != cudaSuccess) throw CudaError(err, what);
}

void cuda_check_launch(const std::string& what) { cuda_check(cudaGetLastError(), "launching " + what); }

int current_device() {
  int device = 0;
  cuda_check(cudaGetDevice(&device), "asking which GPU is current");
  return device;
}

int sm_count(int device) {
  int sms = 0;
  cuda_check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device),
             "counting the SMs of GPU " + std::to_string(device));
  return sms;
}

}  // namespace p2pbench
