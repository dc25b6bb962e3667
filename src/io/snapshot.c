/* snapshot.c - model snapshots: the envelope, atomic write, XXH3-64 checked load, the entry points.
 *
 * Layout (docs/snapshot-format.md): "SLDASNAP", uint32 big-endian format
 * version, a MessagePack header map, body blocks of at most
 * SLDA_SNAP_BLOCK_ROWS vocabulary rows, an end-marker map, and a big-endian
 * XXH3-64 (seed 0) of every byte before it. Rows hold the raw lazy-scaled A
 * (Nphi = sigma * A), and the optional header key "births" the births state
 * (births.c), so a restored model continues training bit for bit, births
 * decisions included.
 *
 * Writing packs through a msgpack_packer into a snap_sink_t that either grows
 * one memory buffer (encode) or is flushed to the temp file after every block
 * (write): the same bytes either way, and a file write holds at most about one
 * block in memory. The file's checksum is computed over a read-only mapping of
 * the temp file once the body is out (hash.c offers no streaming state yet), so
 * a FIFO, device or standard output, which cannot be re-read, gets the whole
 * encoded buffer instead.
 *
 * Reading never trusts its input: envelope, version and checksum are checked
 * before anything is parsed, and the MessagePack is then walked with
 * core/msgpack.c's bounds-checked reader rather than msgpack_unpack, which
 * allocates whatever an array header claims (4 bytes can ask for 96 GB).
 * Every count is bounded by the bytes that remain, nesting is bounded, and
 * anything unexpected is refused with SLDA_ERR_CORRUPT naming the field and
 * byte offset. Strings are copied out of the input buffer before it is
 * released.
 *
 * This file holds the envelope, the output sink and the entry points; each
 * section has its own file (snapshot_priv.h): the header, its parameters and
 * births state, and the body.
 *
 * The file goes through slda_outfile (outfile.c): a regular file is replaced
 * atomically (temp file, fsync, rename, directory fsync), a FIFO, device or
 * "-" is written straight. The writer only reads the model; the caller owns a
 * decoded model. Two writers in one process must not write the same path at
 * the same time (the temp name is "<target>.tmp.<pid>").
 */
#include "io/snapshot_priv.h"
#include "io/outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define SNAP_HEAD_LEN (SLDA_SNAP_MAGIC_LEN + 4)
#define SNAP_MIN_LEN (SNAP_HEAD_LEN + SLDA_SNAP_TRAILER_LEN)
#define SNAP_FLUSH_BYTES ((size_t)1 << 20) /* file mode: write out every 1 MiB */
#define SNAP_MEM_NAME "<memory>"

/* ------------------------------------------------------------------------ */
/* Output sink: a memory buffer that grows (encode) or is flushed to a file. */

typedef struct snap_sink_s {
    unsigned char *buf;
    size_t len, cap;
    FILE *fp;       /* NULL: memory mode, buf keeps everything */
    uint64_t total; /* bytes emitted */
    int err;        /* errno of the first failure, 0 if none */
} snap_sink_t;

static int sink_flush(snap_sink_t *sink)
{
    if (sink->err)
        return -1;
    if (sink->fp && sink->len) {
        if (fwrite(sink->buf, 1, sink->len, sink->fp) != sink->len) {
            sink->err = errno ? errno : EIO;
            return -1;
        }
        sink->len = 0;
    }
    return 0;
}

static int sink_grow(snap_sink_t *sink, size_t n)
{
    size_t cap = sink->cap ? sink->cap : 65536;
    void *p;
    while (cap - sink->len < n) {
        if (cap > SIZE_MAX / 2) {
            sink->err = ENOMEM;
            return -1;
        }
        cap *= 2;
    }
    p = realloc(sink->buf, cap); /* model-sized: fail softly, never abort */
    if (!p) {
        sink->err = ENOMEM;
        return -1;
    }
    sink->buf = p;
    sink->cap = cap;
    return 0;
}

/* msgpack_packer_write: 0 on success, -1 once anything has failed. */
static int sink_write(void *data, const char *bytes, size_t n)
{
    snap_sink_t *sink = data;
    if (sink->err)
        return -1;
    if (sink->fp && n > sink->cap - sink->len && sink_flush(sink))
        return -1;
    if (sink->fp && n > sink->cap) {
        if (fwrite(bytes, 1, n, sink->fp) != n) {
            sink->err = errno ? errno : EIO;
            return -1;
        }
    } else {
        if (n > sink->cap - sink->len && sink_grow(sink, n))
            return -1;
        memcpy(sink->buf + sink->len, bytes, n);
        sink->len += n;
    }
    sink->total += n;
    return 0;
}

