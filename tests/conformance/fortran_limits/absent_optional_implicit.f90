! fails: flang-offload, flang-offload-reverse
! A target region that refers to an OPTIONAL dummy argument without a data clause, under
! 'if (present(b))'. The region maps b implicitly; OpenMP maps an absent argument as
! OpenACC does (not at all: gfortran skips it). flang-22 maps the absent argument at address
! 0: this array crashes (segmentation fault); a scalar hangs or reads a wrong value. No data
! clause avoids it: the region itself names the argument.
program absent_optional_implicit
  implicit none
  integer :: x(4), z(4)
  x = 2
  z = 0
  call scale_all(x)
  if (any(x /= 2)) stop 1
  call scale_all(x, z)
  if (any(x /= 4)) stop 2
contains
  subroutine scale_all(y, b)
    integer :: y(4), i
    integer, optional :: b(4)
    !$omp target teams distribute parallel do map(tofrom: y)
    do i = 1, 4
      if (present(b)) y(i) = y(i) * 2
    end do
  end subroutine scale_all
end program absent_optional_implicit
