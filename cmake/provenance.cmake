# Which sources a build came from, taken when the binary is BUILT (not when CMake configured):
# recorded in every results file (meta.provenance) and printed by `p2pbench --version`.
#
# The build runs it on every build (src/CMakeLists.txt, target p2pbench_provenance):
#   cmake -DSOURCE_DIR=DIR -DOUTPUT_CPP=FILE -DBUILD_TYPE=Release -DCUDA_ARCHITECTURES=80-real,90
#         "-DCXX_COMPILER=GNU 12.2.0" "-DCUDA_COMPILER=NVIDIA 12.8.93" -P cmake/provenance.cmake
# OUTPUT_CPP is rewritten only when the record changed (built_utc aside), so a build of an
# unchanged tree recompiles nothing. -DOUTPUT_JSON=FILE also writes the record as JSON.
# scripts/stamp-provenance.sh runs it before a tree is copied without its .git folder:
#   cmake -DSOURCE_DIR=DIR -DWRITE_STAMP=DIR/PROVENANCE.json -P cmake/provenance.cmake
#
# The record:
#   commit, dirty, diff_sha256  from git where SOURCE_DIR is the top of a git work tree
#       (origin "git"): HEAD; whether a file differs from HEAD or an untracked file is not
#       ignored; and the SHA-256 of the lines "SHA256  PATH" (PATH's content now, "deleted" for
#       a removed file), sorted by path, of those files: the same change gives the same hash
#       whatever git's version or diff settings. null where the tree is clean.
#     from SOURCE_DIR/PROVENANCE.json where it matches the sources found, before git (a copy
#       may sit beside another tree's .git), and where git cannot tell (origin "PROVENANCE.json");
#       stale_stamp: the sources changed after it was written (then dirty, diff unknown).
#     else commit "unknown", dirty and diff_sha256 null (origin "unknown").
#   source_sha256  always, from the files themselves: SHA-256 of sha256sum's lines for every file
#       under src/ kernels/ tools/ schema/ cmake/, the top CMakeLists.txt and configs/default.json
#       (built in), sorted by path, __pycache__ and *.pyc left out; the same as
#         find src kernels tools schema cmake CMakeLists.txt configs/default.json -type f \
#           ! -path '*/__pycache__/*' ! -name '*.pyc' | LC_ALL=C sort | xargs sha256sum | sha256sum
#   build_type, cuda_architectures, cxx_compiler, cuda_compiler, built_utc (when the record last
#       changed: the first build of these sources with these settings).
cmake_minimum_required(VERSION 3.24)

set(SOURCE_ROOTS src kernels tools schema cmake CMakeLists.txt configs/default.json)

# Stops with `text` on one line (message(FATAL_ERROR) alone wraps it).
function(fail text)
  message(NOTICE "provenance: error: ${text}")
  message(FATAL_ERROR "provenance: stopped")
endfunction()

# "HASH  PATH\n" for each path (relative to SOURCE_DIR, sorted); "deleted" for a missing file.
function(hash_lines out)
  set(paths ${ARGN})
  list(SORT paths)
  set(lines "")
  foreach(path IN LISTS paths)
    if(IS_DIRECTORY "${SOURCE_DIR}/${path}")
      set(hash "directory")
    elseif(EXISTS "${SOURCE_DIR}/${path}")
      file(SHA256 "${SOURCE_DIR}/${path}" hash)
    else()
      set(hash "deleted")
    endif()
    string(APPEND lines "${hash}  ${path}\n")
  endforeach()
  set(${out} "${lines}" PARENT_SCOPE)
endfunction()

function(source_hash out)
  set(files "")
  foreach(root IN LISTS SOURCE_ROOTS)
    if(IS_DIRECTORY "${SOURCE_DIR}/${root}")
      file(GLOB_RECURSE found RELATIVE "${SOURCE_DIR}" "${SOURCE_DIR}/${root}/*")
      list(FILTER found EXCLUDE REGEX "(^|/)__pycache__/|\\.pyc$")
      list(APPEND files ${found})
    elseif(EXISTS "${SOURCE_DIR}/${root}")
      list(APPEND files "${root}")
    endif()
  endforeach()
  hash_lines(lines ${files})
  string(SHA256 hash "${lines}")
  set(${out} "${hash}" PARENT_SCOPE)
endfunction()

