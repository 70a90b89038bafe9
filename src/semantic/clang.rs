//! One libclang parse per file, flattened into an arena of cursors in the main file; the
//! facts are then read from the arena in Rust. Extents are checked before use: a cursor whose
//! range is not inside the file's text is dropped.
//!
//! This file holds the parse and the arena's types; `walk` flattens the cursors, `arena`
//! indexes (and encodes) the result, `site_facts` reads a site's facts from it.

#![allow(non_upper_case_globals)]

mod arena;
mod header_macros;
mod macro_dims;
mod openacc_h;
mod seen;
mod site_facts;
mod walk;

pub use site_facts::Rejected;

use super::facts::VarType;
use super::load::Library;
use clang_sys::*;
use openacc_h::OPENACC_H;
use std::ffi::{CStr, CString};
use std::ops::Range;
use std::os::raw::{c_char, c_uint, c_ulong};
use walk::{Walk, file_offset};

/// Where the virtual `openacc.h` lives; searched last (`-isystem`).
pub const VIRTUAL_DIR: &str = "/__acc2omp_virtual__/include";
/// Where the stand-in `omp.h` lives (`super::omp_h`): searched after the system directories
/// (`-idirafter`), so that a real one wins.
const FALLBACK_DIR: &str = "/__acc2omp_virtual__/fallback";

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
    /// Clang marked the declaration invalid (an unknown type or bound, as when a header it
    /// needs was not found): its type is clang's recovery, not the program's.
    invalid: bool,
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
    /// Errors in headers about an `#include` not found: the offset of the main file's
    /// `#include` that led there, the message, and the header's path.
    pub header_missing: Vec<(usize, String, String)>,
    /// Macros from headers that the main file expands (`header_macros`).
    pub header_macros: Vec<crate::facts::HeaderMacro>,
    /// Statements and expressions in statement position, by start (outermost first).
    positions: Vec<usize>,
    /// References to variables, by start.
    refs: Vec<usize>,
    /// `decl_nodes` per variable name, by offset.
    decls_named: crate::hash::HashMap<String, Vec<usize>>,
    /// Offsets of `decl_nodes` per variable name, ascending (the sites' `inner`).
    declared: std::sync::Arc<crate::hash::HashMap<String, Vec<usize>>>,
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

/// Whether `args` parse the file as C (the last `-x`; [`arguments`] always gives one).
fn is_c(args: &[String]) -> bool {
    let lang = args
        .windows(2)
        .rev()
        .find(|w| w[0] == "-x")
        .map(|w| w[1].as_str());
    lang == Some("c")
}

fn read(
    index: CXIndex,
    name: &str,
    src: &str,
    args: &[String],
    indexed: bool,
) -> Result<Parsed, String> {
    read_walking(index, name, src, args, indexed, None)
}

/// How [`read_walking`] walks: per cursor or in one traversal, and main-file locations
/// through libclang or from their encoding (`None`: as the language allows, from the
/// encoding where libclang agrees).
#[derive(Clone, Copy)]
struct Walking {
    per_cursor: bool,
    fast_locations: bool,
}

