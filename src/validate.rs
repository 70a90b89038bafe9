//! Checks of directives in their context, so that invalid OpenACC is reported and left
//! unchanged instead of being rewritten: executable directives where no statement may be,
//! data directives inside compute constructs, `routine` without a function, loop levels
//! nested wrongly, and (with the semantic facts) negative lower bounds on arrays. The directive text itself is checked by
//! the parser (`crate::directive`).

use crate::rules::{RuleId, id};

pub mod atomic;
pub mod branches;
pub mod default_none;
pub mod private_loop;

use crate::diag::Diagnostic;
use crate::directive::Directive;
use crate::hash::HashMap;
use crate::rules::{DirectiveKind, Tables};
use crate::syntax::Position;
use crate::unit::Unit;

fn kind(d: &Directive, t: &Tables) -> Option<DirectiveKind> {
    t.directive(&d.name).map(|r| r.kind)
}

/// Loop levels: gang 0, worker 1, vector 2.
const LEVELS: [&str; 3] = ["gang", "worker", "vector"];

fn levels(d: &Directive) -> Vec<usize> {
    LEVELS
        .iter()
        .enumerate()
        .filter(|(_, l)| d.has(l))
        .map(|(k, _)| k)
        .collect()
}

/// Routine levels: gang 0, worker 1, vector 2, seq 3.
const ROUTINE_LEVELS: [&str; 4] = ["gang", "worker", "vector", "seq"];

struct Checker<'u, 'a> {
    u: &'u Unit<'a>,
    out: Vec<(usize, Diagnostic)>,
    /// Functions with `acc routine` and a level: name → (level, line of the directive, site).
    routines: HashMap<String, (usize, usize, usize)>,
}

impl Checker<'_, '_> {
    /// The function a `routine` directive applies to: its argument, or the function declared
    /// after it.
    fn routine_name(&self, i: usize, d: &Directive) -> Option<String> {
        match &d.arg {
            Some(a) => a.items.first().map(|it| it.text.trim().to_string()),
            None => self.u.stmts[i]
                .as_ref()
                .and_then(|s| self.u.syntax.declared_function(&s.toks())),
        }
    }

    fn collect_routines(&mut self) {
        let u = self.u;
        for i in 0..u.sites.len() {
            let Some(d) = u.dir(i).filter(|d| d.name == "routine") else {
                continue;
            };
            let Some(level) = ROUTINE_LEVELS.iter().position(|l| d.has(l)) else {
                continue;
            };
            if let Some(n) = self.routine_name(i, d) {
                // Fortran's names are looked up in lower case, as its calls are named.
                let key = crate::lang::name_key(u.lang, &n).into_owned();
                self.routines.entry(key).or_insert((level, u.line(i), i));
            }
        }
    }

    /// A function given two different levels (no level clause is 'seq') is an error on the
    /// later directive. Directives already in error do not count.
    fn routine_levels_agree(&mut self) {
        let u = self.u;
        let mut first: HashMap<String, (usize, usize, usize)> = HashMap::default();
        for i in 0..u.sites.len() {
            let Some(d) = u.dir(i).filter(|d| d.name == "routine") else {
                continue;
            };
            if self.out.iter().any(|(k, _)| *k == i) {
                continue;
            }
            let Some(n) = self.routine_name(i, d) else {
                continue;
            };
            let level = ROUTINE_LEVELS.iter().position(|l| d.has(l)).unwrap_or(3);
            // (By `name_key`: Fortran's `routine(NAME)` names `name`.)
            let key = crate::lang::name_key(u.lang, &n).into_owned();
            match first.get(&key) {
                Some(&(l, line, f)) if l != level => {
                    self.error(
                        i,
                        id::CONFLICTING_CLAUSES,
                        format!(
                            "'{n}' is already an 'acc routine {}' (line {line}); this directive makes it '{}': a function has one level of parallelism",
                            ROUTINE_LEVELS[l], ROUTINE_LEVELS[level]
                        ),
                    );
                    // Which of the two is wrong is the user's call: neither is translated.
                    if !self.out.iter().any(|(k, _)| *k == f) {
                        self.error(
                            f,
                            id::CONFLICTING_CLAUSES,
                            format!(
                                "'acc routine {}' at line {} gives '{n}' another level",
                                ROUTINE_LEVELS[level],
                                u.line(i)
                            ),
                        );
                    }
                }
                Some(_) => {}
                None => {
                    first.insert(key, (level, u.line(i), i));
                }
            }
        }
    }

