#include "engines/cublaslt_library.hpp"

#include <dlfcn.h>

#include <string>

#include "common/errors.hpp"
#include "common/library_symbol.hpp"

namespace p2pbench {
namespace {

// The toolkit's library by its soname (the loader's search path, as a linked library would be
// found), then in the directory the build found it in (P2PBENCH_CUBLASLT_DIR, set by CMake).
void* open_library(std::string& tried) {
  const std::string soname = P2PBENCH_CUBLASLT_SONAME;
  for (const std::string& file : {soname, std::string(P2PBENCH_CUBLASLT_DIR) + "/" + soname}) {
    if (void* lib = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL)) return lib;
    const char* why = dlerror();
    tried += (tried.empty() ? "" : "; ") + file + ": " + (why ? why : "unknown dlopen error");
  }
  return nullptr;
}

template <typename Fn>
void load(void* lib, Fn& slot, const char* name) {
  load_symbol(lib, slot, name);
  if (!slot) throw RuntimeFailure(std::string("loading cuBLASLt: the library has no ") + name);
}

CublasLtApi load_api() {
  std::string tried;
  void* lib = open_library(tried);  // kept open for the life of the process
  if (!lib) throw RuntimeFailure("loading cuBLASLt for the GEMM: " + tried);
  CublasLtApi api;
  load(lib, api.Create, "cublasLtCreate");
  load(lib, api.Destroy, "cublasLtDestroy");
  load(lib, api.GetStatusName, "cublasLtGetStatusName");
  load(lib, api.GetStatusString, "cublasLtGetStatusString");
  load(lib, api.MatrixLayoutCreate, "cublasLtMatrixLayoutCreate");
  load(lib, api.MatrixLayoutDestroy, "cublasLtMatrixLayoutDestroy");
  load(lib, api.MatmulDescCreate, "cublasLtMatmulDescCreate");
  load(lib, api.MatmulDescDestroy, "cublasLtMatmulDescDestroy");
  load(lib, api.MatmulDescSetAttribute, "cublasLtMatmulDescSetAttribute");
  load(lib, api.MatmulPreferenceCreate, "cublasLtMatmulPreferenceCreate");
  load(lib, api.MatmulPreferenceDestroy, "cublasLtMatmulPreferenceDestroy");
  load(lib, api.MatmulPreferenceSetAttribute, "cublasLtMatmulPreferenceSetAttribute");
  load(lib, api.MatmulAlgoGetHeuristic, "cublasLtMatmulAlgoGetHeuristic");
  load(lib, api.Matmul, "cublasLtMatmul");
  return api;
}

}  // namespace

const CublasLtApi& cublaslt() {
  static const CublasLtApi api = load_api();  // a failed load throws, and the next call tries again
  return api;
}

}  // namespace p2pbench
