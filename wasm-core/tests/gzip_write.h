/*
 * gzip_write.h - gzip members of stored blocks, for the tests and the
 * fuzzer to wrap bytes in gzip (the replay layer only decodes gzip).
 * flags: the header's FHCRC (2), FEXTRA (4), FNAME (8), FCOMMENT (16).
 */
#ifndef SL_GZIP_WRITE_H
#define SL_GZIP_WRITE_H

#include "../src/replay/replay_internal.h"

static inline void gz_header(sl_strbuf *o, uint8_t flags)
{
    uint8_t h[10] = {0x1f, 0x8b, 8, flags, 0, 0, 0, 0, 0, 3};
    sl_strbuf_append(o, h, 10);
    if (flags & 4) {
        uint8_t x[6] = {4, 0, 'a', 'b', 'c', 'd'};
        sl_strbuf_append(o, x, 6);
    }
    if (flags & 8)
        sl_strbuf_append(o, "name.txt", 9);
    if (flags & 16)
        sl_strbuf_append(o, "a comment", 10);
    if (flags & 2)
        sl_strbuf_append(o, "\x12\x34", 2);
}

/* CRC-32 and length of data[0..len). */
static inline void gz_trailer(sl_strbuf *o, const void *data, size_t len)
{
    static uint32_t t[8][256];
    if (!t[0][1])
        sli_crc32_table(t);
    uint32_t crc = sli_crc32(t, 0, data, len), n = (uint32_t)len;
    uint8_t tr[8] = {(uint8_t)crc, (uint8_t)(crc >> 8), (uint8_t)(crc >> 16), (uint8_t)(crc >> 24),
                     (uint8_t)n,   (uint8_t)(n >> 8),   (uint8_t)(n >> 16),   (uint8_t)(n >> 24)};
    sl_strbuf_append(o, tr, 8);
}

/* One member: data[0..len) as stored blocks of at most `block` (<= 65535) bytes. */
static inline void gz_stored(sl_strbuf *o, const void *data, size_t len, uint8_t flags, size_t block)
{
    const uint8_t *d = data;
    gz_header(o, flags);
    size_t off = 0;
    do {
        size_t n = len - off > block ? block : len - off;
        uint8_t h[5] = {off + n == len, (uint8_t)n, (uint8_t)(n >> 8), (uint8_t)~n, (uint8_t)(~n >> 8)};
        sl_strbuf_append(o, h, 5);
        sl_strbuf_append(o, d + off, n);
        off += n;
    } while (off < len);
    gz_trailer(o, data, len);
}

#endif /* SL_GZIP_WRITE_H */
