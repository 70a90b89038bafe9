//! Integer polynomials over named atoms: subscripts in a form that can be compared exactly
//! and tested for whether two different iterations of a loop can reach the same element.

use crate::hash::HashMap;
use std::collections::{BTreeMap, BTreeSet};

/// A loop variable (of the analyzed loop or of a loop inside it), or a value that does not
/// change while the analyzed loop runs.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Atom {
    Loop(String),
    Inv(String),
}

/// Monomials (sorted atoms) with non-zero coefficients.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Poly(BTreeMap<Vec<Atom>, i64>);

/// `[lo, hi)` of each instance of an inner loop variable, None when unknown.
pub type Ranges = HashMap<String, Vec<Option<(Poly, Poly)>>>;

impl Poly {
    pub fn constant(c: i64) -> Poly {
        let mut m = BTreeMap::new();
        if c != 0 {
            m.insert(Vec::new(), c);
        }
        Poly(m)
    }

    pub fn atom(a: Atom) -> Poly {
        let mut m = BTreeMap::new();
        m.insert(vec![a], 1);
        Poly(m)
    }

    pub fn add(&self, o: &Poly) -> Option<Poly> {
        let mut m = self.0.clone();
        for (k, v) in &o.0 {
            let e = m.entry(k.clone()).or_insert(0);
            *e = e.checked_add(*v)?;
            if *e == 0 {
                m.remove(k);
            }
        }
        Some(Poly(m))
    }

    pub fn scale(&self, c: i64) -> Option<Poly> {
        if c == 0 {
            return Some(Poly::default());
        }
        let mut m = BTreeMap::new();
        for (k, v) in &self.0 {
            m.insert(k.clone(), v.checked_mul(c)?);
        }
        Some(Poly(m))
    }

    pub fn sub(&self, o: &Poly) -> Option<Poly> {
        self.add(&o.scale(-1)?)
    }

    pub fn mul(&self, o: &Poly) -> Option<Poly> {
        let mut out = Poly::default();
        for (a, x) in &self.0 {
            for (b, y) in &o.0 {
                let mut mono: Vec<Atom> = a.iter().chain(b).cloned().collect();
                mono.sort();
                let mut m = BTreeMap::new();
                m.insert(mono, x.checked_mul(*y)?);
                out = out.add(&Poly(m))?;
            }
        }
        Some(out)
    }

    pub fn as_const(&self) -> Option<i64> {
        match self.0.len() {
            0 => Some(0),
            1 => self.0.get(&Vec::new()).copied(),
            _ => None,
        }
    }

    /// The atoms the polynomial mentions.
    pub fn atoms(&self) -> BTreeSet<&Atom> {
        self.0.keys().flatten().collect()
    }

    pub fn has_loop_atom(&self) -> bool {
        self.0
            .keys()
            .any(|m| m.iter().any(|a| matches!(a, Atom::Loop(_))))
    }

    /// Coefficient of each loop variable, when every monomial holds at most one loop
    /// variable, to the first power.
    pub fn linear(&self) -> Option<BTreeMap<String, Poly>> {
        let mut out: BTreeMap<String, Poly> = BTreeMap::new();
        for (mono, c) in &self.0 {
            let loops: Vec<&Atom> = mono.iter().filter(|a| matches!(a, Atom::Loop(_))).collect();
            match loops.as_slice() {
                [] => {}
                [Atom::Loop(v)] => {
                    let rest: Vec<Atom> = mono
                        .iter()
                        .filter(|a| !matches!(a, Atom::Loop(_)))
                        .cloned()
                        .collect();
                    let mut m = BTreeMap::new();
                    m.insert(rest, *c);
                    let e = out.entry(v.clone()).or_default();
                    *e = e.add(&Poly(m))?;
                }
                _ => return None,
            }
        }
        out.retain(|_, p| *p != Poly::default());
        Some(out)
    }
}

