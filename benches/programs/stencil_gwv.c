/* 3-D 7-point stencil, gang (planes) / worker (rows) / vector (points), with num_workers and
 * vector_length on the construct, swept back and forth between two grids. Each point's
 * value is computed the same way whatever the schedule, so the results are bit-identical. */
#include <stdio.h>
#include <stdlib.h>

#define N 128
#define SWEEPS 80
#define AT(k, j, i) (((size_t)(k) * N + (j)) * N + (i))

int main(void)
{
    double *a = (double *)malloc((size_t)N * N * N * sizeof(double));
    double *b = (double *)malloc((size_t)N * N * N * sizeof(double));
    for (int k = 0; k < N; k++)
        for (int j = 0; j < N; j++)
            for (int i = 0; i < N; i++) {
                a[AT(k, j, i)] = (double)((k * 3 + j * 5 + i * 7) % 17);
                b[AT(k, j, i)] = a[AT(k, j, i)];
            }
    const size_t n3 = (size_t)N * N * N;
    double *src = a, *dst = b;
#pragma acc data copy(a[0:n3], b[0:n3])
    {
        for (int s = 0; s < SWEEPS; s++) {
#pragma acc parallel loop gang num_workers(4) vector_length(64) present(src[0:n3], dst[0:n3])
            for (int k = 1; k < N - 1; k++) {
#pragma acc loop worker
                for (int j = 1; j < N - 1; j++) {
#pragma acc loop vector
                    for (int i = 1; i < N - 1; i++)
                        dst[AT(k, j, i)] = (2.0 * src[AT(k, j, i)] + src[AT(k, j, i - 1)] + src[AT(k, j, i + 1)]
                                            + src[AT(k, j - 1, i)] + src[AT(k, j + 1, i)]
                                            + src[AT(k - 1, j, i)] + src[AT(k + 1, j, i)]) * 0.125;
                }
            }
            double *t = src;
            src = dst;
            dst = t;
        }
    }
    /* an even number of sweeps: the result is in a */
    double s = 0.0, w = 0.0;
    for (size_t p = 0; p < n3; p++) {
        s += a[p];
        w += a[p] * (double)(p % 11);
    }
    printf("sum %.9e\nweighted %.9e\n", s, w);
    free(a); free(b);
    return 0;
}
