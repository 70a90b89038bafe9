/* `kernels` over plain loops, the most common OpenACC style: element-wise updates, a sum
 * and a max, repeated, on `restrict` arrays (as such codes declare them so that the compiler
 * can prove the loops independent). Integer-valued data, so the reductions are exact in any
 * order. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define NELEM 4000000
#define REPS 12

int main(void)
{
    const int n = NELEM;
    double *restrict a = (double *)malloc(n * sizeof(double));
    double *restrict b = (double *)malloc(n * sizeof(double));
    double *restrict c = (double *)malloc(n * sizeof(double));
    double *restrict d = (double *)malloc(n * sizeof(double));
    for (int i = 0; i < n; i++) {
        b[i] = (double)(i % 100);
        c[i] = (double)(i % 7);
    }
    double total = 0.0, top = 0.0;
#pragma acc data copyin(b[0:n], c[0:n]) create(a[0:n], d[0:n])
    {
        for (int r = 0; r < REPS; r++) {
            double sum = 0.0, mx = 0.0;
            double scale = (double)(r % 3 + 1);
#pragma acc kernels present(a[0:n], b[0:n], c[0:n], d[0:n])
            {
                for (int i = 0; i < n; i++)
                    a[i] = b[i] * scale + c[i];
                for (int i = 0; i < n; i++)
                    d[i] = a[i] - b[i] + (double)(i % 3);
                for (int i = 0; i < n; i++)
                    sum += d[i];
                for (int i = 0; i < n; i++)
                    mx = fmax(mx, a[i] + d[i]);
            }
            total += sum;
            top += mx;
        }
    }
    printf("total %.1f\ntop %.1f\n", total, top);
    free(a); free(b); free(c); free(d);
    return 0;
}
