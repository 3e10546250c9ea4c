//! Property tests of the two readers every body passes through, against
//! oracles that read whole documents: the JSON scanner against serde_json
//! (generated bodies with decoy keys and values, escapes, numbers in every
//! JSON form, compact and pretty), and the SSE splitter against the event
//! stream rules read line by line. Each input is also fed split at every
//! byte, since a body arrives in frames of any size. And the glances at a
//! stream's chunks against reading every chunk whole.

use proptest::prelude::*;
use serde_json::{Map, Value};

use crate::json::{Field, Found, JsonScan, Sink, CAPTURE_MAX};
use crate::recording::{tests::read, Operation};
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

/// How one generated stream's servers write its chunks.
#[derive(Debug, Clone)]
struct Server {
    /// The model every chunk names, or none.
    model: Option<&'static str>,
    /// Completions' `text` rather than chat's `delta`.
    completions: bool,
    /// Where usage goes: nowhere (0), `null` in every chunk (1), counts in
    /// every chunk and a chunk after the last (2: vLLM's continuous usage
    /// stats), a chunk after the last (3: OpenAI's `include_usage`), the
    /// last chunk (4: TGI), or counts in every chunk and no chunk after (5).
    usage: u8,
    /// The chunks' top-level keys, in this order (a rotation of them).
    rotate: usize,
    /// `": "` and `", "` between members, as Python's `json.dumps` writes.
    spaced: bool,
    /// What comes before the words: nothing (0), a role chunk (1), one
    /// with an `error` as well (2), one with two choices, the second
    /// already stopped (3).
    opening: u8,
}

/// One chunk of a generated stream, before its finish reason is given.
#[derive(Debug, Clone)]
struct Words {
    content: Option<String>,
    reasoning: Option<String>,
    tool_arguments: Option<String>,
    logprobs: bool,
}

fn server() -> impl Strategy<Value = Server> {
    (
        prop::sample::select(vec![Some("llama"), Some("other"), Some("a\"b"), None]),
        any::<bool>(),
        0u8..6,
        0usize..6,
        any::<bool>(),
        0u8..4,
    )
        .prop_map(
            |(model, completions, usage, rotate, spaced, opening)| Server {
                model,
                completions,
                usage,
                rotate,
                spaced,
                opening,
            },
        )
}

impl Words {
    /// Whether the chunk carries words that count as content.
    fn has_content(&self, server: &Server) -> bool {
        let text = |t: &Option<String>| t.as_ref().is_some_and(|t| !t.is_empty());
        match server.completions {
            true => text(&self.content),
            false => text(&self.content) || text(&self.reasoning) || text(&self.tool_arguments),
        }
    }
}

fn words() -> impl Strategy<Value = Words> {
    let maybe_text = || prop_oneof![Just(None), Just(Some(String::new())), text().prop_map(Some)];
    (maybe_text(), maybe_text(), maybe_text(), any::<bool>()).prop_map(
        |(content, reasoning, tool_arguments, logprobs)| Words {
            content,
            reasoning,
            tool_arguments,
            logprobs,
        },
    )
}

/// A generated stream: words, then a last chunk with a finish reason (or an
/// error chunk, or neither), usage as the server writes it, `[DONE]`.
fn chat_stream() -> impl Strategy<Value = String> {
    let reason = prop::sample::select(vec!["stop", "length", "tool_calls", "abort", "x\"y"]);
    (
        server(),
        prop::collection::vec(words(), 1..6),
        prop_oneof![3 => reason.prop_map(Some), 1 => Just(None)],
        any::<bool>(),
    )
        // Usage in a chunk after the first content is read only from the
        // last one, which must then say it is the last: such a chunk's
        // usage is not looked for (three searches a chunk saved). A stream
        // cut before its last chunk loses it (noted where the glance is).
        .prop_filter(
            "usage in chunks after content ends with a finish reason",
            |(server, words, reason, _)| {
                server.usage < 4 || reason.is_some() || !words.iter().any(|w| w.has_content(server))
            },
        )
        .prop_map(|(server, words, reason, error)| {
            let last = words.len() - 1;
            let mut stream = String::new();
            if server.opening > 0 {
                stream += &opening(&server);
            }
            for (i, chunk) in words.iter().enumerate() {
                let finish = match reason {
                    Some(reason) if i == last => Value::from(reason),
                    _ => Value::Null,
                };
                let usage = match server.usage {
                    1 => Some(Value::Null),
                    2 | 5 => Some(usage(i as u64)),
                    4 if i == last => Some(usage(i as u64)),
                    _ => None,
                };
                let choice = choice(&server, chunk, finish);
                stream += &data(&server, Value::from(vec![choice]), usage);
            }
            if error {
                stream += "data: {\"error\":{\"message\":\"boom\",\"code\":500}}\n\n";
            }
            if server.usage == 3 || server.usage == 2 {
                stream += &data(&server, Value::from(Vec::<Value>::new()), Some(usage(99)));
            }
            stream + "data: [DONE]\n\n"
        })
}