static slda_err_t sink_error(const snap_sink_t *sink, const char *name, char *errstr,
                             size_t errstr_size)
{
    if (sink->fp)
        return slda_set_err(errstr, errstr_size, SLDA_ERR_IO, "snapshot \"%s\": write: %s",
                            name, strerror(sink->err));
    return slda_set_err(errstr, errstr_size, SLDA_ERR_NOMEM,
                        "snapshot \"%s\": cannot allocate the %" PRIu64 "-byte encoding",
                        name, sink->total);
}

static void put_be(unsigned char *dst, uint64_t v, unsigned nbytes)
{
    for (unsigned i = 0; i < nbytes; i++)
        dst[i] = (unsigned char)(v >> (8 * (nbytes - 1 - i)));
}

static uint64_t get_be(const unsigned char *src, unsigned nbytes)
{
    uint64_t v = 0;
    for (unsigned i = 0; i < nbytes; i++)
        v = (v << 8) | src[i];
    return v;
}

/* ------------------------------------------------------------------------ */
/* Writer                                                                    */

/* Parameters the writer cannot name are a caller bug, refused before output. */
static slda_err_t snap_check_writable(const slda_model_t *model, const char *name,
                                      char *errstr, size_t errstr_size)
{
    const slda_params_t *p = slda_model_params(model);
    uint32_t K = slda_model_topics(model), W = slda_model_rows(model);
    if (K == 0 || K > SLDA_MAX_TOPICS)
        return slda_set_err(errstr, errstr_size, SLDA_ERR_INVALID,
                            "snapshot \"%s\": model has K=%u", name, K);
    if (!slda_local_name(p->vb, p->hybrid) || (unsigned)p->alpha_learn > SLDA_ALPHA_NEWTON ||
        (unsigned)p->stats > SLDA_STATS_SAMPLE)
        return slda_set_err(errstr, errstr_size, SLDA_ERR_INVALID,
                            "snapshot \"%s\": model has an unnamed local/alpha.learn/"
                            "local.stats value (%d/%d/%d)",
                            name, (int)p->vb, (int)p->alpha_learn, (int)p->stats);
    if (slda_vocab_max_id(slda_model_vocab(model)) > W)
        return slda_set_err(errstr, errstr_size, SLDA_ERR_INVALID,
                            "snapshot \"%s\": vocabulary ids reach %u but W=%u", name,
                            slda_vocab_max_id(slda_model_vocab(model)), W);
    return SLDA_OK;
}

/* Envelope head, header and body (everything but the trailer) into sink. */
static slda_err_t snap_emit(const slda_model_t *model, const slda_snapshot_meta_t *meta,
                            snap_sink_t *sink, const char *name, char *errstr,
                            size_t errstr_size)
{
    unsigned char head[SNAP_HEAD_LEN];
    msgpack_packer pk;
    uint32_t nrows, *ids;
    unsigned char *scratch;
    slda_err_t err = snap_check_writable(model, name, errstr, errstr_size);
    if (err)
        return err;
    memcpy(head, SLDA_SNAP_MAGIC, SLDA_SNAP_MAGIC_LEN);
    put_be(head + SLDA_SNAP_MAGIC_LEN, slda_snap_version_of(model), 4);
    sink_write(sink, (const char *)head, sizeof head);
    msgpack_packer_init(&pk, sink, sink_write);
    ids = slda_model_ids_in_use(model, &nrows);
    size_t rowbytes = (size_t)slda_model_topics(model) * 4;
    scratch = slda_xmalloc(rowbytes > SLDA_SNAP_BLOCK_ROWS ? rowbytes : SLDA_SNAP_BLOCK_ROWS);
    slda_snap_header_write(&pk, model, nrows, meta);
    for (uint32_t start = 0; start < nrows && !sink->err; start += SLDA_SNAP_BLOCK_ROWS) {
        uint32_t n = nrows - start < SLDA_SNAP_BLOCK_ROWS ? nrows - start : SLDA_SNAP_BLOCK_ROWS;
        slda_snap_block_write(&pk, model, ids + start, n, scratch);
        sink_flush(sink);
    }
    msgpack_pack_map(&pk, 2);
    pack_key(&pk, "end");
    msgpack_pack_true(&pk);
    pack_key(&pk, "rows");
    msgpack_pack_uint32(&pk, nrows);
    free(scratch);
    free(ids);
    if (sink->err)
        return sink_error(sink, name, errstr, errstr_size);
    return SLDA_OK;
}