/// Whether the subscripts `x` and `y` of one dimension never reach the same element while
/// loop variable `v` runs over `[lo, hi)`, at any two iterations (a row and the rows before
/// it in a flattened array: `c[i*m + j]` and `c[(i - 1)*m + j]` for `0 <= j < m`).
///
/// Both must be `a·v + P` with the same integer `a != 0` (or opposite ones, below) and no
/// other loop variable, so that
/// an element shared by iterations `v1` and `v2` needs `a·(v1 - v2) = D` with
/// `D = P_y - P_x`. That is impossible when `a` does not divide a constant `D` (`c[2*j]`
/// and `c[2*j + 1]`), or when `|D| >= |a|·(T - 1) + 1` for the trip bound `T = hi - lo`
/// (`|v1 - v2| <= T - 1`). A constant `T` is compared directly; otherwise `D` must be
/// `q·T + r` with integers `q` and `r`, and since a loop that runs at all has `T >= 1` (an
/// empty one, `m <= 0`, has no dependence), the bound holds for every such `T` exactly when
/// `|q| >= |a|` and `|q| + sign(q)·r >= 1`. The atoms of `lo` and `hi` must all occur in
/// `D` (which callers take from integer subscripts), so the bounds are integers and no
/// value outside the subscripts can shift the range.
///
/// Subscripts that run opposite ways, `a·v + P` and `-a·v + Q` (CloverLeaf's halo copies
/// `d(j, 1 - k) = d(j, k)` for `1 <= k <= depth`), share an element at iterations `v1`,
/// `v2` only where `a·(v1 + v2) = Q - P`: never when `Q - P` is a constant that `a` does
/// not divide, or whose quotient is below `2·lo` or above `2·(hi - 1)` for a constant bound.
pub fn disjoint(x: &Poly, y: &Poly, v: &str, lo: &Poly, hi: &Poly) -> bool {
    let only_v = |p: &Poly| -> Option<i64> {
        let lin = p.linear()?;
        match lin.len() {
            1 => lin.get(v)?.as_const(),
            _ => None,
        }
    };
    let (Some(a), Some(b)) = (only_v(x), only_v(y)) else {
        return false;
    };
    if a == 0 || lo.has_loop_atom() || hi.has_loop_atom() {
        return false;
    }
    if a == b.checked_neg().unwrap_or(0) {
        return opposite(x, y, v, a, lo, hi);
    }
    if a != b {
        return false;
    }
    // The `a·v` terms cancel: D = y - x.
    let (Some(d), Some(t)) = (y.sub(x), hi.sub(lo)) else {
        return false;
    };
    let a = i128::from(a).abs();
    if d.as_const().is_some_and(|dc| i128::from(dc) % a != 0) {
        return true;
    }
    let atoms = d.atoms();
    if !lo.atoms().is_subset(&atoms) || !hi.atoms().is_subset(&atoms) {
        return false;
    }
    if let Some(dc) = d.as_const() {
        let dc = i128::from(dc);
        return t
            .as_const()
            .is_some_and(|tc| dc.abs() > a * (i128::from(tc) - 1));
    }
    // D = q·T + r: q from one non-constant monomial of T, r what remains.
    let Some((mono, tc)) = t.0.iter().find(|(m, _)| !m.is_empty()) else {
        return false;
    };
    let dc = d.0.get(mono).copied().unwrap_or(0);
    if dc % tc != 0 {
        return false;
    }
    let q = dc / tc;
    let Some(r) = t
        .scale(q)
        .and_then(|qt| d.sub(&qt))
        .and_then(|r| r.as_const())
    else {
        return false;
    };
    let (q, r) = (i128::from(q), i128::from(r));
    let (q, r) = if q < 0 { (-q, -r) } else { (q, r) };
    q >= a && q + r >= 1
}

/// [`disjoint`] for `x = a·v + P` and `y = -a·v + Q`: no `v1`, `v2` in `[lo, hi)` with
/// `a·(v1 + v2) = Q - P`.
fn opposite(x: &Poly, y: &Poly, v: &str, a: i64, lo: &Poly, hi: &Poly) -> bool {
    let va = Poly::atom(Atom::Loop(v.into())).scale(a);
    // P = x - a·v, Q = y + a·v.
    let (Some(p), Some(q)) = (
        va.as_ref().and_then(|va| x.sub(va)),
        va.as_ref().and_then(|va| y.add(va)),
    ) else {
        return false;
    };
    let Some(d) = q.sub(&p).and_then(|d| d.as_const()) else {
        return false;
    };
    let (a, d) = (i128::from(a), i128::from(d));
    if d % a != 0 {
        return true;
    }
    let sum = d / a;
    let below = lo.as_const().is_some_and(|l| sum < 2 * i128::from(l));
    let above = hi.as_const().is_some_and(|h| sum > 2 * (i128::from(h) - 1));
    below || above
}

