//! A stand-in `omp.h` for the libclang parse, found only where no real one is (it is
//! searched after the system directories): libclang without the OpenMP runtime's headers
//! (libclang 22 without libomp-22-dev) would otherwise report `omp.h` missing in every file a
//! first run translated (which adds `#include <omp.h>`), and a file whose includes are not
//! all found does not get clang's OpenACC checks, so a second run would decide otherwise.
//! The OpenMP 5.1 runtime API (section 3 of the specification), enough for code that uses it
//! to parse; values are those of no particular implementation.

pub const OMP_H: &str = r#"#ifndef ACC2OMP_VIRTUAL_OMP_H
#define ACC2OMP_VIRTUAL_OMP_H
typedef __SIZE_TYPE__ acc2omp_omp_size_t_;
typedef __INTPTR_TYPE__ omp_intptr_t;
typedef __UINTPTR_TYPE__ omp_uintptr_t;
typedef struct omp_lock_t { void *acc2omp_p_; } omp_lock_t;
typedef struct omp_nest_lock_t { void *acc2omp_p_; } omp_nest_lock_t;
typedef enum omp_sched_t { omp_sched_static = 1, omp_sched_dynamic = 2, omp_sched_guided = 3,
  omp_sched_auto = 4, omp_sched_monotonic = 0x40000000 } omp_sched_t;
typedef enum omp_proc_bind_t { omp_proc_bind_false = 0, omp_proc_bind_true = 1,
  omp_proc_bind_primary = 2, omp_proc_bind_master = 2, omp_proc_bind_close = 3,
  omp_proc_bind_spread = 4 } omp_proc_bind_t;
typedef enum omp_sync_hint_t { omp_sync_hint_none = 0, omp_sync_hint_uncontended = 1,
  omp_sync_hint_contended = 2, omp_sync_hint_nonspeculative = 4,
  omp_sync_hint_speculative = 8 } omp_sync_hint_t;
typedef omp_sync_hint_t omp_lock_hint_t;
#define omp_lock_hint_none omp_sync_hint_none
#define omp_lock_hint_uncontended omp_sync_hint_uncontended
#define omp_lock_hint_contended omp_sync_hint_contended
#define omp_lock_hint_nonspeculative omp_sync_hint_nonspeculative
#define omp_lock_hint_speculative omp_sync_hint_speculative
typedef enum omp_pause_resource_t { omp_pause_soft = 1, omp_pause_hard = 2 } omp_pause_resource_t;
typedef enum omp_event_handle_t { acc2omp_event_max_ = __INTPTR_MAX__ } omp_event_handle_t;
typedef struct omp_depend_t { void *acc2omp_p_; } omp_depend_t;
typedef void *omp_interop_t;
#define omp_interop_none ((omp_interop_t)0)
typedef enum omp_interop_property_t { omp_ipr_fr_id = -1, omp_ipr_fr_name = -2,
  omp_ipr_vendor = -3, omp_ipr_vendor_name = -4, omp_ipr_device_num = -5,
  omp_ipr_platform = -6, omp_ipr_device = -7, omp_ipr_device_context = -8,
  omp_ipr_targetsync = -9, omp_ipr_first = -9 } omp_interop_property_t;
typedef enum omp_interop_rc_t { omp_irc_no_value = 1, omp_irc_success = 0, omp_irc_empty = -1,
  omp_irc_out_of_range = -2, omp_irc_type_int = -3, omp_irc_type_ptr = -4,
  omp_irc_type_str = -5, omp_irc_other = -6 } omp_interop_rc_t;
typedef enum omp_interop_fr_t { omp_ifr_cuda = 1, omp_ifr_cuda_driver = 2, omp_ifr_opencl = 3,
  omp_ifr_sycl = 4, omp_ifr_hip = 5, omp_ifr_level_zero = 6, omp_ifr_last = 7 } omp_interop_fr_t;
typedef enum omp_memspace_handle_t { omp_default_mem_space = 0, omp_large_cap_mem_space = 1,
  omp_const_mem_space = 2, omp_high_bw_mem_space = 3, omp_low_lat_mem_space = 4,
  acc2omp_memspace_max_ = __INTPTR_MAX__ } omp_memspace_handle_t;
