//! One libclang parse per file, flattened into an arena of cursors in the main file; the
//! facts are then read from the arena in Rust. Extents are checked before use: a cursor whose
//! range is not inside the file's text is dropped.

#![allow(non_upper_case_globals)]

use super::SiteInput;
use super::facts::{Declared, LoopShape, RegionVar, SiteFacts, VarKind, VarType};
use super::load::Library;
use super::wire::{Reader, Writer};
use crate::lex::{TokKind, Token};
use clang_sys::*;
use std::collections::HashMap;
use std::ffi::{CStr, CString};
use std::ops::Range;
use std::os::raw::{c_char, c_uint, c_ulong};

/// Where the virtual `openacc.h` lives; searched last (`-isystem`).
pub const VIRTUAL_DIR: &str = "/__acc2omp_virtual__/include";
/// Where the stand-in `omp.h` lives (`super::omp_h`): searched after the system directories
/// (`-idirafter`), so that a real one wins.
const FALLBACK_DIR: &str = "/__acc2omp_virtual__/fallback";

/// Declarations of the OpenACC runtime API, enough for code that uses it to parse.
const OPENACC_H: &str = r#"#ifndef ACC2OMP_VIRTUAL_OPENACC_H
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

const MAX_DEPTH: usize = 256;
const MAX_NODES: usize = 4_000_000;

/// A string from libclang, disposed.
///
/// # Safety
/// `s` must be a string libclang returned and not yet disposed.
pub(super) unsafe fn take_string(s: CXString) -> String {
    unsafe {
        let p = clang_getCString(s);
        let out = if p.is_null() {
            String::new()
        } else {
            CStr::from_ptr(p).to_string_lossy().into_owned()
        };
        clang_disposeString(s);
        out
    }
}

#[derive(Debug, Clone)]
struct Node {
    kind: CXCursorKind,
    start: usize,
    end: usize,
    parent: Option<usize>,
    /// VarDecl/ParmDecl itself, or a DeclRefExpr to one: index into `vars`.
    var: Option<usize>,
    is_stmt: bool,
    is_expr: bool,
}

#[derive(Debug, Clone)]
struct VarEntry {
    name: String,
    ty: VarType,
    /// Declaration offset in the main file.
    decl: Option<usize>,
    decl_extent: Option<Range<usize>>,
}

/// First and last `CXCursor_OpenACC…Construct` kinds (libclang 21 and newer, with
/// `-fopenacc`): compute, loop, combined, data, enter data, exit data, host_data, wait, init,
/// shutdown, set, update, atomic, cache.
pub const ACC_FIRST: CXCursorKind = 320;
pub const ACC_LAST: CXCursorKind = 333;

fn is_acc_construct(kind: CXCursorKind) -> bool {
    (ACC_FIRST..=ACC_LAST).contains(&kind)
}

/// An OpenACC construct as libclang's OpenACC front end built it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Construct {
    pub kind: CXCursorKind,
    /// The directive: from `#` (or `_Pragma`) to its last token.
    pub directive: Range<usize>,
    /// The statement the construct applies to.
    pub stmt: Option<Range<usize>>,
}

/// The flattened translation unit.
pub struct Parsed {
    nodes: Vec<Node>,
    /// The children of node `n`, in order: `kids[kid_at[n]..kid_at[n + 1]]` (one array for
    /// all nodes, not a vector per node: a large file has millions).
    kids: Vec<usize>,
    kid_at: Vec<usize>,
    vars: Vec<VarEntry>,
    /// Errors in the main file: offset and message.
    pub errors: Vec<(usize, String)>,
    /// OpenACC constructs (only when parsed with `-fopenacc`), by directive start.
    pub constructs: Vec<Construct>,
    /// Ranges the preprocessor skipped (inactive `#if` branches).
    skipped: Vec<Range<usize>>,
    /// Offsets of cursors whose children were not visited (nesting too deep).
    truncated: Vec<usize>,
    /// The files the parse read besides the main file (headers), as libclang names them.
    pub includes: Vec<String>,
    /// An `#include` named a file that was not found: creating it would change the parse.
    pub missing_include: bool,
    /// Statements and expressions in statement position, by start (outermost first).
    positions: Vec<usize>,
    /// References to variables, by start.
    refs: Vec<usize>,
    /// `decl_nodes` per variable name, by offset.
    decls_named: HashMap<String, Vec<usize>>,
    /// Offsets of `decl_nodes` per variable name, ascending (the sites' `inner`).
    declared: std::sync::Arc<crate::hash::HashMap<String, Vec<usize>>>,
}

struct Walk<'s> {
    src: &'s str,
    src_len: usize,
    /// The main file: cursors elsewhere (headers) are skipped, macro expansions in the main
    /// file are kept.
    main: CXFile,
    nodes: Vec<Node>,
    stack: Vec<usize>,
    vars: Vec<VarEntry>,
    var_keys: crate::hash::HashMap<(bool, usize, String), usize>,
    /// `var_for` of each declaration seen, by libclang's declaration pointer: a reference
    /// to a known variable costs no spelling or location.
    by_decl: crate::hash::HashMap<usize, usize>,
    /// The children of the OpenACC constructs being walked (`construct` reads them).
    construct_kids: crate::hash::HashMap<usize, Vec<usize>>,
    truncated: Vec<usize>,
    constructs: Vec<Construct>,
    failed: bool,
}

unsafe fn file_offset(loc: CXSourceLocation) -> (CXFile, usize) {
    let mut file: CXFile = std::ptr::null_mut();
    let mut off: c_uint = 0;
    unsafe {
        clang_getFileLocation(
            loc,
            &mut file,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            &mut off,
        )
    };
    (file, off as usize)
}

fn is_scalar_kind(k: CXTypeKind) -> bool {
    (CXType_Bool..=CXType_NullPtr).contains(&k)
        || (CXType_Float128..=40).contains(&k)
        || k == CXType_Enum
        || k == CXType_Complex
}

