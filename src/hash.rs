//! Hash maps and sets for the per-file passes. Their keys are token offsets and names read
//! from one file (bounded by its size), so a fast fixed-seed hasher replaces SipHash; the
//! fixed seed also makes iteration order the same on every run.

pub type HashMap<K, V> = std::collections::HashMap<K, V, foldhash::fast::FixedState>;
pub type HashSet<K> = std::collections::HashSet<K, foldhash::fast::FixedState>;

/// How many elements a [`SmallSet`] keeps as a list.
pub const SMALL: usize = 16;

/// A set kept as the list it was made from while it holds at most [`SMALL`] elements, and
/// as a table past that: most sets of a construct's names hold a handful, where building a
/// table costs more than scanning the list; a directive may name thousands.
#[derive(Debug, Clone)]
pub enum SmallSet<T> {
    Few(Vec<T>),
    Many(HashSet<T>),
}

impl<T> Default for SmallSet<T> {
    fn default() -> Self {
        SmallSet::Few(Vec::new())
    }
}

impl<T: std::hash::Hash + Eq> SmallSet<T> {
    pub fn contains<Q>(&self, q: &Q) -> bool
    where
        T: std::borrow::Borrow<Q>,
        Q: std::hash::Hash + Eq + ?Sized,
    {
        match self {
            SmallSet::Few(l) => l.iter().any(|x| x.borrow() == q),
            SmallSet::Many(s) => s.contains(q),
        }
    }

    /// The elements (a list may repeat one; the order is unspecified).
    #[cfg(test)]
    pub fn iter(&self) -> impl Iterator<Item = &T> {
        let (few, many) = match self {
            SmallSet::Few(l) => (Some(l.iter()), None),
            SmallSet::Many(s) => (None, Some(s.iter())),
        };
        few.into_iter().flatten().chain(many.into_iter().flatten())
    }
}

impl<T: std::hash::Hash + Eq> From<Vec<T>> for SmallSet<T> {
    fn from(l: Vec<T>) -> Self {
        if l.len() > SMALL {
            SmallSet::Many(l.into_iter().collect())
        } else {
            SmallSet::Few(l)
        }
    }
}

impl<T: std::hash::Hash + Eq> Extend<T> for SmallSet<T> {
    fn extend<I: IntoIterator<Item = T>>(&mut self, items: I) {
        match self {
            SmallSet::Few(l) => {
                l.extend(items);
                if l.len() > SMALL {
                    *self = SmallSet::Many(std::mem::take(l).into_iter().collect());
                }
            }
            SmallSet::Many(s) => s.extend(items),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_small_set_answers_as_a_set_on_both_sides_of_the_switch() {
        for n in [0, 1, SMALL, SMALL + 1, 200] {
            let names: Vec<String> = (0..n).map(|k| format!("v{}", k % (n / 2 + 1))).collect();
            let from: SmallSet<&str> = names.iter().map(String::as_str).collect::<Vec<_>>().into();
            let mut grown = SmallSet::default();
            for chunk in names.chunks(5) {
                grown.extend(chunk.iter().map(String::as_str));
            }
            let set: HashSet<&str> = names.iter().map(String::as_str).collect();
            for s in [&from, &grown] {
                assert_eq!(matches!(s, SmallSet::Many(_)), n > SMALL);
                for k in 0..n + 3 {
                    let q = format!("v{k}");
                    assert_eq!(s.contains(q.as_str()), set.contains(q.as_str()), "{n} {q}");
                }
                let seen: HashSet<&str> = s.iter().copied().collect();
                assert_eq!(seen, set);
            }
        }
    }
}
