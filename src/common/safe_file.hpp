// Files the tool writes or sizes: the results file (replaced atomically, never through a
// planted symlink, every write checked) and POSIX shared-memory objects (space reserved up
// front, so a full /dev/shm is an error message, not a SIGBUS on first touch).
#pragma once

#include <cstdint>
#include <string>

namespace p2pbench {

// Replaces `path` with `text` so that a reader sees either the old file or the whole new one:
// the text goes to a temporary file created with mkstemp in the target directory (a fresh,
// unpredictable name opened with O_CREAT|O_EXCL, so a symlink planted beside the target is
// never followed), every write and the close are checked, then the temporary is renamed over
// `path`. rename() replaces a symlink AT `path` by the new file instead of writing through it.
//
// durable = true: the file is fsync'ed before the rename and the directory after it, so the new
// file survives an OS crash or power loss. durable = false skips both fsyncs (rename only): the
// data stays in the page cache, which a killed process (SIGKILL, OOM) does not lose - only an OS
// crash does. That is the cheap choice for a checkpoint after every case; the final write is
// durable.
//
// Any failure (full disk, EFBIG under RLIMIT_FSIZE, a missing or read-only directory, `path`
// being a directory) throws RuntimeFailure naming `path` and the OS's reason; the existing file
// is left untouched and no temporary file is left behind. With RLIMIT_FSIZE set, the process
// must ignore or handle SIGXFSZ for the write to fail with EFBIG instead of killing it.
void write_file_atomically(const std::string& path, const std::string& text, bool durable = true);

// Refuses, before anything is measured, an output path the final write could not replace:
// empty, ending in '/', an existing directory, symlink or other non-regular file, in a missing
// directory, or in a directory this process cannot create files in (probed with mkstemp and
// unlink, so no fixed probe name can be planted). Throws InputError naming `flag` and `path`.
void check_output_path(const std::string& path, const std::string& flag = "--output");

// Reserves `bytes` of real storage for `fd` (posix_fallocate; extends the file to `bytes`).
// On a full or too-small tmpfs such as /dev/shm this is a RuntimeFailure saying so, where
// ftruncate alone would succeed and the first touch of a page would raise SIGBUS.
// `what` says what the space is for ("the start gate (POSIX shared memory /p2pbench-...)").
void reserve_file_space(int fd, uint64_t bytes, const std::string& what);

}  // namespace p2pbench
