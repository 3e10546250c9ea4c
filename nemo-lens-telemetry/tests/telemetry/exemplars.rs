//! Exemplars as each exposition writes them, from a capture and from a
//! renderer installed with `SetupOptions::metric_reader`: where they go,
//! which records leave one, and what each format carries.

use nemo_lens::exemplar::{self, SpanIds};
use nemo_lens::prometheus::proto::MetricFamily;
use nemo_lens::prometheus::{Format, PrometheusRenderer};
use nemo_lens::telemetry::{EnvLookup, NemoLensConfig, SetupOptions};
use nemo_lens::testing::Capture;
use nemo_lens::ExemplarFilter;
use opentelemetry::trace::{
    SpanContext, SpanId, TraceContextExt as _, TraceFlags, TraceId, TraceState,
};
use opentelemetry::{Context, KeyValue};
use prost::Message as _;

/// More than a bucket's least time between two exemplars (1 ms).
const GAP: std::time::Duration = std::time::Duration::from_micros(1_100);

fn span(n: u64) -> SpanIds {
    SpanIds::new(
        TraceId::from(0x4bf9_2f35_77b3_4da6_a3ce_929d_0e0e_0000_u128 + u128::from(n)),
        SpanId::from(0x00f0_67aa_0ba9_0000 + n),
    )
}

/// A remote span context with `ids`, sampled or not.
fn span_context(ids: SpanIds, flags: TraceFlags) -> SpanContext {
    SpanContext::new(
        ids.trace_id(),
        ids.span_id(),
        flags,
        true,
        TraceState::default(),
    )
}

/// A `latency` histogram of `capture`'s meter, buckets at 1.5 and 2.5.
fn latency(capture: &Capture) -> nemo_lens::owned::Histogram<f64> {
    capture
        .meter()
        .f64_histogram("latency")
        .with_boundaries(vec![1.5, 2.5])
        .build()
}

/// The exemplar written on each line of an OpenMetrics exposition, by the
/// line's sample: `(sample with labels, exemplar)`.
fn exemplar_lines(text: &str) -> Vec<(&str, &str)> {
    text.lines()
        .filter_map(|line| line.split_once(" # "))
        .collect()
}

#[test]
fn openmetrics_puts_the_latest_of_each_bucket_on_its_bucket_line_only() {
    let capture = Capture::new();
    let meter = capture.meter();
    let ttft = meter
        .f64_histogram("gen_ai.server.time_to_first_token")
        .with_unit("s")
        .with_description("Time to \"first\" token.")
        .with_boundaries(vec![0.1, 0.5, 1.0])
        .build();
    let requests = meter.u64_counter("app.requests").build();
    let model = [KeyValue::new("gen_ai.request.model", "m")];
    exemplar::in_span(Some(span(1)), || ttft.record(0.3, &model));
    // A bucket takes one exemplar a millisecond: the next one after that.
    exemplar::in_span(Some(span(7)), || ttft.record(0.35, &model));
    std::thread::sleep(GAP);
    exemplar::in_span(Some(span(2)), || ttft.record(0.4, &model));
    exemplar::in_span(Some(span(3)), || ttft.record(0.05, &model));
    exemplar::in_span(Some(span(4)), || ttft.record(7.0, &model));
    ttft.record(0.2, &model); // no sampled span: counted, no exemplar
    requests.add(3, &[]);

    let text = capture.openmetrics();
    assert!(text.ends_with("# EOF\n"), "{text}");
    assert!(text.contains(
        "# TYPE gen_ai_server_time_to_first_token_seconds histogram\n\
         # HELP gen_ai_server_time_to_first_token_seconds Time to \\\"first\\\" token.\n"
    ));
    // A counter family is named without `_total`; its sample keeps it.
    assert!(text.contains("# TYPE app_requests counter\n"), "{text}");
    assert!(text.contains("\napp_requests_total{otel_scope_name=\"nemo.lens\"} 3\n"));
    assert!(!text.contains("_created"));

    let lines = exemplar_lines(&text);
    let on = |le: &str| {
        lines
            .iter()
            .find(|(sample, _)| sample.contains(&format!("le=\"{le}\"")))
            .map(|(_, exemplar)| *exemplar)
    };
    let ids = |s: SpanIds| {
        format!(
            "{{trace_id=\"{:032x}\",span_id=\"{:016x}\"}}",
            s.trace_id(),
            s.span_id()
        )
    };
    // 0.05 in (-inf, 0.1]; 0.3 then 0.4 in (0.1, 0.5], the later kept;
    // nothing in (0.5, 1]; 7 in +Inf.
    assert!(on("0.1")
        .unwrap()
        .starts_with(&format!("{} 0.05 ", ids(span(3)))));
    assert!(on("0.5")
        .unwrap()
        .starts_with(&format!("{} 0.4 ", ids(span(2)))));
    assert_eq!(on("1"), None);
    assert!(on("+Inf")
        .unwrap()
        .starts_with(&format!("{} 7 ", ids(span(4)))));
    assert_eq!(lines.len(), 3, "only bucket lines carry exemplars: {text}");
    assert!(lines.iter().all(|(sample, _)| sample.contains("_bucket{")));
    // Each with a timestamp: seconds to the millisecond.
    for (_, exemplar) in &lines {
        let stamp = exemplar.rsplit(' ').next().unwrap();
        let (secs, millis) = stamp.split_once('.').unwrap();
        assert!(
            secs.parse::<u64>().unwrap() > 1_700_000_000 && millis.len() == 3,
            "{exemplar}"
        );
    }
    // Read back as recorded, oldest first.
    let held = capture.exemplars("gen_ai.server.time_to_first_token", &[]);
    let values: Vec<f64> = held.iter().map(|e| e.value).collect();
    assert_eq!(values, [0.4, 0.05, 7.0]);
    // The text format, which would fail a scrape on one, has none.
    assert!(!capture.exposition().contains(" # {"));
}

