# Compiles through ccache where it is installed and no launcher was given: a second build of the
# same sources (a developer's rebuild, or tests/registry/test_adding_a_method.py's scratch copy of
# the tree inside this build folder) then takes this build's objects instead of compiling again.
#
# The launcher is one generated script (a path, not a list, so that it passes whole through
# -DCMAKE_CXX_COMPILER_LAUNCHER=... to a scratch build) that sets what sharing needs:
#   base_dir     the deepest folder holding both the sources and this build folder, so that
#                compile lines name files relative to their folder and a copy of the tree
#                below it hashes like the tree itself;
#   sloppiness   pch_defines,time_macros for the precompiled header (ccache's manual), and
#                include_file_mtime/ctime: a copied tree's files are new;
#   depend_mode  hashes the -MD dependency list instead of running the preprocessor on a miss,
#                so a cold cache costs the first build little.
# Turn it off with -DP2PBENCH_COMPILER_CACHE=OFF.
option(P2PBENCH_COMPILER_CACHE "Compile through ccache where it is installed" ON)

# The deepest folder holding both `a` and `b` (absolute paths), into `out`.
function(p2pbench_common_folder a b out)
  string(REPLACE "/" ";" parts_a "${a}")
  string(REPLACE "/" ";" parts_b "${b}")
  set(common "")
  list(LENGTH parts_a n_a)
  list(LENGTH parts_b n_b)
  set(n ${n_a})
  if(n_b LESS n)
    set(n ${n_b})
  endif()
  math(EXPR last "${n} - 1")
  foreach(i RANGE 1 ${last})
    list(GET parts_a ${i} pa)
    list(GET parts_b ${i} pb)
    if(NOT pa STREQUAL pb)
      break()
    endif()
    string(APPEND common "/${pa}")
  endforeach()
  set(${out} "${common}" PARENT_SCOPE)
endfunction()

function(p2pbench_use_compiler_cache)
  set(launcher "${CMAKE_BINARY_DIR}/compiler-cache")
  # A launcher this file set earlier is redone (or dropped when turned off); another is left alone.
  foreach(lang CXX CUDA)
    if(CMAKE_${lang}_COMPILER_LAUNCHER STREQUAL launcher)
      unset(CMAKE_${lang}_COMPILER_LAUNCHER CACHE)
    endif()
  endforeach()
  if(NOT P2PBENCH_COMPILER_CACHE OR CMAKE_CXX_COMPILER_LAUNCHER OR CMAKE_CUDA_COMPILER_LAUNCHER)
    return()
  endif()
  find_program(P2PBENCH_CCACHE ccache)
  if(NOT P2PBENCH_CCACHE)
    message(STATUS "ccache not found: every build compiles every file (scripts/install-deps.sh installs it)")
    return()
  endif()
  p2pbench_common_folder("${CMAKE_SOURCE_DIR}" "${CMAKE_BINARY_DIR}" base_dir)
  configure_file("${CMAKE_SOURCE_DIR}/cmake/compiler-cache.sh.in" "${launcher}" @ONLY
                 FILE_PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE WORLD_READ WORLD_EXECUTE)
  set(CMAKE_CXX_COMPILER_LAUNCHER "${launcher}" CACHE STRING "Compiler launcher (cmake/CompilerCache.cmake)")
  set(CMAKE_CUDA_COMPILER_LAUNCHER "${launcher}" CACHE STRING "Compiler launcher (cmake/CompilerCache.cmake)")
  message(STATUS "Compiling through ccache (${P2PBENCH_CCACHE}; base_dir ${base_dir})")
endfunction()
