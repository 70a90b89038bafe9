//! Which source form a Fortran file is in and whether the C preprocessor runs on it, from
//! its name as gfortran and flang decide them; and the in-file switches flang honours.

use std::path::Path;

/// Fortran's two source forms.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Form {
    /// Fortran 90 free form: `!` comments anywhere, `&` continuations, 132 columns.
    Free,
    /// FORTRAN 77 fixed form: comment in column 1, label in 1-5, continuation in 6,
    /// statement text in 7-72.
    Fixed,
}

impl Form {
    /// The line length compilers read by default (gfortran: `-ffree-line-length-132`,
    /// `-ffixed-line-length-72`); a printer keeps generated lines within it.
    pub fn line_limit(self) -> usize {
        match self {
            Form::Free => 132,
            Form::Fixed => 72,
        }
    }
}

/// How a Fortran file is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SourceKind {
    /// The form the file starts in (`!dir$ free` / `!dir$ fixed` lines may switch it).
    pub form: Form,
    /// Compilers run the C preprocessor first (upper-case extensions): `#ifdef`, `#include`
    /// and `#define` lines are preprocessor lines, and macros may change any text.
    pub cpp: bool,
}

/// Fortran file extensions and how each is read, as gfortran reads them: free form `.f90
/// .f95 .f03 .f08`, fixed form `.f .for .f77 .ftn`; upper case and `.fpp` are preprocessed.
/// The one list: walks, the pre-commit hooks and the README follow it.
pub const EXTENSIONS: [(&str, SourceKind); 17] = {
    const fn k(form: Form, cpp: bool) -> SourceKind {
        SourceKind { form, cpp }
    }
    use Form::{Fixed, Free};
    [
        ("f90", k(Free, false)),
        ("F90", k(Free, true)),
        ("f95", k(Free, false)),
        ("F95", k(Free, true)),
        ("f03", k(Free, false)),
        ("F03", k(Free, true)),
        ("f08", k(Free, false)),
        ("F08", k(Free, true)),
        ("f", k(Fixed, false)),
        ("F", k(Fixed, true)),
        ("for", k(Fixed, false)),
        ("FOR", k(Fixed, true)),
        ("f77", k(Fixed, false)),
        ("ftn", k(Fixed, false)),
        ("FTN", k(Fixed, true)),
        ("fpp", k(Fixed, true)),
        ("FPP", k(Fixed, true)),
    ]
};

/// The source kind of `path` from its extension ([`EXTENSIONS`]), or None when it is not a
/// Fortran file.
pub fn kind_of(path: &Path) -> Option<SourceKind> {
    let ext = path.extension()?.to_str()?;
    EXTENSIONS.iter().find(|(e, _)| *e == ext).map(|(_, k)| *k)
}

/// A comment line that switches the source form for the rest of the file: flang's
/// `!dir$ free` / `!dir$ fixed` (also `cdir$`, `*dir$` in fixed form) and Intel's
/// `!dec$ freeform` / `!dec$ nofreeform`. gfortran ignores them; a file that has them is
/// written for a compiler that honours them. `line` is the whole line, `form` the form in
/// effect on it.
pub fn switch(line: &[u8], form: Form) -> Option<Form> {
    let lead = match form {
        Form::Free => line
            .iter()
            .take_while(|c| matches!(c, b' ' | b'\t'))
            .count(),
        Form::Fixed => 0,
    };
    let rest = line.get(lead..)?;
    let first = *rest.first()?;
    let comment_char =
        first == b'!' || (form == Form::Fixed && matches!(first, b'c' | b'C' | b'*'));
    if !comment_char || rest.len() < 5 {
        return None;
    }
    let sentinel = rest[1..5].to_ascii_lowercase();
    if sentinel != b"dir$" && sentinel != b"dec$" {
        return None;
    }
    let words: Vec<Vec<u8>> = rest[5..]
        .split(|c| matches!(c, b' ' | b'\t' | b'\r'))
        .filter(|w| !w.is_empty())
        .map(<[u8]>::to_ascii_lowercase)
        .collect();
    match words.first().map(Vec::as_slice) {
        Some(b"free" | b"freeform") if words.len() == 1 => Some(Form::Free),
        Some(b"fixed" | b"nofreeform") if words.len() == 1 => Some(Form::Fixed),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extensions() {
        let k = |p: &str| kind_of(Path::new(p)).map(|k| (k.form, k.cpp));
        assert_eq!(k("a.f90"), Some((Form::Free, false)));
        assert_eq!(k("dir/a.F90"), Some((Form::Free, true)));
        for e in ["f95", "f03", "f08"] {
            assert_eq!(k(&format!("x.{e}")), Some((Form::Free, false)));
            assert_eq!(
                k(&format!("x.{}", e.to_uppercase())),
                Some((Form::Free, true))
            );
        }
        for e in ["f", "for", "f77", "ftn"] {
            assert_eq!(k(&format!("x.{e}")), Some((Form::Fixed, false)), "{e}");
        }
        for e in ["F", "FOR", "FTN", "fpp", "FPP"] {
            assert_eq!(k(&format!("x.{e}")), Some((Form::Fixed, true)), "{e}");
        }
        for no in ["a.c", "a.f9", "a", "a.F9O", "f90"] {
            assert_eq!(k(no), None, "{no}");
        }
    }

    #[test]
    fn form_switches() {
        assert_eq!(switch(b"!dir$ free", Form::Fixed), Some(Form::Free));
        assert_eq!(switch(b"  !DIR$ FIXED\r", Form::Free), Some(Form::Fixed));
        assert_eq!(switch(b"cdir$ free", Form::Fixed), Some(Form::Free));
        assert_eq!(switch(b"cdir$ free", Form::Free), None);
        assert_eq!(switch(b"!dec$ nofreeform", Form::Free), Some(Form::Fixed));
        assert_eq!(switch(b"!DEC$ FREEFORM", Form::Fixed), Some(Form::Free));
        assert_eq!(switch(b"  !dir$ free", Form::Fixed), None);
        assert_eq!(switch(b"!dir$ ignore_tkr a", Form::Free), None);
        assert_eq!(switch(b"!dir$ free x", Form::Free), None);
        assert_eq!(switch(b"!dir$", Form::Free), None);
        assert_eq!(switch(b"", Form::Free), None);
    }
}
