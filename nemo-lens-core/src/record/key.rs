//! An attribute combination as a look-up key: each value as three words
//! (its kind and length, then its bytes a word at a time), hashed and
//! compared as words, so a look-up reads the values once.
//!
//! A text of up to 16 bytes is whole in its words (the first and the last
//! eight bytes, overlapping); a longer one's words fold every byte in, and
//! equal words are confirmed by comparing the texts.

use std::mem::MaybeUninit;

use opentelemetry::{StringValue, Value};

/// A borrowed attribute value, compared and hashed without cloning it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum KeyPart<'a> {
    /// A string value.
    Str(&'a str),
    /// A boolean value.
    Bool(bool),
    /// An integer value.
    I64(i64),
    /// A floating-point value.
    F64(f64),
}

/// Values a key holds at most: a set binds the combinations of up to this
/// many attributes, and records larger ones unbound.
pub(super) const KEY_PARTS: usize = 16;

/// Texts longer than this are not whole in their words.
const WHOLE: usize = 16;

const STR: u64 = 1 << 56;
const BOOL: u64 = 2 << 56;
const I64: u64 = 3 << 56;
const F64: u64 = 4 << 56;

/// The words of a combination, in a buffer on the caller's stack.
pub(super) type Buffer = [MaybeUninit<u64>; 3 * KEY_PARTS];

/// An empty buffer (nothing written: a key writes what it reads).
#[inline]
pub(super) const fn buffer() -> Buffer {
    [const { MaybeUninit::uninit() }; 3 * KEY_PARTS]
}

/// A combination's words, written once and read by both the hash and the
/// comparison with a stored combination.
pub(super) struct Key<'b> {
    words: &'b [u64],
    /// Whether a text is too long to be whole in its words.
    long: bool,
    pub(super) hash: u64,
}

impl<'b> Key<'b> {
    /// The key of `parts` in `buffer`, `None` past [`KEY_PARTS`] values.
    #[inline]
    pub(super) fn of(parts: &[Option<KeyPart<'_>>], buffer: &'b mut Buffer) -> Option<Key<'b>> {
        if parts.len() > KEY_PARTS {
            return None;
        }
        let (mut hash, mut long) = (0x243F_6A88_85A3_08D3, false);
        for (part, at) in parts.iter().zip(buffer.chunks_exact_mut(3)) {
            let [kind, first, second] = words(*part);
            long |= matches!(part, Some(KeyPart::Str(text)) if text.len() > WHOLE);
            hash = mix(hash ^ kind, first ^ second.rotate_left(32));
            at[0].write(kind);
            at[1].write(first);
            at[2].write(second);
        }
        let written = &buffer[..3 * parts.len()];
        // SAFETY: the loop wrote the first `3 * parts.len()` words (the
        // buffer holds `3 * KEY_PARTS`, and `parts` is no longer), and
        // `MaybeUninit<u64>` has `u64`'s layout.
        let words =
            unsafe { std::slice::from_raw_parts(written.as_ptr().cast::<u64>(), written.len()) };
        Some(Key { words, long, hash })
    }

    /// The words, as a map stores them.
    pub(super) fn words(&self) -> &[u64] {
        self.words
    }