    /// Calls to routines with a level must be to a finer level than the loop they are in
    /// (or, outside loops, no coarser than the routine they are in).
    fn routine_calls(&mut self) {
        let u = self.u;
        if self.routines.is_empty() {
            return;
        }
        let statements = crate::intervals::Nested::with_ids(
            (0..u.sites.len())
                .filter(|&i| u.dir(i).is_some())
                .filter_map(|i| Some((u.stmts[i].as_ref()?.bytes(), i)))
                .collect(),
        );
        for call in u.syntax.calls_in(0..u.syntax.token_count()) {
            let Some(&(callee, line, callee_site)) = self.routines.get(&call.name) else {
                continue;
            };
            let k = call.tok;
            let at = u.syntax.token_range(k).start;
            // The innermost directive whose statement holds the call.
            let site = statements.innermost(at).map(|(_, i)| i);
            if site.is_none_or(|s| u.dir(s).is_some_and(|d| d.name == "routine")) {
                // The call is the declaration itself, or in the body of a function: its
                // routine directive is the one left unchanged.
                let caller = u.syntax.function_of(k);
                if let Some(&(level, _, routine)) =
                    caller.as_ref().and_then(|c| self.routines.get(c))
                    && callee < level
                {
                    self.call_error(
                        site.unwrap_or(routine),
                        at,
                        (callee, line, callee_site),
                        format!("a '{}' routine", ROUTINE_LEVELS[level]),
                    );
                }
                continue;
            }
            let Some(site) = site else { continue };
            let context = std::iter::once(site)
                .chain(u.ancestors(site))
                .take_while(|&a| {
                    u.dir(a)
                        .is_some_and(|d| d.compute_kind().is_none() || d.is_combined())
                })
                .find_map(|a| u.dir(a).and_then(|d| levels(d).last().copied()));
            let context = match context {
                Some(c) => Some((c, format!("a '{}' loop", LEVELS[c]))),
                None if u.compute_of(site).is_none() => u
                    .syntax
                    .function_of(k)
                    .and_then(|f| self.routines.get(&f).copied())
                    .map(|(l, _, _)| (l + 1, format!("a '{}' routine", ROUTINE_LEVELS[l]))),
                None => None,
            };
            if let Some((c, what)) = context
                && callee <= c
                && callee < 3
            {
                self.call_error(site, at, (callee, line, callee_site), what);
            }
        }
    }

    /// A call at `at`, in the statement of `site`, to the routine `(level, line, site)`:
    /// neither the caller's directive nor the callee's routine is translated (translated, the
    /// callee's routine would lose the level that makes the call an error).
    fn call_error(
        &mut self,
        site: usize,
        at: usize,
        (callee, line, callee_site): (usize, usize, usize),
        what: String,
    ) {
        let msg = format!(
            "this call to a '{}' routine (line {line}) is inside {what}: a routine must run at a finer level than its caller; the directive at line {} is left unchanged",
            ROUTINE_LEVELS[callee],
            self.u.line(site)
        );
        self.out
            .push((site, Diagnostic::new(at, id::LOOP_NESTING, msg)));
        if !self.out.iter().any(|(k, _)| *k == callee_site) {
            self.error(
                callee_site,
                id::LOOP_NESTING,
                format!(
                    "this '{}' routine is called at line {} inside {what}",
                    ROUTINE_LEVELS[callee],
                    self.u.line_at(at)
                ),
            );
        }
    }

    fn error(&mut self, i: usize, rule: RuleId, message: String) {
        let at = self.u.at(i);
        self.out.push((
            i,
            Diagnostic::new(
                at,
                rule,
                format!("{message}; the directive is left unchanged"),
            ),
        ));
    }

    /// What the directive at site `i` stands in for when it is where a statement must be:
    /// the body of `if`, `else`, a loop, a label or a construct.
    fn statement_position(&self, i: usize) -> Option<String> {
        let u = self.u;
        let first = u.sites[i].first_token().or(u.sites[i].token())?;
        Some(match u.syntax.position(first)? {
            Position::Site(s) => {
                let d = u.dir(s)?;
                let takes = u.tables.directive(&d.name).is_some_and(|r| r.stmt);
                return takes.then(|| format!("the statement of 'acc {}'", d.name));
            }
            Position::Body(kw) => format!("the body of '{kw}'"),
            Position::Default => "the statement of a 'default:' label".into(),
            Position::Case => "the statement of a 'case' label".into(),
            Position::Label(w) => format!("the statement of the label '{w}'"),
            Position::Bracketed(..) => return None,
        })
    }

