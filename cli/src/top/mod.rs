//! `nemo-lens top`: a live terminal view of the golden signals of a fleet's
//! Prometheus endpoints (nemo-lens services, vLLM, SGLang, Dynamo's
//! frontend, services on the metrics or registry bridge), with rl and gym
//! views of trainers and gym servers.
//!
//! Each refresh reads every endpoint at once, each within a timeout
//! ([`fetch`]); a read becomes per-replica numbers in the endpoint's
//! vocabulary ([`vocabulary`], [`reading`]); two reads make rates and, from
//! bucket deltas, percentiles ([`distribution`], [`stats`]), merged across
//! replicas before the percentile is taken. [`view`] draws it with ratatui;
//! [`json`] writes it for scripts.

pub mod distribution;
pub mod exposition;
pub mod fetch;
pub mod fleet;
pub mod json;
pub mod reading;
pub mod slo;
pub mod stats;
pub mod view;
pub mod vocabulary;

use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

use ratatui::backend::TestBackend;
use ratatui::crossterm::event::{self, Event, KeyCode, KeyEventKind, KeyModifiers};
use ratatui::Terminal;

pub use fleet::Fleet;
pub use view::{Mode, Screen};

/// What `nemo-lens top` was asked for.
#[derive(Debug, Clone)]
pub struct Options {
    /// Endpoints, as given.
    pub urls: Vec<String>,
    /// Between refreshes.
    pub interval: Duration,
    /// Each read's limit.
    pub timeout: Duration,
    /// Two reads, one table (or object), then exit.
    pub once: bool,
    /// JSON instead of a table.
    pub json: bool,
    /// The view to start in.
    pub mode: Mode,
    /// Latency objectives whose attainment each row estimates from its
    /// histograms (`--slo`, aiperf's `--goodput` syntax).
    pub slo: Option<nemo_lens::slo::Slo>,
}

/// Runs `top`; errors only from the terminal itself (replicas that fail
/// show as down or stale).
pub fn run(options: &Options) -> std::io::Result<()> {
    let mut fleet = Fleet::new(&options.urls, options.timeout);
    if options.once || !std::io::stdout().is_terminal() {
        fleet.refresh();
        std::thread::sleep(options.interval);
        fleet.refresh();
        return print(&fleet, options);
    }
    if options.json {
        loop {
            let started = Instant::now();
            fleet.refresh();
            print(&fleet, options)?;
            std::thread::sleep(options.interval.saturating_sub(started.elapsed()));
        }
    }
    live(&mut fleet, options)
}

/// One table or JSON object on stdout.
fn print(fleet: &Fleet, options: &Options) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    if options.json {
        let (rows, all) = fleet.rows();
        writeln!(out, "{}", json::object(&rows, &all, options.slo.as_ref()))?;
        return out.flush();
    }
    let screen = Screen {
        mode: options.mode,
        selected: usize::MAX,
        interval: options.interval.as_secs_f64(),
        keys: false,
    };
    writeln!(out, "{}", render_text(fleet, &screen, 160))?;
    if let Some(objectives) = &options.slo {
        let (rows, all) = fleet.rows();
        writeln!(
            out,
            "objectives met, estimated from each histogram's buckets over the interval:"
        )?;
        for row in rows.iter().chain(rows.len().ne(&1).then_some(&all)) {
            let estimates = slo::estimates(objectives, &row.interval);
            writeln!(out, "  {}: {}", view::label(row), slo::text(&estimates))?;
        }
    }
    // The table cuts a reason short; printed once, it is read in full.
    for row in fleet.rows().0 {
        if let (Some(why), fleet::Status::Down | fleet::Status::Stale) = (&row.error, row.status) {
            writeln!(out, "{} is {}: {why}", row.url, row.status.as_str())?;
        }
    }
    out.flush()
}

/// The view as plain text, `width` columns wide and as tall as it needs.
pub fn render_text(fleet: &Fleet, screen: &Screen, width: u16) -> String {
    let height = (fleet.rows().0.len() as u16 + 6).max(match screen.mode {
        Mode::Detail => 24,
        _ => 6,
    });
    let mut terminal = Terminal::new(TestBackend::new(width, height)).expect("a test backend");
    terminal
        .draw(|frame| view::draw(frame, fleet, screen))
        .expect("drawing on a test backend");
    let buffer = terminal.backend().buffer();
    (0..buffer.area.height)
        .map(|y| {
            (0..buffer.area.width)
                .map(|x| buffer[(x, y)].symbol())
                .collect::<String>()
                .trim_end()
                .to_owned()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The full-screen view until `q`.
fn live(fleet: &mut Fleet, options: &Options) -> std::io::Result<()> {
    let mut terminal = ratatui::init();
    let mut screen = Screen {
        mode: options.mode,
        selected: 0,
        interval: options.interval.as_secs_f64(),
        keys: true,
    };
    let result = (|| -> std::io::Result<()> {
        let mut next = Instant::now();
        loop {
            if Instant::now() >= next {
                fleet.refresh();
                next = Instant::now() + options.interval;
            }
            terminal.draw(|frame| view::draw(frame, fleet, &screen))?;
            let wait = next.saturating_duration_since(Instant::now());
            if !event::poll(wait)? {
                continue;
            }
            let Event::Key(key) = event::read()? else {
                continue;
            };
            if key.kind != KeyEventKind::Press {
                continue;
            }
            let rows = fleet.rows().0.len();
            match key.code {
                KeyCode::Char('q') => return Ok(()),
                KeyCode::Char('c') if key.modifiers.contains(KeyModifiers::CONTROL) => {
                    return Ok(())
                }
                KeyCode::Up => screen.selected = screen.selected.saturating_sub(1),
                KeyCode::Down => {
                    screen.selected = (screen.selected + 1).min(rows.saturating_sub(1))
                }
                KeyCode::Enter if screen.mode == Mode::Serving => screen.mode = Mode::Detail,
                KeyCode::Esc => screen.mode = Mode::Serving,
                KeyCode::Char('s') => screen.mode = Mode::Serving,
                KeyCode::Char('r') => screen.mode = Mode::Rl,
                KeyCode::Char('g') => screen.mode = Mode::Gym,
                _ => {}
            }
        }
    })();
    // The terminal comes back whatever happened.
    ratatui::restore();
    result
}
