/*
 * fuzz.h — the entry point every harness fuzz/fuzz_*.c defines.
 *
 * Built two ways: with clang -fsanitize=fuzzer,address,undefined (libFuzzer
 * supplies main; `make fuzz`), and with the project's compiler and
 * fuzz/replay.c as main (`make test` replays the seed corpus through it).
 */
#ifndef AM_FUZZ_H
#define AM_FUZZ_H

#include <stddef.h>
#include <stdint.h>

/* Runs one input; data[0..size) is owned by the caller and need not be
 * NUL-terminated. Returns 0 (libFuzzer's convention). Must not leak. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#endif
