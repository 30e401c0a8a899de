/* live_hub.c - names, event frames and the pages' bounded queues (live_hub.h). */
#include "live_hub.h"

#include "../bpf/live_records.h"
#include "live_wire.h"

#include <errno.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct sl_live_frame {
    atomic_uint refs;
    size_t len;
    uint32_t events; /* events it carries (EVENTS frames) */
    unsigned char data[];
};

struct sl_live_qnode {
    sl_live_qnode *next;
    sl_live_frame *f;
};

static void put_u16(unsigned char *p, uint16_t v)
{
    p[0] = (unsigned char)v;
    p[1] = (unsigned char)(v >> 8);
}
static void put_u32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}
static void put_u64(unsigned char *p, uint64_t v)
{
    put_u32(p, (uint32_t)v);
    put_u32(p + 4, (uint32_t)(v >> 32));
}

/* A frame of `type` with room for `payload` bytes (header filled), one reference; NULL when out of memory. */
static sl_live_frame *frame_new(int type, size_t payload)
{
    sl_live_frame *f = malloc(sizeof *f + LIVE_WIRE_FRAME_HDR + payload);
    if (!f)
        return NULL;
    atomic_init(&f->refs, 1);
    f->len = LIVE_WIRE_FRAME_HDR + payload;
    f->events = 0;
    put_u32(f->data, (uint32_t)payload);
    f->data[4] = (unsigned char)type;
    f->data[5] = f->data[6] = f->data[7] = 0;
    return f;
}

static void frame_put(sl_live_frame *f)
{
    if (f && atomic_fetch_sub(&f->refs, 1) == 1)
        free(f);
}

static sl_live_frame *frame_json(int type, const char *json, size_t len)
{
    sl_live_frame *f = frame_new(type, len);
    if (f)
        memcpy(f->data + LIVE_WIRE_FRAME_HDR, json, len);
    return f;
}

/*
 * Queues f for c (under hub->mu). Droppable frames are dropped, and
 * counted, beyond the queue limit; any frame beyond the limit and the
 * slack cuts c off.  Returns whether f was queued.
 */
static bool enqueue(sl_live_hub *hub, sl_live_client *c, sl_live_frame *f, bool droppable)
{
    if (c->closed)
        return false;
    if (droppable && c->bytes + f->len > hub->queue_limit) {
        if (f->events)
            c->dropped_events += f->events;
        else
            c->dropped_snapshots++;
        return false;
    }
    if (c->bytes + f->len > hub->queue_limit + LIVE_HUB_SLACK) {
        fprintf(stderr, "slablab serve: page %u is %zu bytes behind: cut off\n", c->id, c->bytes);
        c->closed = true;
        return false;
    }
    sl_live_qnode *n = malloc(sizeof *n);
    if (!n) {
        c->closed = true;
        return false;
    }
    atomic_fetch_add(&f->refs, 1);
    n->f = f;
    n->next = NULL;
    if (c->tail)
        c->tail->next = n;
    else
        c->head = n;
    c->tail = n;
    c->bytes += f->len;
    if (f->events)
        c->sent_events += f->events;
    return true;
}

static void broadcast(sl_live_hub *hub, sl_live_frame *f, bool droppable)
{
    for (sl_live_client *c = hub->clients; c; c = c->next)
        enqueue(hub, c, f, droppable);
    pthread_cond_broadcast(&hub->data);
}

int sl_live_hub_init(sl_live_hub *hub, size_t queue_limit, const char *hello_members)
{
    memset(hub, 0, sizeof *hub);
    pthread_mutex_init(&hub->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&hub->data, &ca);
    pthread_condattr_destroy(&ca);
    hub->queue_limit = queue_limit;
    hub->next_client_id = 1;
    snprintf(hub->hello, sizeof hub->hello, "%s", hello_members);
    hub->batch = malloc(LIVE_WIRE_EVENTS_HDR + (size_t)LIVE_HUB_BATCH * LIVE_WIRE_EVENT);
    if (!hub->batch)
        return -1;
    sl_ksyms_load(&hub->ksyms, "/proc/kallsyms");
    return 0;
}

static void drain_queue(sl_live_client *c)
{
    for (sl_live_qnode *n = c->head, *next; n; n = next) {
        next = n->next;
        frame_put(n->f);
        free(n);
    }
    c->head = c->tail = NULL;
    c->bytes = 0;
}

void sl_live_hub_destroy(sl_live_hub *hub)
{
    for (sl_live_client *c = hub->clients, *next; c; c = next) {
        next = c->next;
        drain_queue(c);
        free(c);
    }
    for (size_t i = 0; i < hub->nnames; i++)
        frame_put(hub->names[i]);
    free(hub->names);
    free(hub->batch);
    sl_ksyms_free(&hub->ksyms);
    pthread_cond_destroy(&hub->data);
    pthread_mutex_destroy(&hub->mu);
}

