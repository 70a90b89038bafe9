//! The macros from headers (and the command line's `-D`) that the main file expands, with
//! the macros their bodies name: what the dependence test needs to read a loop bounded by a
//! header's `#define N 4096` as the compiler does. libclang's preprocessing record says which
//! definition each use in the main file expands; a name met only inside another macro's
//! body is taken when the translation unit defines it once (or identically). A name that
//! any file `#undef`s is left out: the loops are expanded by name, and the name may be a
//! variable elsewhere in the file.

use super::macro_dims::contents;
use super::take_string;
use super::walk::file_offset;
use crate::facts::HeaderMacro;
use crate::hash::{HashMap, HashSet};
use clang_sys::*;

/// Bounds on what one file hands over: names, and the text of one definition.
const MAX_MACROS: usize = 4096;
const MAX_BODY: usize = 4096;

/// The preprocessing record's cursors at the top of the translation unit.
#[derive(Default)]
struct Record {
    main: Option<CXFile>,
    /// Macro uses in the main file.
    uses: Vec<CXCursor>,
    /// Macro definitions outside the main file.
    defs: Vec<CXCursor>,
}

extern "C" fn collect(c: CXCursor, _parent: CXCursor, data: CXClientData) -> CXChildVisitResult {
    // SAFETY: `data` is the `Record` that `header_macros` passes, alive for the visit.
    let r = unsafe { &mut *(data as *mut Record) };
    // SAFETY: `c` is a cursor of the translation unit being visited.
    unsafe {
        let kind = clang_getCursorKind(c);
        if kind != CXCursor_MacroExpansion && kind != CXCursor_MacroDefinition {
            return CXChildVisit_Continue;
        }
        let (f, _) = file_offset(clang_getCursorLocation(c));
        let in_main = r.main.is_some_and(|m| clang_File_isEqual(m, f) != 0);
        if kind == CXCursor_MacroExpansion && in_main {
            r.uses.push(c);
        } else if kind == CXCursor_MacroDefinition && !in_main && !f.is_null() {
            r.defs.push(c);
        }
    }
    CXChildVisit_Continue
}

/// Where a use's definition is: a header, or the command line's `-D`.
#[derive(Clone, Copy)]
enum Def {
    Header(CXCursor),
    CommandLine,
}

/// The definitions of the header macros that `main` (text `src`) expands, and of the header
/// macros their bodies name, sorted by name; those of the command line (`-D` in `args`) too.
/// `files`: every file the parse read, where an `#undef` would make a name's one definition
/// not the one in effect.
///
/// # Safety
/// `tu` is a live translation unit parsed with a detailed preprocessing record, `main` and
/// `files` its files.
pub(super) unsafe fn header_macros(
    tu: CXTranslationUnit,
    main: CXFile,
    src: &str,
    files: &[CXFile],
    args: &[String],
) -> Vec<HeaderMacro> {
    let command_line = command_line(args);
    let mut record = Record {
        main: Some(main),
        ..Record::default()
    };
    unsafe {
        clang_visitChildren(
            clang_getTranslationUnitCursor(tu),
            collect,
            &mut record as *mut Record as CXClientData,
        );
    }
    // Each name the main file expands from a header: its definition, None where two uses
    // of the name expand different ones.
    let mut direct: HashMap<String, Option<Def>> = HashMap::default();
    for &u in &record.uses {
        unsafe {
            let def = clang_getCursorReferenced(u);
            if clang_getCursorKind(def) != CXCursor_MacroDefinition {
                continue;
            }
            let (f, _) = file_offset(clang_getCursorLocation(def));
            let name = take_string(clang_getCursorSpelling(u));
            // No file: the command line's or the compiler's own (`__DBL_MAX__`).
            let def = if f.is_null() {
                if !command_line.contains_key(&name) {
                    continue;
                }
                Def::CommandLine
            } else if clang_File_isEqual(f, main) != 0 {
                continue;
            } else {
                Def::Header(def)
            };
            match (direct.get(&name), def) {
                (Some(Some(Def::Header(d))), Def::Header(def))
                    if clang_equalCursors(*d, def) == 0 =>
                {
                    direct.insert(name, None);
                }
                (Some(Some(Def::Header(_))), Def::CommandLine)
                | (Some(Some(Def::CommandLine)), Def::Header(_)) => {
                    direct.insert(name, None);
                }
                (Some(_), _) => {}
                (None, def) if direct.len() < MAX_MACROS => {
                    direct.insert(name, Some(def));
                }
                (None, _) => {}
            }
        }
    }
    if direct.is_empty() {
        return Vec::new();
    }
    // A name some file `#undef`s may be a variable in another loop of the file (a header
    // included later undefines it): the file's loops are expanded by name, so not expanded.
    let undefined = unsafe { undefs(tu, src, files) };
    direct.retain(|name, _| !undefined.contains(name));
    let mut out: HashMap<String, HeaderMacro> = HashMap::default();
    let mut texts = Texts::default();
    let mut pending: Vec<HeaderMacro> = direct
        .into_iter()
        .filter_map(|(name, d)| match d? {
            Def::Header(c) => unsafe { read_definition(tu, c, &mut texts) },
            Def::CommandLine => command_line.get(&name).cloned(),
        })
        .collect();
    // Popped in name order: which names fit under the bound does not depend on hashing.
    pending.sort_by(|a, b| b.name.cmp(&a.name));
    // The header definitions by name, built when a body first names a macro not yet known.
    let mut by_name: Option<HashMap<String, Vec<CXCursor>>> = None;
    while let Some(m) = pending.pop() {
        if out.contains_key(&m.name) || out.len() >= MAX_MACROS {
            continue;
        }
        let named: Vec<String> = body_names(&m)
            .into_iter()
            .filter(|n| !out.contains_key(n) && *n != m.name)
            .collect();
        out.insert(m.name.clone(), m);
        for n in named {
            let defs = by_name.get_or_insert_with(|| unsafe { definitions(&record.defs) });
            if undefined.contains(&n) {
                continue;
            }
            // One definition, or several with the same parameters and text; or only the
            // command line's.
            match (defs.get(&n), command_line.get(&n)) {
                (Some(cursors), None) => {
                    let read: Option<Vec<HeaderMacro>> = cursors
                        .iter()
                        .map(|&c| unsafe { read_definition(tu, c, &mut texts) })
                        .collect();
                    if let Some([first, rest @ ..]) = read.as_deref()
                        && rest.iter().all(|d| same_definition(d, first))
                    {
                        pending.push(first.clone());
                    }
                }
                (None, Some(m)) => pending.push(m.clone()),
                _ => {}
            }
        }
    }
    let mut v: Vec<HeaderMacro> = out.into_values().collect();
    v.sort_by(|a, b| a.name.cmp(&b.name));
    v
}

