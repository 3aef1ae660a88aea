# Precompiled headers for the C++ sources. nlohmann/json is the slowest header the project reads
# (most translation units reach it through a header of ours) and with the standard headers below
# it is most of each file's compile time on a small machine. One precompiled header is built with
# p2pbench_common from cmake/precompiled.hpp and every other C++ target reuses it, so it is compiled once per build;
# a second, from the same header, with p2pbench_topology for the position-independent targets
# (topology, the methods, the kernels' C++ files), which cannot use the first.
# CUDA sources are left alone (nvcc does not take CMake's precompiled headers). Turn it off with
# -DP2PBENCH_PRECOMPILED_HEADERS=OFF (e.g. to check that each file includes what it uses).
option(P2PBENCH_PRECOMPILED_HEADERS "Precompile nlohmann/json and the standard headers" ON)


# Every target below `dir` (folders and their subfolders), into `out`.
function(p2pbench_targets_below dir out)
  get_property(targets DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
  get_property(subdirs DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
  foreach(sub ${subdirs})
    p2pbench_targets_below(${sub} below)
    list(APPEND targets ${below})
  endforeach()
  set(${out} ${targets} PARENT_SCOPE)
endfunction()

# The C++ targets that share a header: static libraries, object libraries and executables with
# C++ sources. GCC refuses a header precompiled with other code-generation flags (it warns and
# reads the headers again), so a target with POSITION_INDEPENDENT_CODE (-fPIC) takes
# p2pbench_topology's and the others p2pbench_common's. Shared libraries are left alone.
function(p2pbench_use_precompiled_headers)
  if(NOT P2PBENCH_PRECOMPILED_HEADERS)
    return()
  endif()
  set(header "$<$<COMPILE_LANGUAGE:CXX>:${CMAKE_SOURCE_DIR}/cmake/precompiled.hpp>")
  target_precompile_headers(p2pbench_common PRIVATE "${header}")
  target_precompile_headers(p2pbench_topology PRIVATE "${header}")
  p2pbench_targets_below(${CMAKE_SOURCE_DIR} targets)
  foreach(t ${targets})
    get_target_property(type ${t} TYPE)
    get_target_property(sources ${t} SOURCES)
    get_target_property(pic ${t} POSITION_INDEPENDENT_CODE)
    set(host p2pbench_common)
    if(pic)
      set(host p2pbench_topology)
    endif()
    if(t STREQUAL host OR NOT type MATCHES "^(STATIC_LIBRARY|OBJECT_LIBRARY|EXECUTABLE)$")
      continue()
    endif()
    list(FILTER sources INCLUDE REGEX "\\.cpp$")
    if(sources)
      target_precompile_headers(${t} REUSE_FROM ${host})
    endif()
  endforeach()
endfunction()
