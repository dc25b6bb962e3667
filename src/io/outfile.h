/* outfile.h - every file the program writes: snapshots, exports, the CLI's files (outfile.c). */
#ifndef SLDA_OUTFILE_H
#define SLDA_OUTFILE_H

#include "core/slda_int.h"

#include <stdio.h>

/*
 * open -> write to fp -> commit (or abort). A regular or missing path (after
 * following symlinks) is replaced atomically: temp file beside the target,
 * fsync, rename over the target, directory fsync; on failure the target is
 * left as it was. "-" is standard output and a FIFO, device or socket is
 * written straight, never renamed over or fsync'd. A directory is refused.
 * Errors: SLDA_ERR_IO, messages start with `<what> "<path>": `.
 */
typedef struct slda_outfile_s {
    FILE *fp;         /* write here; "w+b" (seekable) when replacing */
    const char *what; /* borrowed: "snapshot", "export", ... */
    char *path;       /* owned: as given */
    char *target;     /* owned: path with symlinks followed (NULL for "-") */
    char *tmp;        /* owned: the temp file when replacing, else NULL */
    int replace;      /* 1: atomic replacement; 0: straight write */
} slda_outfile_t;
slda_err_t slda_outfile_open(slda_outfile_t *out, const char *what, const char *path,
                             char *errstr, size_t errstr_size);
/* Always releases out. */
slda_err_t slda_outfile_commit(slda_outfile_t *out, char *errstr, size_t errstr_size);
/* After a failed write: removes the temp file (a straight write stays as
 * written). Accepts a zeroed out. */
void slda_outfile_abort(slda_outfile_t *out);
/* 1 when fp may be re-read or mapped (the atomic path), 0 for straight writes. */
int slda_outfile_seekable(const slda_outfile_t *out);
/* Would slda_outfile_open fail for sure (a directory, a missing or unwritable
 * directory for the temp file)? Opens nothing, so a long run can refuse a bad
 * output path before it starts; SLDA_ERR_IO with the reason. */
slda_err_t slda_outfile_check(const char *what, const char *path, char *errstr,
                              size_t errstr_size);

#endif /* SLDA_OUTFILE_H */
