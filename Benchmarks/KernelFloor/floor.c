// The kernel's floor for one fan-out on this machine: what a server that does nothing but
// write(2) costs, so Herald's fan-out latency can be read against it.
//
//   gcc -O2 -o floor floor.c && ./floor CONNECTIONS ROUNDS WRITER_CPU READER_CPU [BYTES]
//
// The parent accepts CONNECTIONS loopback TCP connections from a child process (one process
// each, so 10,000 connections fit in 20,000 open files per process), then ROUNDS times, one
// second apart, writes one BYTES-byte message (default 128: a WebSocket frame carrying a
// 100-byte Socket.IO event) to every socket, on WRITER_CPU, with TCP_NODELAY as Herald sets.
// Each message carries the time its round started; the child, on READER_CPU, reads with
// epoll like the load generator and records receive time minus that start: the same
// publish-to-receive latency the generator reports, for a "server" with no work of its own.
// Prints one JSON line (the format of Benchmarks/run.sh's results.jsonl).
//
//   floor reader PORT CONNECTIONS ROUNDS READER_CPU BYTES [LABEL]
//
// is the reader alone, for another server written to the same rules (the SwiftNIO floor,
// `Benchmarks/SocketIOLoad/Sources/NIOFloor`): it connects to 127.0.0.1:PORT and, once it
// has every message, reads that server's write cost per socket (µs, text) from stdin.
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void pin(int cpu) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (sched_setaffinity(0, sizeof set, &set) != 0) { perror("sched_setaffinity"); exit(1); }
}