    /// Where a directive stands inside parentheses or brackets (GCC: "must be at file
    /// scope", "'#pragma' is not allowed here"): what the statement after it is taken to be
    /// means nothing there.
    fn bracketed(&self, i: usize) -> Option<String> {
        let u = self.u;
        let first = u.sites[i].first_token().or(u.sites[i].token())?;
        let Position::Bracketed(open, name) = u.syntax.position(first)? else {
            return None;
        };
        Some(match (open, name) {
            ('(', Some(name)) => format!("inside the parentheses of '{name}'"),
            ('(', None) => "inside parentheses".into(),
            (_, Some(name)) => format!("inside the brackets of '{name}'"),
            (_, None) => "inside brackets".into(),
        })
    }

    /// Directives that are not statements must not stand where a statement must be, and
    /// executable ones need a function around them.
    fn placement(&mut self, i: usize, d: &Directive) {
        let u = self.u;
        let Some(k) = kind(d, u.tables) else { return };
        if let Some(what) = self.bracketed(i) {
            self.error(
                i,
                id::DIRECTIVE_PLACEMENT,
                format!("'acc {}' cannot be {what}", d.name),
            );
            return;
        }
        let declare = d.name == "declare";
        if k == DirectiveKind::Declarative
            && !declare
            && let Some(what) = self.statement_position(i)
        {
            self.error(
                i,
                id::DIRECTIVE_PLACEMENT,
                format!("'acc {}' cannot be {what}", d.name),
            );
            return;
        }
        if k == DirectiveKind::Executable || declare {
            if let Some(what) = self.statement_position(i) {
                self.error(
                    i,
                    id::DIRECTIVE_PLACEMENT,
                    format!(
                        "'acc {}' is not a statement and cannot be {what} (put it in braces)",
                        d.name
                    ),
                );
                return;
            }
            if !declare
                && let Some(tok) = u.sites[i].token()
                && u.syntax.block_end(tok).is_none()
            {
                self.error(
                    i,
                    id::DIRECTIVE_PLACEMENT,
                    format!("'acc {}' must be inside a function", d.name),
                );
                return;
            }
        }
        let data = matches!(
            d.name.as_str(),
            "data" | "enter data" | "exit data" | "update" | "host_data"
        );
        let compute = d.compute_kind().is_some();
        if data || compute {
            // The nearest compute construct around, or `routine` for a compute construct
            // (indexed: a nest of 20,000 data constructs).
            let parent = u.parent[i];
            let outer = parent
                .and_then(|p| u.compute_of(p))
                .max(parent.filter(|_| compute).and_then(|p| u.routine_of(p)))
                .and_then(|a| Some((a, u.dir(a)?.name.clone())));
            if let Some((a, outer)) = outer {
                let what = if outer == "routine" {
                    "a function with 'acc routine' (no nested parallelism)".to_string()
                } else {
                    format!("'acc {outer}' (line {})", u.line(a))
                };
                self.error(
                    i,
                    id::DIRECTIVE_PLACEMENT,
                    format!("'acc {}' may not appear inside {what}", d.name),
                );
                return;
            }
        }
        if d.name == "routine" && d.arg.is_none() {
            self.routine(i);
        }
    }

    /// A `routine` without a name applies to the one function declared right after it, at
    /// file, namespace or class scope.
    fn routine(&mut self, i: usize) {
        let u = self.u;
        let Some(tok) = u.sites[i].token() else {
            return;
        };
        if let Some(placed) = u.syntax.routine_in_unit(tok) {
            if let Err(why) = placed {
                self.error(
                    i,
                    id::DIRECTIVE_PLACEMENT,
                    format!("'acc routine' without a name {why}"),
                );
            }
            return;
        }
        // File, namespace or class scope (C++ member functions).
        if u.syntax.block_end(tok).is_some() {
            self.error(
                i,
                id::DIRECTIVE_PLACEMENT,
                "'acc routine' without a name must be at file scope, before a function".into(),
            );
            return;
        }
        // Another pragma (OpenACC, or OpenMP a translation put there) comes first.
        let next = u.syntax.directive_follows(tok);
        let why = match &u.stmts[i] {
            _ if next => Some("another directive follows it"),
            None => Some("no declaration follows it"),
            Some(s) => u.syntax.declares_one_function(s.toks()).err(),
        };
        if let Some(why) = why {
            self.error(
                i,
                id::DIRECTIVE_PLACEMENT,
                format!("'acc routine' must be followed by one function declaration or definition: {why}"),
            );
        }
    }

