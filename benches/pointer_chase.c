/* The machine's cost of a random memory access, for reading the cost per event of large fabrics
 * (docs/performance.md, "What a miss costs on this machine").
 *
 *   cc -O2 benches/pointer_chase.c -o /tmp/pointer_chase
 *   /tmp/pointer_chase MB PAGES CHAINS      e.g. /tmp/pointer_chase 165 2M 16
 *
 * A buffer of MB megabytes is one random cycle through all of its 64-byte lines; CHAINS
 * independent walks along that cycle are advanced in turn, so each load depends on the previous
 * load of its own walk only: one walk gives the latency of a miss, several give how many misses
 * the core keeps in flight. PAGES is 4K (the default pages) or 2M (the buffer advised for large
 * pages with madvise, as qcnsim advises its large arrays). Prints nanoseconds per load. */
#define _DEFAULT_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

static uint64_t state = 88172645463325252ull;

static uint64_t xorshift(void) {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
}

int main(int argc, char **argv) {
    if (argc != 4 || (strcmp(argv[2], "4K") && strcmp(argv[2], "2M")) || atoi(argv[3]) < 1 || atoi(argv[3]) > 64) {
        fprintf(stderr, "usage: %s MB 4K|2M CHAINS(1-64)\n", argv[0]);
        return 2;
    }
    size_t mb = strtoul(argv[1], NULL, 10), page = (size_t)2 << 20;
    int large = !strcmp(argv[2], "2M"), k = atoi(argv[3]);
    size_t n = mb * 1024 * 1024 / 64, bytes = (n * 64 + page - 1) / page * page;
    char *buf = aligned_alloc(page, bytes);
    size_t *order = malloc(n * sizeof(size_t));
    if (!buf || !order || n < (size_t)k) {
        fprintf(stderr, "cannot allocate %zu MB\n", mb);
        return 1;
    }
    if (large) madvise(buf, bytes, MADV_HUGEPAGE);
    for (size_t i = 0; i < n; i++) order[i] = i;
    for (size_t i = n - 1; i > 0; i--) {
        size_t j = xorshift() % (i + 1), t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
    for (size_t i = 0; i < n; i++) *(char **)(buf + order[i] * 64) = buf + order[(i + 1) % n] * 64;
    char *at[64];
    for (int c = 0; c < k; c++) at[c] = buf + order[n / k * c] * 64;
    size_t rounds = 40000000 / k;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (size_t i = 0; i < rounds; i++)
        for (int c = 0; c < k; c++) at[c] = *(char **)at[c];
    clock_gettime(CLOCK_MONOTONIC, &t1);
    uintptr_t keep = 0;
    for (int c = 0; c < k; c++) keep ^= (uintptr_t)at[c];
    double ns = (t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec);
    printf("%zu MB, %s pages, %d chain(s): %.1f ns per load%s\n", mb, argv[2], k, ns / (double)(rounds * k),
           keep == 1 ? " " : "");
    return 0;
}
