//! Series that end, on a real `/metrics` endpoint: a router whose backends
//! come and go keeps its exposition and memory bounded, with time driven by
//! a manual clock (no sleeps), and the metrics bridge's histograms expire
//! as its counters do.

use crate::support::exclusive;

use std::collections::{BTreeMap, BTreeSet};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use nemo_lens::opentelemetry::KeyValue;
use nemo_lens::testing::ManualClock;

use crate::support::servers;
use nemo_lens::{EnvLookup, Instruments, NemoLensConfig, SetupOptions, TelemetryHandle};

/// What a router records per backend.
#[derive(Instruments, Default)]
struct Upstream {
    /// Requests sent to the backend.
    #[counter("router.upstream.requests", unit = "{request}")]
    requests: Option<u64>,
    /// Time the backend took.
    #[histogram("router.upstream.duration", unit = "s", buckets = [0.01, 0.1, 1.0])]
    duration_s: Option<f64>,
    /// Requests waiting on the backend.
    #[up_down_counter("router.upstream.in_flight", unit = "{request}")]
    in_flight: Option<i64>,
    /// The backend's address.
    #[attribute("server.address")]
    backend: Option<String>,
}

const TIMEOUT: Duration = Duration::from_secs(60);
const SCRAPE: Duration = Duration::from_secs(15);
const LIVE: usize = 50;
const ADDRESSES: usize = 100_000;
/// Backends that leave per scrape: 100,000 addresses in 4,000 scrapes.
const CHURN: usize = 25;

fn telemetry(clock: Arc<ManualClock>, extra: &[(&str, &str)]) -> TelemetryHandle {
    let mut pairs = vec![
        ("NEMO_LENS_ENABLED", "1"),
        ("NEMO_LENS_EXPORTER", "prometheus"),
        ("OTEL_EXPORTER_PROMETHEUS_HOST", "127.0.0.1"),
        ("OTEL_EXPORTER_PROMETHEUS_PORT", "0"),
        ("NEMO_LENS_PROMETHEUS_RESOURCE_LABELS", "none"),
    ];
    pairs.extend_from_slice(extra);
    let config = NemoLensConfig::from_lookup(EnvLookup::from_pairs(pairs)).unwrap();
    SetupOptions::new()
        .env(EnvLookup::from_pairs([("X", "1")]))
        .allow_reinit(true)
        .set_global(false)
        .probe_gpus(false)
        .series_clock(clock)
        .setup(&config, 0, 1)
        .unwrap()
}

fn scrape(addr: SocketAddr) -> String {
    servers::http_get(addr.port(), "/metrics").expect("a scrape")
}

/// Each sample of `family` (its own lines, `_count` etc. spelt out) by
/// its `server_address`, for the samples named `sample`.
fn by_address(body: &str, sample: &str) -> BTreeMap<String, f64> {
    body.lines()
        .filter(|l| l.starts_with(&format!("{sample}{{")))
        .filter_map(|l| {
            let address = l.split("server_address=\"").nth(1)?.split('"').next()?;
            let value = l.rsplit_once(' ')?.1.parse().ok()?;
            Some((address.to_owned(), value))
        })
        .collect()
}

fn rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap()
}

/// One backend as the test's model has it.
struct Backend {
    address: String,
    /// Requests since its series (re)started.
    requests: u64,
    in_flight: i64,
}

