/* outfile.c - every file the program writes: atomic replacement or a straight write.
 *
 * Why: an output path is not always a regular file. Renaming a temporary file
 * over "/dev/null", a FIFO or a symlink replaces *that* node (as root, the
 * device node itself), and "-" means standard output, not a file named "-".
 * slda_outfile_open decides once, from what the path is:
 *
 *   - "-"                       standard output, written straight (never closed);
 *   - missing, or a regular file: the atomic path - a temporary file
 *                               "<target>.tmp.<pid>" beside the target, then
 *                               fflush + fsync + close + rename over the target
 *                               + fsync of its directory. A replaced file keeps
 *                               its permission bits;
 *   - a symlink (any chain, relative or absolute, dangling too): followed
 *                               first, so the temporary file goes beside the
 *                               final target and the rename replaces the target;
 *                               the link stays a link;
 *   - a FIFO, character or block device, socket: opened and written straight,
 *                               never renamed over, never fsync'd (a pipe has
 *                               nothing to sync and says EINVAL);
 *   - a directory:              refused.
 *
 * Only the atomic path is seekable (its FILE is "w+b", so a writer may map or
 * re-read what it wrote, as the snapshot checksum does); a straight write can
 * be neither undone nor re-read, so slda_outfile_abort leaves what was written.
 * Library code: nothing here prints. Two writers in one process must not write
 * the same target at the same time (the temporary name holds only the pid).
 */
#include "io/outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define OUT_MAX_LINKS 40 /* the kernel's own limit on a symlink chain (ELOOP) */

/* The directory part of path with a trailing '/', or "" (malloc'ed). */
static char *dir_prefix(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slda_xstrndup(path, (size_t)(slash - path) + 1) : slda_xstrdup("");
}

/* The text of symlink path (malloc'ed), or NULL with errno set. */
static char *read_link(const char *path, off_t hint)
{
    size_t cap = hint > 0 ? (size_t)hint + 1 : 256;
    for (;;) {
        char *buf = slda_xmalloc(cap);
        ssize_t n = readlink(path, buf, cap);
        if (n < 0) {
            free(buf);
            return NULL;
        }
        if ((size_t)n < cap) {
            buf[n] = '\0';
            return buf;
        }
        free(buf); /* truncated: the link changed or st_size was 0 */
        cap *= 2;
    }
}

/* Follow symlinks from path. *target gets the final path (malloc'ed) and *st
 * its lstat; *exists is 0 when nothing is there (a new file, or a dangling
 * link's target). Returns 0 or an errno (ELOOP for a chain too long). */
static int resolve_target(const char *path, char **target, struct stat *st, int *exists)
{
    char *cur = slda_xstrdup(path);
    for (int hops = 0;; hops++) {
        if (lstat(cur, st) != 0) {
            int e = errno;
            if (e == ENOENT) {
                *exists = 0;
                *target = cur;
                return 0;
            }
            free(cur);
            return e;
        }
        if (!S_ISLNK(st->st_mode)) {
            *exists = 1;
            *target = cur;
            return 0;
        }
        char *link = hops < OUT_MAX_LINKS ? read_link(cur, st->st_size) : NULL;
        if (!link) {
            int e = hops < OUT_MAX_LINKS ? errno : ELOOP;
            free(cur);
            return e;
        }
        if (link[0] == '/') {
            free(cur);
            cur = link;
        } else { /* relative to the directory holding the link */
            char *dir = dir_prefix(cur);
            size_t n = strlen(dir) + strlen(link) + 1;
            free(cur);
            cur = slda_xmalloc(n);
            snprintf(cur, n, "%s%s", dir, link);
            free(dir);
            free(link);
        }
    }
}

static slda_err_t open_fail(slda_outfile_t *out, const char *what, const char *path,
                            const char *op, const char *name, int e, char *errstr,
                            size_t errstr_size)
{
    if (name)
        slda_set_err(errstr, errstr_size, SLDA_ERR_IO, "%s \"%s\": %s \"%s\": %s", what, path,
                     op, name, strerror(e));
    else
        slda_set_err(errstr, errstr_size, SLDA_ERR_IO, "%s \"%s\": %s: %s", what, path, op,
                     strerror(e));
    free(out->path);
    free(out->target);
    free(out->tmp);
    memset(out, 0, sizeof *out);
    return SLDA_ERR_IO;
}

/* The temporary file beside out->target, created exclusively (a name left by
 * an earlier process with the same pid is removed first; anything else there,
 * such as a directory, makes the open fail and the target stays as it was). */
static slda_err_t open_replace(slda_outfile_t *out, const struct stat *st, int exists,
                               char *errstr, size_t errstr_size)
{
    size_t n = strlen(out->target) + 32;
    int fd;
    out->tmp = slda_xmalloc(n);
    snprintf(out->tmp, n, "%s.tmp.%ld", out->target, (long)getpid());
    fd = open(out->tmp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0 && errno == EEXIST && unlink(out->tmp) == 0)
        fd = open(out->tmp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0)
        return open_fail(out, out->what, out->path, "cannot create", out->tmp, errno, errstr,
                         errstr_size);
    /* A replaced file keeps its permission bits. Best effort: fchmod of our
     * own new file fails only in odd cases, and the default mode is no worse. */
    if (exists)
        (void)fchmod(fd, st->st_mode & 07777);
    out->fp = fdopen(fd, "w+b");
    if (!out->fp) {
        int e = errno;
        close(fd);
        unlink(out->tmp);
        return open_fail(out, out->what, out->path, "cannot open", out->tmp, e, errstr,
                         errstr_size);
    }
    out->replace = 1;
    return SLDA_OK;
}

