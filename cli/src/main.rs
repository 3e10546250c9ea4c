//! `nemo-lens`: the catalog, a Grafana dashboard and Prometheus rules for the
//! built-in instrument sets, on stdout.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand, ValueEnum};
use nemo_lens::groups::SpecFile;
use nemo_lens::slo::Slo;
use nemo_lens::telemetry::HistogramAggregation;
use nemo_lens::SemconvOptIn;
use nemo_lens_cli::{
    builtin_group, builtin_sets_for, spec_sets, unreleased_sets, AlertPolicy, BuiltinGroup, Engine,
    GoodputPolicy, InstrumentSet,
};

/// Generated from the nemo-lens instrument declarations; each subcommand
/// writes to stdout.
#[derive(Parser)]
#[command(name = "nemo-lens", version)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Every instrument: name, kind, unit, description, buckets, attribute
    /// keys (with their values when fixed, and "at most N series" when all
    /// are) and Prometheus names.
    Catalog {
        /// Output format.
        #[arg(long, value_enum, default_value_t = Format::Md)]
        format: Format,
        #[command(flatten)]
        sets: Sets,
    },
    /// A Grafana dashboard (JSON model) to import.
    Dashboard {
        #[command(flatten)]
        sets: Sets,
    },
    /// Prometheus recording and alerting rules (YAML) for `rule_files`.
    Rules {
        #[command(flatten)]
        sets: Sets,
        #[command(flatten)]
        goodput: GoodputArgs,
    },
    /// A live view of the golden signals of Prometheus endpoints: nemo-lens
    /// services, vLLM, SGLang, Dynamo (frontend and workers), TensorRT-LLM,
    /// smg, llama.cpp, services on the metrics bridge. `q` quits; without a terminal, or with --once, it prints one
    /// table (or JSON object) and exits.
    Top {
        /// Endpoints: http://host:port/metrics, or host:port (default:
        /// nemo-lens's own, http://127.0.0.1:9464/metrics).
        #[arg(value_name = "URL")]
        urls: Vec<String>,
        /// Seconds between refreshes (with --once: between the two reads).
        #[arg(long, default_value_t = 2.0, value_parser = seconds)]
        interval: f64,
        /// Seconds one read may take (default: the interval, at most 2).
        #[arg(long, value_parser = seconds)]
        timeout: Option<f64>,
        /// Read every endpoint twice, print once and exit.
        #[arg(long)]
        once: bool,
        /// JSON: one object per refresh.
        #[arg(long)]
        json: bool,
        /// What to show.
        #[arg(long, value_enum, default_value_t = TopView::Serving)]
        view: TopView,
        /// Print every name each server vocabulary reads, and the release
        /// it was read from, then exit.
        #[arg(long)]
        vocabularies: bool,
        /// Latency objectives in aiperf's --goodput syntax: with --once or
        /// --json, each one's attainment over the interval, estimated from
        /// the endpoint's histograms (any engine), with the range it lies in
        /// when a target falls between bucket bounds.
        #[arg(long, value_name = "OBJECTIVES", value_parser = slo)]
        slo: Option<Slo>,
    },
}

#[derive(Clone, Copy, ValueEnum)]
enum TopView {
    /// Inference replicas: queues, KV cache, rates, errors, TTFT and TPOT.
    Serving,
    /// RL trainers: the rl.* gauges and generation and rollout times.
    Rl,
    /// Gym servers: sandboxes, the connection pool's queue, memory.
    Gym,
}

fn seconds(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(s) if s.is_finite() && s > 0.0 => Ok(s),
        _ => Err(format!("{text:?} is not a positive number of seconds")),
    }
}

fn top(
    urls: Vec<String>,
    interval: f64,
    timeout: Option<f64>,
    once: bool,
    json: bool,
    view: TopView,
    slo: Option<Slo>,
) -> ExitCode {
    let urls = if urls.is_empty() {
        vec!["http://127.0.0.1:9464/metrics".to_owned()]
    } else {
        urls
    };
    let options = nemo_lens_cli::top::Options {
        urls,
        interval: std::time::Duration::from_secs_f64(interval),
        timeout: std::time::Duration::from_secs_f64(timeout.unwrap_or(interval.min(2.0))),
        once,
        json,
        mode: match view {
            TopView::Serving => nemo_lens_cli::top::Mode::Serving,
            TopView::Rl => nemo_lens_cli::top::Mode::Rl,
            TopView::Gym => nemo_lens_cli::top::Mode::Gym,
        },
        slo,
    };
    match nemo_lens_cli::top::run(&options) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("nemo-lens top: {e}");
            ExitCode::FAILURE
        }
    }
}

#[derive(Clone, Copy, ValueEnum)]
enum Format {
    /// Markdown tables.
    Md,
    /// JSON.
    Json,
}

