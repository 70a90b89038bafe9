#ifndef STENCIL_H
#define STENCIL_H
void stencil(int nx, int ny, const double *u, double *v);
#endif
