/* 2-D Jacobi sweeps, gang rows / vector columns, with the largest change found by a max
 * reduction on both loops (the reduction nest of such solvers), then a copy back. Every
 * value is computed the same way in any order and max is exact. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define N 1536
#define ITERS 30

int main(void)
{
    const int n = N;
    double *u = (double *)malloc((size_t)n * n * sizeof(double));
    double *v = (double *)malloc((size_t)n * n * sizeof(double));
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            u[i * n + j] = (i == 0 || j == 0) ? 1.0 : 0.0;
            v[i * n + j] = u[i * n + j];
        }
    double err = 0.0, errsum = 0.0;
#pragma acc data copy(u[0:n*n]) create(v[0:n*n])
    {
#pragma acc parallel loop gang present(u[0:n*n], v[0:n*n])
        for (int i = 0; i < n; i++)
#pragma acc loop vector
            for (int j = 0; j < n; j++)
                v[i * n + j] = u[i * n + j];
        for (int it = 0; it < ITERS; it++) {
            err = 0.0;
#pragma acc parallel loop gang vector_length(128) reduction(max:err) present(u[0:n*n], v[0:n*n])
            for (int i = 1; i < n - 1; i++) {
#pragma acc loop vector reduction(max:err)
                for (int j = 1; j < n - 1; j++) {
                    double x = 0.25 * (u[(i - 1) * n + j] + u[(i + 1) * n + j]
                                       + u[i * n + j - 1] + u[i * n + j + 1]);
                    err = fmax(err, fabs(x - u[i * n + j]));
                    v[i * n + j] = x;
                }
            }
#pragma acc parallel loop gang present(u[0:n*n], v[0:n*n])
            for (int i = 1; i < n - 1; i++)
#pragma acc loop vector
                for (int j = 1; j < n - 1; j++)
                    u[i * n + j] = v[i * n + j];
            errsum += err;
        }
    }
    double s = 0.0;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            s += u[i * n + j] * (double)((i + j) % 7);
    printf("err %.12e\nerrsum %.12e\nsum %.12e\n", err, errsum, s);
    free(u); free(v);
    return 0;
}
