# adaptmon — build, test and run.
#   make            build ./adaptmon
#   make run        install missing packages, build, start the server
#   make test       install missing packages, build, run every test
#   make check      fast inner loop: unit binaries, the CLI and API suites
#                   (no Chromium, HAProxy, reliability or fleet suites)
#   one suite:      make all unit && python3 tests/api/test_api.py
#   one test:       APITEST_ONLY=<name substring> python3 tests/api/test_api.py,
#                   build/tests/test_terms, CMOCKA_TEST_ABORT=1 … (README: Development)
#   make asan       build with ASan+UBSan into build-asan/ and run the tests
#   make bench-core scoring-core benchmark (report: bench/README.md)
#   make screenshots the dashboard's views at 1280×800 and 390×844 into docs/screenshots/
#                   (the browser suite's scenarios: Chromium + playwright-core)
#   make bench-scale cost against input size, adversarial inputs (bench/README.md)
#   make bench-pg   POST/s and CPU per POST on PostgreSQL (primary + 1 sync standby) with 1-3
#                   nodes and 1-8 committers, beside SQLite (bench/pg_nodes.py; root; not in test)
#   make test-pg    the API suites against a throwaway PostgreSQL (issue 28; not in make test)
#   JOBS=N          make test / check / valgrind / valgrind-ci run N unit binaries or
#                   suites at once, longest first (tests/run.sh; durations from
#                   tests/durations*.txt); default 1, valgrind-ci 2 (valgrind runs each
#                   process on one core, so two lanes fill CI's two cores)
#   make mutants    plants each bug of tests/mutants/*.patch in a copy of the tree and
#                   expects its guarding test to fail (tools/mutants.sh; not in make test)

BUILD    ?= build
CC       ?= cc
PKGS     ?= libmicrohttpd jansson sqlite3 libutf8proc libxml-2.0 libsystemd libcurl friso libpcre2-8 libpq
OPT      ?= -O2
SAN      ?=
WARN     := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
            -Wpointer-arith -Wcast-qual -Wformat=2 -Wvla
CFLAGS   ?= $(OPT) -g
# The scoring core may use only these (no HTTP, no SQL, no systemd); friso is the
# Chinese word segmenter of recall (core/zhseg.c, Debian libfriso-dev + friso-dict),
# PCRE2 runs the alam2021 reference script's term patterns (core/compat/alam2021_re.c).
CORE_PKGS ?= libutf8proc libxml-2.0 jansson friso libpcre2-8
# MeCab (ja-mecab tokenizer, core/mecab.c) ships mecab-config, not a .pc file.
# Its header is also named mecab.h, so core/mecab.c includes it by full path.
MECAB_INC  := $(shell mecab-config --inc-dir 2>/dev/null || echo /usr/include)
MECAB_LIBS ?= -lmecab
LDFLAGS  ?=
DEPFLAGS  = -MMD -MP
# pkg-config failing (a package missing) stops the build with its message,
# except for the targets that need none or first install them (deps, then a
# recursive make that checks again).
NOPKG_GOALS := deps clean lint run test asan valgrind valgrind-ci soak fuzz bench bench-core bench-scale bench-pg \
               test-fleet
ifneq ($(filter-out $(NOPKG_GOALS),$(or $(MAKECMDGOALS),all)),)
PKG_CFLAGS  := $(shell pkg-config --cflags $(PKGS) 2>&1 || echo PKGFAIL)
PKG_LIBS    := $(shell pkg-config --libs $(PKGS) 2>&1 || echo PKGFAIL)
CORE_PKG_CFLAGS := $(shell pkg-config --cflags $(CORE_PKGS) 2>&1 || echo PKGFAIL)
ifneq ($(findstring PKGFAIL,$(PKG_CFLAGS) $(PKG_LIBS) $(CORE_PKG_CFLAGS)),)
$(error pkg-config failed for "$(PKGS)": $(filter-out PKGFAIL,$(PKG_CFLAGS)) — run `make deps` (tools/deps.sh))
endif
endif
BASE_CFLAGS = -std=c11 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE $(WARN) $(CFLAGS) $(SAN) $(DEPFLAGS)
# core/ sees only its own headers and its libraries: server/ includes fail.
CORE_CFLAGS = $(BASE_CFLAGS) -Icore $(CORE_PKG_CFLAGS) -DAM_MECAB_SYS_H='"$(MECAB_INC)/mecab.h"'
ALL_CFLAGS  = $(BASE_CFLAGS) -Icore -I$(BUILD)/gen $(PKG_CFLAGS)
LDLIBS   := $(PKG_LIBS) -lstemmer $(MECAB_LIBS) -lpthread -lm

