/* subject.h - new subjects from the words: words that were rare and now come together.
 *
 * A model that learns in one pass gives the documents of a subject it has never seen to the
 * nearest topic it has, so the subject shows neither as a birth nor as a slot taken over,
 * and as a rise only when that topic's share moves far enough (docs/tracking.md, "New
 * subjects injected into real text"). The words tell sooner: a new subject brings words
 * that were rare (a doctor's, a refinery's) and they come in the same documents. subject.c
 * counts, in blocks of track.subject.docs documents, how many documents hold each word,
 * against a decayed baseline; the words far above theirs (a likelihood-ratio test on the
 * counts) that share documents make one subject. Words only: no model state, so it works
 * the same on any model kind and K. One thread (the tracker's).
 */
#ifndef SLDA_TRACK_SUBJECT_H
#define SLDA_TRACK_SUBJECT_H

#include <stddef.h>
#include <stdint.h>

#define SLDA_SUBJECT_WORDS 10 /* words a subject names at most */

typedef struct slda_subject_s {
    uint64_t key[SLDA_SUBJECT_WORDS]; /* its words, strongest first */
    double g[SLDA_SUBJECT_WORDS];     /* their likelihood ratios */
    uint32_t nwords;
    uint32_t docs;      /* documents of the block holding two or more of its words */
    uint32_t topic;     /* the topic that holds most of those documents' mass */
    int64_t first_ms;   /* the event time of the first of them */
} slda_subject_t;

typedef struct slda_subjects_s slda_subjects_t;

/* A detector with blocks of block_docs documents, counting at most capacity words (the
 * rarest of the others are forgotten at a block's end; a word that finds no room while
 * the table is full is counted in slda_subjects_skipped). NULL when block_docs is 0. */
slda_subjects_t *slda_subjects_new(uint32_t block_docs, uint32_t capacity);
void slda_subjects_destroy(slda_subjects_t *s);
/* One document: its distinct word keys, its mixture's largest topic, its event time.
 * Returns the number of subjects found when this document ended a block (read them with
 * slda_subjects_found), else 0. */
size_t slda_subjects_add(slda_subjects_t *s, const uint64_t *key, uint32_t n, uint32_t topic,
                         int64_t ms);
const slda_subject_t *slda_subjects_found(const slda_subjects_t *s, size_t *n);
uint64_t slda_subjects_skipped(const slda_subjects_t *s);
uint64_t slda_subjects_docs(const slda_subjects_t *s); /* documents counted */

#endif /* SLDA_TRACK_SUBJECT_H */
