/*
 * test_live_hub.c - `slablab serve`'s hub (cli/live_hub.c) without a kernel:
 * records in, frames out.  A page that reads gets HELLO, the names before
 * the events that use them and every event; a page that does not read has
 * its event frames dropped and counted once its queue is full, while names
 * and snapshots still queue, and it is cut off past the slack; a page that
 * joins late gets every name first; the site table (cli/live_site.c) finds
 * files only by their exact path, read from a directory or from a release
 * binary's built-in pack, and a corrupt pack is refused, never half read.
 */
#include "check.h"

#if !SL_WASM
#include "../cli/live_hub.c"
#include "../cli/live_ksyms.c"
#include "../cli/live_site.c"

#include <sys/stat.h>

static uint32_t rd32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void feed_cache(sl_live_hub *hub, uint64_t addr, const char *name)
{
    struct live_cache_rec r;
    memset(&r, 0, sizeof r);
    r.kind = LIVE_CACHE;
    r.cache = addr;
    r.size = 256;
    snprintf(r.name, sizeof r.name, "%s", name);
    sl_live_hub_record(hub, &r, sizeof r);
}

static void feed_event(sl_live_hub *hub, uint64_t cache, uint64_t obj, uint64_t ts)
{
    struct live_event e;
    memset(&e, 0, sizeof e);
    e.kind = LIVE_ALLOC;
    e.cpu = 1;
    e.ts = ts;
    e.cache = cache;
    e.obj = obj;
    sl_live_hub_record(hub, &e, sizeof e);
}

/* Reads everything queued for c; counts frames by type and events; returns the bytes. */
static size_t drain(sl_live_hub *hub, sl_live_client *c, unsigned counts[16], unsigned *events, bool *names_first)
{
    static unsigned char buf[1 << 22];
    size_t total = 0;
    long n;
    while ((n = sl_live_client_read(hub, c, buf + total, sizeof buf - total, 0)) > 0)
        total += (size_t)n;
    bool named = false;
    for (size_t off = 0; off + LIVE_WIRE_FRAME_HDR <= total;) {
        uint32_t len = rd32(buf + off);
        unsigned type = buf[off + 4];
        if (type < 16)
            counts[type]++;
        if (type == LIVE_F_CACHE)
            named = true;
        if (type == LIVE_F_EVENTS) {
            *events += rd32(buf + off + LIVE_WIRE_FRAME_HDR);
            if (!named)
                *names_first = false;
        }
        off += LIVE_WIRE_FRAME_HDR + len;
    }
    return total;
}

static void test_hub_reader_gets_names_then_events(void)
{
    static sl_live_hub hub;
    SL_CHECK_EQ(sl_live_hub_init(&hub, 1 << 20, "\"release\":\"test\""), 0);
    sl_live_client *c = sl_live_hub_join(&hub);
    SL_CHECK(c != NULL);
    feed_cache(&hub, 0xffff888100001000ull, "filp");
    for (unsigned i = 0; i < 10000; i++)
        feed_event(&hub, 0xffff888100001000ull, 0xffff888200000000ull + i * 256, 1000000000ull + i);
    sl_live_hub_flush(&hub, 0);
    unsigned counts[16] = {0}, events = 0;
    bool names_first = true;
    drain(&hub, c, counts, &events, &names_first);
    SL_CHECK_EQ(counts[LIVE_F_HELLO], 1u);
    SL_CHECK_EQ(counts[LIVE_F_CACHE], 1u);
    SL_CHECK_EQ(events, 10000u);
    SL_CHECK(counts[LIVE_F_EVENTS] >= 10000u / LIVE_HUB_BATCH);
    SL_CHECK(names_first);
    SL_CHECK_EQ(c->dropped_events, 0u);
    /* A page joining later gets the name before anything else. */
    sl_live_client *late = sl_live_hub_join(&hub);
    unsigned late_counts[16] = {0}, late_events = 0;
    drain(&hub, late, late_counts, &late_events, &names_first);
    SL_CHECK_EQ(late_counts[LIVE_F_HELLO], 1u);
    SL_CHECK_EQ(late_counts[LIVE_F_CACHE], 1u);
    SL_CHECK_EQ(late_events, 0u);
    sl_live_hub_leave(&hub, late);
    sl_live_hub_leave(&hub, c);
    sl_live_hub_destroy(&hub);
}

