/* Argon2id verification baseline: what libsodium alone achieves on this
 * machine with the server's parameters, in as many threads as asked.
 * Usage: argon2_baseline OPSLIMIT MEMORY_KIB THREADS SECONDS
 * Prints one line: "verifications_per_second N". */
#include <pthread.h>
#include <sodium.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static char hash[crypto_pwhash_STRBYTES];
static const char *password = "correct horse battery staple 42";
static atomic_int stop_flag;
static atomic_long total;

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void *worker(void *arg) {
    (void)arg;
    long n = 0;
    while (!atomic_load(&stop_flag)) {
        if (crypto_pwhash_str_verify(hash, password, strlen(password)) != 0) {
            fprintf(stderr, "argon2_baseline: verification failed\n");
            exit(1);
        }
        n++;
    }
    atomic_fetch_add(&total, n);
    return NULL;
}

int main(int argc, char **argv) {
    if (argc != 5) {
        fprintf(stderr, "usage: %s OPSLIMIT MEMORY_KIB THREADS SECONDS\n", argv[0]);
        return 2;
    }
    unsigned long long ops = strtoull(argv[1], NULL, 10);
    size_t mem = (size_t)strtoull(argv[2], NULL, 10) * 1024;
    int threads = atoi(argv[3]);
    double seconds = atof(argv[4]);
    if (sodium_init() < 0 || threads < 1 || threads > 256) return 1;
    if (crypto_pwhash_str(hash, password, strlen(password), ops, mem) != 0) {
        fprintf(stderr, "argon2_baseline: crypto_pwhash_str failed\n");
        return 1;
    }
    pthread_t t[256];
    double start = now();
    for (int i = 0; i < threads; i++) pthread_create(&t[i], NULL, worker, NULL);
    struct timespec ts = {(time_t)seconds, (long)((seconds - (time_t)seconds) * 1e9)};
    nanosleep(&ts, NULL);
    atomic_store(&stop_flag, 1);
    for (int i = 0; i < threads; i++) pthread_join(t[i], NULL);
    double elapsed = now() - start; /* includes each thread's last, finished verification */
    printf("verifications_per_second %.1f\n", atomic_load(&total) / elapsed);
    return 0;
}
