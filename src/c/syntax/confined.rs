//! [`Syntax::confined_to`](crate::syntax::Syntax::confined_to): a local variable that only
//! some bytes of its function use, so that no value it holds before or after them is read.

use std::ops::Range;

use super::blocks::{declared_in_function, function_first_token};
use crate::lex::TokKind;
use crate::structure::Structure;
use crate::syntax::mentions_word;

pub(super) fn confined_to(
    st: &Structure,
    at: usize,
    decl: usize,
    inside: &[Range<usize>],
    v: &str,
) -> bool {
    let toks = st.toks;
    let t = toks.partition_point(|x| x.start() < at);
    let Some(first) = function_first_token(st, t) else {
        return false;
    };
    // The function body's `}`: that of the outermost brace open at `t`.
    let mut close = None;
    let mut k = t;
    while let Some((o, c)) = st.enclosing_brace(k) {
        close = c;
        k = o;
    }
    let Some(close) = close else { return false };
    // Declared in the function before its first use there (a parameter is named in the
    // header, a use of its own outside `inside`).
    let d = toks.partition_point(|x| x.start() < decl);
    if d <= first || d >= close || toks[d].start() != decl || !declared_in_function(st, d + 1, v) {
        return false;
    }
    let within = |b: usize| inside.iter().any(|r| r.contains(&b));
    for (k, tok) in toks.iter().enumerate().take(close + 1).skip(first) {
        if k == d || within(tok.start()) {
            continue;
        }
        if tok.kind == TokKind::Ident && tok.text(st.src) == v {
            return false;
        }
        // A macro defined or used in the function could name it.
        if tok.kind == TokKind::PpLine && mentions_word(tok.text(st.src), v, false) {
            return false;
        }
    }
    // A macro defined anywhere in the file and used in the function could name it.
    st.src
        .lines()
        .filter(|l| l.trim_start().starts_with('#'))
        .all(|l| !mentions_word(l, v, false))
}

#[cfg(test)]
mod tests {
    use crate::syntax::Syntax;

    fn confined(src: &str, at: &str, inside: &str, v: &str) -> bool {
        let toks = crate::lex::lex(src);
        let pp = crate::lex::PpLines::new(src, &toks);
        let st = crate::structure::Structure::new(src, &toks, &[]);
        let sx = super::super::CSyntax::new(&st, &pp);
        let at = src.find(at).unwrap();
        let decl = src.find(&format!(" {v};")).unwrap() + 1;
        let start = src.find(inside).unwrap();
        sx.confined_to(
            at,
            decl,
            std::slice::from_ref(&(start..start + inside.len())),
            v,
        )
    }

    #[test]
    fn only_a_local_used_only_inside_is_confined() {
        let body = "for (i = 0; i < n; i++) { x = i; a[i] = x; }";
        let f = |pre: &str, post: &str| {
            format!(
                "void f(int n, int *a) {{\n  int i, x;\n{pre}  #pragma acc kernels\n  {body}\n{post}}}\n"
            )
        };
        let yes = f("", "");
        assert!(confined(&yes, "#pragma", body, "x"));
        // Read after, written before, named by a macro, global, or a parameter: not.
        for src in [
            f("", "  a[0] = x;\n"),
            f("  x = 3;\n", ""),
            f("#define X x\n", ""),
            format!("#define GET() (x)\n{yes}"),
        ] {
            assert!(!confined(&src, "#pragma", body, "x"), "{src}");
        }
        let global = format!("int x;\n{}", yes.replace("int i, x;", "int i;"));
        assert!(!confined(&global, "#pragma", body, "x"), "{global}");
        let param = "void f(int n, int *a, int x) {\n  int i;\n  #pragma acc kernels\n  for (i = 0; i < n; i++) { x = i; a[i] = x; }\n}\n";
        let decl = param.find("int x").unwrap() + 4;
        let toks = crate::lex::lex(param);
        let pp = crate::lex::PpLines::new(param, &toks);
        let st = crate::structure::Structure::new(param, &toks, &[]);
        let sx = super::super::CSyntax::new(&st, &pp);
        let s = param.find("for").unwrap();
        let inside = s..param.len() - 3;
        assert!(!sx.confined_to(
            param.find('#').unwrap(),
            decl,
            std::slice::from_ref(&inside),
            "x"
        ));
        // Another word holding it is no mention.
        let other = f("  int xx = 1;\n", "  a[0] = xx;\n");
        assert!(confined(&other, "#pragma", body, "x"), "{other}");
    }
}
