/* The canonical OpenACC Jacobi iteration: a `kernels` region of two plain loop nests, the
 * update with a `max` reduction of the change through a temporary, then the copy back,
 * inside a data region, until the change is small or the iteration count is reached. Each
 * element is computed by the same operations in any order and the maximum is exact, so
 * the output does not depend on the schedule. */
#include <math.h>
#include <stdio.h>

#define N 1024
#define ITERS 200

static double A[N][N], Anew[N][N];

int main(void)
{
    const int n = N, iter_max = ITERS;
    const double tol = 1.0e-9;
    for (int j = 0; j < n; j++)
        for (int i = 0; i < n; i++)
            A[j][i] = (j == 0) ? 1.0 : 0.0;
    double error = 1.0, d;
    int iter = 0;
#pragma acc data copy(A) create(Anew)
    while (error > tol && iter < iter_max) {
        error = 0.0;
#pragma acc kernels
        {
            for (int j = 1; j < n - 1; j++)
                for (int i = 1; i < n - 1; i++) {
                    Anew[j][i] = 0.25 * (A[j][i + 1] + A[j][i - 1] + A[j - 1][i] + A[j + 1][i]);
                    d = Anew[j][i] - A[j][i];
                    error = fmax(error, fabs(d));
                }
            for (int j = 1; j < n - 1; j++)
                for (int i = 1; i < n - 1; i++)
                    A[j][i] = Anew[j][i];
        }
        iter++;
    }
    double s = 0.0;
    for (int j = 0; j < n; j++)
        for (int i = 0; i < n; i++)
            s += A[j][i];
    printf("iterations %d\nerror %.9e\nsum %.9e\n", iter, error, s);
    return 0;
}
