/* One-rank MPI routines for the Fortran mini-apps of tests/applications/uk_mac.sh (the
   Fortran binding's names: lower case, trailing underscore). A collective's result is its
   own buffer; point-to-point messages need a second rank and abort. */
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

/* Sizes of the datatypes mpi.f90 and mpif.h define. */
static size_t size_of(const int *t) { return *t == 1 ? 8 : 4; }

void mpi_init_(int *e) { *e = 0; }
void mpi_finalize_(int *e) { *e = 0; }
void mpi_comm_size_(int *c, int *n, int *e) { (void)c; *n = 1; *e = 0; }
void mpi_comm_rank_(int *c, int *r, int *e) { (void)c; *r = 0; *e = 0; }
void mpi_barrier_(int *c, int *e) { (void)c; *e = 0; }
void mpi_abort_(int *c, int *code, int *e) { (void)c; (void)e; exit(*code); }
void mpi_allreduce_(void *s, void *r, int *n, int *t, int *op, int *c, int *e)
{
    (void)op; (void)c;
    memmove(r, s, (size_t)*n * size_of(t));
    *e = 0;
}
void mpi_reduce_(void *s, void *r, int *n, int *t, int *op, int *root, int *c, int *e)
{
    (void)op; (void)root; (void)c;
    memmove(r, s, (size_t)*n * size_of(t));
    *e = 0;
}
void mpi_allgather_(void *s, int *n, int *t, void *r, int *rn, int *rt, int *c, int *e)
{
    (void)rn; (void)rt; (void)c;
    memmove(r, s, (size_t)*n * size_of(t));
    *e = 0;
}
void mpi_isend_(void) { abort(); }
void mpi_irecv_(void) { abort(); }
void mpi_waitall_(int *n, int *r, int *s, int *e) { (void)n; (void)r; (void)s; *e = 0; }
void mpi_testall_(int *n, int *r, int *flag, int *s, int *e) { (void)n; (void)r; (void)s; *flag = 1; *e = 0; }
void mpi_dims_create_(int *n, int *nd, int *dims, int *e)
{
    (void)n;
    for (int i = 0; i < *nd; i++)
        if (dims[i] == 0)
            dims[i] = 1;
    *e = 0;
}
void mpi_cart_create_(int *c, int *nd, int *dims, int *per, int *re, int *cart, int *e)
{
    (void)c; (void)nd; (void)dims; (void)per; (void)re;
    *cart = 0;
    *e = 0;
}
void mpi_cart_coords_(int *c, int *r, int *nd, int *coords, int *e)
{
    (void)c; (void)r;
    for (int i = 0; i < *nd; i++)
        coords[i] = 0;
    *e = 0;
}
void mpi_cart_shift_(int *c, int *dir, int *disp, int *src, int *dst, int *e)
{
    (void)c; (void)dir; (void)disp;
    *src = -1; /* MPI_PROC_NULL: no neighbour */
    *dst = -1;
    *e = 0;
}
double mpi_wtime_(void)
{
    struct timeval tv;
    gettimeofday(&tv, 0);
    return (double)tv.tv_sec + 1e-6 * (double)tv.tv_usec;
}