static void test_hub_lagging_page_drops_and_counts(void)
{
    static sl_live_hub hub;
    SL_CHECK_EQ(sl_live_hub_init(&hub, 64 * 1024, "\"release\":\"test\""), 0);
    sl_live_client *c = sl_live_hub_join(&hub);
    feed_cache(&hub, 0xffff888100001000ull, "dentry");
    unsigned fed = 0;
    for (unsigned round = 0; round < 20; round++) {
        for (unsigned i = 0; i < 1000; i++, fed++)
            feed_event(&hub, 0xffff888100001000ull, 0xffff888300000000ull + fed * 64, 5000000000ull + fed);
        sl_live_hub_flush(&hub, 7);
    }
    SL_CHECK(c->bytes <= hub.queue_limit + LIVE_HUB_SLACK);
    SL_CHECK(c->dropped_events > 0);
    SL_CHECK_EQ(c->sent_events + c->dropped_events, (uint64_t)fed);
    /* A snapshot still queues behind the events (never dropped), within the slack. */
    size_t before = c->bytes;
    sl_live_hub_send_json(&hub, LIVE_F_SNAPSHOT, "{\"taken_ns\":[1,2],\"snapshot\":{}}", 31);
    SL_CHECK(c->bytes > before);
    SL_CHECK_EQ(c->dropped_snapshots, 0u);
    /* A recording's snapshots (serve --from: every pass) are dropped for it instead, and counted. */
    hub.snapshots_droppable = true;
    static char big[80 * 1024]; /* more than the room left below the limit */
    memset(big, ' ', sizeof big);
    before = c->bytes;
    sl_live_hub_send_json(&hub, LIVE_F_SNAPSHOT, big, sizeof big);
    SL_CHECK_EQ(c->bytes, before);
    SL_CHECK_EQ(c->dropped_snapshots, 1u);
    /* Status frames pile up past the limit until the slack is exceeded: then the page is cut off. */
    for (unsigned i = 0; i < 100000 && !c->closed; i++)
        sl_live_hub_status(&hub);
    SL_CHECK(c->closed);
    unsigned char b[16];
    SL_CHECK_EQ(sl_live_client_read(&hub, c, b, sizeof b, 0), -1L);
    sl_live_hub_leave(&hub, c);
    sl_live_hub_destroy(&hub);
}

/* Reads the last STATUS frame queued for c into out (NUL-terminated JSON). Returns its length, 0 when there is none. */
static size_t last_status(sl_live_hub *hub, sl_live_client *c, char *out, size_t cap)
{
    static unsigned char buf[1 << 16];
    size_t total = 0, found = 0;
    long n;
    while ((n = sl_live_client_read(hub, c, buf + total, sizeof buf - total, 0)) > 0)
        total += (size_t)n;
    for (size_t off = 0; off + LIVE_WIRE_FRAME_HDR <= total;) {
        uint32_t len = rd32(buf + off);
        if (buf[off + 4] == LIVE_F_STATUS && len < cap) {
            memcpy(out, buf + off + LIVE_WIRE_FRAME_HDR, len);
            out[len] = '\0';
            found = len;
        }
        off += LIVE_WIRE_FRAME_HDR + len;
    }
    return found;
}

/* What the kernel program left out as the server's own is in the status only once a kernel source reported it (#21). */
static void test_hub_status_reports_own(void)
{
    static sl_live_hub hub;
    char json[2048];
    SL_CHECK_EQ(sl_live_hub_init(&hub, 1 << 20, "\"release\":\"test\""), 0);
    sl_live_client *c = sl_live_hub_join(&hub);
    sl_live_hub_status(&hub);
    SL_CHECK(last_status(&hub, c, json, sizeof json) > 0);
    SL_CHECK(strstr(json, "server_own") == NULL); /* a recording, or no source yet: not claimed */
    pthread_mutex_lock(&hub.mu);
    hub.own_known = true;
    hub.server_own = 42;
    hub.own_by_context = false;
    snprintf(hub.own_note, sizeof hub.own_note, "CPU 1 read \"x\\y\"");
    pthread_mutex_unlock(&hub.mu);
    sl_live_hub_status(&hub);
    SL_CHECK(last_status(&hub, c, json, sizeof json) > 0);
    SL_CHECK(strstr(json, ",\"server_own\":42,\"own_by_context\":false,\"own_note\":\"CPU 1 read  x y \",") != NULL);
    sl_live_hub_leave(&hub, c);
    sl_live_hub_destroy(&hub);
}

