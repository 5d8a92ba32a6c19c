/*
 * replay.c — main() of the replay build of a harness: feeds every file named
 * on the command line (directories: every regular file in them, sorted) to
 * LLVMFuzzerTestOneInput once and prints "replayed N inputs". A crash, a
 * sanitizer report or a valgrind error fails the run; so does an empty
 * corpus (exit 2) or an unreadable file (exit 1).
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

/* Reads the whole file into a new buffer (caller frees); NULL on error. */
static unsigned char *fz_read(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 4096, n = 0;
    unsigned char *buf = malloc(cap);
    size_t got;
    while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) {
            unsigned char *nb = realloc(buf, cap * 2);
            if (!nb) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = nb;
            cap *= 2;
        }
    }
    fclose(f);
    *len = n;
    return buf;
}

/* Runs one file; returns 0 or -1 when it cannot be read. */
static int fz_run_file(const char *path)
{
    size_t len = 0;
    unsigned char *buf = fz_read(path, &len);
    if (!buf) {
        fprintf(stderr, "replay: cannot read %s\n", path);
        return -1;
    }
    /* an exact-size copy, so ASan catches a read one past the end */
    unsigned char *exact = malloc(len ? len : 1);
    if (!exact) {
        free(buf);
        return -1;
    }
    memcpy(exact, buf, len);
    free(buf);
    LLVMFuzzerTestOneInput(exact, len);
    free(exact);
    return 0;
}

static int fz_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Runs every regular file of a directory in name order; returns the count
 * run or -1 on error. */
static long fz_run_dir(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    char **names = NULL;
    size_t n = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 64;
            char **nn = realloc(names, cap * sizeof *names);
            if (!nn)
                break;
            names = nn;
        }
        names[n++] = strdup(e->d_name);
    }
    closedir(d);
    qsort(names, n, sizeof *names, fz_cmp);
    long count = 0;
    for (size_t i = 0; i < n; i++) {
        size_t plen = strlen(dir) + strlen(names[i]) + 2;
        char *p = malloc(plen);
        snprintf(p, plen, "%s/%s", dir, names[i]);
        struct stat st;
        if (stat(p, &st) == 0 && S_ISREG(st.st_mode)) {
            if (fz_run_file(p) != 0)
                count = -1;
            else if (count >= 0)
                count++;
        }
        free(p);
        free(names[i]);
    }
    free(names);
    return count;
}

int main(int argc, char **argv)
{
    long total = 0;
    int bad = 0;
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) != 0) {
            fprintf(stderr, "replay: %s: no such file or directory\n", argv[i]);
            bad = 1;
            continue;
        }
        if (S_ISDIR(st.st_mode)) {
            long c = fz_run_dir(argv[i]);
            if (c < 0)
                bad = 1;
            else
                total += c;
        } else if (fz_run_file(argv[i]) == 0) {
            total++;
        } else {
            bad = 1;
        }
    }
    printf("replayed %ld inputs\n", total);
    if (bad)
        return 1;
    return total > 0 ? 0 : 2;
}
