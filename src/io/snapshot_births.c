/* snapshot_births.c - the header's optional "births" map: the births state written and read.
 *
 * The births state (births.c) is everything the births decisions depend on
 * besides the model: the baseline, the topic shares, the free slots, the
 * counters, the kept events and the buffered documents. It is written only
 * for a model that has one, so older readers and snapshots without it stay
 * as they were. Reading checks its own shape (required keys, the share,
 * since and free arrays of one length, at most a model's kept events);
 * its values are checked against the model (K, W, updates) when it is
 * attached, after the model is built, and a failure then names where the
 * map starts.
 */
#include "io/snapshot_priv.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* The topic counters of the births state, by name. */
static const struct {
    const char *key;
    size_t off;
} births_counts[] = {
    {"births", offsetof(slda_topic_counts_t, births)},
    {"deaths", offsetof(slda_topic_counts_t, deaths)},
    {"merges", offsetof(slda_topic_counts_t, merges)},
    {"proposals", offsetof(slda_topic_counts_t, proposals)},
    {"rejected", offsetof(slda_topic_counts_t, rejected)},
    {"no_cluster", offsetof(slda_topic_counts_t, no_cluster)},
    {"no_gain", offsetof(slda_topic_counts_t, no_gain)},
    {"no_slot", offsetof(slda_topic_counts_t, no_slot)},
    {"flagged", offsetof(slda_topic_counts_t, flagged)},
};
#define BIRTHS_NCOUNTS (sizeof births_counts / sizeof births_counts[0])

/* One buffered document: {"t", "mark", "words", "counts", "pw": bin of LE float32}. */
static void snap_write_births_doc(msgpack_packer *pk, const slda_births_doc_t *d)
{
    unsigned char *le = slda_xmalloc((size_t)d->n * 4 + 1);
    msgpack_pack_map(pk, 5);
    pack_key(pk, "t");
    msgpack_pack_uint64(pk, d->t);
    pack_key(pk, "mark");
    msgpack_pack_uint64(pk, d->mark);
    pack_key(pk, "words");
    msgpack_pack_array(pk, d->n);
    for (uint32_t u = 0; u < d->n; u++)
        msgpack_pack_uint32(pk, d->word[u]);
    pack_key(pk, "counts");
    msgpack_pack_array(pk, d->n);
    for (uint32_t u = 0; u < d->n; u++)
        msgpack_pack_uint32(pk, d->count[u]);
    pack_key(pk, "pw");
    slda_floats_to_le(d->pw, d->n, le);
    msgpack_pack_bin_with_body(pk, le, (size_t)d->n * 4);
    free(le);
}

/* The births state: everything births.c decides from besides the model, so a
 * restored model (or a replica) makes the decisions of one that never stopped. */
void slda_snap_births_write(msgpack_packer *pk, const slda_births_t *b)
{
    slda_births_state_t st;
    slda_births_export(b, &st);
    msgpack_pack_map(pk, 14);
    pack_key(pk, "mu");
    msgpack_pack_double(pk, st.mu);
    pack_key(pk, "var");
    msgpack_pack_double(pk, st.var);
    pack_key(pk, "nbase");
    msgpack_pack_uint64(pk, st.nbase);
    pack_key(pk, "tokens");
    msgpack_pack_uint64(pk, st.tokens);
    pack_key(pk, "windowed");
    if (st.windowed)
        msgpack_pack_true(pk);
    else
        msgpack_pack_false(pk);
    pack_key(pk, "counted");
    msgpack_pack_uint64(pk, st.counted);
    pack_key(pk, "share");
    pack_doubles(pk, st.share, st.K);
    pack_key(pk, "since");
    msgpack_pack_array(pk, st.K);
    for (uint32_t k = 0; k < st.K; k++)
        msgpack_pack_uint64(pk, st.since[k]);
    pack_key(pk, "free");
    msgpack_pack_bin_with_body(pk, st.is_free, st.K);
    pack_key(pk, "capacity");
    msgpack_pack_uint32(pk, st.cap);
    pack_key(pk, "counts");
    msgpack_pack_map(pk, BIRTHS_NCOUNTS);
    for (size_t i = 0; i < BIRTHS_NCOUNTS; i++) {
        pack_key(pk, births_counts[i].key);
        msgpack_pack_uint64(pk, *(const uint64_t *)((const char *)&st.counts +
                                                    births_counts[i].off));
    }
    pack_key(pk, "events");
    msgpack_pack_uint64(pk, st.nev);
    pack_key(pk, "kept");
    msgpack_pack_array(pk, st.nkept);
    for (uint32_t i = 0; i < st.nkept; i++) {
        const slda_event_t *e = &st.ev[i];
        msgpack_pack_array(pk, 8);
        msgpack_pack_uint64(pk, e->seq);
        msgpack_pack_uint64(pk, e->update);
        msgpack_pack_uint64(pk, e->doc);
        pack_key(pk, slda_event_kind_name(e->kind));
        msgpack_pack_uint32(pk, e->topic);
        msgpack_pack_uint32(pk, e->other);
        msgpack_pack_uint32(pk, e->docs);
        msgpack_pack_double(pk, e->value);
    }
    pack_key(pk, "buffer");
    msgpack_pack_array(pk, st.nbuf);
    for (uint32_t i = 0; i < st.nbuf; i++)
        snap_write_births_doc(pk, &st.buf[i]);
    slda_births_export_clear(&st);
}