/// Mapping-relevant facts of a declaration's type. `spelled`: the bounds written after a
/// parameter's name (libclang gives a parameter's type as written, `double[N]`, which C
/// adjusts to `double *`).
unsafe fn var_type(decl: CXCursor, spelled: Option<Vec<String>>) -> VarType {
    unsafe {
        let t = clang_getCanonicalType(clang_getCursorType(decl));
        let mut elem = t;
        let is_array = |k: CXTypeKind| {
            matches!(
                k,
                CXType_ConstantArray
                    | CXType_IncompleteArray
                    | CXType_VariableArray
                    | CXType_DependentSizedArray
            )
        };
        let param = clang_getCursorKind(decl) == CXCursor_ParmDecl && is_array(t.kind);
        let mut param_dims = None;
        if param {
            let spelled = spelled.unwrap_or_default();
            let mut dims = Vec::new();
            let mut d = t;
            while is_array(d.kind) && dims.len() < 16 {
                // The bound as spelled. Never its value: a macro or typedef that spells it
                // elsewhere may give another value in another configuration (`-D`).
                let text = spelled.get(dims.len()).filter(|x| !x.is_empty()).cloned();
                dims.push(text.filter(|_| d.kind == CXType_ConstantArray));
                d = clang_getCanonicalType(clang_getArrayElementType(d));
            }
            // No bound written after the name (`double VEC(a)`, `vec_t a`): a pointer of
            // unknown extent, as the syntactic mode sees it, rather than an error.
            param_dims = (!spelled.is_empty()).then_some(dims);
        }
        let kind = match t.kind {
            _ if param => VarKind::Pointer,
            CXType_Pointer | CXType_BlockPointer | CXType_MemberPointer => VarKind::Pointer,
            CXType_ConstantArray => {
                let n = clang_getArraySize(t);
                VarKind::Array {
                    extent: u64::try_from(n).ok(),
                }
            }
            CXType_IncompleteArray | CXType_VariableArray | CXType_DependentSizedArray => {
                VarKind::Array { extent: None }
            }
            CXType_Record => VarKind::Struct,
            k if is_scalar_kind(k) => VarKind::Scalar,
            _ => VarKind::Other,
        };
        let levels = array_levels(&mut elem);
        let dims = match t.kind {
            CXType_Pointer => {
                1 + array_levels(&mut clang_getCanonicalType(clang_getPointeeType(t)))
            }
            _ => levels,
        };
        VarType {
            kind,
            is_const: !param && clang_isConstQualifiedType(elem) != 0,
            incomplete: !param && clang_Type_getSizeOf(t) == CXTypeLayoutError_Incomplete as i64,
            restrict: t.kind == CXType_Pointer && clang_isRestrictQualifiedType(t) != 0,
            dims,
            extents: extents(t),
            param_dims,
        }
    }
}

/// Strips the array levels of `t` (at most 16), leaving its element type; returns how many.
unsafe fn array_levels(t: &mut CXType) -> u8 {
    let mut n = 0;
    while matches!(
        t.kind,
        CXType_ConstantArray
            | CXType_IncompleteArray
            | CXType_VariableArray
            | CXType_DependentSizedArray
    ) && n < 16
    {
        *t = unsafe { clang_getCanonicalType(clang_getArrayElementType(*t)) };
        n += 1;
    }
    n
}

/// See `VarType::extents`.
unsafe fn extents(t: CXType) -> Vec<Option<u64>> {
    unsafe {
        let mut out = Vec::new();
        let mut t = t;
        if t.kind == CXType_Pointer {
            out.push(None);
            t = clang_getCanonicalType(clang_getPointeeType(t));
        }
        while out.len() < 16 {
            match t.kind {
                CXType_ConstantArray => out.push(u64::try_from(clang_getArraySize(t)).ok()),
                CXType_IncompleteArray | CXType_VariableArray | CXType_DependentSizedArray => {
                    out.push(None)
                }
                _ => break,
            }
            t = clang_getCanonicalType(clang_getArrayElementType(t));
        }
        out
    }
}

extern "C" fn visitor(c: CXCursor, _parent: CXCursor, data: CXClientData) -> CXChildVisitResult {
    // SAFETY: `data` is the `Walk` passed to `clang_visitChildren` by `Walk::children`.
    let w = unsafe { &mut *(data as *mut Walk) };
    if w.failed {
        return CXChildVisit_Break;
    }
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| unsafe { w.visit(c) }));
    if r.is_err() {
        w.failed = true;
        return CXChildVisit_Break;
    }
    CXChildVisit_Continue
}

