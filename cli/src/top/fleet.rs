//! Every endpoint `top` watches, its last reads, and the rows a view shows:
//! per replica and for all replicas, over the last interval and a longer
//! window, with each replica's history for sparklines.

use std::collections::{BTreeMap, VecDeque};
use std::time::{Duration, Instant};

use super::exposition::Exposition;
use super::fetch::{read_all, Outcome, Target};
use super::reading::Reading;
use super::stats::Stats;

/// Refreshes kept: the longer window, and the sparklines' length.
pub const HISTORY: usize = 60;

/// How a replica's endpoint answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// Read at the last refresh.
    Up,
    /// Not read at the last refresh, but earlier: the row shows the last
    /// values read.
    Stale,
    /// Never read, or not for the whole window.
    Down,
}

impl Status {
    /// Its name in the view and in JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Up => "up",
            Status::Stale => "stale",
            Status::Down => "down",
        }
    }
}

/// One endpoint.
#[derive(Debug)]
pub struct Endpoint {
    /// As given on the command line.
    pub url: String,
    target: Result<Target, String>,
    /// Successful reads, oldest first, at most `HISTORY + 1`.
    reads: VecDeque<(Instant, Reading)>,
    /// The last exposition read, for the rl and gym views.
    pub last: Option<Exposition>,
    /// The one before: histograms over the last interval.
    pub previous: Option<Exposition>,
    /// Why the last refresh failed, if it did.
    pub error: Option<String>,
    failures: usize,
    /// Each replica's interval stats, oldest first, at most `HISTORY`.
    pub history: BTreeMap<String, VecDeque<Stats>>,
}

/// One row of the serving view.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// The endpoint, as given on the command line.
    pub url: String,
    /// The replica label's value, `""` for a one-replica endpoint.
    pub replica: String,
    /// The vocabulary recognised, if any.
    pub vocabulary: Option<&'static str>,
    /// How the endpoint answered.
    pub status: Status,
    /// Why the last read failed, if it did.
    pub error: Option<String>,
    /// Over the last interval.
    pub interval: Stats,
    /// Over the longer window (up to `HISTORY` refreshes).
    pub window: Stats,
}

/// The endpoints and their reads.
#[derive(Debug)]
pub struct Fleet {
    /// In the order given.
    pub endpoints: Vec<Endpoint>,
    timeout: Duration,
}

impl Fleet {
    /// Endpoints from command-line URLs; one that does not parse shows as
    /// down with the reason.
    pub fn new(urls: &[String], timeout: Duration) -> Fleet {
        Fleet {
            endpoints: urls
                .iter()
                .map(|url| Endpoint {
                    url: url.clone(),
                    target: Target::parse(url),
                    reads: VecDeque::new(),
                    last: None,
                    previous: None,
                    error: None,
                    failures: 0,
                    history: BTreeMap::new(),
                })
                .collect(),
            timeout,
        }
    }

    /// Reads every endpoint once, all at once.
    pub fn refresh(&mut self) {
        let targets: Vec<Option<Target>> = self
            .endpoints
            .iter()
            .map(|e| e.target.clone().ok())
            .collect();
        let readable: Vec<Target> = targets.iter().flatten().cloned().collect();
        let mut outcomes = read_all(&readable, self.timeout).into_iter();
        let now = Instant::now();
        for (endpoint, target) in self.endpoints.iter_mut().zip(&targets) {
            let outcome = match (target, &endpoint.target) {
                (Some(_), _) => outcomes
                    .next()
                    .unwrap_or(Outcome::Failed("not read".into())),
                (None, Err(why)) => Outcome::Failed(why.clone()),
                (None, Ok(_)) => Outcome::Failed("not read".into()),
            };
            endpoint.record(now, outcome);
        }
    }

    /// Takes `outcome` as endpoint `i`'s read at `at` (what `refresh` does,
    /// for reads made elsewhere: tests, benches).
    pub fn record(&mut self, i: usize, at: Instant, outcome: Outcome) {
        self.endpoints[i].record(at, outcome);
    }

    /// A row per replica of every endpoint, then the row of them all.
    pub fn rows(&self) -> (Vec<Row>, Row) {
        let rows: Vec<Row> = self.endpoints.iter().flat_map(Endpoint::rows).collect();
        let live: Vec<&Row> = rows.iter().filter(|r| r.status != Status::Down).collect();
        let all = Row {
            url: "all".into(),
            replica: String::new(),
            vocabulary: None,
            status: if live.is_empty() {
                Status::Down
            } else {
                Status::Up
            },
            error: None,
            interval: Stats::all(live.iter().map(|r| &r.interval)),
            window: Stats::all(live.iter().map(|r| &r.window)),
        };
        (rows, all)
    }
}

