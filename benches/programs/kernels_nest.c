/* `kernels` over plain loop nests on 2-D arrays: a sweep whose rows depend on the previous
 * row (the parallelism is the inner loop), a fully independent nest with a sum, and a
 * triangular nest. Values are integers or computed by the same operations in any order. */
#include <stdio.h>

#define N 1024
#define REPS 40

static double a[N][N], b[N][N], c[N][N];

int main(void)
{
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) {
            a[i][j] = (double)((i + 3 * j) % 11);
            b[i][j] = (double)((7 * i + j) % 13);
            c[i][j] = 0.0;
        }
    double total = 0.0;
#pragma acc data copy(a, b, c)
    {
        for (int r = 0; r < REPS; r++) {
            double sum = 0.0;
#pragma acc kernels
            {
                for (int i = 1; i < N; i++)
                    for (int j = 0; j < N; j++)
                        c[i][j] = 0.5 * c[i - 1][j] + a[i][j];
                for (int i = 0; i < N; i++)
                    for (int j = 0; j < N; j++) {
                        b[i][j] = b[i][j] * 0.5 + a[i][j] * (double)(r + 1);
                        sum += a[i][j] * (double)(j % 5);
                    }
                for (int i = 0; i < N; i++)
                    for (int j = i; j < N; j++)
                        a[i][j] = a[i][j] + (double)((i + j + r) % 3);
            }
            total += sum;
        }
    }
    double cs = 0.0, bs = 0.0, as = 0.0;
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) {
            as += a[i][j];
            bs += b[i][j] * (double)(j % 3);
            cs += c[i][j] * (double)(i % 3);
        }
    printf("a %.6f\nb %.6f\nc %.9e\ntotal %.6f\n", as, bs, cs, total);
    return 0;
}