impl Walk<'_> {
    unsafe fn children(&mut self, c: CXCursor) {
        unsafe { clang_visitChildren(c, visitor, self as *mut Walk as CXClientData) };
    }

    unsafe fn extent(&self, c: CXCursor) -> Option<(usize, usize)> {
        unsafe {
            let r = clang_getCursorExtent(c);
            let (f1, s) = file_offset(clang_getRangeStart(r));
            let (f2, e) = file_offset(clang_getRangeEnd(r));
            (!f1.is_null() && f1 == f2 && s <= e && e <= self.src_len).then_some((s, e))
        }
    }

    unsafe fn var_for(&mut self, decl: CXCursor) -> usize {
        let id = decl.data[0] as usize;
        if let Some(&i) = self.by_decl.get(&id) {
            return i;
        }
        let i = unsafe { self.var_for_new(decl) };
        if id != 0 {
            self.by_decl.insert(id, i);
        }
        i
    }

    unsafe fn var_for_new(&mut self, decl: CXCursor) -> usize {
        unsafe {
            let name = take_string(clang_getCursorSpelling(decl));
            let loc = clang_getCursorLocation(decl);
            let (file, off) = file_offset(loc);
            let main = !file.is_null() && file == self.main;
            let key = (main, off, name);
            if let Some(&i) = self.var_keys.get(&key) {
                return i;
            }
            let spelled = main.then(|| {
                let end = off + key.2.len();
                self.src
                    .get(off..end)
                    .filter(|t| *t == key.2)
                    .map(|_| super::facts::spelled_dims(self.src, end))
                    .unwrap_or_default()
            });
            let ty = var_type(decl, spelled);
            let decl_extent = if main {
                self.extent(decl).map(|(s, e)| s..e)
            } else {
                None
            };
            let i = self.vars.len();
            self.vars.push(VarEntry {
                name: key.2.clone(),
                ty,
                decl: main.then_some(off),
                decl_extent,
            });
            self.var_keys.insert(key, i);
            i
        }
    }

    unsafe fn visit(&mut self, c: CXCursor) {
        unsafe {
            if self.nodes.len() >= MAX_NODES {
                self.failed = true;
                return;
            }
            let (file, _) = file_offset(clang_getCursorLocation(c));
            if file.is_null() || file != self.main {
                return;
            }
            let Some((start, end)) = self.extent(c) else {
                return;
            };
            // A construct's clause expressions (before its directive ends) are left out: the
            // tree is then the one a parse without `-fopenacc` gives, plus the constructs.
            if let Some(&p) = self.stack.last()
                && is_acc_construct(self.nodes[p].kind)
                && start < self.nodes[p].end
            {
                return;
            }
            let kind = clang_getCursorKind(c);
            let var = match kind {
                CXCursor_VarDecl | CXCursor_ParmDecl => Some(self.var_for(c)),
                CXCursor_DeclRefExpr => {
                    let r = clang_getCursorReferenced(c);
                    match clang_getCursorKind(r) {
                        CXCursor_VarDecl | CXCursor_ParmDecl => Some(self.var_for(r)),
                        _ => None,
                    }
                }
                _ => None,
            };
            let idx = self.nodes.len();
            let parent = self.stack.last().copied();
            self.nodes.push(Node {
                kind,
                start,
                end,
                parent,
                var,
                is_stmt: clang_isStatement(kind) != 0,
                is_expr: clang_isExpression(kind) != 0,
            });
            if let Some(p) = parent
                && is_acc_construct(self.nodes[p].kind)
            {
                self.construct_kids.entry(p).or_default().push(idx);
            }
            if self.stack.len() >= MAX_DEPTH {
                self.truncated.push(start);
                return;
            }
            self.stack.push(idx);
            self.children(c);
            self.stack.pop();
            if is_acc_construct(kind) {
                self.construct(idx);
            }
            // Clang ends the statements around a construct at its directive (a `for` whose
            // body is `#pragma acc loop` + loop): they span what the construct spans.
            if let Some(p) = parent
                && self.nodes[idx].end > end
            {
                self.nodes[p].end = self.nodes[p].end.max(self.nodes[idx].end);
            }
        }
    }

    /// Record an OpenACC construct; its node then spans its statement too, as a statement
    /// with its pragma does for the rest of the analysis.
    fn construct(&mut self, idx: usize) {
        let n = &self.nodes[idx];
        let directive = n.start..n.end;
        let kids = self.construct_kids.remove(&idx).unwrap_or_default();
        let stmt = kids
            .iter()
            .rev()
            .map(|&k| &self.nodes[k])
            .find(|k| (k.is_stmt || k.is_expr) && k.start >= directive.end)
            .map(|k| k.start..k.end);
        if let Some(st) = &stmt {
            self.nodes[idx].end = self.nodes[idx].end.max(st.end);
        }
        self.constructs.push(Construct {
            kind: self.nodes[idx].kind,
            directive,
            stmt,
        });
    }
}

struct Tu(CXTranslationUnit);

impl Drop for Tu {
    fn drop(&mut self) {
        unsafe { clang_disposeTranslationUnit(self.0) };
    }
}

/// Parse `src` as the file `name` with `args`.
fn parse_tu(
    index: CXIndex,
    name: &str,
    src: &str,
    args: &[String],
    options: CXTranslationUnit_Flags,
) -> Result<Tu, String> {
    let cname = CString::new(name).map_err(|_| "the file name contains a NUL byte")?;
    let header = CString::new(format!("{VIRTUAL_DIR}/openacc.h")).unwrap_or_default();
    let omp = CString::new(format!("{FALLBACK_DIR}/omp.h")).unwrap_or_default();
    let cargs: Vec<CString> = args
        .iter()
        .filter_map(|a| CString::new(a.as_str()).ok())
        .collect();
    let argv: Vec<*const c_char> = cargs.iter().map(|a| a.as_ptr()).collect();
    let mut unsaved = [
        CXUnsavedFile {
            Filename: cname.as_ptr(),
            Contents: src.as_ptr() as *const c_char,
            Length: src.len() as c_ulong,
        },
        CXUnsavedFile {
            Filename: header.as_ptr(),
            Contents: OPENACC_H.as_ptr() as *const c_char,
            Length: OPENACC_H.len() as c_ulong,
        },
        CXUnsavedFile {
            Filename: omp.as_ptr(),
            Contents: super::omp_h::OMP_H.as_ptr() as *const c_char,
            Length: super::omp_h::OMP_H.len() as c_ulong,
        },
    ];
    let mut tu: CXTranslationUnit = std::ptr::null_mut();
    let err = unsafe {
        clang_parseTranslationUnit2(
            index,
            cname.as_ptr(),
            argv.as_ptr(),
            argv.len() as i32,
            unsaved.as_mut_ptr(),
            unsaved.len() as c_uint,
            options,
            &mut tu,
        )
    };
    if err != CXError_Success || tu.is_null() {
        let why = match err {
            CXError_Crashed => "libclang crashed",
            CXError_InvalidArguments => "libclang rejected the arguments",
            CXError_ASTReadError => "libclang could not read the AST",
            _ => "libclang failed",
        };
        return Err(format!("{why} (error {err})"));
    }
    Ok(Tu(tu))
}

/// Full argument list for a parse. With a libclang that has an OpenACC front end (21 and
/// newer) the file is parsed with `-fopenacc`.
pub fn arguments(lib: &Library, name: &str, user: &[String]) -> Vec<String> {
    let mut args: Vec<String> = Vec::new();
    if !user.iter().any(|a| a == "-x") {
        let cxx_std = user
            .iter()
            .any(|a| a.starts_with("-std=") && a.contains("++"));
        let ext = std::path::Path::new(name)
            .extension()
            .and_then(|e| e.to_str())
            .unwrap_or("c");
        let lang = if cxx_std || !matches!(ext, "c" | "h") {
            "c++"
        } else {
            "c"
        };
        args.extend(["-x".to_string(), lang.to_string()]);
    }
    args.extend(user.iter().cloned());
    args.extend(
        [
            "-D_OPENACC=201711",
            // The translation turns `_OPENACC` tests into `_OPENMP` ones: with both defined
            // (to one value, for comparisons) a second run parses the same regions.
            "-D_OPENMP=201711",
            "-isystem",
            VIRTUAL_DIR,
            "-idirafter",
            FALLBACK_DIR,
            "-w",
            "-ferror-limit=0",
            // Clang 22 raised the default to 2048, deep enough to overflow its parser's stack.
            "-fbracket-depth=256",
        ]
        .map(String::from),
    );
    if lib.openacc() {
        args.push("-fopenacc".into());
    }
    if let Some(r) = &lib.resource_dir {
        args.push("-resource-dir".into());
        args.push(r.to_string_lossy().into_owned());
    }
    args
}