/// The macros `-D` defines in `args` (`-DN=4096`, `-D N`, `-DF(x)=x`), less those a later
/// `-U` removes; a name defined twice keeps its last definition, as the compiler does.
fn command_line(args: &[String]) -> HashMap<String, HeaderMacro> {
    let mut out: HashMap<String, HeaderMacro> = HashMap::default();
    let mut k = 0;
    while k < args.len() {
        let (flag, value) = match args[k].as_str() {
            f @ ("-D" | "-U") => {
                k += 1;
                (f, args.get(k).map(String::as_str))
            }
            a if a.starts_with("-D") || a.starts_with("-U") => (&a[..2], Some(&a[2..])),
            _ => (",", None),
        };
        k += 1;
        let Some(value) = value.filter(|v| !v.is_empty()) else {
            continue;
        };
        let (head, body) = value.split_once('=').unwrap_or((value, "1"));
        let (name, params) = match head.split_once('(') {
            Some((name, rest)) => {
                let Some(list) = rest.strip_suffix(')') else {
                    continue;
                };
                if list.contains("...") {
                    out.remove(name);
                    continue;
                }
                let params: Vec<String> = list
                    .split(',')
                    .map(|p| p.trim().to_string())
                    .filter(|p| !p.is_empty())
                    .collect();
                (name, Some(params))
            }
            None => (head, None),
        };
        if flag == "-U" {
            out.remove(name);
        } else {
            out.insert(
                name.to_string(),
                HeaderMacro {
                    name: name.to_string(),
                    params,
                    body: body.trim().to_string(),
                },
            );
        }
    }
    out
}

/// Whether two definitions replace alike (tokens separated by any white space).
fn same_definition(a: &HeaderMacro, b: &HeaderMacro) -> bool {
    let words = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    a.params == b.params && words(&a.body) == words(&b.body)
}

/// The identifiers of a body that are not its parameters.
fn body_names(m: &HeaderMacro) -> Vec<String> {
    let toks = crate::lex::lex(&m.body);
    toks.iter()
        .filter(|t| t.kind == crate::lex::TokKind::Ident)
        .map(|t| t.text(&m.body).to_string())
        .filter(|n| !m.params.as_ref().is_some_and(|p| p.contains(n)))
        .collect()
}

/// The texts of the files read so far, each checked as UTF-8 once (a header defines
/// hundreds of macros).
#[derive(Default)]
struct Texts<'t>(HashMap<usize, Option<&'t str>>);

