/* Host-address guard for Clang's host offloading (LD_PRELOAD). On the x86_64 host device a
 * target region that dereferences a host pointer (a map that moved the pointer, not the data)
 * reads the host's memory and gives the right answer; on a GPU it is an illegal memory access.
 * This library serves the heap allocations the program itself makes (malloc and friends called
 * from the main executable) from pages of its own and makes them inaccessible while a target
 * region runs (`__tgt_target_kernel`, which the host device runs synchronously). Accesses the
 * offload runtime makes in that window (copying mapped data to and from the device: code of a
 * library loaded at start) open the allocation again; an access from code loaded later (the
 * device image holding the kernels) is reported, and the program dies of SIGSEGV.
 * Not guarded: stack and static arrays, memory allocated by libraries (C++ `new` included). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <unistd.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);
extern void __libc_free(void *);

#define POOL_BYTES (64UL << 30)
#define MAX_ALLOCS (1UL << 20)
#define MAX_OBJECTS 64

struct alloc {
  uintptr_t start, end;
};

static char *pool;
static size_t used;
static struct alloc *allocs; /* in the pool's first pages: sorted by start */
static size_t nallocs;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int running; /* target regions running now */
static size_t guarded; /* bytes of the pool made inaccessible */
static uintptr_t exe_lo[8], exe_hi[8];
static int exe_n;
static uintptr_t known_lo[MAX_OBJECTS], known_hi[MAX_OBJECTS];
static int known_n;
static size_t page;

/* The main executable's code, from the auxiliary vector (no allocation). */
static void find_executable(void) {
  const ElfW(Phdr) *ph = (const ElfW(Phdr) *)getauxval(AT_PHDR);
  size_t n = getauxval(AT_PHNUM);
  uintptr_t bias = 0;
  for (size_t k = 0; k < n; k++)
    if (ph[k].p_type == PT_PHDR)
      bias = (uintptr_t)ph - ph[k].p_vaddr;
  for (size_t k = 0; k < n && exe_n < 8; k++)
    if (ph[k].p_type == PT_LOAD && (ph[k].p_flags & PF_X)) {
      exe_lo[exe_n] = bias + ph[k].p_vaddr;
      exe_hi[exe_n++] = bias + ph[k].p_vaddr + ph[k].p_memsz;
    }
}

static int init(void) {
  if (pool)
    return 1;
  page = (size_t)sysconf(_SC_PAGESIZE);
  void *p = mmap(NULL, POOL_BYTES, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED)
    return 0;
  find_executable();
  allocs = (struct alloc *)p;
  used = (MAX_ALLOCS * sizeof(struct alloc) + page - 1) / page * page;
  pool = p;
  return 1;
}

static int from_executable(void *ret) {
  uintptr_t r = (uintptr_t)ret;
  for (int k = 0; k < exe_n; k++)
    if (r >= exe_lo[k] && r < exe_hi[k])
      return 1;
  return 0;
}

static int in_pool(const void *p) {
  return pool && (const char *)p >= pool && (const char *)p < pool + POOL_BYTES;
}

/* Pages of their own for `size` bytes aligned to `align`. */
static void *guarded_alloc(size_t size, size_t align) {
  if (align < 16)
    align = 16;
  pthread_mutex_lock(&lock);
  size_t start = (used + align - 1) / align * align;
  size_t end = (start + (size ? size : 1) + page - 1) / page * page;
  void *out = NULL;
  if (end <= POOL_BYTES && nallocs < MAX_ALLOCS && align <= page) {
    allocs[nallocs].start = (uintptr_t)pool + start;
    allocs[nallocs].end = (uintptr_t)pool + start + size;
    __atomic_store_n(&nallocs, nallocs + 1, __ATOMIC_RELEASE);
    used = end;
    out = pool + start;
  }
  pthread_mutex_unlock(&lock);
  return out;
}

static struct alloc *find(uintptr_t a) {
  size_t lo = 0, hi = __atomic_load_n(&nallocs, __ATOMIC_ACQUIRE);
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (allocs[mid].start > a)
      hi = mid;
    else
      lo = mid + 1;
  }
  return lo > 0 && a < (allocs[lo - 1].end | (page - 1)) + 1 ? &allocs[lo - 1] : NULL;
}

static size_t size_of(void *p) {
  pthread_mutex_lock(&lock);
  struct alloc *a = find((uintptr_t)p);
  size_t n = a ? a->end - a->start : 0;
  pthread_mutex_unlock(&lock);
  return n;
}

#define GUARDED(call, size, align)                                                    \
  if (init() && from_executable(__builtin_return_address(0))) {                          \
    void *g = guarded_alloc(size, align);                                                \
    if (g)                                                                               \
      return g;                                                                          \
  }                                                                                      \
  return call