typedef enum omp_allocator_handle_t { omp_null_allocator = 0, omp_default_mem_alloc = 1,
  omp_large_cap_mem_alloc = 2, omp_const_mem_alloc = 3, omp_high_bw_mem_alloc = 4,
  omp_low_lat_mem_alloc = 5, omp_cgroup_mem_alloc = 6, omp_pteam_mem_alloc = 7,
  omp_thread_mem_alloc = 8, acc2omp_allocator_max_ = __INTPTR_MAX__ } omp_allocator_handle_t;
typedef enum omp_alloctrait_key_t { omp_atk_sync_hint = 1, omp_atk_alignment = 2,
  omp_atk_access = 3, omp_atk_pool_size = 4, omp_atk_fallback = 5, omp_atk_fb_data = 6,
  omp_atk_pinned = 7, omp_atk_partition = 8 } omp_alloctrait_key_t;
typedef enum omp_alloctrait_value_t { omp_atv_false = 0, omp_atv_true = 1,
  omp_atv_contended = 3, omp_atv_uncontended = 4, omp_atv_serialized = 5,
  omp_atv_sequential = 5, omp_atv_private = 6, omp_atv_all = 7, omp_atv_thread = 8,
  omp_atv_pteam = 9, omp_atv_cgroup = 10, omp_atv_default_mem_fb = 11, omp_atv_null_fb = 12,
  omp_atv_abort_fb = 13, omp_atv_allocator_fb = 14, omp_atv_environment = 15,
  omp_atv_nearest = 16, omp_atv_blocked = 17, omp_atv_interleaved = 18,
  omp_atv_default = -1 } omp_alloctrait_value_t;
typedef struct omp_alloctrait_t { omp_alloctrait_key_t key; omp_uintptr_t value; } omp_alloctrait_t;
typedef enum omp_control_tool_result_t { omp_control_tool_notool = -2,
  omp_control_tool_nocallback = -1, omp_control_tool_success = 0,
  omp_control_tool_ignored = 1 } omp_control_tool_result_t;
typedef enum omp_control_tool_t { omp_control_tool_start = 1, omp_control_tool_pause = 2,
  omp_control_tool_flush = 3, omp_control_tool_end = 4 } omp_control_tool_t;