/// 50 live backends churn through 100,000 addresses, 25 leaving at each
/// scrape: most are forgotten when they leave, every fifth leaves without
/// a word (its series end once idle), and one in a thousand leaves a request
/// in flight, which keeps its in-flight series. At every scrape, each
/// instrument's series are exactly the model's (live, departed within the
/// timeout, holding work), every count equals what was recorded, nothing
/// overflows the limit of 200, and memory and the exposition stay flat.
#[test]
fn a_router_s_churning_backends_keep_metrics_bounded() {
    let _serial = exclusive();
    let clock = Arc::new(ManualClock::new());
    let telemetry = telemetry(
        clock.clone(),
        &[
            ("NEMO_LENS_SERIES_IDLE_TIMEOUT", "1m"),
            ("NEMO_LENS_CARDINALITY_LIMIT", "200"),
        ],
    );
    let meter = &telemetry.meter;
    let addr = telemetry.prometheus_addr().unwrap();
    let mut next = 0_usize;
    let mut new_backend = || {
        next += 1;
        Backend {
            address: format!(
                "10.{}.{}.{}:8000",
                next / 65536,
                next / 256 % 256,
                next % 256
            ),
            requests: 0,
            in_flight: 0,
        }
    };
    let mut live: Vec<Backend> = (0..LIVE).map(|_| new_backend()).collect();
    // Departed silently: (address, requests, in flight, when last recorded).
    let mut silent: Vec<(String, u64, i64, Duration)> = Vec::new();
    let mut now = Duration::ZERO;
    let (mut most_series, mut largest_body) = (0, 0);
    let mut rss_after_warm_up = 0;
    let mut scrapes = 0;
    let mut departed = 0;
    while departed + LIVE < ADDRESSES {
        for (i, backend) in live.iter_mut().enumerate() {
            let stuck = departed % 1000 == 0 && i == 0;
            Upstream::default()
                .requests(1)
                .duration_s(0.05)
                .in_flight(1)
                .backend(backend.address.clone())
                .record(meter);
            if !stuck {
                Upstream::default()
                    .in_flight(-1)
                    .backend(backend.address.clone())
                    .record(meter);
            }
            backend.requests += 1;
            backend.in_flight += i64::from(stuck);
        }
        let body = scrape(addr);
        scrapes += 1;
        largest_body = largest_body.max(body.len());
        assert!(!body.contains("otel_metric_overflow"), "{body}");
        // Silent departures end one timeout after their last record, unless
        // they hold a request.
        silent.retain(|(_, _, in_flight, last)| *in_flight != 0 || now - *last < TIMEOUT);
        let mut expected: BTreeMap<String, f64> = live
            .iter()
            .map(|b| (b.address.clone(), b.requests as f64))
            .collect();
        // A request left in flight keeps that series alone.
        expected.extend(
            silent
                .iter()
                .filter(|(_, _, _, last)| now - *last < TIMEOUT)
                .map(|(a, r, _, _)| (a.clone(), *r as f64)),
        );
        let requests = by_address(&body, "router_upstream_requests_total");
        assert_eq!(requests, expected, "scrape {scrapes}");
        let counts = by_address(&body, "router_upstream_duration_seconds_count");
        assert_eq!(counts, expected, "scrape {scrapes}");
        let in_flight = by_address(&body, "router_upstream_in_flight");
        let expected_in_flight: BTreeMap<String, f64> = live
            .iter()
            .map(|b| (b.address.clone(), b.in_flight as f64))
            .chain(silent.iter().map(|(a, _, f, _)| (a.clone(), *f as f64)))
            .collect();
        assert_eq!(in_flight, expected_in_flight, "scrape {scrapes}");
        most_series = most_series.max(requests.len());
        // 25 leave: the first 20 forgotten, the last 5 silently.
        for (n, backend) in live.drain(..CHURN).enumerate() {
            departed += 1;
            if n < 20 && backend.in_flight == 0 {
                let gone = meter.forget(&KeyValue::new("server.address", backend.address));
                assert_eq!(gone.held, 0);
                assert_eq!(gone.series, 3);
            } else {
                silent.push((backend.address, backend.requests, backend.in_flight, now));
            }
        }
        live.extend((0..CHURN).map(|_| new_backend()));
        clock.advance(SCRAPE);
        now += SCRAPE;
        if scrapes == 200 {
            rss_after_warm_up = rss_kib();
        }
    }
    let rss_at_end = rss_kib();
    let stuck = silent.iter().filter(|s| s.2 != 0).count();
    eprintln!(
        "{scrapes} scrapes, {departed} backends departed; at most {most_series} series an \
         instrument ({stuck} of them holding work at the end); largest exposition \
         {largest_body} bytes; RSS {rss_after_warm_up} KiB after 200 scrapes, {rss_at_end} KiB \
         at the end"
    );
    // 50 live and the 5 silent departures of each of the last 4 scrapes.
    assert!(most_series <= LIVE + 4 * 5, "{most_series}");
    assert!(
        rss_at_end < rss_after_warm_up + 8 * 1024,
        "RSS grew from {rss_after_warm_up} KiB to {rss_at_end} KiB"
    );
    assert!(largest_body < 100 * 1024, "{largest_body} bytes");
    telemetry.shutdown().unwrap();
}

