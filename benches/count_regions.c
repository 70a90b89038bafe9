/* Counts the OpenMP regions a program enters under GCC's libgomp (target, parallel, teams,
   target data) and the kernels it launches under LLVM's offloading runtime, printed on stderr
   at exit. Build and use:
     gcc -O2 -shared -fPIC benches/count_regions.c -o count_regions.so -ldl
     LD_PRELOAD=$PWD/count_regions.so ./lu.W.x
   (`parallel` under Clang's runtime is not counted: __kmpc_fork_call is variadic.) */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdarg.h>
static unsigned long n_target, n_parallel, n_teams, n_tgtdata, n_kernel, n_begin;
static void report(void) __attribute__((destructor));
static void report(void) {
  fprintf(stderr, "COUNT target=%lu parallel=%lu teams=%lu target_data=%lu | __tgt_target_kernel=%lu __tgt_target_data_begin=%lu\n",
          n_target, n_parallel, n_teams, n_tgtdata, n_kernel, n_begin);
}
#define REAL(name, ...) static void (*real)(__VA_ARGS__); if (!real) real = dlsym(RTLD_NEXT, name)
void GOMP_target_ext(int d, void (*fn)(void *), size_t m, void **h, size_t *s, unsigned short *k, unsigned f, void **dp, void **a) {
  REAL("GOMP_target_ext", int, void (*)(void *), size_t, void **, size_t *, unsigned short *, unsigned, void **, void **);
  n_target++; real(d, fn, m, h, s, k, f, dp, a);
}
void GOMP_parallel(void (*fn)(void *), void *data, unsigned n, unsigned flags) {
  REAL("GOMP_parallel", void (*)(void *), void *, unsigned, unsigned);
  n_parallel++; real(fn, data, n, flags);
}
_Bool GOMP_teams4(unsigned a, unsigned b, unsigned c, _Bool d) {
  static _Bool (*real)(unsigned, unsigned, unsigned, _Bool); if (!real) real = dlsym(RTLD_NEXT, "GOMP_teams4");
  n_teams++; return real(a, b, c, d);
}
void GOMP_target_data_ext(int d, size_t m, void **h, size_t *s, unsigned short *k) {
  REAL("GOMP_target_data_ext", int, size_t, void **, size_t *, unsigned short *);
  n_tgtdata++; real(d, m, h, s, k);
}
int __tgt_target_kernel(void *loc, long long dev, int nt, int tl, void *hp, void *args) {
  static int (*real)(void *, long long, int, int, void *, void *); if (!real) real = dlsym(RTLD_NEXT, "__tgt_target_kernel");
  n_kernel++; return real(loc, dev, nt, tl, hp, args);
}
void __tgt_target_data_begin_mapper(void *loc, long long dev, int n, void **b, void **p, long long *s, long long *t, void **nm, void **mp) {
  REAL("__tgt_target_data_begin_mapper", void *, long long, int, void **, void **, long long *, long long *, void **, void **);
  n_begin++; real(loc, dev, n, b, p, s, t, nm, mp);
}
