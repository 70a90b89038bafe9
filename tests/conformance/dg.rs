//! DejaGnu `dg-` directives of GCC's tests, read the way GCC's testsuite reads them for a
//! host-only OpenACC configuration (`-DACC_DEVICE_TYPE_host=1 -DACC_MEM_SHARED=1
//! -foffload=disable`, torture option `-O2`).

/// One `{ dg-NAME args… }`, with the 1-based line it is on.
#[derive(Clone, Debug)]
pub struct Directive {
    pub name: String,
    pub args: Vec<String>,
    pub line: usize,
}

/// Every directive of a file (in comments or not: DejaGnu does not care).
pub fn directives(src: &str) -> Vec<Directive> {
    let mut out = Vec::new();
    let bytes = src.as_bytes();
    let mut from = 0;
    while let Some(k) = src[from..].find("dg-").map(|k| k + from) {
        from = k + 3;
        // The directive opens with `{` and blanks before `dg-`.
        let open = src[..k].trim_end_matches([' ', '\t']);
        if !open.ends_with('{') {
            continue;
        }
        let start = open.len() - 1;
        let Some(end) = matching_brace(bytes, start) else {
            continue;
        };
        let words = words(&src[start + 1..end]);
        if let Some((name, args)) = words.split_first()
            && name.starts_with("dg-")
        {
            out.push(Directive {
                name: name.clone(),
                args: args.to_vec(),
                line: src[..start].matches('\n').count() + 1,
            });
            from = end;
        }
    }
    out
}

fn matching_brace(b: &[u8], open: usize) -> Option<usize> {
    let mut depth = 0;
    let mut i = open;
    while i < b.len() {
        match b[i] {
            b'\\' => i += 1,
            b'{' => depth += 1,
            b'}' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// The words of a Tcl list: `{…}` and `"…"` groups lose their delimiters.
pub fn words(text: &str) -> Vec<String> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i].is_ascii_whitespace() {
            i += 1;
            continue;
        }
        match b[i] {
            b'{' => {
                let end = matching_brace(b, i).unwrap_or(b.len());
                out.push(text[i + 1..end.min(b.len())].to_string());
                i = end + 1;
            }
            b'"' => {
                let mut j = i + 1;
                while j < b.len() && b[j] != b'"' {
                    if b[j] == b'\\' {
                        j += 1;
                    }
                    j += 1;
                }
                out.push(text[i + 1..j.min(b.len())].to_string());
                i = j + 1;
            }
            _ => {
                let mut j = i;
                while j < b.len() && !b[j].is_ascii_whitespace() {
                    j += 1;
                }
                out.push(text[i..j].to_string());
                i = j;
            }
        }
    }
    out
}

/// The configuration selectors are evaluated against.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Target {
    pub cxx: bool,
    pub fortran: bool,
}

impl Target {
    /// Effective-target keywords true on an x86_64 GNU/Linux host without an accelerator.
    fn keyword(self, w: &str) -> bool {
        match w {
            "c" => !self.cxx && !self.fortran,
            "c++" => self.cxx,
            "c++11" | "c++14" | "c++17" => self.cxx,
            "openacc_host_selected"
            | "lp64"
            | "__OPTIMIZE__"
            | "lto"
            | "weak_undefined"
            | "native"
            | "fopenacc"
            | "fopenmp"
            | "pthread" => true,
            // Accelerator, CUDA, expensive, never-true markers and anything unknown.
            _ => false,
        }
    }

    /// A target triplet pattern (`*-*-*`, `hppa*-*-hpux*`) against x86_64-pc-linux-gnu.
    fn triplet(self, pattern: &str) -> bool {
        glob(pattern, "x86_64-pc-linux-gnu")
    }

    /// A selector expression: words joined by `||` and `&&`, `!`, and `{…}` groups.
    pub fn eval(self, expr: &str) -> bool {
        let w = words(expr);
        let mut pos = 0;
        let v = self.or(&w, &mut pos);
        // A list of targets without operators: any of them.
        if pos < w.len() {
            return v || w[pos..].iter().any(|x| self.atom(x));
        }
        v
    }

