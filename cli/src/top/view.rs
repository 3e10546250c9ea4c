//! What the terminal shows: the serving table (a row per replica, the row
//! of all, the imbalance line), one replica's detail with sparklines, and
//! the rl and gym views. Drawn on any ratatui backend, so tests render it
//! on the test backend.

use ratatui::layout::{Constraint, Layout};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::Line;
use ratatui::widgets::{Block, Borders, Cell, Paragraph, Row as TableRow, Sparkline, Table};
use ratatui::Frame;

use super::distribution::Distribution;
use super::exposition::{Exposition, Value};
use super::fleet::{imbalance, Fleet, Row, Status};
use super::stats::{Percentiles, Stats};

/// Which view is on screen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// The serving table.
    Serving,
    /// One row of the serving table, in detail.
    Detail,
    /// RL trainers' `rl.*` signals.
    Rl,
    /// Gym servers' sandboxes, connection pool and memory.
    Gym,
}

/// What the view needs besides the fleet.
#[derive(Debug, Clone)]
pub struct Screen {
    /// The view on screen.
    pub mode: Mode,
    /// The selected row of the serving table.
    pub selected: usize,
    /// Seconds between refreshes, for the header.
    pub interval: f64,
    /// Whether keys work (a live terminal), so the header lists them.
    pub keys: bool,
}

/// Draws `screen` of `fleet`.
pub fn draw(frame: &mut Frame, fleet: &Fleet, screen: &Screen) {
    let area = frame.area();
    let [header, body, footer] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Min(3),
        Constraint::Length(1),
    ])
    .areas(area);
    let (rows, all) = fleet.rows();
    let up = fleet
        .endpoints
        .iter()
        .filter(|e| e.status() == Status::Up)
        .count();
    let keys = if screen.keys {
        " · q quit · ↑↓ select · enter detail · s serving · r rl · g gym"
    } else {
        ""
    };
    frame.render_widget(
        Paragraph::new(format!(
            "nemo-lens top · {up}/{} endpoints up · every {}s{keys}",
            fleet.endpoints.len(),
            screen.interval
        ))
        .style(Style::default().add_modifier(Modifier::BOLD)),
        header,
    );
    match screen.mode {
        Mode::Serving => {
            serving(frame, body, &rows, &all, screen.selected);
            let line = imbalance(&rows).unwrap_or_else(|| "balanced".to_owned());
            frame.render_widget(Paragraph::new(line), footer);
        }
        Mode::Detail => {
            let selected = screen.selected.min(rows.len().saturating_sub(1));
            if let Some(row) = rows.get(selected) {
                detail(frame, body, fleet, row);
            }
            frame.render_widget(Paragraph::new("esc back"), footer);
        }
        Mode::Rl => {
            table_of(frame, body, fleet, "RL trainers", &RL);
            frame.render_widget(Paragraph::new("histograms over the last interval"), footer);
        }
        Mode::Gym => {
            table_of(frame, body, fleet, "Gym servers", &GYM);
            frame.render_widget(Paragraph::new("histograms over the last interval"), footer);
        }
    }
}

/// A number, `—` when absent.
fn num(value: Option<f64>, digits: usize) -> String {
    value.map_or_else(|| "—".to_owned(), |v| format!("{v:.digits$}"))
}

fn percent(value: Option<f64>) -> String {
    value.map_or_else(|| "—".to_owned(), |v| format!("{:.1}%", v * 100.0))
}

/// Seconds as milliseconds, `p50/p95/p99`.
fn millis(p: Percentiles) -> String {
    let ms = |v: Option<f64>| v.map_or_else(|| "—".to_owned(), |v| format!("{:.0}", v * 1000.0));
    format!("{}/{}/{}", ms(p.p50), ms(p.p95), ms(p.p99))
}

pub(super) fn label(row: &Row) -> String {
    let name = if row.replica.is_empty() {
        row.url.clone()
    } else {
        format!("{} [{}]", row.url, row.replica)
    };
    match (&row.error, row.status) {
        // Why a replica is not up, shortened: the detail view has it all.
        (Some(why), Status::Down | Status::Stale) => {
            let why: String = why.chars().take(40).collect();
            format!("{name} ({why})")
        }
        _ => name,
    }
}

fn status_style(status: Status) -> Style {
    match status {
        Status::Up => Style::default().fg(Color::Green),
        Status::Stale => Style::default().fg(Color::Yellow),
        Status::Down => Style::default().fg(Color::Red),
    }
}

