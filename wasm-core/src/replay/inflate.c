/*
 * inflate.c - a streaming gzip decoder (RFC 1952 members around RFC 1951
 * DEFLATE data), written for the replay pipeline so that the native CLI and
 * the WebAssembly build decode the same way and the fuzzer covers it.
 *
 * Why not zlib natively and the browser's DecompressionStream: the browser
 * stream is asynchronous and would put decompression outside the worker's
 * synchronous feed loop (and its cancel and pause), it reports a truncated
 * stream only as a generic TypeError, and two decoders would accept
 * different inputs.  One decoder in C gives both builds the same messages
 * and limits.  Its cost is measured in docs/replay.md.
 *
 * Structures.  `bitbuf` holds up to 64 input bits, least significant first,
 * as DEFLATE packs them; bytes move from the caller's buffer into it only
 * (so everything the caller passed in is consumed except when the output
 * window is full).  Output goes into `win`: [0, wr) is history for
 * back-references (at most 32 KiB are needed), [rd, wr) is output the
 * reader has not taken.  When the write position nears the end, the window
 * slides down, keeping the last 32 KiB and everything unread; if unread
 * output fills it, the decoder returns and resumes on the next call.
 *
 * Huffman tables: a root table indexed by the next 10 (lengths/literals)
 * or 8 (distances) bits, whose entries give the symbol and its code length,
 * or point to a subtable for the longer codes.  A symbol is decoded only
 * when all its bits are in bitbuf; a length/distance pair (at most 48
 * bits) is decoded whole or not at all, so input may end anywhere and the
 * decoder resumes exactly there.  Invariants: bitcnt <= 64; rd <= wr <=
 * SLI_GZ_WINDOW; every table entry's bit count is at most the bits its
 * index covers.
 */
#include "replay_internal.h"

#include <stdlib.h>
#include <string.h>

enum {
    ST_HEAD,         /* gzip magic, method, flags, mtime, xfl, os: 10 bytes */
    ST_HEAD_XLEN,    /* FEXTRA: 2-byte length */
    ST_HEAD_SKIP,    /* skipping hdr_need bytes (FEXTRA data, FHCRC) */
    ST_HEAD_NAME,    /* FNAME: up to a NUL */
    ST_HEAD_COMMENT, /* FCOMMENT: up to a NUL */
    ST_HEAD_HCRC,
    ST_BLOCK,      /* BFINAL, BTYPE */
    ST_STORED_LEN, /* LEN, NLEN after byte alignment */
    ST_STORED,
    ST_DYN_HEADER,    /* HLIT, HDIST, HCLEN */
    ST_DYN_CLENS,     /* code length code lengths */
    ST_DYN_LENS,      /* literal/length and distance code lengths */
    ST_CODES,         /* symbols of a compressed block */
    ST_TRAILER,       /* CRC-32 of the member's data */
    ST_TRAILER_ISIZE, /* its length mod 2^32 */
    ST_MEMBER_END,    /* between members: another header or the end (zero padding allowed) */
};

enum { GZ_FHCRC = 2, GZ_FEXTRA = 4, GZ_FNAME = 8, GZ_FCOMMENT = 16 };

/* Table entries: symbol or subtable offset << 16 | flags | bits. */
#define E_LINK 0x8000u
#define E_INVALID 0x4000u
#define E_BITS(e) ((e)&31u)
#define E_SUBBITS(e) (((e) >> 8) & 15u)
#define LENS_ROOT 10
#define DISTS_ROOT 8

static const uint16_t len_base[29] = {3,  4,  5,  6,  7,  8,  9,  10, 11,  13,  15,  17,  19,  23, 27,
                                      31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258};
static const uint8_t len_extra[29] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2,
                                      2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0};
static const uint16_t dist_base[30] = {1,    2,    3,    4,    5,    7,    9,    13,    17,    25,
                                       33,   49,   65,   97,   129,  193,  257,  385,   513,   769,
                                       1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577};
static const uint8_t dist_extra[30] = {0, 0, 0, 0, 1, 1, 2, 2,  3,  3,  4,  4,  5,  5,  6,
                                       6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13};
static const uint8_t clen_order[19] = {16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15};