    /// Explicit loop levels must get finer inward; `worker(n)`, `vector(n)` and
    /// `gang(num:n)` size nothing outside `kernels`.
    fn loop_levels(&mut self, i: usize, d: &Directive) {
        let u = self.u;
        if !(d.name == "loop" || d.is_combined()) {
            return;
        }
        let mine = levels(d);
        let Some(&coarsest) = mine.first() else {
            return;
        };
        let compute = u.compute_of(i);
        let in_parallel = compute
            .and_then(|c| u.dir(c))
            .is_some_and(|c| matches!(c.compute_kind(), Some("parallel" | "serial")))
            || compute.is_none();
        if in_parallel
            && let Some(c) = d.clauses.iter().find(|c| {
                c.args.is_some()
                    && match c.name.as_str() {
                        "worker" | "vector" => true,
                        // (The keywords are canonical in the directive.)
                        "gang" => c.items().any(|it| {
                            let t = it.text.trim_start();
                            !t.starts_with("static") && !t.starts_with("dim")
                        }),
                        _ => false,
                    }
            })
        {
            let ctx = compute
                .and_then(|c| u.dir(c))
                .map_or("an orphaned loop".to_string(), |c| {
                    format!("'acc {}'", c.compute_kind().unwrap_or("parallel"))
                });
            let at = c.span().start;
            let msg = format!(
                "'{}' takes no size inside {ctx} (only 'kernels' sizes its loops; use 'num_gangs', 'num_workers' or 'vector_length' on the compute construct)",
                c.spelled()
            );
            self.out.push((
                i,
                Diagnostic::new(
                    at,
                    id::LOOP_NESTING,
                    format!("{msg}; the directive is left unchanged"),
                ),
            ));
            return;
        }
        for a in u.ancestors(i) {
            let Some(ad) = u.dir(a) else { continue };
            if ad.name == "routine" {
                break;
            }
            if ad.name == "loop" || ad.is_combined() {
                if let Some(&finest) = levels(ad).last()
                    && coarsest <= finest
                {
                    let how = if coarsest == finest {
                        "uses the same level as"
                    } else {
                        "is coarser than"
                    };
                    self.error(
                        i,
                        id::LOOP_NESTING,
                        format!(
                            "this '{}' loop {how} the enclosing '{}' loop (line {}): levels must get finer inward (gang, worker, vector)",
                            LEVELS[coarsest],
                            LEVELS[finest],
                            u.line(a)
                        ),
                    );
                    // Which of the two is wrong is the user's call: neither is translated.
                    if !self.out.iter().any(|(k, _)| *k == a) {
                        self.error(
                            a,
                            id::LOOP_NESTING,
                            format!(
                                "the '{}' loop at line {} nested in this one {how} it",
                                LEVELS[coarsest],
                                u.line(i)
                            ),
                        );
                    }
                    return;
                }
                if ad.is_combined() {
                    break;
                }
            } else if ad.compute_kind().is_some() {
                break;
            }
        }
        if compute.is_some() {
            return;
        }
        // An orphaned loop: in the function's routine level or finer.
        let Some(tok) = u.sites[i].token() else {
            return;
        };
        let routine = u
            .syntax
            .function_of(tok)
            .and_then(|f| self.routines.get(&f).copied());
        if let Some((r, line, site)) = routine
            && coarsest < r
        {
            self.error(
                i,
                id::LOOP_NESTING,
                format!(
                    "a '{}' loop may not be in a function with 'acc routine {}' (line {line})",
                    LEVELS[coarsest], ROUTINE_LEVELS[r]
                ),
            );
            // The routine stays too: translated, it would lose the level that makes the loop
            // an error.
            if !self.out.iter().any(|(k, _)| *k == site) {
                self.error(
                    site,
                    id::LOOP_NESTING,
                    format!(
                        "the '{}' loop at line {} is coarser than this routine",
                        LEVELS[coarsest],
                        u.line(i)
                    ),
                );
            }
        }
    }

