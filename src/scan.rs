//! Finds every OpenACC directive site in a file: `#pragma acc` lines (any spacing,
//! continuations, comments) and `_Pragma("acc ...")` operators, also inside `#define`
//! bodies and inactive `#if` branches.

use crate::hash::HashSet;
use crate::lex::{
    TokKind, Token, block_comment_end, lex_range, line_comment_end, splice_len, string_content,
};
use crate::source::{Index32, Span32};
use std::ops::Range;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Form {
    /// `#pragma acc ...`: `span` is the logical line from `#`.
    Pragma,
    /// `_Pragma("acc ...")`: `span` is from `_Pragma` to `)`.
    Operator { in_macro: bool },
    /// `ACC(...)` where `#define ACC(x) P(acc x)` and `#define P(x) _Pragma(#x)`: `span` is
    /// from `ACC` to `)`, `acc` is `ACC(`, written `P(omp ` once translated.
    Wrapped { in_macro: bool, pragma: Box<str> },
}

/// One per directive, a large file has a hundred thousand: offsets and token indices are
/// kept in 32 bits, as the tokens' are (a longer text is not lexed, see
/// [`crate::lex::MAX_TEXT`]), and read at full width through the accessors.
#[derive(Debug, Clone)]
pub struct Site {
    pub form: Form,
    /// For a `_Pragma` string with escape sequences: its unescaped content.
    pub unescaped: Option<Box<str>>,
    span: Span32,
    acc: Span32,
    text: Span32,
    token: Index32,
    first_token: Index32,
    /// A `_Pragma` whose argument is completed by the preprocessor; it cannot be edited.
    pub computed: bool,
}

/// A [`Site`]'s fields at full width, to build one with `Site::from`.
#[derive(Debug, Clone)]
pub struct SiteParts {
    pub form: Form,
    pub span: Range<usize>,
    pub acc: Range<usize>,
    pub text: Range<usize>,
    pub unescaped: Option<Box<str>>,
    pub token: Option<usize>,
    pub computed: bool,
    pub first_token: Option<usize>,
}

impl From<SiteParts> for Site {
    fn from(p: SiteParts) -> Self {
        Site {
            form: p.form,
            unescaped: p.unescaped,
            span: Span32::new(p.span),
            acc: Span32::new(p.acc),
            text: Span32::new(p.text),
            token: Index32::new(p.token),
            first_token: Index32::new(p.first_token),
            computed: p.computed,
        }
    }
}

impl Site {
    /// The site's extent in the file: for `#pragma` the logical line from `#`, for
    /// `_Pragma` from `_Pragma` to `)`, for a wrapper macro's use from its name to `)`.
    pub fn span(&self) -> Range<usize> {
        self.span.get()
    }
    /// The `acc` word, in file offsets.
    pub fn acc(&self) -> Range<usize> {
        self.acc.get()
    }
    /// The directive text after `acc`. In file offsets, or in `unescaped` when that is set.
    pub fn text(&self) -> Range<usize> {
        self.text.get()
    }
    /// Index of the last token of the site in the file's token list (None inside macros).
    pub fn token(&self) -> Option<usize> {
        self.token.get()
    }
    /// Index of the first token of the site, when it differs from `token`.
    pub fn first_token(&self) -> Option<usize> {
        self.first_token.get()
    }
}

/// Skip blanks, splices and comments from `i` to at most `end`.
fn skip_blank(b: &[u8], mut i: usize, end: usize) -> usize {
    while i < end {
        let s = splice_len(b, i);
        if s > 0 {
            i += s;
        } else if b[i] == b' ' || b[i] == b'\t' || b[i] == b'\x0c' || b[i] == b'\x0b' {
            i += 1;
        } else if b[i..end].starts_with(b"/*") {
            i = block_comment_end(b, i);
        } else if b[i..end].starts_with(b"//") {
            i = line_comment_end(b, i);
        } else {
            break;
        }
    }
    i.min(end)
}

/// If `src[i..end]` starts with `word` followed by a non-identifier character, its end.
fn keyword(src: &str, i: usize, end: usize, word: &str) -> Option<usize> {
    let rest = &src.as_bytes()[i..end];
    let e = i + word.len();
    let boundary = rest
        .get(word.len())
        .is_none_or(|c| !(c.is_ascii_alphanumeric() || *c == b'_'));
    (rest.starts_with(word.as_bytes()) && boundary).then_some(e)
}