#ifdef __cplusplus
extern "C" {
#define ACC2OMP_DEFAULT_(v) = v
#else
#define ACC2OMP_DEFAULT_(v)
#endif
void omp_set_num_threads(int);
int omp_get_num_threads(void);
int omp_get_max_threads(void);
int omp_get_thread_num(void);
int omp_get_num_procs(void);
int omp_in_parallel(void);
void omp_set_dynamic(int);
int omp_get_dynamic(void);
int omp_get_cancellation(void);
void omp_set_nested(int);
int omp_get_nested(void);
void omp_set_schedule(omp_sched_t, int);
void omp_get_schedule(omp_sched_t *, int *);
int omp_get_thread_limit(void);
int omp_get_supported_active_levels(void);
void omp_set_max_active_levels(int);
int omp_get_max_active_levels(void);
int omp_get_level(void);
int omp_get_ancestor_thread_num(int);
int omp_get_team_size(int);
int omp_get_active_level(void);
int omp_in_final(void);
omp_proc_bind_t omp_get_proc_bind(void);
int omp_get_num_places(void);
int omp_get_place_num_procs(int);
void omp_get_place_proc_ids(int, int *);
int omp_get_place_num(void);
int omp_get_partition_num_places(void);
void omp_get_partition_place_nums(int *);
void omp_set_affinity_format(const char *);
acc2omp_omp_size_t_ omp_get_affinity_format(char *, acc2omp_omp_size_t_);
void omp_display_affinity(const char *);
acc2omp_omp_size_t_ omp_capture_affinity(char *, acc2omp_omp_size_t_, const char *);
void omp_set_default_device(int);
int omp_get_default_device(void);
int omp_get_num_devices(void);
int omp_get_device_num(void);
int omp_get_num_teams(void);
int omp_get_team_num(void);
int omp_is_initial_device(void);
int omp_get_initial_device(void);
int omp_get_max_task_priority(void);
int omp_pause_resource(omp_pause_resource_t, int);
int omp_pause_resource_all(omp_pause_resource_t);
void omp_set_num_teams(int);
int omp_get_max_teams(void);
void omp_set_teams_thread_limit(int);
int omp_get_teams_thread_limit(void);
void omp_display_env(int);
void omp_init_lock(omp_lock_t *);
void omp_init_lock_with_hint(omp_lock_t *, omp_sync_hint_t);
void omp_destroy_lock(omp_lock_t *);
void omp_set_lock(omp_lock_t *);
void omp_unset_lock(omp_lock_t *);
int omp_test_lock(omp_lock_t *);
void omp_init_nest_lock(omp_nest_lock_t *);
void omp_init_nest_lock_with_hint(omp_nest_lock_t *, omp_sync_hint_t);
void omp_destroy_nest_lock(omp_nest_lock_t *);
void omp_set_nest_lock(omp_nest_lock_t *);
void omp_unset_nest_lock(omp_nest_lock_t *);
int omp_test_nest_lock(omp_nest_lock_t *);
double omp_get_wtime(void);
double omp_get_wtick(void);
void omp_fulfill_event(omp_event_handle_t);
void *omp_target_alloc(acc2omp_omp_size_t_, int);
void omp_target_free(void *, int);
int omp_target_is_present(const void *, int);
int omp_target_is_accessible(const void *, acc2omp_omp_size_t_, int);
int omp_target_memcpy(void *, const void *, acc2omp_omp_size_t_, acc2omp_omp_size_t_,
  acc2omp_omp_size_t_, int, int);
int omp_target_memcpy_rect(void *, const void *, acc2omp_omp_size_t_, int,
  const acc2omp_omp_size_t_ *, const acc2omp_omp_size_t_ *, const acc2omp_omp_size_t_ *,
  const acc2omp_omp_size_t_ *, const acc2omp_omp_size_t_ *, int, int);
int omp_target_memcpy_async(void *, const void *, acc2omp_omp_size_t_, acc2omp_omp_size_t_,
  acc2omp_omp_size_t_, int, int, int, omp_depend_t *);
int omp_target_memcpy_rect_async(void *, const void *, acc2omp_omp_size_t_, int,
  const acc2omp_omp_size_t_ *, const acc2omp_omp_size_t_ *, const acc2omp_omp_size_t_ *,
  const acc2omp_omp_size_t_ *, const acc2omp_omp_size_t_ *, int, int, int, omp_depend_t *);
int omp_target_associate_ptr(const void *, const void *, acc2omp_omp_size_t_,
  acc2omp_omp_size_t_, int);
int omp_target_disassociate_ptr(const void *, int);
void *omp_get_mapped_ptr(const void *, int);
int omp_get_num_interop_properties(const omp_interop_t);
omp_intptr_t omp_get_interop_int(const omp_interop_t, omp_interop_property_t, int *);
void *omp_get_interop_ptr(const omp_interop_t, omp_interop_property_t, int *);
const char *omp_get_interop_str(const omp_interop_t, omp_interop_property_t, int *);
const char *omp_get_interop_name(const omp_interop_t, omp_interop_property_t);
const char *omp_get_interop_type_desc(const omp_interop_t, omp_interop_property_t);
const char *omp_get_interop_rc_desc(const omp_interop_t, omp_interop_rc_t);
omp_allocator_handle_t omp_init_allocator(omp_memspace_handle_t, int, const omp_alloctrait_t *);
void omp_destroy_allocator(omp_allocator_handle_t);
void omp_set_default_allocator(omp_allocator_handle_t);
omp_allocator_handle_t omp_get_default_allocator(void);
void *omp_alloc(acc2omp_omp_size_t_,
  omp_allocator_handle_t ACC2OMP_DEFAULT_(omp_null_allocator));
void *omp_aligned_alloc(acc2omp_omp_size_t_, acc2omp_omp_size_t_,
  omp_allocator_handle_t ACC2OMP_DEFAULT_(omp_null_allocator));
void omp_free(void *, omp_allocator_handle_t ACC2OMP_DEFAULT_(omp_null_allocator));
void *omp_calloc(acc2omp_omp_size_t_, acc2omp_omp_size_t_,
  omp_allocator_handle_t ACC2OMP_DEFAULT_(omp_null_allocator));
void *omp_aligned_calloc(acc2omp_omp_size_t_, acc2omp_omp_size_t_, acc2omp_omp_size_t_,
  omp_allocator_handle_t ACC2OMP_DEFAULT_(omp_null_allocator));
void *omp_realloc(void *, acc2omp_omp_size_t_,
  omp_allocator_handle_t ACC2OMP_DEFAULT_(omp_null_allocator),
  omp_allocator_handle_t ACC2OMP_DEFAULT_(omp_null_allocator));
int omp_control_tool(int, int, void *);
#undef ACC2OMP_DEFAULT_
#ifdef __cplusplus
}
#endif
#endif
"#;