/// Parse and flatten.
pub fn parse(index: CXIndex, name: &str, src: &str, args: &[String]) -> Result<Parsed, String> {
    read(index, name, src, args, true)
}

/// [`parse`] without the lookup indexes, for [`Parsed::encode`] only (the worker process:
/// its reply leaves the indexes out, and decoding builds them).
pub fn parse_for_encoding(
    index: CXIndex,
    name: &str,
    src: &str,
    args: &[String],
) -> Result<Parsed, String> {
    read(index, name, src, args, false)
}

fn read(
    index: CXIndex,
    name: &str,
    src: &str,
    args: &[String],
    indexed: bool,
) -> Result<Parsed, String> {
    // The detailed preprocessing record keeps the skipped (inactive) ranges.
    let tu = parse_tu(
        index,
        name,
        src,
        args,
        CXTranslationUnit_KeepGoing | CXTranslationUnit_DetailedPreprocessingRecord,
    )?;
    let cname = CString::new(name).map_err(|_| "bad name")?;
    unsafe {
        let file = clang_getFile(tu.0, cname.as_ptr());
        if file.is_null() {
            return Err("libclang does not know the file".into());
        }
        let mut w = Walk {
            src,
            src_len: src.len(),
            main: file,
            nodes: Vec::new(),
            stack: Vec::new(),
            vars: Vec::new(),
            var_keys: Default::default(),
            by_decl: Default::default(),
            construct_kids: Default::default(),
            truncated: Vec::new(),
            constructs: Vec::new(),
            failed: false,
        };
        w.children(clang_getTranslationUnitCursor(tu.0));
        if w.failed {
            return Err("the file is too large or too deeply nested for libclang".into());
        }
        let mut errors = Vec::new();
        let mut missing_include = false;
        for i in 0..clang_getNumDiagnostics(tu.0) {
            let d = clang_getDiagnostic(tu.0, i);
            if d.is_null() {
                continue;
            }
            if clang_getDiagnosticSeverity(d) >= CXDiagnostic_Error {
                let loc = clang_getDiagnosticLocation(d);
                let (f, off) = file_offset(loc);
                let msg = take_string(clang_getDiagnosticSpelling(d));
                missing_include |= msg.ends_with("file not found");
                if !f.is_null() && f == file && off <= src.len() {
                    errors.push((off, msg));
                } else if f.is_null() {
                    errors.push((0, msg));
                }
            }
            clang_disposeDiagnostic(d);
        }
        let mut skipped = Vec::new();
        if !file.is_null() {
            let list = clang_getSkippedRanges(tu.0, file);
            if !list.is_null() {
                let l = &*list;
                for k in 0..l.count as usize {
                    let r = *l.ranges.add(k);
                    let (_, s) = file_offset(clang_getRangeStart(r));
                    let (_, e) = file_offset(clang_getRangeEnd(r));
                    if s <= e && e <= src.len() {
                        skipped.push(s..e);
                    }
                }
                clang_disposeSourceRangeList(list);
            }
        }
        let mut constructs = w.constructs;
        constructs.sort_by_key(|c| c.directive.start);
        let parts = (w.nodes, w.vars, errors, constructs, skipped, w.truncated);
        let mut parsed = if indexed {
            Parsed::indexed(parts.0, parts.1, parts.2, parts.3, parts.4, parts.5)
        } else {
            Parsed::unindexed(parts.0, parts.1, parts.2, parts.3, parts.4, parts.5)
        };
        parsed.includes = included_files(&tu, file);
        parsed.missing_include = missing_include;
        Ok(parsed)
    }
}

extern "C" fn add_inclusion(
    file: CXFile,
    _stack: *mut CXSourceLocation,
    _depth: c_uint,
    data: CXClientData,
) {
    // SAFETY: `data` is the `Vec` that `included_files` passes, alive for the call.
    let files = unsafe { &mut *(data as *mut Vec<CXFile>) };
    files.push(file);
}

/// The files `tu` read besides `main` and the virtual `openacc.h`, by their real paths.
fn included_files(tu: &Tu, main: CXFile) -> Vec<String> {
    let mut files: Vec<CXFile> = Vec::new();
    unsafe {
        clang_getInclusions(
            tu.0,
            add_inclusion,
            &mut files as *mut Vec<CXFile> as CXClientData,
        )
    };
    let mut out: Vec<String> = files
        .into_iter()
        .filter(|&f| !f.is_null() && f != main)
        .map(|f| unsafe {
            let real = take_string(clang_File_tryGetRealPathName(f));
            if real.is_empty() {
                take_string(clang_getFileName(f))
            } else {
                real
            }
        })
        .filter(|n| !n.is_empty() && !n.starts_with(VIRTUAL_DIR))
        .collect();
    out.sort();
    out.dedup();
    out
}

