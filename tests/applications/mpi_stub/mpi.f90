! A one-rank stand-in for the MPI module of the Fortran applications of tests/applications/
! (uk_mac.sh, pot3d.sh): the constants they name; the routines are mpi_stub.c's, called
! through implicit interfaces. MPI_IN_PLACE is a variable mpi_stub.c knows by address.
module mpi
  implicit none
  integer, parameter :: MPI_COMM_WORLD = 0, MPI_DOUBLE_PRECISION = 1, MPI_INTEGER = 2
  integer, parameter :: MPI_REAL8 = 1, MPI_REAL4 = 3
  integer, parameter :: MPI_MAX = 1, MPI_MIN = 2, MPI_SUM = 3, MPI_STATUS_SIZE = 6
  integer, parameter :: MPI_PROC_NULL = -1, MPI_INFO_NULL = 0
  integer, parameter :: MPI_THREAD_FUNNELED = 1, MPI_COMM_TYPE_SHARED = 1
  integer, bind(c, name='acc2omp_mpi_in_place') :: MPI_IN_PLACE
  integer :: MPI_STATUS_IGNORE(MPI_STATUS_SIZE), MPI_STATUSES_IGNORE(MPI_STATUS_SIZE, 1)
  interface
    double precision function mpi_wtime()
    end function mpi_wtime
  end interface
end module mpi
