#include "common/version.h"

#include "build_gen/source_digest.h" /* generated: PGOLF_SOURCE_DIGEST, PGOLF_SOURCE_PARTS */

const char *pgolf_source_digest(void) { return PGOLF_SOURCE_DIGEST; }
const char *pgolf_source_parts(void) { return PGOLF_SOURCE_PARTS; }

const char *pgolf_compiler(void) {
#if defined(__clang__)
  return "clang " __clang_version__;
#elif defined(__GNUC__)
  return "gcc " __VERSION__;
#else
  return "unknown";
#endif
}

int pgolf_has_mpi(void) {
#ifdef PGOLF_HAVE_MPI
  return 1;
#else
  return 0;
#endif
}

int pgolf_has_cuda(void) {
#ifdef PGOLF_HAVE_CUDA
  return 1;
#else
  return 0;
#endif
}