/// `start_at_zero` series never end of idleness; a set's other series do.
#[test]
fn start_at_zero_series_stay_while_others_end() {
    /// Requests by outcome.
    #[derive(Instruments, Default)]
    struct Served {
        /// Requests that failed.
        #[counter("app.failed", unit = "{request}", start_at_zero)]
        failed: Option<u64>,
        /// Requests served.
        #[counter("app.served", unit = "{request}")]
        served: Option<u64>,
        /// The route.
        #[attribute("http.route")]
        route: Option<Route>,
    }
    #[derive(nemo_lens::AttributeValue, Clone, Copy)]
    enum Route {
        Chat,
        Embed,
    }
    let _serial = exclusive();
    let clock = Arc::new(ManualClock::new());
    let telemetry = telemetry(clock.clone(), &[("NEMO_LENS_SERIES_IDLE_TIMEOUT", "30s")]);
    let addr = telemetry.prometheus_addr().unwrap();
    Served::start_at_zero(&telemetry.meter);
    Served::default()
        .served(1)
        .failed(1)
        .route(Route::Chat)
        .record(&telemetry.meter);
    let body = scrape(addr);
    assert_eq!(by_route(&body, "app_failed_total").len(), 2, "{body}");
    clock.advance(Duration::from_secs(3600));
    let body = scrape(addr);
    let failed = by_route(&body, "app_failed_total");
    assert_eq!(
        failed,
        BTreeMap::from([("Chat".into(), 1.0), ("Embed".into(), 0.0)]),
        "{body}"
    );
    assert!(by_route(&body, "app_served_total").is_empty(), "{body}");
    telemetry.shutdown().unwrap();
}

/// A field that an `only(..)` leaves out of every attribute has one series,
/// like a set without attributes, and never ends of idleness; the set's
/// series that carry an attribute value do. The scheduler's KV-cache gauge
/// and queue time stay through a quiet hour; the finished counts by reason
/// end.
#[test]
fn a_field_no_attribute_reaches_stays_while_keyed_series_end() {
    use nemo_lens::instruments::serving::{FinishReason, SchedulingMetrics};

    let _serial = exclusive();
    let clock = Arc::new(ManualClock::new());
    let telemetry = telemetry(clock.clone(), &[("NEMO_LENS_SERIES_IDLE_TIMEOUT", "30s")]);
    let addr = telemetry.prometheus_addr().unwrap();
    SchedulingMetrics {
        kv_cache_usage: Some(0.25),
        queue_s: Some(0.5),
        finished: Some(1),
        finish_reason: Some(FinishReason::Stop),
        ..SchedulingMetrics::default()
    }
    .record(&telemetry.meter);
    let finished = "nemo_inference_requests_finished_total{";
    let body = scrape(addr);
    assert!(body.contains(finished), "{body}");
    clock.advance(Duration::from_secs(3600));
    let body = scrape(addr);
    let value = |sample: &str| {
        body.lines()
            .filter(|l| l.starts_with(&format!("{sample}{{")))
            .find_map(|l| Some(l.rsplit_once(' ')?.1.to_owned()))
    };
    assert_eq!(
        value("nemo_inference_kv_cache_usage_ratio").as_deref(),
        Some("0.25"),
        "{body}"
    );
    assert_eq!(
        value("nemo_inference_request_queue_duration_seconds_count").as_deref(),
        Some("1"),
        "{body}"
    );
    assert!(!body.contains(finished), "{body}");
    telemetry.shutdown().unwrap();
}