    /// `tile` needs loops whose bounds and steps do not depend on the loops around them in
    /// the tile (each tile is a rectangle of iterations).
    fn tile_rectangular(&mut self, i: usize, d: &Directive) {
        let (Some(c), Some(t)) = (d.find("tile"), self.u.nest_token(i)) else {
            return;
        };
        if self.u.stmts[i].is_none() {
            return;
        }
        let sx = self.u.syntax;
        let loops = sx.nest_loops(t, c.items().count());
        for (k, f) in loops.iter().enumerate().skip(1) {
            let outer: Vec<&str> = loops[..k].iter().filter_map(|o| o.var.as_deref()).collect();
            let Some(used) = sx.header_mentions(f, &outer) else {
                continue;
            };
            let at = sx.token_range(used);
            let name = &self.u.src[at.clone()];
            self.out.push((
                i,
                Diagnostic::new(
                    at.start,
                    id::TILE_NON_RECTANGULAR,
                    format!("'tile' at line {} needs a rectangular loop nest, but this loop's header uses '{name}', the variable of an enclosing loop of the tile; the directive is left unchanged", self.u.line(i)),
                ),
            ));
            return;
        }
    }
}

/// Context checks of every directive that parsed: the sites to leave unchanged, with why.
pub fn context(u: &Unit) -> Vec<(usize, Diagnostic)> {
    let mut c = Checker {
        u,
        out: Vec::new(),
        routines: HashMap::default(),
    };
    c.collect_routines();
    for i in 0..u.sites.len() {
        let Some(d) = u.dir(i) else { continue };
        let before = c.out.len();
        c.placement(i, d);
        if c.out.len() == before {
            c.loop_levels(i, d);
        }
        if c.out.len() == before {
            c.tile_rectangular(i, d);
        }
    }
    c.routine_levels_agree();
    c.routine_calls();
    c.out
}

/// Constructs around a directive left unchanged are left unchanged too: translated around
/// OpenACC they would give a mix that means something else when run again (an inner `acc
/// loop` under `omp target teams` reads as an orphaned loop), and the user fixes the inner
/// directive and translates the whole construct then.
pub fn enclosing(u: &Unit) -> Vec<(usize, Diagnostic)> {
    let mut out: Vec<(usize, Diagnostic)> = Vec::new();
    let mut reported: crate::hash::HashSet<usize> = Default::default();
    for i in 0..u.sites.len() {
        if u.dirs[i].is_some() || u.sites[i].token().is_none() || u.sites[i].computed {
            continue;
        }
        for a in u.ancestors(i) {
            let Some(d) = u.dir(a) else {
                if u.sites[a].token().is_some() && !u.sites[a].computed {
                    // Left unchanged itself: those around it are reported already.
                    break;
                }
                continue;
            };
            if !reported.insert(a) {
                // Reported with all those around it.
                break;
            }
            out.push((
                a,
                Diagnostic::new(
                    u.at(a),
                    id::ENCLOSING_ERROR,
                    format!(
                        "'acc {}' is left unchanged because the directive at line {} inside it is",
                        d.name,
                        u.line(i)
                    ),
                ),
            ));
        }
    }
    out
}

/// Directives inside a compute or structured data construct left unchanged: they stay
/// OpenACC too (translated alone, a loop of the construct would read as an orphaned loop, a
/// `gang` loop as a bare `distribute`; a construct inside `acc data` would map, as OpenMP,
/// data OpenMP never mapped). No diagnostic: the construct's own error says why.
pub fn inside_unchanged(u: &Unit) -> Vec<usize> {
    let mut out = Vec::new();
    // Sites before this one are already read (nested constructs left unchanged: each site
    // once, not once per construct around it).
    let mut read = 0;
    for (i, s) in u.sites.iter().enumerate() {
        let Some(tok) = s.token().filter(|_| u.dirs[i].is_none() && !s.computed) else {
            continue;
        };
        let text = s.unescaped.as_deref().unwrap_or(u.src);
        // (Fortran spells the name in any case.)
        let dialect = crate::directive::Dialect::of_language(u.lang.name());
        let name = crate::directive::directive_name_in(text, s.text(), u.tables, dialect);
        let holds = name.is_some_and(|n| {
            matches!(
                n.strip_suffix(" loop").unwrap_or(&n),
                "parallel" | "serial" | "kernels" | "data" | "host_data"
            )
        });
        if !holds {
            continue;
        }
        // A directive that did not parse has no statement yet: its syntactic one.
        let Some(end) = u.stmts[i]
            .as_ref()
            .map(|st| st.bytes().end)
            .or_else(|| u.syntax.statement_after(tok).map(|st| st.bytes().end))
        else {
            continue;
        };
        let from = read.max(i + 1);
        let to = (from..u.sites.len())
            .find(|&k| u.sites[k].span().start >= end)
            .unwrap_or(u.sites.len());
        out.extend((from..to).filter(|&k| u.dirs[k].is_some()));
        read = read.max(to);
    }
    out
}

