/* label.c - a topic's automatic label: its most relevant words, as LDAvis ranks them.
 *
 * A topic's most probable words are often the corpus's most frequent ones ("said", "new"),
 * shared by many topics; its most distinctive words are often rare. Relevance (Sievert and
 * Shirley 2014, "LDAvis"), r(w) = lambda log phi_kw + (1 - lambda) log(phi_kw / p_w), with p_w
 * the word's share of the model's tokens, weighs the two; lambda 0.6 is the value their user
 * study found best for telling topics apart. The label is the SLDA_AUTOLABEL_WORDS words of
 * highest relevance among the topic's SLDA_TRACK_TOP most probable ones (ranking only those:
 * one row sum per candidate, K x 50 rows in all, instead of all W words of every topic; a word
 * outside the top 50 needs a lift of e^(0.6/0.4 x the log-probability gap) to win, which only
 * words of a few occurrences reach), joined by spaces, most relevant first. Reads the model:
 * the model's thread (or a model nothing trains).
 */
#include "track/track.h"
#include "core/slda_int.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define LAMBDA 0.6

void slda_track_autolabel(const slda_model_t *model, const slda_track_words_t *w, char *out,
                          size_t size)
{
    uint32_t K = slda_model_topics(model);
    double sigma = slda_model_scale(model), tot = 0;
    double nz[SLDA_MAX_TOPICS];
    slda_model_topic_totals(model, nz);
    for (uint32_t k = 0; k < K; k++)
        tot += nz[k];
    double rel[SLDA_TRACK_TOP];
    for (size_t i = 0; i < w->n; i++) {
        uint32_t id = slda_model_word_id(model, w->word[i], strlen(w->word[i]));
        double row = 0;
        if (id != UINT32_MAX) {
            const float *r = slda_model_row(model, id);
            for (uint32_t k = 0; k < K; k++)
                row += r[k];
        }
        double pw = tot > 0 ? sigma * row / tot : 0, phi = w->prob[i];
        rel[i] = pw > 0 && phi > 0 ? LAMBDA * log(phi) + (1 - LAMBDA) * log(phi / pw)
                                   : -HUGE_VAL;
    }
    size_t len = 0;
    out[0] = '\0';
    for (int n = 0; n < SLDA_AUTOLABEL_WORDS; n++) {
        size_t best = w->n;
        for (size_t i = 0; i < w->n; i++) /* ties: the more probable word (listed first) */
            if (rel[i] > -HUGE_VAL && (best == w->n || rel[i] > rel[best]))
                best = i;
        if (best == w->n)
            break;
        rel[best] = -HUGE_VAL;
        size_t wl = strlen(w->word[best]);
        if (len + (len > 0) + wl + 1 > size)
            break;
        len += (size_t)snprintf(out + len, size - len, "%s%s", len ? " " : "", w->word[best]);
    }
}