#[test]
fn always_off_keeps_none_and_always_on_keeps_records_outside_spans() {
    let off = Capture::with_exemplar_filter(ExemplarFilter::AlwaysOff);
    let histogram = off.meter().f64_histogram("latency").build();
    exemplar::in_span(Some(span(1)), || histogram.record(0.3, &[]));
    assert!(off.exemplars("latency", &[]).is_empty());
    assert!(!off.openmetrics().contains(" # "));
    assert_eq!(off.count("latency", &[]), Some(1));

    let on = Capture::with_exemplar_filter(ExemplarFilter::AlwaysOn);
    let histogram = on
        .meter()
        .f64_histogram("latency")
        .with_boundaries(vec![1.0])
        .build();
    histogram.record(0.3, &[]);
    let held = on.exemplars("latency", &[]);
    assert_eq!((held.len(), held[0].span), (1, None));
    // No span: an empty label set, as OpenMetrics writes one.
    assert!(on.openmetrics().contains("le=\"1\"} 1 # {} 0.3 "));
}

#[test]
fn the_current_context_or_one_given_names_the_span() {
    let capture = Capture::new();
    let histogram = latency(&capture);
    let ids = span(9);
    let sampled = span_context(ids, TraceFlags::SAMPLED);
    let unsampled = span_context(span(10), TraceFlags::default());
    // Outside any span: this thread learns that none is current, and from
    // here on the context observer (installed with the first histogram
    // that keeps exemplars) tells it of each attach and detach.
    histogram.record(0.5, &[]);
    assert!(exemplar::SpanObserver::install());
    {
        let _current = Context::new().with_remote_span_context(unsampled).attach();
        histogram.record(1.0, &[]);
    }
    assert!(capture.exemplars("latency", &[]).is_empty(), "unsampled");
    {
        let _current = Context::new()
            .with_remote_span_context(sampled.clone())
            .attach();
        histogram.record(2.0, &[]);
    }
    histogram.record(0.7, &[]);
    // A context passed explicitly, for a record outside the span.
    let cx = Context::new().with_remote_span_context(sampled);
    exemplar::in_context(&cx, || histogram.record(3.0, &[]));
    let held = capture.exemplars("latency", &[]);
    assert_eq!(held.len(), 2, "{held:?}");
    assert_eq!((held[0].value, held[1].value), (2.0, 3.0));
    assert!(held.iter().all(|e| e.span == Some(ids)));
    assert_eq!(
        held[1].trace_id_hex().unwrap(),
        format!("{:032x}", ids.trace_id())
    );
}

#[test]
fn exponential_histograms_keep_the_latest_twenty() {
    let capture = Capture::new();
    nemo_lens_core::pin_histogram_aggregation(
        "exp.latency",
        nemo_lens::telemetry::HistogramAggregation::Base2Exponential,
    );
    let histogram = capture.meter().f64_histogram("exp.latency").build();
    for n in 1..=25 {
        // The ring takes one every 1 ms / 20: these are spaced past that.
        std::thread::sleep(GAP);
        exemplar::in_span(Some(span(n)), || histogram.record(n as f64, &[]));
    }
    let held = capture.exemplars("exp.latency", &[]);
    let values: Vec<f64> = held.iter().map(|e| e.value).collect();
    assert_eq!(values, (6..=25).map(f64::from).collect::<Vec<_>>());
    // On the classic buckets at powers of two: the latest of each.
    let text = capture.openmetrics();
    assert!(text.contains("le=\"32\"} 25 # {trace_id="), "{text}");
    assert!(text.contains("} 25 "), "{text}");
}