CORE_SRC := $(wildcard core/*.c core/compat/*.c)
GEN_OBJ  ?= $(BUILD)/gen/stopwords_data.o $(BUILD)/gen/lang_data.o
CORE_OBJ := $(patsubst %.c,$(BUILD)/%.o,$(CORE_SRC)) $(GEN_OBJ)
# server/ by layer (docs/architecture.md): base, store, live, http, api,
# output; cli/ the command line. Headers are found by name in each.
SRV_DIRS := server server/base server/store server/live server/http server/api server/output cli
SRV_INC  := $(patsubst %,-I%,$(SRV_DIRS))
SRV_SRC  := $(filter-out cli/main.c,$(wildcard $(patsubst %,%/*.c,$(SRV_DIRS))))
SRV_OBJ  := $(patsubst %.c,$(BUILD)/%.o,$(SRV_SRC)) $(BUILD)/gen/embedded.o
# Files compiled into the binary (migrations, the API contract, the dashboard).
EMBED    := $(sort $(wildcard schema/*.sql)) $(sort $(wildcard schema/pg/*.sql)) openapi.yaml $(sort $(wildcard server/dashboard/*.*))
UT_SRC   := $(wildcard tests/unit/test_*.c)
UT_BIN   := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(UT_SRC))
STOPWORD_DATA := $(wildcard data/stopwords/snowball/*.stop.txt) data/stopwords/stopwords-iso/stopwords-iso.json

.PHONY: all deps run test check unit asan clean bench-core lint screenshots
all: adaptmon

adaptmon: $(BUILD)/adaptmon
	cp $< $@

$(BUILD)/adaptmon: $(BUILD)/cli/main.o $(BUILD)/libamserver.a $(BUILD)/libamcore.a
	$(CC) $(SAN) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/libamserver.a: $(SRV_OBJ)
	rm -f $@
	ar rcs $@ $^

$(BUILD)/tools/embed: tools/embed.c
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -D_POSIX_C_SOURCE=200809L $(WARN) -O1 -o $@ $<

$(BUILD)/gen/embedded.c: $(BUILD)/tools/embed $(EMBED) Makefile
	@mkdir -p $(dir $@)
	$(BUILD)/tools/embed $@ $(EMBED)

$(BUILD)/gen/embedded.o: $(BUILD)/gen/embedded.c
	$(CC) $(ALL_CFLAGS) $(SRV_INC) -c -o $@ $<

$(BUILD)/libamcore.a: $(CORE_OBJ)
	rm -f $@
	ar rcs $@ $^

# Header dependencies come from the compiler (-MMD: $(BUILD)/**/*.d); the
# Makefile itself is one too (flags change, and an object built before -MMD
# has no .d file yet).
$(BUILD)/core/%.o: core/%.c Makefile
	@mkdir -p $(dir $@)
	$(CC) $(CORE_CFLAGS) -c -o $@ $<

$(BUILD)/%.o: %.c Makefile
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(SRV_INC) -c -o $@ $<

# Stopword lists are compiled in from the shipped data files.
$(BUILD)/tools/gen_stopwords: tools/gen_stopwords.c
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -D_POSIX_C_SOURCE=200809L $(WARN) -O1 $(shell pkg-config --cflags jansson) -o $@ $< $(shell pkg-config --libs jansson)

$(BUILD)/gen/stopwords_data.c: $(BUILD)/tools/gen_stopwords $(STOPWORD_DATA)
	@mkdir -p $(dir $@)
	$(BUILD)/tools/gen_stopwords data/stopwords $@

$(BUILD)/gen/stopwords_data.o: $(BUILD)/gen/stopwords_data.c
	$(CC) $(CORE_CFLAGS) -c -o $@ $<

# The language-code table (core/lang.c) is generated from the ISO 639 files
# of the Debian package iso-codes (LGPL-2.1-or-later; tools/deps.sh).
ISO_CODES ?= /usr/share/iso-codes/json
$(BUILD)/tools/gen_langs: tools/gen_langs.c
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -D_POSIX_C_SOURCE=200809L $(WARN) -O1 $(shell pkg-config --cflags jansson) -o $@ $< $(shell pkg-config --libs jansson)

$(BUILD)/gen/lang_data.c: $(BUILD)/tools/gen_langs $(ISO_CODES)/iso_639-3.json $(ISO_CODES)/iso_639-2.json
	@mkdir -p $(dir $@)
	$(BUILD)/tools/gen_langs $(ISO_CODES) $@

