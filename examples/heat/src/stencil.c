#include "stencil.h"

/* Five-point stencil; the caller keeps u and v on the device. */
void stencil(int nx, int ny, const double *u, double *v) {
  #pragma acc parallel present(u[0:nx*ny], v[0:nx*ny]) \
                       num_gangs(64) vector_length(128)
  {
    #pragma acc loop gang
    for (int i = 1; i < nx - 1; i++) {
      #pragma acc loop vector
      for (int j = 1; j < ny - 1; j++)
        v[i * ny + j] = 0.25 * (u[(i - 1) * ny + j] + u[(i + 1) * ny + j] +
                                u[i * ny + j - 1] + u[i * ny + j + 1]);
    }
  }
}