fn read_walking(
    index: CXIndex,
    name: &str,
    src: &str,
    args: &[String],
    indexed: bool,
    walking: Option<Walking>,
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
        let api = walk::Api::get().ok_or("libclang is not loaded in this thread")?;
        // C only: in C++ more of libclang's wrapper expressions differ between the two.
        let per_cursor = walking.map_or(!is_c(args), |w| w.per_cursor);
        let main_range = if walking.is_none_or(|w| w.fast_locations) {
            walk::MainRange::new(&api, tu.0, file, src.len())
        } else {
            None
        };
        // C only: a C++ name may have a qualifier or template arguments around it.
        let token_extents = main_range.is_some() && is_c(args);
        let mut w = Walk::new(api, tu.0, src, file, per_cursor, main_range, token_extents);
        w.walk(clang_getTranslationUnitCursor(tu.0));
        if w.failed {
            return Err("the file is too large or too deeply nested for libclang".into());
        }
        let inclusions = inclusions(&tu);
        let read: Vec<CXFile> = inclusions.iter().map(|&(f, _)| f).collect();
        let header_macros = header_macros::header_macros(tu.0, file, src, &read, args);
        let mut errors = Vec::new();
        let mut header_missing = Vec::new();
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
                let missing = super::include_guess::missing_header(&msg).is_some();
                missing_include |= missing;
                if !f.is_null() && f == file && off <= src.len() {
                    errors.push((off, msg));
                } else if f.is_null() {
                    errors.push((0, msg));
                } else if missing
                    && let Some((_, at)) = inclusions.iter().find(|(g, _)| *g == f)
                    && let Some(path) = real_name(f)
                {
                    header_missing.push((at.unwrap_or(0), msg, path));
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
        parsed.includes = included_files(&inclusions, file);
        parsed.missing_include = missing_include;
        parsed.header_missing = header_missing;
        parsed.header_macros = header_macros;
        Ok(parsed)
    }
}

extern "C" fn add_inclusion(
    file: CXFile,
    stack: *mut CXSourceLocation,
    depth: c_uint,
    data: CXClientData,
) {
    // SAFETY: `data` is the `Vec` that `inclusions` passes, alive for the call; `stack` holds
    // `depth` locations, the last in the main file.
    let files = unsafe { &mut *(data as *mut Vec<(CXFile, Option<usize>)>) };
    let at = (depth > 0 && !stack.is_null())
        .then(|| unsafe { file_offset(*stack.add(depth as usize - 1)).1 });
    files.push((file, at));
}

/// The files `tu` read, each with the offset of the main file's `#include` that led to it.
fn inclusions(tu: &Tu) -> Vec<(CXFile, Option<usize>)> {
    let mut files: Vec<(CXFile, Option<usize>)> = Vec::new();
    unsafe {
        clang_getInclusions(
            tu.0,
            add_inclusion,
            &mut files as *mut Vec<(CXFile, Option<usize>)> as CXClientData,
        )
    };
    files
}

/// A file's real path (or its name as libclang knows it); None for the virtual `openacc.h`.
fn real_name(f: CXFile) -> Option<String> {
    let name = unsafe {
        let real = take_string(clang_File_tryGetRealPathName(f));
        if real.is_empty() {
            take_string(clang_getFileName(f))
        } else {
            real
        }
    };
    (!name.is_empty() && !name.starts_with(VIRTUAL_DIR)).then_some(name)
}

