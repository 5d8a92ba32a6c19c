# adaptmon container image.
#   docker build -t adaptmon:0.1.0 .
#   docker run -p 8080:8080 -v adaptmon-data:/var/lib/adaptmon adaptmon:0.1.0
# Configuration: ADAPTMON_* environment variables (adaptmon serve --help).

# ---- build: the same steps as CI (make deps, make) --------------------------
FROM debian:bookworm AS build
WORKDIR /src
COPY . .
RUN apt-get update -qq \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends make \
 && make deps \
 && make \
 && ./adaptmon version \
 && rm -rf /var/lib/apt/lists/*

# ---- runtime: the binary and the shared libraries it links ------------------
# Packages found with: ldd adaptmon | dpkg -S (their own dependencies follow).
FROM debian:bookworm-slim
RUN apt-get update -qq \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
      libmicrohttpd12 libjansson4 libsqlite3-0 libutf8proc2 libstemmer0d libxml2 \
      libsystemd0 libcurl4 curl libmecab2 mecab-ipadic-utf8 \
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
    ADAPTMON_DB=/var/lib/adaptmon/adaptmon.db
EXPOSE 8080
HEALTHCHECK --interval=15s --timeout=3s --start-period=10s --retries=3 \
  CMD curl -fsS "http://127.0.0.1:${ADAPTMON_PORT}/healthz" || exit 1
STOPSIGNAL SIGTERM
ENTRYPOINT ["/usr/local/bin/adaptmon"]
CMD ["serve"]