fn by_route(body: &str, sample: &str) -> BTreeMap<String, f64> {
    body.lines()
        .filter(|l| l.starts_with(&format!("{sample}{{")))
        .filter_map(|l| {
            let route = l.split("http_route=\"").nth(1)?.split('"').next()?;
            Some((route.to_owned(), l.rsplit_once(' ')?.1.parse().ok()?))
        })
        .collect()
}

/// The metrics bridge's histograms end when idle, as its counters do;
/// one an application handle holds stays.
#[test]
fn bridged_histograms_expire_unless_held() {
    use metrics_util::MetricKindMask;
    let _serial = exclusive();
    let telemetry = telemetry(Arc::new(ManualClock::new()), &[]);
    let addr = telemetry.prometheus_addr().unwrap();
    let recorder = nemo_lens::metrics_bridge::MetricsBridge::new()
        .set_buckets(&[0.1, 1.0])
        .unwrap()
        .idle_timeout(MetricKindMask::HISTOGRAM, Some(Duration::ZERO))
        .build(&telemetry);
    let held = metrics::with_local_recorder(&recorder, || {
        for pod in ["a", "b"] {
            metrics::histogram!("upstream_seconds", "pod" => pod).record(0.5);
        }
        let held = metrics::histogram!("held_seconds");
        held.record(0.5);
        held
    });
    let families = |body: &str| -> BTreeSet<String> {
        body.lines()
            .filter(|l| l.contains("_seconds_count"))
            .map(|l| l.split(' ').next().unwrap().to_owned())
            .collect()
    };
    let body = scrape(addr);
    assert_eq!(
        families(&body),
        BTreeSet::from([
            "held_seconds_count".to_owned(),
            "upstream_seconds_count{pod=\"a\"}".to_owned(),
            "upstream_seconds_count{pod=\"b\"}".to_owned(),
        ]),
        "{body}"
    );
    std::thread::sleep(Duration::from_millis(5));
    let body = scrape(addr);
    assert_eq!(
        families(&body),
        BTreeSet::from(["held_seconds_count".to_owned()]),
        "{body}"
    );
    // Recorded again: a new series, from nothing.
    metrics::with_local_recorder(&recorder, || {
        metrics::histogram!("upstream_seconds", "pod" => "a").record(2.0);
    });
    held.record(0.05);
    let body = scrape(addr);
    assert!(
        body.contains("upstream_seconds_count{pod=\"a\"} 1\n"),
        "{body}"
    );
    assert!(
        body.contains("upstream_seconds_sum{pod=\"a\"} 2\n"),
        "{body}"
    );
    assert!(body.contains("held_seconds_count 2\n"), "{body}");
    telemetry.shutdown().unwrap();
}