impl Parsed {
    /// The parse with its lookup indexes built.
    fn indexed(
        nodes: Vec<Node>,
        vars: Vec<VarEntry>,
        errors: Vec<(usize, String)>,
        constructs: Vec<Construct>,
        skipped: Vec<Range<usize>>,
        truncated: Vec<usize>,
    ) -> Parsed {
        // Children by counting: parents precede their children, so each list is in order.
        let mut kid_at = vec![0usize; nodes.len() + 1];
        for n in &nodes {
            if let Some(p) = n.parent {
                kid_at[p + 1] += 1;
            }
        }
        for k in 1..kid_at.len() {
            kid_at[k] += kid_at[k - 1];
        }
        let mut kids = vec![0usize; kid_at[nodes.len()]];
        let mut next = kid_at.clone();
        for (i, n) in nodes.iter().enumerate() {
            if let Some(p) = n.parent {
                kids[next[p]] = i;
                next[p] += 1;
            }
        }
        let mut positions: Vec<usize> = (0..nodes.len())
            .filter(|&i| {
                let n = &nodes[i];
                (n.is_stmt || n.is_expr) && n.parent.is_some_and(|p| nodes[p].is_stmt)
            })
            .collect();
        positions.sort_by_key(|&i| (nodes[i].start, std::cmp::Reverse(nodes[i].end)));
        let mut refs: Vec<usize> = (0..nodes.len())
            .filter(|&i| nodes[i].kind == CXCursor_DeclRefExpr && nodes[i].var.is_some())
            .collect();
        refs.sort_by_key(|&i| nodes[i].start);
        let mut decl_nodes: Vec<usize> = (0..nodes.len())
            .filter(|&i| matches!(nodes[i].kind, CXCursor_VarDecl | CXCursor_ParmDecl))
            .collect();
        decl_nodes.sort_by_key(|&i| nodes[i].start);
        let mut decls_named: HashMap<String, Vec<usize>> = HashMap::new();
        let mut declared: crate::hash::HashMap<String, Vec<usize>> = Default::default();
        for &i in &decl_nodes {
            if let Some(v) = nodes[i].var {
                decls_named.entry(vars[v].name.clone()).or_default().push(i);
                declared
                    .entry(vars[v].name.clone())
                    .or_default()
                    .push(nodes[i].start);
            }
        }
        Parsed {
            nodes,
            kids,
            kid_at,
            vars,
            errors,
            constructs,
            skipped,
            truncated,
            positions,
            refs,
            decls_named,
            declared: std::sync::Arc::new(declared),
            includes: Vec::new(),
            missing_include: false,
        }
    }

    /// The parse as walked, without children or indexes (see `parse_for_encoding`).
    fn unindexed(
        nodes: Vec<Node>,
        vars: Vec<VarEntry>,
        errors: Vec<(usize, String)>,
        constructs: Vec<Construct>,
        skipped: Vec<Range<usize>>,
        truncated: Vec<usize>,
    ) -> Parsed {
        Parsed {
            nodes,
            kids: Vec::new(),
            kid_at: Vec::new(),
            vars,
            errors,
            constructs,
            skipped,
            truncated,
            positions: Vec::new(),
            refs: Vec::new(),
            decls_named: HashMap::new(),
            declared: Default::default(),
            includes: Vec::new(),
            missing_include: false,
        }
    }

    /// For the worker process's reply (children and indexes are rebuilt on decoding).
    pub fn encode(&self, w: &mut Writer) {
        w.list(&self.nodes, |w, n| {
            w.int(i64::from(n.kind));
            w.range(&(n.start..n.end));
            w.opt(n.parent);
            w.opt(n.var);
            w.bool(n.is_stmt);
            w.bool(n.is_expr);
        });
        w.list(&self.vars, |w, v| {
            w.str(&v.name);
            match v.ty.kind {
                VarKind::Scalar => w.uint(0),
                VarKind::Pointer => w.uint(1),
                VarKind::Array { extent } => {
                    w.uint(2);
                    w.uint(extent.map_or(0, |e| e.saturating_add(1)));
                }
                VarKind::Struct => w.uint(3),
                VarKind::Other => w.uint(4),
            }
            w.bool(v.ty.is_const);
            w.bool(v.ty.incomplete);
            w.bool(v.ty.restrict);
            w.uint(u64::from(v.ty.dims));
            w.list(&v.ty.extents, |w, d| {
                w.opt(d.and_then(|d| usize::try_from(d).ok()))
            });
            // param_dims: absent, or each bound as spelled (absent: not a constant).
            w.bool(v.ty.param_dims.is_some());
            w.list(v.ty.param_dims.as_deref().unwrap_or(&[]), |w, d| {
                w.bool(d.is_some());
                w.str(d.as_deref().unwrap_or(""));
            });
            w.opt(v.decl);
            w.bool(v.decl_extent.is_some());
            w.range(&v.decl_extent.clone().unwrap_or(0..0));
        });
        w.list(&self.errors, |w, (o, m)| {
            w.usize(*o);
            w.str(m);
        });
        w.list(&self.constructs, |w, c| {
            w.int(i64::from(c.kind));
            w.range(&c.directive);
            w.bool(c.stmt.is_some());
            w.range(&c.stmt.clone().unwrap_or(0..0));
        });
        w.list(&self.skipped, |w, r| w.range(r));
        w.list(&self.truncated, |w, o| w.usize(*o));
        w.list(&self.includes, |w, f| w.str(f));
        w.bool(self.missing_include);
    }

    /// The inverse of [`Parsed::encode`]; `None` for anything malformed or out of bounds.
    pub fn decode(r: &mut Reader) -> Option<Parsed> {
        let kind = |r: &mut Reader| CXCursorKind::try_from(r.int()?).ok();
        let nodes = r.list(|r| {
            let kind = kind(r)?;
            let span = r.range()?;
            Some(Node {
                kind,
                start: span.start,
                end: span.end,
                parent: r.opt()?,
                var: r.opt()?,
                is_stmt: r.bool()?,
                is_expr: r.bool()?,
            })
        })?;
        let vars = r.list(|r| {
            let name = r.str()?;
            let kind = match r.uint()? {
                0 => VarKind::Scalar,
                1 => VarKind::Pointer,
                2 => VarKind::Array {
                    extent: r.uint()?.checked_sub(1),
                },
                3 => VarKind::Struct,
                4 => VarKind::Other,
                _ => return None,
            };
            let ty = VarType {
                kind,
                is_const: r.bool()?,
                incomplete: r.bool()?,
                restrict: r.bool()?,
                dims: u8::try_from(r.uint()?).ok()?,
                extents: r.list(|r| Some(r.opt()?.map(|d| d as u64)))?,
                param_dims: {
                    let some = r.bool()?;
                    let dims = r.list(|r| {
                        let known = r.bool()?;
                        let text = r.str()?;
                        Some(known.then_some(text))
                    })?;
                    some.then_some(dims)
                },
            };
            let decl = r.opt()?;
            let has_extent = r.bool()?;
            let extent = r.range()?;
            Some(VarEntry {
                name,
                ty,
                decl,
                decl_extent: has_extent.then_some(extent),
            })
        })?;
        let errors = r.list(|r| Some((r.usize()?, r.str()?)))?;
        let constructs = r.list(|r| {
            let kind = kind(r)?;
            let directive = r.range()?;
            let has_stmt = r.bool()?;
            let stmt = r.range()?;
            Some(Construct {
                kind,
                directive,
                stmt: has_stmt.then_some(stmt),
            })
        })?;
        let skipped = r.list(|r| r.range())?;
        let truncated = r.list(|r| r.usize())?;
        let includes = r.list(|r| r.str())?;
        let missing_include = r.bool()?;
        for (i, n) in nodes.iter().enumerate() {
            if n.start > n.end || n.var.is_some_and(|v| v >= vars.len()) {
                return None;
            }
            // Parents precede their children in the walk's order.
            if n.parent.is_some_and(|p| p >= i) {
                return None;
            }
        }
        let mut parsed = Parsed::indexed(nodes, vars, errors, constructs, skipped, truncated);
        parsed.includes = includes;
        parsed.missing_include = missing_include;
        Some(parsed)
    }
}

