//! Bytes in, bytes out. The translator reads `&str`, but a file may hold any bytes: Latin-1
//! comments, a BOM, CR-only line ends. Valid UTF-8 is translated as it is, without a copy.
//! Otherwise each byte that is not UTF-8 becomes one private-use character while translating
//! (so anything copied from the source into a replacement keeps its bytes) and is restored
//! on output; offsets are mapped back, so diagnostics give the file's byte columns. A file
//! whose only line terminator is CR is translated with LF in its place (same length), and CR
//! is restored. UTF-16 and UTF-32 files are detected and reported, never read as ASCII.

use std::borrow::Cow;

/// A file's bytes as text the translator can read.
#[derive(Debug)]
pub struct Decoded<'a> {
    pub text: Cow<'a, str>,
    /// Offsets in `text` of the characters standing for bytes that are not UTF-8, ascending.
    escapes: Vec<usize>,
    /// Byte `b` (0x80..=0xFF) stands as the character `base + b`.
    base: u32,
    /// CR-only line ends, translated as LF.
    cr_only: bool,
}

/// Each escape character is 3 bytes of UTF-8 standing for 1 byte of the file.
const ESCAPE_EXTRA: usize = 2;

/// Private-use blocks tried in turn: the first whose 128 characters the file does not
/// already contain stands for its bytes.
const BASES: [u32; 4] = [0xF700, 0xEF00, 0xE700, 0xF300];

/// An encoding the translator cannot read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unsupported {
    /// `UTF-16LE`, `UTF-32BE`, …
    pub name: &'static str,
    /// The file decoded, to tell whether it uses OpenACC.
    pub text: String,
}

impl<'a> Decoded<'a> {
    /// Decode `bytes`; UTF-16 and UTF-32 (with a BOM, or UTF-16 recognised by its zero
    /// bytes) are reported.
    pub fn new(bytes: &'a [u8]) -> Result<Self, Unsupported> {
        if let Some(u) = wide_encoding(bytes) {
            return Err(u);
        }
        let cr_only = !bytes.contains(&b'\n') && bytes.contains(&b'\r');
        let (text, escapes, base) = match std::str::from_utf8(bytes) {
            Ok(t) => (Cow::Borrowed(t), Vec::new(), 0),
            Err(_) => {
                let (t, e, b) = escape(bytes).ok_or_else(|| Unsupported {
                    name: "a mix of invalid UTF-8 and private-use characters",
                    text: String::new(),
                })?;
                (Cow::Owned(t), e, b)
            }
        };
        let text = if cr_only {
            Cow::Owned(text.replace('\r', "\n"))
        } else {
            text
        };
        Ok(Decoded {
            text,
            escapes,
            base,
            cr_only,
        })
    }

    /// The file's byte offset of the text offset `at`.
    pub fn original_offset(&self, at: usize) -> usize {
        let before = self.escapes.partition_point(|&e| e < at);
        match before.checked_sub(1).map(|k| self.escapes[k]) {
            // Inside an escape character: its byte.
            Some(e) if at < e + 1 + ESCAPE_EXTRA => e - ESCAPE_EXTRA * (before - 1),
            _ => at - ESCAPE_EXTRA * before,
        }
    }

    /// Line terminator byte of the file (for its line index).
    pub fn line_terminator(&self) -> u8 {
        if self.cr_only { b'\r' } else { b'\n' }
    }

    /// Whether translated text needs `encode` (false: its UTF-8 bytes are the file's).
    pub fn is_identity(&self) -> bool {
        self.escapes.is_empty() && !self.cr_only
    }

    /// The file bytes of `text` (the translation of this file): escape characters become
    /// their bytes again, LF becomes CR in a CR-only file.
    pub fn encode(&self, text: String) -> Vec<u8> {
        if self.is_identity() {
            return text.into_bytes();
        }
        let mut out = Vec::with_capacity(text.len());
        let mut buf = [0u8; 4];
        for c in text.chars() {
            let v = c as u32;
            if !self.escapes.is_empty() && (self.base + 0x80..=self.base + 0xFF).contains(&v) {
                out.push((v - self.base) as u8);
            } else if c == '\n' && self.cr_only {
                out.push(b'\r');
            } else {
                out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
            }
        }
        out
    }
}

/// Valid UTF-8 kept, every other byte as a private-use character: (text, escape offsets, base).
fn escape(bytes: &[u8]) -> Option<(String, Vec<usize>, u32)> {
    let base = BASES.into_iter().find(|&base| {
        bytes.utf8_chunks().all(|c| {
            !c.valid()
                .chars()
                .any(|ch| (base + 0x80..=base + 0xFF).contains(&(ch as u32)))
        })
    })?;
    let mut text = String::with_capacity(bytes.len() + bytes.len() / 8);
    let mut escapes = Vec::new();
    for chunk in bytes.utf8_chunks() {
        text.push_str(chunk.valid());
        for &b in chunk.invalid() {
            escapes.push(text.len());
            text.push(char::from_u32(base + u32::from(b))?);
        }
    }
    Some((text, escapes, base))
}