fn pragma_site(src: &str, tok: &Token, index: usize) -> Option<Site> {
    let b = src.as_bytes();
    let i = skip_blank(b, tok.start() + 1, tok.end());
    let i = keyword(src, i, tok.end(), "pragma")?;
    let i = skip_blank(b, i, tok.end());
    let acc_end = keyword(src, i, tok.end(), "acc")?;
    Some(Site::from(SiteParts {
        form: Form::Pragma,
        span: tok.range(),
        acc: i..acc_end,
        text: acc_end..tok.end(),
        unescaped: None,
        token: Some(index),
        computed: false,
        first_token: None,
    }))
}

fn unescape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.next() {
                Some('n') => out.push(' '),
                Some(other) => out.push(other),
                None => {}
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// `_Pragma ( "acc ..." )` starting at token `i`.
fn operator_site(src: &str, toks: &[Token], i: usize, in_macro: bool) -> Option<Site> {
    let [name, open, lit] = toks.get(i..i + 3)? else {
        return None;
    };
    if name.text(src) != "_Pragma" || open.text(src) != "(" {
        return None;
    }
    let close = toks.get(i + 3).filter(|c| c.text(src) == ")");
    if lit.kind != TokKind::Literal {
        return None;
    }
    // Any string literal: `"…"`, `L"…"`, `u8"…"`, `u"…"`, `U"…"` and raw strings.
    let (inner, raw) = string_content(lit.text(src))?;
    let content = lit.start() + inner.start..lit.start() + inner.end;
    let body = &src[content.clone()];
    let lead = body.len() - body.trim_start().len();
    let acc_start = content.start + lead;
    let acc_end = keyword(src, acc_start, content.end, "acc")?;
    let Some(close) = close else {
        // The argument is built by the preprocessor (`"acc loop " #x`): report, don't edit.
        return Some(Site::from(SiteParts {
            form: Form::Operator { in_macro },
            span: name.start()..lit.end(),
            acc: acc_start..acc_end,
            text: acc_end..content.end,
            unescaped: None,
            token: None,
            computed: true,
            first_token: None,
        }));
    };
    let token = (!in_macro).then_some(i + 3);
    let first_token = (!in_macro).then_some(i);
    let span = name.start()..close.end();
    if !raw && body.contains('\\') {
        let un = unescape(body);
        let l = un.len() - un.trim_start().len();
        return Some(Site::from(SiteParts {
            form: Form::Operator { in_macro },
            span,
            acc: acc_start..acc_end,
            text: l + 3..un.len(),
            unescaped: Some(un.into()),
            token,
            computed: false,
            first_token,
        }));
    }
    Some(Site::from(SiteParts {
        form: Form::Operator { in_macro },
        span,
        acc: acc_start..acc_end,
        text: acc_end..content.end,
        unescaped: None,
        token,
        computed: false,
        first_token,
    }))
}

/// Function-like macros that turn their argument into a pragma: `#define P(x) _Pragma(#x)`.
/// A set: every identifier of the file is looked up, and a header may define `P` many times.
pub fn pragma_wrappers(src: &str, toks: &[Token]) -> HashSet<String> {
    let b = src.as_bytes();
    let mut names = HashSet::default();
    for tok in toks.iter().filter(|t| t.kind == TokKind::PpLine) {
        let j = skip_blank(b, tok.start() + 1, tok.end());
        let Some(body) = keyword(src, j, tok.end(), "define") else {
            continue;
        };
        let inner = lex_range(src, body..tok.end(), false);
        let t: Vec<&str> = inner.iter().map(|t| t.text(src)).collect();
        if let [name, "(", p, ")", "_Pragma", "(", "#", q, ")"] = t.as_slice()
            && same_parameter(p, q)
            && src.as_bytes()[inner[1].start() - 1] != b' '
        {
            names.insert(name.to_string());
        }
    }
    names
}

/// The name `#define` on preprocessor line `tok` defines.
pub fn defined_name<'s>(src: &'s str, tok: &Token) -> Option<&'s str> {
    let b = src.as_bytes();
    let j = skip_blank(b, tok.start() + 1, tok.end());
    let body = keyword(src, j, tok.end(), "define")?;
    let start = skip_blank(b, body, tok.end());
    let len = b[start..tok.end()]
        .iter()
        .take_while(|c| c.is_ascii_alphanumeric() || **c == b'_')
        .count();
    (len > 0).then(|| &src[start..start + len])
}

/// Whether `q` in a macro body is the macro's one parameter `p`.
fn same_parameter(p: &str, q: &str) -> bool {
    p == q || (p == "..." && q == "__VA_ARGS__")
}

