# Precompiled headers for the C++ sources. nlohmann/json is the slowest header the project reads
# (most translation units reach it through a header of ours) and with the standard headers below
# it is most of each file's compile time on a small machine. One precompiled header is built with
# p2pbench_common from cmake/precompiled.hpp and every other C++ target reuses it, so it is compiled once per build.
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

# The C++ targets that can share p2pbench_common's header: static libraries, object libraries
# and executables with C++ sources, built without position-independent code as it is (a shared
# library, or a target with POSITION_INDEPENDENT_CODE, compiles with -fPIC/-fpie, which GCC
# refuses a header precompiled without: it warns and reads the headers again).
function(p2pbench_use_precompiled_headers)
  if(NOT P2PBENCH_PRECOMPILED_HEADERS)
    return()
  endif()
  # Named by the include path, not by its absolute path: the generated cmake_pch.hxx is then the
  # same in every copy of the tree, and a compiler cache (ccache's base_dir) reuses one copy's
  # objects in another (tests/registry/test_adding_a_method.py builds a scratch copy).
  target_include_directories(p2pbench_common PUBLIC ${CMAKE_SOURCE_DIR}/cmake)
  target_precompile_headers(p2pbench_common PRIVATE "$<$<COMPILE_LANGUAGE:CXX>:<precompiled.hpp$<ANGLE-R>>")
  p2pbench_targets_below(${CMAKE_SOURCE_DIR} targets)
  foreach(t ${targets})
    get_target_property(type ${t} TYPE)
    get_target_property(sources ${t} SOURCES)
    get_target_property(pic ${t} POSITION_INDEPENDENT_CODE)
    if(t STREQUAL p2pbench_common OR pic OR NOT type MATCHES "^(STATIC_LIBRARY|OBJECT_LIBRARY|EXECUTABLE)$")
      continue()
    endif()
    list(FILTER sources INCLUDE REGEX "\\.cpp$")
    if(sources)
      target_precompile_headers(${t} REUSE_FROM p2pbench_common)
    endif()
  endforeach()
endfunction()