void *malloc(size_t n) { GUARDED(__libc_malloc(n), n, 16); }

void *calloc(size_t n, size_t m) {
  if (m && n > (size_t)-1 / m)
    return NULL;
  /* The pool's fresh pages are zero; reused ones are never handed out again. */
  GUARDED(__libc_calloc(n, m), n * m, 16);
}

void *aligned_alloc(size_t align, size_t n) { GUARDED(__libc_memalign(align, n), n, align); }

void *memalign(size_t align, size_t n) { GUARDED(__libc_memalign(align, n), n, align); }

int posix_memalign(void **out, size_t align, size_t n) {
  void *p = NULL;
  if (init() && from_executable(__builtin_return_address(0)))
    p = guarded_alloc(n, align);
  if (!p)
    p = __libc_memalign(align, n);
  if (!p)
    return 12; /* ENOMEM */
  *out = p;
  return 0;
}

void *realloc(void *p, size_t n) {
  if (!in_pool(p))
    return __libc_realloc(p, n);
  void *q = guarded_alloc(n, 16);
  if (!q)
    q = __libc_malloc(n);
  if (q) {
    size_t old = size_of(p);
    memcpy(q, p, old < n ? old : n);
  }
  return q;
}

void free(void *p) {
  /* Pool memory is not reused: a later allocation never shares an earlier one's pages. */
  if (!in_pool(p))
    __libc_free(p);
}

static void say(const char *s) {
  ssize_t r = write(2, s, strlen(s));
  (void)r;
}

static int known(uintptr_t ip) {
  for (int k = 0; k < known_n; k++)
    if (ip >= known_lo[k] && ip < known_hi[k])
      return 1;
  return 0;
}

static void on_fault(int sig, siginfo_t *info, void *uc) {
  uintptr_t addr = (uintptr_t)info->si_addr;
  uintptr_t ip = (uintptr_t)((ucontext_t *)uc)->uc_mcontext.gregs[REG_RIP];
  struct alloc *a = in_pool((void *)addr) ? find(addr) : NULL;
  if (a && known(ip)) {
    /* The offload runtime (or host code running meanwhile) reads or writes mapped data. */
    uintptr_t lo = a->start & ~(page - 1);
    mprotect((void *)lo, (a->end - lo + page - 1) / page * page, PROT_READ | PROT_WRITE);
    return;
  }
  if (a) {
    char msg[200];
    snprintf(msg, sizeof msg,
             "host-guard: a target region accessed host memory at %p, inside an allocation "
             "of %zu bytes the program made on the host (mapped as a pointer only?)\n",
             (void *)addr, (size_t)(a->end - a->start));
    say(msg);
  }
  signal(sig, SIG_DFL);
}

static int add_object(struct dl_phdr_info *info, size_t size, void *data) {
  (void)size;
  (void)data;
  for (int k = 0; k < info->dlpi_phnum && known_n < MAX_OBJECTS; k++)
    if (info->dlpi_phdr[k].p_type == PT_LOAD && (info->dlpi_phdr[k].p_flags & PF_X)) {
      known_lo[known_n] = info->dlpi_addr + info->dlpi_phdr[k].p_vaddr;
      known_hi[known_n++] = info->dlpi_addr + info->dlpi_phdr[k].p_vaddr + info->dlpi_phdr[k].p_memsz;
    }
  return 0;
}

/* The code loaded at start: the program, libc, libomp, libomptarget (with its plugins). The
 * device image is loaded later, when the first target region runs. */
__attribute__((constructor)) static void start(void) {
  init();
  dl_iterate_phdr(add_object, NULL);
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_fault;
  sa.sa_flags = SA_SIGINFO | SA_NODEFER;
  sigaction(SIGSEGV, &sa, NULL);
}

typedef int (*kernel_fn)(void *, int64_t, int32_t, int32_t, void *, void *);

static void protect(int prot) {
  pthread_mutex_lock(&lock);
  if (prot == PROT_NONE ? running++ == 0 : --running == 0) {
    size_t first = (MAX_ALLOCS * sizeof(struct alloc) + page - 1) / page * page;
    if (prot == PROT_NONE)
      guarded = used;
    if (guarded > first)
      mprotect(pool + first, guarded - first, prot);
  }
  pthread_mutex_unlock(&lock);
}

int __tgt_target_kernel(void *loc, int64_t device, int32_t teams, int32_t threads, void *host,
                        void *args) {
  static kernel_fn real;
  if (!real)
    real = (kernel_fn)dlsym(RTLD_NEXT, "__tgt_target_kernel");
  protect(PROT_NONE);
  int r = real(loc, device, teams, threads, host, args);
  protect(PROT_READ | PROT_WRITE);
  return r;
}
