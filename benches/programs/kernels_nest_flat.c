/* `kernels` over flattened (linearised) 2-D loop nests, the commonest style in C codes:
 * `c[i * m + j]` on `restrict` heap arrays. A sweep whose rows depend on the previous row
 * (the parallelism is the inner loop), the same sweep reading the previous row one element
 * to the right, a fully independent nest with a sum, and a triangular nest. Values are
 * integers or computed by the same operations in any order. */
#include <stdio.h>
#include <stdlib.h>

#define REPS 40

int main(void)
{
    const int n = 1024, m = 1024;
    double *restrict a = (double *)malloc((size_t)n * m * sizeof(double));
    double *restrict b = (double *)malloc((size_t)n * m * sizeof(double));
    double *restrict c = (double *)malloc((size_t)n * m * sizeof(double));
    double *restrict d = (double *)malloc((size_t)n * m * sizeof(double));
    for (int i = 0; i < n; i++)
        for (int j = 0; j < m; j++) {
            a[i * m + j] = (double)((i + 3 * j) % 11);
            b[i * m + j] = (double)((7 * i + j) % 13);
            c[i * m + j] = 0.0;
            d[i * m + j] = (double)((i + j) % 5);
        }
    double total = 0.0;
#pragma acc data copy(a[0:n*m], b[0:n*m], c[0:n*m], d[0:n*m])
    {
        for (int r = 0; r < REPS; r++) {
            double sum = 0.0;
#pragma acc kernels present(a[0:n*m], b[0:n*m], c[0:n*m], d[0:n*m])
            {
                for (int i = 1; i < n; i++)
                    for (int j = 0; j < m; j++)
                        c[i * m + j] = 0.5 * c[(i - 1) * m + j] + a[i * m + j];
                for (int i = 1; i < n; i++)
                    for (int j = 0; j < m - 1; j++)
                        d[i * m + j] = 0.25 * d[(i - 1) * m + j + 1] + a[i * m + j];
                for (int i = 0; i < n; i++)
                    for (int j = 0; j < m; j++) {
                        b[i * m + j] = b[i * m + j] * 0.5 + a[i * m + j] * (double)(r + 1);
                        sum += a[i * m + j] * (double)(j % 5);
                    }
                for (int i = 0; i < n; i++)
                    for (int j = i; j < m; j++)
                        a[i * m + j] = a[i * m + j] + (double)((i + j + r) % 3);
            }
            total += sum;
        }
    }
    double cs = 0.0, bs = 0.0, as = 0.0, ds = 0.0;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < m; j++) {
            as += a[i * m + j];
            bs += b[i * m + j] * (double)(j % 3);
            cs += c[i * m + j] * (double)(i % 3);
            ds += d[i * m + j] * (double)(j % 7);
        }
    printf("a %.6f\nb %.6f\nc %.9e\nd %.9e\ntotal %.6f\n", as, bs, cs, ds, total);
    free(a);
    free(b);
    free(c);
    free(d);
    return 0;
}