/* XXH3-64 of the first len bytes of the (flushed) file behind fp: through a
 * read-only mapping, or by reading it back where mapping is not possible. */
static int file_hash(FILE *fp, uint64_t len, uint64_t *hash)
{
    int fd = fileno(fp);
    void *map = len <= SIZE_MAX ? mmap(NULL, (size_t)len, PROT_READ, MAP_SHARED, fd, 0)
                                : MAP_FAILED;
    unsigned char *buf;
    size_t got = 0;
    if (map != MAP_FAILED) {
        *hash = slda_hash64(map, (size_t)len, 0);
        munmap(map, (size_t)len);
        return 0;
    }
    buf = len <= SIZE_MAX ? malloc((size_t)len) : NULL;
    if (!buf)
        return ENOMEM;
    while (got < len) {
        ssize_t r = pread(fd, buf + got, (size_t)len - got, (off_t)got);
        if (r <= 0) {
            int e = r < 0 ? errno : EIO;
            free(buf);
            return e;
        }
        got += (size_t)r;
    }
    *hash = slda_hash64(buf, (size_t)len, 0);
    free(buf);
    return 0;
}

static slda_err_t snap_write_file(const slda_model_t *model, const slda_snapshot_meta_t *meta,
                                  FILE *fp, const char *path, char *errstr, size_t errstr_size)
{
    snap_sink_t sink = {0};
    unsigned char trailer[SLDA_SNAP_TRAILER_LEN];
    uint64_t hash = 0;
    int e;
    slda_err_t err;
    sink.fp = fp;
    sink.cap = SNAP_FLUSH_BYTES;
    sink.buf = slda_xmalloc(sink.cap);
    err = snap_emit(model, meta, &sink, path, errstr, errstr_size);
    if (!err && sink_flush(&sink))
        err = sink_error(&sink, path, errstr, errstr_size);
    free(sink.buf);
    if (err)
        return err;
    e = fflush(fp) != 0 ? errno : file_hash(fp, sink.total, &hash);
    if (e)
        return slda_set_err(errstr, errstr_size, SLDA_ERR_IO,
                            "snapshot \"%s\": checksum pass: %s", path, strerror(e));
    put_be(trailer, hash, sizeof trailer);
    if (fwrite(trailer, 1, sizeof trailer, fp) != sizeof trailer)
        return slda_set_err(errstr, errstr_size, SLDA_ERR_IO, "snapshot \"%s\": write: %s",
                            path, strerror(errno));
    return SLDA_OK;
}

/* A FIFO, device or standard output cannot be re-read for the checksum: the
 * snapshot is encoded in memory (its whole size) and written in one go. */
static slda_err_t snap_write_stream(const slda_model_t *model, const slda_snapshot_meta_t *meta,
                                    FILE *fp, const char *path, char *errstr,
                                    size_t errstr_size)
{
    void *buf;
    size_t len;
    slda_err_t err = slda_snapshot_encode_meta(model, meta, &buf, &len, errstr, errstr_size);
    if (err)
        return err;
    if (fwrite(buf, 1, len, fp) != len)
        err = slda_set_err(errstr, errstr_size, SLDA_ERR_IO, "snapshot \"%s\": write: %s",
                           path, strerror(errno ? errno : EIO));
    free(buf);
    return err;
}

slda_err_t slda_snapshot_write(const slda_model_t *model, const char *path, char *errstr,
                               size_t errstr_size)
{
    return slda_snapshot_write_meta(model, NULL, path, errstr, errstr_size);
}

slda_err_t slda_snapshot_write_meta(const slda_model_t *model, const slda_snapshot_meta_t *meta,
                                    const char *path, char *errstr, size_t errstr_size)
{
    slda_outfile_t out;
    slda_err_t err;
    if (!model || !path)
        return slda_set_err(errstr, errstr_size, SLDA_ERR_INVALID,
                            "snapshot \"%s\": no model or path", path ? path : "(null)");
    err = slda_outfile_open(&out, "snapshot", path, errstr, errstr_size);
    if (err)
        return err;
    if (slda_outfile_seekable(&out))
        err = snap_write_file(model, meta, out.fp, path, errstr, errstr_size);
    else
        err = snap_write_stream(model, meta, out.fp, path, errstr, errstr_size);
    if (err) {
        slda_outfile_abort(&out);
        return err;
    }
    return slda_outfile_commit(&out, errstr, errstr_size);
}

slda_err_t slda_snapshot_encode(const slda_model_t *model, void **buf, size_t *len,
                                char *errstr, size_t errstr_size)
{
    return slda_snapshot_encode_meta(model, NULL, buf, len, errstr, errstr_size);
}

