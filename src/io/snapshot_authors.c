/* snapshot_authors.c - the header's "authors" map (model.kind=atm): the author statistics.
 *
 * docs/snapshot-format.md, "authors". Written for an author-topic model only, whose
 * snapshots carry format version 2 (an LDA model's stay version 1, byte for byte as
 * before), so a reader that does not know the author-topic model refuses the file by its
 * version instead of reading it as LDA. The map: "evicted" (authors evicted so far), and
 * per author held, in id order: "ids", "names", "freqs", "tokens" (T_a), "updates" (t_a)
 * and "counts", one bin of n x K little-endian float32 (N_a). Reading checks the shape
 * (keys, equal lengths, the bin's size against K); the values (ids within
 * authors.capacity, names distinct, counts finite and >= 0) are checked when the map is
 * attached to the built model (slda_authors_put), a failure naming where the map starts.
 */
#include "io/snapshot_priv.h"
#include "engine/authors.h"

#include <stdlib.h>
#include <string.h>

void slda_snap_authors_write(msgpack_packer *pk, const slda_model_t *model)
{
    const slda_authors_t *a = slda_model_authors(model);
    uint32_t K = slda_model_topics(model), max = slda_authors_max_id(a), n = 0;
    for (uint32_t id = 0; id < max; id++)
        n += slda_authors_name(a, id) != NULL;
    msgpack_pack_map(pk, 7);
    pack_key(pk, "evicted");
    msgpack_pack_uint64(pk, slda_authors_evicted(a));
    static const char *const fields[] = {"ids", "names", "freqs", "tokens", "updates"};
    for (int f = 0; f < 5; f++) { /* each an array over the authors held, in id order */
        pack_key(pk, fields[f]);
        msgpack_pack_array(pk, n);
        for (uint32_t id = 0; id < max; id++) {
            if (!slda_authors_name(a, id))
                continue;
            switch (f) {
            case 0: msgpack_pack_uint32(pk, id); break;
            case 1: pack_key(pk, slda_authors_name(a, id)); break;
            case 2: msgpack_pack_double(pk, slda_authors_freq(a, id)); break;
            case 3: msgpack_pack_double(pk, slda_authors_tokens(a, id)); break;
            default: msgpack_pack_uint64(pk, slda_authors_updates(a, id)); break;
            }
        }
    }
    pack_key(pk, "counts");
    msgpack_pack_bin(pk, (size_t)n * K * 4);
    unsigned char *le = slda_xmalloc((size_t)K * 4 + 1);
    for (uint32_t id = 0; id < max; id++)
        if (slda_authors_name(a, id)) {
            slda_floats_to_le(slda_authors_counts(a, id), K, le);
            msgpack_pack_bin_body(pk, le, (size_t)K * 4);
        }
    free(le);
}

void slda_snap_authors_clear(slda_snap_authors_t *sa)
{
    for (uint32_t i = 0; sa->names && i < sa->nnames; i++)
        free(sa->names[i]);
    free(sa->names);
    free(sa->ids);
    free(sa->freqs);
    free(sa->tokens);
    free(sa->updates);
    memset(sa, 0, sizeof *sa);
}

static int read_names(slda_msgpack_t *mp, slda_snap_authors_t *sa)
{
    uint32_t n;
    if (slda_msgpack_array(mp, "authors \"names\"", &n))
        return -1;
    sa->names = slda_xcalloc((size_t)n + 1, sizeof *sa->names);
    for (uint32_t i = 0; i < n; i++) {
        if (slda_msgpack_strdup(mp, "authors \"names\"", 0, &sa->names[i]))
            return -1;
        sa->nnames = i + 1;
    }
    sa->nnames = n;
    return 0;
}

