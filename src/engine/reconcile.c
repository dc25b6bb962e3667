/* reconcile.c - a restored model against the configuration of the run that restores it.
 *
 * A snapshot carries the parameters it was trained with. When a service restarts
 * from one, its configuration may say something else. The configuration table's
 * row flags (core/config.h) say which kind each setting is; this file lists none:
 *  - model-defining (SLDA_PF_DEFINING: topics, eta, vocab.capacity, vocab.file,
 *    seed): the counts, the word ids and the vocabulary hashing depend on them.
 *    A value given explicitly (file, environment, -X) that differs from the
 *    snapshot's is an error; a default that differs is simply the snapshot's
 *    value (logged).
 *  - tunables (SLDA_PF_TUNABLE: alpha and its learning, the local step, the rho
 *    schedule, global.stale, corpus.tokens, init.scale, threads): this run's
 *    configuration applies; every change is reported through the log callback.
 *  - this run's, silently (SLDA_PF_RUN: births.* and replay.*): the snapshot's
 *    copy of births.* serves readers without a configuration, replay.* are not
 *    stored.
 * text.* (SLDA_PF_TEXT, the tokenizer) decide which words a document becomes, so
 * the model's vocabulary depends on them: slda_model_text_conf keeps the
 * snapshot's value of each text.* setting left at its default, and applies (with
 * a warning) one given explicitly. A stop-word file named by the snapshot is
 * never opened on its say-so (set text.stopwords explicitly to use it again).
 * A stored setting of none of these kinds (global.rows) stays the snapshot's.
 */
#include "core/config.h"
#include "engine/model_priv.h"
#include "engine/global_step.h"
#include "engine/train.h"
#include "core/slda_int.h"

#include <stdio.h>
#include <string.h>

/* The model's value of key as configuration text (params sit first in a conf). */
static void model_value(const slda_model_t *model, const char *key, char *out, size_t n)
{
    slda_conf_t *view = slda_conf_new();
    slda_params_t saved = view->p;
    view->p = model->p; /* borrowed: restored before the view is freed */
    if (slda_conf_get(view, key, out, n) != SLDA_OK)
        snprintf(out, n, "?");
    view->p = saved;
    slda_conf_destroy(view);
}

