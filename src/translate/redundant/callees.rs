//! Functions whose calls cannot count gangs: gang-redundant code that calls one gives the
//! same result however many gangs run it, as each definition of it in the file writes only
//! its own locals ([`Syntax::writes_only_locals`]) and calls only such functions or the
//! library's. A function the file does not define, or calls through a member, is not one.

use crate::hash::HashMap;
use crate::syntax::Syntax;

/// The answers for a file's functions, each decided once.
#[derive(Default)]
pub struct Callees {
    inert: HashMap<String, bool>,
}

impl Callees {
    /// Whether calling `name` cannot change a result by how often it runs; `library` tells
    /// the library functions (without effects) from the others.
    pub fn inert(
        &mut self,
        syntax: &dyn Syntax,
        library: &dyn Fn(&str) -> bool,
        name: &str,
    ) -> bool {
        self.inert_in(syntax, library, name, &mut Vec::new())
    }

    /// `stack`: the functions whose answer is being decided, which call `name`.
    fn inert_in(
        &mut self,
        syntax: &dyn Syntax,
        library: &dyn Fn(&str) -> bool,
        name: &str,
        stack: &mut Vec<String>,
    ) -> bool {
        if let Some(&known) = self.inert.get(name) {
            return known;
        }
        // A recursive call adds no effect of its own.
        if stack.iter().any(|s| s == name) {
            return true;
        }
        let bodies = syntax.function_bodies(name);
        if bodies.is_empty() {
            return false;
        }
        stack.push(name.to_string());
        let mut ok = true;
        for body in bodies {
            let calls = syntax.calls_in(body.clone());
            ok = syntax.writes_only_locals(&body)
                && !calls.iter().any(|c| c.member)
                && calls
                    .iter()
                    .all(|c| library(&c.name) || self.inert_in(syntax, library, &c.name, stack));
            if !ok {
                break;
            }
        }
        stack.pop();
        // Inside a cycle the answer assumed the callers inert: kept only at its head.
        if stack.is_empty() || !ok {
            self.inert.insert(name.to_string(), ok);
        }
        ok
    }
}

#[cfg(test)]
mod tests {
    use super::Callees;
    use crate::c::syntax::CSyntax;
    use crate::lex::{PpLines, lex};
    use crate::structure::Structure;

    fn inert(src: &str, f: &str) -> bool {
        let toks = lex(src);
        let (structure, pp) = (Structure::new(src, &toks, &[]), PpLines::new(src, &toks));
        let syntax = CSyntax::new(&structure, &pp);
        Callees::default().inert(&syntax, &|n| matches!(n, "sqrt" | "fabs"), f)
    }

    #[test]
    fn functions_writing_only_their_locals_are_inert() {
        for (src, f) in [
            ("static int sq(int x) { return x * x; }", "sq"),
            (
                "double h(int n, const double *a) { double s = 0; int i, j; for (i = 0; i < n; i++) s += a[i]; j = 2; return sqrt(s) + j; }",
                "h",
            ),
            (
                "int t(int k) { int v[4] = {0}; v[k & 3]++; ++v[0]; k -= 1; return ++k + v[1]; }",
                "t",
            ),
            (
                "int p(const int *a) { const int *q = a; q++; return *q; }",
                "p",
            ),
            (
                "int f(int n) { return n <= 1 ? 1 : n * f(n - 1); }\nint g(int n) { return f(n) + sq(n); }\nint sq(int x) { return x * x; }",
                "g",
            ),
            (
                "int loop(int n) { int s = 0; for (int i = 0; i < n; ++i) { s += i; } return s; }",
                "loop",
            ),
            ("int a(int n) { return _Alignof(int) + n; }", "a"),
            // After a definition whose head a conditional splits (its braces unbalanced).
            (
                "#ifdef X\nint f(int a) {\n#else\nint f(int a, int b) {\n#endif\n return a; }\nint h(int n) { return n * 2; }",
                "h",
            ),
        ] {
            assert!(inert(src, f), "{src}");
        }
    }

    #[test]
    fn functions_with_outside_effects_are_not_inert() {
        for (src, f) in [
            ("int g; void bump(void) { g++; }", "bump"),
            ("int g; void set(int v) { g = v; }", "set"),
            ("void w(int *p) { *p = 1; }", "w"),
            ("void w(int *p) { p[0] = 1; }", "w"),
            ("void w(int *p) { int *q = p; q[0] = 1; }", "w"),
            (
                "struct s { int a; }; void w(struct s *p) { p->a = 1; }",
                "w",
            ),
            ("void w(int n) { printf(\"%d\\n\", n); }", "w"),
            ("int c(void) { static int n; return ++n; }", "c"),
            (
                "int g; int f(void) { { int g; g = 1; } g = 2; return 0; }",
                "f",
            ),
            ("int g; int f(void) { g = 2; int g = 1; return g; }", "f"),
            (
                "int i; int f(int n) { for (int i = 0; i < n; i++) ; i = 3; return 0; }",
                "f",
            ),
            ("int a, b; int f(void) { a = 1, b = 2; return 0; }", "f"),
            ("typedef int *ip; void f(ip p) { p[1] = 2; }", "f"),
            (
                "typedef int *ip; void f(void) { ip a[2]; a[0][1] = 2; }",
                "f",
            ),
            ("int g; void f(void) { int *p = &g; *p = 1; }", "f"),
            ("void f(int n) {\n#pragma acc atomic\n n++; }", "f"),
            ("void f(int n) { _Pragma(\"acc atomic\") n++; }", "f"),
            ("#define BUMP g++\nint g; void f(void) { BUMP; }", "f"),
            ("int g; void f(void) { int &r = g; r = 1; }", "f"),
            ("void ext(void); void f(void) { ext(); }", "f"),
            ("int h(void); int f(void) { return h(); }", "f"),
            ("namespace n { int g; } int f(int x) { return x; }", "f"),
            (
                "int g; int f(int n) { if (n) g = 1; else g = 2; return 0; }",
                "f",
            ),
            ("int g[4]; void f(void) { g[0] = 1; }", "f"),
            ("void f(int n) { int x; (x) = n; }", "f"),
            (
                "int g; int f(void) { int t[4 + g]; g = 1; return t[0]; }",
                "f",
            ),
            (
                "struct s { int (*op)(int); }; int f(struct s *p) { return p->op(1); }",
                "f",
            ),
            ("void f(int *p) { __builtin_memset(p, 0, 4); }", "f"),
            // A `for` declaration's scope ends with its block, not in the next one.
            (
                "int i; int f(int n, int c) { { for (int i = 0; i < n; i++) if (c) { n += i; } } { i = 3; } return n; }",
                "f",
            ),
        ] {
            assert!(!inert(src, f), "{src}");
        }
    }
}