static void test_site_exact_paths_only(void)
{
    char dir[] = "/tmp/slablab-site-XXXXXX";
    SL_CHECK(mkdtemp(dir) != NULL);
    char path[256], outside[256];
    snprintf(path, sizeof path, "%s/site", dir);
    mkdir(path, 0700);
    snprintf(path, sizeof path, "%s/site/index.html", dir);
    FILE *f = fopen(path, "w");
    fputs("<html>", f);
    fclose(f);
    snprintf(outside, sizeof outside, "%s/secret.txt", dir);
    f = fopen(outside, "w");
    fputs("secret", f);
    fclose(f);
    snprintf(path, sizeof path, "%s/site/link.txt", dir);
    SL_CHECK_EQ(symlink(outside, path), 0);
    sl_site site;
    char err[256];
    snprintf(path, sizeof path, "%s/site", dir);
    SL_CHECK_EQ(sl_site_load(&site, path, 1 << 20, err, sizeof err), 0);
    SL_CHECK(sl_site_find(&site, "/") != NULL);
    SL_CHECK(sl_site_find(&site, "/index.html") != NULL);
    SL_CHECK(sl_site_find(&site, "/link.txt") == NULL); /* symbolic links are left out */
    SL_CHECK(sl_site_find(&site, "/../secret.txt") == NULL);
    SL_CHECK(sl_site_find(&site, "/./index.html") == NULL);
    SL_CHECK(sl_site_find(&site, "//index.html") == NULL);
    SL_CHECK_EQ(site.n, (size_t)1);
    sl_site_free(&site);
    snprintf(path, sizeof path, "%s/nothing", dir);
    SL_CHECK_EQ(sl_site_load(&site, path, 1 << 20, err, sizeof err), -1);
    SL_CHECK(strstr(err, "npm run build") != NULL);
    snprintf(path, sizeof path, "rm -rf '%s'", dir);
    SL_CHECK_EQ(system(path), 0);
}

#if SLABLAB_HAVE_ZLIB
/* Appends one pack entry (live_site.h's layout) at *at. */
static void put_entry(unsigned char *raw, size_t *at, const char *path, const char *data)
{
    uint32_t plen = (uint32_t)strlen(path) + 1, dlen = (uint32_t)strlen(data);
    for (int i = 0; i < 4; i++) {
        raw[*at + (size_t)i] = (unsigned char)(plen >> (8 * i));
        raw[*at + 4 + (size_t)i] = (unsigned char)(dlen >> (8 * i));
    }
    memcpy(raw + *at + 8, path, plen);
    memcpy(raw + *at + 8 + plen, data, dlen);
    *at += 8 + plen + dlen;
}

/* A pack of raw[0..rawlen) into pack; returns its length. */
static size_t make_pack(unsigned char *pack, size_t cap, const unsigned char *raw, size_t rawlen)
{
    memcpy(pack, "SLSITE1", 8);
    for (int i = 0; i < 8; i++)
        pack[8 + i] = (unsigned char)((uint64_t)rawlen >> (8 * i));
    uLongf clen = (uLongf)(cap - 16);
    SL_CHECK_EQ(compress2(pack + 16, &clen, raw, (uLong)rawlen, 9), Z_OK);
    return 16 + (size_t)clen;
}