/// Function-like macros that make their argument an OpenACC directive through a pragma
/// wrapper: `#define ACC(x) P(acc x)` (the portability idiom), name → the wrapper `P`.
/// Their uses `ACC(parallel loop …)` are sites, the `P(acc x)` of the definition is not.
pub fn acc_wrappers(
    src: &str,
    toks: &[Token],
    wrappers: &HashSet<String>,
) -> crate::hash::HashMap<String, String> {
    let mut names = crate::hash::HashMap::default();
    if wrappers.is_empty() {
        return names;
    }
    for tok in toks.iter().filter(|t| t.kind == TokKind::PpLine) {
        if let Some((name, pragma)) = acc_wrapper_definition(src, tok, wrappers) {
            names.insert(name, pragma);
        }
    }
    names
}

/// `#define NAME(x) P(acc x)` on preprocessor line `tok`, P a pragma wrapper: NAME and P.
fn acc_wrapper_definition(
    src: &str,
    tok: &Token,
    wrappers: &HashSet<String>,
) -> Option<(String, String)> {
    let b = src.as_bytes();
    let j = skip_blank(b, tok.start() + 1, tok.end());
    let body = keyword(src, j, tok.end(), "define")?;
    let inner = lex_range(src, body..tok.end(), false);
    let t: Vec<&str> = inner.iter().map(|t| t.text(src)).collect();
    match t.as_slice() {
        [name, "(", p, ")", w, "(", "acc", q, ")"]
            if same_parameter(p, q)
                && wrappers.contains(*w)
                && src.as_bytes()[inner[1].start() - 1] != b' ' =>
        {
            Some((name.to_string(), w.to_string()))
        }
        _ => None,
    }
}

/// `ACC(...)` where `ACC` is an OpenACC wrapper macro (see [`acc_wrappers`]).
fn acc_wrapper_site(
    src: &str,
    toks: &[Token],
    i: usize,
    in_macro: bool,
    acc_wrappers: &crate::hash::HashMap<String, String>,
) -> Option<Site> {
    let pragma = acc_wrappers.get(toks[i].text(src))?;
    let open = toks.get(i + 1).filter(|t| t.text(src) == "(")?;
    let close = closing_paren(src, toks, i + 1)?;
    Some(Site::from(SiteParts {
        form: Form::Wrapped {
            in_macro,
            pragma: pragma.as_str().into(),
        },
        span: toks[i].start()..toks[close].end(),
        acc: toks[i].start()..open.end(),
        text: open.end()..toks[close].start(),
        unescaped: None,
        token: (!in_macro).then_some(close),
        computed: false,
        first_token: (!in_macro).then_some(i),
    }))
}

/// The `)` closing the `(` at token `open`.
fn closing_paren(src: &str, toks: &[Token], open: usize) -> Option<usize> {
    let mut depth = 0;
    for (k, t) in toks.iter().enumerate().skip(open) {
        match t.text(src) {
            "(" => depth += 1,
            ")" => {
                depth -= 1;
                if depth == 0 {
                    return Some(k);
                }
            }
            _ => {}
        }
    }
    None
}

/// `P(acc ...)` where `P` is a pragma wrapper macro.
fn wrapper_site(
    src: &str,
    toks: &[Token],
    i: usize,
    in_macro: bool,
    wrappers: &HashSet<String>,
) -> Option<Site> {
    if !wrappers.contains(toks[i].text(src))
        || toks.get(i + 1)?.text(src) != "("
        || toks.get(i + 2)?.text(src) != "acc"
    {
        return None;
    }
    let close = closing_paren(src, toks, i + 1)?;
    let acc = toks[i + 2].range();
    Some(Site::from(SiteParts {
        form: Form::Operator { in_macro },
        span: toks[i].start()..toks[close].end(),
        text: acc.end..toks[close].start(),
        acc,
        unescaped: None,
        token: (!in_macro).then_some(close),
        computed: false,
        first_token: (!in_macro).then_some(i),
    }))
}

/// Whether identifier `t` is `_Pragma`, compared as bytes (every identifier of a file is
/// asked).
fn is_pragma_operator(src: &str, t: &Token) -> bool {
    t.end() - t.start() == 7 && &src.as_bytes()[t.range()] == b"_Pragma"
}