slda_err_t slda_snapshot_encode_meta(const slda_model_t *model, const slda_snapshot_meta_t *meta,
                                     void **buf, size_t *len, char *errstr, size_t errstr_size)
{
    snap_sink_t sink = {0};
    unsigned char trailer[SLDA_SNAP_TRAILER_LEN];
    slda_err_t err;
    *buf = NULL;
    *len = 0;
    if (!model)
        return slda_set_err(errstr, errstr_size, SLDA_ERR_INVALID,
                            "snapshot \"" SNAP_MEM_NAME "\": no model");
    err = snap_emit(model, meta, &sink, SNAP_MEM_NAME, errstr, errstr_size);
    if (!err) {
        put_be(trailer, slda_hash64(sink.buf, sink.len, 0), sizeof trailer);
        if (sink_write(&sink, (const char *)trailer, sizeof trailer))
            err = sink_error(&sink, SNAP_MEM_NAME, errstr, errstr_size);
    }
    if (err) {
        free(sink.buf);
        return err;
    }
    *buf = sink.buf;
    *len = sink.len;
    return SLDA_OK;
}

/* ------------------------------------------------------------------------ */
/* Reader and entry points                                                   */

/* The worker threads slda_model_new would have started (threads=). */
static int snap_start(slda_msgpack_t *mp, slda_model_t *model)
{
    char msg[256];
    slda_err_t err = slda_model_start_threads(model, msg, sizeof msg);
    if (err != SLDA_OK) {
        mp->err = slda_set_err(mp->errstr, mp->errstr_size, err, "%s%s", mp->prefix, msg);
        return -1;
    }
    return 0;
}

static slda_err_t snap_check_envelope(const unsigned char *buf, size_t len, const char *name,
                                      char *errstr, size_t errstr_size)
{
    size_t m = len < SLDA_SNAP_MAGIC_LEN ? len : SLDA_SNAP_MAGIC_LEN;
    uint32_t version;
    uint64_t stored, computed;
    if (len > 0 && memcmp(buf, SLDA_SNAP_MAGIC, m) != 0)
        return slda_set_err(errstr, errstr_size, SLDA_ERR_CORRUPT,
                            "snapshot \"%s\": bad magic (not a streamlda snapshot)", name);
    if (len < SNAP_MIN_LEN)
        return slda_set_err(errstr, errstr_size, SLDA_ERR_TRUNCATED,
                            "snapshot \"%s\": truncated: %zu bytes, a snapshot has at least %d",
                            name, len, SNAP_MIN_LEN);
    version = (uint32_t)get_be(buf + SLDA_SNAP_MAGIC_LEN, 4);
    if (version == 0)
        return slda_set_err(errstr, errstr_size, SLDA_ERR_CORRUPT,
                            "snapshot \"%s\": format version 0 does not exist", name);
    if (version > SLDA_SNAP_VERSION)
        return slda_set_err(errstr, errstr_size, SLDA_ERR_VERSION,
                            "snapshot \"%s\": format version %" PRIu32
                            " is newer than this build reads (version %d)",
                            name, version, SLDA_SNAP_VERSION);
    stored = get_be(buf + len - SLDA_SNAP_TRAILER_LEN, SLDA_SNAP_TRAILER_LEN);
    computed = slda_hash64(buf, len - SLDA_SNAP_TRAILER_LEN, 0);
    if (stored != computed)
        return slda_set_err(errstr, errstr_size, SLDA_ERR_CORRUPT,
                            "snapshot \"%s\": checksum mismatch: expected 0x%016" PRIx64
                            " (trailer), found 0x%016" PRIx64 " (XXH3-64 of %zu bytes)",
                            name, stored, computed, len - SLDA_SNAP_TRAILER_LEN);
    return SLDA_OK;
}