sl_live_client *sl_live_hub_join(sl_live_hub *hub)
{
    sl_live_client *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    pthread_mutex_lock(&hub->mu);
    c->id = hub->next_client_id++;
    char hello[1400];
    int n = snprintf(hello, sizeof hello, "{\"format\":\"%s\",\"client\":%u,%s}", LIVE_WIRE_FORMAT, c->id, hub->hello);
    sl_live_frame *f = frame_json(LIVE_F_HELLO, hello, (size_t)n < sizeof hello ? (size_t)n : sizeof hello - 1);
    bool ok = f && enqueue(hub, c, f, false);
    frame_put(f);
    for (size_t i = 0; ok && i < hub->nnames; i++)
        ok = enqueue(hub, c, hub->names[i], false);
    if (!ok) {
        pthread_mutex_unlock(&hub->mu);
        drain_queue(c);
        free(c);
        return NULL;
    }
    c->next = hub->clients;
    hub->clients = c;
    hub->nclients++;
    pthread_mutex_unlock(&hub->mu);
    return c;
}

void sl_live_hub_leave(sl_live_hub *hub, sl_live_client *c)
{
    pthread_mutex_lock(&hub->mu);
    for (sl_live_client **p = &hub->clients; *p; p = &(*p)->next) {
        if (*p == c) {
            *p = c->next;
            hub->nclients--;
            break;
        }
    }
    pthread_mutex_unlock(&hub->mu);
    drain_queue(c);
    free(c);
}

int sl_live_hub_watch(sl_live_hub *hub, unsigned id, const char *names)
{
    int rc = -1;
    pthread_mutex_lock(&hub->mu);
    for (sl_live_client *c = hub->clients; c; c = c->next) {
        if (c->id != id)
            continue;
        c->nwatch = 0;
        const char *p = names;
        while (*p && c->nwatch < LIVE_HUB_MAX_WATCH) {
            size_t len = strcspn(p, ",");
            if (len > 0 && len < sizeof c->watch[0]) {
                memcpy(c->watch[c->nwatch], p, len);
                c->watch[c->nwatch][len] = '\0';
                c->nwatch++;
            }
            p += len;
            if (*p == ',')
                p++;
        }
        rc = 0;
    }
    pthread_mutex_unlock(&hub->mu);
    return rc;
}

unsigned sl_live_hub_watched(sl_live_hub *hub, char *names, size_t cap)
{
    unsigned count = 0;
    size_t used = 0;
    names[0] = '\0';
    pthread_mutex_lock(&hub->mu);
    for (sl_live_client *c = hub->clients; c; c = c->next) {
        for (unsigned i = 0; i < c->nwatch; i++) {
            bool seen = false;
            for (const char *p = names; *p && !seen; p += strcspn(p, ","), p += *p == ',') {
                size_t len = strcspn(p, ",");
                seen = len == strlen(c->watch[i]) && !strncmp(p, c->watch[i], len);
            }
            size_t len = strlen(c->watch[i]);
            if (seen || used + len + 2 > cap)
                continue;
            used += (size_t)snprintf(names + used, cap - used, "%s%s", used ? "," : "", c->watch[i]);
            count++;
        }
    }
    pthread_mutex_unlock(&hub->mu);
    return count;
}

/* The id of addr in table (2 * max slots, open addressing), adding it as next_id when absent and room is left; 0 when full. */
static uint32_t id_of(sl_live_addr_id *table, size_t slots, uint64_t addr, uint32_t next_id, bool *added)
{
    uint64_t h = addr * 0x9e3779b97f4a7c15ull;
    size_t i = (size_t)(h >> 20) % slots;
    *added = false;
    for (size_t probe = 0; probe < slots; probe++, i = (i + 1) % slots) {
        if (table[i].id && table[i].addr == addr)
            return table[i].id;
        if (!table[i].id) {
            if (next_id == 0 || next_id > slots / 2)
                return 0;
            table[i].addr = addr;
            table[i].id = next_id;
            *added = true;
            return next_id;
        }
    }
    return 0;
}

/* Keeps f as a name frame (every later page gets it first) and sends it to the pages there now. */
static void add_name(sl_live_hub *hub, sl_live_frame *f)
{
    pthread_mutex_lock(&hub->mu);
    if (hub->nnames == hub->cap_names) {
        size_t ncap = hub->cap_names ? hub->cap_names * 2 : 256;
        sl_live_frame **grown = realloc(hub->names, ncap * sizeof *grown);
        if (!grown) {
            pthread_mutex_unlock(&hub->mu);
            frame_put(f);
            return;
        }
        hub->names = grown;
        hub->cap_names = ncap;
    }
    hub->names[hub->nnames++] = f;
    broadcast(hub, f, false);
    pthread_mutex_unlock(&hub->mu);
}