void sli_crc32_table(uint32_t t[8][256])
{
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++)
            c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
        t[0][i] = c;
    }
    for (uint32_t i = 0; i < 256; i++)
        for (int k = 1; k < 8; k++)
            t[k][i] = (t[k - 1][i] >> 8) ^ t[0][t[k - 1][i] & 0xff];
}

/* Slicing by 8: eight table lookups per 8 bytes. */
uint32_t sli_crc32(const uint32_t t[8][256], uint32_t crc, const uint8_t *p, size_t n)
{
    crc = ~crc;
    while (n >= 8) {
        uint32_t lo = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
        uint32_t hi = (uint32_t)p[4] | (uint32_t)p[5] << 8 | (uint32_t)p[6] << 16 | (uint32_t)p[7] << 24;
        lo ^= crc;
        crc = t[7][lo & 0xff] ^ t[6][(lo >> 8) & 0xff] ^ t[5][(lo >> 16) & 0xff] ^ t[4][lo >> 24] ^ t[3][hi & 0xff] ^
              t[2][(hi >> 8) & 0xff] ^ t[1][(hi >> 16) & 0xff] ^ t[0][hi >> 24];
        p += 8;
        n -= 8;
    }
    while (n--)
        crc = t[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
    return ~crc;
}

int sli_gunzip_init(sli_gunzip *z)
{
    memset(z, 0, offsetof(sli_gunzip, lens_table));
    z->win = malloc(SLI_GZ_WINDOW);
    if (!z->win)
        return SL_ENOMEM;
    sli_crc32_table(z->crc_table);
    z->state = ST_HEAD;
    return SL_OK;
}

void sli_gunzip_fini(sli_gunzip *z)
{
    free(z->win);
    z->win = NULL;
}

bool sli_gunzip_at_member_end(const sli_gunzip *z) { return z->state == ST_MEMBER_END && z->members > 0; }

/* ---- Huffman tables ---------------------------------------------------- */

static unsigned reverse_bits(unsigned code, unsigned len)
{
    unsigned r = 0;
    for (unsigned i = 0; i < len; i++, code >>= 1)
        r = (r << 1) | (code & 1);
    return r;
}

/*
 * Builds a decoding table for n code lengths.  An incomplete code is
 * refused except a single code of length 1 (as zlib allows, for distance
 * codes); no code at all is allowed (for distances: a block of literals).
 */
static const char *build_table(uint32_t *table, unsigned tsize, unsigned root, const uint8_t *lens, unsigned n)
{
    unsigned count[16] = {0}, offs[16], next_code[16];
    uint16_t sorted[320];
    for (unsigned s = 0; s < n; s++)
        count[lens[s]]++;
    count[0] = 0;
    unsigned max = 0;
    int left = 1;
    for (unsigned len = 1; len <= 15; len++) {
        left <<= 1;
        left -= (int)count[len];
        if (left < 0)
            return "an over-subscribed Huffman code";
        if (count[len])
            max = len;
    }
    if (left > 0 && max > 1)
        return "an incomplete Huffman code";
    for (unsigned i = 0; i < (1u << root); i++)
        table[i] = E_INVALID | root;
    if (max == 0)
        return NULL;
    offs[1] = 0;
    for (unsigned len = 1; len < 15; len++)
        offs[len + 1] = offs[len] + count[len];
    for (unsigned s = 0; s < n; s++)
        if (lens[s])
            sorted[offs[lens[s]]++] = (uint16_t)s;
    unsigned code = 0;
    for (unsigned len = 1; len <= 15; len++) {
        code = (code + count[len - 1]) << 1;
        next_code[len] = code;
    }
    /* Codes longer than the root: the widest suffix under each root index. */
    uint8_t sub_bits[1 << LENS_ROOT] = {0};
    unsigned total = 0;
    for (unsigned len = 1; len <= 15; len++)
        total += count[len];
    unsigned nc[16];
    memcpy(nc, next_code, sizeof nc);
    for (unsigned i = 0; i < total; i++) {
        unsigned s = sorted[i], len = lens[s];
        unsigned rev = reverse_bits(nc[len]++, len);
        if (len > root) {
            unsigned ri = rev & ((1u << root) - 1);
            if (len - root > sub_bits[ri])
                sub_bits[ri] = (uint8_t)(len - root);
        }
    }
    unsigned next = 1u << root;
    for (unsigned ri = 0; ri < (1u << root); ri++) {
        if (!sub_bits[ri])
            continue;
        unsigned size = 1u << sub_bits[ri];
        if (next + size > tsize)
            return "a Huffman code too large for its table";
        table[ri] = (next << 16) | E_LINK | (unsigned)sub_bits[ri] << 8 | root;
        for (unsigned i = 0; i < size; i++)
            table[next + i] = E_INVALID | sub_bits[ri];
        next += size;
    }
    memcpy(nc, next_code, sizeof nc);
    for (unsigned i = 0; i < total; i++) {
        unsigned s = sorted[i], len = lens[s];
        unsigned rev = reverse_bits(nc[len]++, len);
        if (len <= root) {
            for (unsigned j = rev; j < (1u << root); j += 1u << len)
                table[j] = (uint32_t)s << 16 | len;
        } else {
            uint32_t link = table[rev & ((1u << root) - 1)];
            unsigned base = link >> 16, sb = E_SUBBITS(link), l2 = len - root;
            for (unsigned j = rev >> root; j < (1u << sb); j += 1u << l2)
                table[base + j] = (uint32_t)s << 16 | l2;
        }
    }
    return NULL;
}

static void fixed_tables(sli_gunzip *z)
{
    uint8_t l[320];
    unsigned i = 0;
    for (; i < 144; i++)
        l[i] = 8;
    for (; i < 256; i++)
        l[i] = 9;
    for (; i < 280; i++)
        l[i] = 7;
    for (; i < 288; i++)
        l[i] = 8;
    build_table(z->lens_table, SLI_GZ_LENS_TABLE, LENS_ROOT, l, 288);
    /* All 32 distance codes, so the code is complete; 30 and 31 are refused when decoded. */
    for (i = 0; i < 32; i++)
        l[i] = 5;
    build_table(z->dists_table, SLI_GZ_DISTS_TABLE, DISTS_ROOT, l, 32);
}

/*
 * The symbol whose code starts the bits in bb (cnt of them valid): returns
 * it with *used set, -1 when more bits are needed, -2 for an invalid code.
 */
SL_INLINE int decode_sym(const uint32_t *table, unsigned root, uint64_t bb, unsigned cnt, unsigned *used)
{
    uint32_t e = table[bb & ((1u << root) - 1)];
    unsigned n = E_BITS(e);
    if (e & E_LINK) {
        e = table[(e >> 16) + ((bb >> root) & ((1u << E_SUBBITS(e)) - 1))];
        n = root + E_BITS(e);
    }
    if (n > cnt)
        return -1;
    if (e & E_INVALID)
        return -2;
    *used = n;
    return (int)(e >> 16);
}

/* ---- the decoder ------------------------------------------------------- */

typedef struct input {
    const uint8_t *p, *end;
} input;

/* Moves input bytes into bitbuf until it holds at least 56 bits or the input is exhausted. */
SL_INLINE void refill(sli_gunzip *z, input *in)
{
    if (in->end - in->p >= 8) {
        uint64_t w;
        memcpy(&w, in->p, 8); /* little endian on both targets */
        z->bitbuf |= w << z->bitcnt;
        in->p += (63 - z->bitcnt) >> 3;
        z->bitcnt |= 56;
        return;
    }
    while (z->bitcnt <= 56 && in->p < in->end) {
        z->bitbuf |= (uint64_t)*in->p++ << z->bitcnt;
        z->bitcnt += 8;
    }
}

/* At most 56 bits: a refill guarantees that many while input lasts. */
SL_INLINE bool need(sli_gunzip *z, input *in, unsigned n)
{
    if (z->bitcnt < n)
        refill(z, in);
    return z->bitcnt >= n;
}

SL_INLINE uint32_t take(sli_gunzip *z, unsigned n)
{
    uint32_t v = (uint32_t)(z->bitbuf & ((1ull << n) - 1));
    z->bitbuf >>= n;
    z->bitcnt -= n;
    return v;
}

static void drop_to_byte(sli_gunzip *z) { take(z, z->bitcnt & 7); }

static int fail(sli_gunzip *z, const char *why)
{
    z->error = why;
    return SLI_GZ_ERROR;
}

/* Makes room for at least `room` bytes after wr; false when unread output fills the window. */
static bool make_room(sli_gunzip *z, size_t room)
{
    if (z->wr + room <= SLI_GZ_WINDOW)
        return true;
    size_t keep_from = z->wr > SLI_GZ_HISTORY ? z->wr - SLI_GZ_HISTORY : 0;
    if (z->rd < keep_from)
        keep_from = z->rd;
    if (keep_from == 0)
        return false;
    memmove(z->win, z->win + keep_from, z->wr - keep_from);
    z->wr -= keep_from;
    z->rd -= keep_from;
    return z->wr + room <= SLI_GZ_WINDOW;
}

/* CRC and length of output written since `from`. */
static void account(sli_gunzip *z, size_t from)
{
    size_t n = z->wr - from;
    z->crc = sli_crc32(z->crc_table, z->crc, z->win + from, n);
    z->member_len += (uint32_t)n;
    z->total_out += n;
}

/* Room a symbol may need: a match of 258 plus the 8-byte overrun of the word copy. */
#define SYMBOL_ROOM (258 + 8)

/*
 * Decodes symbols of a compressed block until the block ends, the input
 * runs out, or the window is full.  Returns 1 at the end of the block, 0
 * to wait for input or room, SLI_GZ_ERROR on corrupt data.
 */
static int decode_codes(sli_gunzip *z, input *in)
{
    size_t start = z->wr;
    int rc = 0;
    for (;;) {
        if (z->wr + SYMBOL_ROOM > SLI_GZ_WINDOW) {
            account(z, start);
            if (!make_room(z, SYMBOL_ROOM))
                return 0;
            start = z->wr;
        }
        if (z->bitcnt < 48)
            refill(z, in);
        uint64_t bb = z->bitbuf;
        unsigned cnt = z->bitcnt, n;
        int sym = decode_sym(z->lens_table, LENS_ROOT, bb, cnt, &n);
        if (sym < 0) {
            rc = sym == -1 ? 0 : fail(z, "an invalid literal/length code");
            break;
        }
        if (sym < 256) {
            z->bitbuf = bb >> n;
            z->bitcnt = cnt - n;
            z->win[z->wr++] = (uint8_t)sym;
            continue;
        }
        if (sym == 256) {
            z->bitbuf = bb >> n;
            z->bitcnt = cnt - n;
            rc = 1;
            break;
        }
        if (sym > 285) {
            rc = fail(z, "an invalid length symbol");
            break;
        }
        /* Length, its extra bits, the distance code and its extra bits: all or nothing. */
        unsigned li = (unsigned)sym - 257, used = n;
        unsigned le = len_extra[li];
        if (used + le > cnt) {
            rc = 0;
            break;
        }
        uint32_t length = len_base[li] + (uint32_t)((bb >> used) & ((1u << le) - 1));
        used += le;
        unsigned dn;
        int ds = decode_sym(z->dists_table, DISTS_ROOT, bb >> used, cnt - used, &dn);
        if (ds < 0) {
            rc = ds == -1 ? 0 : fail(z, "an invalid distance code");
            break;
        }
        if (ds > 29) {
            rc = fail(z, "an invalid distance symbol");
            break;
        }
        used += dn;
        unsigned de = dist_extra[ds];
        if (used + de > cnt) {
            rc = 0;
            break;
        }
        uint32_t dist = dist_base[ds] + (uint32_t)((bb >> used) & ((1u << de) - 1));
        used += de;
        if (dist > z->member_len + (z->wr - start) || dist > z->wr) {
            rc = fail(z, "a distance too far back");
            break;
        }
        z->bitbuf = bb >> used;
        z->bitcnt = cnt - used;
        uint8_t *dst = z->win + z->wr;
        const uint8_t *src = dst - dist;
        if (dist >= 8) {
            for (uint32_t i = 0; i < length; i += 8)
                memcpy(dst + i, src + i, 8);
        } else {
            for (uint32_t i = 0; i < length; i++)
                dst[i] = src[i];
        }
        z->wr += length;
    }
    account(z, start);
    return rc;
}

/* The dynamic block header's code lengths, one code length symbol at a time. */
static int read_lens(sli_gunzip *z, input *in)
{
    unsigned total = z->hlit + z->hdist;
    while (z->ncodes < total) {
        if (z->bitcnt < 14)
            refill(z, in);
        unsigned n;
        int sym = decode_sym(z->lens_table, LENS_ROOT, z->bitbuf, z->bitcnt, &n);
        if (sym == -2)
            return fail(z, "an invalid code length code");
        if (sym < 0)
            return 0;
        if (sym < 16) {
            take(z, n);
            z->lens[z->ncodes++] = (uint8_t)sym;
            continue;
        }
        unsigned extra = sym == 16 ? 2 : sym == 17 ? 3 : 7;
        if (z->bitcnt < n + extra)
            return 0;
        take(z, n);
        unsigned rep = take(z, extra) + (sym == 16 ? 3 : sym == 17 ? 3 : 11);
        uint8_t val = 0;
        if (sym == 16) {
            if (z->ncodes == 0)
                return fail(z, "a repeated code length with nothing to repeat");
            val = z->lens[z->ncodes - 1];
        }
        if (z->ncodes + rep > total)
            return fail(z, "code lengths that run past the header's count");
        while (rep--)
            z->lens[z->ncodes++] = val;
    }
    if (z->lens[256] == 0)
        return fail(z, "a block without an end-of-block code");
    const char *e = build_table(z->lens_table, SLI_GZ_LENS_TABLE, LENS_ROOT, z->lens, z->hlit);
    if (!e)
        e = build_table(z->dists_table, SLI_GZ_DISTS_TABLE, DISTS_ROOT, z->lens + z->hlit, z->hdist);
    if (e)
        return fail(z, e);
    return 1;
}

int sli_gunzip_run(sli_gunzip *z, const uint8_t *data, size_t len, size_t *used)
{
    input in = {data, data + len};
    int rc = SLI_GZ_NEED_INPUT;
    if (z->error) {
        *used = 0;
        return SLI_GZ_ERROR;
    }
    for (;;) {
        switch (z->state) {
        case ST_MEMBER_END:
            /* A new member, or zero padding (tar and dd leave it) to the end. */
            if (!need(z, &in, 8))
                goto out;
            if ((z->bitbuf & 0xff) == 0) {
                take(z, 8);
                continue;
            }
            z->state = ST_HEAD;
            /* fall through */
        case ST_HEAD: {
            if (!need(z, &in, 32))
                goto out;
            uint32_t id = take(z, 16), cm = take(z, 8);
            z->flags = (uint8_t)take(z, 8);
            if (id != 0x8b1f)
                return fail(z, z->members ? "data after the end of the gzip stream that is not another gzip member"
                                          : "not gzip data");
            if (cm != 8)
                return fail(z, "a gzip compression method other than deflate");
            if (z->flags & 0xe0)
                return fail(z, "reserved gzip header flags set");
            z->hdr_need = 6; /* mtime, xfl, os */
            z->state = ST_HEAD_SKIP;
            z->crc = 0;
            z->member_len = 0;
            z->last_block = false;
            z->members++;
            continue;
        }
        case ST_HEAD_SKIP:
            while (z->hdr_need) {
                if (!need(z, &in, 8))
                    goto out;
                take(z, 8);
                z->hdr_need--;
            }
            if (z->flags & GZ_FEXTRA) {
                z->flags &= (uint8_t)~GZ_FEXTRA;
                z->state = ST_HEAD_XLEN;
            } else if (z->flags & GZ_FNAME) {
                z->state = ST_HEAD_NAME;
            } else if (z->flags & GZ_FCOMMENT) {
                z->state = ST_HEAD_COMMENT;
            } else if (z->flags & GZ_FHCRC) {
                z->flags &= (uint8_t)~GZ_FHCRC;
                z->hdr_need = 2;
            } else {
                z->state = ST_BLOCK;
            }
            continue;
        case ST_HEAD_XLEN:
            if (!need(z, &in, 16))
                goto out;
            z->hdr_need = take(z, 16);
            z->state = ST_HEAD_SKIP;
            continue;
        case ST_HEAD_NAME:
        case ST_HEAD_COMMENT:
            for (;;) {
                if (!need(z, &in, 8))
                    goto out;
                if (take(z, 8) == 0)
                    break;
            }
            z->flags &= (uint8_t) ~(z->state == ST_HEAD_NAME ? GZ_FNAME : GZ_FCOMMENT);
            z->state = ST_HEAD_SKIP;
            continue;
        case ST_BLOCK:
            if (z->last_block) {
                drop_to_byte(z);
                z->state = ST_TRAILER;
                continue;
            }
            if (!need(z, &in, 3))
                goto out;
            z->last_block = take(z, 1);
            switch (take(z, 2)) {
            case 0:
                drop_to_byte(z);
                z->state = ST_STORED_LEN;
                break;
            case 1:
                fixed_tables(z);
                z->state = ST_CODES;
                break;
            case 2:
                z->state = ST_DYN_HEADER;
                break;
            default:
                return fail(z, "a deflate block of the reserved type 3");
            }
            continue;
        case ST_STORED_LEN: {
            if (!need(z, &in, 32))
                goto out;
            uint32_t l = take(z, 16), nl = take(z, 16);
            if ((l ^ 0xffff) != nl)
                return fail(z, "a stored block whose length check fails");
            z->stored_left = l;
            z->state = ST_STORED;
            continue;
        }
        case ST_STORED:
            while (z->stored_left) {
                if (!make_room(z, 1)) {
                    rc = SLI_GZ_NEED_INPUT;
                    goto out;
                }
                size_t start = z->wr;
                /* Bytes already in bitbuf first, then straight from the input. */
                while (z->stored_left && z->bitcnt >= 8 && z->wr < SLI_GZ_WINDOW) {
                    z->win[z->wr++] = (uint8_t)take(z, 8);
                    z->stored_left--;
                }
                size_t n = z->stored_left;
                if (n > (size_t)(in.end - in.p))
                    n = (size_t)(in.end - in.p);
                if (n > SLI_GZ_WINDOW - z->wr)
                    n = SLI_GZ_WINDOW - z->wr;
                if (z->bitcnt == 0) {
                    /* Bits above bitcnt may hold a look-ahead of these bytes: drop it. */
                    z->bitbuf = 0;
                    memcpy(z->win + z->wr, in.p, n);
                    in.p += n;
                    z->wr += n;
                    z->stored_left -= (uint32_t)n;
                }
                account(z, start);
                if (z->stored_left && in.p == in.end && z->bitcnt < 8)
                    goto out;
            }
            z->state = ST_BLOCK;
            continue;
        case ST_DYN_HEADER:
            if (!need(z, &in, 14))
                goto out;
            z->hlit = take(z, 5) + 257;
            z->hdist = take(z, 5) + 1;
            z->hclen = take(z, 4) + 4;
            if (z->hlit > 286 || z->hdist > 30)
                return fail(z, "a dynamic block header with too many codes");
            memset(z->lens, 0, sizeof z->lens);
            z->ncodes = 0;
            z->state = ST_DYN_CLENS;
            continue;
        case ST_DYN_CLENS:
            while (z->ncodes < z->hclen) {
                if (!need(z, &in, 3))
                    goto out;
                z->lens[clen_order[z->ncodes++]] = (uint8_t)take(z, 3);
            }
            {
                /* The code length code decodes through lens_table until the real tables are built. */
                const char *e = build_table(z->lens_table, SLI_GZ_LENS_TABLE, LENS_ROOT, z->lens, 19);
                if (e)
                    return fail(z, e);
            }
            memset(z->lens, 0, sizeof z->lens);
            z->ncodes = 0;
            z->state = ST_DYN_LENS;
            continue;
        case ST_DYN_LENS: {
            int r = read_lens(z, &in);
            if (r < 0)
                return r;
            if (r == 0)
                goto out;
            z->state = ST_CODES;
            continue;
        }
        case ST_CODES: {
            int r = decode_codes(z, &in);
            if (r < 0)
                return r;
            if (r == 0)
                goto out;
            z->state = ST_BLOCK;
            continue;
        }
        case ST_TRAILER:
            if (!need(z, &in, 32))
                goto out;
            if (take(z, 32) != z->crc)
                return fail(z, "a gzip member whose CRC-32 does not match its data (corrupt file)");
            z->state = ST_TRAILER_ISIZE;
            continue;
        case ST_TRAILER_ISIZE:
            if (!need(z, &in, 32))
                goto out;
            if (take(z, 32) != z->member_len)
                return fail(z, "a gzip member whose length does not match its data (corrupt file)");
            z->state = ST_MEMBER_END;
            continue;
        default:
            return fail(z, "an internal decoder state");
        }
    }
out:
    *used = (size_t)(in.p - data);
    return rc;
}