#[test]
fn a_renderer_given_to_setup_serves_exemplars_as_negotiated() {
    let _turn = crate::support::exclusive();
    let config = NemoLensConfig::from_lookup(EnvLookup::from_pairs([
        ("NEMO_LENS_ENABLED", "1"),
        ("OTEL_SERVICE_NAME", "exemplars"),
    ]))
    .unwrap();
    let (reader, renderer) = PrometheusRenderer::new(&config.prometheus_resource_labels).unwrap();
    let telemetry = SetupOptions::new()
        .env(EnvLookup::from_pairs([("X", "1")]))
        .allow_reinit(true)
        .set_global(false)
        .probe_gpus(false)
        .metric_reader(reader)
        .setup(&config, 0, 1)
        .unwrap();
    let ttft = telemetry
        .meter
        .f64_histogram("ttft")
        .with_unit("s")
        .with_boundaries(vec![0.5, 1.0])
        .build();
    exemplar::in_span(Some(span(5)), || ttft.record(0.75, &[]));

    // What Prometheus 2.42 sends without and with native histograms.
    let openmetrics = "application/openmetrics-text;version=1.0.0,application/openmetrics-text;\
                       version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1";
    let exposition = renderer.render_for(Some(openmetrics)).unwrap();
    assert_eq!(Format::negotiate(Some(openmetrics)), Format::OpenMetrics);
    assert!(exposition
        .content_type
        .starts_with("application/openmetrics-text; version=1.0.0"));
    let body = String::from_utf8(exposition.body).unwrap();
    let line = body.lines().find(|l| l.contains("le=\"1\"")).unwrap();
    let expected = format!(
        "# {{trace_id=\"{:032x}\",span_id=\"{:016x}\"}} 0.75 ",
        span(5).trace_id(),
        span(5).span_id()
    );
    assert!(line.contains(&expected), "{line}");
    assert!(body.ends_with("# EOF\n"));

    let text = renderer
        .render_for(Some("text/plain;version=0.0.4"))
        .unwrap();
    assert!(!String::from_utf8(text.body).unwrap().contains(" # {"));

    let protobuf = renderer.render_as(Format::Protobuf).unwrap();
    let mut bytes = &protobuf.body[..];
    let mut found = None;
    while !bytes.is_empty() {
        let family = MetricFamily::decode_length_delimited(&mut bytes).unwrap();
        if family.name == "ttft_seconds" {
            found = Some(family);
        }
    }
    let histogram = found.unwrap().metric[0].histogram.clone().unwrap();
    let with: Vec<_> = histogram
        .bucket
        .iter()
        .filter(|b| b.exemplar.is_some())
        .collect();
    assert_eq!(with.len(), 1);
    assert_eq!(with[0].upper_bound, 1.0);
    let exemplar = with[0].exemplar.clone().unwrap();
    assert_eq!(exemplar.value, 0.75);
    assert!(exemplar.timestamp.unwrap().seconds > 1_700_000_000);
    let labels: Vec<(String, String)> = exemplar
        .label
        .into_iter()
        .map(|l| (l.name, l.value))
        .collect();
    assert_eq!(
        labels,
        [
            ("trace_id".into(), format!("{:032x}", span(5).trace_id())),
            ("span_id".into(), format!("{:016x}", span(5).span_id())),
        ]
    );
    telemetry.shutdown().unwrap();
}

#[test]
fn a_bad_filter_names_the_variable() {
    let error = NemoLensConfig::from_lookup(EnvLookup::from_pairs([(
        "OTEL_METRICS_EXEMPLAR_FILTER",
        "sometimes",
    )]))
    .unwrap_err();
    let message = error.to_string();
    assert!(
        message.contains("OTEL_METRICS_EXEMPLAR_FILTER"),
        "{message}"
    );
    assert!(message.contains("sometimes"), "{message}");
    for (value, filter) in [
        ("always_on", ExemplarFilter::AlwaysOn),
        ("always_off", ExemplarFilter::AlwaysOff),
        ("trace_based", ExemplarFilter::TraceBased),
    ] {
        let config = NemoLensConfig::from_lookup(EnvLookup::from_pairs([(
            "OTEL_METRICS_EXEMPLAR_FILTER",
            value,
        )]))
        .unwrap();
        assert_eq!(config.exemplar_filter, filter);
    }
    let unset = NemoLensConfig::from_lookup(EnvLookup::from_pairs([("X", "1")])).unwrap();
    assert_eq!(unset.exemplar_filter, ExemplarFilter::TraceBased);
}