#[derive(clap::Args)]
struct Sets {
    /// A built-in set to cover; repeatable (default: all of them).
    #[arg(long = "set", value_name = "SET", value_enum)]
    only: Vec<Builtin>,
    /// The names a service records with this OTEL_SEMCONV_STABILITY_OPT_IN
    /// value: `gen_ai_latest_experimental` for the GenAI draft's token
    /// metrics, `gen_ai_latest_experimental/dup` for both (default: none,
    /// Python nemo-lens's names).
    // An Option rather than a "" default, which help would show as
    // `[default: ""]`.
    #[arg(long = "semconv-opt-in", value_name = "VALUE")]
    semconv_opt_in: Option<String>,
    /// The service's OTEL_EXPORTER_OTLP_METRICS_DEFAULT_HISTOGRAM_AGGREGATION:
    /// with `base2_exponential_bucket_histogram`, quantile queries read the
    /// native histograms a Prometheus with native histograms stores, and the
    /// classic buckets any other one does (default: each histogram as
    /// declared, explicit buckets unless pinned otherwise).
    #[arg(
        long = "histogram-aggregation",
        value_name = "AGGREGATION",
        value_parser = histogram_aggregation
    )]
    histogram_aggregation: Option<HistogramAggregation>,
    /// A spec file of runtime metric groups (`{"groups": {"GROUP": [..]}}`,
    /// Lens's MetricSpec fields) whose groups are added to the built-in
    /// sets; repeatable. A spec breaking the rules is an error naming each
    /// key and rule.
    #[arg(long = "spec", value_name = "FILE")]
    specs: Vec<PathBuf>,
}

/// `rules --slo`: goodput's recording rules and burn-rate alerts.
#[derive(Args)]
struct GoodputArgs {
    /// Latency objectives in aiperf's --goodput syntax (the service's
    /// NEMO_LENS_SLO), e.g. "time_to_first_token:300 inter_token_latency:20":
    /// adds the nemo-lens-goodput group, burn-rate alerts on the goodput
    /// counter (and, with --engine, on the latency histograms).
    #[arg(long, value_name = "OBJECTIVES", value_parser = slo)]
    slo: Option<Slo>,
    /// The share of requests that must meet every objective.
    #[arg(long, default_value_t = 0.99, requires = "slo")]
    objective: f64,
    /// The SLO window the remaining error budget is read over.
    #[arg(long, default_value = "28d", requires = "slo", value_parser = prometheus_duration)]
    window: String,
    /// Alert on this engine's latency histograms too, one objective at a
    /// time (for engines that count no goodput): each target must be a
    /// bucket bound.
    #[arg(long, value_enum, requires = "slo")]
    engine: Option<EngineArg>,
}

#[derive(Clone, Copy, PartialEq, ValueEnum)]
enum EngineArg {
    /// A nemo-lens service's gen_ai.server.* histograms.
    NemoLens,
    /// vLLM's vllm:*_seconds histograms.
    Vllm,
}

fn slo(value: &str) -> Result<Slo, String> {
    Slo::parse(value).map_err(|e| e.to_string())
}

/// A Prometheus duration of one unit: `28d`, `4w`, `720h`.
fn prometheus_duration(value: &str) -> Result<String, String> {
    let digits = value.trim_end_matches(|c: char| c.is_ascii_alphabetic());
    let unit = &value[digits.len()..];
    match (digits.parse::<u64>(), unit) {
        (Ok(n), "m" | "h" | "d" | "w" | "y") if n > 0 => Ok(value.to_owned()),
        _ => Err(format!(
            "expected a Prometheus duration such as 28d, 4w or 720h, not `{value}`"
        )),
    }
}

fn histogram_aggregation(value: &str) -> Result<HistogramAggregation, String> {
    HistogramAggregation::from_name(value).ok_or_else(|| {
        format!(
            "expected `explicit_bucket_histogram` or `base2_exponential_bucket_histogram`, \
             not `{value}`"
        )
    })
}

#[derive(Clone, Copy, PartialEq, ValueEnum)]
enum Builtin {
    /// `InferenceMetrics`, `ModelCallMetrics` (gen_ai.*) and
    /// `SchedulingMetrics` (nemo.inference.*).
    Inference,
    /// `RlMetrics` (rl.*).
    Rl,
    /// `GymMetrics` and NeMo-Gym 0.7.0's sets (gym.*).
    Gym,
    /// The instruments of an unreleased NeMo-Gym commit that no release
    /// records (`gym::unreleased`); only when asked for.
    GymUnreleased,
}