# Runs git in SOURCE_DIR; `out` is its output without the last newline, `ok` whether it exited 0.
function(git_in_source out ok)
  execute_process(COMMAND "${GIT_EXECUTABLE}" --no-optional-locks -c core.quotepath=off ${ARGN}
                  WORKING_DIRECTORY "${SOURCE_DIR}" RESULT_VARIABLE status OUTPUT_VARIABLE text
                  ERROR_QUIET OUTPUT_STRIP_TRAILING_WHITESPACE)
  set(${out} "${text}" PARENT_SCOPE)
  if(status EQUAL 0)
    set(${ok} TRUE PARENT_SCOPE)
  else()
    set(${ok} FALSE PARENT_SCOPE)
  endif()
endfunction()

# Sets commit, dirty, diff_sha256 in the caller from git; found = FALSE where SOURCE_DIR is not
# the top of a git work tree (a copy without .git inside another repository is not its own).
function(from_git found)
  set(${found} FALSE PARENT_SCOPE)
  if(NOT GIT_EXECUTABLE)
    return()
  endif()
  git_in_source(top ok rev-parse --show-toplevel)
  if(NOT ok)
    return()
  endif()
  file(REAL_PATH "${top}" top)
  file(REAL_PATH "${SOURCE_DIR}" here)
  git_in_source(head ok rev-parse --verify HEAD)
  if(NOT top STREQUAL here OR NOT ok)
    return()
  endif()
  git_in_source(changed ok_changed diff HEAD --name-only --no-renames)
  git_in_source(untracked ok_untracked ls-files --others --exclude-standard)
  if(NOT ok_changed OR NOT ok_untracked)
    fail("git diff / git ls-files failed in ${SOURCE_DIR}")
  endif()
  string(REPLACE "\n" ";" paths "${changed}\n${untracked}")
  list(REMOVE_ITEM paths "")
  list(REMOVE_DUPLICATES paths)
  set(commit "${head}" PARENT_SCOPE)
  if(paths)
    hash_lines(lines ${paths})
    string(SHA256 diff "${lines}")
    set(dirty true PARENT_SCOPE)
    set(diff_sha256 "\"${diff}\"" PARENT_SCOPE)
  else()
    set(dirty false PARENT_SCOPE)
    set(diff_sha256 null PARENT_SCOPE)
  endif()
  set(${found} TRUE PARENT_SCOPE)
endfunction()

# JSON value of key `key` in `json` as JSON text ("null" where absent).
function(json_value out json key)
  string(JSON type ERROR_VARIABLE missing TYPE "${json}" "${key}")
  if(missing)
    set(${out} null PARENT_SCOPE)
  elseif(type STREQUAL "NULL")
    set(${out} null PARENT_SCOPE)
  else()
    string(JSON text GET "${json}" "${key}")
    if(type STREQUAL "STRING")
      set(${out} "\"${text}\"" PARENT_SCOPE)
    elseif(type STREQUAL "BOOLEAN" AND text)  # GET answers ON / OFF
      set(${out} true PARENT_SCOPE)
    elseif(type STREQUAL "BOOLEAN")
      set(${out} false PARENT_SCOPE)
    else()
      set(${out} "${text}" PARENT_SCOPE)
    endif()
  endif()
endfunction()

# Sets commit, dirty, diff_sha256, stamped_utc, stale_stamp from SOURCE_DIR/PROVENANCE.json.
function(from_stamp found sources)
  set(${found} FALSE PARENT_SCOPE)
  set(path "${SOURCE_DIR}/PROVENANCE.json")
  if(NOT EXISTS "${path}")
    return()
  endif()
  file(READ "${path}" stamp)
  string(JSON format ERROR_VARIABLE bad GET "${stamp}" format)
  string(JSON commit ERROR_VARIABLE bad_commit GET "${stamp}" commit)
  if(bad OR bad_commit OR NOT format STREQUAL "p2pbench-provenance")
    fail("${path}: not a provenance stamp (no \"format\": \"p2pbench-provenance\" and \"commit\"); remove it or write it again with scripts/stamp-provenance.sh")
  endif()
  foreach(key dirty diff_sha256 stamped_utc source_sha256)
    json_value(${key} "${stamp}" ${key})
  endforeach()
  set(commit "${commit}" PARENT_SCOPE)
  set(stamped_utc "${stamped_utc}" PARENT_SCOPE)
  if(source_sha256 STREQUAL "\"${sources}\"")
    set(stale_stamp false PARENT_SCOPE)
    set(dirty "${dirty}" PARENT_SCOPE)
    set(diff_sha256 "${diff_sha256}" PARENT_SCOPE)
  else()  # edited after stamping: it differs from the commit in a way nobody recorded
    set(stale_stamp true PARENT_SCOPE)
    set(dirty true PARENT_SCOPE)
    set(diff_sha256 null PARENT_SCOPE)
  endif()
  set(${found} TRUE PARENT_SCOPE)
