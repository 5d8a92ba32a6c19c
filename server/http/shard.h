/*
 * shard.h — the optional owner map (`--owner-map`): which instance of a
 * sharded fleet owns a session, computed with the same consistent hash as
 * the HAProxy router of deploy/haproxy/haproxy.cfg, so a request that
 * reaches the wrong instance (a client talking to a pod directly, a router
 * with an outdated server list) gets 421 Misdirected Request naming the
 * owner instead of silently creating or missing data.
 *
 * Map syntax (items separated by ';', blanks around items ignored):
 *   NAME=URL      one instance; NAME is its `server` name in the router's
 *                 backend (the hash uses names, so order and addresses do
 *                 not matter), URL is how clients reach it
 *   self=NAME     which entry this instance is
 * e.g. "self=s2; s1=http://10.0.0.1:8080; s2=http://10.0.0.2:8080"
 *
 * Hash: rendezvous hashing, as deploy/haproxy/adaptmon.lua: the instance
 * with the highest avalanche(fnv1a32(NAME "/" session id)) owns the
 * session; a tie goes to the smaller name (bytewise).
 */
#ifndef AM_SHARD_H
#define AM_SHARD_H

#include "am.h"
#include "http.h"

#include <stdint.h>

typedef struct am_shard am_shard;

/* Parses an owner map. An empty map sets *out to NULL (this instance owns
 * every session) and returns AM_OK; otherwise *out is owned by the caller
 * (am_shard_free). AM_ERR_INVALID with a message in err on a bad map. */
int am_shard_parse(const char *map, am_shard **out, am_buf *err);
/* Frees a map; NULL-safe. */
void am_shard_free(am_shard *sh);
/* The owner of session id: its index in the map (0-based, map order).
 * sh must not be NULL. */
size_t am_shard_owner(const am_shard *sh, const char *id);
/* Name of entry i (borrowed from sh), and this instance's index. */
const char *am_shard_name(const am_shard *sh, size_t i);
size_t am_shard_self(const am_shard *sh);
/* The check http.c runs once the route and its parameters are known: for a
 * route under /v1/sessions/{id} whose session another instance owns, fills
 * resp with a 421 problem naming the owner and returns 1; otherwise returns
 * 0 and leaves resp alone. sh may be NULL (no map: always 0). */
int am_shard_check(const am_shard *sh, const am_req *req, am_resp *resp);

/* The score of instance name for session id, and the 32-bit mix it ends
 * with (Bob Jenkins' integer hash); exposed for tests. */
uint32_t am_shard_score(const char *name, const char *id);
uint32_t am_shard_avalanche(uint32_t a);

#endif
