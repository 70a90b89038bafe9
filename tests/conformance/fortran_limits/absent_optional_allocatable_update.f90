! fails: gfortran, flang-offload, flang-offload-reverse
! 'target update to(a, b)' with b an absent OPTIONAL ALLOCATABLE dummy argument (mapped with
! 'alloc' first, which is the same absent argument). gfortran 12 dereferences the absent
! argument's descriptor in the host code of 'target update' (segmentation fault, shared
! memory); flang-22 maps the null address (see absent_optional_map.f90).
program absent_optional_allocatable_update
  implicit none
  integer, allocatable :: a(:), r(:)
  allocate (a(8), r(8))
  a = 5
  r = 0
  call copy(r, a)
  if (any(r /= 5)) stop 1
contains
  subroutine copy(res, a, b)
    integer, allocatable :: res(:), a(:)
    integer, allocatable, optional :: b(:)
    integer :: i
    !$omp target data map(alloc: a, b, res)
    !$omp target update to(a, b)
    !$omp target teams distribute parallel do
    do i = 1, 8
      res(i) = a(i)
      if (present(b)) res(i) = res(i) * b(i)
    end do
    !$omp target update from(res)
    !$omp end target data
  end subroutine copy
end program absent_optional_allocatable_update
