//! Property tests of the two readers every body passes through, against
//! oracles that read whole documents: the JSON scanner against serde_json
//! (generated bodies with decoy keys and values, escapes, numbers in every
//! JSON form, compact and pretty), and the SSE splitter against the event
//! stream rules read line by line. Each input is also fed split at every
//! byte, since a body arrives in frames of any size.

use proptest::prelude::*;
use serde_json::{Map, Value};

use crate::json::{Field, Found, JsonScan, Sink, CAPTURE_MAX};
use crate::sse::SseSplit;

/// Characters a string may hold: any, plus those JSON escapes.
fn text() -> impl Strategy<Value = String> {
    let char = prop_oneof![
        4 => any::<char>(),
        1 => Just('"'),
        1 => Just('\\'),
        1 => Just('\n'),
        1 => Just('\u{1f}'),
        1 => Just('{'),
    ];
    prop::collection::vec(char, 0..24).prop_map(String::from_iter)
}

/// A number in one of JSON's forms: an unsigned or negative integer, a
/// fraction, an exponent (serde_json writes large floats that way).
fn number() -> impl Strategy<Value = Value> {
    prop_oneof![
        any::<u64>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        (-1e6f64..1e6).prop_map(Value::from),
        prop_oneof![Just(1e21f64), Just(-2.5e-8), Just(6.02e23)].prop_map(Value::from),
    ]
}

/// Keys a decoy object may use, the ones the scanner looks for among them:
/// nested under a key it does not follow, none is reported.
fn decoy_key() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("model".to_owned()),
        Just("usage".to_owned()),
        Just("prompt_tokens".to_owned()),
        Just("content".to_owned()),
        Just("finish_reason".to_owned()),
        text(),
    ]
}

/// Any JSON value, a few levels deep, full of decoys.
fn decoy() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        number(),
        text().prop_map(Value::from),
        // A string that reads like a member.
        Just(Value::from("\"model\": \"decoy\", {\"usage\": 1}")),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::from),
            prop::collection::vec((decoy_key(), inner), 0..4)
                .prop_map(|members| Value::Object(members.into_iter().collect())),
        ]
    })
}

/// A body: a top-level `model` and `usage` maybe, and decoy members under
/// top-level keys the scanner does not follow.
fn body() -> impl Strategy<Value = Value> {
    let top_decoy_key = prop_oneof![
        Just("id"),
        Just("object"),
        Just("messages"),
        Just("tools"),
        Just("metadata"),
        Just("temperature"),
        Just("stream"),
    ];
    let usage = (
        prop::option::of(number()),
        prop::option::of(number()),
        prop::collection::vec(("total_tokens|x".prop_map(|k| k.to_owned()), decoy()), 0..2),
    )
        .prop_map(|(prompt, completion, rest)| {
            let mut usage = Map::new();
            for (key, value) in rest {
                usage.insert(key, value);
            }
            if let Some(p) = prompt {
                usage.insert("prompt_tokens".into(), p);
            }
            if let Some(c) = completion {
                usage.insert("completion_tokens".into(), c);
            }
            Value::Object(usage)
        });
    (
        prop::option::of(text()),
        prop::option::of(usage),
        prop::collection::vec((top_decoy_key, decoy()), 0..4),
    )
        .prop_map(|(model, usage, decoys)| {
            let mut body = Map::new();
            for (key, value) in decoys {
                body.insert(key.to_owned(), value);
            }
            if let Some(model) = model {
                body.insert("model".into(), Value::from(model));
            }
            if let Some(usage) = usage {
                body.insert("usage".into(), usage);
            }
            Value::Object(body)
        })
}

#[derive(Default)]
struct Seen(Vec<(Field, String)>);

impl Sink for Seen {
    fn found(&mut self, field: Field, value: Found<'_>) {
        let value = match value {
            Found::Str { bytes, .. } => format!("str {}", String::from_utf8_lossy(bytes)),
            Found::Number(n) => format!("number {n}"),
            Found::Null => "null".to_owned(),
            Found::Other => "other".to_owned(),
        };
        self.0.push((field, value));
    }
}

fn scan(pieces: &[&[u8]]) -> Vec<(Field, String)> {
    let mut scan = JsonScan::default();
    let mut seen = Seen::default();
    for piece in pieces {
        scan.feed(piece, &mut seen);
    }
    scan.finish(&mut seen);
    seen.0
        .sort_by_key(|(field, value)| (format!("{field:?}"), value.clone()));
    seen.0
}

