//! Deciding each loop's parallelism: implicit gang placement, the profiles' levels,
//! `kernels` independence, and every compute construct's mode.

use crate::dependence::{DepKind, Verdict};
use crate::diag::Diagnostic;
use crate::directive::Directive;
use crate::profile::Profile;
use crate::semantic::VarKind;
use crate::translate::kernels::Proof;
use crate::translate::routines::Routines;
use crate::translate::{Mode, Options, Unit};
use crate::translate::{Tree, by_trees, kernels};

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Levels {
    pub gang: bool,
    pub worker: bool,
    pub vector: bool,
    /// The worker level was added to an explicit vector loop (default profile): the threads
    /// stand for vector lanes, so `num_workers` does not apply.
    pub vector_threads: bool,
}

impl Levels {
    pub(super) fn any(self) -> bool {
        self.gang || self.worker || self.vector
    }
    /// Innermost level used (gang 0, worker 1, vector 2), or -1.
    fn max(self) -> i32 {
        if self.vector {
            2
        } else if self.worker {
            1
        } else if self.gang {
            0
        } else {
            -1
        }
    }
    /// Outermost level used, or 3.
    fn min(self) -> i32 {
        if self.gang {
            0
        } else if self.worker {
            1
        } else if self.vector {
            2
        } else {
            3
        }
    }
    pub(super) fn explicit(d: &Directive) -> Levels {
        Levels {
            gang: d.has("gang"),
            worker: d.has("worker"),
            vector: d.has("vector"),
            vector_threads: false,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// No enclosing compute construct is visible.
    Orphan,
    Seq,
    Par(Levels),
}

#[derive(Debug, Clone)]
pub struct LoopInfo {
    pub decision: Decision,
    pub compute: Option<usize>,
    pub mode: Mode,
    /// A `kernels` loop left sequential because its independence is unknown.
    pub kernels_unknown: bool,
    /// An orphaned worker/vector loop in a function no `routine` makes device code.
    pub host_function: bool,
    /// Mapped as under the default profile although the `loop` profile is chosen: its plan
    /// needs a clause OpenMP's `loop` construct does not take (`lastprivate`).
    pub no_loop_construct: bool,
    /// A loop without levels that would have taken the vector level of its nest but for what
    /// the dependence test found (the reason, for the `vector-dependence` note).
    pub vector_refused: Option<String>,
}

pub(super) fn is_seq(d: &Directive) -> bool {
    d.has("seq") || d.has("auto")
}

/// Every loop's decision and every compute construct's mode.
pub struct Decisions {
    /// Per site: loops, and `kernels` constructs whose body is a bare loop (`Unit::bare_loop`).
    pub loops: Vec<Option<LoopInfo>>,
    /// Per compute construct site.
    pub modes: Vec<Option<Mode>>,
    /// For an orphaned loop of a host function (`LoopInfo::host_function`), a compute
    /// construct of the file whose region calls the function: OpenACC then makes it an
    /// implicit `routine seq`, so the loop runs on the device, still sequentially. Apart
    /// from the loops: a field per site would grow a large file's peak.
    pub callers: crate::hash::HashMap<usize, usize>,
}

impl std::ops::Deref for Decisions {
    type Target = [Option<LoopInfo>];
    fn deref(&self) -> &Self::Target {
        &self.loops
    }
}

impl Decisions {
    pub fn mode(&self, c: usize) -> Mode {
        self.modes.get(c).copied().flatten().unwrap_or(Mode::Teams)
    }
}

/// Whether the iterations of loop `i` in a `kernels` region (a loop site without explicit
/// levels, or the bare loop of a `kernels` site) are known to be independent: the one place
/// that decides it, so that a dependence test can prove more loops independent here.
fn kernels_independent(u: &Unit, i: usize, c: usize, mode: Mode, opts: &Options) -> bool {
    opts.assume_independent
        || asserted_independent(u, i)
        || matches!(kernels::prove(u, i, c, mode), Proof::Independent(_))
}

pub(super) fn asserted_independent(u: &Unit, i: usize) -> bool {
    u.is_loop(i) && u.dir(i).is_some_and(|d| d.has("independent"))
}

/// The `kernels-sequential` warning for kernels loop `i` (or the bare loop of kernels
/// construct `i`) at line `line`, naming what the dependence test found.
pub fn kernels_sequential(u: &Unit, i: usize, line: usize) -> Diagnostic {
    let c = u.compute_of(i).unwrap_or(i);
    let why = match kernels::prove(u, i, c, Mode::Target) {
        Proof::Sequential(why) => why,
        Proof::Independent(_) => "its reduction needs the enclosing 'target teams'".into(),
    };
    kernels::sequential(u.at(i), line, &why)
}

/// Decide every loop and settle every compute construct's mode.
///
/// A compute construct is first assumed to be `target teams`; it stays so only when gangs
/// partition some of its work: in `parallel`, a gang loop; in `kernels`, a body that is one
/// gang loop (any other code would run once per team, where OpenACC runs it once). Otherwise
/// it is `target`, one gang, which OpenACC allows for `parallel` too (an implementation may
/// use fewer gangs than `num_gangs` asks), and its loops are decided again for that mode.
pub fn decide(u: &Unit, opts: &Options) -> Decisions {
    let mut modes: Vec<Option<Mode>> = (0..u.sites.len())
        .map(|c| {
            u.dir(c).and_then(|d| d.compute_kind()).map(|k| {
                if k == "serial" {
                    Mode::Serial
                } else {
                    Mode::Teams
                }
            })
        })
        .collect();
    let first = decide_loops(u, opts, &modes);
    let gang = |k: usize| matches!(first[k].as_ref().map(|x| &x.decision), Some(Decision::Par(l)) if l.gang);
    // Token ranges of the parallel loops of compute construct `c`.
    let partitioned = |c: usize| -> Vec<std::ops::Range<usize>> {
        u.descendants(c)
            .into_iter()
            .filter(|&l| {
                matches!(
                    first[l].as_ref().map(|x| &x.decision),
                    Some(Decision::Par(_))
                )
            })
            .filter_map(|l| u.stmts[l].as_ref().map(|s| s.toks()))
            .collect()
    };
    let routines = Routines::of(u);
    let mut changed = false;
    for c in 0..u.sites.len() {
        if modes[c] != Some(Mode::Teams) {
            continue;
        }
        let kind = u.dir(c).and_then(|d| d.compute_kind());
        let teams = if kind == Some("kernels") {
            let top = if first[c].is_some() {
                Some(c)
            } else {
                u.single_loop_site(c)
            };
            top.is_some_and(gang)
        } else {
            std::iter::once(c)
                .chain(u.descendants(c))
                .any(|l| first[l].as_ref().is_some_and(|x| x.compute == Some(c)) && gang(l))
                // Code that runs on gangs (not in a worker or vector loop) may call a
                // gang routine, whose `distribute` needs the teams.
                || (!matches!(first[c].as_ref().map(|x| &x.decision), Some(Decision::Par(_)))
                    && routines.may_call_gang_routine(u, c, &partitioned(c)))
        };
        // A region whose statement is not known (in a macro body) may hold gang loops.
        if !teams && u.stmts[c].is_some() {
            modes[c] = Some(Mode::Target);
            changed = true;
        }
    }
    let mut loops = if changed {
        decide_loops(u, opts, &modes)
    } else {
        first
    };
    // Without `routine` the function is host code: OpenACC runs a worker or vector loop
    // there on one host thread, and its iterations are independent, so sequential is exact.
    for (i, info) in loops.iter_mut().enumerate() {
        if let Some(info) = info
            && info.decision == Decision::Orphan
            && u.dir(i)
                .is_some_and(|d| !d.has("gang") && (d.has("worker") || d.has("vector")))
            && !is_seq(u.dir(i).expect("decided loops are parsed"))
            && !routines.in_device_function(u, i)
        {
            info.host_function = true;
        }
    }
    // Which compute construct calls each such loop's function, directly or through the
    // file's functions it calls (OpenACC's implicit `routine` follows calls from device
    // code): read once, only for a file that has such a loop.
    let mut callers: crate::hash::HashMap<usize, usize> = Default::default();
    if loops.iter().flatten().any(|x| x.host_function) {
        // Function name -> the compute construct whose region reaches it, in the order
        // found; each function's body is read once.
        let mut by_name: crate::hash::HashMap<String, usize> = Default::default();
        let mut called: Vec<(String, usize)> = Vec::new();
        let add = |calls: Vec<crate::syntax::Call>,
                   c: usize,
                   by_name: &mut crate::hash::HashMap<String, usize>,
                   called: &mut Vec<(String, usize)>| {
            for call in calls.into_iter().filter(|x| !x.member) {
                if !by_name.contains_key(&call.name) {
                    by_name.insert(call.name.clone(), c);
                    called.push((call.name, c));
                }
            }
        };
        for c in
            (0..u.sites.len()).filter(|&c| u.dir(c).is_some_and(|d| d.compute_kind().is_some()))
        {
            if let Some(stmt) = u.stmts[c].as_ref() {
                add(u.syntax.calls_in(stmt.toks()), c, &mut by_name, &mut called);
            }
        }
        let mut k = 0;
        while let Some((f, c)) = called.get(k).cloned() {
            for body in u.syntax.function_bodies(&f) {
                add(u.syntax.calls_in(body), c, &mut by_name, &mut called);
            }
            k += 1;
        }
        for (i, info) in loops.iter().enumerate() {
            if info.as_ref().is_some_and(|x| x.host_function)
                && let Some(t) = u.sites[i].token()
                // The innermost function whose body holds the loop, found as the bodies were.
                && let Some(&c) = (u.syntax.enclosing_functions(t).first())
                    .and_then(|f| by_name.get(f))
            {
                callers.insert(i, c);
            }
        }
    }
    Decisions {
        loops,
        modes,
        callers,
    }
}

/// What the loops around a site (up to its compute construct) and the loop directives
/// nested in it ask for, gathered once for all sites: a nest of 10,000 loop directives
/// would otherwise walk 10,000 ancestors and descendants per loop.
#[derive(Clone, Copy)]
struct Nest {
    /// The highest level the loops around take (`Levels::max`; `i32::MIN`: none).
    above: i32,
    /// Whether a loop around takes workers, gangs.
    above_worker: bool,
    above_gang: bool,
    /// The lowest explicit level of the loop directives inside that are not `seq`/`auto`
    /// (`Levels::min`; 3: none).
    below: i32,
    /// Whether a loop directive inside asks for workers, gangs explicitly.
    below_worker: bool,
    below_gang: bool,
    /// Whether a loop inside claims the vector level without asking for it: one without
    /// levels that is parallel (see [`claims_vector`]).
    below_naked: bool,
    /// Whether a loop directive is inside (only the innermost can claim the vector level).
    below_loop: bool,
}

impl Default for Nest {
    fn default() -> Self {
        Nest {
            above: i32::MIN,
            above_worker: false,
            above_gang: false,
            below: 3,
            below_worker: false,
            below_gang: false,
            below_naked: false,
            below_loop: false,
        }
    }
}

impl Nest {
    /// Whether a loop around or a loop directive inside runs on threads: worker loops,
    /// and under `target` also gang loops (`parallel for`).
    fn threads(&self, mode: Mode) -> bool {
        self.above_worker
            || self.below_worker
            || (mode == Mode::Target && (self.above_gang || self.below_gang))
    }
}

/// Decide every loop, outer loops first (sites are in source order), for the given modes.
fn decide_loops(u: &Unit, opts: &Options, modes: &[Option<Mode>]) -> Vec<Option<LoopInfo>> {
    let mut out: Vec<Option<LoopInfo>> = vec![None; u.sites.len()];
    // Each tree of sites on its own: a file may have 100,000 of them.
    by_trees(u, &mut out, |run, out| {
        decide_tree(u, opts, modes, run, out)
    });
    out
}

/// `decide_loops` of the sites of `run`, whole trees.
fn decide_tree(
    u: &Unit,
    opts: &Options,
    modes: &[Option<Mode>],
    run: std::ops::Range<usize>,
    out: &mut Tree<Option<LoopInfo>>,
) {
    // The loop directives inside each site: a site's parent comes before it.
    let mut nests = vec![Nest::default(); run.len()];
    let nest = &mut Tree {
        base: run.start,
        items: &mut nests,
    };
    // Why each loop without levels did not claim the vector level (`claims_vector`).
    let mut refused: Vec<Option<String>> = vec![None; run.len()];
    let refused = &mut Tree {
        base: run.start,
        items: &mut refused,
    };
    // Whether each kernels loop without levels is independent, found once for both passes.
    let mut independent = vec![None; run.len()];
    let independent = &mut Tree {
        base: run.start,
        items: &mut independent,
    };
    let kernels_of = |c: usize| u.dir(c).and_then(|c| c.compute_kind()) == Some("kernels");
    let mode_of = |i: usize| {
        let compute = u.compute_of(i);
        (
            compute,
            compute.and_then(|c| modes[c]).unwrap_or(Mode::Teams),
        )
    };
    for k in run.clone().rev() {
        let Some(p) = u.parent[k].filter(|&p| p < k) else {
            continue;
        };
        let inner = nest[k];
        // Only a loop with no loop directive inside claims the vector level (the innermost
        // of a nest), which also keeps the dependence test to one loop per nest: asked of
        // every loop of a nest thousands deep, it took time quadratic in the depth.
        let naked = match mode_of(k) {
            (Some(c), mode) if c != k && opts.profile == Profile::Default && !inner.below_loop => {
                let indep = (u.is_loop(k) && kernels_of(c)).then(|| {
                    *independent[k].get_or_insert_with(|| kernels_independent(u, k, c, mode, opts))
                });
                claims_vector(u, k, mode, indep).unwrap_or_else(|why| {
                    refused[k] = Some(why);
                    false
                })
            }
            _ => false,
        };
        let (min, worker, gang) = match u.dir(k).filter(|d| d.name == "loop") {
            Some(d) => {
                let l = Levels::explicit(d);
                (if is_seq(d) { 3 } else { l.min() }, l.worker, l.gang)
            }
            None => (3, false, false),
        };
        let outer = &mut nest[p];
        outer.below_loop |= u.is_loop(k) || inner.below_loop;
        outer.below = outer.below.min(min).min(inner.below);
        outer.below_worker |= worker || inner.below_worker;
        outer.below_gang |= gang || inner.below_gang;
        outer.below_naked |= naked || inner.below_naked;
    }
    for i in run {
        // The loops around, up to the compute construct (decided: they come first).
        if let Some(p) = u.parent[i].filter(|&p| p < i) {
            let (own, worker, gang) = match &out[p] {
                Some(LoopInfo {
                    decision: Decision::Par(l),
                    ..
                }) => (l.max(), l.worker, l.gang),
                _ => (i32::MIN, false, false),
            };
            let further = if u.dir(p).is_some_and(|d| d.compute_kind().is_some()) {
                Nest::default()
            } else {
                nest[p]
            };
            let here = &mut nest[i];
            here.above = own.max(further.above);
            here.above_worker = worker || further.above_worker;
            here.above_gang = gang || further.above_gang;
        }
        let bare = u.bare_loop(i).is_some();
        if !u.is_loop(i) && !bare {
            continue;
        }
        let Some(d) = u.dir(i) else { continue };
        let (compute, mode) = mode_of(i);
        let mut info = LoopInfo {
            decision: Decision::Seq,
            compute,
            mode,
            kernels_unknown: false,
            host_function: false,
            no_loop_construct: false,
            vector_refused: None,
        };
        let explicit = if bare {
            Levels::default()
        } else {
            Levels::explicit(d)
        };
        // A compute construct (a combined directive) has no loops around in it.
        let around = if Some(i) == compute {
            Nest {
                above: i32::MIN,
                above_worker: false,
                above_gang: false,
                ..nest[i]
            }
        } else {
            nest[i]
        };
        info.decision = if compute.is_none() {
            Decision::Orphan
        } else if mode == Mode::Serial || (!bare && is_seq(d)) {
            Decision::Seq
        } else if explicit.any() {
            let mut l = explicit;
            // In `kernels` the implementation chooses the gangs: a worker or vector loop that
            // is the whole region takes them too, as OpenACC compilers map it, where one team
            // would leave all but one of a GPU's multiprocessors idle. Nothing else runs in
            // the region, and the loop's iterations are independent at the level it asks
            // for (in `kernels` an explicit level is trusted as `independent` is, as
            // before), so spreading them over teams changes nothing else. Not where that
            // would lose what `target` allows: a reduction the test infers for the loop of a
            // `kernels` construct (its own `parallel for` under `target` combines it, see
            // `kernels::prove`), or, in Fortran, a `lastprivate` copy-back on a loop without
            // `simd` (flang-22: "not yet implemented" on `distribute parallel do`).
            if !l.gang
                && mode == Mode::Teams
                && compute.is_some_and(|c| {
                    kernels_of(c)
                        && (c == i
                            || (u.single_loop_site(c) == Some(i)
                                && !kernels::infers_reduction(u, i)))
                })
                && (l.vector || u.lang.name() != "Fortran")
            {
                l.gang = true;
            }
            // OpenMP compilers run `simd` on one thread of a team, so in the default profile
            // a vector loop whose nest has no other loop on threads also takes the threads:
            // its iterations are independent either way (the seeds' `simd` alone is the
            // clacc profile).
            if opts.profile == Profile::Default
                && l.vector
                && !l.worker
                && !(mode == Mode::Target && l.gang)
                && !around.threads(mode)
            {
                l.worker = true;
                l.vector_threads = true;
            }
            Decision::Par(l)
        } else {
            let kernels = compute.is_some_and(kernels_of);
            let proven = |c: usize| {
                *independent[i].get_or_insert_with(|| kernels_independent(u, i, c, mode, opts))
            };
            if kernels && !compute.is_some_and(proven) {
                info.kernels_unknown = true;
                Decision::Seq
            } else {
                let d = implicit_levels(&around, mode, opts);
                if d == Decision::Seq {
                    info.vector_refused = refused[i].take();
                }
                d
            }
        };
        out[i] = Some(info);
    }
}

/// Whether loop site `i` (in a compute construct, under `mode`) takes the vector level of
/// its nest without asking for it, in the default profile: a loop directive without levels,
/// not `seq` or `auto`, outside `serial`, in `kernels` independent (`independent`: that of a
/// kernels loop, `None` elsewhere), and which the dependence test proves independent with
/// no variable to reduce or privatize that its own clauses do not name, or finds dependent
/// only through arrays that may overlap (then no scalar from outside it is written but its
/// control variable and those its clauses name). The loops around it
/// then leave the vector level to it (`implicit_levels`), as OpenACC compilers map such a
/// nest (gang outside, vector inside): `simd` on the innermost loop vectorizes its
/// contiguous direction. The test guards against programs that assert independence wrongly
/// (PolyBench's `tmp[i] = tmp[i] + …` in an inner `loop`): `simd` there gave wrong results
/// under Clang, where `simd` on the outer loop vectorizes across the independent rows.
///
/// `Err`: the loop would take it but for what the test found, which the error says.
fn claims_vector(
    u: &Unit,
    i: usize,
    mode: Mode,
    independent: Option<bool>,
) -> Result<bool, String> {
    let Some(d) = u.dir(i).filter(|d| d.name == "loop") else {
        return Ok(false);
    };
    if !u.is_loop(i) || mode == Mode::Serial || independent == Some(false) {
        return Ok(false);
    }
    if is_seq(d) || Levels::explicit(d).any() {
        return Ok(false);
    }
    let named = |clause: &str, v: &str| {
        d.all(clause)
            .any(|k| k.items().any(|x| u.lang.same_name(x.text.trim(), v)))
    };
    let Some(f) = u.stmts[i].as_ref().and_then(|s| s.for_loop.as_ref()) else {
        return Ok(false);
    };
    let Some(end) = u.syntax.stmt_end(f.for_tok()) else {
        return Ok(false);
    };
    let none = Vec::new();
    let vars = u.site_facts(i).map_or(&none, |x| &x.vars);
    match u
        .syntax
        .dependence(f.for_tok(), end, vars, &[], u.header_macros())
        .outer()
    {
        Verdict::Independent(cl) => {
            if let Some((op, v)) = cl.reduction.iter().find(|(_, v)| !named("reduction", v)) {
                return Err(format!(
                    "it updates '{v}' as a reduction ('reduction({}:{v})' is not among its clauses)",
                    op.omp()
                ));
            }
            if let Some(v) = cl.lastprivate.iter().find(|v| !named("private", v)) {
                return Err(format!(
                    "it assigns '{v}', which is not in its 'private' clause"
                ));
            }
            Ok(true)
        }
        // Arrays that may overlap: what the loop's assertion of independence covers. The
        // test stops there, so the scalars it writes are checked here: each one from outside
        // must be its control variable or in its own clauses.
        Verdict::Dependent(dep) if dep.kind == DepKind::Alias => {
            // Writes as the facts know them: a use spelled by a macro counts as one.
            let unnamed: Vec<String> = vars
                .iter()
                .filter(|v| {
                    !(v.writes().is_empty()
                        || matches!(v.ty.kind, VarKind::Array { .. } | VarKind::Struct)
                        || f.var
                            .as_deref()
                            .is_some_and(|c| u.lang.same_name(c, &v.name))
                        || named("private", &v.name)
                        || named("reduction", &v.name))
                })
                .map(|v| format!("'{}'", v.name))
                .collect();
            match unnamed.as_slice() {
                [] => Ok(true),
                [one] => Err(format!(
                    "{one} may be assigned in it and is not in its 'private' or 'reduction' clause"
                )),
                more => Err(format!(
                    "{} may be assigned in it and are not in its 'private' or 'reduction' clause",
                    more.join(", ")
                )),
            }
        }
        Verdict::Dependent(dep) => Err(format!("{} (line {})", dep.reason, u.line_at(dep.at))),
    }
}

/// Levels for a loop without explicit ones: between what the loops around took and what
/// the loop directives inside claim (explicitly, or the vector level in the default profile
/// when a loop without levels inside takes it: `claims_vector`).
fn implicit_levels(nest: &Nest, mode: Mode, opts: &Options) -> Decision {
    let base = if mode == Mode::Target { 0 } else { -1 };
    let above = nest.above.max(base);
    let below = nest.below;
    let gang = above < 0 && below > 0;
    let l = match opts.profile {
        Profile::Clacc => Levels {
            gang,
            ..Levels::default()
        },
        Profile::Default | Profile::Loop => Levels {
            gang,
            worker: above < 1 && below > 1,
            vector: above < 2 && below > 2 && !nest.below_naked,
            vector_threads: false,
        },
    };
    if l.any() {
        Decision::Par(l)
    } else {
        Decision::Seq
    }
}
