/*
 * shard.c — the owner map and the 421 answer (see shard.h).
 *
 * Rendezvous (highest random weight) hashing, the same as the router's
 * deploy/haproxy/adaptmon.lua: every instance NAME scores a session id with
 * avalanche(fnv1a32(NAME "/" id)); the highest score owns the session (a
 * tie goes to the smaller name). Adding an instance moves only the sessions
 * it now wins (about 1/N); removing one moves only its own.
 * tests/fleet/test_fleet.py checks the agreement against a real HAProxy.
 */
#include "shard.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#define AM_SHARD_MAX 256 /* instances in one map */

struct am_shard {
    char **names, **urls; /* owned, n each */
    size_t n, self;
};

uint32_t am_shard_score(const char *name, const char *id)
{
    uint32_t h = am_fnv1a32_n(AM_FNV32_BASIS, name, strlen(name));
    h = am_fnv1a32_n(h, "/", 1);
    return am_shard_avalanche(am_fnv1a32_n(h, id, strlen(id)));
}

/* Bob Jenkins' 32-bit integer mix, as HAProxy's full_hash(). */
uint32_t am_shard_avalanche(uint32_t a)
{
    a = (a + 0x7ed55d16u) + (a << 12);
    a = (a ^ 0xc761c23cu) ^ (a >> 19);
    a = (a + 0x165667b1u) + (a << 5);
    a = (a + 0xd3a2646cu) ^ (a << 9);
    a = (a + 0xfd7046c5u) + (a << 3);
    a = (a ^ 0xb55a4f09u) ^ (a >> 16);
    return a;
}

void am_shard_free(am_shard *sh)
{
    if (!sh)
        return;
    for (size_t i = 0; i < sh->n; i++) {
        free(sh->names[i]);
        free(sh->urls[i]);
    }
    free(sh->names);
    free(sh->urls);
    free(sh);
}

/* A copy of [s, s+n) without the blanks around it (caller frees). */
static char *am_shard_trim(const char *s, size_t n)
{
    while (n && isspace((unsigned char)*s)) {
        s++;
        n--;
    }
    while (n && isspace((unsigned char)s[n - 1]))
        n--;
    return am_xstrndup(s, n);
}

/* Valid entry name: a HAProxy-style identifier. */
static int am_shard_valid_name(const char *s)
{
    if (!*s)
        return 0;
    for (; *s; s++)
        if (!isalnum((unsigned char)*s) && *s != '-' && *s != '_' && *s != '.')
            return 0;
    return 1;
}

/* Parses one "key=value" item into sh (self name kept in *self). */
static int am_shard_item(am_shard *sh, char *item, char **self, am_buf *err)
{
    char *eq = strchr(item, '=');
    if (!eq) {
        am_buf_printf(err, "owner-map: '%s' is not NAME=URL or self=NAME", item);
        return AM_ERR_INVALID;
    }
    *eq = '\0';
    char *key = am_shard_trim(item, strlen(item));
    char *val = am_shard_trim(eq + 1, strlen(eq + 1));
    int rc = AM_OK;
    if (!strcmp(key, "self")) {
        free(*self);
        *self = val;
        val = NULL;
    } else if (!am_shard_valid_name(key)) {
        am_buf_printf(err, "owner-map: bad instance name '%s' ([A-Za-z0-9._-])", key);
        rc = AM_ERR_INVALID;
    } else if (strncmp(val, "http://", 7) && strncmp(val, "https://", 8)) {
        am_buf_printf(err, "owner-map: the URL of '%s' must start with http:// or https://", key);
        rc = AM_ERR_INVALID;
    } else if (sh->n >= AM_SHARD_MAX) {
        am_buf_printf(err, "owner-map: more than %d instances", AM_SHARD_MAX);
        rc = AM_ERR_INVALID;
    } else {
        for (size_t i = 0; i < sh->n && rc == AM_OK; i++)
            if (!strcmp(sh->names[i], key)) {
                am_buf_printf(err, "owner-map: instance '%s' is listed twice", key);
                rc = AM_ERR_INVALID;
            }
        if (rc == AM_OK) {
            sh->names = am_xrealloc(sh->names, (sh->n + 1) * sizeof *sh->names);
            sh->urls = am_xrealloc(sh->urls, (sh->n + 1) * sizeof *sh->urls);
            size_t len = strlen(val);
            while (len && val[len - 1] == '/') /* "http://a:8080/" → no trailing slash */
                val[--len] = '\0';
            sh->names[sh->n] = key;
            sh->urls[sh->n] = val;
            sh->n++;
            key = val = NULL;
        }
    }
    free(key);
    free(val);
    return rc;
}

int am_shard_parse(const char *map, am_shard **out, am_buf *err)
{
    *out = NULL;
    char *text = am_shard_trim(map ? map : "", map ? strlen(map) : 0);
    if (!*text) {
        free(text);
        return AM_OK;
    }
    am_shard *sh = am_xcalloc(1, sizeof *sh);
    char *self = NULL;
    int rc = AM_OK;
    for (char *p = text; p && rc == AM_OK;) {
        char *semi = strchr(p, ';');
        if (semi)
            *semi = '\0';
        char *item = am_shard_trim(p, strlen(p));
        if (*item)
            rc = am_shard_item(sh, item, &self, err);
        free(item);
        p = semi ? semi + 1 : NULL;
    }
    if (rc == AM_OK && !sh->n) {
        am_buf_printf(err, "owner-map: no instance (NAME=URL) listed");
        rc = AM_ERR_INVALID;
    }
    if (rc == AM_OK) {
        size_t i = 0;
        while (self && i < sh->n && strcmp(sh->names[i], self))
            i++;
        if (!self || i == sh->n) {
            am_buf_printf(err, "owner-map: self=%s names no listed instance",
                          self ? self : "(missing)");
            rc = AM_ERR_INVALID;
        }
        sh->self = i;
    }
    free(self);
    free(text);
    if (rc != AM_OK) {
        am_shard_free(sh);
        return rc;
    }
    *out = sh;
    return AM_OK;
}

size_t am_shard_owner(const am_shard *sh, const char *id)
{
    size_t best = 0;
    uint32_t best_score = am_shard_score(sh->names[0], id);
    for (size_t i = 1; i < sh->n; i++) {
        uint32_t sc = am_shard_score(sh->names[i], id);
        if (sc > best_score || (sc == best_score && strcmp(sh->names[i], sh->names[best]) < 0)) {
            best = i;
            best_score = sc;
        }
    }
    return best;
}

const char *am_shard_name(const am_shard *sh, size_t i)
{
    return i < sh->n ? sh->names[i] : NULL;
}

size_t am_shard_self(const am_shard *sh)
{
    return sh->self;
}

int am_shard_check(const am_shard *sh, const am_req *req, am_resp *resp)
{
    if (!sh || !req->route || strncmp(req->route, "/v1/sessions/{id}", 17) || req->nparams < 1)
        return 0;
    size_t owner = am_shard_owner(sh, req->params[0]);
    if (owner == sh->self)
        return 0;
    am_resp_problem(resp, req, AM_P_MISDIRECTED_REQUEST,
                    "session '%s' lives on instance %s (%s), not on this one (%s); send the "
                    "request there or through the router",
                    req->params[0], sh->names[owner], sh->urls[owner], sh->names[sh->self]);
    am_resp_problem_set(resp, "owner", json_string(sh->names[owner]));
    am_resp_problem_set(resp, "owner_url", json_string(sh->urls[owner]));
    return 1;
}