/// The files read besides `main` and the virtual `openacc.h`, by their real paths.
fn included_files(inclusions: &[(CXFile, Option<usize>)], main: CXFile) -> Vec<String> {
    let mut out: Vec<String> = inclusions
        .iter()
        .filter(|(f, _)| !f.is_null() && *f != main)
        .filter_map(|(f, _)| real_name(*f))
        .collect();
    out.sort();
    out.dedup();
    out
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Wrapper expressions whose cursor libclang makes from what they wrap (`case` labels'
    /// constants, GNU `x ?: y`, `__builtin_dump_struct`), macros, a file that includes itself.
    const EDGES: &str = r#"#include <stdio.h>
struct S { int a[4]; double x; };
#define TWICE(x) ((x) + (x))
#define BODY a[i] += TWICE(a[i] ?: 1.0)
int g(int *p, int n) { return n; }
void f(int n, double *a, struct S *s) {
  int k = n ?: 3;
  int m = (s->a[1] + n) ?: g(s->a, n);
  switch (n) { case 1: case 2 + 3: k++; break; case sizeof(struct S): k--; default: break; }
  enum { E = 4 };
  int arr[E + 1];
#pragma acc parallel loop copy(a[0:n])
  for (int i = 0; i < n; i++) a[i] += (a[i] ?: 1.0) + (k ?: m);
#pragma acc kernels
  for (int i = 0; i < n; i++) BODY;
  __builtin_dump_struct(s, printf);
  int q = _Generic(n, int: 1, default: 2) + __builtin_choose_expr(1, n, k);
  static int st[3] = { [1] = 2 };
  ({ int z = n; z ?: 1; });
  int ab\
c = 1\
2, d$x = 0x1Fu, e = 010 + ab\
c;
  k = abc+d$x-e+(n?k:m)+k-1+"xy"[1]-'x'+(int)sizeof n;
}
"#;

    fn reply(src: &str, name: &str, walking: Walking) -> Option<Vec<u8>> {
        super::super::load::with_index(|lib, index| {
            let args = arguments(lib, name, &[]);
            let p = read_walking(index, name, src, &args, false, Some(walking)).unwrap();
            let mut w = super::super::wire::Writer::default();
            p.encode(&mut w);
            w.buf
        })
        .ok()
    }

    /// The single traversal with main-file locations from their encoding gives the nodes,
    /// variables and constructs that a walk per cursor through libclang's locations gives.
    #[test]
    fn one_traversal_is_the_walk_per_cursor() {
        let dir = std::env::temp_dir().join(format!("acc2omp-walk-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let own = dir.join("self.c");
        let including =
            format!("{EDGES}#ifndef AGAIN\n#define AGAIN\n#include \"self.c\"\n#endif\n");
        std::fs::write(&own, &including).unwrap();
        let own = own.to_string_lossy().into_owned();
        let slow = Walking {
            per_cursor: true,
            fast_locations: false,
        };
        let fast = Walking {
            per_cursor: false,
            fast_locations: true,
        };
        for (src, name) in [(EDGES, "/tmp/acc2omp-walk-test.c"), (&*including, &*own)] {
            let Some(expected) = reply(src, name, slow) else {
                return; // no libclang here
            };
            assert!(expected.len() > 100);
            assert_eq!(reply(src, name, fast), Some(expected), "{name}");
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// A name's or integer literal's extent read from the text: where the byte after the
    /// token could continue it in clang's lexer, libclang is asked instead.
    #[test]
    fn token_extents_only_for_plain_tokens() {
        const NAME: CXCursorKind = CXCursor_DeclRefExpr;
        const INT: CXCursorKind = CXCursor_IntegerLiteral;
        // The token's kind, the text, where the token starts, the extent expected.
        type Case = (CXCursorKind, &'static str, usize, Option<(usize, usize)>);
        let cases: &[Case] = &[
            (NAME, "x = abc_1+2;", 4, Some((4, 9))),
            (NAME, "abc", 0, Some((0, 3))),
            (NAME, "a[i]", 2, Some((2, 3))),
            (NAME, "a$b", 0, None),
            (NAME, "ab\\\nc", 0, None),
            (NAME, "ab\\u00e9", 0, None),
            (NAME, "ab??/\nc", 0, None),
            (NAME, "abé", 0, None),
            (NAME, "L'x'", 0, None),
            (NAME, "u8\"x\"", 0, None),
            (NAME, "1", 0, None),
            (NAME, "(a)", 0, None),
            (NAME, "a", 1, None),
            (INT, "0x1Fu+1", 0, Some((0, 5))),
            (INT, "10-e", 0, Some((0, 2))),
            (INT, "1..2;", 0, Some((0, 4))),
            (INT, "1e+5", 0, None),
            (INT, "0x1p-3", 0, None),
            (INT, "1'000", 0, None),
            (INT, "1\\\n2", 0, None),
            (INT, "x1", 0, None),
        ];
        for &(kind, text, at, expected) in cases {
            assert_eq!(walk::token_extent(text, at, kind), expected, "{text:?}");
        }
    }

    #[test]
    fn the_language_is_the_last_x() {
        let args = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert!(is_c(&args(&["-x", "c", "-w"])));
        assert!(!is_c(&args(&["-x", "c++"])));
        assert!(!is_c(&args(&["-x", "c", "-x", "c++"])));
        assert!(!is_c(&args(&["-w"])));
    }
}
