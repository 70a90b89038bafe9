/* 2-D heat diffusion with OpenACC: a small project to try acc2omp on. */
#include <stdio.h>
#include <stdlib.h>
#include "stencil.h"

#define NX 256
#define NY 256

int main(void) {
  double *u = calloc(NX * NY, sizeof(double));
  double *v = calloc(NX * NY, sizeof(double));
  for (int j = 0; j < NY; j++)
    u[j] = 100.0; /* hot top edge */

  double total = 0.0;
  #pragma acc data copy(u[0:NX*NY]) create(v[0:NX*NY])
  {
    for (int step = 0; step < 100; step++) {
      stencil(NX, NY, u, v);
      #pragma acc parallel loop collapse(2) present(u[0:NX*NY], v[0:NX*NY])
      for (int i = 1; i < NX - 1; i++)
        for (int j = 1; j < NY - 1; j++)
          u[i * NY + j] = v[i * NY + j];
    }
    #pragma acc parallel loop reduction(+:total) present(u[0:NX*NY])
    for (int k = 0; k < NX * NY; k++)
      total += u[k];
  }
  printf("total heat: %.6f\n", total);
  free(u);
  free(v);
  return 0;
}