void slda_snap_births_clear(slda_snap_births_t *sb)
{
    for (uint32_t i = 0; sb->st.buf && i < sb->st.nbuf; i++) {
        free(sb->st.buf[i].word);
        free(sb->st.buf[i].count);
        free(sb->st.buf[i].pw);
    }
    free(sb->st.buf);
    free(sb->st.share);
    free(sb->st.since);
    free(sb->st.is_free);
    free(sb->st.ev);
    memset(sb, 0, sizeof *sb);
}

static int snap_read_births_counts(slda_msgpack_t *mp, slda_topic_counts_t *c)
{
    uint32_t n;
    unsigned seen = 0;
    if (slda_msgpack_map(mp, "births \"counts\"", &n))
        return -1;
    for (uint32_t i = 0; i < n; i++) {
        const unsigned char *key;
        size_t len, j;
        if (slda_msgpack_str(mp, "births \"counts\" key", &key, &len))
            return -1;
        for (j = 0; j < BIRTHS_NCOUNTS && !slda_msgpack_eq(key, len, births_counts[j].key); j++)
            ;
        if (j == BIRTHS_NCOUNTS) {
            if (slda_msgpack_skip(mp, "births \"counts\" value"))
                return -1;
            continue;
        }
        if (seen & (1u << j))
            return slda_msgpack_fail(mp, "births \"counts\": duplicate key \"%s\"",
                                     births_counts[j].key);
        seen |= 1u << j;
        if (slda_msgpack_uint(mp, "births \"counts\" value",
                              (uint64_t *)((char *)c + births_counts[j].off)))
            return -1;
    }
    for (size_t j = 0; j < BIRTHS_NCOUNTS; j++)
        if (!(seen & (1u << j)))
            return slda_msgpack_fail(mp, "births \"counts\": missing key \"%s\"",
                                     births_counts[j].key);
    return 0;
}

static const char *const event_kind_names[] = {"birth", "death", "merge"};

/* [seq, update, doc, kind, topic, other, docs, value] */
static int snap_read_births_event(slda_msgpack_t *mp, slda_event_t *e)
{
    uint32_t n;
    int kind;
    if (slda_msgpack_array(mp, "births event", &n))
        return -1;
    if (n != 8)
        return slda_msgpack_fail(mp, "births event: %u values, expected [seq, update, doc, kind, "
                                 "topic, other, docs, value]", n);
    if (slda_msgpack_uint(mp, "births event seq", &e->seq) ||
        slda_msgpack_uint(mp, "births event update", &e->update) ||
        slda_msgpack_uint(mp, "births event doc", &e->doc) ||
        slda_msgpack_enum(mp, "births event kind", event_kind_names, 3, &kind) ||
        slda_msgpack_u32(mp, "births event topic", &e->topic) ||
        slda_msgpack_u32(mp, "births event other", &e->other) ||
        slda_msgpack_u32(mp, "births event docs", &e->docs) ||
        slda_msgpack_double(mp, "births event value", &e->value))
        return -1;
    e->kind = (slda_event_kind_t)(kind + 1);
    return 0;
}

static int snap_read_births_events(slda_msgpack_t *mp, slda_births_state_t *st)
{
    uint32_t n;
    if (slda_msgpack_array(mp, "births \"kept\"", &n))
        return -1;
    if (n > slda_births_events_kept())
        return slda_msgpack_fail(mp, "births \"kept\": %u events, a model keeps at most %u", n,
                                 slda_births_events_kept());
    st->ev = slda_xcalloc((size_t)n + 1, sizeof *st->ev);
    for (; st->nkept < n; st->nkept++)
        if (snap_read_births_event(mp, &st->ev[st->nkept]))
            return -1;
    return 0;
}