impl Sets {
    /// The chosen built-in sets and the spec files' groups, or every
    /// problem of every spec file.
    fn chosen(&self) -> Result<Vec<InstrumentSet>, String> {
        let mut sets = self.builtin();
        let mut errors = Vec::new();
        for path in &self.specs {
            match SpecFile::load(path) {
                Ok(file) => {
                    sets.extend(spec_sets(&file).into_iter().map(|set| self.aggregated(set)))
                }
                // Its Debug is the sentence (naming the file) and the cause.
                Err(e) => errors.push(format!("{e:?}")),
            }
        }
        if errors.is_empty() {
            Ok(sets)
        } else {
            Err(errors.join("\n"))
        }
    }

    fn aggregated(&self, set: InstrumentSet) -> InstrumentSet {
        match self.histogram_aggregation {
            Some(default) => set.for_histogram_aggregation(default),
            None => set,
        }
    }

    fn builtin(&self) -> Vec<InstrumentSet> {
        let opt_in = self
            .semconv_opt_in
            .as_deref()
            .map_or_else(SemconvOptIn::none, SemconvOptIn::parse);
        let chosen = |group: Builtin| {
            if self.only.is_empty() {
                // Unreleased instruments are never a default.
                group != Builtin::GymUnreleased
            } else {
                self.only.contains(&group)
            }
        };
        let released = builtin_sets_for(&opt_in)
            .into_iter()
            .enumerate()
            .filter(|(position, _)| {
                chosen(match builtin_group(*position) {
                    BuiltinGroup::Inference => Builtin::Inference,
                    BuiltinGroup::Rl => Builtin::Rl,
                    BuiltinGroup::Gym => Builtin::Gym,
                })
            })
            .map(|(_, set)| set);
        let unreleased = unreleased_sets()
            .into_iter()
            .filter(|_| chosen(Builtin::GymUnreleased));
        released
            .chain(unreleased)
            .map(|set| self.aggregated(set))
            .collect()
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let sets = match cli.command {
        Command::Top {
            urls,
            interval,
            timeout,
            once,
            json,
            view,
            vocabularies,
            slo,
        } => {
            if vocabularies {
                for vocabulary in nemo_lens_cli::top::vocabulary::VOCABULARIES {
                    println!("{}", vocabulary.describe());
                }
                return ExitCode::SUCCESS;
            }
            return top(urls, interval, timeout, once, json, view, slo);
        }
        Command::Catalog { ref sets, .. }
        | Command::Dashboard { ref sets }
        | Command::Rules { ref sets, .. } => sets,
    };
    let chosen = match sets.chosen() {
        Ok(chosen) => chosen,
        Err(e) => {
            eprintln!("nemo-lens: {e}");
            return ExitCode::from(2);
        }
    };
    let output = match cli.command {
        Command::Catalog { format, .. } => match format {
            Format::Md => nemo_lens_cli::catalog_markdown(&chosen),
            Format::Json => pretty(&nemo_lens_cli::catalog_json(&chosen)),
        },
        Command::Dashboard { .. } => pretty(&nemo_lens_cli::dashboard(&chosen)),
        Command::Rules { ref goodput, .. } => {
            let mut file = nemo_lens_cli::rules(&chosen, &AlertPolicy::default());
            if let Some(slo) = &goodput.slo {
                match goodput_rules_of(slo, goodput) {
                    Ok(rules) => file.goodput = rules,
                    Err(e) => {
                        eprintln!("nemo-lens: {e}");
                        return ExitCode::from(2);
                    }
                }
            }
            file.to_yaml()
        }
        Command::Top { .. } => unreachable!("handled above"),
    };
    let mut stdout = std::io::stdout().lock();
    match stdout
        .write_all(output.as_bytes())
        .and_then(|()| stdout.flush())
    {
        Ok(()) => ExitCode::SUCCESS,
        // A closed pipe (`| head`) is not worth a panic.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("nemo-lens: writing to stdout: {e}");
            ExitCode::FAILURE
        }
    }
}

/// The goodput rules of `rules --slo`, on the built-in goodput counter.
fn goodput_rules_of(slo: &Slo, args: &GoodputArgs) -> Result<nemo_lens_cli::GoodputRules, String> {
    let instruments: Vec<_> = nemo_lens_cli::builtin_sets()
        .iter()
        .flat_map(|set| set.instruments())
        .collect();
    let judged = instruments
        .iter()
        .find(|i| i.name == nemo_lens_cli::promql::JUDGED)
        .ok_or("the goodput counter is not declared")?;
    let policy = GoodputPolicy {
        slo: slo.clone(),
        objective: args.objective,
        window: args.window.clone(),
        engine: args.engine.map(|engine| match engine {
            EngineArg::NemoLens => Engine::NemoLens,
            EngineArg::Vllm => Engine::Vllm,
        }),
    };
    nemo_lens_cli::goodput_rules(&policy, judged, &instruments)
}

fn pretty(value: &serde_json::Value) -> String {
    // Serializing a Value cannot fail; fall back to the compact form anyway.
    serde_json::to_string_pretty(value).unwrap_or_else(|_| value.to_string()) + "\n"
}
