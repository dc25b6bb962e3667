/* snapshot_labels.c - the header's optional "labels" key: the topics' user labels.
 *
 * "labels": an array of [k, text] pairs, topics in increasing order, written only when the
 * model has a label (so a snapshot without one is byte for byte what it was, and older
 * readers, which skip keys they do not know, load a labelled snapshot without its labels).
 * Reading checks the shape here; each pair is checked against the model (k < K, the text's
 * rules: engine/labels.c) when it is attached after the model is built, and a failure names
 * the byte offset where the array starts.
 */
#include "io/snapshot_priv.h"

#include <stdlib.h>
#include <string.h>

void slda_snap_labels_write(msgpack_packer *pk, const slda_model_t *model)
{
    uint32_t K = slda_model_topics(model), n = 0;
    for (uint32_t k = 0; k < K; k++)
        n += slda_model_label(model, k) != NULL;
    msgpack_pack_array(pk, n);
    for (uint32_t k = 0; k < K; k++) {
        const char *label = slda_model_label(model, k);
        if (!label)
            continue;
        msgpack_pack_array(pk, 2);
        msgpack_pack_uint32(pk, k);
        msgpack_pack_str_with_body(pk, label, strlen(label));
    }
}

int slda_snap_labels_read(slda_msgpack_t *mp, slda_snap_labels_t *sl)
{
    uint32_t n;
    if (sl->present)
        return slda_msgpack_fail(mp, "header: duplicate key \"" SLDA_SNAP_KEY_LABELS "\"");
    sl->present = 1;
    sl->at = slda_msgpack_pos(mp);
    if (slda_msgpack_array(mp, "header \"labels\"", &n))
        return -1;
    if (n > SLDA_MAX_TOPICS)
        return slda_msgpack_fail(mp, "header \"labels\": %u entries, more than %d topics", n,
                                 SLDA_MAX_TOPICS);
    sl->topic = slda_xcalloc(n ? n : 1, sizeof *sl->topic);
    sl->text = slda_xcalloc(n ? n : 1, sizeof *sl->text);
    for (uint32_t i = 0; i < n; i++) {
        uint32_t two;
        if (slda_msgpack_array(mp, "header \"labels\" entry", &two))
            return -1;
        if (two != 2)
            return slda_msgpack_fail(mp, "header \"labels\" entry: %u elements, expected 2",
                                     two);
        if (slda_msgpack_u32(mp, "header \"labels\" topic", &sl->topic[i]) ||
            slda_msgpack_strdup(mp, "header \"labels\" text", 0, &sl->text[sl->n]))
            return -1;
        sl->n++;
    }
    return 0;
}

void slda_snap_labels_clear(slda_snap_labels_t *sl)
{
    for (uint32_t i = 0; i < sl->n; i++)
        free(sl->text[i]);
    free(sl->text);
    free(sl->topic);
    memset(sl, 0, sizeof *sl);
}

int slda_snap_labels_attach(slda_msgpack_t *mp, slda_model_t *model, const slda_snap_labels_t *sl)
{
    for (uint32_t i = 0; i < sl->n; i++) {
        char why[300];
        if (slda_model_label(model, sl->topic[i]))
            return slda_msgpack_fail(mp, "header \"labels\" from byte %zu: topic %u twice",
                                     sl->at, sl->topic[i]);
        if (slda_model_set_label(model, sl->topic[i], sl->text[i], why, sizeof why) != SLDA_OK)
            return slda_msgpack_fail(mp, "header \"labels\" from byte %zu: %s", sl->at, why);
    }
    return 0;
}