/// One replica of a gateway: its own request series (what the OpenAI
/// layer records) and its calls to three backends (`ModelCall`, one series
/// per `server.address`), all recorded, then a minute and a second of
/// silence. Scoped to `server.address`, the timeout ends the backends'
/// series and keeps the service's, which `nemo-lens top` reads as a zero
/// request rate; process-wide, it ends both, and top has nothing to read.
#[test]
fn a_gateway_s_backends_end_while_its_own_series_stay_and_read_zero_in_top() {
    use nemo_lens_cli::top::exposition::parse_text;
    use nemo_lens_cli::top::fetch::Outcome;
    use nemo_lens_cli::top::Fleet;

    let _serial = exclusive();
    let mut rates = Vec::new();
    for keys in [Some("server.address"), None] {
        let clock = Arc::new(ManualClock::new());
        let mut env = vec![("NEMO_LENS_SERIES_IDLE_TIMEOUT", "1m")];
        env.extend(keys.map(|k| ("NEMO_LENS_SERIES_IDLE_KEYS", k)));
        let telemetry = telemetry(clock.clone(), &env);
        let meter = &telemetry.meter;
        let addr = telemetry.prometheus_addr().unwrap();
        crate::support::gateway::serve(meter, 3, 4);
        let busy = scrape(addr);
        let calls = by_address(&busy, "gen_ai_client_operation_duration_seconds_count");
        let expected: BTreeMap<String, f64> =
            (0..3).map(|b| (format!("10.0.0.{b}"), 4.0)).collect();
        assert_eq!(calls, expected, "{busy}");
        clock.advance(Duration::from_secs(61));
        let quiet = scrape(addr);
        assert!(
            !quiet.contains("server_address=\""),
            "the backends' series end after the timeout either way:\n{quiet}"
        );
        let served = quiet
            .lines()
            .find(|l| l.starts_with("gen_ai_server_request_duration_seconds_count{"));
        match keys {
            Some(_) => assert!(
                served.is_some_and(|l| l.ends_with(" 12")),
                "the service's series stay:\n{quiet}"
            ),
            None => assert_eq!(served, None, "{quiet}"),
        }
        // top reads the replica before and after the silence.
        let url = format!("http://{addr}/metrics");
        let mut fleet = Fleet::new(std::slice::from_ref(&url), Duration::from_secs(1));
        let start = std::time::Instant::now();
        for (n, body) in [&busy, &quiet].into_iter().enumerate() {
            let read = Outcome::Read(parse_text(body).unwrap());
            fleet.record(0, start + Duration::from_secs(n as u64 * 61), read);
        }
        let (rows, _) = fleet.rows();
        rates.push(rows[0].interval.requests_per_s);
        telemetry.shutdown().unwrap();
    }
    assert_eq!(
        rates,
        [Some(0.0), None],
        "scoped: a quiet replica reads 0 requests/s; process-wide: nothing (shown as —)"
    );
}

/// 300 backends in waves of 20 every 0.7 s through a limit of 100, each
/// recorded through a set (whose cache of bound handles holds its
/// series), with a 2 s timeout and a scrape every 2.1 s: at most 60
/// backends were recorded in the last 2 s when a wave comes, so none
/// overflows, and every backend's request reaches a scrape before its
/// series ends.
#[test]
fn backends_in_waves_through_the_limit_end_before_one_overflows() {
    let _serial = exclusive();
    let clock = Arc::new(ManualClock::new());
    let telemetry = telemetry(
        clock.clone(),
        &[
            ("NEMO_LENS_SERIES_IDLE_TIMEOUT", "2s"),
            ("NEMO_LENS_CARDINALITY_LIMIT", "100"),
        ],
    );
    let meter = &telemetry.meter;
    let addr = telemetry.prometheus_addr().unwrap();
    let step = Duration::from_millis(700);
    let every = Duration::from_millis(2100);
    let mut now = Duration::ZERO;
    let mut advance_to = |to: Duration| {
        clock.advance(to - now);
        now = to;
    };
    let mut seen: BTreeMap<String, f64> = BTreeMap::new();
    let read = |seen: &mut BTreeMap<String, f64>| {
        let body = scrape(addr);
        assert!(!body.contains("otel_metric_overflow"), "{body}");
        let requests = by_address(&body, "router_upstream_requests_total");
        assert!(requests.len() <= 100, "{} series", requests.len());
        assert_eq!(
            requests,
            by_address(&body, "router_upstream_duration_seconds_count")
        );
        seen.extend(requests);
    };
    let mut next_scrape = every;
    for wave in 0..15_u32 {
        for n in 0..20 {
            Upstream::default()
                .requests(1)
                .duration_s(0.05)
                .backend(format!("10.0.{wave}.{n}:8000"))
                .record(meter);
        }
        let next_wave = step * (wave + 1);
        while next_scrape <= next_wave {
            advance_to(next_scrape);
            read(&mut seen);
            next_scrape += every;
        }
        advance_to(next_wave);
    }
    read(&mut seen);
    assert_eq!(seen.len(), 300);
    assert!(seen.values().all(|v| *v == 1.0), "{seen:?}");
    telemetry.shutdown().unwrap();
}