int slda_snap_authors_read(slda_msgpack_t *mp, slda_snap_authors_t *sa)
{
    static const char *const keys[] = {"evicted", "ids", "names", "freqs", "tokens", "updates",
                                       "counts"};
    uint32_t n, len[7] = {0};
    unsigned seen = 0;
    sa->present = 1;
    sa->at = slda_msgpack_pos(mp);
    if (slda_msgpack_map(mp, "header \"authors\"", &n))
        return -1;
    for (uint32_t i = 0; i < n; i++) {
        const unsigned char *key;
        size_t klen;
        int f = 0;
        if (slda_msgpack_str(mp, "authors key", &key, &klen))
            return -1;
        while (f < 7 && !slda_msgpack_eq(key, klen, keys[f]))
            f++;
        if (f == 7) {
            if (slda_msgpack_skip(mp, "authors value"))
                return -1;
            continue;
        }
        if (seen & (1u << f))
            return slda_msgpack_fail(mp, "authors: duplicate key \"%s\"", keys[f]);
        seen |= 1u << f;
        int rc = 0;
        switch (f) {
        case 0: rc = slda_msgpack_uint(mp, "authors \"evicted\"", &sa->evicted); break;
        case 1: rc = slda_snap_read_u32s(mp, "authors \"ids\"", &sa->ids, &len[1]); break;
        case 2: rc = read_names(mp, sa); len[2] = sa->nnames; break;
        case 3:
            rc = slda_msgpack_doubles(mp, "authors \"freqs\"", UINT32_MAX, "authors", &sa->freqs,
                                      &len[3]);
            break;
        case 4:
            rc = slda_msgpack_doubles(mp, "authors \"tokens\"", UINT32_MAX, "authors",
                                      &sa->tokens, &len[4]);
            break;
        case 5:
            rc = slda_snap_read_u64s(mp, "authors \"updates\"", UINT32_MAX, &sa->updates, &len[5]);
            break;
        case 6: {
            size_t blen;
            rc = slda_msgpack_bin(mp, "authors \"counts\"", &sa->counts, &blen);
            sa->counts_len = blen;
            break;
        }
        }
        if (rc)
            return -1;
    }
    for (int f = 0; f < 7; f++)
        if (!(seen & (1u << f)))
            return slda_msgpack_fail(mp, "authors: missing key \"%s\"", keys[f]);
    for (int f = 2; f < 6; f++)
        if (len[f] != len[1])
            return slda_msgpack_fail(mp, "authors: \"%s\" holds %u values, \"ids\" %u", keys[f],
                                     len[f], len[1]);
    sa->n = len[1];
    return 0;
}

int slda_snap_authors_attach(slda_msgpack_t *mp, slda_model_t *model, slda_snap_authors_t *sa)
{
    slda_authors_t *a = slda_model_authors_mut(model);
    uint32_t K = slda_model_topics(model);
    char msg[256];
    if (!sa->present) /* an author-topic model that has not met an author yet */
        return 0;
    if (!a)
        return slda_msgpack_fail(mp, "header \"authors\" (at byte %zu): the model is not an "
                                 "author-topic model (params \"model.kind\")", sa->at);
    if (sa->counts_len != (size_t)sa->n * K * 4)
        return slda_msgpack_fail(mp, "authors (at byte %zu): \"counts\" holds %zu bytes, %u "
                                 "authors of K=%u take %zu", sa->at, sa->counts_len, sa->n, K,
                                 (size_t)sa->n * K * 4);
    float *row = slda_xmalloc((size_t)K * sizeof *row + 1);
    for (uint32_t i = 0; i < sa->n; i++) {
        const unsigned char *p = sa->counts + (size_t)i * K * 4;
        for (uint32_t k = 0; k < K; k++) {
            uint32_t u = (uint32_t)p[4 * k] | (uint32_t)p[4 * k + 1] << 8 |
                         (uint32_t)p[4 * k + 2] << 16 | (uint32_t)p[4 * k + 3] << 24;
            memcpy(&row[k], &u, sizeof u);
        }
        if (slda_authors_put(a, sa->ids[i], sa->names[i], strlen(sa->names[i]), sa->freqs[i],
                             row, sa->tokens[i], sa->updates[i], msg, sizeof msg) != SLDA_OK) {
            free(row);
            return slda_msgpack_fail(mp, "authors (at byte %zu): %s", sa->at, msg);
        }
    }
    free(row);
    slda_authors_set_counters(a, sa->evicted);
    return 0;
}
