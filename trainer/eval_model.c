/* The model an evaluation scores: an artifact's configuration, read from
 * its header, then the dequantized parameters (trainer/artifact.h).
 *
 * WHY READ THE HEADER HERE. artifact_load validates a file against a
 * layout the caller already has; an evaluation starts from the file alone,
 * so it inflates only the 72-byte header to learn the configuration, builds
 * the layout from it, and then lets artifact_load validate everything
 * (including this header again) against that layout. */
#include "trainer/eval_session.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

#include "common/le.h"
#include "common/fileio.h"
#include "trainer/artifact.h"


/* The first ARTIFACT_HEADER_BYTES of the decompressed payload. */
static int inflate_header(const uint8_t *buf, size_t len, const char *path,
                          uint8_t head[ARTIFACT_HEADER_BYTES], pg_error *err) {
  z_stream z;
  memset(&z, 0, sizeof z);
  if (inflateInit(&z) != Z_OK) return pg_fail(err, path, -1, "zlib inflateInit failed");
  z.next_in = (Bytef *)(uintptr_t)buf;
  z.avail_in = (uInt)len;
  z.next_out = head;
  z.avail_out = ARTIFACT_HEADER_BYTES;
  int rc = Z_OK;
  while (z.avail_out > 0 && rc == Z_OK) rc = inflate(&z, Z_NO_FLUSH);
  int got = ARTIFACT_HEADER_BYTES - (int)z.avail_out;
  inflateEnd(&z);
  if (got < ARTIFACT_HEADER_BYTES)
    return pg_fail(err, path, -1, "not an artifact: the zlib stream gives %d of the %d header bytes",
                   got, ARTIFACT_HEADER_BYTES);
  return 0;
}

int eval_model_config(const char *path, gpt_config *cfg, pg_error *err) {
  uint8_t *buf;
  size_t len;
  if (file_read_all(path, ARTIFACT_MAX_FILE_BYTES, &buf, &len, err)) return -1;
  uint8_t h[ARTIFACT_HEADER_BYTES];
  int rc = inflate_header(buf, len, path, h, err);
  free(buf);
  if (rc) return -1;
  if (memcmp(h, ARTIFACT_MAGIC, 8))
    return pg_fail(err, path, -1, "not a pgolf artifact (decompressed magic is not PGOLFQ8)");
  memset(cfg, 0, sizeof *cfg);
  cfg->vocab_size = (int32_t)le_u32(h + 24);
  cfg->num_layers = (int32_t)le_u32(h + 28);
  cfg->model_dim = (int32_t)le_u32(h + 32);
  cfg->num_heads = (int32_t)le_u32(h + 36);
  cfg->num_kv_heads = (int32_t)le_u32(h + 40);
  cfg->mlp_mult = (int32_t)le_u32(h + 44);
  cfg->seq_len = (int32_t)le_u32(h + 48);
  cfg->rope_base = le_f32(h + 52);
  cfg->logit_softcap = le_f32(h + 56);
  cfg->qk_gain_init = le_f32(h + 60);
  cfg->tied_embed_init_std = le_f32(h + 64);
  return 0;
}

int eval_model_load(const char *path, gpt_layout *l, float **flat, pg_error *err) {
  gpt_config cfg;
  *flat = NULL;
  if (eval_model_config(path, &cfg, err)) return -1;
  pg_error e2;
  if (gpt_layout_init(l, &cfg, &e2))
    return pg_fail(err, path, -1, "artifact configuration: %s", e2.msg);
  /* Deflate expands at most ~1032:1 and every parameter takes at least
   * one payload byte, so a header promising more parameters than the
   * file could hold is refused before anything that size is allocated. */
  struct stat st;
  if (stat(path, &st) || (uint64_t)l->n_params / 1100 > (uint64_t)st.st_size) {
    gpt_layout_free(l);
    return pg_fail(err, path, -1, "artifact header promises %zu parameters, more than the file "
                   "can hold", l->n_params);
  }
  *flat = malloc(l->n_params * sizeof **flat);
  if (!*flat) {
    gpt_layout_free(l);
    return pg_fail(err, path, -1, "out of memory for %zu parameters", l->n_params);
  }
  if (artifact_load(path, l, *flat, err)) {
    free(*flat);
    *flat = NULL;
    gpt_layout_free(l);
    return -1;
  }
  return 0;
}
