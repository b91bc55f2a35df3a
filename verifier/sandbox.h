/* The bubblewrap sandbox a replayed submission runs in.
 *
 * Inside, the program sees only: /usr (and the /bin, /lib* links into it),
 * a few files of /etc it needs to start (dynamic loader cache, users,
 * hosts for torchrun's loopback rendezvous), a fresh /proc and /dev (plus
 * the NVIDIA device nodes when the host has them), read-only /sys, an empty
 * tmpfs /tmp, the data directory read-only at SANDBOX_DATA, the tokenizer
 * read-only under SANDBOX_TOKENIZER_DIR, and the scratch copy of the
 * submission read-write at SANDBOX_WORK (its cwd and HOME). Every
 * namespace is unshared, so the only network is a private loopback. The
 * root is remounted read-only at the end, so a write anywhere but the
 * scratch directory (or the throwaway /tmp) fails.
 *
 * The inside paths are fixed rather than the host's: a host path such as
 * the folder the scratch directory lives in simply does not exist inside,
 * so nothing of the host layout can be written even by accident. */
#ifndef PGOLF_SANDBOX_H
#define PGOLF_SANDBOX_H

#include <stddef.h>

#include "common/error.h"

#define SANDBOX_WORK "/submission"
#define SANDBOX_DATA "/data"
#define SANDBOX_TOKENIZER_DIR "/tokenizer"
#define SANDBOX_PATH_ENV "/usr/local/bin:/usr/bin:/bin"
#define SANDBOX_MAX_EXTRA 16
#define SANDBOX_NO_GPU (-1)

typedef struct sandbox_spec {
  const char *scratch;   /* host directory, bound read-write at SANDBOX_WORK */
  const char *data_dir;  /* host directory bound read-only at SANDBOX_DATA, or NULL */
  const char *tokenizer; /* host file bound read-only in SANDBOX_TOKENIZER_DIR, or NULL */
  const char *seed;      /* decimal, exported as SEED */
  const char *run_id;    /* exported as RUN_ID */
  /* Extra host paths bound read-only at the same path (an interpreter
   * outside /usr, such as a virtual environment). */
  const char *ro_extra[SANDBOX_MAX_EXTRA];
  size_t n_ro_extra;
  char *const *cmd; /* the program and its arguments, NULL-terminated */
  /* GPUs: 0 binds every NVIDIA device node the host has; N > 0 binds the
   * control nodes (nvidiactl, nvidia-uvm, ...) and only /dev/nvidia0 ..
   * N-1, and exports CUDA_VISIBLE_DEVICES=0,...,N-1; SANDBOX_NO_GPU none. */
  int gpus;
  const char *dev_root; /* where the device nodes are; NULL: "/dev" (tests use a fake) */
} sandbox_spec;

/* A NULL-terminated argv owned by the struct. */
typedef struct sandbox_argv {
  char **v;
  size_t n, cap;
} sandbox_argv;

/* Find bwrap on PATH (or $PGOLF_BWRAP); fails naming the package. */
int sandbox_find_bwrap(char *path, size_t cap, pg_error *err);

/* Build the full argv: bwrap, its options, "--", then spec->cmd. */
int sandbox_build(const sandbox_spec *s, const char *bwrap, sandbox_argv *a, pg_error *err);
void sandbox_argv_free(sandbox_argv *a);

/* Run `true` once in a sandbox built exactly as sandbox_build does (with
 * an empty scratch directory), so a replay fails at startup, with the
 * reason, instead of after copying the folder. The message says what is
 * missing: bwrap itself, or user namespaces (with the kernel's limits). */
int sandbox_probe(const char *bwrap, pg_error *err);

/* Where the tokenizer appears inside ("/tokenizer/<basename>"). */
int sandbox_tokenizer_inside(const char *host_path, char *out, size_t cap);

#endif
