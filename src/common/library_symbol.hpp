// A function of a library loaded at run time (NVML, cuFile, cuBLASLt: none is linked, so that
// binaries start, and start fast, where a library is missing or not needed).
#pragma once

#include <dlfcn.h>

namespace p2pbench {

// Sets `slot` to the library's function `name`, as slot's function pointer type; null where the
// library lacks it.
template <typename Fn>
void load_symbol(void* library, Fn& slot, const char* name) {
  slot = reinterpret_cast<Fn>(dlsym(library, name));
}

}  // namespace p2pbench
