//! [`Thin`]: a list that is empty in most of the values that hold it, one pointer inline.

use std::ops::{Deref, DerefMut};

/// A list held behind one pointer, none allocated while it is empty: for the lists of a
/// value kept once per site (a plan's directives added before it, its inserts and its
/// diagnostics), empty at most sites, where an empty `Vec` holds 24 bytes. A list with items
/// holds a `Vec` on the heap. Reads as a slice; written as a `Vec` is.
#[derive(Clone, PartialEq, Eq, Hash)]
// One pointer inline is the point: the `Vec` is allocated only once there are items.
#[allow(clippy::box_collection)]
pub struct Thin<T>(Option<Box<Vec<T>>>);

impl<T> Thin<T> {
    pub const fn new() -> Self {
        Thin(None)
    }

    /// The `Vec` to write to, allocated when there is none.
    fn vec(&mut self) -> &mut Vec<T> {
        self.0.get_or_insert_with(Box::default)
    }

    pub fn push(&mut self, x: T) {
        self.vec().push(x);
    }

    pub fn insert(&mut self, at: usize, x: T) {
        self.vec().insert(at, x);
    }

    pub fn remove(&mut self, at: usize) -> T {
        self.vec().remove(at)
    }

    pub fn pop(&mut self) -> Option<T> {
        self.0.as_mut()?.pop()
    }

    /// Empties the list and frees its items' room.
    pub fn clear(&mut self) {
        self.0 = None;
    }

    pub fn retain(&mut self, keep: impl FnMut(&T) -> bool) {
        if let Some(v) = &mut self.0 {
            v.retain(keep);
        }
    }

    /// Moves the items of `other` to the end.
    pub fn append(&mut self, other: &mut Vec<T>) {
        if !other.is_empty() {
            self.vec().append(other);
        }
    }

    /// The items, leaving the list empty.
    pub fn take(&mut self) -> Vec<T> {
        self.0.take().map_or_else(Vec::new, |v| *v)
    }

    /// No room beyond the items, and none allocated without items.
    pub fn shrink_to_fit(&mut self) {
        match &mut self.0 {
            Some(v) if v.is_empty() => self.0 = None,
            Some(v) => v.shrink_to_fit(),
            None => {}
        }
    }

    pub fn as_slice(&self) -> &[T] {
        self.0.as_deref().map_or(&[], Vec::as_slice)
    }

    pub fn as_mut_slice(&mut self) -> &mut [T] {
        self.0.as_deref_mut().map_or(&mut [], Vec::as_mut_slice)
    }

    /// The room for items allocated (0 without a list).
    pub fn capacity(&self) -> usize {
        self.0.as_ref().map_or(0, |v| v.capacity())
    }
}

impl<T> Default for Thin<T> {
    fn default() -> Self {
        Thin::new()
    }
}

impl<T: std::fmt::Debug> std::fmt::Debug for Thin<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl<T> Deref for Thin<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        self.as_slice()
    }
}

impl<T> DerefMut for Thin<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        self.as_mut_slice()
    }
}

impl<T> From<Vec<T>> for Thin<T> {
    fn from(v: Vec<T>) -> Self {
        Thin((!v.is_empty()).then(|| Box::new(v)))
    }
}

impl<T> FromIterator<T> for Thin<T> {
    fn from_iter<I: IntoIterator<Item = T>>(items: I) -> Self {
        Vec::from_iter(items).into()
    }
}

impl<T> Extend<T> for Thin<T> {
    fn extend<I: IntoIterator<Item = T>>(&mut self, items: I) {
        let mut items = items.into_iter().peekable();
        if items.peek().is_some() {
            self.vec().extend(items);
        }
    }
}

impl<T> IntoIterator for Thin<T> {
    type Item = T;
    type IntoIter = std::vec::IntoIter<T>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.map_or_else(Vec::new, |v| *v).into_iter()
    }
}

impl<'a, T> IntoIterator for &'a Thin<T> {
    type Item = &'a T;
    type IntoIter = std::slice::Iter<'a, T>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl<'a, T> IntoIterator for &'a mut Thin<T> {
    type Item = &'a mut T;
    type IntoIter = std::slice::IterMut<'a, T>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter_mut()
    }
}

impl<T: PartialEq> PartialEq<Vec<T>> for Thin<T> {
    fn eq(&self, other: &Vec<T>) -> bool {
        self.as_slice() == other.as_slice()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One pointer inline; no allocation while empty, or once emptied.
    #[test]
    fn empty_allocates_nothing() {
        assert_eq!(size_of::<Thin<String>>(), 8);
        let mut t: Thin<u32> = Thin::new();
        assert!(t.0.is_none() && t.is_empty());
        t.extend(std::iter::empty());
        t.append(&mut Vec::new());
        t.retain(|_| true);
        assert!(t.0.is_none());
        assert!(Thin::<u32>::from(Vec::new()).0.is_none());
        t.push(1);
        t.retain(|_| false);
        t.shrink_to_fit();
        assert!(t.0.is_none());
        t.push(2);
        t.clear();
        assert!(t.0.is_none());
    }

    /// Written and read as the `Vec` it replaces.
    #[test]
    fn as_a_vec() {
        let mut t: Thin<u32> = Thin::new();
        let mut v: Vec<u32> = Vec::new();
        for x in [5, 1, 4] {
            t.push(x);
            v.push(x);
        }
        t.insert(1, 9);
        v.insert(1, 9);
        t.extend([7, 8]);
        v.extend([7, 8]);
        t.append(&mut vec![3]);
        v.append(&mut vec![3]);
        t.retain(|&x| x != 4);
        v.retain(|&x| x != 4);
        assert_eq!(t.remove(0), v.remove(0));
        assert_eq!(t.pop(), v.pop());
        for x in &mut t {
            *x += 1;
        }
        v.iter_mut().for_each(|x| *x += 1);
        assert_eq!(t, v);
        assert_eq!(format!("{t:?}"), format!("{v:?}"));
        t.shrink_to_fit();
        assert_eq!(t.capacity(), v.len());
        assert_eq!(t.clone().into_iter().collect::<Vec<_>>(), v);
        assert_eq!(t.take(), v);
        assert!(t.is_empty() && t.0.is_none());
    }
}