/// With the semantic facts: a negative constant lower bound on an array (on a pointer it
/// may address memory before the pointer, which is valid), and sub-arrays that are not
/// contiguous (`a[0:2][0:3]` of `int a[4][4]`, or a section through a pointer to pointers):
/// OpenACC and OpenMP map one contiguous block.
pub fn with_facts(u: &Unit) -> Vec<(usize, Diagnostic)> {
    let mut out = Vec::new();
    for i in 0..u.sites.len() {
        let (Some(d), Some(f)) = (u.dir(i), u.site_facts(i)) else {
            continue;
        };
        let text = u.sites[i].unescaped.as_deref().unwrap_or(u.src);
        let args = d.arg.iter().flat_map(|a| a.items.iter());
        let found = d
            .clauses
            .iter()
            .flat_map(|c| c.items())
            .chain(args)
            .find_map(|it| section_problem(u.lang, text, it, f));
        let found = found.or_else(|| use_device_problem(d, f));
        if let Some((at, msg)) = found {
            let at = if u.sites[i].unescaped.is_some() {
                u.at(i)
            } else {
                at
            };
            out.push((i, Diagnostic::new(at, id::INVALID_ARGUMENT, msg)));
        }
    }
    out
}

/// `use_device` gives the device address of an array or of what a pointer points to: a
/// scalar or a struct has none to give (GCC: "neither a pointer nor an array").
fn use_device_problem(d: &Directive, f: &crate::semantic::SiteFacts) -> Option<(usize, String)> {
    use crate::semantic::VarKind;
    let it = d.all("use_device").flat_map(|c| c.items()).find(|it| {
        let name = it.text.trim();
        f.names
            .get(name)
            .is_some_and(|t| matches!(t.kind, VarKind::Scalar | VarKind::Struct))
    })?;
    Some((
        it.span().start,
        format!(
            "'use_device({})' names a variable that is neither a pointer nor an array: it has no device address to use; the directive is left unchanged",
            it.text.trim()
        ),
    ))
}

fn section_problem(
    l: &dyn crate::lang::Language,
    text: &str,
    it: &crate::directive::Item,
    f: &crate::semantic::SiteFacts,
) -> Option<(usize, String)> {
    if nothing_to_find(text, it) {
        return None;
    }
    looked_up_section_problem(l, text, it, f)
}

/// An item without a bound worth reading ([`crate::directive::literal_bound_possible`]) has
/// no section problem: its variable is not looked up.
fn nothing_to_find(text: &str, it: &crate::directive::Item) -> bool {
    text.as_bytes()
        .get(it.span())
        .is_some_and(|item| !crate::directive::literal_bound_possible(item))
}