/// Byte ranges of the `#pragma acc` lines and `_Pragma("acc ...")` operators, from
/// libclang's raw tokens (comments excluded): for comparing with our scanner.
pub fn directive_spans(
    index: CXIndex,
    name: &str,
    src: &str,
    args: &[String],
) -> Result<Vec<Range<usize>>, String> {
    let tu = parse_tu(index, name, src, args, CXTranslationUnit_KeepGoing)?;
    let cname = CString::new(name).map_err(|_| "bad name")?;
    let mut toks: Vec<(CXTokenKind, usize, usize)> = Vec::new();
    unsafe {
        let file = clang_getFile(tu.0, cname.as_ptr());
        if file.is_null() {
            return Err("libclang does not know the file".into());
        }
        let range = clang_getRange(
            clang_getLocationForOffset(tu.0, file, 0),
            clang_getLocationForOffset(tu.0, file, src.len() as c_uint),
        );
        let mut ptr: *mut CXToken = std::ptr::null_mut();
        let mut n: c_uint = 0;
        clang_tokenize(tu.0, range, &mut ptr, &mut n);
        if !ptr.is_null() {
            for k in 0..n as usize {
                let t = *ptr.add(k);
                let kind = clang_getTokenKind(t);
                let r = clang_getTokenExtent(tu.0, t);
                let (_, s) = file_offset(clang_getRangeStart(r));
                let (_, e) = file_offset(clang_getRangeEnd(r));
                if s <= e && e <= src.len() {
                    toks.push((kind, s, e));
                }
            }
            clang_disposeTokens(tu.0, ptr, n);
        }
    }
    let text = |k: usize| src.get(toks[k].1..toks[k].2).unwrap_or("");
    // A token starts a logical line when a newline not preceded by `\` lies between it and
    // the previous token (comments are tokens here, so their newlines do not count).
    let starts_line = |k: usize| {
        let from = if k == 0 { 0 } else { toks[k - 1].2 };
        let gap = &src.as_bytes()[from..toks[k].1];
        k == 0
            || gap.iter().enumerate().any(|(j, &b)| {
                b == b'\n' && {
                    let before = &gap[..j];
                    let before = before.strip_suffix(b"\r").unwrap_or(before);
                    !before.ends_with(b"\\")
                }
            })
    };
    let mut out = Vec::new();
    let mut k = 0;
    while k < toks.len() {
        if toks[k].0 == CXToken_Comment {
            k += 1;
            continue;
        }
        if text(k) == "#" && starts_line(k) {
            let words: Vec<usize> = (k + 1..toks.len())
                .filter(|&j| toks[j].0 != CXToken_Comment)
                .take(2)
                .collect();
            let is_acc = words.len() == 2
                && !starts_line(words[0])
                && !starts_line(words[1])
                && text(words[0]) == "pragma"
                && text(words[1]) == "acc";
            let mut end = k + 1;
            while end < toks.len() && !starts_line(end) {
                end += 1;
            }
            if is_acc {
                let last = (k..end)
                    .rev()
                    .find(|&j| toks[j].0 != CXToken_Comment)
                    .unwrap_or(k);
                out.push(toks[k].1..toks[last].2);
            } else if words.first().is_some_and(|&w| text(w) == "define") {
                // `_Pragma` operators inside a macro body.
                for j in k..end {
                    if let Some(r) = operator_at(&toks, src, j) {
                        out.push(r);
                    }
                }
            }
            k = end;
            continue;
        }
        if let Some(r) = operator_at(&toks, src, k) {
            out.push(r);
        }
        k += 1;
    }
    Ok(out)
}

fn operator_at(toks: &[(CXTokenKind, usize, usize)], src: &str, k: usize) -> Option<Range<usize>> {
    let t = |j: usize| toks.get(j).and_then(|x| src.get(x.1..x.2));
    if t(k)? != "_Pragma" || t(k + 1)? != "(" {
        return None;
    }
    let lit = t(k + 2)?;
    let body = lit.strip_prefix('"')?.trim_start();
    if !(body.starts_with("acc")
        && body[3..].starts_with(|c: char| !c.is_alphanumeric() && c != '_'))
    {
        return None;
    }
    (t(k + 3)? == ")").then(|| toks[k].1..toks[k + 3].2)
}

/// Tokens of our lexer, searchable by offset.
struct Toks<'a> {
    src: &'a str,
    toks: &'a [Token],
}

impl Toks<'_> {
    /// First token starting at or after `off`.
    fn after(&self, off: usize) -> Option<usize> {
        let i = self.toks.partition_point(|t| t.start < off);
        (i < self.toks.len()).then_some(i)
    }
    fn text_after(&self, off: usize) -> &str {
        self.after(off).map_or("", |i| self.toks[i].text(self.src))
    }
    fn kind_after(&self, off: usize) -> Option<TokKind> {
        self.after(off).map(|i| self.toks[i].kind)
    }
    /// Only preprocessor lines start in `from..to`.
    fn only_pp(&self, from: usize, to: usize) -> bool {
        let mut i = self.after(from).unwrap_or(self.toks.len());
        while i < self.toks.len() && self.toks[i].start < to {
            if self.toks[i].kind != TokKind::PpLine {
                return false;
            }
            i += 1;
        }
        true
    }
    /// Only `;` and preprocessor lines start in `from..to`.
    fn only_semis(&self, from: usize, to: usize) -> bool {
        let mut i = self.after(from).unwrap_or(self.toks.len());
        while i < self.toks.len() && self.toks[i].start < to {
            let t = &self.toks[i];
            if t.kind != TokKind::PpLine && t.text(self.src) != ";" {
                return false;
            }
            i += 1;
        }
        true
    }
}

