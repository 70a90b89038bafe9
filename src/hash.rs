//! Hash maps and sets for the per-file passes. Their keys are token offsets and names read
//! from one file (bounded by its size), so a fast fixed-seed hasher replaces SipHash; the
//! fixed seed also makes iteration order the same on every run.

pub type HashMap<K, V> = std::collections::HashMap<K, V, foldhash::fast::FixedState>;
pub type HashSet<K> = std::collections::HashSet<K, foldhash::fast::FixedState>;
