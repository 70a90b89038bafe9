//! Directives made up of clauses drawn at random (a fixed seed), for tests that compare a
//! check with the algorithm it replaced.

/// Clauses of every kind the section and conflict checks compare: loop levels, clauses
/// allowed once, `device_type` sections, data and sharing clauses naming the same
/// variables.
const CLAUSES: [&str; 26] = [
    "seq",
    "gang",
    "worker",
    "vector",
    "independent",
    "auto",
    "device_type(nvidia)",
    "device_type(*)",
    "collapse(2)",
    "num_gangs(4)",
    "async(1)",
    "copy(a)",
    "copyin(a[0:n])",
    "pcopy(b)",
    "present(b[1:2])",
    "create(c)",
    "deviceptr(c)",
    "private(a)",
    "firstprivate(b)",
    "reduction(+:a)",
    "private(c, d)",
    "reduction(max:d)",
    "copyout(d, a)",
    "nohost",
    "bind(f)",
    "if(x)",
];

const NAMES: [&str; 6] = [
    "parallel loop",
    "loop",
    "routine",
    "kernels loop",
    "parallel",
    "data",
];

/// `count` directive texts of up to `max` clauses each, each clause allowed there by `t`.
pub fn directives(t: &crate::rules::Tables, count: usize, max: usize) -> Vec<String> {
    let allowed = |name: &str, clause: &str| {
        let canonical = clause.split('(').next().unwrap_or(clause);
        t.clause(canonical).is_some_and(|r| t.allowed(r, name))
    };
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move |n: usize| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % n as u64) as usize
    };
    (0..count)
        .map(|_| {
            let name = NAMES[next(NAMES.len())];
            let pool: Vec<&str> = CLAUSES.into_iter().filter(|c| allowed(name, c)).collect();
            let mut s = name.to_string();
            // Upper case (Fortran's, an unknown clause in C) for a directive in four.
            let upper = next(4) == 0;
            for _ in 0..next(max + 1).min(max * pool.len()) {
                s.push(' ');
                let c = pool[next(pool.len())];
                if upper {
                    s.push_str(&c.to_ascii_uppercase());
                } else {
                    s.push_str(c);
                }
            }
            s
        })
        .collect()
}
