/* CG-shaped kernel: a CSR sparse matrix-vector product with a gang loop over rows and a
 * vector reduction over each row, explicit launch sizes, then a dot product and an update,
 * repeated. Values stay integers below 2^40, so every sum is exact in any order. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define NX 1000
#define ITERS 20

int main(void)
{
    const int n = NX * NX;
    int *rowptr = (int *)malloc((n + 1) * sizeof(int));
    int *col = (int *)malloc(5 * (size_t)n * sizeof(int));
    double *val = (double *)malloc(5 * (size_t)n * sizeof(double));
    double *x = (double *)malloc(n * sizeof(double));
    double *y = (double *)malloc(n * sizeof(double));
    /* 5-point Laplacian on an NX x NX grid */
    int nnz = 0;
    for (int r = 0; r < NX; r++) {
        for (int c = 0; c < NX; c++) {
            int i = r * NX + c;
            rowptr[i] = nnz;
            if (r > 0) { col[nnz] = i - NX; val[nnz++] = -1.0; }
            if (c > 0) { col[nnz] = i - 1; val[nnz++] = -1.0; }
            col[nnz] = i; val[nnz++] = 4.0;
            if (c < NX - 1) { col[nnz] = i + 1; val[nnz++] = -1.0; }
            if (r < NX - 1) { col[nnz] = i + NX; val[nnz++] = -1.0; }
        }
    }
    rowptr[n] = nnz;
    for (int i = 0; i < n; i++)
        x[i] = (double)((i * 7) % 13);

    double checksum = 0.0;
#pragma acc data copyin(rowptr[0:n+1], col[0:nnz], val[0:nnz]) copy(x[0:n]) create(y[0:n])
    {
        for (int it = 0; it < ITERS; it++) {
#pragma acc parallel loop gang num_gangs(1024) num_workers(4) vector_length(32) \
    present(rowptr[0:n+1], col[0:nnz], val[0:nnz], x[0:n], y[0:n])
            for (int i = 0; i < n; i++) {
                double sum = 0.0;
#pragma acc loop vector reduction(+:sum)
                for (int k = rowptr[i]; k < rowptr[i + 1]; k++)
                    sum += val[k] * x[col[k]];
                y[i] = sum;
            }
            double dot = 0.0;
#pragma acc parallel loop gang vector reduction(+:dot) present(x[0:n], y[0:n])
            for (int i = 0; i < n; i++)
                dot += x[i] * y[i];
#pragma acc parallel loop gang vector present(x[0:n], y[0:n])
            for (int i = 0; i < n; i++)
                x[i] = fmod(fabs(y[i]) + (double)(i % 7), 1024.0);
            checksum += dot;
        }
    }
    double xs = 0.0;
    for (int i = 0; i < n; i++)
        xs += x[i];
    printf("checksum %.1f\nxsum %.1f\n", checksum, xs);
    free(rowptr); free(col); free(val); free(x); free(y);
    return 0;
}