static void name_cache(sl_live_hub *hub, const struct live_cache_rec *r)
{
    bool added;
    uint32_t id = id_of(hub->cache_ids, 2 * LIVE_HUB_MAX_CACHES, r->cache, hub->ncaches + 1, &added);
    if (!added)
        return;
    hub->ncaches++;
    size_t nlen = strnlen(r->name, LIVE_NAME_LEN);
    sl_live_frame *f = frame_new(LIVE_F_CACHE, LIVE_WIRE_CACHE_HDR + nlen);
    if (!f)
        return;
    unsigned char *p = f->data + LIVE_WIRE_FRAME_HDR;
    put_u16(p, (uint16_t)id);
    put_u16(p + 2, 0);
    put_u32(p + 4, r->object_size);
    put_u32(p + 8, r->size);
    put_u32(p + 12, r->oo);
    put_u64(p + 16, r->cache);
    memcpy(p + LIVE_WIRE_CACHE_HDR, r->name, nlen);
    add_name(hub, f);
}

/* The site id of a call site, naming it on first sight; 0 for none or when the table is full. */
static uint32_t site_id(sl_live_hub *hub, uint64_t addr)
{
    if (!addr)
        return 0;
    bool added;
    uint32_t id = id_of(hub->site_ids, 2 * (LIVE_HUB_MAX_SITES + 1), addr, hub->nsites + 1, &added);
    if (!added)
        return id;
    hub->nsites++;
    char name[300];
    sl_ksyms_name(&hub->ksyms, addr, name, sizeof name);
    size_t nlen = strlen(name);
    sl_live_frame *f = frame_new(LIVE_F_SITE, LIVE_WIRE_SITE_HDR + nlen);
    if (f) {
        unsigned char *p = f->data + LIVE_WIRE_FRAME_HDR;
        put_u32(p, id);
        put_u32(p + 4, 0);
        put_u64(p + 8, addr);
        memcpy(p + LIVE_WIRE_SITE_HDR, name, nlen);
        add_name(hub, f);
    }
    return id;
}

int sl_live_hub_record(void *ctx, void *data, size_t size)
{
    sl_live_hub *hub = ctx;
    const unsigned char *d = data;
    if (size >= sizeof(struct live_cache_rec) && d[0] == LIVE_CACHE) {
        name_cache(hub, data);
        return 0;
    }
    if (size < sizeof(struct live_event))
        return 0;
    struct live_event e;
    memcpy(&e, data, sizeof e);
    if (hub->batch_n == LIVE_HUB_BATCH)
        sl_live_hub_flush(hub, hub->kernel_lost);
    if (hub->batch_n == 0)
        hub->batch_base_ns = e.ts;
    uint32_t cache = 0;
    if (e.cache) {
        bool added;
        cache = id_of(hub->cache_ids, 2 * LIVE_HUB_MAX_CACHES, e.cache, 0, &added);
    }
    uint64_t dt = e.ts > hub->batch_base_ns ? (e.ts - hub->batch_base_ns) / 1000 : 0;
    unsigned char *p = hub->batch + LIVE_WIRE_EVENTS_HDR + (size_t)hub->batch_n * LIVE_WIRE_EVENT;
    p[0] = e.kind;
    p[1] = (unsigned char)(e.cpu > 255 ? 255 : e.cpu);
    put_u16(p + 2, (uint16_t)cache);
    put_u32(p + 4, site_id(hub, e.call_site));
    put_u32(p + 8, dt > UINT32_MAX ? UINT32_MAX : (uint32_t)dt);
    put_u32(p + 12, e.bytes);
    put_u64(p + 16, e.obj);
    hub->batch_n++;
    return 0;
}

void sl_live_hub_flush(sl_live_hub *hub, uint64_t kernel_lost)
{
    pthread_mutex_lock(&hub->mu);
    hub->kernel_lost = kernel_lost;
    hub->events_in += hub->batch_n;
    pthread_mutex_unlock(&hub->mu);
    if (hub->batch_n == 0)
        return;
    size_t payload = LIVE_WIRE_EVENTS_HDR + (size_t)hub->batch_n * LIVE_WIRE_EVENT;
    sl_live_frame *f = frame_new(LIVE_F_EVENTS, payload);
    if (f) {
        unsigned char *p = hub->batch;
        put_u32(p, hub->batch_n);
        put_u32(p + 4, 0);
        put_u64(p + 8, hub->batch_base_ns);
        put_u64(p + 16, kernel_lost);
        memcpy(f->data + LIVE_WIRE_FRAME_HDR, p, payload);
        f->events = hub->batch_n;
        pthread_mutex_lock(&hub->mu);
        broadcast(hub, f, true);
        pthread_mutex_unlock(&hub->mu);
        frame_put(f);
    }
    hub->batch_n = 0;
}

