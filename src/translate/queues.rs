//! OpenACC async queues as OpenMP dependences: one dependence object per queue, the
//! elements of a file-scope array `acc2omp_queue[64]` shared by every translation unit
//! (a weak definition). Work on queue `q` becomes a deferred task (`nowait`) with
//! `depend(inout: acc2omp_queue[(q) & 63])`, so work on one queue runs in order and work on
//! different queues may overlap; a wait is a dependence (`depend(in: …)`) or a `taskwait`.
//! Two queues that share a slot (`q` and `q + 64`) are only ordered more than needed.

use crate::directive::{Args, Clause};
use crate::intent::OmpClause;
use crate::lang::Language;
use crate::unit::Unit;

/// The array of dependence objects.
pub const QUEUES: &str = "acc2omp_queue";
/// How many dependence objects there are (a power of two: a queue's slot is `q & (SLOTS-1)`).
pub const SLOTS: i64 = 64;
/// The helper function that waits for one queue (or all) and returns 1.
pub const WAIT_FN: &str = "acc2omp_wait";
/// The queue of `async` without argument (and `acc_async_noval`): the one
/// `acc_set_default_async` chose, kept at run time in this variable (initially
/// `acc_async_noval`, -1, whose slot is 63).
pub const DEFAULT_ASYNC: &str = "acc2omp_default_async";

/// Where `async(…)` work goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Queue {
    /// `acc_async_sync`: the work is synchronous.
    Sync,
    /// The index into `acc2omp_queue` (a literal or `(q) & 63`), its element (the queue's
    /// dependence object), and whether the queue is an expression only known at run time.
    Slot {
        index: String,
        object: String,
        runtime: bool,
    },
}

impl Queue {
    /// `acc2omp_queue[i]`, or None for `acc_async_sync`.
    pub fn object(&self) -> Option<String> {
        match self {
            Queue::Sync => None,
            Queue::Slot { object, .. } => Some(object.clone()),
        }
    }
    /// The slot index as an `int` expression (`-1` is never a slot).
    pub fn index(&self) -> Option<&str> {
        match self {
            Queue::Sync => None,
            Queue::Slot { index, .. } => Some(index),
        }
    }
    pub fn is_runtime(&self) -> bool {
        matches!(self, Queue::Slot { runtime: true, .. })
    }
}

/// The value of an integer literal (`3`, `0x10`, `2u`, `-1`).
fn literal(text: &str) -> Option<i64> {
    let t = text.trim();
    let (neg, t) = match t.strip_prefix('-') {
        Some(r) => (true, r.trim_start()),
        None => (false, t),
    };
    let t = t.trim_end_matches(['u', 'U', 'l', 'L']);
    let v = if let Some(h) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        i64::from_str_radix(h, 16).ok()?
    } else if t.len() > 1 && t.starts_with('0') {
        i64::from_str_radix(&t[1..], 8).ok()?
    } else {
        t.parse::<i64>().ok()?
    };
    Some(if neg { -v } else { v })
}

/// The queue of an `async` argument (None: `async` without argument, the default queue),
/// its slot and object written in language `l`. `acc_async_noval` (-1 in GCC and NVHPC: the
/// default queue) and `acc_async_sync` (-2) are recognized by name and by value; any other
/// non-literal is a run-time queue number.
pub fn queue(l: &dyn Language, arg: Option<&str>) -> Queue {
    let at = |index: String, runtime: bool| Queue::Slot {
        object: l.element(QUEUES, &index),
        index,
        runtime,
    };
    let slot = |v: i64| at((v & (SLOTS - 1)).to_string(), false);
    let default = || at(l.low_bits(DEFAULT_ASYNC, SLOTS - 1), false);
    let Some(arg) = arg.map(str::trim) else {
        return default();
    };
    // (Fortran spells the names in any case.)
    match &*crate::lang::name_key(l, arg) {
        "acc_async_sync" | "acc2omp_async_sync" => Queue::Sync,
        "acc_async_noval" | "acc_async_default" | "acc2omp_async_noval" => default(),
        _ => match literal(arg) {
            Some(-2) => Queue::Sync,
            Some(-1) => default(),
            Some(v) => slot(v),
            None => at(l.low_bits(&l.group(arg), SLOTS - 1), true),
        },
    }
}

/// `depend(iterator(…), in: …)` on every queue: waits for all of them.
pub fn all_queues_in(l: &dyn Language) -> OmpClause {
    OmpClause::new(
        "depend",
        format!(
            "iterator({}), in: {}",
            l.iterator("acc2omp_k", SLOTS),
            l.element(QUEUES, "acc2omp_k")
        ),
    )
}

/// Whether the file has asynchronous work: an `async` clause, an `acc_*_async` call, or
/// their translation (a queue's dependence object).
pub fn has_async(u: &Unit) -> bool {
    u.any_with_clause("async") || u.has_async_calls() || u.src.contains(QUEUES)
}

