//! The `nemo-lens` command's integration tests in one binary: the
//! generators (catalog, dashboard, rules, with `promtool` where it is
//! installed), `top` against known expositions over HTTP, and `top` on a
//! real pseudo-terminal.

mod commands;
mod goodput_rules;
mod goodput_top;
mod real_metrics;
mod top;
mod top_tty;
mod vocabularies;