/// `d == c * s` for an integer `c >= 0`.
fn nonneg_multiple(d: &Poly, s: &Poly) -> bool {
    if *d == Poly::default() {
        return true;
    }
    let Some((mono, sc)) = s.0.iter().next() else {
        return false;
    };
    let dc = d.0.get(mono).copied().unwrap_or(0);
    if *sc == 0 || dc % sc != 0 || dc / sc < 0 {
        return false;
    }
    s.scale(dc / sc).is_some_and(|m| m == *d)
}

/// Whether the subscripts `dims` (one polynomial per dimension, the same for both
/// iterations compared) can only be equal for two iterations with the same value of loop
/// variable `v`, whatever the values of the inner loop variables within `ranges`.
pub fn injective(dims: &[Poly], v: &str, ranges: &Ranges) -> bool {
    let lin: Vec<BTreeMap<String, Poly>> = dims.iter().filter_map(Poly::linear).collect();
    // One dimension alone separates the iterations.
    if lin.iter().any(|d| one_dim(d, v, ranges)) {
        return true;
    }
    // All dimensions together, where every loop-variable coefficient is an integer.
    let rows: Vec<&BTreeMap<String, Poly>> = lin
        .iter()
        .filter(|d| d.values().all(|c| c.as_const().is_some()))
        .collect();
    let mut vars: Vec<&String> = rows
        .iter()
        .flat_map(|d| d.keys())
        .filter(|k| *k != v)
        .collect();
    vars.sort();
    vars.dedup();
    let matrix = |with_v: bool| -> Vec<Vec<i128>> {
        rows.iter()
            .map(|d| {
                let mut r: Vec<i128> = vars
                    .iter()
                    .map(|k| d.get(*k).and_then(Poly::as_const).unwrap_or(0) as i128)
                    .collect();
                if with_v {
                    r.push(d.get(v).and_then(Poly::as_const).unwrap_or(0) as i128);
                }
                r
            })
            .collect()
    };
    rank(matrix(true)) > rank(matrix(false))
}

/// `c·v + Σ c_k·k + rest = c·v' + Σ c_k·k' + rest` forces `v = v'` in this one dimension:
/// `v` alone with an integer coefficient, or a mixed-radix chain (`(v·n + j)·m + k` with
/// `0 <= j < n`, `0 <= k < m`).
fn one_dim(d: &BTreeMap<String, Poly>, v: &str, ranges: &Ranges) -> bool {
    let Some(cv) = d.get(v) else { return false };
    let mut rest: Vec<(&String, &Poly)> = d.iter().filter(|(k, _)| *k != v).collect();
    if rest.is_empty() {
        return cv.as_const().is_some_and(|c| c != 0);
    }
    // The innermost digit has a positive integer coefficient.
    let Some(first) = rest
        .iter()
        .position(|(_, c)| c.as_const().is_some_and(|c| c > 0))
    else {
        return false;
    };
    let (mut k, mut ck) = rest.remove(first);
    loop {
        // Every instance of `k` lies in [lo, hi) with 0 <= lo.
        let Some(insts) = ranges.get(k) else {
            return false;
        };
        let mut his = Vec::new();
        for r in insts {
            let Some((lo, hi)) = r else { return false };
            if lo.as_const().is_none_or(|l| l < 0) || hi.has_loop_atom() {
                return false;
            }
            his.push(hi);
        }
        if his.is_empty() {
            return false;
        }
        // The next digit's coefficient is ck·(hi + c) with c >= 0 for every instance.
        let next_ok = |cn: &Poly| {
            his.iter().all(|hi| {
                ck.mul(hi)
                    .and_then(|m| cn.sub(&m))
                    .is_some_and(|diff| nonneg_multiple(&diff, ck))
            })
        };
        if rest.is_empty() {
            return next_ok(cv);
        }
        let Some(n) = rest.iter().position(|(_, c)| next_ok(c)) else {
            return false;
        };
        (k, ck) = rest.remove(n);
    }
}

