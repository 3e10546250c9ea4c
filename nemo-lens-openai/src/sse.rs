//! Server-sent events, split as the frames of a `text/event-stream` body
//! pass by: each event's `data` is handed on once the blank line that ends
//! the event has gone through. Only the event in progress is kept.

/// Longest event kept; a longer one is skipped (no OpenAI chunk comes
/// close, and a body must not make the layer hold it).
pub(crate) const EVENT_MAX: usize = 1 << 20;

/// The splitter; see the module docs.
#[derive(Debug, Default)]
pub(crate) struct SseSplit {
    /// The line in progress, when a frame ended inside it.
    line: Vec<u8>,
    /// The `data` of the event in progress, lines joined by `\n`.
    data: Vec<u8>,
    /// Whether the event in progress has a `data` line.
    has_data: bool,
    /// Whether the event in progress outgrew [`EVENT_MAX`].
    oversized: bool,
    /// Whether the previous piece ended in `\r` (a `\r\n` may straddle).
    after_cr: bool,
}

impl SseSplit {
    /// Splits the next piece of the body, calling `on_data` with the data
    /// of each event it completes.
    pub(crate) fn feed(&mut self, mut bytes: &[u8], on_data: &mut impl FnMut(&[u8])) {
        if self.after_cr && bytes.first() == Some(&b'\n') {
            bytes = &bytes[1..];
        }
        self.after_cr = false;
        if let Some(data) = self.whole_event(bytes) {
            on_data(data);
            return;
        }
        while !bytes.is_empty() {
            let Some(end) = memchr::memchr2(b'\n', b'\r', bytes) else {
                self.keep_partial(bytes);
                return;
            };
            let line = &bytes[..end];
            let mut next = end + 1;
            if bytes[end] == b'\r' {
                match bytes.get(next) {
                    Some(b'\n') => next += 1,
                    Some(_) => {}
                    None => self.after_cr = true,
                }
            }
            if self.line.is_empty() {
                self.line_done(line, on_data);
            } else {
                self.keep_partial(line);
                let whole = std::mem::take(&mut self.line);
                self.line_done(&whole, on_data);
                self.line = whole;
                self.line.clear();
            }
            bytes = &bytes[next..];
        }
    }

    /// The data of `bytes` when it is exactly one `data: ...\n\n` event
    /// (after an `event: ...\n` line, as the Responses and Messages APIs
    /// write) and nothing is pending: how servers write chunks, read in
    /// place.
    fn whole_event<'a>(&self, bytes: &'a [u8]) -> Option<&'a [u8]> {
        if !self.line.is_empty() || self.has_data || self.oversized {
            return None;
        }
        let bytes = match bytes.strip_prefix(b"event: ") {
            // The name's line must end in `\n`: one ending in `\r` would
            // have the search run on into the next lines.
            Some(named) => {
                let end = memchr::memchr2(b'\n', b'\r', named)?;
                if named[end] != b'\n' {
                    return None;
                }
                &named[end + 1..]
            }
            None => bytes,
        };
        let line = bytes.strip_prefix(b"data: ")?.strip_suffix(b"\n\n")?;
        memchr::memchr2(b'\n', b'\r', line)
            .is_none()
            .then_some(line)
    }

    fn keep_partial(&mut self, bytes: &[u8]) {
        if self.line.len() + bytes.len() <= EVENT_MAX {
            self.line.extend_from_slice(bytes);
        } else {
            // The rest of the line is dropped; the event it belongs to is
            // skipped at its blank line.
            self.oversized = true;
        }
    }

    /// One complete line: a field of the event, or the blank line ending it.
    fn line_done(&mut self, line: &[u8], on_data: &mut impl FnMut(&[u8])) {
        if line.is_empty() {
            if self.has_data && !self.oversized {
                on_data(&self.data);
            }
            self.data.clear();
            self.has_data = false;
            self.oversized = false;
            return;
        }
        let Some(value) = line.strip_prefix(b"data") else {
            return; // `event:`, `id:`, `retry:` and `:` comments
        };
        let value = match value {
            [b':', b' ', rest @ ..] => rest,
            [b':', rest @ ..] => rest,
            [] => &[],
            _ => return, // a field whose name only starts with "data"
        };
        if self.has_data {
            self.data.push(b'\n');
        }
        self.has_data = true;
        if self.data.len() + value.len() <= EVENT_MAX {
            self.data.extend_from_slice(value);
        } else {
            self.oversized = true;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn events(pieces: &[&[u8]]) -> Vec<String> {
        let mut split = SseSplit::default();
        let mut out = Vec::new();
        for piece in pieces {
            split.feed(piece, &mut |data| {
                out.push(String::from_utf8_lossy(data).into_owned())
            });
        }
        out
    }

    #[test]
    fn events_end_at_a_blank_line_whatever_the_line_endings_and_pieces() {
        let stream =
            b"data: {\"a\":1}\n\ndata:{\"b\":2}\r\n\r\n: keep-alive\n\nevent: x\ndata: [DONE]\r\r";
        let expected = ["{\"a\":1}", "{\"b\":2}", "[DONE]"];
        assert_eq!(events(&[stream]), expected);
        let bytes: Vec<&[u8]> = stream.chunks(1).collect();
        assert_eq!(events(&bytes), expected, "byte by byte");
        let (a, b) = stream.split_at(23);
        assert_eq!(events(&[a, b]), expected, "split mid-line");
    }

    #[test]
    fn a_named_event_in_one_piece_is_read_in_place_and_the_same_split() {
        let stream = b"event: response.output_text.delta\ndata: {\"delta\":\"x\"}\n\nevent: x\r\ndata: y\n\n";
        assert_eq!(events(&[&stream[..55]]), ["{\"delta\":\"x\"}"]);
        let bytes: Vec<&[u8]> = stream.chunks(1).collect();
        assert_eq!(events(&bytes), ["{\"delta\":\"x\"}", "y"]);
        assert_eq!(events(&[stream]), ["{\"delta\":\"x\"}", "y"]);
    }

    #[test]
    fn a_named_event_whose_lines_end_in_cr_is_not_read_as_one() {
        // Found by the property test: the fast path looked for the name
        // line's end at the first `\n`, two events further on.
        let stream = b"event: .\rdata:null\r\r: keep-alive\ndata: null\n\n";
        assert_eq!(events(&[stream]), ["null", "null"]);
    }

    #[test]
    fn multi_line_data_is_joined_and_an_unfinished_event_is_not_handed_on() {
        assert_eq!(events(&[b"data: a\ndata: b\n\ndata: c"]), ["a\nb"]);
        // A field that only starts with `data` is not data.
        assert_eq!(events(&[b"database: x\n\n"]), Vec::<String>::new());
    }

    #[test]
    fn an_oversized_event_is_skipped_and_the_next_one_read() {
        let mut huge = b"data: ".to_vec();
        huge.extend(std::iter::repeat_n(b'x', EVENT_MAX + 1));
        huge.extend_from_slice(b"\n\ndata: ok\n\n");
        assert_eq!(events(&[&huge]), ["ok"]);
    }
}
