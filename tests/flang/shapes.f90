module shapes
  implicit none
  integer, parameter :: dp = 8
  type :: pt(k)
    integer, kind :: k = 4
    real(k) :: x
    real(k), allocatable :: v(:)
  end type
  type :: grid(n)
    integer, len :: n
    real :: v(n, n)
  end type
  type :: cell
    real :: w
    integer :: ids(3)
  end type
  integer :: sizes(2) = [4, 5]
  real(dp), allocatable :: a(:,:)
  real, pointer :: p(:)
  type(pt(k=8)) :: q
  type(grid(:)), allocatable :: g
  type(cell) :: c
  character(len=10) :: label
contains
  subroutine s(n, b, d)
    integer, intent(in) :: n
    real, intent(inout) :: b(n, max(n, 2))
    real(dp), intent(out), optional :: d(sizes(1):sizes(2), n)
    b = 0
  end subroutine
end module