/// Why a site's clang facts were not used.
#[derive(Debug)]
pub enum Rejected {
    /// libclang attaches the directive elsewhere (statement start it found, if any).
    Mismatch(Option<usize>),
    /// Errors inside the region: (offset, message).
    Errors(usize, String),
}

impl Parsed {
    fn first_child(&self, n: usize) -> Option<usize> {
        self.children(n).first().copied()
    }

    fn children(&self, n: usize) -> &[usize] {
        &self.kids[self.kid_at[n]..self.kid_at[n + 1]]
    }

    fn is_write(&self, t: &Toks, r: usize) -> bool {
        let node = &self.nodes[r];
        let Some(v) = node.var else { return false };
        let var = &self.vars[v];
        if !t.src.as_bytes()[node.start.min(t.src.len())..].starts_with(var.name.as_bytes()) {
            return true; // spelled by a macro: assume the worst
        }
        let aggregate = matches!(var.ty.kind, VarKind::Array { .. } | VarKind::Struct);
        let mut cur = r;
        let mut guard = 0;
        while let Some(p) = self.nodes[cur].parent {
            guard += 1;
            if guard > 64 {
                break;
            }
            let pn = &self.nodes[p];
            let first = self.first_child(p) == Some(cur);
            let climb = match pn.kind {
                CXCursor_ParenExpr => true,
                CXCursor_UnexposedExpr => aggregate,
                CXCursor_MemberRefExpr => first && t.text_after(self.nodes[cur].end) == ".",
                CXCursor_ArraySubscriptExpr => first && aggregate,
                _ => false,
            };
            if !climb {
                break;
            }
            cur = p;
        }
        let Some(p) = self.nodes[cur].parent else {
            return false;
        };
        let pn = &self.nodes[p];
        let c = &self.nodes[cur];
        match pn.kind {
            CXCursor_BinaryOperator | CXCursor_CompoundAssignOperator => {
                if self.first_child(p) != Some(cur) {
                    return false;
                }
                let op = t.text_after(c.end);
                crate::lex::ASSIGNMENT_OPS.contains(&op)
                    || t.kind_after(c.end) != Some(TokKind::Punct)
            }
            CXCursor_UnaryOperator => {
                if pn.start < c.start {
                    let op = t.text_after(pn.start);
                    matches!(op, "++" | "--" | "&")
                        || t.kind_after(pn.start) != Some(TokKind::Punct)
                } else {
                    matches!(t.text_after(c.end), "++" | "--")
                }
            }
            _ => false,
        }
    }

    /// The first statement libclang has after `site_end` (the outermost of those starting
    /// at the same place).
    fn stmt_after(&self, site_end: usize) -> Option<usize> {
        let k = self
            .positions
            .partition_point(|&i| self.nodes[i].start < site_end);
        self.positions.get(k).copied()
    }

    fn loop_shape(&self, t: &Toks, f: usize, depth: usize) -> Option<LoopShape> {
        let n = &self.nodes[f];
        if n.kind == CXCursor_CXXForRangeStmt {
            return Some(LoopShape {
                var: None,
                declared: true,
                depth: 1,
            });
        }
        if n.kind != CXCursor_ForStmt || depth > 64 {
            return None;
        }
        let kids = self.children(f);
        let spelled = t.text_after(n.start) == "for"
            && t.after(n.start).is_some_and(|i| t.toks[i].start == n.start);
        let init = if spelled {
            // The init is the child before the first `;` inside the parentheses.
            let open = t.after(n.start + 3)?;
            let mut depth_p = 0i32;
            let mut semi = None;
            for k in open..t.toks.len() {
                match t.toks[k].text(t.src) {
                    "(" | "[" | "{" => depth_p += 1,
                    ")" | "]" | "}" => {
                        depth_p -= 1;
                        if depth_p == 0 {
                            break;
                        }
                    }
                    ";" if depth_p == 1 => {
                        semi = Some(t.toks[k].start);
                        break;
                    }
                    _ => {}
                }
            }
            let semi = semi?;
            kids.iter().copied().find(|&c| self.nodes[c].start < semi)
        } else {
            kids.first()
                .copied()
                .filter(|&c| self.nodes[c].kind == CXCursor_DeclStmt)
        };
        let (var, declared) = match init {
            Some(i) if self.nodes[i].kind == CXCursor_DeclStmt => {
                let v = self
                    .children(i)
                    .iter()
                    .find_map(|&d| self.nodes[d].var)
                    .map(|v| self.vars[v].name.clone());
                (v, true)
            }
            Some(i) => (self.assigned_var(t, i, 0), false),
            None => (None, false),
        };
        let mut depth_n = 1;
        if let Some(&body) = kids.last() {
            // Blocks of one statement around the inner loop keep the nest perfect; clang's
            // OpenACC construct nodes are looked through.
            let mut inner = self.through_constructs(body);
            while self.nodes[inner].kind == CXCursor_CompoundStmt
                && let [only] = self.children(inner)
            {
                inner = self.through_constructs(*only);
            }
            let inner = Some(inner).filter(|&c| self.nodes[c].kind == CXCursor_ForStmt);
            if let Some(inner) = inner
                && inner != init.unwrap_or(usize::MAX)
                && let Some(s) = self.loop_shape(t, inner, depth + 1)
            {
                depth_n += s.depth;
            }
        }
        Some(LoopShape {
            var,
            declared,
            depth: depth_n,
        })
    }

    /// The statement of the OpenACC construct `n` (its last child, nested constructs looked
    /// through), as the syntactic reading looks through nested directives; `n` otherwise.
    fn through_constructs(&self, mut n: usize) -> usize {
        while is_acc_construct(self.nodes[n].kind) {
            match self.children(n).last() {
                Some(&s) if self.nodes[s].is_stmt => n = s,
                _ => break,
            }
        }
        n
    }

