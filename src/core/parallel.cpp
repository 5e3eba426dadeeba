#include "core/parallel.h"

#include "core/error.h"

namespace oneflow {

namespace {
int num_threads = 0;  // 0: not read yet
}

int GetNumThreads() {
  if (num_threads == 0) num_threads = omp_get_max_threads();
  return num_threads;
}

void SetNumThreads(int n) {
  OF_CHECK_VALUE(n > 0) << "set_num_threads expects a positive number of threads, got " << n;
  num_threads = n;
  omp_set_num_threads(n);
}

}  // namespace oneflow