$(BUILD)/gen/lang_data.o: $(BUILD)/gen/lang_data.c
	$(CC) $(CORE_CFLAGS) -c -o $@ $<

$(BUILD)/tests/testutil.o: tests/unit/testutil.c Makefile
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Itests/unit -DAM_SRCDIR='"$(CURDIR)"' -c -o $@ $<

# The store's unit tests (test_store*.c) share tests/unit/store_fixture.c.
UT_STORE := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(filter tests/unit/test_store%.c,$(UT_SRC)))
$(UT_STORE): UT_EXTRA = $(BUILD)/tests/store_fixture.o
$(UT_STORE): $(BUILD)/tests/store_fixture.o

$(BUILD)/tests/store_fixture.o: tests/unit/store_fixture.c tests/unit/store_fixture.h Makefile
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(SRV_INC) -Itests/unit -c -o $@ $<

$(BUILD)/tests/test_%: tests/unit/test_%.c Makefile $(BUILD)/tests/testutil.o $(BUILD)/libamserver.a $(BUILD)/libamcore.a
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(SRV_INC) -Itests/unit -Wno-missing-prototypes -o $@ $< $(BUILD)/tests/testutil.o $(UT_EXTRA) \
	    $(BUILD)/libamserver.a $(BUILD)/libamcore.a -lcmocka $(LDLIBS) $(SAN)

unit: $(UT_BIN)

deps:
	@sh tools/deps.sh

# deps may install packages, so the build is a second make that runs
# pkg-config after it (this one skipped it: run is in NOPKG_GOALS).
run: deps
	$(MAKE) all
	./adaptmon serve

# lint after the build, not beside it: under -j its house check would read
# objects still being written (it runs when $(BUILD)/adaptmon exists)
test: deps
	$(MAKE) all unit
	$(MAKE) lint
	@BUILD=$(BUILD) sh tests/run.sh

# The inner loop: what needs neither a browser nor HAProxy, in a few minutes.
CHECK_SUITES ?= tests/cli/test_*.py tests/api/test_*.py
check: all unit
	@BUILD=$(BUILD) SUITES="$(CHECK_SUITES)" sh tests/run.sh

asan: deps
	$(MAKE) BUILD=build-asan OPT=-O1 SAN="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all" \
	    build-asan/adaptmon unit
	@ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
	    BUILD=build-asan ADAPTMON=build-asan/adaptmon sh tests/run.sh

$(BUILD)/bench/bench_core: bench/bench_core.c $(BUILD)/libamcore.a
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -o $@ $< $(BUILD)/libamcore.a $(LDLIBS)

bench-core: deps
	$(MAKE) all $(BUILD)/bench/bench_core
	sh bench/core.sh $(BUILD)/bench/bench_core