static slda_model_t *decode_meta(const void *buf, size_t len, const char *name,
                                 slda_snapshot_meta_t *meta, slda_err_t *err_out, char *errstr,
                                 size_t errstr_size)
{
    slda_msgpack_t mp;
    slda_snap_header_t h = {0};
    slda_model_t *model = NULL;
    slda_err_t err;
    if (!buf && len > 0)
        err = slda_set_err(errstr, errstr_size, SLDA_ERR_INVALID, "snapshot \"%s\": no data",
                           name);
    else
        err = snap_check_envelope(buf, len, name, errstr, errstr_size);
    if (!err) {
        size_t plen = strlen(name) + sizeof "snapshot \"\": ";
        char *prefix = slda_xmalloc(plen);
        snprintf(prefix, plen, "snapshot \"%s\": ", name);
        slda_msgpack_init(&mp, buf, SNAP_HEAD_LEN, len - SLDA_SNAP_TRAILER_LEN, prefix, errstr,
                          errstr_size);
        mp.paren = 1; /* "(at byte N)", as snapshot messages have always said */
        h.envelope = (uint32_t)get_be((const unsigned char *)buf + SLDA_SNAP_MAGIC_LEN, 4);
        if (slda_snap_header_read(&mp, &h) == 0 &&
            (model = slda_snap_model_build(&mp, &h)) != NULL &&
            (slda_snap_body_read(&mp, model, h.nrows) != 0 ||
             slda_snap_births_attach(&mp, model, &h.births) != 0 ||
             slda_snap_authors_attach(&mp, model, &h.authors) != 0 ||
             slda_snap_pam_attach(&mp, model, &h.pam) != 0 ||
             slda_snap_labels_attach(&mp, model, &h.labels) != 0 || snap_start(&mp, model) != 0)) {
            slda_model_destroy(model);
            model = NULL;
        }
        if (model && meta)
            meta->event_ms = h.event_ms;
        slda_snap_header_clear(&h);
        free(prefix);
        err = model ? SLDA_OK : mp.err;
    }
    if (err_out)
        *err_out = err;
    return model;
}

slda_model_t *slda_snapshot_decode_named(const void *buf, size_t len, const char *name,
                                         slda_err_t *err_out, char *errstr, size_t errstr_size)
{
    return decode_meta(buf, len, name, NULL, err_out, errstr, errstr_size);
}

slda_model_t *slda_snapshot_decode(const void *buf, size_t len, slda_err_t *err_out,
                                   char *errstr, size_t errstr_size)
{
    return slda_snapshot_decode_named(buf, len, SNAP_MEM_NAME, err_out, errstr, errstr_size);
}

/* Whole contents of a non-regular file (a pipe, a device) into malloc'ed memory. */
static int read_all(int fd, unsigned char **out, size_t *len)
{
    size_t cap = 1 << 16, n = 0;
    unsigned char *buf = malloc(cap);
    for (;;) {
        ssize_t r;
        if (!buf)
            return ENOMEM;
        if (n == cap) {
            unsigned char *nb = cap > SIZE_MAX / 2 ? NULL : realloc(buf, cap * 2);
            if (!nb) {
                free(buf);
                return ENOMEM;
            }
            buf = nb;
            cap *= 2;
        }
        r = read(fd, buf + n, cap - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            int e = errno;
            free(buf);
            return e;
        }
        if (r == 0)
            break;
        n += (size_t)r;
    }
    *out = buf;
    *len = n;
    return 0;
}

slda_model_t *slda_snapshot_read(const char *path, slda_err_t *err_out, char *errstr,
                                 size_t errstr_size)
{
    return slda_snapshot_read_meta(path, NULL, err_out, errstr, errstr_size);
}

slda_model_t *slda_snapshot_read_meta(const char *path, slda_snapshot_meta_t *meta,
                                      slda_err_t *err_out, char *errstr, size_t errstr_size)
{
    struct stat st;
    unsigned char *data = NULL;
    void *map = MAP_FAILED;
    size_t len = 0;
    slda_model_t *model;
    int e = 0, fd = path ? open(path, O_RDONLY | O_CLOEXEC) : -1;
    if (fd < 0 || fstat(fd, &st) != 0) {
        e = path ? errno : EINVAL;
    } else if (S_ISREG(st.st_mode) && st.st_size > 0 && (uint64_t)st.st_size <= SIZE_MAX) {
        len = (size_t)st.st_size;
        map = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
        if (map == MAP_FAILED)
            e = read_all(fd, &data, &len);
        else
            data = map;
    } else {
        e = read_all(fd, &data, &len);
    }
    if (fd >= 0)
        close(fd);
    if (e) {
        slda_err_t err = slda_set_err(errstr, errstr_size, e == ENOMEM ? SLDA_ERR_NOMEM
                                                                       : SLDA_ERR_IO,
                                      "snapshot \"%s\": cannot read: %s",
                                      path ? path : "(null)", strerror(e));
        if (err_out)
            *err_out = err;
        return NULL;
    }
    if (meta)
        memset(meta, 0, sizeof *meta);
    model = decode_meta(data, len, path, meta, err_out, errstr, errstr_size);
    if (map != MAP_FAILED)
        munmap(map, len);
    else
        free(data);
    return model;
}