static void test_site_pack(void)
{
    static unsigned char raw[4096], pack[8192];
    size_t at = 0;
    put_entry(raw, &at, "/index.html", "<html>INDEX");
    put_entry(raw, &at, "/assets/app-Ab12Cd34.js", "export const x = 1;");
    put_entry(raw, &at, "/assets/core-Zz99Yy88.wasm", "\x01wasm-bytes");
    size_t len = make_pack(pack, sizeof pack, raw, at);
    sl_site site;
    char err[256];
    SL_CHECK_EQ(sl_site_load_pack(&site, pack, len, 1 << 20, err, sizeof err), 0);
    SL_CHECK_EQ(site.n, (size_t)3);
    const sl_site_file *f = sl_site_find(&site, "/");
    SL_CHECK(f && f->len == 11 && !memcmp(f->data, "<html>INDEX", 11) && !strncmp(f->type, "text/html", 9));
    f = sl_site_find(&site, "/assets/app-Ab12Cd34.js");
    SL_CHECK(f && f->len == 19 && !strncmp(f->type, "text/javascript", 15));
    f = sl_site_find(&site, "/assets/core-Zz99Yy88.wasm");
    SL_CHECK(f && f->len == 11 && !strcmp(f->type, "application/wasm"));
    SL_CHECK(sl_site_find(&site, "/assets/../index.html") == NULL);
    sl_site_free(&site);

    /* Too big for the limit; a corrupt stream; a size that is not what it inflates to. */
    SL_CHECK_EQ(sl_site_load_pack(&site, pack, len, 16, err, sizeof err), -1);
    SL_CHECK(strstr(err, "larger") != NULL);
    pack[len / 2] ^= 0x55;
    SL_CHECK_EQ(sl_site_load_pack(&site, pack, len, 1 << 20, err, sizeof err), -1);
    SL_CHECK(strstr(err, "corrupt") != NULL);
    len = make_pack(pack, sizeof pack, raw, at);
    pack[8]++;
    SL_CHECK_EQ(sl_site_load_pack(&site, pack, len, 1 << 20, err, sizeof err), -1);
    SL_CHECK(strstr(err, "corrupt") != NULL);
    SL_CHECK_EQ(sl_site_load_pack(&site, (const unsigned char *)"not a pack at all", 17, 1 << 20, err, sizeof err), -1);
    SL_CHECK(strstr(err, "not a site pack") != NULL);

    /* An entry whose path is relative, or whose length runs past the end; no index.html. */
    at = 0;
    put_entry(raw, &at, "index.html", "<html>");
    len = make_pack(pack, sizeof pack, raw, at);
    SL_CHECK_EQ(sl_site_load_pack(&site, pack, len, 1 << 20, err, sizeof err), -1);
    SL_CHECK(strstr(err, "bad entry") != NULL);
    at = 0;
    put_entry(raw, &at, "/index.html", "<html>");
    raw[4] = 0xff; /* the data length */
    len = make_pack(pack, sizeof pack, raw, at);
    SL_CHECK_EQ(sl_site_load_pack(&site, pack, len, 1 << 20, err, sizeof err), -1);
    SL_CHECK(strstr(err, "bad entry") != NULL);
    at = 0;
    put_entry(raw, &at, "/app.js", "x");
    len = make_pack(pack, sizeof pack, raw, at);
    SL_CHECK_EQ(sl_site_load_pack(&site, pack, len, 1 << 20, err, sizeof err), -1);
    SL_CHECK(strstr(err, "no index.html") != NULL);
}
#else
static void test_site_pack(void) { SL_SKIP("built without zlib: no built-in site"); }
#endif
#else
static void test_hub_reader_gets_names_then_events(void) { SL_SKIP("the server is native only"); }
static void test_hub_lagging_page_drops_and_counts(void) { SL_SKIP("the server is native only"); }
static void test_site_exact_paths_only(void) { SL_SKIP("the server is native only"); }
static void test_hub_status_reports_own(void) { SL_SKIP("the server is native only"); }
static void test_site_pack(void) { SL_SKIP("the server is native only"); }
#endif

int main(void)
{
    SL_RUN(test_hub_reader_gets_names_then_events);
    SL_RUN(test_hub_lagging_page_drops_and_counts);
    SL_RUN(test_hub_status_reports_own);
    SL_RUN(test_site_exact_paths_only);
    SL_RUN(test_site_pack);
    return sl_check_summary();
}