screenshots: all
	rm -f docs/screenshots/*.png
	DASH_SHOTS=$(CURDIR)/docs/screenshots APITEST_ONLY=scenario python3 tests/browser/test_dashboard.py

lint:
	clang-format --dry-run --Werror core/*.[ch] core/compat/*.[ch] $(wildcard $(patsubst %,%/*.[ch],$(SRV_DIRS))) tools/*.c bench/*.c fuzz/*.[ch] tests/unit/*.[ch] python/adaptmon/*.c
	cppcheck --quiet --error-exitcode=1 --enable=warning,portability --std=c11 --inline-suppr -Icore $(SRV_INC) core server cli
	if [ -f $(BUILD)/adaptmon ]; then python3 tools/house.py --build $(BUILD); fi

# The house rules (issue 26): no import circle between source files, no C file
# over 1,000 lines without an "over 1,000 lines because" line at its top
# (tools/house.py reads the objects of $(BUILD), so it runs after the build:
# `make lint` runs it when the objects are there, as `make test` builds first).
.PHONY: house
house: all
	python3 tools/house.py --build $(BUILD)

clean:
	rm -rf build build-asan adaptmon

# ---- reliability: fuzzing, soak, valgrind (tests/RELIABILITY.md) ----------
#   make fuzz       libFuzzer harnesses (clang, ASan+UBSan), FUZZ_SECONDS each
#   make soak       long crash/concurrency run (tests/reliability/soak.py)
#   make valgrind   the test suite with the unit binaries and the server under valgrind
#   make valgrind-ci  the same for the suites of tests/valgrind-ci.txt (CI)
.PHONY: fuzz soak valgrind valgrind-ci fuzz-replay
FUZZ_SECONDS ?= 60
FUZZ_NAMES   := $(patsubst fuzz/fuzz_%.c,%,$(wildcard fuzz/fuzz_*.c))
FUZZ_REPLAY  := $(patsubst %,$(BUILD)/fuzz/replay_%,$(FUZZ_NAMES))

# Replay builds of the harnesses (fuzz/replay.c is main; same compiler and
# sanitizers as the rest of $(BUILD)): tests/reliability/test_fuzz_replay.py
# feeds them the seed corpus.
$(BUILD)/fuzz/replay_%: fuzz/fuzz_%.c fuzz/replay.c fuzz/fuzz.h $(BUILD)/libamserver.a $(BUILD)/libamcore.a
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(SRV_INC) -Ifuzz -o $@ fuzz/fuzz_$*.c fuzz/replay.c \
	    $(BUILD)/libamserver.a $(BUILD)/libamcore.a $(LDLIBS) $(SAN)

fuzz-replay: $(FUZZ_REPLAY)
unit: $(FUZZ_REPLAY)

fuzz: deps
	FUZZ_SECONDS=$(FUZZ_SECONDS) sh fuzz/run.sh

soak: deps
	$(MAKE) all
	python3 tests/reliability/soak.py

valgrind: deps
	$(MAKE) BUILD=build-valgrind OPT=-O1 build-valgrind/adaptmon unit
	@BUILD=build-valgrind ADAPTMON=build-valgrind/adaptmon VALGRIND=1 sh tests/run.sh

# CI's valgrind stage (.ci/run): every unit binary and the suites listed in
# tests/valgrind-ci.txt (why those: its header)
valgrind-ci: deps
	$(MAKE) BUILD=build-valgrind OPT=-O1 build-valgrind/adaptmon unit
	@BUILD=build-valgrind ADAPTMON=build-valgrind/adaptmon VALGRIND=1 JOBS=$(or $(JOBS),2) \
	    VALGRIND_SUITES="$$(sed 's/#.*//' tests/valgrind-ci.txt)" sh tests/run.sh

# ---- service benchmarks (bench/run.py, bench/scale.py, bench/cpu.py: CPU per
# POST against the echo's CPU per request; method and figures: bench/README.md) ----
.PHONY: bench bench-scale
$(BUILD)/bench/http_ceiling: bench/http_ceiling.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -o $@ $< $(LDLIBS)

$(BUILD)/bench/sqlite_ceiling: bench/sqlite_ceiling.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -o $@ $< $(LDLIBS)

bench: deps
	$(MAKE) $(BUILD)/adaptmon $(BUILD)/bench/http_ceiling $(BUILD)/bench/sqlite_ceiling
	python3 bench/run.py $(BUILD)/adaptmon $(BUILD)/bench/http_ceiling $(BUILD)/bench/sqlite_ceiling $(BUILD)/bench/out
	python3 bench/scale.py $(BUILD)/adaptmon $(BUILD)/bench/out
	python3 bench/memory.py $(BUILD)/adaptmon | tee $(BUILD)/bench/out/memory.txt
	@echo "== CPU per POST against the echo's CPU per request, same run (bench/cpu.py)"
	python3 bench/cpu.py $(BUILD)/adaptmon $(BUILD)/bench/http_ceiling --latency | tee $(BUILD)/bench/out/cpu-normal.txt
	python3 bench/cpu.py $(BUILD)/adaptmon $(BUILD)/bench/http_ceiling --durability full | tee $(BUILD)/bench/out/cpu-full.txt

# cost against input size with adversarial inputs, every route and offline
# profile (bench/scale.py; report: bench/README.md, plot: bench/scale.svg)
bench-scale: deps
	$(MAKE) $(BUILD)/adaptmon
	python3 bench/scale.py $(BUILD)/adaptmon $(BUILD)/bench/out

# PostgreSQL nodes and committers beside SQLite, interleaved (bench/pg_nodes.py;
# report: bench/README.md "PostgreSQL: nodes and committers"; RUNS, DUR, CONFIGS)
.PHONY: bench-pg
bench-pg: deps
	$(MAKE) $(BUILD)/adaptmon
	python3 bench/pg_nodes.py $(BUILD)/adaptmon $(BUILD)/bench/out

# ---- fleet: deployment files and the sharded fleet (deploy/README.md) -------
#   make test-fleet   3 instances behind HAProxy, backup/restore, systemd unit,
#                     sd_notify, Kubernetes manifests, Dockerfile checks,
#                     Prometheus rules and Grafana queries against a live server,
#                     the Grafana dashboard against Grafana's own schema
.PHONY: test-fleet
test-fleet: deps
	$(MAKE) all
	python3 tests/fleet/test_deploy.py
	python3 tests/fleet/test_monitoring.py
	python3 tests/fleet/test_grafana_schema.py
	python3 tests/fleet/test_fleet.py

