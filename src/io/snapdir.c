/* snapdir.c - a directory of snapshots: file names, listing in update order, pruning.
 *
 * One place says what the files of a snapshot directory are called (snapdir.h has the layout):
 * the service writes, lists, restores and prunes them, `train --snapshot-dir` writes them,
 * `report` reads them, and each must agree with the others on every name. A name is taken
 * apart from its end: "-", exactly 20 digits (the zero-padded update count, at most 2^64-1),
 * ".slda"; what is before the "-" is the model, which may itself hold "-" and digits, so
 * "a-00000000000000000001-00000000000000000002.slda" is model "a-00000000000000000001", never
 * model "a". Lists are built from readdir and are only as current as the moment they were
 * read: a file may vanish before it is opened (a concurrent prune), which callers treat as a
 * snapshot that does not load. Library code: nothing here prints; errors go into errstr.
 */
#include "io/snapdir.h"
#include "io/outfile.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define TAIL_LEN (1 + SLDA_SNAPDIR_DIGITS + 5) /* "-" digits ".slda" */

int slda_snapdir_name(char *buf, size_t size, const char *model, uint64_t updates)
{
    return snprintf(buf, size, "%s-%020" PRIu64 SLDA_SNAPDIR_EXT, model, updates);
}

int slda_snapdir_path(char *buf, size_t size, const char *dir, const char *model,
                      uint64_t updates)
{
    return snprintf(buf, size, "%s/%s-%020" PRIu64 SLDA_SNAPDIR_EXT, dir, model, updates);
}

int slda_snapdir_track_path(char *buf, size_t size, const char *snapshot_path)
{
    return snprintf(buf, size, "%s" SLDA_SNAPDIR_TRACK_EXT, snapshot_path);
}

/* 1 when s starts with "-<20 digits>.slda" whose number fits in 64 bits (into *updates). */
static int parse_tail(const char *s, uint64_t *updates)
{
    if (s[0] != '-')
        return 0;
    uint64_t v = 0;
    for (int i = 1; i <= SLDA_SNAPDIR_DIGITS; i++) {
        if (s[i] < '0' || s[i] > '9')
            return 0;
        unsigned d = (unsigned)(s[i] - '0');
        if (v > (UINT64_MAX - d) / 10)
            return 0; /* above 2^64-1: no writer makes this name */
        v = v * 10 + d;
    }
    if (strncmp(s + 1 + SLDA_SNAPDIR_DIGITS, SLDA_SNAPDIR_EXT, 5))
        return 0;
    if (updates)
        *updates = v;
    return 1;
}

int slda_snapdir_parse(const char *name, size_t *model_len, uint64_t *updates)
{
    size_t len = strlen(name);
    if (len < TAIL_LEN + 1 || !parse_tail(name + len - TAIL_LEN, updates))
        return 0;
    if (model_len)
        *model_len = len - TAIL_LEN;
    return 1;
}

int slda_snapdir_match(const char *name, const char *model, const char *suffix)
{
    size_t mlen = strlen(model), len = strlen(name);
    if (len < mlen + TAIL_LEN || strncmp(name, model, mlen) || !parse_tail(name + mlen, NULL))
        return 0;
    const char *rest = name + mlen + TAIL_LEN;
    return *suffix ? !strncmp(rest, suffix, strlen(suffix)) : !*rest;
}

int slda_snapdir_is_temp(const char *name, const char *model)
{
    return slda_snapdir_match(name, model, ".tmp.") ||
           slda_snapdir_match(name, model, SLDA_SNAPDIR_TRACK_EXT ".tmp.");
}

/* ---- listing ---- */

static void list_add(slda_snapdir_list_t *list, const char *dir, const char *name,
                     size_t model_len, uint64_t updates)
{
    if (list->n == list->cap) {
        list->cap = list->cap ? 2 * list->cap : 16;
        list->ents = slda_xrealloc(list->ents, list->cap * sizeof *list->ents);
    }
    slda_snapdir_ent_t *e = &list->ents[list->n++];
    size_t plen = strlen(dir) + strlen(name) + 2;
    e->model = slda_xstrndup(name, model_len);
    e->file = slda_xstrdup(name);
    e->path = slda_xmalloc(plen);
    snprintf(e->path, plen, "%s/%s", dir, name);
    e->updates = updates;
}

static void list_odd(slda_snapdir_list_t *list, const char *name)
{
    if (list->nodd == list->oddcap) {
        list->oddcap = list->oddcap ? 2 * list->oddcap : 16;
        list->odd = slda_xrealloc(list->odd, list->oddcap * sizeof *list->odd);
    }
    list->odd[list->nodd++] = slda_xstrdup(name);
}