/// What the scanner must report for `body`, read by serde_json: the
/// top-level `model` as written between its quotes (at most
/// `CAPTURE_MAX` bytes), and each usage count as a number when it is
/// written as digits alone, else as another value.
fn oracle(body: &Value) -> Vec<(Field, String)> {
    let mut expected = Vec::new();
    if let Some(model) = body.get("model") {
        let written = serde_json::to_string(model).unwrap();
        let inner = &written.as_bytes()[1..written.len() - 1];
        let kept = &inner[..inner.len().min(CAPTURE_MAX)];
        expected.push((
            Field::Model,
            format!("str {}", String::from_utf8_lossy(kept)),
        ));
    }
    let usage = body.get("usage");
    for (key, field) in [
        ("prompt_tokens", Field::PromptTokens),
        ("completion_tokens", Field::CompletionTokens),
    ] {
        if let Some(count) = usage.and_then(|u| u.get(key)) {
            let written = count.to_string();
            let value = if written.bytes().all(|b| b.is_ascii_digit()) {
                format!("number {}", written.parse::<u64>().unwrap())
            } else {
                "other".to_owned()
            };
            expected.push((field, value));
        }
    }
    expected.sort_by_key(|(field, value)| (format!("{field:?}"), value.clone()));
    expected
}

/// One event of a generated stream: its data lines (none for a comment or
/// an event with no data), a field the splitter ignores maybe, and the
/// line ending it is written with.
#[derive(Debug, Clone)]
struct Event {
    name: Option<String>,
    comment: bool,
    data: Vec<String>,
    space: bool,
    ending: &'static str,
}

fn line_text() -> impl Strategy<Value = String> {
    prop_oneof![
        decoy().prop_map(|v| v.to_string()),
        text().prop_map(|t| t.replace(['\r', '\n'], " ")),
        Just("[DONE]".to_owned()),
    ]
}

fn event() -> impl Strategy<Value = Event> {
    (
        prop::option::of("[a-z.]{1,12}"),
        any::<bool>(),
        prop::collection::vec(line_text(), 0..3),
        any::<bool>(),
        prop_oneof![Just("\n"), Just("\r\n"), Just("\r")],
    )
        .prop_map(|(name, comment, data, space, ending)| Event {
            name,
            comment,
            data,
            space,
            ending,
        })
}

fn stream(events: &[Event]) -> Vec<u8> {
    let mut out = String::new();
    for event in events {
        let end = event.ending;
        if let Some(name) = &event.name {
            out.push_str(&format!("event: {name}{end}"));
        }
        if event.comment {
            out.push_str(&format!(": keep-alive{end}"));
        }
        for line in &event.data {
            let sep = if event.space { ": " } else { ":" };
            out.push_str(&format!("data{sep}{line}{end}"));
        }
        out.push_str(end);
    }
    out.into_bytes()
}

/// The data each event dispatches, by the stream rules: lines end at
/// `\r\n`, `\n` or `\r`; `data:` and one optional space start a data line;
/// data lines join with `\n`; a blank line dispatches an event that has
/// data.
fn sse_oracle(stream: &[u8]) -> Vec<Vec<u8>> {
    let text = String::from_utf8_lossy(stream)
        .replace("\r\n", "\n")
        .replace('\r', "\n");
    let mut events = Vec::new();
    let mut data: Option<String> = None;
    for line in text.split('\n') {
        if line.is_empty() {
            if let Some(data) = data.take() {
                events.push(data.into_bytes());
            }
            continue;
        }
        if let Some(value) = line.strip_prefix("data:") {
            let value = value.strip_prefix(' ').unwrap_or(value);
            match &mut data {
                Some(data) => {
                    data.push('\n');
                    data.push_str(value);
                }
                None => data = Some(value.to_owned()),
            }
        }
    }
    events
}

fn split(pieces: &[&[u8]]) -> Vec<Vec<u8>> {
    let mut split = SseSplit::default();
    let mut out = Vec::new();
    for piece in pieces {
        split.feed(piece, &mut |data| out.push(data.to_vec()));
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn the_scanner_reports_what_serde_json_reads(body in body(), pretty in any::<bool>()) {
        let written = if pretty {
            serde_json::to_string_pretty(&body).unwrap()
        } else {
            serde_json::to_string(&body).unwrap()
        };
        let bytes = written.as_bytes();
        let expected = oracle(&body);
        prop_assert_eq!(&scan(&[bytes]), &expected, "{}", written);
        for at in 0..=bytes.len() {
            let (a, b) = bytes.split_at(at);
            prop_assert_eq!(&scan(&[a, b]), &expected, "split at {}: {}", at, written);
        }
        let bytes: Vec<&[u8]> = bytes.chunks(1).collect();
        prop_assert_eq!(&scan(&bytes), &expected, "byte by byte: {}", written);
    }

    #[test]
    fn the_splitter_hands_on_each_event_as_the_rules_read_it(
        events in prop::collection::vec(event(), 0..6),
    ) {
        let stream = stream(&events);
        let expected = sse_oracle(&stream);
        prop_assert_eq!(&split(&[&stream]), &expected);
        for at in 0..=stream.len() {
            let (a, b) = stream.split_at(at);
            prop_assert_eq!(&split(&[a, b]), &expected, "split at {}", at);
        }
        let bytes: Vec<&[u8]> = stream.chunks(1).collect();
        prop_assert_eq!(&split(&bytes), &expected, "byte by byte");
    }
}