/* {"t", "mark", "words", "counts", "pw"} into d (arrays owned by d). */
static int snap_read_births_doc(slda_msgpack_t *mp, slda_births_doc_t *d)
{
    uint32_t n, nwords = 0, ncounts = 0;
    unsigned seen = 0;
    const unsigned char *pw = NULL;
    size_t pwlen = 0;
    if (slda_msgpack_map(mp, "births buffered document", &n))
        return -1;
    for (uint32_t i = 0; i < n; i++) {
        const unsigned char *key;
        size_t len;
        unsigned bit;
        int rc;
        if (slda_msgpack_str(mp, "births buffered document key", &key, &len))
            return -1;
        bit = slda_msgpack_eq(key, len, "t") ? 1 : slda_msgpack_eq(key, len, "mark") ? 2
            : slda_msgpack_eq(key, len, "words") ? 4 : slda_msgpack_eq(key, len, "counts") ? 8
            : slda_msgpack_eq(key, len, "pw") ? 16 : 0;
        if (!bit) {
            if (slda_msgpack_skip(mp, "births buffered document value"))
                return -1;
            continue;
        }
        if (seen & bit)
            return slda_msgpack_fail(mp, "births buffered document: duplicate key \"%.*s\"",
                                     (int)len, (const char *)key);
        seen |= bit;
        switch (bit) {
        case 1: rc = slda_msgpack_uint(mp, "births buffered document \"t\"", &d->t); break;
        case 2: rc = slda_msgpack_uint(mp, "births buffered document \"mark\"", &d->mark); break;
        case 4:
            rc = slda_snap_read_u32s(mp, "births buffered document \"words\"", &d->word, &nwords);
            break;
        case 8:
            rc = slda_snap_read_u32s(mp, "births buffered document \"counts\"", &d->count, &ncounts);
            break;
        default: rc = slda_msgpack_bin(mp, "births buffered document \"pw\"", &pw, &pwlen); break;
        }
        if (rc)
            return -1;
    }
    if (seen != 31)
        return slda_msgpack_fail(mp, "births buffered document: keys t, mark, words, counts and "
                                 "pw are required");
    if (ncounts != nwords || pwlen != (size_t)nwords * 4)
        return slda_msgpack_fail(mp, "births buffered document: %u words, %u counts, %zu bytes "
                                 "of pw", nwords, ncounts, pwlen);
    d->n = nwords;
    d->pw = slda_xmalloc((size_t)nwords * sizeof *d->pw + 1);
    for (uint32_t u = 0; u < nwords; u++) {
        const unsigned char *src = pw + 4 * (size_t)u;
        uint32_t v = (uint32_t)src[0] | (uint32_t)src[1] << 8 | (uint32_t)src[2] << 16 |
                     (uint32_t)src[3] << 24;
        memcpy(&d->pw[u], &v, sizeof v);
    }
    return 0;
}

static int snap_read_births_buffer(slda_msgpack_t *mp, slda_births_state_t *st)
{
    uint32_t n;
    if (slda_msgpack_array(mp, "births \"buffer\"", &n))
        return -1;
    st->buf = slda_xcalloc((size_t)n + 1, sizeof *st->buf);
    for (; st->nbuf < n;) {
        /* counted before it is read: a document that fails half way is freed too */
        if (snap_read_births_doc(mp, &st->buf[st->nbuf++]))
            return -1;
    }
    return 0;
}

enum { BS_MU, BS_VAR, BS_NBASE, BS_TOKENS, BS_SHARE, BS_SINCE, BS_FREE, BS_CAPACITY, BS_COUNTS,
       BS_EVENTS, BS_KEPT, BS_BUFFER, BS__REQUIRED,
       BS_WINDOWED = BS__REQUIRED, BS_COUNTED, BS__COUNT }; /* the last two optional (0 if absent) */
static const char *const births_keys[BS__COUNT] = {
    [BS_MU] = "mu",         [BS_VAR] = "var",         [BS_NBASE] = "nbase",
    [BS_TOKENS] = "tokens", [BS_SHARE] = "share",     [BS_SINCE] = "since",
    [BS_FREE] = "free",     [BS_CAPACITY] = "capacity", [BS_COUNTS] = "counts",
    [BS_EVENTS] = "events", [BS_KEPT] = "kept",       [BS_BUFFER] = "buffer",
    [BS_WINDOWED] = "windowed", [BS_COUNTED] = "counted",
};

