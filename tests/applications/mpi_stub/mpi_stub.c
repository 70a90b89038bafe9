/* One-rank MPI routines for the Fortran applications of tests/applications/ (the Fortran
   binding's names: lower case, trailing underscore). A collective's result is its own buffer.
   A message to this rank (a periodic Cartesian neighbour) is matched to the first receive from
   this rank with its tag, in order, and copied; any other point-to-point message aborts. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

int acc2omp_mpi_in_place; /* the module's MPI_IN_PLACE */

/* Sizes of the datatypes mpi.f90 and mpif.h define: double / real(8), integer, real(4). */
static size_t size_of(const int *t) { return *t == 1 ? 8 : 4; }

void mpi_init_(int *e) { *e = 0; }
void mpi_init_thread_(int *req, int *provided, int *e) { *provided = *req; *e = 0; }
void mpi_finalize_(int *e) { *e = 0; }
void mpi_comm_size_(int *c, int *n, int *e) { (void)c; *n = 1; *e = 0; }
void mpi_comm_rank_(int *c, int *r, int *e) { (void)c; *r = 0; *e = 0; }
void mpi_comm_split_type_(int *c, int *type, int *key, int *info, int *out, int *e)
{
    (void)type; (void)key; (void)info;
    *out = *c;
    *e = 0;
}
void mpi_barrier_(int *c, int *e) { (void)c; *e = 0; }
void mpi_abort_(int *c, int *code, int *e) { (void)c; (void)e; exit(*code); }
void mpi_bcast_(void *b, int *n, int *t, int *root, int *c, int *e)
{
    (void)b; (void)n; (void)t; (void)root; (void)c;
    *e = 0;
}
static void copy(void *r, const void *s, int n, const int *t)
{
    if (s != (const void *)&acc2omp_mpi_in_place)
        memmove(r, s, (size_t)n * size_of(t));
}
void mpi_allreduce_(void *s, void *r, int *n, int *t, int *op, int *c, int *e)
{
    (void)op; (void)c;
    copy(r, s, *n, t);
    *e = 0;
}
void mpi_reduce_(void *s, void *r, int *n, int *t, int *op, int *root, int *c, int *e)
{
    (void)op; (void)root; (void)c;
    copy(r, s, *n, t);
    *e = 0;
}
void mpi_allgather_(void *s, int *n, int *t, void *r, int *rn, int *rt, int *c, int *e)
{
    (void)rn; (void)rt; (void)c;
    copy(r, s, *n, t);
    *e = 0;
}

/* Messages to this rank not yet received, and receives not yet matched, in posting order. */
enum { PENDING = 64 };
struct message { void *buf; size_t bytes; int tag; };
static struct message sends[PENDING], recvs[PENDING];
static int nsends, nrecvs;

static void post(struct message *q, int *n, void *buf, size_t bytes, int tag)
{
    if (*n == PENDING) {
        fputs("mpi_stub: too many pending messages\n", stderr);
        abort();
    }
    q[(*n)++] = (struct message){buf, bytes, tag};
}
static void drop(struct message *q, int *n, int i)
{
    memmove(q + i, q + i + 1, (size_t)(*n - i - 1) * sizeof *q);
    (*n)--;
}
/* Delivers every send that has a receive with its tag, earliest first. */
static void match(void)
{
    for (int r = 0; r < nrecvs;) {
        int s = 0;
        while (s < nsends && sends[s].tag != recvs[r].tag)
            s++;
        if (s == nsends) {
            r++;
            continue;
        }
        if (sends[s].bytes > recvs[r].bytes) {
            fputs("mpi_stub: message longer than its receive buffer\n", stderr);
            abort();
        }
        memcpy(recvs[r].buf, sends[s].buf, sends[s].bytes);
        drop(sends, &nsends, s);
        drop(recvs, &nrecvs, r);
    }
}
/* Posts a send (to `sends`) or a receive (to `recvs`) with peer `peer`: nothing for
   MPI_PROC_NULL (-1), this rank (0) only otherwise. */
static void post_nonblocking(struct message *q, int *n, void *b, int *count, int *t,
                             int peer, int *tag, int *req, int *e)
{
    *req = 0;
    *e = 0;
    if (peer == -1)
        return;
    if (peer != 0) {
        fprintf(stderr, "mpi_stub: a message for rank %d (one rank only)\n", peer);
        abort();
    }
    post(q, n, b, (size_t)*count * size_of(t), *tag);
    match();
}
void mpi_isend_(void *b, int *n, int *t, int *dest, int *tag, int *c, int *req, int *e)
{
    (void)c;
    post_nonblocking(sends, &nsends, b, n, t, *dest, tag, req, e);
}
void mpi_irecv_(void *b, int *n, int *t, int *src, int *tag, int *c, int *req, int *e)
{
    (void)c;
    post_nonblocking(recvs, &nrecvs, b, n, t, *src, tag, req, e);
}
/* Blocking messages between ranks: none with one rank. */
void mpi_recv_(void *b, int *n, int *t, int *src, int *tag, int *c, int *st, int *e)
{
    (void)b; (void)n; (void)t; (void)src; (void)tag; (void)c; (void)st; (void)e;
    fputs("mpi_stub: a blocking receive (one rank only)\n", stderr);
    abort();
}
void mpi_ssend_(void *b, int *n, int *t, int *dest, int *tag, int *c, int *e)
{
    (void)b; (void)n; (void)t; (void)dest; (void)tag; (void)c; (void)e;
    fputs("mpi_stub: a blocking send (one rank only)\n", stderr);
    abort();
}
void mpi_waitall_(int *n, int *r, int *s, int *e)
{
    (void)n; (void)r; (void)s;
    if (nsends || nrecvs) {
        fputs("mpi_stub: a message to this rank was never received\n", stderr);
        abort();
    }
    *e = 0;
}
void mpi_testall_(int *n, int *r, int *flag, int *s, int *e) { (void)n; (void)r; (void)s; *flag = 1; *e = 0; }
void mpi_dims_create_(int *n, int *nd, int *dims, int *e)
{
    (void)n;
    for (int i = 0; i < *nd; i++)
        if (dims[i] == 0)
            dims[i] = 1;
    *e = 0;
}
/* Which dimensions of the (one) Cartesian communicator are periodic. */
enum { DIMS = 8 };
static int periodic[DIMS];
void mpi_cart_create_(int *c, int *nd, int *dims, int *per, int *re, int *cart, int *e)
{
    (void)c; (void)dims; (void)re;
    for (int i = 0; i < *nd && i < DIMS; i++)
        periodic[i] = per[i];
    *cart = 0;
    *e = 0;
}
void mpi_cart_sub_(int *c, int *keep, int *out, int *e)
{
    (void)keep;
    *out = *c;
    *e = 0;
}
void mpi_cart_coords_(int *c, int *r, int *nd, int *coords, int *e)
{
    (void)c; (void)r;
    for (int i = 0; i < *nd; i++)
        coords[i] = 0;
    *e = 0;
}
/* The neighbour along a periodic dimension is this rank; along another there is none. */
void mpi_cart_shift_(int *c, int *dir, int *disp, int *src, int *dst, int *e)
{
    (void)c; (void)disp;
    int self = *dir >= 0 && *dir < DIMS && periodic[*dir] ? 0 : -1; /* -1: MPI_PROC_NULL */
    *src = self;
    *dst = self;
    *e = 0;
}
double mpi_wtime_(void)
{
    struct timeval tv;
    gettimeofday(&tv, 0);
    return (double)tv.tv_sec + 1e-6 * (double)tv.tv_usec;
}