fn cells(stats: &Stats, wide: bool) -> Vec<String> {
    let mut cells = vec![
        num(stats.running, 0),
        num(stats.waiting, 0),
        percent(stats.kv_cache_usage),
        num(stats.requests_per_s, 1),
        num(stats.input_tokens_per_s, 0),
        num(stats.output_tokens_per_s, 0),
        percent(stats.error_rate),
        percent(stats.goodput),
        millis(Percentiles::of(stats.ttft.as_ref())),
    ];
    if wide {
        cells.push(millis(Percentiles::of(stats.tpot.as_ref())));
    }
    cells
}

fn serving(
    frame: &mut Frame,
    area: ratatui::layout::Rect,
    rows: &[Row],
    all: &Row,
    selected: usize,
) {
    // Narrow terminals lose the time-per-token and the window columns.
    let wide = area.width >= 120;
    let mut header = vec![
        "replica",
        "status",
        "run",
        "wait",
        "kv",
        "req/s",
        "in tok/s",
        "out tok/s",
        "err",
        "good",
        "ttft ms p50/95/99",
    ];
    let mut widths = vec![
        Constraint::Min(16),
        Constraint::Length(6),
        Constraint::Length(5),
        Constraint::Length(5),
        Constraint::Length(6),
        Constraint::Length(7),
        Constraint::Length(9),
        Constraint::Length(9),
        Constraint::Length(6),
        Constraint::Length(6),
        Constraint::Length(18),
    ];
    if wide {
        header.extend(["tpot ms p50/95/99", "ttft ms (window)"]);
        widths.extend([Constraint::Length(18), Constraint::Length(18)]);
    }
    let line = |row: &Row, style: Style| {
        let mut values = vec![
            Cell::from(label(row)),
            Cell::from(row.status.as_str()).style(status_style(row.status)),
        ];
        values.extend(cells(&row.interval, wide).into_iter().map(Cell::from));
        if wide {
            values.push(Cell::from(millis(Percentiles::of(
                row.window.ttft.as_ref(),
            ))));
        }
        TableRow::new(values).style(style)
    };
    let mut lines: Vec<TableRow> = rows
        .iter()
        .enumerate()
        .map(|(i, row)| {
            let style = if i == selected {
                Style::default().add_modifier(Modifier::REVERSED)
            } else {
                Style::default()
            };
            line(row, style)
        })
        .collect();
    lines.push(line(all, Style::default().add_modifier(Modifier::BOLD)));
    let table = Table::new(lines, widths)
        .header(TableRow::new(header).style(Style::default().add_modifier(Modifier::UNDERLINED)))
        .block(Block::default().borders(Borders::TOP).title("serving"));
    frame.render_widget(table, area);
}

fn detail(frame: &mut Frame, area: ratatui::layout::Rect, fleet: &Fleet, row: &Row) {
    let history = fleet
        .endpoints
        .iter()
        .find(|e| e.url == row.url)
        .and_then(|e| e.history.get(&row.replica));
    let series = |f: &dyn Fn(&Stats) -> Option<f64>, scale: f64| -> Vec<u64> {
        history
            .map(|h| {
                h.iter()
                    .map(|s| f(s).map_or(0, |v| (v * scale).max(0.0) as u64))
                    .collect()
            })
            .unwrap_or_default()
    };
    let p95 = |d: Option<&Distribution>| Percentiles::of(d).p95;
    let charts: [(&str, Vec<u64>, String); 6] = [
        (
            "running",
            series(&|s| s.running, 1.0),
            num(row.interval.running, 0),
        ),
        (
            "waiting",
            series(&|s| s.waiting, 1.0),
            num(row.interval.waiting, 0),
        ),
        (
            "kv cache",
            series(&|s| s.kv_cache_usage, 100.0),
            percent(row.interval.kv_cache_usage),
        ),
        (
            "req/s",
            series(&|s| s.requests_per_s, 10.0),
            num(row.interval.requests_per_s, 1),
        ),
        (
            "ttft p95 ms",
            series(&|s| p95(s.ttft.as_ref()), 1000.0),
            num(p95(row.interval.ttft.as_ref()).map(|v| v * 1000.0), 0),
        ),
        (
            "tpot p95 ms",
            series(&|s| p95(s.tpot.as_ref()), 1000.0),
            num(p95(row.interval.tpot.as_ref()).map(|v| v * 1000.0), 0),
        ),
    ];
    let [title, grid] = Layout::vertical([Constraint::Length(2), Constraint::Min(0)]).areas(area);
    frame.render_widget(
        Paragraph::new(vec![
            Line::from(format!(
                "{} · {} · {}",
                label(row),
                row.status.as_str(),
                row.vocabulary.unwrap_or("unrecognised")
            )),
            Line::from(row.error.clone().unwrap_or_default()),
        ]),
        title,
    );
    let areas = Layout::vertical([Constraint::Ratio(1, 6); 6]).split(grid);
    for ((name, data, now), area) in charts.iter().zip(areas.iter()) {
        frame.render_widget(
            Sparkline::default()
                .block(
                    Block::default()
                        .borders(Borders::TOP)
                        .title(format!("{name}: {now}")),
                )
                .data(data),
            *area,
        );
    }
}

