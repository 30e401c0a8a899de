/*
 * replay_util.h - what the replay tests share: fixture paths, running a
 * session over bytes in chunks of a given size, and its JSON as a tree.
 */
#ifndef SL_REPLAY_UTIL_H
#define SL_REPLAY_UTIL_H

#include "check.h"
#include "json_lite.h"

#include "../src/replay/replay.h"

static inline void fixture_path(char *buf, size_t len, const char *name)
{
    const char *f = __FILE__;
    const char *slash = strrchr(f, '/');
    snprintf(buf, len, "%.*s/fixtures/replay/%s", slash ? (int)(slash - f) : 1, slash ? f : ".", name);
}

/* The whole file (malloc'd), or NULL. */
static inline uint8_t *read_whole(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 1 << 16, n = 0, got;
    uint8_t *buf = malloc(cap);
    while ((got = fread(buf + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap)
            buf = realloc(buf, cap *= 2);
    }
    fclose(f);
    *len = n;
    return buf;
}

static inline uint8_t *read_fixture(const char *name, size_t *len)
{
    char path[4096];
    fixture_path(path, sizeof path, name);
    return read_whole(path, len);
}

/*
 * Runs a session over data[0..len) fed in `chunk`-byte pieces (0: all at
 * once), then finishes it.  *rc gets the first error (SL_OK, SL_EINVAL).
 */
static inline sl_replay *replay_chunks(const void *data, size_t len, const sl_replay_config *cfg, size_t chunk, int *rc)
{
    sl_replay *r = NULL;
    *rc = sl_replay_create(cfg, &r);
    if (*rc != SL_OK)
        return NULL;
    const uint8_t *p = data;
    size_t off = 0;
    if (!chunk)
        chunk = len ? len : 1;
    while (*rc == SL_OK && off < len) {
        size_t n = len - off < chunk ? len - off : chunk;
        *rc = sl_replay_feed(r, p + off, n, NULL);
        off += n;
    }
    if (*rc == SL_OK)
        *rc = sl_replay_finish(r);
    return r;
}

static inline sl_replay *replay_text(const char *text, const sl_replay_config *cfg, int *rc)
{
    return replay_chunks(text, strlen(text), cfg, 0, rc);
}

/* The session's JSON as a tree (NULL if it does not parse: reported). */
static inline jl *replay_tree(sl_replay *r)
{
    sl_strbuf b = {0};
    sl_replay_json(r, &b, NULL);
    const char *err = NULL;
    size_t at = 0;
    jl *t = b.data ? jl_parse(b.data, b.len, &err, &at) : NULL;
    if (!t)
        fprintf(stderr, "  the replay JSON does not parse: %s at byte %zu\n", err ? err : "no output", at);
    sl_strbuf_free(&b);
    return t;
}

/* The cache named `name` in the JSON's caches[], or NULL. */
static inline const jl *json_cache(const jl *t, const char *name)
{
    const jl *caches = jl_get(t, "caches");
    for (size_t i = 0; caches && i < caches->n; i++) {
        const char *n = jl_str(caches->kids[i], "name");
        if (n && !strcmp(n, name))
            return caches->kids[i];
    }
    return NULL;
}

#endif /* SL_REPLAY_UTIL_H */