    fn or(self, w: &[String], pos: &mut usize) -> bool {
        let mut v = self.and(w, pos);
        while *pos < w.len() && w[*pos] == "||" {
            *pos += 1;
            v |= self.and(w, pos);
        }
        v
    }

    fn and(self, w: &[String], pos: &mut usize) -> bool {
        let mut v = self.not(w, pos);
        while *pos < w.len() && w[*pos] == "&&" {
            *pos += 1;
            v &= self.not(w, pos);
        }
        v
    }

    fn not(self, w: &[String], pos: &mut usize) -> bool {
        if *pos < w.len() && w[*pos] == "!" {
            *pos += 1;
            return !self.not(w, pos);
        }
        let Some(x) = w.get(*pos) else {
            return false;
        };
        *pos += 1;
        self.atom(x)
    }

    fn atom(self, x: &str) -> bool {
        if x.contains(char::is_whitespace) {
            self.eval(x)
        } else if x.contains('*') || x.matches('-').count() >= 2 {
            self.triplet(x)
        } else {
            self.keyword(x)
        }
    }

    /// `{ target SEL }` / `{ xfail SEL }` / `{ SEL }`: whether the selector holds (absent: true).
    pub fn selector(self, sel: Option<&String>) -> bool {
        let Some(sel) = sel else { return true };
        let w = words(sel);
        match w.first().map(String::as_str) {
            Some("target") | Some("xfail") => self.eval(&w[1..].join(" ")),
            _ => self.eval(sel),
        }
    }

    /// `dg-skip-if`/`dg-xfail-run-if`: targets, options that must be present, options that
    /// must be absent.
    pub fn options_apply(self, args: &[String], flags: &[String]) -> bool {
        let targets = args.get(1).map(String::as_str).unwrap_or("*-*-*");
        let include = args
            .get(2)
            .map(|s| words(s))
            .unwrap_or_else(|| vec!["*".into()]);
        let exclude = args.get(3).map(|s| words(s)).unwrap_or_default();
        let has = |o: &String| o == "*" || flags.iter().any(|f| glob(o, f));
        self.eval(targets) && include.iter().any(has) && !exclude.iter().any(has)
    }
}

/// Shell-style `*` and `?` matching.
fn glob(pattern: &str, text: &str) -> bool {
    fn go(p: &[u8], t: &[u8]) -> bool {
        match p.split_first() {
            None => t.is_empty(),
            Some((b'*', rest)) => (0..=t.len()).any(|k| go(rest, &t[k..])),
            Some((b'?', rest)) => !t.is_empty() && go(rest, &t[1..]),
            Some((c, rest)) => t.first() == Some(c) && go(rest, &t[1..]),
        }
    }
    go(pattern.as_bytes(), text.as_bytes())
}

/// The options GCC's testsuite passes for the host configuration.
pub fn host_flags() -> Vec<String> {
    [
        "-O2",
        "-DACC_DEVICE_TYPE_host=1",
        "-DACC_MEM_SHARED=1",
        "-foffload=disable",
    ]
    .map(String::from)
    .to_vec()
}

/// How a runtime test is built and run on the host, or why it is not a host runtime test.
#[derive(Clone, Debug, Default)]
pub struct RunSpec {
    /// `dg-options` and `dg-additional-options` that apply.
    pub options: Vec<String>,
    /// `dg-additional-sources`, relative to the test's directory.
    pub sources: Vec<String>,
    /// `dg-set-target-env-var`.
    pub env: Vec<(String, String)>,
}