impl Endpoint {
    fn record(&mut self, at: Instant, outcome: Outcome) {
        match outcome {
            Outcome::Read(exposition) => {
                let reading = Reading::of(&exposition);
                self.failures = 0;
                self.error = None;
                self.reads.push_back((at, reading));
                while self.reads.len() > HISTORY + 1 {
                    self.reads.pop_front();
                }
                self.previous = self.last.replace(exposition);
                for (replica, stats) in self.interval_stats() {
                    let history = self.history.entry(replica).or_default();
                    history.push_back(stats);
                    while history.len() > HISTORY {
                        history.pop_front();
                    }
                }
            }
            Outcome::Failed(why) => {
                self.failures += 1;
                self.error = Some(why);
            }
        }
    }

    /// How the endpoint answered lately.
    pub fn status(&self) -> Status {
        match (self.failures, self.reads.is_empty()) {
            (_, true) => Status::Down,
            (0, false) => Status::Up,
            (n, false) if n <= HISTORY => Status::Stale,
            _ => Status::Down,
        }
    }

    /// Stats between the last two reads, by replica.
    fn interval_stats(&self) -> BTreeMap<String, Stats> {
        self.stats_since(self.reads.len().saturating_sub(2))
    }

    /// Stats between read `from` and the last, by replica.
    fn stats_since(&self, from: usize) -> BTreeMap<String, Stats> {
        let Some((now_at, now)) = self.reads.back() else {
            return BTreeMap::new();
        };
        let before = (from + 1 < self.reads.len()).then(|| &self.reads[from]);
        now.replicas
            .iter()
            .map(|(name, replica)| {
                let (seconds, then) = match before {
                    Some((then_at, then)) => (
                        now_at.duration_since(*then_at).as_secs_f64(),
                        then.replicas.get(name),
                    ),
                    None => (0.0, None),
                };
                (name.clone(), Stats::between(then, replica, seconds))
            })
            .collect()
    }

    fn rows(&self) -> Vec<Row> {
        let status = self.status();
        let interval = self.interval_stats();
        let window = self.stats_since(0);
        let vocabulary = self.reads.back().and_then(|(_, r)| r.vocabulary);
        if interval.is_empty() {
            return vec![Row {
                url: self.url.clone(),
                replica: String::new(),
                vocabulary,
                status,
                error: self.error.clone().or_else(|| {
                    (vocabulary.is_none() && !self.reads.is_empty())
                        .then(|| "no serving metrics recognised".to_owned())
                }),
                interval: Stats::default(),
                window: Stats::default(),
            }];
        }
        interval
            .into_iter()
            .map(|(replica, stats)| Row {
                url: self.url.clone(),
                window: window.get(&replica).cloned().unwrap_or_default(),
                replica,
                vocabulary,
                status,
                error: self.error.clone(),
                interval: stats,
            })
            .collect()
    }
}

/// The replica that stands out, if one does: its queue (running plus
/// waiting) at least twice the others' median and at least 4 more, or its
/// TTFT p95 at least twice the others' median. Says which and why.
pub fn imbalance(rows: &[Row]) -> Option<String> {
    let up: Vec<&Row> = rows.iter().filter(|r| r.status == Status::Up).collect();
    if up.len() < 2 {
        return None;
    }
    let name = |r: &Row| {
        if r.replica.is_empty() {
            r.url.clone()
        } else {
            format!("{} [{}]", r.url, r.replica)
        }
    };
    let median = |mut values: Vec<f64>| {
        values.sort_by(f64::total_cmp);
        values.get(values.len() / 2).copied()
    };
    let queue = |r: &Row| Some(r.interval.running? + r.interval.waiting.unwrap_or(0.0));
    let ttft = |r: &Row| super::stats::Percentiles::of(r.interval.ttft.as_ref()).p95;
    for (what, value, floor, unit) in [
        ("queue", &queue as &dyn Fn(&Row) -> Option<f64>, 4.0_f64, ""),
        ("TTFT p95", &ttft as &dyn Fn(&Row) -> Option<f64>, 0.0, " s"),
    ] {
        let mut worst: Option<(&Row, f64, f64)> = None;
        for row in &up {
            let Some(v) = value(row) else { continue };
            let others: Vec<f64> = up
                .iter()
                .filter(|o| !std::ptr::eq(**o, *row))
                .filter_map(|o| value(o))
                .collect();
            let Some(m) = median(others) else { continue };
            if v >= 2.0 * m
                && v - m >= floor.max(f64::EPSILON)
                && worst.is_none_or(|w| v - m > w.1 - w.2)
            {
                worst = Some((row, v, m));
            }
        }
        if let Some((row, v, m)) = worst {
            return Some(format!(
                "imbalance: {} {what} {v:.3}{unit} against a median of {m:.3}{unit} on the others",
                name(row)
            ));
        }
    }
    None
}