/// Rank of an integer matrix (fraction-free elimination).
fn rank(mut m: Vec<Vec<i128>>) -> usize {
    let cols = m.first().map_or(0, Vec::len);
    let mut r = 0;
    for c in 0..cols {
        let Some(p) = (r..m.len()).find(|&i| m[i][c] != 0) else {
            continue;
        };
        m.swap(r, p);
        for i in 0..m.len() {
            if i != r && m[i][c] != 0 {
                let (a, b) = (m[r][c], m[i][c]);
                let g = gcd(a, b);
                let pivot = m[r].clone();
                for (x, p) in m[i].iter_mut().zip(&pivot) {
                    *x = *x * (a / g) - p * (b / g);
                }
                // Keep the entries small.
                let row_g = m[i].iter().fold(0, |acc, &x| gcd(acc, x));
                if row_g > 1 {
                    for x in m[i].iter_mut() {
                        *x /= row_g;
                    }
                }
            }
        }
        r += 1;
    }
    r
}

fn gcd(a: i128, b: i128) -> i128 {
    let (mut a, mut b) = (a.abs(), b.abs());
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a.max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn l(n: &str) -> Poly {
        Poly::atom(Atom::Loop(n.into()))
    }
    fn inv(n: &str) -> Poly {
        Poly::atom(Atom::Inv(n.into()))
    }
    fn c(k: i64) -> Poly {
        Poly::constant(k)
    }

    #[test]
    fn arithmetic() {
        let p = l("i").mul(&inv("n")).unwrap().add(&l("j")).unwrap();
        let q = l("j").add(&inv("n").mul(&l("i")).unwrap()).unwrap();
        assert_eq!(p, q);
        assert_eq!(p.sub(&q).unwrap(), Poly::default());
        assert_eq!(c(3).add(&c(-3)).unwrap().as_const(), Some(0));
        assert!(l("i").mul(&l("i")).unwrap().linear().is_none());
    }

    #[test]
    fn disjoint_opposite_subscripts() {
        let (k, m) = (l("k"), inv("m"));
        let neg = |p: &Poly| p.scale(-1).unwrap();
        let plus = |p: &Poly, q: &Poly| p.add(q).unwrap();
        let d = |x: &Poly, y: &Poly, lo: &Poly, hi: &Poly| {
            disjoint(x, y, "k", lo, hi) && disjoint(y, x, "k", lo, hi)
        };
        // 1 <= k < m: 1 - k <= 0 < k.
        assert!(d(&plus(&neg(&k), &c(1)), &k, &c(1), &m));
        // 0 <= k: k = 0 writes 1, k = 1 reads it.
        assert!(!d(&plus(&neg(&k), &c(1)), &k, &c(0), &m));
        // m + k and m + 1 - k: the invariant cancels.
        assert!(d(
            &plus(&m, &k),
            &plus(&plus(&m, &c(1)), &neg(&k)),
            &c(1),
            &m
        ));
        // 1 <= k < 5: 10 - k >= 6 > 4 >= k (the upper bound).
        assert!(d(&plus(&neg(&k), &c(10)), &k, &inv("lo"), &c(5)));
        assert!(!d(&plus(&neg(&k), &c(8)), &k, &inv("lo"), &c(5)));
        // 2k and 3 - 2k: 2(k1 + k2) = 3 has no integer solution.
        let two_k = k.scale(2).unwrap();
        assert!(d(&two_k, &plus(&neg(&two_k), &c(3)), &inv("lo"), &m));
        // A symbolic distance: m + 1 - k meets k.
        assert!(!d(&plus(&plus(&m, &c(1)), &neg(&k)), &k, &c(1), &m));
    }

    #[test]
    fn disjoint_rows() {
        let (i, j, m) = (inv("i"), l("j"), inv("m"));
        // i*m + j + c
        let row = |k: i64, c0: i64| {
            i.add(&c(k))
                .unwrap()
                .mul(&m)
                .unwrap()
                .add(&j)
                .unwrap()
                .add(&c(c0))
                .unwrap()
        };
        let m_plus = |k: i64| m.add(&c(k)).unwrap();
        let d = |x: &Poly, y: &Poly, lo: &Poly, hi: &Poly| {
            disjoint(x, y, "j", lo, hi) && disjoint(y, x, "j", lo, hi)
        };
        // 0 <= j < m: the previous row, the one two back, the next one.
        assert!(d(&row(0, 0), &row(-1, 0), &c(0), &m));
        assert!(d(&row(0, 0), &row(-2, 0), &c(0), &m));
        assert!(d(&row(0, 0), &row(1, 0), &c(0), &m));
        // j < m - 1 leaves room for the read one to the right; j < m does not.
        assert!(d(&row(0, 0), &row(-1, 1), &c(0), &m_plus(-1)));
        assert!(!d(&row(0, 0), &row(-1, 1), &c(0), &m));
        // 1 <= j < m - 1: both neighbours, even two to the right; three reach the row.
        assert!(d(&row(0, 0), &row(-1, -1), &c(1), &m_plus(-1)));
        assert!(d(&row(0, 0), &row(-1, 1), &c(1), &m_plus(-1)));
        assert!(d(&row(0, 0), &row(-1, 2), &c(1), &m_plus(-1)));
        assert!(!d(&row(0, 0), &row(-1, 3), &c(1), &m_plus(-1)));
        // Too long: j <= m, j < 2*m, j < m + 1; j < n (another width).
        assert!(!d(&row(0, 0), &row(-1, 0), &c(0), &m_plus(1)));
        assert!(!d(&row(0, 0), &row(-1, 0), &c(0), &m.scale(2).unwrap()));
        assert!(!d(&row(0, 0), &row(-1, 0), &c(0), &inv("n")));
        // The same row shifted, the same subscript.
        assert!(!d(&row(0, 0), &row(0, 1), &c(0), &m));
        assert!(!d(&row(0, 0), &row(0, 0), &c(0), &m));
        // A bound with an atom the subscripts do not have: j in [s, s + m).
        let s = inv("s");
        assert!(!d(&row(0, 0), &row(-1, 0), &s, &s.add(&m).unwrap()));
        // Constant widths: 64 apart over 64 or 63 iterations, 63 apart over 64.
        assert!(d(&l("j"), &l("j").add(&c(64)).unwrap(), &c(0), &c(64)));
        assert!(d(&l("j"), &l("j").add(&c(-64)).unwrap(), &c(1), &c(64)));
        assert!(!d(&l("j"), &l("j").add(&c(63)).unwrap(), &c(0), &c(64)));
        // Stride 2: odd against even elements; pairs one apart overlap.
        let two_j = l("j").scale(2).unwrap();
        assert!(d(&two_j, &two_j.add(&c(1)).unwrap(), &c(0), &m));
        assert!(!d(&two_j, &two_j.add(&c(2)).unwrap(), &c(0), &c(2)));
        assert!(d(&two_j, &two_j.add(&c(4)).unwrap(), &c(0), &c(2)));
        // Different strides, another loop variable, a non-constant stride.
        assert!(!d(&l("j"), &two_j.add(&m).unwrap(), &c(0), &m));
        assert!(!d(&row(0, 0), &row(-1, 0).add(&l("k")).unwrap(), &c(0), &m));
        assert!(!d(
            &m.mul(&j).unwrap(),
            &m.mul(&j).unwrap().add(&m).unwrap(),
            &c(0),
            &m
        ));
    }

    /// Whatever `disjoint` accepts has no shared element when enumerated: subscripts
    /// `a·j + k·m + c` against `a·j + c0` over `j` in `[lo, m + s)` or `[lo, s)`.
    #[test]
    fn disjoint_is_sound() {
        let m = inv("m");
        let mut accepted = 0;
        for a in [-2i64, -1, 1, 2] {
            for k in -2i64..=2 {
                for cst in -4i64..=4 {
                    for lo in 0i64..=2 {
                        for s in -3i64..=3 {
                            for width in [true, false] {
                                let aj = l("j").scale(a).unwrap();
                                let x = aj.clone();
                                let y = aj.add(&m.scale(k).unwrap()).unwrap().add(&c(cst)).unwrap();
                                let hi = if width {
                                    m.add(&c(s)).unwrap()
                                } else {
                                    c(s + 4)
                                };
                                if !disjoint(&x, &y, "j", &c(lo), &hi) {
                                    continue;
                                }
                                accepted += 1;
                                for mv in -2i64..=9 {
                                    let h = if width { mv + s } else { s + 4 };
                                    for j1 in lo..h {
                                        for j2 in lo..h {
                                            assert_ne!(
                                                a * j1,
                                                a * j2 + k * mv + cst,
                                                "a={a} k={k} c={cst} lo={lo} hi={hi:?} m={mv} j1={j1} j2={j2}"
                                            );
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
        assert!(accepted > 100, "only {accepted} cases accepted");
    }

    #[test]
    fn injectivity() {
        let none = Ranges::default();
        // a[i], a[2*i + 1], a[i][j], a[j][i]
        assert!(injective(&[l("i")], "i", &none));
        assert!(injective(
            &[c(2).mul(&l("i")).unwrap().add(&c(1)).unwrap()],
            "i",
            &none
        ));
        assert!(injective(&[l("i"), l("j")], "i", &none));
        assert!(injective(&[l("j"), l("i")], "i", &none));
        // a[0], a[j], a[i + j], a[i*n] (n may be 0)
        assert!(!injective(&[c(0)], "i", &none));
        assert!(!injective(&[l("j")], "i", &none));
        assert!(!injective(&[l("i").add(&l("j")).unwrap()], "i", &none));
        assert!(!injective(&[l("i").mul(&inv("n")).unwrap()], "i", &none));
        // a[i + j][j]: together the dimensions separate i.
        assert!(injective(
            &[l("i").add(&l("j")).unwrap(), l("j")],
            "i",
            &none
        ));
        // a[i*n + j] needs 0 <= j < n.
        let flat = l("i").mul(&inv("n")).unwrap().add(&l("j")).unwrap();
        assert!(!injective(std::slice::from_ref(&flat), "i", &none));
        let mut r = Ranges::default();
        r.insert("j".into(), vec![Some((c(0), inv("n")))]);
        assert!(injective(std::slice::from_ref(&flat), "i", &r));
        r.insert("j".into(), vec![Some((c(1), inv("n").sub(&c(1)).unwrap()))]);
        assert!(injective(std::slice::from_ref(&flat), "i", &r));
        r.insert("j".into(), vec![Some((c(0), inv("n").add(&c(1)).unwrap()))]);
        assert!(
            !injective(std::slice::from_ref(&flat), "i", &r),
            "j may reach n"
        );
        r.insert("j".into(), vec![Some((c(-1), inv("n")))]);
        assert!(
            !injective(std::slice::from_ref(&flat), "i", &r),
            "j may be negative"
        );
        r.insert("j".into(), vec![Some((c(0), inv("n"))), None]);
        assert!(
            !injective(&[flat], "i", &r),
            "an instance of j with unknown range"
        );
        // ((i*n + j)*m + k) with 0 <= j < n, 0 <= k < m
        let three = l("i")
            .mul(&inv("n"))
            .unwrap()
            .add(&l("j"))
            .unwrap()
            .mul(&inv("m"))
            .unwrap()
            .add(&l("k"))
            .unwrap();
        let mut r = Ranges::default();
        r.insert("j".into(), vec![Some((c(0), inv("n")))]);
        r.insert("k".into(), vec![Some((c(0), inv("m")))]);
        assert!(injective(&[three], "i", &r));
        // (i*n + j)*3 + 2 with 0 <= j < n
        let scaled = l("i")
            .mul(&inv("n"))
            .unwrap()
            .add(&l("j"))
            .unwrap()
            .scale(3)
            .unwrap()
            .add(&c(2))
            .unwrap();
        let mut r = Ranges::default();
        r.insert("j".into(), vec![Some((c(0), inv("n")))]);
        assert!(injective(&[scaled], "i", &r));
    }
}