/* scan (model NULL: every model, and odd names) or list (one model's snapshots). */
static slda_err_t read_dir(slda_snapdir_list_t *list, const char *dir, const char *model,
                           char *errstr, size_t errstr_size)
{
    memset(list, 0, sizeof *list);
    DIR *d = opendir(dir);
    if (!d)
        return slda_set_err(errstr, errstr_size, SLDA_ERR_IO, "snapshot directory \"%s\": %s",
                            dir, strerror(errno));
    size_t mlen = model ? strlen(model) : 0, elen = strlen(SLDA_SNAPDIR_EXT);
    struct dirent *de;
    while ((de = readdir(d))) {
        const char *name = de->d_name;
        size_t len = strlen(name), model_len;
        uint64_t updates;
        if (len < elen || strcmp(name + len - elen, SLDA_SNAPDIR_EXT))
            continue; /* temp files, locks, tracker states, anything else */
        if (!slda_snapdir_parse(name, &model_len, &updates)) {
            if (!model)
                list_odd(list, name);
            continue;
        }
        if (model && (model_len != mlen || strncmp(name, model, mlen)))
            continue;
        list_add(list, dir, name, model_len, updates);
    }
    closedir(d);
    return SLDA_OK;
}

slda_err_t slda_snapdir_scan(slda_snapdir_list_t *list, const char *dir, char *errstr,
                             size_t errstr_size)
{
    return read_dir(list, dir, NULL, errstr, errstr_size);
}

slda_err_t slda_snapdir_list(slda_snapdir_list_t *list, const char *dir, const char *model,
                             char *errstr, size_t errstr_size)
{
    slda_err_t e = read_dir(list, dir, model, errstr, errstr_size);
    if (e == SLDA_OK)
        slda_snapdir_sort(list->ents, list->n);
    return e;
}

static int cmp_updates(const void *a, const void *b)
{
    uint64_t x = ((const slda_snapdir_ent_t *)a)->updates;
    uint64_t y = ((const slda_snapdir_ent_t *)b)->updates;
    return (x > y) - (x < y);
}

void slda_snapdir_sort(slda_snapdir_ent_t *ents, size_t n)
{
    if (n > 1)
        qsort(ents, n, sizeof *ents, cmp_updates);
}

void slda_snapdir_ent_clear(slda_snapdir_ent_t *ent)
{
    free(ent->model);
    free(ent->file);
    free(ent->path);
    memset(ent, 0, sizeof *ent);
}

void slda_snapdir_list_clear(slda_snapdir_list_t *list)
{
    for (size_t i = 0; i < list->n; i++)
        slda_snapdir_ent_clear(&list->ents[i]);
    for (size_t i = 0; i < list->nodd; i++)
        free(list->odd[i]);
    free(list->ents);
    free(list->odd);
    memset(list, 0, sizeof *list);
}

/* ---- before writing ---- */

slda_err_t slda_snapdir_make(const char *what, const char *dir, char *errstr,
                             size_t errstr_size)
{
    struct stat st;
    if (stat(dir, &st) != 0 && mkdir(dir, 0777) != 0)
        return slda_set_err(errstr, errstr_size, SLDA_ERR_IO, "%s \"%s\": %s", what, dir,
                            strerror(errno));
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
        return slda_set_err(errstr, errstr_size, SLDA_ERR_IO, "%s \"%s\": not a directory", what,
                            dir);
    return SLDA_OK;
}

slda_err_t slda_snapdir_check(const char *dir, const char *model, char *errstr,
                              size_t errstr_size)
{
    int len = slda_snapdir_path(NULL, 0, dir, model, 0);
    char *probe = slda_xmalloc((size_t)len + 1);
    slda_snapdir_path(probe, (size_t)len + 1, dir, model, 0);
    slda_err_t e = slda_outfile_check("snapshot", probe, errstr, errstr_size);
    free(probe);
    return e;
}

/* ---- pruning ---- */

/* 1 when list holds the snapshot file named name. */
static int list_has(const slda_snapdir_list_t *list, const char *name)
{
    for (size_t i = 0; i < list->n; i++)
        if (!strcmp(list->ents[i].file, name))
            return 1;
    return 0;
}

/* Remove the tracker states of model in dir whose snapshot is not in list (every snapshot
 * file of model, as listed before): a writer that failed or died between the state and its
 * snapshot (the service writes the state first) left them, and nothing else ever would. */
