/* fuzz_update.c - fuzz target: slda_update_decode and slda_update_apply on untrusted bytes.
 *
 * An update record (src/engine/update.c, docs/replication.md) comes from a
 * Kafka topic other processes write: its decoder must refuse any defect with
 * a documented code and never crash, and a record it accepts must apply to a
 * model without breaking it. Two targets come from this file: fuzz_update
 * decodes the input as is (most mutations stop at the XXH3-64 trailer);
 * fuzz_update_fixsum (-DSLDA_FUZZ_FIX_CHECKSUM) first rewrites the trailer
 * to the checksum of the mutated bytes, so mutations reach the MessagePack
 * cursor. Checked:
 *   - a failure is SLDA_ERR_CORRUPT, _TRUNCATED or _VERSION with an
 *     "update record: " message, and leaves no record;
 *   - a decoded record encodes again (float32) and that decodes to a record
 *     whose float32 encoding is the same bytes;
 *   - applied to a K=2 model with births (when it has K=2 and births
 *     inputs), the model's alpha, NZ, sigma and every row held stay finite
 *     and >= 0, or the apply is refused with a reason.
 * slda_fuzz_generate hands replay.c records made here from short documents
 * (float32, float16, q8; model ids and scratch words).
 */
#include "fuzzutil.h"
#include "engine/model_priv.h"
#include "engine/global_step.h"
#include "engine/train.h"
#include "engine/heldout.h"
#include "engine/update.h"
#include "text/bag.h"
#include "io/docmsg.h"
#include "io/outfile.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define TRAILER_LEN 8

static void check_model(const slda_model_t *model)
{
    FUZZ_ASSERT(isfinite(model->sigma) && model->sigma > 0, "sigma %g", model->sigma);
    for (uint32_t k = 0; k < model->K; k++)
        FUZZ_ASSERT(isfinite(model->alpha[k]) && model->alpha[k] > 0 && isfinite(model->NZ[k]) &&
                        model->NZ[k] >= 0,
                    "topic %u: alpha %g NZ %g", k, model->alpha[k], model->NZ[k]);
    for (uint32_t w = 0; w < model->W; w++)
        if (model->row_ready[w])
            for (uint32_t k = 0; k < model->K; k++) {
                float v = model->A[(size_t)w * model->Kp + k];
                FUZZ_ASSERT(isfinite(v) && v >= 0, "row %u topic %u: %g", w, k, v);
            }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[512];
    const uint8_t *in = data;
    uint8_t *copy = NULL;
#ifdef SLDA_FUZZ_FIX_CHECKSUM
    if (size >= 16) {
        copy = slda_xmalloc(size);
        memcpy(copy, data, size);
        uint64_t h = slda_hash64(copy, size - TRAILER_LEN, 0);
        for (int i = 0; i < 8; i++)
            copy[size - TRAILER_LEN + i] = (uint8_t)(h >> (8 * (7 - i)));
        in = copy;
    }
#endif
    slda_update_t *upd = (slda_update_t *)1;
    err[0] = '\0';
    slda_err_t e = slda_update_decode(in, size, &upd, err, sizeof err);
    if (e != SLDA_OK) {
        FUZZ_ASSERT(upd == NULL, "failed decode left a record");
        FUZZ_ASSERT(e == SLDA_ERR_CORRUPT || e == SLDA_ERR_TRUNCATED || e == SLDA_ERR_VERSION,
                    "undocumented failure %s: %s", slda_err_name(e), err);
        FUZZ_ASSERT(strncmp(err, "update record: ", 15) == 0, "message \"%s\"", err);
        free(copy);
        return 0;
    }
    void *b1, *b2;
    size_t l1, l2;
    slda_update_t *again = NULL;
    FUZZ_ASSERT(slda_update_encode(upd, SLDA_UPDATE_F32, &b1, &l1, err, sizeof err) == SLDA_OK,
                "encode: %s", err);
    FUZZ_ASSERT(slda_update_decode(b1, l1, &again, err, sizeof err) == SLDA_OK,
                "a re-encoded record does not decode: %s", err);
    FUZZ_ASSERT(slda_update_encode(again, SLDA_UPDATE_F32, &b2, &l2, err, sizeof err) == SLDA_OK,
                "encode: %s", err);
    FUZZ_ASSERT(l1 == l2 && memcmp(b1, b2, l1) == 0, "float32 round trip changed the bytes");
    free(b1);
    free(b2);
    slda_update_destroy(again);

    uint32_t ns, K;
    slda_update_stats(upd, &ns, &K);
    if (K == 2 && ns < 4096) {
        slda_model_t *model = slda_fuzz_model(64, NULL, 0, "none", 1, 0);
        if (slda_update_apply(model, upd, err, sizeof err) != SLDA_OK)
            FUZZ_ASSERT(err[0] != '\0', "apply refused without a reason");
        check_model(model);
        slda_model_destroy(model);
    }
    slda_update_destroy(upd);
    free(copy);
    return 0;
}

void slda_fuzz_generate(slda_fuzz_feed_fn feed)
{
    static const char *const texts[] = {"apple banana apple cherry", "banana date date elder",
                                        "fig apple grape", "cherry cherry fig honeydew"};
    char err[512];
    for (int scratch = 0; scratch < 2; scratch++) {
        slda_model_t *model = slda_fuzz_model(64, NULL, 0, "none", 1, 0);
        slda_update_scratch_t *s = scratch ? slda_update_scratch_new() : NULL;
        slda_doc_t docs[4];
        for (int i = 0; i < 4; i++) {
            slda_err_t e = s ? slda_update_doc_from_text(model, s, texts[i], strlen(texts[i]),
                                                         &docs[i], err, sizeof err)
                             : slda_doc_from_text(model, texts[i], strlen(texts[i]), &docs[i],
                                                  err, sizeof err);
            FUZZ_ASSERT(e == SLDA_OK, "harness: document: %s", err);
        }
        slda_update_t *upd = NULL;
        FUZZ_ASSERT(slda_update_local(model, s, docs, 4, 0, NULL, &upd, err, sizeof err) == SLDA_OK,
                    "harness: local: %s", err);
        slda_update_add_input(upd, "docs", 0, 10, 13);
        for (int v = 0; v < 3; v++) {
            void *buf;
            size_t len;
            FUZZ_ASSERT(slda_update_encode(upd, (slda_update_values_t)v, &buf, &len, err,
                                           sizeof err) == SLDA_OK,
                        "harness: encode: %s", err);
            feed(buf, len, scratch ? "scratch" : "ids");
            free(buf);
        }
        slda_update_destroy(upd);
        slda_docs_clear(docs, 4);
        slda_update_scratch_destroy(s);
        slda_model_destroy(model);
    }
}