/// A column of the rl or gym view: a gauge (summed over series matching
/// the label), or a histogram's p95 over the last interval, in ms.
enum Column {
    Gauge(
        &'static str,
        &'static str,
        Option<(&'static str, &'static str)>,
    ),
    P95Ms(&'static str, &'static str, f64),
}

const RL: [Column; 8] = [
    Column::Gauge("reward", "rl_reward_mean", None),
    Column::Gauge("kl", "rl_kl_divergence", None),
    Column::Gauge("policy loss", "rl_policy_loss", None),
    Column::Gauge("entropy", "rl_entropy", None),
    Column::Gauge("grad norm", "rl_grad_norm", None),
    Column::Gauge("tok/s", "rl_throughput_tokens_per_sec_per_second", None),
    Column::P95Ms("gen p95 ms", "rl_generation_duration_ms_milliseconds", 1.0),
    Column::P95Ms("rollout p95 ms", "rl_rollout_duration_ms_milliseconds", 1.0),
];

const GYM: [Column; 7] = [
    Column::Gauge("sandboxes", "gym_sandbox_active", None),
    Column::P95Ms(
        "startup p95 ms",
        "gym_sandbox_startup_duration_ms_milliseconds",
        1.0,
    ),
    Column::P95Ms(
        "exec p95 ms",
        "gym_sandbox_exec_duration_ms_milliseconds",
        1.0,
    ),
    Column::P95Ms(
        "pool queue p95 ms",
        "gym_http_connection_pool_queue_duration_ms_milliseconds",
        1.0,
    ),
    Column::Gauge("servers", "gym_servers_active", None),
    Column::Gauge(
        "server rss MiB",
        "gym_server_memory_usage_bytes",
        Some(("memory_type", "rss")),
    ),
    Column::Gauge("host used MiB", "gym_host_memory_usage_bytes", None),
];

impl Column {
    fn title(&self) -> &'static str {
        match self {
            Column::Gauge(t, ..) | Column::P95Ms(t, ..) => t,
        }
    }

    fn value(&self, now: &Exposition, before: Option<&Exposition>) -> Option<f64> {
        match self {
            Column::Gauge(_, family, only) => {
                let mut values = now
                    .family(family)
                    .filter(|s| only.is_none_or(|(k, v)| s.labels.get(k).is_some_and(|x| x == v)))
                    .filter_map(|s| match s.value {
                        Value::Number(v) => Some(v),
                        _ => None,
                    })
                    .peekable();
                values.peek()?;
                let total: f64 = values.sum();
                Some(if family.ends_with("_bytes") {
                    total / (1024.0 * 1024.0)
                } else {
                    total
                })
            }
            Column::P95Ms(_, family, scale) => {
                let parts: Vec<Distribution> = now
                    .family(family)
                    .filter_map(|s| {
                        let then = before.and_then(|b| {
                            b.family(family)
                                .find(|o| o.labels == s.labels)
                                .map(|o| &o.value)
                        });
                        Distribution::between(then, &s.value)
                    })
                    .collect();
                Distribution::merge(&parts)
                    .quantile(0.95)
                    .map(|v| v * scale)
            }
        }
    }
}

fn table_of(
    frame: &mut Frame,
    area: ratatui::layout::Rect,
    fleet: &Fleet,
    title: &str,
    columns: &[Column],
) {
    let mut header = vec!["endpoint", "status"];
    header.extend(columns.iter().map(Column::title));
    let rows = fleet.endpoints.iter().map(|e| {
        let mut cells = vec![
            Cell::from(e.url.clone()),
            Cell::from(e.status().as_str()).style(status_style(e.status())),
        ];
        cells.extend(columns.iter().map(|c| {
            let value = e
                .last
                .as_ref()
                .and_then(|now| c.value(now, e.previous.as_ref()));
            Cell::from(num(value, 3))
        }));
        TableRow::new(cells)
    });
    let mut widths = vec![Constraint::Min(16), Constraint::Length(6)];
    widths.extend(
        columns
            .iter()
            .map(|c| Constraint::Length(c.title().len().max(8) as u16 + 1)),
    );
    frame.render_widget(
        Table::new(rows, widths)
            .header(
                TableRow::new(header).style(Style::default().add_modifier(Modifier::UNDERLINED)),
            )
            .block(
                Block::default()
                    .borders(Borders::TOP)
                    .title(title.to_owned()),
            ),
        area,
    );
}