slda_err_t slda_outfile_open(slda_outfile_t *out, const char *what, const char *path,
                             char *errstr, size_t errstr_size)
{
    struct stat st;
    int exists = 0, e, fd;
    memset(out, 0, sizeof *out);
    out->what = what;
    out->path = slda_xstrdup(path);
    if (strcmp(path, "-") == 0) {
        out->fp = stdout;
        return SLDA_OK;
    }
    if ((e = resolve_target(path, &out->target, &st, &exists)) != 0)
        return open_fail(out, what, path, "cannot resolve", NULL, e, errstr, errstr_size);
    if (!exists || S_ISREG(st.st_mode))
        return open_replace(out, &st, exists, errstr, errstr_size);
    if (S_ISDIR(st.st_mode))
        return open_fail(out, what, path, "cannot write", NULL, EISDIR, errstr, errstr_size);
    /* FIFO, device, socket: write straight to what is there. */
    fd = open(out->target, O_WRONLY | O_NOCTTY | O_CLOEXEC);
    if (fd < 0)
        return open_fail(out, what, path, "cannot open", NULL, errno, errstr, errstr_size);
    out->fp = fdopen(fd, "wb");
    if (!out->fp) {
        e = errno;
        close(fd);
        return open_fail(out, what, path, "cannot open", NULL, e, errstr, errstr_size);
    }
    return SLDA_OK;
}

slda_err_t slda_outfile_check(const char *what, const char *path, char *errstr,
                              size_t errstr_size)
{
    struct stat st;
    char *target = NULL, *dir;
    int exists = 0, e;
    if (strcmp(path, "-") == 0)
        return SLDA_OK;
    if ((e = resolve_target(path, &target, &st, &exists)) != 0)
        return slda_set_err(errstr, errstr_size, SLDA_ERR_IO, "%s \"%s\": cannot resolve: %s",
                            what, path, strerror(e));
    if (exists && S_ISDIR(st.st_mode))
        e = EISDIR;
    else if (!exists || S_ISREG(st.st_mode)) { /* the temp file is created beside it */
        dir = dir_prefix(target);
        if (access(*dir ? dir : ".", W_OK | X_OK) != 0)
            e = errno;
        free(dir);
    }
    free(target);
    if (e)
        return slda_set_err(errstr, errstr_size, SLDA_ERR_IO, "%s \"%s\": cannot write: %s",
                            what, path, strerror(e));
    return SLDA_OK;
}

/* fsync the directory holding path so the rename itself is durable. Returns
 * 0 or an errno. Some filesystems refuse fsync on directories (EINVAL). */
static int fsync_parent_dir(const char *path)
{
    char *dir = dir_prefix(path);
    int fd, e = 0;
    fd = open(*dir ? dir : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        e = errno;
    else if (fsync(fd) != 0 && errno != EINVAL && errno != EBADF)
        e = errno;
    if (fd >= 0)
        close(fd);
    free(dir);
    return e;
}

static void release(slda_outfile_t *out)
{
    free(out->path);
    free(out->target);
    free(out->tmp);
    memset(out, 0, sizeof *out);
}

slda_err_t slda_outfile_commit(slda_outfile_t *out, char *errstr, size_t errstr_size)
{
    const char *op = NULL;
    int e = 0;
    slda_err_t err = SLDA_OK;
    if (fflush(out->fp) != 0) {
        op = "write";
        e = errno;
    } else if (ferror(out->fp)) {
        op = "write";
        e = EIO; /* an earlier write failed; its errno is gone */
    } else if (out->replace && fsync(fileno(out->fp)) != 0) {
        op = "fsync";
        e = errno;
    }
    if (out->fp != stdout && fclose(out->fp) != 0 && !op) {
        op = "close";
        e = errno;
    }
    out->fp = NULL;
    if (out->replace) {
        if (!op && rename(out->tmp, out->target) != 0) {
            op = "rename";
            e = errno;
        }
        if (op)
            unlink(out->tmp);
        else if ((e = fsync_parent_dir(out->target)) != 0)
            op = "fsync of the directory";
    }
    if (op)
        err = slda_set_err(errstr, errstr_size, SLDA_ERR_IO, "%s \"%s\": %s: %s", out->what,
                           out->path, op, strerror(e ? e : EIO));
    release(out);
    return err;
}

void slda_outfile_abort(slda_outfile_t *out)
{
    if (out->fp && out->fp != stdout)
        fclose(out->fp);
    else if (out->fp)
        fflush(out->fp);
    if (out->replace && out->tmp)
        unlink(out->tmp);
    release(out);
}

int slda_outfile_seekable(const slda_outfile_t *out)
{
    return out->replace;
}
