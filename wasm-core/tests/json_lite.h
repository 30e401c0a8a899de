/*
 * json_lite.h - a strict little JSON reader for the C tests: parses a
 * document into a tree (objects keep their member order), so tests can
 * check the replay's JSON and read a Perfetto export back.  A syntax error
 * fails the parse (the test then reports where).
 */
#ifndef SL_JSON_LITE_H
#define SL_JSON_LITE_H

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

typedef enum { JL_NULL, JL_BOOL, JL_NUM, JL_STR, JL_ARR, JL_OBJ } jl_type;

typedef struct jl {
    jl_type type;
    char *key;  /* member name inside an object */
    char *str;  /* JL_STR */
    double num; /* JL_NUM, JL_BOOL */
    struct jl **kids;
    size_t n, cap;
} jl;

typedef struct jl_parser {
    const char *p, *end;
    const char *error;
    size_t error_at;
    const char *start;
} jl_parser;

static inline void jl_free(jl *v)
{
    if (!v)
        return;
    for (size_t i = 0; i < v->n; i++)
        jl_free(v->kids[i]);
    free(v->kids);
    free(v->key);
    free(v->str);
    free(v);
}

static inline void jl_ws(jl_parser *ps)
{
    while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\n' || *ps->p == '\r' || *ps->p == '\t'))
        ps->p++;
}

static inline jl *jl_fail(jl_parser *ps, const char *why)
{
    if (!ps->error) {
        ps->error = why;
        ps->error_at = (size_t)(ps->p - ps->start);
    }
    return NULL;
}

static inline char *jl_string(jl_parser *ps)
{
    if (ps->p >= ps->end || *ps->p != '"')
        return (char *)jl_fail(ps, "expected a string");
    ps->p++;
    size_t cap = 16, n = 0;
    char *s = malloc(cap);
    while (ps->p < ps->end && *ps->p != '"') {
        char c = *ps->p++;
        if ((unsigned char)c < 0x20) {
            free(s);
            return (char *)jl_fail(ps, "a control character in a string");
        }
        if (c == '\\') {
            if (ps->p >= ps->end)
                break;
            char e = *ps->p++;
            switch (e) {
            case 'n':
                c = '\n';
                break;
            case 't':
                c = '\t';
                break;
            case 'r':
                c = '\r';
                break;
            case 'b':
                c = '\b';
                break;
            case 'f':
                c = '\f';
                break;
            case '"':
            case '\\':
            case '/':
                c = e;
                break;
            case 'u': {
                unsigned v = 0;
                for (int k = 0; k < 4; k++) {
                    char h = ps->p < ps->end ? *ps->p++ : 0;
                    v = v * 16 + (unsigned)(h >= '0' && h <= '9'   ? h - '0'
                                            : h >= 'a' && h <= 'f' ? h - 'a' + 10
                                            : h >= 'A' && h <= 'F' ? h - 'A' + 10
                                                                   : 99);
                }
                if (v > 0x7f) {
                    free(s);
                    return (char *)jl_fail(ps, "a \\u escape beyond ASCII (the replay never writes one)");
                }
                c = (char)v;
                break;
            }
            default:
                free(s);
                return (char *)jl_fail(ps, "a bad escape");
            }
        }
        if (n + 2 > cap)
            s = realloc(s, cap *= 2);
        s[n++] = c;
    }
    if (ps->p >= ps->end) {
        free(s);
        return (char *)jl_fail(ps, "an unterminated string");
    }
    ps->p++;
    s[n] = 0;
    return s;
}

static inline jl *jl_value(jl_parser *ps, int depth);

static inline bool jl_push(jl *v, jl *kid)
{
    if (v->n == v->cap) {
        v->cap = v->cap ? v->cap * 2 : 8;
        v->kids = realloc(v->kids, v->cap * sizeof *v->kids);
    }
    v->kids[v->n++] = kid;
    return true;
}

