#include "comm/communicator.hpp"

#include <mpi.h>

#include <algorithm>
#include <cstdlib>

#include "common/errors.hpp"

namespace p2pbench {

namespace {

void mpi_check(int rc, const char* what) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, text, &len);
  throw RuntimeFailure(std::string("MPI failed while ") + what + ": " + std::string(text, size_t(len)));
}


}  // namespace

Communicator::Communicator(int* argc, char*** argv) {
  int provided = 0;
  mpi_check(MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided), "initialising MPI");
  // Return codes instead of aborting, so every failure is reported with what was being done.
  mpi_check(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN), "setting the MPI error handler");
  mpi_check(MPI_Comm_rank(MPI_COMM_WORLD, &rank_), "reading the MPI rank");
  mpi_check(MPI_Comm_size(MPI_COMM_WORLD, &size_), "reading the MPI job size");
  auto* local = new MPI_Comm;
  mpi_check(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, local),
            "splitting the node-local communicator");
  local_comm_ = local;
  mpi_check(MPI_Comm_rank(*local, &local_rank_), "reading the node-local rank");
  mpi_check(MPI_Comm_size(*local, &local_size_), "reading the node-local size");
  char name[MPI_MAX_PROCESSOR_NAME];
  int len = 0;
  mpi_check(MPI_Get_processor_name(name, &len), "reading the host name");
  host_.assign(name, size_t(len));
}

Communicator::~Communicator() {
  auto* local = static_cast<MPI_Comm*>(local_comm_);
  if (local) {
    MPI_Comm_free(local);
    delete local;
  }
  MPI_Finalize();
}

void Communicator::barrier(const char* what) const { mpi_check(MPI_Barrier(MPI_COMM_WORLD), what); }

void Communicator::broadcast(std::string& bytes, int root, const char* what) const {
  unsigned long long n = bytes.size();
  mpi_check(MPI_Bcast(&n, 1, MPI_UNSIGNED_LONG_LONG, root, MPI_COMM_WORLD), what);
  bytes.resize(n);
  // MPI counts are int: move large blobs in pieces.
  constexpr size_t kPiece = 1 << 30;
  for (size_t off = 0; off < n; off += kPiece) {
    const int count = int(std::min<size_t>(kPiece, n - off));
    mpi_check(MPI_Bcast(&bytes[off], count, MPI_BYTE, root, MPI_COMM_WORLD), what);
  }
}

std::vector<std::string> Communicator::allgather(const std::string& mine, const char* what) const {
  const int my_len = int(mine.size());
  std::vector<int> lens(size_t(size_), 0);
  mpi_check(MPI_Allgather(&my_len, 1, MPI_INT, lens.data(), 1, MPI_INT, MPI_COMM_WORLD), what);
  std::vector<int> displs(size_t(size_), 0);
  int total = 0;
  for (int r = 0; r < size_; ++r) {
    displs[size_t(r)] = total;
    total += lens[size_t(r)];
  }
  std::string all(size_t(total), '\0');
  mpi_check(MPI_Allgatherv(mine.data(), my_len, MPI_BYTE, all.data(), lens.data(), displs.data(), MPI_BYTE,
                           MPI_COMM_WORLD),
            what);
  std::vector<std::string> out;
  for (int r = 0; r < size_; ++r) out.push_back(all.substr(size_t(displs[size_t(r)]), size_t(lens[size_t(r)])));
  return out;
}

bool Communicator::all_true(bool mine, const char* what) const {
  int in = mine ? 1 : 0, out = 0;
  mpi_check(MPI_Allreduce(&in, &out, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD), what);
  return out != 0;
}

double Communicator::max(double mine, const char* what) const {
  double out = 0;
  mpi_check(MPI_Allreduce(&mine, &out, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD), what);
  return out;
}

void Communicator::abort(int exit_status) const {
  MPI_Abort(MPI_COMM_WORLD, exit_status);
  std::exit(exit_status);
}

}  // namespace p2pbench
