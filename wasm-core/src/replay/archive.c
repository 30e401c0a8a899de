/*
 * archive.c - ustar members: the header `slablab capture` writes, and a
 * streaming reader for the replay pipeline.
 *
 * The reader is an iterator over the archive's bytes as they arrive.  It
 * buffers only a header (512 bytes); member data is handed out as pointers
 * into the caller's input, so a member of any size streams through.  The
 * caller says how much of each data run it took (a paused replay takes
 * less), which keeps the reader exact at any byte.
 *
 * Accepted: POSIX ustar ("ustar\0" "00") and GNU ("ustar  \0") headers,
 * regular files ('0' or NUL), directories, symbolic links; GNU long names
 * ('L') and pax headers ('x', 'g') are skipped with their data (the
 * .slabcap writer never needs them).  Refused: a header whose checksum
 * does not match, and sizes that are not octal numbers.  Two zero blocks
 * end the archive.
 */
#include "replay_internal.h"

#include <stdio.h>
#include <string.h>

static void put_octal(uint8_t *field, size_t width, uint64_t v)
{
    /* width - 1 digits and a NUL, as tar(1) writes them. */
    for (size_t i = width - 1; i-- > 0; v >>= 3)
        field[i] = (uint8_t)('0' + (v & 7));
    field[width - 1] = 0;
}

int sl_ustar_header(uint8_t hdr[SL_USTAR_BLOCK], const char *name, char type, uint64_t size, const char *link,
                    uint64_t mtime)
{
    memset(hdr, 0, SL_USTAR_BLOCK);
    size_t len = strlen(name);
    const char *base = name;
    if (len > 100) {
        /* Split at a '/' so the prefix (<= 155) and the name (<= 100) both fit. */
        const char *split = NULL;
        for (const char *s = name; *s; s++)
            if (*s == '/' && (size_t)(s - name) <= 155 && len - (size_t)(s - name) - 1 <= 100)
                split = s;
        if (!split)
            return SL_EINVAL;
        memcpy(hdr + 345, name, (size_t)(split - name));
        base = split + 1;
    }
    memcpy(hdr, base, strlen(base));
    put_octal(hdr + 100, 8, type == '2' ? 0777 : 0644);
    put_octal(hdr + 108, 8, 0);
    put_octal(hdr + 116, 8, 0);
    if (size >= (uint64_t)1 << 33)
        return SL_EINVAL; /* 11 octal digits */
    put_octal(hdr + 124, 12, size);
    put_octal(hdr + 136, 12, mtime);
    hdr[156] = (uint8_t)type;
    if (link) {
        if (strlen(link) > 100)
            return SL_EINVAL;
        memcpy(hdr + 157, link, strlen(link));
    }
    memcpy(hdr + 257, "ustar", 6);
    memcpy(hdr + 263, "00", 2);
    memcpy(hdr + 265, "root", 4);
    memcpy(hdr + 297, "root", 4);
    memset(hdr + 148, ' ', 8);
    unsigned sum = 0;
    for (unsigned i = 0; i < SL_USTAR_BLOCK; i++)
        sum += hdr[i];
    put_octal(hdr + 148, 7, sum);
    hdr[155] = ' ';
    return SL_OK;
}

void sli_tar_init(sli_tar *t) { memset(t, 0, sizeof *t); }

static bool parse_octal(const uint8_t *f, size_t width, uint64_t *out)
{
    uint64_t v = 0;
    size_t i = 0;
    while (i < width && f[i] == ' ')
        i++;
    bool digits = false;
    for (; i < width && f[i] >= '0' && f[i] <= '7'; i++) {
        v = (v << 3) | (uint64_t)(f[i] - '0');
        digits = true;
    }
    for (; i < width; i++)
        if (f[i] != ' ' && f[i] != 0)
            return false;
    *out = v;
    return digits;
}

/* A complete header is in t->hdr: check it and set up the member. */
static int take_header(sli_tar *t)
{
    bool zero = true;
    for (unsigned i = 0; i < SL_USTAR_BLOCK && zero; i++)
        zero = t->hdr[i] == 0;
    if (zero) {
        if (++t->zero_blocks == 2)
            t->state = SLI_TAR_END;
        return SLI_TAR_MORE;
    }
    t->zero_blocks = 0;
    uint64_t sum, size;
    if (!parse_octal(t->hdr + 148, 8, &sum)) {
        t->error = "a ustar header without a checksum (not a tar archive, or a corrupt one)";
        return SLI_TAR_ERROR;
    }
    unsigned mine = 0;
    for (unsigned i = 0; i < SL_USTAR_BLOCK; i++)
        mine += i >= 148 && i < 156 ? ' ' : t->hdr[i];
    if (mine != sum) {
        t->error = "a ustar header whose checksum does not match (corrupt archive)";
        return SLI_TAR_ERROR;
    }
    if (!parse_octal(t->hdr + 124, 12, &size)) {
        t->error = "a ustar header with a bad size field";
        return SLI_TAR_ERROR;
    }
    char name[101], prefix[156];
    memcpy(name, t->hdr, 100);
    name[100] = 0;
    memcpy(prefix, t->hdr + 345, 155);
    prefix[155] = 0;
    if (prefix[0] && !memcmp(t->hdr + 257, "ustar\0", 6))
        snprintf(t->name, sizeof t->name, "%s/%s", prefix, name);
    else
        snprintf(t->name, sizeof t->name, "%s", name);
    memcpy(t->link, t->hdr + 157, 100);
    t->link[100] = 0;
    t->type = t->hdr[156] ? (char)t->hdr[156] : '0';
    t->size = t->type == '2' || t->type == '5' ? 0 : size;
    t->left = t->size;
    t->pad = sl_ustar_padding(t->size);
    t->state = SLI_TAR_DATA;
    t->members++;
    return SLI_TAR_MEMBER;
}

int sli_tar_next(sli_tar *t, const uint8_t *p, size_t n, size_t *used, const uint8_t **data, size_t *len)
{
    *used = 0;
    *len = 0;
    for (;;) {
        switch (t->state) {
        case SLI_TAR_HEADER: {
            size_t k = SL_USTAR_BLOCK - t->hdr_have;
            if (k > n - *used)
                k = n - *used;
            memcpy(t->hdr + t->hdr_have, p + *used, k);
            t->hdr_have += k;
            *used += k;
            if (t->hdr_have < SL_USTAR_BLOCK)
                return SLI_TAR_MORE;
            t->hdr_have = 0;
            int rc = take_header(t);
            if (rc != SLI_TAR_MORE)
                return rc;
            if (t->state == SLI_TAR_END)
                return SLI_TAR_END_OF_ARCHIVE;
            continue;
        }
        case SLI_TAR_DATA:
            if (t->left == 0) {
                t->state = SLI_TAR_PAD;
                return SLI_TAR_MEMBER_END;
            }
            if (*used == n)
                return SLI_TAR_MORE;
            *data = p + *used;
            *len = n - *used < t->left ? n - *used : (size_t)t->left;
            return SLI_TAR_DATA_RUN; /* the caller reports what it took with sli_tar_took */
        case SLI_TAR_PAD: {
            size_t k = t->pad < n - *used ? t->pad : n - *used;
            t->pad -= k;
            *used += k;
            if (t->pad)
                return SLI_TAR_MORE;
            t->state = SLI_TAR_HEADER;
            continue;
        }
        default: /* SLI_TAR_END: whatever follows (tar pads to 10 KiB records) is ignored */
            *used = n;
            return SLI_TAR_END_OF_ARCHIVE;
        }
    }
}

void sli_tar_took(sli_tar *t, size_t n) { t->left -= n; }