static int snap_read_births_field(slda_msgpack_t *mp, slda_births_state_t *st, int f,
                                  uint32_t *nshare, uint32_t *nsince, size_t *nfree)
{
    const unsigned char *bytes;
    switch (f) {
    case BS_MU: return slda_msgpack_double(mp, "births \"mu\"", &st->mu);
    case BS_VAR: return slda_msgpack_double(mp, "births \"var\"", &st->var);
    case BS_NBASE: return slda_msgpack_uint(mp, "births \"nbase\"", &st->nbase);
    case BS_TOKENS: return slda_msgpack_uint(mp, "births \"tokens\"", &st->tokens);
    case BS_SHARE:
        return slda_msgpack_doubles(mp, "births \"share\"", SLDA_MAX_TOPICS, "topics", &st->share,
                                    nshare);
    case BS_SINCE:
        return slda_snap_read_u64s(mp, "births \"since\"", SLDA_MAX_TOPICS, &st->since, nsince);
    case BS_FREE:
        if (slda_msgpack_bin(mp, "births \"free\"", &bytes, nfree))
            return -1;
        st->is_free = slda_xmalloc(*nfree + 1);
        memcpy(st->is_free, bytes, *nfree);
        return 0;
    case BS_CAPACITY: return slda_msgpack_u32(mp, "births \"capacity\"", &st->cap);
    case BS_COUNTS: return snap_read_births_counts(mp, &st->counts);
    case BS_EVENTS: return slda_msgpack_uint(mp, "births \"events\"", &st->nev);
    case BS_KEPT: return snap_read_births_events(mp, st);
    case BS_BUFFER: return snap_read_births_buffer(mp, st);
    case BS_WINDOWED: return slda_msgpack_bool(mp, "births \"windowed\"", &st->windowed);
    case BS_COUNTED: return slda_msgpack_uint(mp, "births \"counted\"", &st->counted);
    }
    return -1;
}

int slda_snap_births_read(slda_msgpack_t *mp, slda_snap_births_t *sb)
{
    uint32_t n, nshare = 0, nsince = 0;
    size_t nfree = 0;
    unsigned seen = 0;
    if (sb->present)
        return slda_msgpack_fail(mp, "header: duplicate key \"" SLDA_SNAP_KEY_BIRTHS "\"");
    sb->present = 1;
    sb->at = (size_t)(mp->p - mp->base);
    if (slda_msgpack_map(mp, "header \"" SLDA_SNAP_KEY_BIRTHS "\"", &n))
        return -1;
    for (uint32_t i = 0; i < n; i++) {
        const unsigned char *key;
        size_t len;
        int f;
        if (slda_msgpack_str(mp, "births key", &key, &len))
            return -1;
        for (f = 0; f < BS__COUNT && !slda_msgpack_eq(key, len, births_keys[f]); f++)
            ;
        if (f == BS__COUNT) {
            if (slda_msgpack_skip(mp, "births value"))
                return -1;
            continue;
        }
        if (seen & (1u << f))
            return slda_msgpack_fail(mp, "births: duplicate key \"%s\"", births_keys[f]);
        seen |= 1u << f;
        if (snap_read_births_field(mp, &sb->st, f, &nshare, &nsince, &nfree))
            return -1;
    }
    for (int f = 0; f < BS__REQUIRED; f++)
        if (!(seen & (1u << f)))
            return slda_msgpack_fail(mp, "births: missing key \"%s\"", births_keys[f]);
    if (nsince != nshare || nfree != nshare)
        return slda_msgpack_fail(mp, "births: %u shares, %u since, %zu free flags", nshare, nsince,
                                 nfree);
    sb->st.K = nshare;
    return 0;
}

/* The births state of the header, checked against the model now that it is
 * built; a snapshot without one leaves the model without one, and the first
 * update with births=true starts a fresh baseline (births.c). */
int slda_snap_births_attach(slda_msgpack_t *mp, slda_model_t *model, slda_snap_births_t *sb)
{
    char msg[300];
    if (!sb->present)
        return 0;
    if (slda_model_attach_births(model, &sb->st, msg, sizeof msg) != SLDA_OK) {
        mp->p = mp->base + sb->at;
        return slda_msgpack_fail(mp, "header \"" SLDA_SNAP_KEY_BIRTHS "\": %s", msg);
    }
    return 0;
}