/// UTF-32 or UTF-16 by their byte order mark, or UTF-16 without one (ASCII text in UTF-16
/// has a zero byte in every other position).
fn wide_encoding(bytes: &[u8]) -> Option<Unsupported> {
    let (name, unit, big) = if bytes.starts_with(&[0xFF, 0xFE, 0, 0]) {
        ("UTF-32LE", 4, false)
    } else if bytes.starts_with(&[0, 0, 0xFE, 0xFF]) {
        ("UTF-32BE", 4, true)
    } else if bytes.starts_with(&[0xFF, 0xFE]) {
        ("UTF-16LE", 2, false)
    } else if bytes.starts_with(&[0xFE, 0xFF]) {
        ("UTF-16BE", 2, true)
    } else {
        let head = &bytes[..bytes.len().min(4096) & !1];
        let zeros = |parity: usize| {
            head.iter()
                .skip(parity)
                .step_by(2)
                .filter(|&&b| b == 0)
                .count()
        };
        let pairs = head.len() / 2;
        if pairs < 2 {
            return None;
        }
        // Most code units of ASCII-range text have a zero high byte; other text has few zeros.
        match (zeros(0) * 4 > pairs * 3, zeros(1) * 4 > pairs * 3) {
            (false, true) => ("UTF-16LE", 2, false),
            (true, false) => ("UTF-16BE", 2, true),
            _ => return None,
        }
    };
    let text = if unit == 2 {
        let units: Vec<u16> = bytes
            .chunks_exact(2)
            .map(|c| {
                if big {
                    u16::from_be_bytes([c[0], c[1]])
                } else {
                    u16::from_le_bytes([c[0], c[1]])
                }
            })
            .collect();
        String::from_utf16_lossy(&units)
    } else {
        bytes
            .chunks_exact(4)
            .map(|c| {
                let v = if big {
                    u32::from_be_bytes([c[0], c[1], c[2], c[3]])
                } else {
                    u32::from_le_bytes([c[0], c[1], c[2], c[3]])
                };
                char::from_u32(v).unwrap_or('\u{fffd}')
            })
            .collect()
    };
    Some(Unsupported { name, text })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utf8_is_borrowed_and_identity() {
        let d = Decoded::new("int é;\n".as_bytes()).unwrap();
        assert!(matches!(d.text, Cow::Borrowed(_)));
        assert!(d.is_identity());
        assert_eq!(d.original_offset(5), 5);
    }

    #[test]
    fn invalid_bytes_round_trip_and_offsets_map_back() {
        let bytes = b"/* caf\xe9 \xff */ x\xe9y\n#pragma acc wait\n";
        let d = Decoded::new(bytes).unwrap();
        assert_eq!(d.encode(d.text.to_string()), bytes);
        let acc = d.text.find("acc").unwrap();
        assert_eq!(d.original_offset(acc), 25);
        assert_eq!(&bytes[25..28], b"acc");
        // Inside the first escape character: its byte.
        assert_eq!(d.original_offset(7), 6);
        assert_eq!(d.original_offset(6), 6);
        // A copy of the source into a replacement keeps its bytes.
        let moved = d.text.replace("x", "") + &d.text[17..22];
        assert!(d.encode(moved).ends_with(b"x\xe9y"));
    }

    #[test]
    fn escape_block_avoids_characters_the_file_has() {
        let mut bytes = "\u{F7E9}".as_bytes().to_vec();
        bytes.push(0xE9);
        let d = Decoded::new(&bytes).unwrap();
        assert_ne!(d.base, 0xF700);
        assert_eq!(d.encode(d.text.to_string()), bytes);
    }

    #[test]
    fn cr_only_lines_become_lf_and_back() {
        let bytes = b"a\r#pragma acc wait\rb";
        let d = Decoded::new(bytes).unwrap();
        assert_eq!(d.text, "a\n#pragma acc wait\nb");
        assert_eq!(d.line_terminator(), b'\r');
        assert_eq!(
            d.encode(d.text.replace("acc", "omp")),
            b"a\r#pragma omp wait\rb"
        );
        // CRLF files are left as they are.
        assert!(Decoded::new(b"a\r\nb").unwrap().is_identity());
    }

    #[test]
    fn wide_encodings_are_recognised() {
        let le: Vec<u8> = "#pragma acc wait\n"
            .encode_utf16()
            .flat_map(|u| u.to_le_bytes())
            .collect();
        let u = Decoded::new(&le).unwrap_err();
        assert_eq!(
            (u.name, u.text.as_str()),
            ("UTF-16LE", "#pragma acc wait\n")
        );
        let be: Vec<u8> = "\u{feff}x\n"
            .encode_utf16()
            .flat_map(|u| u.to_be_bytes())
            .collect();
        assert_eq!(Decoded::new(&be).unwrap_err().name, "UTF-16BE");
        let mut bom32 = vec![0xFF, 0xFE, 0, 0];
        bom32.extend("x".chars().flat_map(|c| (c as u32).to_le_bytes()));
        assert_eq!(Decoded::new(&bom32).unwrap_err().text, "\u{feff}x");
        // A few zero bytes in a Latin-1 file are not UTF-16.
        assert!(Decoded::new(b"a\0b\xe9cd\0efgh").is_ok());
    }
}
