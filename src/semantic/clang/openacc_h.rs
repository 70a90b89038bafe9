//! The virtual `openacc.h` the parse sees (`-isystem` VIRTUAL_DIR, searched last): a real
//! OpenACC header is rarely installed, and code that includes it must still parse.

/// Declarations of the OpenACC runtime API, enough for code that uses it to parse.
pub(super) const OPENACC_H: &str = r#"#ifndef ACC2OMP_VIRTUAL_OPENACC_H
#define ACC2OMP_VIRTUAL_OPENACC_H
typedef __SIZE_TYPE__ acc2omp_size_t_;
typedef enum acc_device_t { acc_device_none = 0, acc_device_default = 1, acc_device_host = 2,
  acc_device_not_host = 3, acc_device_nvidia = 4, acc_device_radeon = 5, acc_device_gpu = 6,
  acc_device_current = -1 } acc_device_t;
typedef enum acc_device_property_t { acc_property_memory = 1, acc_property_free_memory = 2,
  acc_property_shared_memory_support = 3, acc_property_name = 0x10001,
  acc_property_vendor = 0x10002, acc_property_driver = 0x10003 } acc_device_property_t;
#define acc_async_noval (-1)
#define acc_async_sync (-2)
#define acc_async_default (-3)
#ifdef __cplusplus
extern "C" {
#endif
int acc_get_num_devices(acc_device_t);
void acc_set_device_type(acc_device_t);
acc_device_t acc_get_device_type(void);
void acc_set_device_num(int, acc_device_t);
int acc_get_device_num(acc_device_t);
acc2omp_size_t_ acc_get_property(int, acc_device_t, acc_device_property_t);
const char *acc_get_property_string(int, acc_device_t, acc_device_property_t);
void acc_init(acc_device_t);
void acc_init_device(int, acc_device_t);
void acc_shutdown(acc_device_t);
void acc_shutdown_device(int, acc_device_t);
int acc_async_test(int);
int acc_async_test_device(int, int);
int acc_async_test_all(void);
int acc_async_test_all_device(int);
void acc_wait(int);
void acc_wait_device(int, int);
void acc_wait_async(int, int);
void acc_wait_device_async(int, int, int);
void acc_wait_all(void);
void acc_wait_all_device(int);
void acc_wait_all_async(int);
void acc_wait_all_device_async(int, int);
void acc_async_wait(int);
void acc_async_wait_all(void);
int acc_get_default_async(void);
void acc_set_default_async(int);
int acc_on_device(acc_device_t);
void *acc_malloc(acc2omp_size_t_);
void acc_free(void *);
void *acc_copyin(void *, acc2omp_size_t_);
void acc_copyin_async(void *, acc2omp_size_t_, int);
void *acc_present_or_copyin(void *, acc2omp_size_t_);
void *acc_pcopyin(void *, acc2omp_size_t_);
void *acc_create(void *, acc2omp_size_t_);
void acc_create_async(void *, acc2omp_size_t_, int);
void *acc_present_or_create(void *, acc2omp_size_t_);
void *acc_pcreate(void *, acc2omp_size_t_);
void acc_copyout(void *, acc2omp_size_t_);
void acc_copyout_async(void *, acc2omp_size_t_, int);
void acc_copyout_finalize(void *, acc2omp_size_t_);
void acc_copyout_finalize_async(void *, acc2omp_size_t_, int);
void acc_delete(void *, acc2omp_size_t_);
void acc_delete_async(void *, acc2omp_size_t_, int);
void acc_delete_finalize(void *, acc2omp_size_t_);
void acc_delete_finalize_async(void *, acc2omp_size_t_, int);
void acc_update_device(void *, acc2omp_size_t_);
void acc_update_device_async(void *, acc2omp_size_t_, int);
void acc_update_self(void *, acc2omp_size_t_);
void acc_update_self_async(void *, acc2omp_size_t_, int);
void acc_map_data(void *, void *, acc2omp_size_t_);
void acc_unmap_data(void *);
void *acc_deviceptr(void *);
void *acc_hostptr(void *);
int acc_is_present(void *, acc2omp_size_t_);
void acc_memcpy_to_device(void *, void *, acc2omp_size_t_);
void acc_memcpy_to_device_async(void *, void *, acc2omp_size_t_, int);
void acc_memcpy_from_device(void *, void *, acc2omp_size_t_);
void acc_memcpy_from_device_async(void *, void *, acc2omp_size_t_, int);
void acc_memcpy_device(void *, void *, acc2omp_size_t_);
void acc_memcpy_device_async(void *, void *, acc2omp_size_t_, int);
void acc_memcpy_d2d(void *, void *, acc2omp_size_t_, int, int);
void acc_memcpy_d2d_async(void *, void *, acc2omp_size_t_, int, int, int);
void acc_attach(void **);
void acc_attach_async(void **, int);
void acc_detach(void **);
void acc_detach_async(void **, int);
void acc_detach_finalize(void **);
void acc_detach_finalize_async(void **, int);
void *acc_get_current_cuda_device(void);
void *acc_get_current_cuda_context(void);
void *acc_get_cuda_stream(int);
int acc_set_cuda_stream(int, void *);
#ifdef __cplusplus
}
#endif
#endif
"#;
