# adaptmon container image.
#   docker build -t adaptmon:0.1.0 .
#   docker volume create adaptmon-data
#   docker run -d --name adaptmon -p 8080:8080 -v adaptmon-data:/var/lib/adaptmon \
#     --env-file adaptmon.env --stop-timeout 20 adaptmon:0.1.0
# where adaptmon.env (mode 0600, never in the image) holds the tokens, each at
# least 16 characters, e.g. from `openssl rand -hex 24`:
#   ADAPTMON_WRITE_TOKEN=…
#   ADAPTMON_READ_TOKEN=…
# The image listens on 0.0.0.0: without tokens it starts with a WARN and
# anyone who reaches the port can read and change every session.
# Configuration: ADAPTMON_* environment variables (adaptmon serve --help), or
# a file mounted at /etc/adaptmon/adaptmon.conf (read when present).
# Stopping: SIGTERM, then in-flight requests get shutdown-timeout-ms (10 s by
# default, set below) before the process exits. `docker stop` waits 10 s by
# default before SIGKILL, so run with --stop-timeout 20 (or `docker stop -t 20`;
# compose: stop_grace_period: 20s): always more than shutdown-timeout-ms.

# ---- build: only what `make` needs to compile the binary ----------------------
# The package list is tools/deps.sh's BUILD_PKGS (a compiler, make, pkg-config,
# iso-codes for the language table, and the -dev packages of the libraries
# the Makefile links): none of the test toolchain (Chromium, valgrind,
# HAProxy, …) that `make deps` installs. tests/fleet/test_deploy.py checks
# that the two lists are the same and that each library has its -dev package.
FROM debian:bookworm AS build
RUN apt-get update -qq \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
      gcc libc6-dev make pkg-config iso-codes \
      libmicrohttpd-dev libjansson-dev libsqlite3-dev libutf8proc-dev libstemmer-dev libpq-dev \
      libcurl4-openssl-dev libxml2-dev libsystemd-dev libmecab-dev libfriso-dev libpcre2-dev \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
RUN make all \
 && ./adaptmon version

# ---- runtime: the binary and the shared libraries it links ------------------
# Packages found with: ldd adaptmon | dpkg -S (their own dependencies follow).
FROM debian:bookworm-slim
RUN apt-get update -qq \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
      libmicrohttpd12 libjansson4 libsqlite3-0 libpq5 libutf8proc2 libstemmer0d libxml2 \
      libsystemd0 libcurl4 curl libmecab2 mecab-ipadic-utf8 libfriso0 friso-dict libpcre2-8-0 \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd --system --gid 10001 adaptmon \
 && useradd --system --uid 10001 --gid adaptmon --home-dir /var/lib/adaptmon \
      --shell /usr/sbin/nologin adaptmon \
 && install -d -o adaptmon -g adaptmon -m 0750 /var/lib/adaptmon
COPY --from=build /src/adaptmon /usr/local/bin/adaptmon
COPY --from=build /src/deploy/adaptmon.conf.example /usr/share/doc/adaptmon/adaptmon.conf.example

USER adaptmon:adaptmon
WORKDIR /var/lib/adaptmon
VOLUME ["/var/lib/adaptmon"]
ENV ADAPTMON_LISTEN=0.0.0.0 \
    ADAPTMON_PORT=8080 \
    ADAPTMON_DB=/var/lib/adaptmon/adaptmon.db \
    ADAPTMON_SHUTDOWN_TIMEOUT_MS=10000
EXPOSE 8080
# The first probe comes one interval after the start and the server listens
# well before (no --start-period: dockerfilelint 1.8 misreads that option).
HEALTHCHECK --interval=15s --timeout=3s --retries=3 \
  CMD curl -fsS "http://127.0.0.1:${ADAPTMON_PORT}/healthz" || exit 1
# docker stop's grace period must exceed ADAPTMON_SHUTDOWN_TIMEOUT_MS (see the
# top of this file: --stop-timeout 20).
STOPSIGNAL SIGTERM
ENTRYPOINT ["/usr/local/bin/adaptmon"]
CMD ["serve"]