    /// `i` in `i = 0` or `i = 0, j = 0`.
    fn assigned_var(&self, t: &Toks, e: usize, depth: usize) -> Option<String> {
        let n = &self.nodes[e];
        if n.kind != CXCursor_BinaryOperator || depth > 8 {
            return None;
        }
        let lhs = self.first_child(e)?;
        match t.text_after(self.nodes[lhs].end) {
            "=" => {
                let mut l = lhs;
                while self.nodes[l].kind == CXCursor_ParenExpr {
                    l = self.first_child(l)?;
                }
                let v = self.nodes[l].var?;
                (self.nodes[l].kind == CXCursor_DeclRefExpr).then(|| self.vars[v].name.clone())
            }
            "," => self.assigned_var(t, lhs, depth + 1),
            _ => None,
        }
    }

    fn scope_of(&self, d: usize, len: usize) -> Range<usize> {
        let mut cur = self.nodes[d].parent;
        while let Some(p) = cur {
            let n = &self.nodes[p];
            if matches!(
                n.kind,
                CXCursor_CompoundStmt
                    | CXCursor_ForStmt
                    | CXCursor_IfStmt
                    | CXCursor_WhileStmt
                    | CXCursor_SwitchStmt
                    | CXCursor_FunctionDecl
                    | CXCursor_CXXMethod
                    | CXCursor_Constructor
                    | CXCursor_Destructor
                    | CXCursor_FunctionTemplate
                    | CXCursor_LambdaExpr
                    | CXCursor_CXXForRangeStmt
                    | CXCursor_CXXCatchStmt
            ) {
                return n.start..n.end;
            }
            cur = n.parent;
        }
        0..len
    }

    /// The type of `name` as declared where `at` can see it.
    fn lookup(&self, name: &str, at: usize, len: usize) -> Option<VarType> {
        // The declarations of `name` before `at`, nearest first: the first whose scope holds
        // `at` is the innermost visible one.
        let list = self.decls_named.get(name).map_or(&[][..], Vec::as_slice);
        let before = list.partition_point(|&i| self.nodes[i].start < at);
        let best = list[..before]
            .iter()
            .rev()
            .find(|&&i| self.scope_of(i, len).contains(&at))
            .and_then(|&i| Some((self.nodes[i].start, self.nodes[i].var?)));
        if let Some((_, v)) = best {
            return Some(self.var_type_checked(v));
        }
        // A global from a header that the file references somewhere.
        self.vars
            .iter()
            .position(|v| v.decl.is_none() && v.name == name)
            .map(|v| self.var_type_checked(v))
    }

    /// A variable's type, unless errors in its declaration make it untrustworthy.
    fn var_type_checked(&self, v: usize) -> VarType {
        let e = &self.vars[v];
        match &e.decl_extent {
            Some(r) if self.errors.iter().any(|(o, _)| r.contains(o)) => VarType::unknown(),
            _ => e.ty.clone(),
        }
    }

    pub fn in_skipped(&self, off: usize) -> bool {
        self.skipped.iter().any(|r| r.contains(&off))
    }

    /// Facts for one site, or why libclang's view cannot be used for it.
    pub fn site_facts(
        &self,
        src: &str,
        toks: &[Token],
        s: &SiteInput,
    ) -> Result<SiteFacts, Rejected> {
        let t = Toks { src, toks };
        let mut f = SiteFacts {
            exact: true,
            ..SiteFacts::default()
        };
        let region = if let Some(syn) = &s.stmt {
            // Errors before the region's end may explain a missing or different statement.
            let mismatch = |at: Option<usize>| match self
                .errors
                .iter()
                .filter(|(o, _)| *o < syn.end)
                .min_by_key(|(o, _)| *o)
            {
                Some((o, m)) => Rejected::Errors(*o, m.clone()),
                None => Rejected::Mismatch(at),
            };
            let Some(n) = self.stmt_after(s.end) else {
                return Err(mismatch(None));
            };
            let node = &self.nodes[n];
            // The syntactic statement may begin with nested directives (pragma lines).
            let agrees = t.only_pp(s.end, node.start)
                && syn.start <= node.start
                && t.only_pp(syn.start, node.start)
                && node.end <= syn.end
                && t.only_semis(node.end, syn.end);
            if !agrees {
                return Err(mismatch(Some(node.start)));
            }
            let region = node.start..syn.end;
            if let Some((o, m)) = self
                .errors
                .iter()
                .find(|(o, _)| *o >= s.start && *o < region.end)
            {
                return Err(Rejected::Errors(*o, m.clone()));
            }
            if let Some(o) = self.truncated.iter().find(|o| region.contains(o)) {
                return Err(Rejected::Errors(*o, "nested too deeply to analyze".into()));
            }
            if s.is_loop {
                f.loop_shape = self.loop_shape(&t, n, 0);
            }
            f.stmt = Some(region.clone());
            Some(region)
        } else {
            None
        };
        if s.vars
            && let Some(region) = &region
        {
            let mut order: Vec<usize> = Vec::new();
            let mut by_var: HashMap<usize, RegionVar> = HashMap::new();
            let from = self
                .refs
                .partition_point(|&i| self.nodes[i].start < region.start);
            for &i in &self.refs[from..] {
                let n = &self.nodes[i];
                if n.start >= region.end {
                    break;
                }
                let Some(v) = n.var else { continue };
                let e = &self.vars[v];
                if e.decl.is_some_and(|d| region.contains(&d)) {
                    continue;
                }
                let write = self.is_write(&t, i);
                let rv = by_var.entry(v).or_insert_with(|| {
                    order.push(v);
                    RegionVar {
                        name: e.name.clone(),
                        ty: self.var_type_checked(v),
                        decl: e.decl,
                        first_use: n.start,
                        writes: Vec::new(),
                    }
                });
                rv.first_use = rv.first_use.min(n.start);
                if write {
                    rv.writes.push(n.start);
                }
            }
            f.vars = order
                .into_iter()
                .filter_map(|v| by_var.remove(&v))
                .collect();
            f.inner = Declared::new(self.declared.clone(), region.clone());
            f.vars.sort_by_key(|v| v.first_use);
        }
        for name in &s.names {
            if let Some(ty) = self.lookup(name, s.start, src.len()) {
                f.names.insert(name.clone(), ty);
            }
        }
        Ok(f)
    }
}
