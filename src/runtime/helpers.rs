//! Helpers the translation calls (`acc2omp_queue`, `acc2omp_wait`, the device-type model,
//! device-address lookups, …): small C definitions, each weak (one definition is kept per
//! program, whichever translation units define it), include-guarded (defined once per
//! translation unit, also through headers) and documented in a comment. A file gets the
//! helpers its translation names, and the helpers those name, after its last unconditional
//! `#include` before the first use; a helper whose guard the file already has is not added
//! again, so the output is a fixed point.

use super::Cx;
use super::text::{after_eol, calls_omp, without_comments};
use crate::edit::Edit;
use crate::lex::{TokKind, Token, lex_range};
use crate::profile::OmpVersion;
use crate::rules::id;

/// One helper definition.
pub(super) struct Helper {
    /// The include guard.
    pub guard: &'static str,
    /// The identifiers it defines (a use of any of them needs it).
    pub defines: &'static [&'static str],
    /// The definition between `#define GUARD` and `#endif`, lines joined by `\n`.
    pub text: &'static str,
    /// The definition with `--omp-version 5.1`, when it differs.
    pub text51: Option<&'static str>,
}

/// Every helper, each after the helpers it uses.
pub(super) const HELPERS: &[Helper] = &[
    Helper {
        guard: "ACC2OMP_QUEUES",
        defines: &["acc2omp_queue", "acc2omp_default_async"],
        text: "/* acc2omp: one OpenMP dependence object per OpenACC async queue, and the queue of 'async' without argument (acc_set_default_async; -1 is acc_async_noval) */
__attribute__((weak)) char acc2omp_queue[64];
__attribute__((weak)) int acc2omp_default_async = -1;",
        text51: None,
    },
    Helper {
        guard: "ACC2OMP_ASYNC_T",
        defines: &["acc2omp_async_noval", "acc2omp_async_sync"],
        text: "/* acc2omp: the special OpenACC queue numbers */
enum { acc2omp_async_sync = -2, acc2omp_async_noval = -1 };",
        text51: None,
    },
    Helper {
        guard: "ACC2OMP_WAIT",
        defines: &["acc2omp_wait"],
        text: "/* acc2omp: wait for OpenACC async queue slot q, or every queue when q < 0; returns 1 */
__attribute__((weak)) int acc2omp_wait(int q)
{
    if (q < 0) {
#pragma omp taskwait
    } else {
#pragma omp taskwait depend(in: acc2omp_queue[q])
    }
    return 1;
}",
        text51: None,
    },
    Helper {
        guard: "ACC2OMP_WAIT_ANY",
        defines: &["acc2omp_wait_any"],
        text: "/* acc2omp: acc_wait_any: OpenMP cannot test a queue without waiting, so this waits for the first queue that is not acc_async_sync (-2) and returns its index, or -1 if there is none */
__attribute__((weak)) int acc2omp_wait_any(int count, int *queues)
{
    for (int i = 0; i < count; i++)
        if (queues[i] != -2) {
            acc2omp_wait((queues[i] == -1 ? acc2omp_default_async : queues[i]) & 63);
            return i;
        }
    return -1;
}",
        text51: None,
    },
    Helper {
        guard: "ACC2OMP_IS_INITIAL_DEVICE",
        defines: &["acc2omp_is_initial_device"],
        text: "/* acc2omp: omp_is_initial_device() where OpenMP forbids runtime calls (directly in 'teams', in 'loop'): asked in a nested one-thread parallel region, where they are allowed */
#pragma omp declare target
__attribute__((weak)) int acc2omp_is_initial_device(void)
{
    int r = 0;
#pragma omp parallel num_threads(1) shared(r)
    r = omp_is_initial_device();
    return r;
}
#pragma omp end declare target",
        text51: None,
    },
    Helper {
        guard: "ACC2OMP_DEVICE_T",
        defines: &[
            "acc2omp_device_t",
            "acc2omp_device_current",
            "acc2omp_device_none",
            "acc2omp_device_default",
            "acc2omp_device_host",
            "acc2omp_device_not_host",
        ],
        text: "/* acc2omp: OpenACC device types on OpenMP devices: the host is the initial device, every other device is \"not host\" */
typedef enum acc2omp_device_t {
    acc2omp_device_current = -1,
    acc2omp_device_none = 0,
    acc2omp_device_default = 1,
    acc2omp_device_host = 2,
    acc2omp_device_not_host = 4
} acc2omp_device_t;",
        text51: None,
    },
    Helper {
        guard: "ACC2OMP_DEVICE_KIND",
        defines: &["acc2omp_device_kind"],
        text: "/* acc2omp: device type t as acc2omp_device_host or acc2omp_device_not_host (acc2omp_device_none stays): the current type is the default device's, the default type is \"not host\" when there is a non-host device */
__attribute__((weak)) acc2omp_device_t acc2omp_device_kind(acc2omp_device_t t)
{
    int d = omp_get_default_device();
    if (t == acc2omp_device_none || t == acc2omp_device_host)
        return t;
    if (t == acc2omp_device_current)
        return d >= 0 && d < omp_get_num_devices() ? acc2omp_device_not_host : acc2omp_device_host;
    if (t == acc2omp_device_default)
        return omp_get_num_devices() > 0 ? acc2omp_device_not_host : acc2omp_device_host;
    return acc2omp_device_not_host;
}",
        text51: None,
    },
    Helper {
        guard: "ACC2OMP_GET_DEVICE_TYPE",
        defines: &["acc2omp_get_device_type"],
        text: "/* acc2omp: acc_get_device_type(): the type of the default device */
__attribute__((weak)) acc2omp_device_t acc2omp_get_device_type(void)
{
    return acc2omp_device_kind(acc2omp_device_current);
}",
        text51: None,
    },
    Helper {
        guard: "ACC2OMP_GET_NUM_DEVICES",
        defines: &["acc2omp_get_num_devices"],
        text: "/* acc2omp: acc_get_num_devices(t): one host; the non-initial OpenMP devices are \"not host\" */
__attribute__((weak)) int acc2omp_get_num_devices(acc2omp_device_t t)
{
    t = acc2omp_device_kind(t);
    return t == acc2omp_device_host ? 1 : t == acc2omp_device_not_host ? omp_get_num_devices() : 0;
}",
        text51: None,
    },
    Helper {
        guard: "ACC2OMP_GET_DEVICE_NUM",
        defines: &["acc2omp_get_device_num"],
        text: "/* acc2omp: acc_get_device_num(t): the default device's number when it is of type t, else 0 */
__attribute__((weak)) int acc2omp_get_device_num(acc2omp_device_t t)
{
    int d = omp_get_default_device();
    if (acc2omp_device_kind(t) != acc2omp_device_not_host)
        return 0;
    return d >= 0 && d < omp_get_num_devices() ? d : 0;
}",
        text51: None,
    },
    Helper {
        guard: "ACC2OMP_SET_DEVICE_NUM",
        defines: &["acc2omp_set_device_num"],
        text: "/* acc2omp: acc_set_device_num(n, t): the host is the initial device; \"not host\" device n is OpenMP device n (n < 0: device 0); type 0 (acc_device_none) means every device type */
__attribute__((weak)) void acc2omp_set_device_num(int n, acc2omp_device_t t)
{
    t = acc2omp_device_kind(t);
    if (t == acc2omp_device_host)
        omp_set_default_device(omp_get_initial_device());
    else if (t == acc2omp_device_not_host || t == acc2omp_device_none)
        omp_set_default_device(n < 0 ? 0 : n);
}",
        text51: None,
    },
    Helper {
        guard: "ACC2OMP_SET_DEVICE_TYPE",
        defines: &["acc2omp_set_device_type"],
        text: "/* acc2omp: acc_set_device_type(t): the host is the initial device; \"not host\" keeps a non-initial default device, else takes device 0 */
__attribute__((weak)) void acc2omp_set_device_type(acc2omp_device_t t)
{
    t = acc2omp_device_kind(t);
    if (t == acc2omp_device_host)
        omp_set_default_device(omp_get_initial_device());
    else if (t == acc2omp_device_not_host && acc2omp_device_kind(acc2omp_device_current) == acc2omp_device_host)
        omp_set_default_device(0);
}",
        text51: None,
    },
    Helper {
        guard: "ACC2OMP_PROPERTY_T",
        defines: &[
            "acc2omp_property_t",
            "acc2omp_property_memory",
            "acc2omp_property_free_memory",
            "acc2omp_property_shared_memory_support",
            "acc2omp_property_name",
            "acc2omp_property_vendor",
            "acc2omp_property_driver",
        ],
        text: "/* acc2omp: OpenACC device properties */
typedef enum acc2omp_property_t {
    acc2omp_property_memory = 1,
    acc2omp_property_free_memory = 2,
    acc2omp_property_shared_memory_support = 3,
    acc2omp_property_name = 0x10001,
    acc2omp_property_vendor = 0x10002,
    acc2omp_property_driver = 0x10003
} acc2omp_property_t;",
        text51: None,
    },
    Helper {
        guard: "ACC2OMP_GET_PROPERTY",
        defines: &["acc2omp_get_property"],
        text: "/* acc2omp: acc_get_property: OpenMP cannot query device memory, so sizes are 0 (\"not supported\"); only the host is known to share memory */
__attribute__((weak)) __SIZE_TYPE__ acc2omp_get_property(int n, acc2omp_device_t t, acc2omp_property_t p)
{
    t = acc2omp_device_kind(t);
    if (n < 0 || n >= acc2omp_get_num_devices(t))
        return 0;
    return p == acc2omp_property_shared_memory_support && t == acc2omp_device_host;
}",
        text51: None,
    },
    Helper {
        guard: "ACC2OMP_GET_PROPERTY_STRING",
        defines: &["acc2omp_get_property_string"],
        text: "/* acc2omp: acc_get_property_string: names of OpenMP devices (NULL for other properties and for devices that do not exist) */
__attribute__((weak)) const char *acc2omp_get_property_string(int n, acc2omp_device_t t, acc2omp_property_t p)
{
    t = acc2omp_device_kind(t);
    if (n < 0 || n >= acc2omp_get_num_devices(t))
        return 0;
    if (p == acc2omp_property_name)
        return t == acc2omp_device_host ? \"OpenMP initial device\" : \"OpenMP target device\";
    if (p == acc2omp_property_vendor || p == acc2omp_property_driver)
        return \"OpenMP\";
    return 0;
}",
        text51: None,
    },
    Helper {
        guard: "ACC2OMP_TARGET_ALLOC",
        defines: &["acc2omp_target_alloc"],
        text: "/* acc2omp: device memory of device dev, through OpenMP's allocator where the program links the offloading runtime (libgomp, libomptarget); a program linked without it (clang -fopenmp alone: the host is the only device) gets host memory; 0 bytes give NULL, as OpenACC and OpenMP require (libgomp's host device and malloc give a pointer) */
static void *acc2omp_omp_target_alloc(__SIZE_TYPE__, int) __attribute__((weakref(\"omp_target_alloc\")));
__attribute__((weak)) void *acc2omp_target_alloc(__SIZE_TYPE__ n, int dev)
{
    if (n == 0)
        return 0;
    return acc2omp_omp_target_alloc ? acc2omp_omp_target_alloc(n, dev) : __builtin_malloc(n);
}",
        text51: None,
    },
    Helper {
        guard: "ACC2OMP_TARGET_FREE",
        defines: &["acc2omp_target_free"],
        text: "/* acc2omp: frees what acc2omp_target_alloc returned (host memory where the program links no offloading runtime); NULL is freed as nothing */
static void acc2omp_omp_target_free(void *, int) __attribute__((weakref(\"omp_target_free\")));
__attribute__((weak)) void acc2omp_target_free(void *p, int dev)
{
    if (p == 0)
        return;
    if (acc2omp_omp_target_free)
        acc2omp_omp_target_free(p, dev);
    else
        __builtin_free(p);
}",
        text51: None,
    },
    Helper {
        guard: "ACC2OMP_TARGET_MEMCPY",
        defines: &["acc2omp_target_memcpy"],
        text: "/* acc2omp: copies n bytes between devices through OpenMP where the program links the offloading runtime; without it every device is the host, and this is memcpy */
static int acc2omp_omp_target_memcpy(void *, const void *, __SIZE_TYPE__, __SIZE_TYPE__, __SIZE_TYPE__, int, int) __attribute__((weakref(\"omp_target_memcpy\")));
__attribute__((weak)) int acc2omp_target_memcpy(void *d, const void *s, __SIZE_TYPE__ n, __SIZE_TYPE__ doff, __SIZE_TYPE__ soff, int ddev, int sdev)
{
    if (acc2omp_omp_target_memcpy)
        return acc2omp_omp_target_memcpy(d, s, n, doff, soff, ddev, sdev);
    if (n != 0)
        __builtin_memmove((char *)d + doff, (const char *)s + soff, n);
    return 0;
}",
        text51: None,
    },
    Helper {
        guard: "ACC2OMP_TARGET_IS_PRESENT",
        defines: &["acc2omp_target_is_present"],
        text: "/* acc2omp: whether host data p is present on device dev, through OpenMP where the program links the offloading runtime; without it every device is the host, where all data is present */
static int acc2omp_omp_target_is_present(const void *, int) __attribute__((weakref(\"omp_target_is_present\")));
__attribute__((weak)) int acc2omp_target_is_present(const void *p, int dev)
{
    return acc2omp_omp_target_is_present ? acc2omp_omp_target_is_present(p, dev) : 1;
}",
        text51: None,
    },
    Helper {
        guard: "ACC2OMP_MAPPED_PTR",
        defines: &["acc2omp_mapped_ptr"],
        text: "/* acc2omp: the device address of present host data h on device dev, or NULL (OpenMP 5.1's omp_get_mapped_ptr) */
__attribute__((weak)) void *acc2omp_mapped_ptr(void *h, int dev)
{
    char *p = (char *)h;
    void *d = 0;
    if (p == 0 || !acc2omp_target_is_present(p, dev))
        return 0;
#pragma omp target data use_device_ptr(p) device(dev)
    d = p;
    return d;
}",
        text51: Some(
            "/* acc2omp: the device address of present host data h on device dev, or NULL (h itself where the program links no offloading runtime: every device is the host) */
static void *acc2omp_omp_get_mapped_ptr(const void *, int) __attribute__((weakref(\"omp_get_mapped_ptr\")));
__attribute__((weak)) void *acc2omp_mapped_ptr(void *h, int dev)
{
    if (h == 0)
        return 0;
    return acc2omp_omp_get_mapped_ptr ? acc2omp_omp_get_mapped_ptr(h, dev) : h;
}",
        ),
    },
    Helper {
        guard: "ACC2OMP_DEVICEPTR",
        defines: &["acc2omp_deviceptr", "acc2omp_ptr_pairs", "acc2omp_ptr_next"],
        text: "/* acc2omp: acc_deviceptr(h): the device address of present host data h on the default device, or NULL; the last 256 pairs are kept for acc2omp_hostptr */
__attribute__((weak)) void *acc2omp_ptr_pairs[2 * 256];
__attribute__((weak)) unsigned acc2omp_ptr_next;
__attribute__((weak)) void *acc2omp_deviceptr(void *h)
{
    void *d = acc2omp_mapped_ptr(h, omp_get_default_device());
    if (d != 0 && d != h) {
#pragma omp critical(acc2omp_ptrs)
        {
            unsigned k = acc2omp_ptr_next++ % 256;
            acc2omp_ptr_pairs[2 * k] = h;
            acc2omp_ptr_pairs[2 * k + 1] = d;
        }
    }
    return d;
}",
        text51: None,
    },
    Helper {
        guard: "ACC2OMP_HOSTPTR",
        defines: &["acc2omp_hostptr"],
        text: "/* acc2omp: acc_hostptr(d): OpenMP cannot look up a host address from a device address; this finds addresses inside the data of the last 256 device addresses acc2omp_deviceptr returned (acc_deviceptr, acc_copyin, acc_create) while that data stays mapped, else NULL */
__attribute__((weak)) void *acc2omp_hostptr(void *d)
{
    int dev = omp_get_default_device();
    void *h = 0;
    if (d == 0 || dev < 0 || dev >= omp_get_num_devices())
        return d;
#pragma omp critical(acc2omp_ptrs)
    for (unsigned i = 0; i < 256 && i < acc2omp_ptr_next && h == 0; i++) {
        unsigned k = (acc2omp_ptr_next - 1 - i) % 256;
        char *hb = (char *)acc2omp_ptr_pairs[2 * k], *db = (char *)acc2omp_ptr_pairs[2 * k + 1];
        char *c = hb + ((char *)d - db);
        if ((char *)d >= db && acc2omp_mapped_ptr(c, dev) == d)
            h = c;
    }
    return h;
}",
        text51: None,
    },
    Helper {
        guard: "ACC2OMP_COPYIN",
        defines: &["acc2omp_copyin"],
        text: "/* acc2omp: acc_copyin(h, n) whose value is used: maps the bytes (reference counted) and returns their device address */
__attribute__((weak)) void *acc2omp_copyin(void *h, __SIZE_TYPE__ n)
{
    char *p = (char *)h;
    (void)p;
#pragma omp target enter data map(to: p[0:n])
    return acc2omp_deviceptr(h);
}",
        text51: None,
    },
    Helper {
        guard: "ACC2OMP_CREATE",
        defines: &["acc2omp_create"],
        text: "/* acc2omp: acc_create(h, n) whose value is used: allocates the bytes (reference counted) and returns their device address */
__attribute__((weak)) void *acc2omp_create(void *h, __SIZE_TYPE__ n)
{
    char *p = (char *)h;
    (void)p;
#pragma omp target enter data map(alloc: p[0:n])
    return acc2omp_deviceptr(h);
}",
        text51: None,
    },
    Helper {
        guard: "ACC2OMP_IS_PRESENT",
        defines: &["acc2omp_is_present"],
        text: "/* acc2omp: acc_is_present(h, n): the first and the last byte are present on the default device */
__attribute__((weak)) int acc2omp_is_present(void *h, __SIZE_TYPE__ n)
{
    char *p = (char *)h;
    int d = omp_get_default_device();
    return p != 0 && acc2omp_target_is_present(p, d) && (n < 2 || acc2omp_target_is_present(p + n - 1, d));
}",
        text51: None,
    },
];

/// The token index of the `#define` of an include guard that opens the file
/// (`#ifndef X` then `#define X`, only comments before them).
fn include_guard(src: &str, toks: &[Token]) -> Option<usize> {
    let words = |t: &Token| -> Vec<String> {
        lex_range(src, t.start() + 1..t.end(), false)
            .iter()
            .map(|w| w.text(src).to_string())
            .collect()
    };
    let (a, b) = (toks.first()?, toks.get(1)?);
    if a.kind != TokKind::PpLine || b.kind != TokKind::PpLine {
        return None;
    }
    match (words(a).as_slice(), words(b).as_slice()) {
        ([i, x], [d, y]) if i == "ifndef" && d == "define" && x == y => Some(1),
        _ => None,
    }
}

/// The helper that defines `name`.
fn helper_of(name: &str) -> Option<usize> {
    HELPERS.iter().position(|h| h.defines.contains(&name))
}

impl Helper {
    pub fn body(&self, v: OmpVersion) -> &'static str {
        match self.text51 {
            Some(t) if v >= OmpVersion::V51 => t,
            _ => self.text,
        }
    }

    /// The definition without its comments (what it uses).
    fn code(&self, v: OmpVersion) -> String {
        without_comments(self.body(v))
    }

    /// Whether it calls OpenMP routines, itself or through the helpers it uses.
    fn needs_openmp(&self, v: OmpVersion) -> bool {
        let code = self.code(v);
        calls_omp(&code)
            || helper_names(&code)
                .filter(|n| !self.defines.contains(n))
                .filter_map(helper_of)
                .any(|h| HELPERS[h].needs_openmp(v))
    }

    /// The guarded definition, with the file's line ending. A helper that calls OpenMP
    /// routines (or a helper that does) is defined only where an OpenMP runtime is
    /// (`keep_guards`: see [`super::preprocessor::openmp_builds`]): the file still builds
    /// serially.
    pub fn definition(&self, v: OmpVersion, eol: &str, keep_guards: bool) -> String {
        let g = self.guard;
        let omp = self.needs_openmp(v);
        let mut s = format!("#ifndef {g}{eol}#define {g}{eol}");
        if omp {
            s.push_str(super::preprocessor::openmp_builds(keep_guards));
            s.push_str(eol);
        }
        for line in self.body(v).lines() {
            s.push_str(line);
            s.push_str(eol);
        }
        if omp {
            s.push_str(&format!("#endif{eol}"));
        }
        s.push_str("#endif");
        s.push_str(eol);
        s
    }
}

/// The `acc2omp_…` identifiers in `text`.
pub(super) fn helper_names(text: &str) -> impl Iterator<Item = &str> {
    text.match_indices("acc2omp_").filter_map(move |(k, _)| {
        let before = text[..k].chars().next_back();
        if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_') {
            return None;
        }
        let len = text[k..]
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(text.len() - k);
        Some(&text[k..k + len])
    })
}

/// The helpers `texts` need (with the helpers those use), in definition order.
pub(super) fn needed<'t>(texts: impl Iterator<Item = &'t str>, v: OmpVersion) -> Vec<usize> {
    let mut need = vec![false; HELPERS.len()];
    let mut todo: Vec<usize> = texts.flat_map(helper_names).filter_map(helper_of).collect();
    while let Some(h) = todo.pop() {
        if !std::mem::replace(&mut need[h], true) {
            todo.extend(helper_names(&HELPERS[h].code(v)).filter_map(helper_of));
        }
    }
    (0..HELPERS.len()).filter(|&h| need[h]).collect()
}

impl Cx<'_> {
    /// The helpers the file's translation uses (`texts`: every text it inserts; `first`: the
    /// offset of the first use), defined once after the last `#include` outside conditionals
    /// before the first use, else before the first line of code.
    pub(super) fn helper_definitions<'t>(
        &mut self,
        toks: &[Token],
        texts: impl Iterator<Item = &'t str>,
        first: usize,
    ) -> Vec<Edit> {
        let src = self.src;
        let v = self.opts.omp_version;
        let add: Vec<&Helper> = needed(texts, v)
            .into_iter()
            .map(|h| &HELPERS[h])
            .filter(|h| !src.contains(&format!("#define {}", h.guard)))
            .collect();
        if add.is_empty() {
            return Vec::new();
        }
        let mut text: String = add
            .iter()
            .map(|h| h.definition(v, self.eol, self.opts.keep_openacc_guards))
            .collect();
        // A header's include guard (`#ifndef X` `#define X` opening the file) is no condition.
        let guard = include_guard(src, toks);
        let mut depth = 0usize;
        let mut last_include = None;
        let mut has_omp_h = false;
        let mut after_guard = None;
        for (i, t) in toks
            .iter()
            .enumerate()
            .take_while(|(_, t)| t.start() < first)
        {
            if t.kind != TokKind::PpLine {
                continue;
            }
            if guard.is_some_and(|g| i <= g) {
                after_guard = Some(i + 1);
                continue;
            }
            let inner = self.pp.head(src, t);
            match inner.first().map(|w| w.text(src)) {
                Some("if" | "ifdef" | "ifndef") => depth += 1,
                Some("endif") => depth = depth.saturating_sub(1),
                Some("include") if depth == 0 => {
                    last_include = Some(t.end());
                    // openacc.h becomes omp.h.
                    let line = &src[t.range()];
                    has_omp_h |= line.contains("omp.h") || line.contains("openacc.h");
                }
                _ => {}
            }
        }
        // Helpers that call OpenMP routines need omp.h before them: the file gets it (from
        // its openacc.h, else at its top), but an include that comes later or only under a
        // condition does not cover them.
        if add.iter().any(|h| h.needs_openmp(v)) {
            self.omp_at.get_or_insert(first);
            let later = toks.iter().any(|t| {
                t.kind == TokKind::PpLine && {
                    let line = &src[t.range()];
                    line.contains("include")
                        && (line.contains("omp.h") || line.contains("openacc.h"))
                }
            });
            if !has_omp_h && later {
                text.insert_str(
                    0,
                    &super::preprocessor::omp_include(self.eol, self.opts.keep_openacc_guards),
                );
            }
        }
        let pos = match last_include {
            Some(end) => {
                let p = after_eol(src, end);
                if p == end {
                    // The include ends the file without a line break.
                    text.insert_str(0, self.eol);
                }
                p
            }
            None => {
                // Inside a header's include guard, after its `#define`.
                let Some(t) = toks.get(after_guard.unwrap_or(0)) else {
                    return Vec::new();
                };
                let ls = self.index.line_start(t.start());
                if src[ls..t.start()].trim_matches([' ', '\t']).is_empty() {
                    ls
                } else {
                    t.start()
                }
            }
        };
        if add.iter().any(|h| h.guard == "ACC2OMP_QUEUES") {
            self.diag(
                first,
                id::ASYNC_QUEUES,
                "OpenACC async queues become OpenMP dependences on 'acc2omp_queue', which is defined once in this file (a weak definition shared by every translation unit)".into(),
            );
        }
        let others: Vec<&str> = add
            .iter()
            .filter(|h| h.guard != "ACC2OMP_QUEUES")
            .map(|h| h.defines[0])
            .collect();
        if !others.is_empty() {
            self.diag(
                first,
                id::RUNTIME_HELPER,
                format!(
                    "the translation uses the helper(s) {}, defined once in this file (weak and include-guarded, so every translation unit may define them)",
                    others.join(", ")
                ),
            );
        }
        vec![Edit::insert(pos, text)]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn helpers_are_ordered_and_closed() {
        for v in [OmpVersion::V50, OmpVersion::V51] {
            for (i, h) in HELPERS.iter().enumerate() {
                for name in helper_names(&h.code(v)) {
                    if let Some(j) = helper_of(name) {
                        assert!(j <= i, "{} uses {name}, defined later", h.guard);
                    } else {
                        // Locals of the helper itself are not helpers.
                        assert!(!name.is_empty());
                    }
                }
            }
        }
        assert_eq!(
            needed(["x = acc2omp_hostptr(p);"].into_iter(), OmpVersion::V50)
                .iter()
                .map(|&h| HELPERS[h].guard)
                .collect::<Vec<_>>(),
            [
                "ACC2OMP_TARGET_IS_PRESENT",
                "ACC2OMP_MAPPED_PTR",
                "ACC2OMP_DEVICEPTR",
                "ACC2OMP_HOSTPTR"
            ]
        );
        assert_eq!(
            helper_names("acc2omp_queue[acc2omp_default_async & 63] xacc2omp_y")
                .collect::<Vec<_>>(),
            ["acc2omp_queue", "acc2omp_default_async"]
        );
    }
}
