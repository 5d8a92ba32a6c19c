#!/bin/sh
# Installs the Debian packages adaptmon needs to build and test, when missing.
# As root it runs apt-get; otherwise it prints the exact command to run.
set -e
# What `make` needs to compile the binary, nothing more: the Dockerfile's
# build stage installs exactly these (tests/fleet/test_deploy.py checks it).
BUILD_PKGS="gcc libc6-dev make pkg-config iso-codes \
libmicrohttpd-dev libjansson-dev libsqlite3-dev libutf8proc-dev libstemmer-dev \
libcurl4-openssl-dev libxml2-dev libsystemd-dev libmecab-dev libfriso-dev libpcre2-dev libpq-dev"
# The tests' toolchain.
# ja-mecab (BLEU and Japanese recall) needs the IPA dictionary at run time.
# Chinese recall (zh-friso) needs friso's dictionary at run time.
PKGS="$BUILD_PKGS mecab-ipadic-utf8 friso-dict build-essential libcmocka-dev python3 curl sqlite3 bc time \
clang libclang-rt-14-dev valgrind wrk gnuplot-nox \
systemd haproxy lua-cjson yamllint clang-format cppcheck prometheus"
# tests/browser (the dashboard): headless Chromium driven by playwright-core from npm
PKGS="$PKGS chromium fonts-dejavu-core nodejs"
# … and a CJK font, or the zh/ja scenarios and their screenshots show tofu boxes
PKGS="$PKGS fonts-noto-cjk"
# tests/store/test_pg_schema.py: a throwaway PostgreSQL server (initdb, pg_ctl, psql)
PKGS="$PKGS postgresql-15"
# tests/ha (make test-ha): the fault suite's SQL writer (psycopg2), its
# network cuts (iptables) and the pg_auto_failover test (pg_autoctl)
PKGS="$PKGS python3-psycopg2 iptables postgresql-15-auto-failover"
# the Python package (python/, docs/python.md): headers, setuptools, pip and venv
# for its offline install and the wheel test of tests/python
PKGS="$PKGS python3-dev python3-setuptools python3-wheel python3-pip python3-venv"
# One dpkg-query for all of them (one per package took ~4 s of each make
# test / make valgrind-ci on CI's loaded cores; this takes ~0.3 s).
nl='
'
status=$nl$(dpkg-query -W -f='${Package} ${Status}\n' $PKGS 2>/dev/null || :)$nl
missing=""
for p in $PKGS; do
    case $status in
    *"${nl}$p install ok installed${nl}"*) ;;
    *) missing="$missing $p" ;;
    esac
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" = 0 ]; then
    echo "deps: installing$missing"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends $missing
else
    echo "deps: missing Debian packages:$missing"
    echo "deps: run: sudo apt-get update && sudo apt-get install -y$missing"
    exit 1
fi
