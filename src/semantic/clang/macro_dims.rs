//! The bounds of a parameter whose declarator a function-like macro writes, as PolyBench's
//! `DATA_TYPE POLYBENCH_2D(A, NI, NK, ni, nk)`: the macro's definition expanded one level with
//! the call's arguments, so that each bound stays in the macro terms it is written in
//! (`POLYBENCH_C99_SELECT(NI,ni) + POLYBENCH_PADDING_FACTOR`) and holds in every
//! configuration the file is built in, never one configuration's value. Likewise the bounds
//! of a parameter of a typedef'd array type (`vec_t a` with `typedef double vec_t[N]`), as the
//! typedef writes them.

use super::walk::file_offset;
use clang_sys::*;
use std::os::raw::c_uint;

/// The bounds written after the parameter named at `name..name_end` of `src` (the main file)
/// once the macro call around the name is expanded one level; None when the name is not a
/// whole argument of a function-like macro call or the definition cannot be read.
pub(super) unsafe fn spelled(
    tu: CXTranslationUnit,
    main: CXFile,
    src: &str,
    name: usize,
    name_end: usize,
) -> Option<Vec<String>> {
    let (callee, args, which) = call_around(src, name, name_end)?;
    let def = unsafe { definition(tu, main, callee)? };
    let (params, body) = split_definition(&def)?;
    if params.len() != args.len() || body.contains('#') {
        return None;
    }
    // The one place in the body where the parameter that receives the name is written.
    let var = &params[which];
    let mut at = None;
    for (s, e) in identifiers(body) {
        if &body[s..e] == var {
            if at.is_some() {
                return None;
            }
            at = Some(e);
        }
    }
    let dims = crate::semantic::facts::spelled_dims(body, at?);
    Some(dims.iter().map(|d| substitute(d, &params, &args)).collect())
}

/// The bounds written after the name of the typedef that declares `decl`'s type
/// (`typedef double vec_t[N]` for `vec_t a`), in the file where the typedef is written.
pub(super) unsafe fn typedef_spelled(tu: CXTranslationUnit, decl: CXCursor) -> Option<Vec<String>> {
    unsafe {
        let mut t = clang_getCursorType(decl);
        if t.kind == CXType_Elaborated {
            t = clang_Type_getNamedType(t);
        }
        if t.kind != CXType_Typedef {
            return None;
        }
        let td = clang_getTypeDeclaration(t);
        let name = super::take_string(clang_getCursorSpelling(td));
        let (f, off) = file_offset(clang_getCursorLocation(td));
        let text = contents(tu, f)?;
        let end = off + name.len();
        (text.get(off..end)? == name).then_some(())?;
        let dims = crate::semantic::facts::spelled_dims(text, end);
        (!dims.is_empty()).then_some(dims)
    }
}

/// The text of file `f` of `tu`.
pub(super) unsafe fn contents<'t>(tu: CXTranslationUnit, f: CXFile) -> Option<&'t str> {
    unsafe {
        if f.is_null() {
            return None;
        }
        let mut size: usize = 0;
        let p = clang_getFileContents(tu, f, &mut size);
        if p.is_null() {
            return None;
        }
        std::str::from_utf8(std::slice::from_raw_parts(p as *const u8, size)).ok()
    }
}

/// The macro call whose argument list holds exactly the name at `name..name_end`: the callee's
/// offset, the arguments' texts (trimmed) and the name's argument index.
fn call_around(src: &str, name: usize, name_end: usize) -> Option<(usize, Vec<String>, usize)> {
    let b = src.as_bytes();
    // The unclosed `(` before the name.
    let mut depth = 0i32;
    let mut k = name;
    let open = loop {
        k = k.checked_sub(1)?;
        match b[k] {
            b')' | b']' => depth += 1,
            b'(' | b'[' if depth > 0 => depth -= 1,
            b'(' => break k,
            b';' | b'{' | b'}' | b'[' => return None,
            _ => {}
        }
    };
    let mut c = open;
    while c > 0 && (b[c - 1] as char).is_whitespace() {
        c -= 1;
    }
    let end = c;
    while c > 0 && (b[c - 1].is_ascii_alphanumeric() || b[c - 1] == b'_') {
        c -= 1;
    }
    if c == end || b[c].is_ascii_digit() {
        return None;
    }
    let mut args = Vec::new();
    let mut start = open + 1;
    let mut depth = 0i32;
    let mut which = None;
    let mut k = open + 1;
    while k < b.len() {
        match b[k] {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' if depth > 0 => depth -= 1,
            b',' | b')' if depth == 0 => {
                let arg = src.get(start..k)?;
                if (start..k).contains(&name) {
                    (arg.trim() == &src[name..name_end]).then_some(())?;
                    which = Some(args.len());
                }
                args.push(arg.trim().to_string());
                if b[k] == b')' {
                    return Some((c, args, which?));
                }
                start = k + 1;
            }
            _ => {}
        }
        k += 1;
    }
    None
}

