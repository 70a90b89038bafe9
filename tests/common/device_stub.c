/* Sequential stand-in for LLVM's GPU device runtime (DeviceRTL): it lets flang-22 offload to
 * the x86_64 host device of libomptarget, which gives target regions their own copy of
 * mapped data (a wrong map gives a wrong result). One team of one thread: every worksharing
 * loop runs all its iterations in order, or in reverse order when
 * ACC2OMP_DEVICE_LOOP_ORDER=reverse (a loop with a dependence between iterations that was
 * made parallel then gives a different result). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Hidden: the device image (linked -Bsymbolic with this object) calls these, never the host
 * libomp's omp_get_* of the same names. */
#define API __attribute__((visibility("hidden")))

typedef void ident_t;
typedef void (*microtask_t)();

static int level;

static int reverse(void) {
  static int order = -1;
  if (order < 0) {
    const char *v = getenv("ACC2OMP_DEVICE_LOOP_ORDER");
    order = v && strcmp(v, "reverse") == 0;
  }
  return order;
}

API int32_t __kmpc_target_init(void *kernel_env, void *launch_env) {
  (void)kernel_env;
  (void)launch_env;
  return -1;
}
API void __kmpc_target_deinit(void) {}

/* The outlined function takes the thread ids and the shared arguments (flang passes them in
 * one structure: one argument). */
static void invoke(microtask_t fn, void **a, int64_t n) {
  int32_t tid = 0, bound = 0;
  int32_t *t = &tid, *b = &bound;
  switch (n) {
  case 0: fn(t, b); break;
  case 1: fn(t, b, a[0]); break;
  case 2: fn(t, b, a[0], a[1]); break;
  case 3: fn(t, b, a[0], a[1], a[2]); break;
  case 4: fn(t, b, a[0], a[1], a[2], a[3]); break;
  case 5: fn(t, b, a[0], a[1], a[2], a[3], a[4]); break;
  case 6: fn(t, b, a[0], a[1], a[2], a[3], a[4], a[5]); break;
  case 7: fn(t, b, a[0], a[1], a[2], a[3], a[4], a[5], a[6]); break;
  case 8: fn(t, b, a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7]); break;
  default:
    fprintf(stderr, "device stub: parallel region with %ld arguments\n", (long)n);
    abort();
  }
}

API void __kmpc_parallel_51(ident_t *loc, int32_t gtid, int32_t if_expr, int32_t num_threads,
                            int proc_bind, void *fn, void *wrapper, void **args, int64_t nargs) {
  (void)loc; (void)gtid; (void)if_expr; (void)num_threads; (void)proc_bind; (void)wrapper;
  level++;
  invoke((microtask_t)fn, args, nargs);
  level--;
}

API void __kmpc_parallel_60(ident_t *loc, int32_t gtid, int32_t if_expr, int32_t num_threads,
                            int proc_bind, void *fn, void *wrapper, void **args, int64_t nargs,
                            int32_t strict) {
  (void)strict;
  __kmpc_parallel_51(loc, gtid, if_expr, num_threads, proc_bind, fn, wrapper, args, nargs);
}

/* Loops: the compiler passes the trip count; the body takes the normalised iteration. */
#define LOOPS(SUF, T)                                                                         \
  static void run##SUF(void (*body)(T, void *), void *arg, T n) {                            \
    if (reverse())                                                                            \
      for (T i = n; i > 0; i--) body(i - 1, arg);                                             \
    else                                                                                      \
      for (T i = 0; i < n; i++) body(i, arg);                                                 \
  }                                                                                           \
  API void __kmpc_for_static_loop##SUF(ident_t *loc, void (*body)(T, void *), void *arg, T n, \
                                       T threads, T chunk, uint8_t one) {                     \
    (void)loc; (void)threads; (void)chunk; (void)one;                                         \
    run##SUF(body, arg, n);                                                                   \
  }                                                                                           \
  API void __kmpc_distribute_static_loop##SUF(ident_t *loc, void (*body)(T, void *),          \
                                              void *arg, T n, T chunk, uint8_t one) {         \
    (void)loc; (void)chunk; (void)one;                                                        \
    run##SUF(body, arg, n);                                                                   \
  }                                                                                           \
  API void __kmpc_distribute_for_static_loop##SUF(ident_t *loc, void (*body)(T, void *),      \
                                                  void *arg, T n, T threads, T block_chunk,   \
                                                  T thread_chunk, uint8_t one) {              \
    (void)loc; (void)threads; (void)block_chunk; (void)thread_chunk; (void)one;               \
    run##SUF(body, arg, n);                                                                   \
  }
LOOPS(_4, int32_t)
LOOPS(_4u, uint32_t)
LOOPS(_8, int64_t)
LOOPS(_8u, uint64_t)

/* One thread and one team: each combines its own value into the original. */
API int32_t __kmpc_nvptx_parallel_reduce_nowait_v2(ident_t *loc, uint64_t size, void *data,
                                                   void *shuffle, void *copy) {
  (void)loc; (void)size; (void)data; (void)shuffle; (void)copy;
  return 1;
}
API int32_t __kmpc_nvptx_teams_reduce_nowait_v2(ident_t *loc, void *buffer, uint32_t records,
                                                uint64_t size, void *data, void *shuffle,
                                                void *copy, void *l2g, void *l2gr, void *g2l,
                                                void *g2lr) {
  (void)loc; (void)buffer; (void)records; (void)size; (void)data; (void)shuffle; (void)copy;
  (void)l2g; (void)l2gr; (void)g2l; (void)g2lr;
  return 1;
}

API void *__kmpc_alloc_shared(uint64_t size) {
  void *p = malloc(size ? size : 1);
  if (!p) abort();
  return p;
}
API void __kmpc_free_shared(void *p, uint64_t size) {
  (void)size;
  free(p);
}

API void __kmpc_barrier(ident_t *loc, int32_t gtid) { (void)loc; (void)gtid; }
API void __kmpc_barrier_simple_spmd(ident_t *loc, int32_t gtid) { (void)loc; (void)gtid; }
API void __kmpc_flush(ident_t *loc) { (void)loc; }
API int32_t __kmpc_global_thread_num(ident_t *loc) { (void)loc; return 0; }

API int omp_get_thread_num(void) { return 0; }
API int omp_get_num_threads(void) { return 1; }
API int omp_get_max_threads(void) { return 1; }
API int omp_get_team_num(void) { return 0; }
API int omp_get_num_teams(void) { return 1; }
API int omp_get_level(void) { return level; }
API int omp_in_parallel(void) { return level > 0; }
API int omp_is_initial_device(void) { return 0; }
