/* What one region costs a host runtime: each construct entered REPS times around a loop of
   64 iterations (almost no work), wall and CPU microseconds per region. Built by
   benches/real_code.rs with each compiler; prints "label<TAB>wall<TAB>cpu<TAB>system". */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

#define N 64
static double a[N], b[N], c[N], d[N], e[N], f[N], g[N], h[N], p[N], q[N];

static double seconds(struct timeval t) { return t.tv_sec + 1e-6 * t.tv_usec; }
static double wall(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}
static double w0, u0, s0;
static void start(void) {
  struct rusage r;
  getrusage(RUSAGE_SELF, &r);
  u0 = seconds(r.ru_utime);
  s0 = seconds(r.ru_stime);
  w0 = wall();
}
static void stop(const char *label, int reps) {
  double w = wall() - w0;
  struct rusage r;
  getrusage(RUSAGE_SELF, &r);
  double s = seconds(r.ru_stime) - s0, u = seconds(r.ru_utime) - u0;
  printf("%s\t%.2f\t%.2f\t%.2f\n", label, 1e6 * w / reps, 1e6 * (u + s) / reps, 1e6 * s / reps);
}

int main(int argc, char **argv) {
  int reps = argc > 1 ? atoi(argv[1]) : 20000, n = N;
  double x = 0.5;
#pragma omp target enter data map(to: a, b, c, d, e, f, g, h, p, q)
  start();
  for (int r = 0; r < reps; r++) {
#pragma omp parallel for
    for (int i = 0; i < n; i++) a[i] += x;
  }
  stop("parallel for (no target)", reps);
  start();
  for (int r = 0; r < reps; r++) {
#pragma omp target teams distribute parallel for
    for (int i = 0; i < n; i++) a[i] += x;
  }
  stop("target teams distribute parallel for", reps);
  start();
  for (int r = 0; r < reps; r++) {
#pragma omp target data map(alloc: a, b, c, d, e, f, g, h, p, q)
#pragma omp target teams distribute parallel for
    for (int i = 0; i < n; i++)
      a[i] += b[i] + c[i] + d[i] + e[i] + f[i] + g[i] + h[i] + p[i] + q[i] + x;
  }
  stop("  same, 10 arrays in a target data", reps);
  start();
  for (int r = 0; r < reps; r++) {
#pragma omp target teams distribute parallel for if(parallel: !omp_is_initial_device())
    for (int i = 0; i < n; i++) a[i] += x;
  }
  stop("  same, if(parallel: !omp_is_initial_device())", reps);
  start();
  for (int r = 0; r < reps; r++) {
#pragma omp target teams distribute
    for (int i = 0; i < n; i++) a[i] += x;
  }
  stop("target teams distribute (no parallel)", reps);
#pragma omp target exit data map(from: a) map(release: b, c, d, e, f, g, h, p, q)
  return a[0] == 0.0;
}
