/* What this build of pgolf is: recorded in every manifest it writes. */
#ifndef PGOLF_VERSION_H
#define PGOLF_VERSION_H

#define PGOLF_VERSION "0.1.0"

/* SHA-256 over the sorted list of "digest  path" lines of every source
 * file the binary was built from (computed by the Makefile). */
const char *pgolf_source_digest(void);
/* The parts whose .c, .h and .cu files (with the Makefile) make that
 * digest, space-separated, from the Makefile's PARTS: code bytes count
 * exactly these files (trainer/code_size.c). */
const char *pgolf_source_parts(void);
/* Compiler that built this binary, e.g. "gcc 12.2.0". */
const char *pgolf_compiler(void);
/* 1 when CUDA kernels were compiled in. */
int pgolf_has_cuda(void);
/* 1 when built with Open MPI (trainer/comm.h). */
int pgolf_has_mpi(void);

#endif