/// All sites, in source order.
pub fn find_sites(src: &str, toks: &[Token]) -> Vec<Site> {
    // Most sites are `#pragma` lines: room for one per preprocessor line spares a file of
    // many directives the copies of a growing vector.
    let lines = toks.iter().filter(|t| t.kind == TokKind::PpLine).count();
    let mut sites = Vec::with_capacity(lines);
    let wrappers = pragma_wrappers(src, toks);
    let acc_wrappers = acc_wrappers(src, toks, &wrappers);
    // The identifiers a site starts with: other tokens are passed over at once (a file has
    // hundreds of thousands).
    let opens_site = |t: &Token| {
        let name = t.text(src);
        is_pragma_operator(src, t)
            || (!wrappers.is_empty() && wrappers.contains(name))
            || (!acc_wrappers.is_empty() && acc_wrappers.contains_key(name))
    };
    for (i, tok) in toks.iter().enumerate() {
        match tok.kind {
            TokKind::PpLine => {
                if let Some(site) = pragma_site(src, tok, i) {
                    sites.push(site);
                    continue;
                }
                let b = src.as_bytes();
                let j = skip_blank(b, tok.start() + 1, tok.end());
                if let Some(body) = keyword(src, j, tok.end(), "define") {
                    // The definition of an OpenACC wrapper holds no directive: its uses do.
                    if !acc_wrappers.is_empty()
                        && acc_wrapper_definition(src, tok, &wrappers).is_some()
                    {
                        continue;
                    }
                    let inner = lex_range(src, body..tok.end(), false);
                    for k in (0..inner.len()).filter(|&k| opens_site(&inner[k])) {
                        if let Some(site) = operator_site(src, &inner, k, true)
                            .or_else(|| wrapper_site(src, &inner, k, true, &wrappers))
                            .or_else(|| acc_wrapper_site(src, &inner, k, true, &acc_wrappers))
                        {
                            sites.push(site);
                        }
                    }
                }
            }
            // Without wrapper macros (`acc_wrappers` needs one) only `_Pragma` opens a site.
            TokKind::Ident
                if is_pragma_operator(src, tok) || (!wrappers.is_empty() && opens_site(tok)) =>
            {
                if let Some(site) = operator_site(src, toks, i, false)
                    .or_else(|| wrapper_site(src, toks, i, false, &wrappers))
                    .or_else(|| acc_wrapper_site(src, toks, i, false, &acc_wrappers))
                {
                    sites.push(site);
                }
            }
            _ => {}
        }
    }
    sites
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lex::lex;

    /// One site per directive: the rare `_Pragma` text and wrapper name are boxed, offsets
    /// and token indices 32-bit.
    #[test]
    fn site_size() {
        assert!(size_of::<Site>() <= 80, "{}", size_of::<Site>());
    }

    fn texts(src: &str) -> Vec<String> {
        let toks = lex(src);
        find_sites(src, &toks)
            .iter()
            .map(|s| match &s.unescaped {
                Some(u) => u[s.text()].to_string(),
                None => src[s.text()].to_string(),
            })
            .collect()
    }

    #[test]
    fn acc_wrapper_uses_are_sites_and_their_definition_is_not() {
        let src = "#define P(x) _Pragma(#x)\n#define ACC(x) P(acc x)\n#define ACC2 (x) P(acc x)\n\
                   #define V(...) _Pragma(#__VA_ARGS__)\n#define VACC(...) V(acc __VA_ARGS__)\n\
                   ACC(parallel loop copy(a[0:n])) VACC(loop gang, vector)\n";
        let toks = lex(src);
        let sites = find_sites(src, &toks);
        let texts: Vec<&str> = sites.iter().map(|s| &src[s.text()]).collect();
        // `ACC2` is an object-like macro: its `P(acc x)` stays an (invalid) site.
        assert_eq!(
            texts,
            [" x", "parallel loop copy(a[0:n])", "loop gang, vector"]
        );
        assert_eq!(&src[sites[1].acc()], "ACC(");
        assert_eq!(
            sites[2].form,
            Form::Wrapped {
                in_macro: false,
                pragma: "V".into()
            }
        );
    }

    #[test]
    fn finds_all_forms() {
        let src = "#pragma acc parallel\n  #  pragma   acc loop \\\n gang\n#pragma accx\n#pragma omp for\n\
                   #define P _Pragma(\"acc loop seq\") x\nvoid f(){ _Pragma(\"acc kernels\") {} }\n\
                   #if 0\n#pragma acc wait\n#endif\n/* #pragma acc no */ const char *s = \"#pragma acc no\";\n\
                   _Pragma(\"acc update self(s[0:\\\"n\\\"])\")\n#define P(x) _Pragma(#x)\n#define Q P(acc loop gang)\n P(acc wait)\n\
                   _Pragma(L\"acc wait(1)\") _Pragma(u8\"acc wait(2)\") _Pragma(R\"x(acc wait(\"3\"))x\")";
        assert_eq!(
            texts(src),
            [
                " parallel",
                " loop \\\n gang",
                " loop seq",
                " kernels",
                " wait",
                " update self(s[0:\"n\"])",
                " loop gang",
                " wait",
                " wait(1)",
                " wait(2)",
                " wait(\"3\")"
            ]
        );
    }
}
