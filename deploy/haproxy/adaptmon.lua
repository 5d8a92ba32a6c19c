-- adaptmon.lua: the session placement and the fleet-wide routes of the
-- adaptmon router (HAProxy 2.6 + lua-cjson). Loaded by haproxy.cfg.
--
--   lua.adaptmon_shard   converter: session id -> the name of the server that owns
--       session id, by rendezvous hashing over the servers of backend
--       "adaptmon_sessions": the highest avalanche(fnv1a32(NAME "/" id))
--       wins (a tie goes to the smaller name). The instances compute the same
--       with --owner-map (server/http/shard.c) and answer 421 for the others'
--       sessions. Adding a server moves only the sessions it wins (~1/N).
--
--   GET /v1/sessions?limit=&after=   the union of every shard's session list:
--       each shard is asked for the same page (sessions are ordered by id,
--       "after" is a keyset cursor), the pages are merged by id and cut to
--       "limit"; "total" is the sum. Each session object is passed through
--       byte for byte. When a shard does not answer, the page holds the
--       others' sessions and names the missing shards in "missing_shards"
--       (and the X-Adaptmon-Missing-Shards header).
--   PUT/DELETE /v1/vocabularies/{name}   background vocabularies are shared
--       by the sessions of an instance, so every shard gets the request; the
--       answer is the first failure, else the first shard's answer.
--
-- The shards are the servers of backend "adaptmon_sessions".

local cjson = require("cjson")

local BACKEND = "adaptmon_sessions"
local TIMEOUT_MS = 10000

-- Bob Jenkins' 32-bit integer mix (as server/http/shard.c am_shard_avalanche).
local function avalanche(a)
    a = ((a + 0x7ed55d16) + (a << 12)) & 0xffffffff
    a = ((a ~ 0xc761c23c) ~ (a >> 19)) & 0xffffffff
    a = ((a + 0x165667b1) + (a << 5)) & 0xffffffff
    a = ((a + 0xd3a2646c) ~ (a << 9)) & 0xffffffff
    a = ((a + 0xfd7046c5) + (a << 3)) & 0xffffffff
    a = ((a ~ 0xb55a4f09) ~ (a >> 16)) & 0xffffffff
    return a
end

local function fnv1a(h, s)
    for k = 1, #s do
        h = ((h ~ s:byte(k)) * 16777619) & 0xffffffff
    end
    return h
end

local function score(name, id)
    return avalanche(fnv1a(fnv1a(2166136261, name), "/" .. id))
end