impl<'t> Texts<'t> {
    unsafe fn get(&mut self, tu: CXTranslationUnit, f: CXFile) -> Option<&'t str> {
        *self
            .0
            .entry(f as usize)
            .or_insert_with(|| unsafe { contents(tu, f) })
    }
}

/// The header definitions by name (their texts are read for the names a body uses).
unsafe fn definitions(defs: &[CXCursor]) -> HashMap<String, Vec<CXCursor>> {
    let mut out: HashMap<String, Vec<CXCursor>> = HashMap::default();
    for &d in defs {
        let name = unsafe { take_string(clang_getCursorSpelling(d)) };
        out.entry(name).or_default().push(d);
    }
    out
}

/// The names that `#undef` lines of the main file (`src`) and of `files` name.
unsafe fn undefs(tu: CXTranslationUnit, src: &str, files: &[CXFile]) -> HashSet<String> {
    let mut out = HashSet::default();
    let mut scan = |text: &str| {
        for (at, _) in text.match_indices("undef") {
            let before = text[..at].trim_end_matches([' ', '\t']);
            if !before.ends_with('#') {
                continue;
            }
            let rest = text[at + 5..].trim_start_matches([' ', '\t']);
            let end = rest
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(rest.len());
            if end > 0 {
                out.insert(rest[..end].to_string());
            }
        }
    };
    scan(src);
    for &f in files {
        if let Some(text) = unsafe { contents(tu, f) } {
            scan(text);
        }
    }
    out
}

/// The definition at cursor `def`: its name, parameters and replacement text. None when it
/// cannot be read, is variadic, or is longer than [`MAX_BODY`].
unsafe fn read_definition(
    tu: CXTranslationUnit,
    def: CXCursor,
    texts: &mut Texts,
) -> Option<HeaderMacro> {
    unsafe {
        let ext = clang_getCursorExtent(def);
        let (f, s) = file_offset(clang_getRangeStart(ext));
        let (g, e) = file_offset(clang_getRangeEnd(ext));
        if f.is_null() || clang_File_isEqual(f, g) == 0 || e < s || e - s > MAX_BODY {
            return None;
        }
        let text = texts.get(tu, f)?.get(s..e)?;
        let text = text.replace("\\\r\n", " ").replace("\\\n", " ");
        let name = take_string(clang_getCursorSpelling(def));
        let rest = text.strip_prefix(name.as_str())?;
        let (params, body) = if clang_Cursor_isMacroFunctionLike(def) != 0 {
            let open = rest.strip_prefix('(')?;
            let close = open.find(')')?;
            let params: Vec<String> = open[..close]
                .split(',')
                .map(|p| p.trim().to_string())
                .filter(|p| !p.is_empty())
                .collect();
            if params.iter().any(|p| p.contains("...")) || open[..close].contains("...") {
                return None;
            }
            (Some(params), &open[close + 1..])
        } else {
            (None, rest)
        };
        Some(HeaderMacro {
            name,
            params,
            body: body.trim().to_string(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mac(name: &str, params: Option<&[&str]>, body: &str) -> HeaderMacro {
        HeaderMacro {
            name: name.into(),
            params: params.map(|p| p.iter().map(|s| s.to_string()).collect()),
            body: body.into(),
        }
    }

    #[test]
    fn a_body_names_what_is_not_a_parameter() {
        let m = mac("F", Some(&["x", "y"]), "((x) * N + y) / M2 + 1.5e3");
        assert_eq!(body_names(&m), ["N", "M2"]);
        assert!(body_names(&mac("N", None, "4096")).is_empty());
    }

    #[test]
    fn command_line_definitions_in_order() {
        let args: Vec<String> = [
            "-O2",
            "-DN=4096",
            "-D",
            "M",
            "-DF(x, y)=((x) + (y))",
            "-DGONE=1",
            "-UGONE",
            "-DN=8",
            "-DV(...)=0",
            "-I",
            "inc",
        ]
        .map(String::from)
        .to_vec();
        let d = command_line(&args);
        let mut names: Vec<&String> = d.keys().collect();
        names.sort();
        assert_eq!(names, ["F", "M", "N"]);
        assert_eq!(d["N"], mac("N", None, "8"));
        assert_eq!(d["M"], mac("M", None, "1"));
        assert_eq!(d["F"], mac("F", Some(&["x", "y"]), "((x) + (y))"));
    }

    #[test]
    fn definitions_alike_differ_only_in_white_space() {
        let a = mac("N", None, "(1 +  2)");
        assert!(same_definition(&a, &mac("N", None, "(1 + 2)")));
        assert!(!same_definition(&a, &mac("N", None, "(1 + 3)")));
        assert!(!same_definition(&a, &mac("N", Some(&[]), "(1 +  2)")));
    }
}
