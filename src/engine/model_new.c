/* model_new.c - a model's life: slda_model_new (a vocabulary file, the initial rows, the
 * worker threads) and slda_model_destroy (everything the engine's modules attach to it).
 *
 * model.c holds the state itself and knows none of the modules that hang their own on a
 * model (train.c's pending statistics and per-worker scratch, births.c, replay.c,
 * doc_text.c's bag); they only know model.c. Creating and destroying the whole sits above
 * them all, here, so no two files of the engine depend on each other.
 */
#include "engine/model_priv.h"
#include "engine/births.h"
#include "engine/labels.h"
#include "engine/replay.h"
#include "engine/train.h"
#include "engine/pending.h"
#include "engine/rows_nz.h"
#include "engine/sparse.h"
#include "core/pool.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static slda_err_t load_vocab_file(slda_model_t **out, const slda_params_t *p, char *errstr,
                                  size_t errstr_size)
{
    FILE *f = fopen(p->vocab_file, "r");
    if (!f)
        return slda_set_err(errstr, errstr_size, SLDA_ERR_IO, "vocabulary \"%s\": %s",
                            p->vocab_file, strerror(errno));
    char *line = NULL;
    size_t cap = 0, nwords = 0;
    ssize_t len;
    while ((len = getline(&line, &cap, f)) > 0)
        nwords++;
    if (nwords == 0 || nwords > UINT32_MAX / 2) {
        free(line);
        fclose(f);
        return slda_set_err(errstr, errstr_size, SLDA_ERR_PARSE,
                            "vocabulary \"%s\": no words", p->vocab_file);
    }
    slda_model_t *model = slda_model_alloc(p, (uint32_t)nwords, 1, p->seed, NULL, errstr,
                                           errstr_size);
    if (!model) {
        free(line);
        fclose(f);
        return SLDA_ERR_NOMEM;
    }
    rewind(f);
    slda_err_t err = SLDA_OK;
    for (uint32_t id = 0; (len = getline(&line, &cap, f)) > 0 && err == SLDA_OK; id++) {
        while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
            line[--len] = '\0';
        char msg[256];
        err = slda_vocab_put(model->vocab, id, line, (size_t)len, 0, msg, sizeof msg);
        if (err != SLDA_OK)
            slda_set_err(errstr, errstr_size, err, "%s:%u: %s", p->vocab_file, id + 1, msg);
    }
    free(line);
    fclose(f);
    if (err != SLDA_OK) {
        slda_model_destroy(model);
        return err;
    }
    *out = model;
    return SLDA_OK;
}

slda_model_t *slda_model_new(const slda_conf_t *conf, char *errstr, size_t errstr_size)
{
    const slda_params_t *p = &conf->p;
    slda_model_t *model = NULL;
    if (p->kind != SLDA_KIND_LDA && p->births && slda_conf_is_set(conf, "births")) {
        slda_set_err(errstr, errstr_size, SLDA_ERR_INVALID,
                     "model.kind=%s: births=true is not supported (births are LDA's; leave "
                     "births unset or false)", slda_kind_name(p->kind));
        return NULL;
    }
    if (p->vocab_file && *p->vocab_file) {
        if (load_vocab_file(&model, p, errstr, errstr_size) != SLDA_OK)
            return NULL;
        for (uint32_t w = 0; w < model->W; w++)
            slda_model_init_row(model, w);
    } else {
        model = slda_model_alloc(p, p->vocab_capacity, 0, p->seed, NULL, errstr, errstr_size);
        if (!model)
            return NULL;
    }
    free(model->name);
    model->name = slda_xstrdup(conf->model_name && *conf->model_name ? conf->model_name
                                                                     : "streamlda");
    if (slda_model_start_threads(model, errstr, errstr_size) != SLDA_OK) {
        slda_model_destroy(model);
        return NULL;
    }
    return model;
}

void slda_model_destroy(slda_model_t *model)
{
    if (!model)
        return;
    slda_pool_destroy(model->pool); /* no job runs: the threads stop before their scratch goes */
    model->pool = NULL;
    slda_model_free_pending(model);  /* train.c */
    slda_model_free_locals(model);   /* train.c */
    slda_births_free(model->births); /* births.c */
    slda_replay_free(model->replay); /* replay.c */
    slda_bag_free(model->bag);       /* doc_text.c */
    slda_rows_nz_free(model);        /* rows_nz.c */
    slda_wtabs_free(model->wtabs);   /* sparse_tables.c */
    slda_labels_free(model);         /* labels.c */
    free(model->wtabs);
    slda_model_free_state(model);
}
