! A one-rank stand-in for the MPI module: one process, messages to itself.
module mpi
  implicit none
  integer, parameter :: MPI_COMM_WORLD = 0, MPI_INFO_NULL = 0, MPI_SUCCESS = 0
  integer, parameter :: MPI_REAL = 1, MPI_REAL8 = 2, MPI_INTEGER = 3, MPI_SUM = 1
  integer, parameter :: MPI_STATUS_SIZE = 6, MPI_OFFSET_KIND = 8
contains
  subroutine mpi_init(ierr)
    integer, intent(out) :: ierr
    ierr = MPI_SUCCESS
  end subroutine mpi_init
  subroutine mpi_finalize(ierr)
    integer, intent(out) :: ierr
    ierr = MPI_SUCCESS
  end subroutine mpi_finalize
  subroutine mpi_comm_size(comm, size, ierr)
    integer, intent(in) :: comm
    integer, intent(out) :: size, ierr
    size = 1
    ierr = MPI_SUCCESS
  end subroutine mpi_comm_size
  subroutine mpi_comm_rank(comm, rank, ierr)
    integer, intent(in) :: comm
    integer, intent(out) :: rank, ierr
    rank = 0
    ierr = MPI_SUCCESS
  end subroutine mpi_comm_rank
  subroutine mpi_barrier(comm, ierr)
    integer, intent(in) :: comm
    integer, intent(out) :: ierr
    ierr = MPI_SUCCESS
  end subroutine mpi_barrier
  ! One rank: the reduction of a buffer is the buffer.
  subroutine mpi_allreduce(sendbuf, recvbuf, count, datatype, op, comm, ierr)
    real(8), intent(in) :: sendbuf(*)
    real(8), intent(out) :: recvbuf(*)
    integer, intent(in) :: count, datatype, op, comm
    integer, intent(out) :: ierr
    if (datatype /= MPI_REAL8) stop 'mpi stub: only MPI_REAL8'
    recvbuf(1:count) = sendbuf(1:count)
    ierr = MPI_SUCCESS
  end subroutine mpi_allreduce
  ! Point-to-point messages need a second rank; one rank never sends.
  subroutine mpi_irecv(buf, count, datatype, source, tag, comm, request, ierr)
    real(8) :: buf(*)
    integer, intent(in) :: count, datatype, source, tag, comm
    integer, intent(out) :: request, ierr
    stop 'mpi stub: irecv with one rank'
  end subroutine mpi_irecv
  subroutine mpi_isend(buf, count, datatype, dest, tag, comm, request, ierr)
    real(8) :: buf(*)
    integer, intent(in) :: count, datatype, dest, tag, comm
    integer, intent(out) :: request, ierr
    stop 'mpi stub: isend with one rank'
  end subroutine mpi_isend
  subroutine mpi_waitall(count, requests, statuses, ierr)
    integer, intent(in) :: count
    integer :: requests(*), statuses(MPI_STATUS_SIZE, *)
    integer, intent(out) :: ierr
    ierr = MPI_SUCCESS
  end subroutine mpi_waitall
end module mpi