static inline jl *jl_value(jl_parser *ps, int depth)
{
    jl_ws(ps);
    if (ps->p >= ps->end)
        return jl_fail(ps, "unexpected end");
    if (depth > 64)
        return jl_fail(ps, "nested too deep");
    jl *v = calloc(1, sizeof *v);
    char c = *ps->p;
    if (c == '{' || c == '[') {
        v->type = c == '{' ? JL_OBJ : JL_ARR;
        ps->p++;
        jl_ws(ps);
        if (ps->p < ps->end && *ps->p == (c == '{' ? '}' : ']')) {
            ps->p++;
            return v;
        }
        for (;;) {
            char *key = NULL;
            if (v->type == JL_OBJ) {
                jl_ws(ps);
                key = jl_string(ps);
                jl_ws(ps);
                if (!key || ps->p >= ps->end || *ps->p != ':') {
                    free(key);
                    jl_free(v);
                    return jl_fail(ps, "expected \"key\":");
                }
                ps->p++;
            }
            jl *kid = jl_value(ps, depth + 1);
            if (!kid) {
                free(key);
                jl_free(v);
                return NULL;
            }
            kid->key = key;
            jl_push(v, kid);
            jl_ws(ps);
            if (ps->p < ps->end && *ps->p == ',') {
                ps->p++;
                continue;
            }
            if (ps->p < ps->end && *ps->p == (v->type == JL_OBJ ? '}' : ']')) {
                ps->p++;
                return v;
            }
            jl_free(v);
            return jl_fail(ps, "expected , or the closing bracket");
        }
    }
    if (c == '"') {
        v->type = JL_STR;
        v->str = jl_string(ps);
        if (!v->str) {
            free(v);
            return NULL;
        }
        return v;
    }
    if (!strncmp(ps->p, "true", 4) || !strncmp(ps->p, "false", 5)) {
        v->type = JL_BOOL;
        v->num = *ps->p == 't';
        ps->p += *ps->p == 't' ? 4 : 5;
        return v;
    }
    if (!strncmp(ps->p, "null", 4)) {
        ps->p += 4;
        return v;
    }
    char *end;
    v->type = JL_NUM;
    v->num = strtod(ps->p, &end);
    if (end == ps->p || (*ps->p != '-' && (*ps->p < '0' || *ps->p > '9'))) {
        free(v);
        return jl_fail(ps, "expected a value");
    }
    ps->p = end;
    return v;
}

/* Parses text[0..len).  NULL on error (*error and *at say what and where). */
static inline jl *jl_parse(const char *text, size_t len, const char **error, size_t *at)
{
    jl_parser ps = {.p = text, .end = text + len, .start = text};
    jl *v = jl_value(&ps, 0);
    jl_ws(&ps);
    if (v && ps.p != ps.end) {
        jl_free(v);
        v = jl_fail(&ps, "text after the document");
    }
    if (error)
        *error = ps.error;
    if (at)
        *at = ps.error_at;
    return v;
}

/* Member `key` of an object (NULL if absent or v is not an object). */
static inline jl *jl_get(const jl *v, const char *key)
{
    if (!v || v->type != JL_OBJ)
        return NULL;
    for (size_t i = 0; i < v->n; i++)
        if (!strcmp(v->kids[i]->key, key))
            return v->kids[i];
    return NULL;
}

/* A path of member names ("events.by_kind.kfree"); numbers for JL_NUM, -1 when absent. */
static inline double jl_num(const jl *v, const char *path)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", path);
    const jl *cur = v;
    for (char *tok = strtok(buf, "."); tok && cur; tok = strtok(NULL, "."))
        cur = jl_get(cur, tok);
    return cur && (cur->type == JL_NUM || cur->type == JL_BOOL) ? cur->num : -1;
}

static inline const char *jl_str(const jl *v, const char *path)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", path);
    const jl *cur = v;
    for (char *tok = strtok(buf, "."); tok && cur; tok = strtok(NULL, "."))
        cur = jl_get(cur, tok);
    return cur && cur->type == JL_STR ? cur->str : NULL;
}

#endif /* SL_JSON_LITE_H */
