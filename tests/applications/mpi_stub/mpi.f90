! A one-rank stand-in for the MPI module of the UK-MAC mini-apps (tests/applications/uk_mac.sh):
! the constants they name; the routines are mpi_stub.c's, called through implicit interfaces.
module mpi
  implicit none
  integer, parameter :: MPI_COMM_WORLD = 0, MPI_DOUBLE_PRECISION = 1, MPI_INTEGER = 2
  integer, parameter :: MPI_MAX = 1, MPI_MIN = 2, MPI_SUM = 3, MPI_STATUS_SIZE = 6
  integer, parameter :: MPI_PROC_NULL = -1
  interface
    double precision function mpi_wtime()
    end function mpi_wtime
  end interface
end module mpi