/// Read a runtime test's directives; `Err` says why it does not run on the host.
pub fn run_spec(src: &str, t: Target) -> Result<RunSpec, String> {
    let ds = directives(src);
    let mut spec = RunSpec::default();
    for d in &ds {
        let sel = |k: usize| t.selector(d.args.get(k));
        match d.name.as_str() {
            "dg-options" | "dg-additional-options" if sel(1) => {
                spec.options.extend(words(d.args.first().map_or("", |s| s)))
            }
            "dg-additional-sources" => spec.sources.extend(words(d.args.first().map_or("", |s| s))),
            "dg-set-target-env-var" if d.args.len() >= 2 => {
                spec.env.push((d.args[0].clone(), d.args[1].clone()))
            }
            _ => {}
        }
    }
    let mut flags = host_flags();
    flags.extend(spec.options.iter().cloned());
    let mut runs = true;
    for d in &ds {
        let sel = |k: usize| t.selector(d.args.get(k));
        let why = match d.name.as_str() {
            "dg-do" => {
                let what = d.args.first().map_or("", |s| s);
                runs = what == "run" && sel(1);
                None
            }
            "dg-shouldfail" if sel(1) => Some("dg-shouldfail"),
            "dg-xfail-run-if" if t.options_apply(&d.args, &flags) => Some("dg-xfail-run-if"),
            "dg-skip-if" if t.options_apply(&d.args, &flags) => Some("dg-skip-if"),
            "dg-require-effective-target"
                if sel(1) && !t.eval(d.args.first().map_or("", |s| s)) =>
            {
                Some("dg-require-effective-target")
            }
            _ => None,
        };
        if let Some(why) = why {
            return Err(format!("{why} (line {})", d.line));
        }
    }
    if !runs {
        return Err("not a host run test (dg-do)".into());
    }
    Ok(spec)
}

/// The lines (1-based) where a compile-only test expects an error from gcc for `t`.
pub fn expected_error_lines(src: &str, t: Target) -> Vec<usize> {
    let ds = directives(src);
    let labels: Vec<(String, usize)> = ds
        .iter()
        .filter(|d| d.name == "dg-line")
        .filter_map(|d| Some((d.args.first()?.clone(), d.line)))
        .collect();
    let mut lines = Vec::new();
    for d in ds.iter().filter(|d| d.name == "dg-error") {
        // dg-error REGEXP [COMMENT [{ target|xfail SEL } [LINE]]]
        if let Some(sel) = d.args.get(2) {
            let w = words(sel);
            let holds = t.selector(Some(sel));
            let expected = match w.first().map(String::as_str) {
                Some("xfail") => !holds,
                _ => holds,
            };
            if !expected {
                continue;
            }
        }
        let line = match d.args.get(3).map(String::as_str) {
            None | Some(".") => Some(d.line),
            Some("0") => None,
            Some(rel) if rel.starts_with(".-") || rel.starts_with(".+") => {
                rel[2..].parse::<usize>().ok().and_then(|n| {
                    if rel.starts_with(".-") {
                        d.line.checked_sub(n)
                    } else {
                        Some(d.line + n)
                    }
                })
            }
            Some(n) => n
                .parse()
                .ok()
                .or_else(|| labels.iter().find(|(l, _)| l == n).map(|(_, line)| *line)),
        };
        lines.extend(line);
    }
    lines.sort();
    lines.dedup();
    lines
}

/// Checks of the selector logic, run as a case of the suite.
pub fn self_check() -> Result<(), String> {
    let c = Target {
        cxx: false,
        fortran: false,
    };
    let cases = [
        (c.eval("*-*-*"), true),
        (c.eval("hppa*-*-hpux*"), false),
        (
            c.eval("openacc_radeon_accel_selected || openacc_host_selected"),
            true,
        ),
        (c.eval("! openacc_host_selected"), false),
        (c.eval("{ ! { hppa*-*-hpux* } }"), true),
        (
            c.selector(Some(&"target openacc_nvidia_accel_selected".into())),
            false,
        ),
        (c.selector(Some(&"target { c && ! c++ }".into())), true),
    ];
    match cases.iter().position(|(got, want)| got != want) {
        Some(k) => Err(format!("selector case {k} is wrong")),
        None => Ok(()),
    }
}