static int by_value(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void die(const char *what) { perror(what); exit(1); }

// The child: connects, reads every message and prints the JSON line (its stdout is the
// parent's), with the parent's write cost, which the parent sends when it is done.
// ready_fd < 0: the reader mode (no parent to tell; the cost comes on stdin, as text).
static void reader(int connections, int rounds, int cpu, int bytes, struct sockaddr_in server, int ready_fd,
                   const char *test, const char *label) {
    pin(cpu);
    int *fds = malloc(sizeof(int) * (size_t)connections);
    for (int i = 0; i < connections; i++) {
        fds[i] = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
        if (fds[i] < 0) die("socket");
        if (connect(fds[i], (struct sockaddr *)&server, sizeof server) != 0 && errno != EINPROGRESS) die("connect");
    }
    int ep = epoll_create1(0);
    for (int i = 0; i < connections; i++) {
        struct epoll_event e = {.events = EPOLLIN, .data.u32 = (uint32_t)i};
        if (epoll_ctl(ep, EPOLL_CTL_ADD, fds[i], &e) != 0) die("epoll_ctl");
    }
    char one = 1;
    if (ready_fd >= 0 && write(ready_fd, &one, 1) != 1) die("ready");
    size_t total = (size_t)connections * (size_t)rounds, got = 0;
    double *latency = malloc(sizeof(double) * total);
    char buffer[65536];
    struct epoll_event events[512];
    while (got < total) {
        int n = epoll_wait(ep, events, 512, 10000);
        if (n == 0) { fprintf(stderr, "floor: no data for 10 s (%zu of %zu received)\n", got, total); exit(1); }
        double t = now();
        for (int k = 0; k < n; k++) {
            ssize_t r = read(fds[events[k].data.u32], buffer, sizeof buffer);
            // The server went away (closed or crashed) before every message came: stop, rather
            // than spin on a socket that reads end-of-file forever.
            if (r == 0) { fprintf(stderr, "floor: the server closed a connection (%zu of %zu received)\n", got, total); exit(1); }
            if (r < 0 && errno != EAGAIN) die("read");
            // Messages of one socket may arrive together: each BYTES-byte message counts.
            for (ssize_t off = 0; off + bytes <= r && got < total; off += bytes) {
                double start;
                memcpy(&start, buffer + off, sizeof start);
                latency[got++] = t - start;
            }
        }
    }
    qsort(latency, total, sizeof(double), by_value);
    double sum = 0;
    for (size_t i = 0; i < total; i++) sum += latency[i];
    double write_us_per_socket = 0;
    if (ready_fd >= 0) {
        if (read(ready_fd, &write_us_per_socket, sizeof write_us_per_socket) != sizeof write_us_per_socket) write_us_per_socket = -1;
    } else if (scanf("%lf", &write_us_per_socket) != 1) {
        write_us_per_socket = -1;
    }
    printf("{\"test\":\"%s\",\"label\":\"%s\",\"connections\":%d,\"rounds\":%d,"
           "\"message_bytes\":%d,\"deliveries\":%zu,\"write_us_per_socket\":%.3f,"
           "\"latency_p50_ms\":%.3f,\"latency_p90_ms\":%.3f,\"latency_p99_ms\":%.3f,\"latency_max_ms\":%.3f,\"latency_mean_ms\":%.3f}\n",
           test, label, connections, rounds, bytes, total, write_us_per_socket,
           latency[total / 2] * 1e3, latency[total * 9 / 10] * 1e3, latency[total * 99 / 100] * 1e3,
           latency[total - 1] * 1e3, sum / (double)total * 1e3);
    fflush(stdout);
    exit(0);
}

int main(int argc, char **argv) {
    if (argc >= 7 && strcmp(argv[1], "reader") == 0) {
        struct sockaddr_in server = {.sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(argv[2]))};
        server.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        reader(atoi(argv[3]), atoi(argv[4]), atoi(argv[5]), atoi(argv[6]), server, -1, "nio-floor",
               argc > 7 ? argv[7] : "SwiftNIO floor (writeAndFlush only)");
    }
    if (argc < 5) { fprintf(stderr, "usage: floor CONNECTIONS ROUNDS WRITER_CPU READER_CPU [BYTES]\n"); return 2; }
    int connections = atoi(argv[1]), rounds = atoi(argv[2]), writer_cpu = atoi(argv[3]), reader_cpu = atoi(argv[4]);
    int bytes = argc > 5 ? atoi(argv[5]) : 128;
    if (connections < 1 || rounds < 1 || bytes < (int)sizeof(double) || bytes > 4096) { fprintf(stderr, "floor: bad arguments\n"); return 2; }

    int listener = socket(AF_INET, SOCK_STREAM, 0), yes = 1;
    setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    struct sockaddr_in address = {.sin_family = AF_INET, .sin_port = 0};
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (bind(listener, (struct sockaddr *)&address, sizeof address) != 0) die("bind");
    if (listen(listener, 4096) != 0) die("listen");
    socklen_t length = sizeof address;
    getsockname(listener, (struct sockaddr *)&address, &length);

    int channel[2]; // the child says "connected"; the parent sends its write cost at the end
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, channel) != 0) die("socketpair");
    pid_t child = fork();
    if (child < 0) die("fork");
    if (child == 0) {
        close(listener);
        close(channel[0]);
        reader(connections, rounds, reader_cpu, bytes, address, channel[1], "floor", "kernel floor (C, write(2) only)");
    }
    close(channel[1]);
    pin(writer_cpu);
    int *fds = malloc(sizeof(int) * (size_t)connections);
    for (int i = 0; i < connections; i++) {
        fds[i] = accept(listener, NULL, NULL);
        if (fds[i] < 0) die("accept");
        setsockopt(fds[i], IPPROTO_TCP, TCP_NODELAY, &yes, sizeof yes);
    }
    char ready;
    if (read(channel[0], &ready, 1) != 1) die("child not ready");
    char *message = malloc((size_t)bytes);
    memset(message, 'x', (size_t)bytes);
    double writing = 0;
    for (int round = 0; round < rounds; round++) {
        sleep(1);
        double start = now();
        memcpy(message, &start, sizeof start);
        for (int i = 0; i < connections; i++)
            if (write(fds[i], message, (size_t)bytes) != bytes) die("write");
        writing += now() - start;
    }
    double write_us = writing / ((double)rounds * connections) * 1e6;
    if (write(channel[0], &write_us, sizeof write_us) != sizeof write_us) die("report");
    int status = 0;
    waitpid(child, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