# ---- ha: PostgreSQL fault suite (tests/ha/, deploy/postgres/RUNBOOK.md) ----
#   make test-ha            the checker's own test, every run of tests/ha/faults.py
#                           with two adaptmon nodes as the writers (537 s measured
#                           at load average 10-15; see tests/RELIABILITY.md) and the
#                           pg_auto_failover test with 2 and 3 data nodes (about
#                           1.5 min each): about 12 min on that busy machine
#   make test-ha HA_SHORT=1 primary kill, standby kill, control (110 s measured)
#   make test-ha HA_LONG=1  also primary_kill_first, rejoin_nostream and the 10-minute
#                           soak (faults in turn under load; about 25 min)
#   make test-ha HA_SOAK=N  the default suite, then only the soak for N seconds
# Needs root (tmpfs, iptables; PostgreSQL itself runs as nobody). `make test` runs the
# checker's own test and the HA_SHORT variant (tests/ha/test_faults_short.py, about
# 2 min); the long fault runs have this target of their own.
# `python3 tests/ha/faults.py --sql` runs the plan with the stand-in writer instead.
.PHONY: test-ha
HA_SHORT ?=
HA_LONG ?=
HA_SOAK ?=
test-ha: deps
	$(MAKE) all
	python3 tests/ha/test_checker.py
	python3 tests/ha/faults.py $(if $(HA_SHORT),--short,$(if $(HA_LONG),--long))
	$(if $(HA_SHORT),,python3 tests/ha/autofailover.py)
	$(if $(HA_SHORT),,python3 tests/ha/autofailover.py --data-nodes 3)
	$(if $(HA_SOAK),python3 tests/ha/faults.py --soak $(HA_SOAK))

# ---- mutants: the tests still see the bugs they were written against ------
#   make mutants              every tests/mutants/*.patch, one at a time, in a copy
#   make mutants MUTANTS="a b"  only these (names without .patch)
# (tools/mutants.sh: each patch's header names its bug and its test)
.PHONY: mutants
MUTANTS ?=
mutants:
	BUILD=$(BUILD) sh tools/mutants.sh $(MUTANTS)

# ---- print-VAR: a variable's value (python/setup.py reads LDLIBS from here,
#      so the Python extension links what the binary links)
print-%:
	@echo '$($*)'

# compiler-written header dependencies (DEPFLAGS)
-include $(wildcard $(BUILD)/*/*.d $(BUILD)/*/*/*.d)

# ---- PostgreSQL: the suites against the PostgreSQL driver (issue 28) --------
#   make test      runs the suites of tests/pg-suites.txt a second time against a
#                  PostgreSQL primary with one synchronous standby (tests/run.sh's
#                  PostgreSQL pass: PG_JOBS=2 suites at once, smaller sizes where the
#                  store's path is the same at any size; the file's header says which
#                  suites are left out and why)
#   make test-pg   the store's PostgreSQL tests (schema and statements, two nodes on
#                  one database, --pg-require-sync; test_pg_rewrites; test_pg_ops: a
#                  primary + two standbys, /readyz and /metrics on standbys that do not
#                  stream, every write route refused, --db password redacted) and every
#                  suite of PG_SUITES (the pass's, at their full sizes)
#                  against the same kind of cluster (tests/pgutil.py start: loopback, as
#                  nobody, under /tmp); needs postgresql-15 (tools/deps.sh)
PG_SUITES ?= $(shell sed -e 's/^\#time: *//' -e 's/\#.*//' tests/pg-suites.txt)
.PHONY: test-pg
test-pg: all
	python3 tests/store/test_pg_schema.py
	python3 tests/store/test_pg_nodes.py
	python3 tests/store/test_pg_rewrites.py
	python3 tests/store/test_pg_ops.py
	@st=$$(mktemp); trap 'python3 tests/pgutil.py stop '"$$st"'; rm -f '"$$st" EXIT; \
	port=$$(python3 tests/pgutil.py start "$$st") || exit 1; \
	bad=""; for s in $(PG_SUITES); do echo "== $$s (PostgreSQL)"; \
	    ADAPTMON_TEST_PG=1 ADAPTMON_TEST_PG_SHARED=$$port python3 $$s || bad="$$bad $$s"; done; \
	[ -z "$$bad" ] || { echo "!! failed against PostgreSQL:$$bad"; exit 1; }
