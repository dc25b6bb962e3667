/* err.c - the one table of error codes, names and descriptions. */
#include "core/slda_int.h"

#include <stdio.h>

static const struct {
    const char *name;
    const char *desc;
} err_table[SLDA_ERR__COUNT] = {
    [SLDA_OK] = {"SLDA_OK", "success"},
    [SLDA_ERR_INVALID] = {"SLDA_ERR_INVALID", "invalid argument or value"},
    [SLDA_ERR_UNKNOWN] = {"SLDA_ERR_UNKNOWN", "unknown key or name"},
    [SLDA_ERR_NOMEM] = {"SLDA_ERR_NOMEM", "out of memory"},
    [SLDA_ERR_IO] = {"SLDA_ERR_IO", "input/output error"},
    [SLDA_ERR_PARSE] = {"SLDA_ERR_PARSE", "malformed input"},
    [SLDA_ERR_UTF8] = {"SLDA_ERR_UTF8", "invalid UTF-8"},
    [SLDA_ERR_EMPTY] = {"SLDA_ERR_EMPTY", "empty document"},
    [SLDA_ERR_RANGE] = {"SLDA_ERR_RANGE", "value out of range"},
    [SLDA_ERR_TRUNCATED] = {"SLDA_ERR_TRUNCATED", "input truncated"},
    [SLDA_ERR_CORRUPT] = {"SLDA_ERR_CORRUPT", "corrupt data"},
    [SLDA_ERR_VERSION] = {"SLDA_ERR_VERSION", "unsupported format version"},
    [SLDA_ERR_TOO_LARGE] = {"SLDA_ERR_TOO_LARGE", "over the size limit"},
    [SLDA_ERR_KAFKA] = {"SLDA_ERR_KAFKA", "Kafka client error"},
    [SLDA_ERR_EOF] = {"SLDA_ERR_EOF", "end of input"},
    [SLDA_ERR_STOPPED] = {"SLDA_ERR_STOPPED", "stopped on request"},
};

const char *slda_err_name(slda_err_t err)
{
    if ((unsigned)err >= SLDA_ERR__COUNT)
        return "SLDA_ERR_?";
    return err_table[err].name;
}

const char *slda_err_desc(slda_err_t err)
{
    if ((unsigned)err >= SLDA_ERR__COUNT)
        return "unknown error code";
    return err_table[err].desc;
}

slda_err_t slda_set_err(char *errstr, size_t errstr_size, slda_err_t err, const char *fmt, ...)
{
    if (errstr && errstr_size) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(errstr, errstr_size, fmt, ap);
        va_end(ap);
    }
    return err;
}

const char *slda_version_str(void)
{
    return SLDA_VERSION_STR;
}