/// What the `async` and `wait` clauses of one directive ask for.
pub struct AsyncWait {
    /// The language the objects are written in.
    lang: &'static dyn Language,
    /// The `async` clause's queue, if there is one.
    pub async_queue: Option<Queue>,
    /// Dependence objects the work waits for (from `wait(…)`).
    pub waits: Vec<String>,
    /// A `wait` without argument: every queue.
    pub wait_all: bool,
    /// `async` queue expressions known only at run time (for a diagnostic: waiting on such a
    /// queue is harmless when it turns out to be acc_async_sync, running work on it is not).
    pub runtime: Vec<String>,
    /// A `wait(devnum: …)` device number that is ignored.
    pub devnum: bool,
}

impl AsyncWait {
    /// Collect the `async` and `wait` clauses of a directive (`wait_arg`: the argument of the
    /// `wait` directive itself).
    pub fn of<'a>(
        lang: &'static dyn Language,
        clauses: impl Iterator<Item = &'a Clause>,
        wait_arg: Option<&Args>,
    ) -> Self {
        let mut aw = AsyncWait {
            lang,
            async_queue: None,
            waits: Vec::new(),
            wait_all: false,
            runtime: Vec::new(),
            devnum: false,
        };
        let add_waits = |aw: &mut AsyncWait, args: Option<&Args>| match args {
            None => aw.wait_all = true,
            Some(a) => {
                if a.modifier.as_ref().is_some_and(|m| m.text != "queues") {
                    aw.devnum = true;
                }
                for it in &a.items {
                    let q = queue(aw.lang, Some(&it.text));
                    if let Some(o) = q.object()
                        && !aw.waits.iter().any(|w| aw.same_object(w, &o))
                    {
                        aw.waits.push(o);
                    }
                }
            }
        };
        if wait_arg.is_some() {
            add_waits(&mut aw, wait_arg);
        }
        for c in clauses {
            match c.name.as_str() {
                "async" => {
                    let arg = c.arg_text();
                    let q = queue(aw.lang, arg.as_deref());
                    if q.is_runtime() {
                        aw.runtime.push(arg.unwrap_or_default());
                    }
                    aw.async_queue = Some(q);
                }
                "wait" => add_waits(&mut aw, c.args.as_ref()),
                _ => {}
            }
        }
        aw
    }

    /// The dependence object of the `async` queue (None: synchronous).
    pub fn async_object(&self) -> Option<String> {
        self.async_queue.as_ref().and_then(Queue::object)
    }

    /// `depend(in: …)` clauses for the waits, without the async queue's own object (its
    /// `inout` dependence already orders it).
    pub fn wait_depends(&self) -> Vec<OmpClause> {
        let own = self.async_object();
        let mut out = Vec::new();
        if self.wait_all {
            out.push(all_queues_in(self.lang));
            return out;
        }
        let items: Vec<&str> = self
            .waits
            .iter()
            .filter(|w| own.as_ref().is_none_or(|o| !self.same_object(w, o)))
            .map(String::as_str)
            .collect();
        if !items.is_empty() {
            out.push(OmpClause::new(
                "depend",
                format!("in: {}", items.join(", ")),
            ));
        }
        out
    }

    /// `nowait depend(inout: …)` for the async queue, or nothing.
    pub fn async_clauses(&self) -> Vec<OmpClause> {
        match self.async_object() {
            Some(o) => vec![
                OmpClause::bare("nowait"),
                OmpClause::new("depend", format!("inout: {o}")),
            ],
            None => Vec::new(),
        }
    }

    /// `depend(inout: …)` for the async queue without `nowait`, or nothing: the work is
    /// synchronous (OpenACC allows it) and still ordered on its queue (an undeferred target
    /// task waits for its dependences, and the queue's later work depends on it).
    pub fn ordered_clauses(&self) -> Vec<OmpClause> {
        self.async_clauses()
            .into_iter()
            .filter(|c| c.name != "nowait")
            .collect()
    }

    /// Whether two dependence objects are one: their queue expressions may spell a
    /// Fortran name in different cases (`async(Q) wait(q)`).
    fn same_object(&self, a: &str, b: &str) -> bool {
        crate::lang::name_key(self.lang, a) == crate::lang::name_key(self.lang, b)
    }

    pub fn any(&self) -> bool {
        self.async_queue.is_some() || self.wait_all || !self.waits.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn queue(arg: Option<&str>) -> Queue {
        super::queue(&crate::c::lang::C, arg)
    }

    #[test]
    fn queue_slots() {
        assert_eq!(queue(Some("1")).object().unwrap(), "acc2omp_queue[1]");
        assert_eq!(queue(Some("65")).object().unwrap(), "acc2omp_queue[1]");
        assert_eq!(queue(Some("0x10")).object().unwrap(), "acc2omp_queue[16]");
        assert_eq!(
            queue(None).object().unwrap(),
            "acc2omp_queue[acc2omp_default_async & 63]"
        );
        assert_eq!(queue(Some("acc_async_noval")), queue(None));
        assert_eq!(queue(Some("-1")), queue(None));
        assert_eq!(queue(Some("acc_async_sync")), Queue::Sync);
        assert_eq!(queue(Some("-2")), Queue::Sync);
        let q = queue(Some("q + 1"));
        assert!(q.is_runtime());
        assert_eq!(q.object().unwrap(), "acc2omp_queue[(q + 1) & 63]");
    }
}
