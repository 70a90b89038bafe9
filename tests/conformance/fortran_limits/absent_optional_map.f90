! fails: flang-offload, flang-offload-reverse
! A map clause naming an OPTIONAL dummy argument that is absent. OpenACC ignores a data
! clause on an absent argument (its section on Fortran optional arguments); OpenMP 5.1 has
! no restriction against it, an absent argument has no storage to map, and gfortran skips it
! (GCC's own libgomp.fortran/optional-map.f90 checks this). flang-22 passes the null address
! with the argument's size to libomptarget, which copies from address 0 (segmentation
! fault).
program absent_optional_map
  implicit none
  integer :: r
  call scale(r, 7)
  if (r /= 7) stop 1
  call scale(r, 7, 3)
  if (r /= 21) stop 2
contains
  subroutine scale(res, a, b)
    integer :: res, a
    integer, optional :: b
    !$omp target map(to: a, b) map(from: res)
    res = a
    if (present(b)) res = res * b
    !$omp end target
  end subroutine scale
end program absent_optional_map
