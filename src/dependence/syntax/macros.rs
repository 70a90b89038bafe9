//! The file's expandable macros (object- and function-like, defined once), and the loop's
//! tokens with them expanded: what the parser reads.

use crate::hash::HashMap;
use crate::lex::{TokKind, Token};

/// A token of the loop after macro expansion; `at` is where it (or its macro use) is in
/// the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tk {
    pub text: String,
    pub at: usize,
    pub kind: TokKind,
}

/// A macro of the file that can be expanded: defined once, never `#undef`ined, no `#`/`##`.
#[derive(Debug, Clone)]
struct Macro {
    params: Option<Vec<String>>,
    body: Vec<Tk>,
    /// Where the file defines it; None: a header does, before any line of the file.
    defined_at: Option<usize>,
}

/// The file's expandable macros.
pub struct Macros {
    defs: HashMap<String, Option<Macro>>,
}

const MAX_EXPANDED: usize = 100_000;

impl Macros {
    /// The macros `#define`d in `src`, and those of `header` (from headers, as libclang's
    /// preprocessor saw them) whose names the file neither defines nor `#undef`s.
    pub fn new(
        src: &str,
        toks: &[Token],
        pp: &crate::lex::PpLines,
        header: &[crate::facts::HeaderMacro],
    ) -> Self {
        let mut defs: HashMap<String, Option<Macro>> = HashMap::default();
        for t in toks.iter().filter(|t| t.kind == TokKind::PpLine) {
            let line = pp.head(src, t);
            let word = |k: usize| line.get(k).map(|x| x.text(src));
            match word(0) {
                Some("define") => {}
                Some("undef") => {
                    if let Some(n) = word(1) {
                        defs.insert(n.to_string(), None);
                    }
                    continue;
                }
                _ => continue,
            }
            let Some(name) = line.get(1).filter(|x| x.kind == TokKind::Ident) else {
                continue;
            };
            let key = name.text(src).to_string();
            // `#define F(x)`: the parenthesis touches the name.
            let mut k = 2;
            let params = if line
                .get(2)
                .is_some_and(|p| p.text(src) == "(" && p.start() == name.end())
            {
                let mut ps = Vec::new();
                k = 3;
                let mut ok = false;
                while let Some(p) = line.get(k) {
                    k += 1;
                    match p.text(src) {
                        ")" => {
                            ok = true;
                            break;
                        }
                        "," => {}
                        w if p.kind == TokKind::Ident => ps.push(w.to_string()),
                        _ => break,
                    }
                }
                if !ok {
                    defs.insert(key, None);
                    continue;
                }
                Some(ps)
            } else {
                None
            };
            let body: Vec<Tk> = line[k.min(line.len())..]
                .iter()
                .map(|x| Tk {
                    text: x.text(src).to_string(),
                    at: x.start(),
                    kind: x.kind,
                })
                .collect();
            let usable = !body.iter().any(|b| b.text == "#" || b.text == "##");
            let entry = usable.then_some(Macro {
                params,
                body,
                defined_at: Some(t.start()),
            });
            // Defined twice (e.g. in `#if` branches): which one applies is unknown.
            match defs.get(&key) {
                Some(_) => {
                    defs.insert(key, None);
                }
                None => {
                    defs.insert(key, entry);
                }
            }
        }
        for m in header {
            if defs.contains_key(&m.name) {
                continue;
            }
            let body: Vec<Tk> = crate::lex::lex(&m.body)
                .iter()
                .map(|x| Tk {
                    text: x.text(&m.body).to_string(),
                    at: 0,
                    kind: x.kind,
                })
                .collect();
            let usable = !body
                .iter()
                .any(|b| b.text == "#" || b.text == "##" || b.kind == TokKind::PpLine);
            let entry = usable.then(|| Macro {
                params: m.params.clone(),
                body,
                defined_at: None,
            });
            defs.insert(m.name.clone(), entry);
        }
        Macros { defs }
    }