/// What a process records with a context observer of its own installed
/// before nemo-lens's: `own` (which forwards to `SpanObserver` or not)
/// counts the attaches and detaches it sees.
mod own_observer {
    use super::*;
    use nemo_lens::opentelemetry::context::{ContextObserver, GlobalContextObserver};
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    static SEEN: AtomicUsize = AtomicUsize::new(0);

    struct Own {
        forwards: bool,
    }

    impl ContextObserver for Own {
        fn on_context_enter(&self, from: &Context, to: &Context) {
            SEEN.fetch_add(1, Ordering::Relaxed);
            if self.forwards {
                exemplar::SpanObserver.on_context_enter(from, to);
            }
        }
        fn on_context_exit(&self, from: &Context, to: &Context) {
            SEEN.fetch_add(1, Ordering::Relaxed);
            if self.forwards {
                exemplar::SpanObserver.on_context_exit(from, to);
            }
        }
    }

    /// Records before, in and after a sampled span, on the test's thread
    /// and on a fresh one: each keeps the exemplar of the record in the
    /// span only, and every value is counted.
    fn records_in_and_out_of_a_span() {
        let capture = Capture::new();
        let histogram = latency(&capture);
        let ids = span(21);
        let sampled =
            Context::new().with_remote_span_context(span_context(ids, TraceFlags::SAMPLED));
        let record = |in_span: f64| {
            histogram.record(0.5, &[]);
            {
                let _current = sampled.clone().attach();
                histogram.record(in_span, &[]);
            }
            histogram.record(0.7, &[]);
        };
        record(2.0);
        std::thread::sleep(GAP);
        std::thread::scope(|s| {
            s.spawn(|| record(3.0));
        });
        let held = capture.exemplars("latency", &[]);
        let values: Vec<f64> = held.iter().map(|e| e.value).collect();
        assert_eq!(values, [2.0, 3.0], "{held:?}");
        assert!(held.iter().all(|e| e.span == Some(ids)));
        assert_eq!(capture.count("latency", &[]), Some(6));
        let sum = capture.sum("latency", &[]).unwrap();
        assert!((sum - 7.4).abs() < 1e-9, "{sum}");
        assert!(
            SEEN.load(Ordering::Relaxed) >= 4,
            "its own observer still runs"
        );
    }

    #[test]
    fn one_that_does_not_forward_is_kept_and_records_read_the_context() {
        crate::support::own_process!(
            one_that_does_not_forward_is_kept_and_records_read_the_context
        );
        GlobalContextObserver::set(Arc::new(Own { forwards: false }));
        assert!(
            !exemplar::SpanObserver::install(),
            "the process's own stays"
        );
        records_in_and_out_of_a_span();
    }

    #[test]
    fn one_that_forwards_keeps_nemo_lens_told() {
        crate::support::own_process!(one_that_forwards_keeps_nemo_lens_told);
        GlobalContextObserver::set(Arc::new(Own { forwards: true }));
        exemplar::SpanObserver::forwarded();
        records_in_and_out_of_a_span();
    }
}

/// A process whose histograms keep no exemplars installs no context
/// observer: one of its own, installed after it recorded, is the
/// process's and sees every attach.
#[test]
fn without_exemplars_no_observer_is_installed() {
    crate::support::own_process!(without_exemplars_no_observer_is_installed);
    use nemo_lens::opentelemetry::context::{ContextObserver, GlobalContextObserver};
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    static SEEN: AtomicUsize = AtomicUsize::new(0);
    struct Own;
    impl ContextObserver for Own {
        fn on_context_enter(&self, _: &Context, _: &Context) {
            SEEN.fetch_add(1, Ordering::Relaxed);
        }
        fn on_context_exit(&self, _: &Context, _: &Context) {
            SEEN.fetch_add(1, Ordering::Relaxed);
        }
    }
    let capture = Capture::with_exemplar_filter(ExemplarFilter::AlwaysOff);
    let histogram = capture.meter().f64_histogram("latency").build();
    histogram.record(0.5, &[]);
    std::thread::scope(|s| {
        s.spawn(|| histogram.record(0.7, &[]));
    });
    GlobalContextObserver::set(Arc::new(Own));
    drop(Context::new().attach());
    assert_eq!(SEEN.load(Ordering::Relaxed), 2, "its own is the process's");
    assert_eq!(capture.count("latency", &[]), Some(2));
    assert!(capture.exemplars("latency", &[]).is_empty());
}