    /// Whether `words` and `values`, stored for a combination, are `parts`
    /// (whose key this is): the words, then any long text whole.
    #[inline]
    pub(super) fn matches(
        &self,
        words: &[u64],
        values: &[Option<Part>],
        parts: &[Option<KeyPart<'_>>],
    ) -> bool {
        words == self.words
            && (!self.long
                || values
                    .iter()
                    .zip(parts)
                    .all(|(value, part)| match (value, part) {
                        (Some(Part::Str(a)), Some(KeyPart::Str(b))) => **a == **b,
                        _ => true,
                    }))
    }
}

/// A value's three words; an absent value's are zero.
#[inline]
fn words(part: Option<KeyPart<'_>>) -> [u64; 3] {
    match part {
        None => [0; 3],
        Some(KeyPart::Str(text)) => {
            let bytes = text.as_bytes();
            let word = |chunk: &[u8; 8]| u64::from_le_bytes(*chunk);
            let kind = STR | bytes.len() as u64;
            match (bytes.first_chunk::<8>(), bytes.last_chunk::<8>()) {
                (Some(head), Some(tail)) if bytes.len() <= WHOLE => [kind, word(head), word(tail)],
                (Some(_), Some(tail)) => {
                    let (chunks, _) = bytes.as_chunks::<8>();
                    let folded = chunks
                        .iter()
                        .fold(0, |state, chunk| mix(state, word(chunk)));
                    [kind, folded, word(tail)]
                }
                // Shorter than a word: every byte, in two overlapping
                // halves, or (up to three bytes) each.
                _ => {
                    let packed = match (bytes.first_chunk::<4>(), bytes.last_chunk::<4>()) {
                        (Some(head), Some(tail)) => {
                            u64::from(u32::from_le_bytes(*head)) << 32
                                | u64::from(u32::from_le_bytes(*tail))
                        }
                        _ => bytes.iter().fold(0, |w, b| w << 8 | u64::from(*b)),
                    };
                    [kind, packed, 0]
                }
            }
        }
        Some(KeyPart::Bool(b)) => [BOOL, u64::from(b), 0],
        Some(KeyPart::I64(i)) => [I64, i as u64, 0],
        Some(KeyPart::F64(f)) => [F64, f.to_bits(), 0],
    }
}

/// One round of a multiply-fold mixer (foldhash's): enough to spread a
/// combination's few words over the table.
#[inline]
fn mix(state: u64, word: u64) -> u64 {
    let product = u128::from(state ^ word) * u128::from(0x9E37_79B9_7F4A_7C15_u64 ^ state);
    (product as u64) ^ ((product >> 64) as u64)
}

/// A value of a bound combination, as a map keeps it.
#[derive(Debug)]
pub(super) enum Part {
    Str(Box<str>),
    Bool(bool),
    I64(i64),
    F64(u64),
}

impl Part {
    pub(super) fn of(part: KeyPart<'_>) -> Part {
        match part {
            KeyPart::Str(s) => Part::Str(s.into()),
            KeyPart::Bool(b) => Part::Bool(b),
            KeyPart::I64(i) => Part::I64(i),
            KeyPart::F64(f) => Part::F64(f.to_bits()),
        }
    }

    pub(super) fn to_value(&self) -> Value {
        match self {
            Part::Str(s) => Value::String(StringValue::from(s.to_string())),
            Part::Bool(b) => Value::Bool(*b),
            Part::I64(i) => Value::I64(*i),
            Part::F64(f) => Value::F64(f64::from_bits(*f)),
        }
    }

    /// Whether this is `value` (what a forgotten attribute names).
    pub(super) fn is(&self, value: &Value) -> bool {
        match (self, value) {
            (Part::Str(a), Value::String(b)) => **a == *b.as_str(),
            (Part::Bool(a), Value::Bool(b)) => a == b,
            (Part::I64(a), Value::I64(b)) => a == b,
            (Part::F64(a), Value::F64(b)) => *a == b.to_bits(),
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(parts: &[Option<KeyPart<'_>>]) -> Vec<u64> {
        Key::of(parts, &mut buffer()).unwrap().words().to_vec()
    }

    #[test]
    fn equal_words_mean_equal_values_up_to_sixteen_bytes() {
        let text = "abcdefghijklmnop";
        for len in 0..=text.len() {
            let a = &text[..len];
            let own = String::from(a);
            assert_eq!(
                words(&[Some(KeyPart::Str(a))]),
                words(&[Some(KeyPart::Str(&own))])
            );
            for at in 0..len {
                let mut b = a.as_bytes().to_vec();
                b[at] = b'#';
                let b = String::from_utf8(b).unwrap();
                assert_ne!(
                    words(&[Some(KeyPart::Str(a))]),
                    words(&[Some(KeyPart::Str(&b))]),
                    "{a:?} against {b:?}"
                );
            }
        }
        // Kinds and absence differ in words too.
        let all = [
            None,
            Some(KeyPart::Str("")),
            Some(KeyPart::Bool(false)),
            Some(KeyPart::I64(0)),
            Some(KeyPart::F64(0.0)),
        ];
        for (i, a) in all.iter().enumerate() {
            for b in &all[i + 1..] {
                assert_ne!(words(&[*a]), words(&[*b]), "{a:?} {b:?}");
            }
        }
    }

    #[test]
    fn long_texts_differing_inside_hash_apart_and_are_compared_whole() {
        let a = "http://worker-001.cluster.local:8000";
        let b = "http://worker-002.cluster.local:8000";
        let (pa, pb) = ([Some(KeyPart::Str(a))], [Some(KeyPart::Str(b))]);
        let (mut ba, mut bb) = (buffer(), buffer());
        let (ka, kb) = (
            Key::of(&pa, &mut ba).unwrap(),
            Key::of(&pb, &mut bb).unwrap(),
        );
        assert_ne!(ka.hash, kb.hash, "the middle bytes are hashed");
        assert!(ka.long);
        let stored = [Some(Part::of(KeyPart::Str(a)))];
        // Long texts' words fold their bytes: equal words are confirmed.
        assert!(ka.matches(&words(&pa), &stored, &pa));
        assert!(!kb.matches(&words(&pa), &stored, &pb));
        assert!(Key::of(&[None; KEY_PARTS + 1], &mut buffer()).is_none());
    }
}
