/* hash.c - XXH3-64, the only hash that persists (vocabulary keys, checksums).
 *
 * The only file that includes xxhash.h, inlined (XXH_INLINE_ALL) so no symbol
 * clashes with the xxHash copy inside librdkafka's static archive. XXH3's output
 * is promised never to change, so stored hashes stay valid across versions.
 */
#define XXH_INLINE_ALL
#include <xxhash.h>

#include "core/slda_int.h"

uint64_t slda_hash64(const void *data, size_t len, uint64_t seed)
{
    return (uint64_t)XXH3_64bits_withSeed(data, len, (XXH64_hash_t)seed);
}
