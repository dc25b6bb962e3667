/* gzfile.h - transparent gzip input for the document readers (not installed). */
#ifndef SLDA_GZFILE_H
#define SLDA_GZFILE_H

#include <stddef.h>
#include <stdio.h>

/* Look at the first bytes of in. Not gzip: returns in itself, with the byte
 * it read pushed back. Gzip (magic 1f 8b): returns a new stream that reads
 * the decompressed bytes (concatenated members, as gzip -d does). A stream
 * that starts with 1f but not 8b: a new stream that replays those bytes and
 * the rest unchanged. A new stream owns in when owns_in is 1 (fclose closes
 * both) and never closes it otherwise (standard input).
 *
 * When the compressed data is corrupt or ends early, a read fails with errno
 * EIO and why (why_size bytes, borrowed: it must outlive the stream) holds
 * "truncated gzip data: ..." or "corrupt gzip data: ...". NULL (errno set,
 * in untouched and still the caller's) if the new stream cannot be made. */
FILE *slda_gz_open(FILE *in, int owns_in, char *why, size_t why_size);

#endif
