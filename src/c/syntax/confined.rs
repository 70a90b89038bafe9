//! [`Syntax::confined_to`](crate::syntax::Syntax::confined_to): a local variable that only
//! some bytes of its function use, so that no value it holds before or after them is read.

use std::ops::Range;

use super::blocks::{declared_in_function, function_first_token};
use crate::hash::{HashMap, HashSet};
use crate::lex::TokKind;
use crate::structure::Structure;
use std::sync::{Arc, Mutex, OnceLock};

/// Per name, the offsets of its mentions.
type Mentions = Arc<HashMap<String, Vec<u32>>>;

/// The function last asked about (its first token) with the mentions of each name in it,
/// and the names of the file's preprocessor lines: found once, as a function's constructs
/// ask one after the other (a scan per question would be quadratic in a large file).
#[derive(Default)]
pub(super) struct Memo {
    last: Mutex<Option<(usize, Mentions)>>,
    preprocessor: OnceLock<HashSet<String>>,
}

pub(super) fn confined_to(
    st: &Structure,
    memo: &Memo,
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
    // A local of the body (`k` is its `{`): not a parameter, which a reference (C++) or the
    // caller's view of it could carry out.
    let d = toks.partition_point(|x| x.start() < decl);
    if d <= k.max(first)
        || d >= close
        || toks[d].start() != decl
        || !declared_in_function(st, d + 1, v)
    {
        return false;
    }
    // A macro defined anywhere in the file could name it.
    let pp = memo.preprocessor.get_or_init(|| {
        let mut words = HashSet::default();
        for t in toks.iter().filter(|t| t.kind == TokKind::PpLine) {
            let mut ids = identifiers(t.text(st.src));
            if ids.next() == Some("define") {
                words.extend(ids.map(str::to_string));
            }
        }
        words
    });
    if pp.contains(v) {
        return false;
    }
    let mentions = {
        let mut last = memo.last.lock().unwrap_or_else(|e| e.into_inner());
        match last.as_ref() {
            Some((f, m)) if *f == first => m.clone(),
            _ => {
                let mut m: HashMap<String, Vec<u32>> = HashMap::default();
                for tok in &toks[first..=close] {
                    let text = tok.text(st.src);
                    // A directive or macro line of the function names what it holds.
                    let names: Vec<&str> = match tok.kind {
                        TokKind::Ident => vec![text],
                        TokKind::PpLine => identifiers(text).collect(),
                        _ => continue,
                    };
                    for n in names {
                        m.entry(n.to_string()).or_default().push(tok.start() as u32);
                    }
                }
                let m = Arc::new(m);
                *last = Some((first, m.clone()));
                m
            }
        }
    };
    let within = |b: usize| b == decl || inside.iter().any(|r| r.contains(&b));
    mentions
        .get(v)
        .is_none_or(|at| at.iter().all(|&b| within(b as usize)))
}

/// The identifiers of `text`.
fn identifiers(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|w| w.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_'))
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
