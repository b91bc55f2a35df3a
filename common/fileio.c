#include "common/fileio.h"
#include "common/grow.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static int read_fd_bounded(int fd, const char *path, size_t max_bytes, uint8_t **out, size_t *len,
                           pg_error *err) {
  size_t cap = 65536, n = 0;
  uint8_t *buf = malloc(cap + 1);
  if (!buf) return pg_fail(err, path, -1, "out of memory");
  for (;;) {
    if (n == cap) {
      if (cap > max_bytes) break;
      /* One byte past the capacity stays free for the NUL. */
      size_t room = cap + 1;
      if (PG_GROW(buf, room, 2 * cap + 1, 0)) {
        free(buf);
        return pg_fail(err, path, -1, "out of memory");
      }
      cap = room - 1;
    }
    ssize_t r = read(fd, buf + n, cap - n);
    if (r < 0) {
      if (errno == EINTR) continue;
      free(buf);
      return pg_fail_errno(err, path, "read failed");
    }
    if (r == 0) break;
    n += (size_t)r;
    if (n > max_bytes) break;
  }
  if (n > max_bytes) {
    free(buf);
    return pg_fail(err, path, -1, "file larger than the limit of %zu bytes", max_bytes);
  }
  buf[n] = 0;
  *out = buf;
  *len = n;
  return 0;
}

int file_read_all(const char *path, size_t max_bytes, uint8_t **out, size_t *len, pg_error *err) {
  if (strcmp(path, "-") == 0) return read_fd_bounded(0, "<stdin>", max_bytes, out, len, err);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return pg_fail_errno(err, path, "cannot open");
  struct stat st;
  if (fstat(fd, &st) != 0) {
    close(fd);
    return pg_fail_errno(err, path, "cannot stat");
  }
  if (S_ISDIR(st.st_mode)) {
    close(fd);
    return pg_fail(err, path, -1, "is a directory");
  }
  if (S_ISREG(st.st_mode) && (unsigned long long)st.st_size > max_bytes) {
    close(fd);
    return pg_fail(err, path, -1, "file of %lld bytes is larger than the limit of %zu bytes",
                   (long long)st.st_size, max_bytes);
  }
  int rc = read_fd_bounded(fd, path, max_bytes, out, len, err);
  close(fd);
  return rc;
}

static int write_all(int fd, const uint8_t *p, size_t len) {
  while (len) {
    ssize_t w = write(fd, p, len);
    if (w < 0) {
      if (errno == EINTR) continue;
      return -1;
    }
    p += w;
    len -= (size_t)w;
  }
  return 0;
}

/* fsync the directory holding path so the rename itself is durable. */
static void sync_parent_dir(const char *path) {
  char tmp[4096];
  snprintf(tmp, sizeof tmp, "%s", path);
  int dfd = open(dirname(tmp), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    (void)fsync(dfd);
    close(dfd);
  }
}

int file_write_atomic(const char *path, const void *buf, size_t len, unsigned mode, pg_error *err) {
  char tmp[4096];
  if (snprintf(tmp, sizeof tmp, "%s.tmp.XXXXXX", path) >= (int)sizeof tmp)
    return pg_fail(err, path, -1, "path too long");
  int fd = mkstemp(tmp);
  if (fd < 0) return pg_fail_errno(err, path, "cannot create temporary file");
  if (write_all(fd, buf, len) != 0 || fchmod(fd, (mode_t)mode) != 0 || fsync(fd) != 0) {
    pg_fail_errno(err, path, "cannot write");
    close(fd);
    unlink(tmp);
    return -1;
  }
  if (close(fd) != 0) {
    pg_fail_errno(err, path, "cannot close");
    unlink(tmp);
    return -1;
  }
  if (rename(tmp, path) != 0) {
    pg_fail_errno(err, path, "cannot rename temporary file into place");
    unlink(tmp);
    return -1;
  }
  sync_parent_dir(path);
  return 0;
}

int file_map(const char *path, mapped_file *m, pg_error *err) {
  m->data = NULL;
  m->size = 0;
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return pg_fail_errno(err, path, "cannot open");
  struct stat st;
  if (fstat(fd, &st) != 0) {
    close(fd);
    return pg_fail_errno(err, path, "cannot stat");
  }
  if (!S_ISREG(st.st_mode)) {
    close(fd);
    return pg_fail(err, path, -1, "not a regular file");
  }
  if (st.st_size > 0) {
    void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      close(fd);
      return pg_fail_errno(err, path, "cannot mmap");
    }
    m->data = p;
    m->size = (size_t)st.st_size;
  }
  close(fd);
  return 0;
}

void file_unmap(mapped_file *m) {
  if (m->data) munmap((void *)m->data, m->size);
  m->data = NULL;
  m->size = 0;
}