/// The text of the definition of the macro expanded at `callee` in the main file
/// (`NAME(params) body`, line continuations removed).
unsafe fn definition(tu: CXTranslationUnit, main: CXFile, callee: usize) -> Option<String> {
    unsafe {
        let loc = clang_getLocationForOffset(tu, main, callee as c_uint);
        let cur = clang_getCursor(tu, loc);
        if clang_getCursorKind(cur) != CXCursor_MacroExpansion {
            return None;
        }
        let def = clang_getCursorReferenced(cur);
        if clang_getCursorKind(def) != CXCursor_MacroDefinition
            || clang_Cursor_isMacroFunctionLike(def) == 0
        {
            return None;
        }
        let (f, s) = file_offset(clang_getRangeStart(clang_getCursorExtent(def)));
        let file = contents(tu, f)?;
        let bytes = file.as_bytes();
        // The definition ends with its logical line.
        let mut end = s;
        while end < bytes.len() && !(bytes[end] == b'\n' && bytes[end - 1] != b'\\') {
            end += 1;
        }
        let text = file.get(s..end)?;
        Some(text.replace("\\\r\n", " ").replace("\\\n", " "))
    }
}

/// `NAME(a, b) body` -> (["a", "b"], "body").
fn split_definition(def: &str) -> Option<(Vec<String>, &str)> {
    let open = def.find('(')?;
    let close = open + def[open..].find(')')?;
    let params: Vec<String> = def[open + 1..close]
        .split(',')
        .map(|p| p.trim().to_string())
        .collect();
    if params.iter().any(|p| p.is_empty() || p.contains("...")) {
        return None;
    }
    Some((params, def[close + 1..].trim()))
}

/// Byte ranges of the identifiers of `text` (outside character and string literals).
fn identifiers(text: &str) -> Vec<(usize, usize)> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut k = 0;
    while k < b.len() {
        let c = b[k];
        if c == b'"' || c == b'\'' {
            k += 1;
            while k < b.len() && b[k] != c {
                k += if b[k] == b'\\' { 2 } else { 1 };
            }
            k += 1;
        } else if c.is_ascii_alphabetic() || c == b'_' {
            let s = k;
            while k < b.len() && (b[k].is_ascii_alphanumeric() || b[k] == b'_') {
                k += 1;
            }
            out.push((s, k));
        } else if c.is_ascii_digit() {
            // A number, with its suffix: not an identifier.
            while k < b.len() && (b[k].is_ascii_alphanumeric() || b[k] == b'_' || b[k] == b'.') {
                k += 1;
            }
        } else {
            k += 1;
        }
    }
    out
}

/// `text` with each parameter name replaced by its argument, as the preprocessor does.
fn substitute(text: &str, params: &[String], args: &[String]) -> String {
    let mut out = String::new();
    let mut last = 0;
    for (s, e) in identifiers(text) {
        if let Some(k) = params.iter().position(|p| p == &text[s..e]) {
            out.push_str(&text[last..s]);
            out.push_str(&args[k]);
            last = e;
        }
    }
    out.push_str(&text[last..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_call_around_a_parameter_name() {
        let src = "void f(DATA_TYPE POLYBENCH_2D(A, NI, g(1, 2), ni, nk), int n)";
        let at = src.find("A,").unwrap();
        let (callee, args, which) = call_around(src, at, at + 1).unwrap();
        assert_eq!(&src[callee..callee + 12], "POLYBENCH_2D");
        assert_eq!(args, ["A", "NI", "g(1, 2)", "ni", "nk"]);
        assert_eq!(which, 0);
        // A name that is only part of an argument is not the declarator.
        let src = "void f(double V(A + 1))";
        let at = src.find('A').unwrap();
        assert!(call_around(src, at, at + 1).is_none());
        // No call: a bound written after the name.
        let src = "void f(double A[N])";
        assert!(call_around(src, 14, 15).is_none());
    }

    #[test]
    fn expands_the_definition_one_level() {
        let (params, body) =
            split_definition("P2(var, d1, d2) var[SEL(d1) + PAD][d2 * 2]").unwrap();
        assert_eq!(params, ["var", "d1", "d2"]);
        let args: Vec<String> = ["A", "NI", "n + 1"].map(String::from).to_vec();
        let at = identifiers(body)[0].1;
        let dims: Vec<String> = crate::semantic::facts::spelled_dims(body, at)
            .iter()
            .map(|d| substitute(d, &params, &args))
            .collect();
        assert_eq!(dims, ["SEL(NI) + PAD", "n + 1 * 2"]);
        // `d1x` and "d1" are not the parameter.
        assert_eq!(
            substitute("d1x + \"d1\" + d1", &params, &args),
            "d1x + \"d1\" + NI"
        );
    }
}