/* Copies src into out (cap bytes) with quotes, backslashes and control characters made spaces. */
static void json_safe(char *out, size_t cap, const char *src)
{
    size_t j = 0;
    for (const char *s = src; *s && j < cap - 1; s++)
        out[j++] = (*s == '"' || *s == '\\' || (unsigned char)*s < 0x20) ? ' ' : *s;
    out[j] = '\0';
}

void sl_live_hub_status(sl_live_hub *hub)
{
    pthread_mutex_lock(&hub->mu);
    for (sl_live_client *c = hub->clients; c; c = c->next) {
        char json[1400];
        char err[600] = "", note[200] = "", own[320] = "";
        /* The messages are ours (no quotes or backslashes in them); keep them valid strings all the same. */
        json_safe(err, sizeof err, hub->source_error);
        json_safe(note, sizeof note, hub->own_note);
        if (hub->own_known)
            snprintf(own, sizeof own, ",\"server_own\":%" PRIu64 ",\"own_by_context\":%s,\"own_note\":\"%s\"",
                     hub->server_own, hub->own_by_context ? "true" : "false", note);
        int n = snprintf(json, sizeof json,
                         "{\"events_in\":%" PRIu64 ",\"sent\":%" PRIu64 ",\"kernel_lost\":%" PRIu64
                         ",\"server_dropped\":%" PRIu64 ",\"snapshots_dropped\":%" PRIu64
                         "%s,\"queued_bytes\":%zu,\"pages\":%u,\"attached\":%s,\"error\":\"%s\"}",
                         hub->events_in, c->sent_events, hub->kernel_lost, c->dropped_events, c->dropped_snapshots, own,
                         c->bytes, hub->nclients, hub->attached ? "true" : "false", err);
        sl_live_frame *f = frame_json(LIVE_F_STATUS, json, (size_t)n < sizeof json ? (size_t)n : sizeof json - 1);
        if (f) {
            enqueue(hub, c, f, false);
            frame_put(f);
        }
    }
    pthread_cond_broadcast(&hub->data);
    pthread_mutex_unlock(&hub->mu);
}

void sl_live_hub_send_json(sl_live_hub *hub, int type, const char *json, size_t len)
{
    sl_live_frame *f = frame_json(type, json, len);
    if (!f)
        return;
    pthread_mutex_lock(&hub->mu);
    /* A snapshot waits its turn behind the events (their order is what the page's agreement needs); slabinfo may go. */
    broadcast(hub, f, type == LIVE_F_SLABINFO || (type == LIVE_F_SNAPSHOT && hub->snapshots_droppable));
    pthread_mutex_unlock(&hub->mu);
    frame_put(f);
}

void sl_live_hub_stop(sl_live_hub *hub)
{
    pthread_mutex_lock(&hub->mu);
    hub->stopping = true;
    pthread_cond_broadcast(&hub->data);
    pthread_mutex_unlock(&hub->mu);
}

long sl_live_client_read(sl_live_hub *hub, sl_live_client *c, unsigned char *buf, size_t max, int timeout_ms)
{
    pthread_mutex_lock(&hub->mu);
    struct timespec until;
    clock_gettime(CLOCK_MONOTONIC, &until);
    until.tv_sec += timeout_ms / 1000;
    until.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    while (!c->head && !c->closed && !hub->stopping) {
        if (pthread_cond_timedwait(&hub->data, &hub->mu, &until) == ETIMEDOUT)
            break;
    }
    long got = -1;
    if (!c->closed && !hub->stopping) {
        size_t n = 0;
        while (c->head && n < max) {
            sl_live_frame *f = c->head->f;
            size_t take = f->len - c->head_off;
            if (take > max - n)
                take = max - n;
            memcpy(buf + n, f->data + c->head_off, take);
            n += take;
            c->head_off += take;
            if (c->head_off == f->len) {
                sl_live_qnode *done = c->head;
                c->head = done->next;
                if (!c->head)
                    c->tail = NULL;
                c->bytes -= f->len;
                c->head_off = 0;
                frame_put(f);
                free(done);
            }
        }
        got = (long)n;
    }
    pthread_mutex_unlock(&hub->mu);
    return got;
}