    /// Whether `name` is a macro of the file (expandable or not).
    pub fn is_macro(&self, name: &str) -> bool {
        self.defs.contains_key(name)
    }

    /// The tokens `toks[range]` with the file's macros expanded (those defined before
    /// `before`). Preprocessor lines are kept as they are.
    pub fn expand(
        &self,
        src: &str,
        toks: &[Token],
        range: std::ops::Range<usize>,
        before: usize,
    ) -> Result<Vec<Tk>, String> {
        let input: Vec<Tk> = toks[range]
            .iter()
            .map(|t| Tk {
                text: t.text(src).to_string(),
                at: t.start(),
                kind: t.kind,
            })
            .collect();
        let mut out = Vec::new();
        self.expand_into(&input, &[], before, 0, &mut out)?;
        Ok(out)
    }

    fn expand_into(
        &self,
        input: &[Tk],
        hidden: &[String],
        before: usize,
        depth: usize,
        out: &mut Vec<Tk>,
    ) -> Result<(), String> {
        if depth > 32 {
            return Err("macros nested too deeply".into());
        }
        let mut k = 0;
        while k < input.len() {
            if out.len() > MAX_EXPANDED {
                return Err("the loop is too large".into());
            }
            let t = &input[k];
            let m = (t.kind == TokKind::Ident && !hidden.contains(&t.text))
                .then(|| self.defs.get(&t.text))
                .flatten()
                .and_then(|m| m.as_ref())
                .filter(|m| m.defined_at.is_none_or(|d| d < before));
            let Some(m) = m else {
                out.push(t.clone());
                k += 1;
                continue;
            };
            let mut hide = hidden.to_vec();
            hide.push(t.text.clone());
            let relocate = |b: &Tk| Tk {
                at: t.at,
                ..b.clone()
            };
            match &m.params {
                None => {
                    let body: Vec<Tk> = m.body.iter().map(relocate).collect();
                    self.expand_into(&body, &hide, before, depth + 1, out)?;
                    k += 1;
                }
                Some(params) => {
                    if input.get(k + 1).is_none_or(|p| p.text != "(") {
                        out.push(t.clone());
                        k += 1;
                        continue;
                    }
                    // Arguments: split at commas outside brackets.
                    let mut args: Vec<Vec<Tk>> = vec![Vec::new()];
                    let mut level = 0i32;
                    let mut j = k + 2;
                    let mut closed = false;
                    while j < input.len() {
                        let a = &input[j];
                        match a.text.as_str() {
                            "(" | "[" | "{" => level += 1,
                            ")" | "]" | "}" if level == 0 => {
                                if a.text == ")" {
                                    closed = true;
                                }
                                break;
                            }
                            ")" | "]" | "}" => level -= 1,
                            "," if level == 0 => {
                                args.push(Vec::new());
                                j += 1;
                                continue;
                            }
                            _ => {}
                        }
                        if let Some(last) = args.last_mut() {
                            last.push(a.clone());
                        }
                        j += 1;
                    }
                    if !closed {
                        return Err(format!("unbalanced arguments of macro '{}'", t.text));
                    }
                    if params.is_empty() && args.len() == 1 && args[0].is_empty() {
                        args.clear();
                    }
                    if args.len() != params.len() {
                        return Err(format!(
                            "macro '{}' used with another argument count",
                            t.text
                        ));
                    }
                    // Arguments are expanded before substitution, the result rescanned.
                    let mut expanded = Vec::new();
                    for a in &args {
                        let mut e = Vec::new();
                        self.expand_into(a, hidden, before, depth + 1, &mut e)?;
                        expanded.push(e);
                    }
                    let mut body = Vec::new();
                    for b in &m.body {
                        match params.iter().position(|p| *p == b.text) {
                            Some(p) if b.kind == TokKind::Ident => {
                                body.extend(expanded[p].iter().cloned())
                            }
                            _ => body.push(relocate(b)),
                        }
                    }
                    self.expand_into(&body, &hide, before, depth + 1, out)?;
                    k = j + 1;
                }
            }
        }
        Ok(())
    }
}
