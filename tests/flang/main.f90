program main
  use shapes
  implicit none
  real :: e(10)
  integer :: i
  !$acc parallel loop copy(e)
  do i = 1, 10
    e(i) = 1
  end do
end program