-- The owner of session id among the servers of the sessions backend.
local names_cache = nil
local function server_names()
    if not names_cache then
        names_cache = {}
        local be = core.backends[BACKEND]
        if be then
            for name, _ in pairs(be.servers) do names_cache[#names_cache + 1] = name end
        end
        table.sort(names_cache)
    end
    return names_cache
end

core.register_converters("adaptmon_shard", function(id)
    if not id or id == "" then return nil end
    local best, best_score = nil, -1
    for _, name in ipairs(server_names()) do  -- sorted: on a tie the smaller name stays
        local sc = score(name, id)
        if sc > best_score then best, best_score = name, sc end
    end
    return best
end)

-- Name and "ip:port" of every shard, ordered by name.
local function shards()
    local out = {}
    local be = core.backends[BACKEND]
    if be then
        for name, srv in pairs(be.servers) do
            out[#out + 1] = { name = name, addr = srv:get_addr() }
        end
    end
    table.sort(out, function(a, b) return a.name < b.name end)
    return out
end

-- The request headers worth forwarding to a shard.
local function fwd_headers(applet, with_type)
    local h = {}
    for _, k in ipairs({ "authorization", "x-request-id", with_type and "content-type" or nil }) do
        local v = applet.headers[k]
        if v and v[0] then h[k] = { v[0] } end
    end
    return h
end

-- The raw JSON texts of the elements of the top-level "sessions" array of
-- body (objects), in order. A small scanner: strings (with escapes) are
-- skipped, depth is counted, the key "sessions" at depth 1 opens the array.
local function raw_sessions(body)
    local out = {}
    local depth, i, n = 0, 1, #body
    local last_key, in_array, start = nil, false, nil
    while i <= n do
        local c = body:byte(i)
        if c == 34 then -- '"'
            local j = i + 1
            while j <= n do
                local d = body:byte(j)
                if d == 92 then j = j + 2
                elseif d == 34 then break
                else j = j + 1 end
            end
            if depth == 1 then last_key = body:sub(i + 1, j - 1) end
            i = j
        elseif c == 123 or c == 91 then -- '{' '['
            depth = depth + 1
            if c == 91 and depth == 2 and last_key == "sessions" then in_array = true end
            if in_array and depth == 3 and c == 123 then start = i end
        elseif c == 125 or c == 93 then -- '}' ']'
            if in_array and depth == 3 and c == 125 and start then
                out[#out + 1] = body:sub(start, i)
                start = nil
            end
            if in_array and depth == 2 and c == 93 then in_array = false end
            depth = depth - 1
        end
        i = i + 1
    end
    return out
end

local function reply(applet, status, ctype, body, extra)
    applet:set_status(status)
    applet:add_header("content-type", ctype)
    applet:add_header("cache-control", "no-store")
    applet:add_header("content-length", tostring(#body))
    for k, v in pairs(extra or {}) do applet:add_header(k, v) end
    applet:start_response()
    applet:send(body)
end

local function problem(applet, status, title, detail)
    reply(applet, status, "application/problem+json", cjson.encode({
        type = "https://adaptmon.dev/problems/" .. (status == 502 and "bad-gateway" or "bad-request"),
        title = title, status = status, detail = detail, instance = applet.path }))
end

-- The "limit" of the query (default 50, as the server), for the cut.
local function query_limit(qs)
    local v = ("&" .. (qs or "")):match("&limit=([0-9]+)")
    return tonumber(v) or 50
end

core.register_service("adaptmon_sessions", "http", function(applet)
    local qs = applet.qs or ""
    local list = shards()
    local items, total, missing, more = {}, 0, {}, false
    for _, s in ipairs(list) do
        local hc = core.httpclient()
        local url = "http://" .. s.addr .. "/v1/sessions" .. (qs ~= "" and ("?" .. qs) or "")
        local ok, res = pcall(hc.get, hc, { url = url, headers = fwd_headers(applet, false),
                                             timeout = TIMEOUT_MS })
        if not ok or not res or not res.status or res.status == 0 or res.status >= 500 then
            missing[#missing + 1] = s.name
        elseif res.status ~= 200 then
            -- the shard refused the request (400 bad query, 401/403 token): relay it
            local ct = res.headers and res.headers["content-type"] and res.headers["content-type"][0]
            reply(applet, res.status, ct or "application/problem+json", res.body or "")
            return
        else
            local dok, doc = pcall(cjson.decode, res.body or "")
            if not dok or type(doc) ~= "table" or type(doc.sessions) ~= "table" then
                missing[#missing + 1] = s.name
            else
                local raws = raw_sessions(res.body)
                if #raws ~= #doc.sessions then
                    missing[#missing + 1] = s.name
                else
                    for k, sess in ipairs(doc.sessions) do
                        items[#items + 1] = { id = tostring(sess.id), raw = raws[k] }
                    end
                    total = total + (tonumber(doc.total) or 0)
                    if doc.next ~= nil and doc.next ~= cjson.null then more = true end
                end
            end
        end
    end
    if #missing == #list then
        problem(applet, 502, "Bad gateway", "no adaptmon instance answered")
        return
    end
    table.sort(items, function(a, b) return a.id < b.id end)
    local limit = query_limit(qs)
    local shown = {}
    for k = 1, math.min(limit, #items) do shown[k] = items[k].raw end
    local next_id = "null"
    if (#items > limit or more) and #shown > 0 then
        next_id = cjson.encode(items[#shown].id)
    end
    local body = '{"sessions":[' .. table.concat(shown, ",") .. '],"next":' .. next_id ..
                 ',"total":' .. string.format("%d", total)
    local extra = {}
    if #missing > 0 then
        body = body .. ',"missing_shards":' .. cjson.encode(missing)
        extra["x-adaptmon-missing-shards"] = table.concat(missing, ",")
    end
    reply(applet, 200, "application/json", body .. "}", extra)
end)

core.register_service("adaptmon_broadcast", "http", function(applet)
    local body = applet:receive() or ""
    local first, failed, reached = nil, nil, 0
    for _, s in ipairs(shards()) do
        local hc = core.httpclient()
        local req = { url = "http://" .. s.addr .. applet.path .. ((applet.qs and applet.qs ~= "")
                      and ("?" .. applet.qs) or ""), headers = fwd_headers(applet, true),
                      body = body, timeout = TIMEOUT_MS }
        local fn = applet.method == "DELETE" and hc.delete or hc.put
        local ok, res = pcall(fn, hc, req)
        if not ok or not res or not res.status or res.status == 0 then
            failed = failed or { status = 502, shard = s.name }
        else
            reached = reached + 1
            -- a DELETE of a vocabulary a shard never had is fine (404 there)
            if res.status >= 400 and not (applet.method == "DELETE" and res.status == 404) then
                failed = failed or { status = res.status, res = res, shard = s.name }
            end
            if not first or (first.status >= 300 and res.status < 300) then first = res end
        end
    end
    if failed and failed.res then
        local ct = failed.res.headers and failed.res.headers["content-type"] and
                   failed.res.headers["content-type"][0]
        reply(applet, failed.status, ct or "application/problem+json", failed.res.body or "",
              { ["x-adaptmon-shard"] = failed.shard })
    elseif failed then
        problem(applet, 502, "Bad gateway", "instance " .. failed.shard .. " did not answer; " ..
                "the request reached " .. reached .. " instance(s): repeat it")
    else
        local ct = first.headers and first.headers["content-type"] and first.headers["content-type"][0]
        reply(applet, first.status, ct or "application/json", first.body or "")
    end
end)