/// The first subscript of `name[…]…` (an array, or the rows a pointer to arrays points to)
/// that reaches past its dimension's declared extent, both integer literals: an element
/// (`g[4]` of `double g[4]`) or a section whose start and length pass the end. OpenMP
/// compilers map such an item as written, memory outside the array (Clang without a word;
/// GCC rejects it, as it rejects the OpenACC original). `parameter`: the variable is a
/// parameter declared as an array, whose first extent C ignores (it is a pointer).
fn past_extent(
    base: &str,
    item: &str,
    bounds: &[(usize, &str, Option<&str>)],
    extents: &[Option<u64>],
    parameter: bool,
) -> Option<(usize, String)> {
    let literal = |s: &str| crate::directive::integer_literal(s).flatten();
    for (k, &(at, lo, len)) in bounds.iter().enumerate() {
        let Some(extent) = extents
            .get(k)
            .copied()
            .flatten()
            .filter(|_| k > 0 || !parameter)
        else {
            continue;
        };
        let lo = match lo.trim() {
            "" => Some(0),
            l => literal(l),
        };
        let Some(lo) = lo else { continue };
        let dimension = format!("dimension {} has {extent} elements", k + 1);
        let message = match len {
            None if lo >= extent => {
                // Written like its declaration: the whole array was meant.
                let whole = bounds.len() == extents.len()
                    && bounds.iter().zip(extents).all(|(b, e)| {
                        b.2.is_none() && literal(b.1).is_some() && literal(b.1) == *e
                    });
                let hint = if whole {
                    format!("; to map the whole array write '{base}'")
                } else {
                    String::new()
                };
                format!(
                    "'{item}' names an element past the end of '{base}': {dimension} and its subscript is {lo} (a subscript without ':' names one element{hint})"
                )
            }
            // A zero-length section maps nothing, wherever it starts.
            Some(len) => match literal(len)
                .filter(|&n| n > 0)
                .map(|n| lo.saturating_add(n))
            {
                Some(end) if end > extent => format!(
                    "'{item}' reaches past the end of '{base}': {dimension} (the last is {}) and the section covers elements {lo} to {}",
                    extent - 1,
                    end - 1
                ),
                _ => continue,
            },
            None => continue,
        };
        return Some((
            at,
            format!(
                "{message}; OpenMP would map memory outside the array; the directive is left unchanged"
            ),
        ));
    }
    None
}

/// [`section_problem`] of an item, its variable looked up.
fn looked_up_section_problem(
    l: &dyn crate::lang::Language,
    text: &str,
    it: &crate::directive::Item,
    f: &crate::semantic::SiteFacts,
) -> Option<(usize, String)> {
    use crate::directive::{negative_literal, section_bounds};
    let base = l.base_name(&it.text)?;
    let ty = f.names.get(base)?;
    let bounds = section_bounds(text, it);
    let array = matches!(ty.kind, crate::semantic::VarKind::Array { .. });
    if array && let Some((at, lo, _)) = bounds.iter().find(|(_, lo, _)| negative_literal(lo)) {
        return Some((
            *at,
            format!(
                "negative lower bound '{}' on the array '{base}' in '{}'; the directive is left unchanged",
                lo.trim(),
                it.text
            ),
        ));
    }
    // Only `name[…][…]…`: the subscripts apply to the variable itself.
    let after = it.text.trim_start()[base.len()..].trim_start();
    if after.starts_with('[')
        && let Some(past) = past_extent(
            base,
            it.text.trim(),
            &bounds,
            &ty.extents,
            ty.param_dims.is_some(),
        )
    {
        return Some(past);
    }
    if bounds.len() < 2 || ty.extents.is_empty() || !after.starts_with('[') {
        return None;
    }
    let length = |k: usize| -> Option<u64> {
        let (_, lo, len) = bounds[k];
        let Some(len) = len else { return Some(1) }; // an element
        let lo = lo.trim();
        let lo = if lo.is_empty() {
            Some(0)
        } else {
            lo.parse::<u64>().ok()
        };
        match len.trim() {
            "" => ty.extents.get(k).copied().flatten()?.checked_sub(lo?),
            l => l.parse().ok(),
        }
    };
    let full = |k: usize| -> bool {
        let (_, lo, len) = bounds[k];
        let Some(len) = len else { return false };
        let lo_zero = matches!(lo.trim(), "" | "0");
        let extent = ty.extents.get(k).copied().flatten();
        lo_zero
            && (len.trim().is_empty()
                || (extent.is_some() && len.trim().parse::<u64>().ok() == extent))
    };
    // After the first dimension that is not a single element, every dimension must be whole.
    let first = (0..bounds.len()).find(|&k| length(k) != Some(1))?;
    for (k, &(at, lo, _)) in bounds.iter().enumerate().skip(first + 1) {
        let beyond = k >= ty.extents.len();
        let partial = !full(k)
            && (length(k)
                .is_some_and(|l| ty.extents.get(k).copied().flatten().is_some_and(|e| l < e))
                || !matches!(lo.trim(), "" | "0"));
        if beyond || partial {
            let why = if beyond {
                "after a section of several elements its subscripts go through a pointer; map the rows one by one".to_string()
            } else {
                format!(
                    "dimension {} is not whole after a dimension of more than one element",
                    k + 1
                )
            };
            return Some((
                at,
                format!(
                    "the sub-array '{}' is not contiguous ({why}): it cannot be mapped as one block; the directive is left unchanged",
                    it.text
                ),
            ));
        }
    }
    None
}

#[cfg(test)]
mod section_tests;