/// A role chunk, as vLLM and OpenAI open a stream with, its usage as the
/// server writes usage in chunks.
fn opening(server: &Server) -> String {
    let role = serde_json::json!({"index": 0, "delta": {"role": "assistant", "content": ""},
        "logprobs": null, "finish_reason": null});
    let mut choices = vec![role.clone()];
    if server.opening == 3 {
        let mut stopped = role;
        stopped["index"] = Value::from(1);
        stopped["finish_reason"] = Value::from("stop");
        choices.push(stopped);
    }
    let usage = match server.usage {
        1 => Some(Value::Null),
        2 | 5 => Some(usage(0)),
        _ => None,
    };
    let mut line = data(server, Value::from(choices), usage);
    if server.opening == 2 {
        line = line.replacen("data: {", "data: {\"error\":{\"message\":\"boom\"},", 1);
    }
    line
}

fn usage(tokens: u64) -> Value {
    serde_json::json!({
        "prompt_tokens": 7,
        "completion_tokens": tokens,
        "prompt_tokens_details": {"cached_tokens": 3},
    })
}

fn choice(server: &Server, words: &Words, finish: Value) -> Value {
    let mut choice = Map::new();
    choice.insert("index".into(), Value::from(0));
    if server.completions {
        choice.insert(
            "text".into(),
            Value::from(words.content.clone().unwrap_or_default()),
        );
    } else {
        let mut delta = Map::new();
        delta.insert(
            "content".into(),
            words.content.clone().map_or(Value::Null, Value::from),
        );
        if let Some(reasoning) = &words.reasoning {
            delta.insert("reasoning_content".into(), Value::from(reasoning.clone()));
        }
        if let Some(arguments) = &words.tool_arguments {
            delta.insert(
                "tool_calls".into(),
                serde_json::json!([{"index": 0, "type": "function",
                    "function": {"name": "f", "arguments": arguments}}]),
            );
        }
        choice.insert("delta".into(), Value::Object(delta));
    }
    let logprobs = match words.logprobs {
        true => serde_json::json!({"content": [{"token": "x", "logprob": -0.5}]}),
        false => Value::Null,
    };
    choice.insert("logprobs".into(), logprobs);
    choice.insert("finish_reason".into(), finish);
    Value::Object(choice)
}

/// One `data:` line of a chunk, its top-level keys in the server's order.
fn data(server: &Server, choices: Value, usage: Option<Value>) -> String {
    let mut members: Vec<(&str, Value)> = vec![
        ("id", Value::from("chatcmpl-1")),
        ("object", Value::from("chat.completion.chunk")),
        ("created", Value::from(1_796_583_514u64)),
        ("choices", choices),
    ];
    if let Some(model) = server.model {
        members.push(("model", Value::from(model)));
    }
    if let Some(usage) = usage {
        members.push(("usage", usage));
    }
    let turn = server.rotate % members.len();
    members.rotate_left(turn);
    let (colon, comma) = match server.spaced {
        true => (": ", ", "),
        false => (":", ","),
    };
    let members: Vec<String> = members
        .iter()
        .map(|(key, value)| {
            let value = match server.spaced {
                true => spaced(value),
                false => value.to_string(),
            };
            format!("\"{key}\"{colon}{value}")
        })
        .collect();
    format!("data: {{{}}}\n\n", members.join(comma))
}

/// `value` as Python's `json.dumps` writes it: a space after each `:` and
/// `,`, on one line.
fn spaced(value: &Value) -> String {
    match value {
        Value::Array(items) => {
            let items: Vec<String> = items.iter().map(spaced).collect();
            format!("[{}]", items.join(", "))
        }
        Value::Object(members) => {
            let members: Vec<String> = members
                .iter()
                .map(|(key, value)| format!("{}: {}", Value::from(key.as_str()), spaced(value)))
                .collect();
            format!("{{{}}}", members.join(", "))
        }
        scalar => scalar.to_string(),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn glancing_at_a_stream_reads_what_reading_every_chunk_whole_reads(stream in chat_stream()) {
        // Embeddings never stream, so their reader glances at nothing.
        let whole = read(Operation::Embeddings, stream.as_bytes());
        prop_assert_eq!(read(Operation::Chat, stream.as_bytes()), whole, "{}", stream);
    }

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
