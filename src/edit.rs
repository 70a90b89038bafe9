//! The one edit engine: an edit replaces a byte range; a file's edits never overlap and
//! are applied in one pass, so bytes outside them are never touched.

use std::ops::Range;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edit {
    pub range: Range<usize>,
    pub text: String,
}

impl Edit {
    pub fn replace(range: Range<usize>, text: impl Into<String>) -> Self {
        Edit {
            range,
            text: text.into(),
        }
    }
    pub fn insert(at: usize, text: impl Into<String>) -> Self {
        Edit {
            range: at..at,
            text: text.into(),
        }
    }
    pub fn delete(range: Range<usize>) -> Self {
        Edit {
            range,
            text: String::new(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Overlap {
    pub first: Range<usize>,
    pub second: Range<usize>,
}

/// Apply `edits` to `text`. Insertions at the same offset keep their given order.
pub fn apply(text: &str, edits: &[Edit]) -> Result<String, Overlap> {
    apply_all(text, edits)
}

/// [`apply`] to edits held in several places (each fix's), taken in the order given.
pub fn apply_all<'a>(
    text: &str,
    edits: impl IntoIterator<Item = &'a Edit>,
) -> Result<String, Overlap> {
    let mut sorted: Vec<&Edit> = edits
        .into_iter()
        .filter(|e| !(e.range.is_empty() && e.text.is_empty()))
        .collect();
    sorted.sort_by_key(|e| (e.range.start, e.range.end));
    for w in sorted.windows(2) {
        let (a, b) = (&w[0].range, &w[1].range);
        if b.start < a.end || (a == b && !a.is_empty()) {
            return Err(Overlap {
                first: a.clone(),
                second: b.clone(),
            });
        }
    }
    // Sized exactly: a large file's text would otherwise be copied as it grows, the old and
    // the new buffer held at once.
    let clip = |x: usize| x.min(text.len());
    let size = sorted.iter().fold(text.len(), |n, e| {
        n + e.text.len() - (clip(e.range.end).max(clip(e.range.start)) - clip(e.range.start))
    });
    let mut out = String::with_capacity(size);
    let mut pos = 0;
    for e in sorted {
        let (s, t) = (e.range.start.min(text.len()), e.range.end.min(text.len()));
        if !text.is_char_boundary(s) || !text.is_char_boundary(t) {
            return Err(Overlap {
                first: e.range.clone(),
                second: e.range.clone(),
            });
        }
        out.push_str(&text[pos..s]);
        out.push_str(&e.text);
        pos = t;
    }
    out.push_str(&text[pos..]);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn applies_in_order_and_keeps_the_rest() {
        let t = "abcdef";
        let e = [
            Edit::replace(4..5, "E"),
            Edit::insert(0, "<"),
            Edit::delete(1..2),
            Edit::insert(0, "["),
        ];
        assert_eq!(apply(t, &e).unwrap(), "<[acdEf");
    }

    #[test]
    fn rejects_overlap() {
        assert!(
            apply(
                "abcdef",
                &[Edit::replace(0..3, "x"), Edit::replace(2..4, "y")]
            )
            .is_err()
        );
        assert!(apply("abcdef", &[Edit::insert(2, "x"), Edit::replace(1..3, "y")]).is_err());
    }
}