endfunction()

# The record's JSON text from the caller's variables; built_utc only where `time` is given.
function(record_json out time)
  set(text "{\"commit\": \"${commit}\", \"dirty\": ${dirty}, \"diff_sha256\": ${diff_sha256}, ")
  string(APPEND text "\"source_sha256\": \"${source_sha256}\", \"origin\": \"${origin}\"")
  if(origin STREQUAL "PROVENANCE.json")
    string(APPEND text ", \"stamped_utc\": ${stamped_utc}, \"stale_stamp\": ${stale_stamp}")
  endif()
  foreach(key build_type cuda_architectures cxx_compiler cuda_compiler)
    string(TOUPPER "${key}" name)
    string(REPLACE "\"" "'" value "${${name}}")
    string(APPEND text ", \"${key}\": \"${value}\"")
  endforeach()
  if(time)
    string(APPEND text ", \"built_utc\": \"${time}\"")
  endif()
  set(${out} "${text}}" PARENT_SCOPE)
endfunction()

function(write_stamp path)
  if(NOT git_found)
    fail("${SOURCE_DIR} is not the top of a git work tree (or git is missing): nothing to stamp")
  endif()
  string(TIMESTAMP now "%Y-%m-%dT%H:%M:%SZ" UTC)
  file(WRITE "${path}.tmp" "{\"format\": \"p2pbench-provenance\", \"commit\": \"${commit}\", \"dirty\": ${dirty}, "
                           "\"diff_sha256\": ${diff_sha256}, \"source_sha256\": \"${source_sha256}\", "
                           "\"stamped_utc\": \"${now}\"}\n")
  file(RENAME "${path}.tmp" "${path}")
  message(STATUS "provenance: wrote ${path}: commit ${commit}, dirty ${dirty}")
endfunction()

# Writes OUTPUT_CPP (and OUTPUT_JSON) unless the record, built_utc aside, is what it holds.
function(write_record)
  record_json(fingerprint_text "")
  string(SHA256 fingerprint "${fingerprint_text}")
  set(marker "// record sha256: ${fingerprint}")
  if(EXISTS "${OUTPUT_CPP}")
    file(STRINGS "${OUTPUT_CPP}" held REGEX "^// record sha256: ")
    if(held STREQUAL marker AND (NOT OUTPUT_JSON OR EXISTS "${OUTPUT_JSON}"))
      return()
    endif()
  endif()
  string(TIMESTAMP now "%Y-%m-%dT%H:%M:%SZ" UTC)
  record_json(record "${now}")
  file(WRITE "${OUTPUT_CPP}"
       "// Written by cmake/provenance.cmake when the build ran: do not edit.\n${marker}\n"
       "namespace p2pbench {\n\nconst char* build_provenance_json() {\n"
       "  return R\"provenance(${record})provenance\";\n}\n\n}  // namespace p2pbench\n")
  if(OUTPUT_JSON)
    file(WRITE "${OUTPUT_JSON}" "${record}\n")
  endif()
endfunction()

if(NOT SOURCE_DIR OR (NOT OUTPUT_CPP AND NOT WRITE_STAMP))
  fail("usage: cmake -DSOURCE_DIR=DIR (-DOUTPUT_CPP=FILE [-DOUTPUT_JSON=FILE] | -DWRITE_STAMP=FILE) -P provenance.cmake")
endif()
if(NOT DEFINED GIT_EXECUTABLE)
  find_program(GIT_EXECUTABLE git)
endif()
source_hash(source_sha256)
if(WRITE_STAMP)
  from_git(git_found)
  write_stamp("${WRITE_STAMP}")
  return()
endif()
# A stamp that matches these sources was written where the tree had its history: it wins over a
# git checkout found here, which may be another tree's (seen: a GPU node's copy of the tree beside
# an older .git, which named an old commit and called the tree dirty).
from_stamp(stamp_found "${source_sha256}")
if(stamp_found AND stale_stamp STREQUAL "false")
  set(origin PROVENANCE.json)
else()
  from_git(git_found)
  if(git_found)
    set(origin git)
  elseif(stamp_found)
    from_stamp(stamp_found "${source_sha256}")
    set(origin PROVENANCE.json)
  else()
    set(origin unknown)
    set(commit unknown)
    set(dirty null)
    set(diff_sha256 null)
  endif()
endif()
write_record()
