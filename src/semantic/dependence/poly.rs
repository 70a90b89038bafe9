//! Integer polynomials over named atoms: subscripts in a form that can be compared exactly
//! and tested for whether two different iterations of a loop can reach the same element.

use crate::hash::HashMap;
use std::collections::BTreeMap;

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