static void remove_orphan_states(const char *dir, const char *model,
                                 const slda_snapdir_list_t *list)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    size_t mlen = strlen(model), tlen = strlen(SLDA_SNAPDIR_TRACK_EXT);
    struct dirent *de;
    while ((de = readdir(d))) {
        const char *name = de->d_name;
        size_t len = strlen(name);
        if (len != mlen + TAIL_LEN + tlen ||
            !slda_snapdir_match(name, model, SLDA_SNAPDIR_TRACK_EXT))
            continue; /* not exactly "<model>-<20 digits>.slda.track.json" (temp files too) */
        char snap[NAME_MAX + 1];
        snprintf(snap, sizeof snap, "%.*s", (int)(len - tlen), name);
        if (list_has(list, snap))
            continue;
        size_t plen = strlen(dir) + len + 2;
        char *path = slda_xmalloc(plen);
        snprintf(path, plen, "%s/%s", dir, name);
        unlink(path);
        free(path);
    }
    closedir(d);
}

/* The older ones kept with bucket base `base` (see slda_snapdir_thin); returns how many. */
static size_t thin_pass(const uint64_t *u, size_t n, size_t keep, uint64_t base,
                        unsigned char *out)
{
    size_t count = 0;
    for (size_t j = keep; j < n; j++) {
        uint64_t age = u[0] - u[j], size = base;
        while (size <= age / 2 && size < (UINT64_C(1) << 62)) /* 2^L base <= age < 2^(L+1) base */
            size *= 2;
        out[j] = j == n - 1 || u[j + 1] / size != u[j] / size; /* the oldest of its bucket */
        count += out[j];
    }
    return count;
}

void slda_snapdir_thin(const uint64_t *u, size_t n, size_t keep, size_t history,
                       unsigned char *out)
{
    if (keep < 1)
        keep = 1;
    for (size_t j = 0; j < n; j++)
        out[j] = j < keep;
    if (n <= keep || !history)
        return;
    uint64_t base = 1;
    while (thin_pass(u, n, keep, base, out) > history && base < (UINT64_C(1) << 62))
        base *= 2;
    if (thin_pass(u, n, keep, base, out) > history) /* no bucket size fits: the oldest alone */
        for (size_t j = keep; j < n - 1; j++)
            out[j] = 0;
}

slda_err_t slda_snapdir_prune(const char *dir, const char *model, size_t keep,
                              const slda_snapdir_prune_cb_t *cb, char *errstr,
                              size_t errstr_size)
{
    return slda_snapdir_prune_thin(dir, model, keep, 0, cb, errstr, errstr_size);
}

slda_err_t slda_snapdir_prune_thin(const char *dir, const char *model, size_t keep,
                                   size_t history, const slda_snapdir_prune_cb_t *cb,
                                   char *errstr, size_t errstr_size)
{
    slda_snapdir_list_t list;
    slda_err_t rc = SLDA_OK;
    if (slda_snapdir_list(&list, dir, model, NULL, 0) != SLDA_OK)
        return SLDA_OK;
    /* the prunable ones, newest first, and which of them stay */
    uint64_t *u = slda_xmalloc((list.n + 1) * sizeof *u);
    size_t *at = slda_xmalloc((list.n + 1) * sizeof *at), n = 0;
    for (size_t i = list.n; i-- > 0;)
        if (!cb || !cb->prunable || cb->prunable(cb->opaque, list.ents[i].updates)) {
            u[n] = list.ents[i].updates;
            at[n++] = i;
        }
    unsigned char *stay = slda_xcalloc(n + 1, 1);
    slda_snapdir_thin(u, n, keep, history, stay);
    for (size_t j = 0; j < n; j++) {
        const slda_snapdir_ent_t *e = &list.ents[at[j]];
        if (stay[j])
            continue;
        if (unlink(e->path) && errno != ENOENT) {
            char why[4400];
            snprintf(why, sizeof why, "cannot remove %s: %s", e->path, strerror(errno));
            if (rc == SLDA_OK)
                rc = slda_set_err(errstr, errstr_size, SLDA_ERR_IO, "%s", why);
            if (cb && cb->removed)
                cb->removed(cb->opaque, e->updates, why);
            continue;
        }
        size_t len = strlen(e->path) + sizeof SLDA_SNAPDIR_TRACK_EXT;
        char *side = slda_xmalloc(len);
        slda_snapdir_track_path(side, len, e->path);
        unlink(side); /* its tracker state, if any */
        free(side);
        if (cb && cb->removed)
            cb->removed(cb->opaque, e->updates, NULL);
    }
    free(u);
    free(at);
    free(stay);
    remove_orphan_states(dir, model, &list);
    slda_snapdir_list_clear(&list);
    return rc;
}