slda_err_t slda_model_reconcile(slda_model_t *model, const slda_conf_t *conf,
                                void (*log)(void *opaque, const char *line), void *opaque,
                                char *errstr, size_t errstr_size)
{
    char mine[512], theirs[512], line[1200];
    size_t n;
    const slda_prop_t *props = slda_conf_props(&n);
    for (size_t i = 0; i < n; i++) {
        const char *key = props[i].name;
        if (!(props[i].flags & SLDA_PF_DEFINING))
            continue;
        model_value(model, key, theirs, sizeof theirs);
        if (slda_conf_get(conf, key, mine, sizeof mine) != SLDA_OK || !strcmp(mine, theirs))
            continue;
        if (slda_conf_is_set(conf, key))
            return slda_set_err(errstr, errstr_size, SLDA_ERR_INVALID,
                                "property \"%s\": the configuration says %s but the restored "
                                "snapshot was trained with %s; a model-defining setting cannot "
                                "change on restart (drop the setting, or start another model "
                                "with a new model.name or snapshot.dir)",
                                key, *mine ? mine : "(empty)", *theirs ? theirs : "(empty)");
        snprintf(line, sizeof line, "%s=%s from the restored snapshot (default %s not used)",
                 key, *theirs ? theirs : "(empty)", *mine ? mine : "(empty)");
        log(opaque, line);
    }
    /* births.* and replay.* come from this run's configuration, silently. The
     * births state (births.c) is kept; a snapshot written before it held one
     * starts a fresh baseline. */
    if (conf->p.births && !model->births)
        log(opaque, "births: the snapshot holds no births state; a fresh baseline starts");
    for (size_t i = 0; i < n; i++)
        if (props[i].flags & SLDA_PF_RUN)
            slda_prop_copy(&props[i], &model->p, &conf->p); /* params sit first in a conf */
    if (model->p.kind != SLDA_KIND_LDA) {
        if (model->p.births && slda_conf_is_set(conf, "births"))
            return slda_set_err(errstr, errstr_size, SLDA_ERR_INVALID,
                                "model.kind=%s (the restored snapshot's): births=true is not "
                                "supported", slda_kind_name(model->p.kind));
        model->p.births = 0;
    }
    uint32_t threads_before = model->p.threads;
    int alpha_changed = 0;
    for (size_t i = 0; i < n; i++) {
        const char *key = props[i].name;
        if (!(props[i].flags & SLDA_PF_TUNABLE))
            continue;
        model_value(model, key, theirs, sizeof theirs);
        if (slda_conf_get(conf, key, mine, sizeof mine) != SLDA_OK || !strcmp(mine, theirs))
            continue;
        slda_conf_t *view = slda_conf_new();
        slda_params_t saved = view->p;
        view->p = model->p;
        slda_err_t err = slda_conf_set(view, key, mine, errstr, errstr_size);
        model->p = view->p; /* tunables are numbers and enums: no string changes hands */
        view->p = saved;
        slda_conf_destroy(view);
        if (err)
            return err;
        alpha_changed |= !strncmp(key, "alpha", 5);
        snprintf(line, sizeof line, "%s=%s applied (the restored snapshot had %s)", key, mine,
                 theirs);
        log(opaque, line);
    }
    const char *why = slda_kind_conflict(&model->p);
    if (why)
        return slda_set_err(errstr, errstr_size, SLDA_ERR_INVALID,
                            "model.kind=%s (the restored snapshot's): %s",
                            slda_kind_name(model->p.kind), why);
    if (alpha_changed && model->p.alpha_learn == SLDA_ALPHA_FIXED) { /* the configured alpha */
        model->alpha_sum = 0;
        for (uint32_t k = 0; k < model->K; k++) {
            model->alpha[k] = model->p.alpha;
            model->alpha_sum += model->p.alpha;
        }
    }
    if (model->p.corpus_tokens > 0)
        model->corpus_tokens = model->p.corpus_tokens;
    if (model->p.threads != threads_before) {
        if (slda_model_start_threads(model, errstr, errstr_size) != SLDA_OK)
            return SLDA_ERR_NOMEM;
    }
    return SLDA_OK;
}

slda_conf_t *slda_model_text_conf(const slda_model_t *model, const slda_conf_t *conf,
                                  void (*log)(void *opaque, const char *line), void *opaque)
{
    slda_conf_t *eff = slda_conf_dup(conf);
    size_t n;
    const slda_prop_t *props = slda_conf_props(&n);
    char mine[512], theirs[512], line[1400], err[256];
    for (size_t i = 0; i < n; i++) {
        const char *key = props[i].name;
        if (!(props[i].flags & SLDA_PF_TEXT))
            continue;
        model_value(model, key, theirs, sizeof theirs);
        if (slda_conf_get(conf, key, mine, sizeof mine) != SLDA_OK || !strcmp(mine, theirs))
            continue;
        if (slda_conf_is_set(conf, key))
            snprintf(line, sizeof line, "%s=%s applied although the restored snapshot was trained "
                     "with %s: new documents are tokenised differently from the ones the model "
                     "learned", key, mine, theirs);
        else if (!strcmp(key, "text.stopwords") && strchr(theirs, '/'))
            snprintf(line, sizeof line, "text.stopwords: the restored snapshot used %s, which names "
                     "a file; using %s (set text.stopwords to use that file again)", theirs, mine);
        else if (slda_conf_set(eff, key, theirs, err, sizeof err) == SLDA_OK)
            snprintf(line, sizeof line, "%s=%s from the restored snapshot (default %s not used)",
                     key, theirs, mine);
        else
            snprintf(line, sizeof line, "%s: the restored snapshot's %s is refused (%s); using %s",
                     key, theirs, err, mine);
        log(opaque, line);
    }
    return eff;
}
