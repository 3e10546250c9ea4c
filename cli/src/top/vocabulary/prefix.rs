//! Dynamo's frontend under another prefix: `DYN_METRICS_PREFIX` (or
//! `--metrics-prefix`) replaces `dynamo_frontend` in every frontend name.

use std::borrow::Cow;

use crate::top::exposition::{Exposition, Series, Value};

/// The frontend's default prefix, which the `dynamo` vocabulary reads.
pub const DYNAMO_FRONTEND_PREFIX: &str = "dynamo_frontend";

/// `exposition` with a renamed Dynamo frontend's families under
/// [`DYNAMO_FRONTEND_PREFIX`], or as it is. A prefix `P` is taken for a
/// frontend's by its shape, not by any one name (other servers have a
/// `*_requests_total` too): `P_requests_total` with a `status` label, a
/// `P_time_to_first_token_seconds` histogram, and one of the frontend's
/// request gauges (`P_active_requests`, `P_inflight_requests`,
/// `P_queued_requests`).
pub fn normalise_dynamo_prefix(exposition: &Exposition) -> Cow<'_, Exposition> {
    let Some(prefix) = renamed_prefix(exposition) else {
        return Cow::Borrowed(exposition);
    };
    let series = exposition
        .series
        .iter()
        .map(|s| {
            let family = match s.family.strip_prefix(prefix) {
                Some(rest) if rest.starts_with('_') => format!("{DYNAMO_FRONTEND_PREFIX}{rest}"),
                _ => s.family.clone(),
            };
            Series {
                family,
                ..s.clone()
            }
        })
        .collect();
    Cow::Owned(Exposition { series })
}

fn renamed_prefix(exposition: &Exposition) -> Option<&str> {
    const REQUESTS: &str = "_requests_total";
    exposition
        .series
        .iter()
        .filter(|s| s.labels.contains_key("status"))
        .filter_map(|s| s.family.strip_suffix(REQUESTS))
        .filter(|p| *p != DYNAMO_FRONTEND_PREFIX && !p.is_empty())
        .find(|p| {
            let ttft = format!("{p}_time_to_first_token_seconds");
            let histogram = exposition
                .family(&ttft)
                .any(|s| matches!(s.value, Value::Histogram { .. }));
            let gauge = ["active_requests", "inflight_requests", "queued_requests"]
                .iter()
                .any(|g| exposition.has(&format!("{p}_{g}")));
            histogram && gauge
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::top::exposition::parse_text;
    use crate::top::vocabulary::recognise;

    #[test]
    fn a_renamed_frontend_is_read_as_dynamo_s() {
        let body = "# TYPE acme_llm_requests_total counter\n\
            acme_llm_requests_total{model=\"m\",status=\"success\"} 7\n\
            # TYPE acme_llm_active_requests gauge\n\
            acme_llm_active_requests{model=\"m\"} 2\n\
            # TYPE acme_llm_time_to_first_token_seconds histogram\n\
            acme_llm_time_to_first_token_seconds_bucket{model=\"m\",le=\"+Inf\"} 7\n\
            acme_llm_time_to_first_token_seconds_sum{model=\"m\"} 1.5\n\
            acme_llm_time_to_first_token_seconds_count{model=\"m\"} 7\n";
        let exposition = parse_text(body).unwrap();
        assert!(recognise(&exposition).is_none());
        let renamed = normalise_dynamo_prefix(&exposition);
        assert_eq!(recognise(&renamed).map(|v| v.name), Some("dynamo"));
        assert!(renamed.has("dynamo_frontend_active_requests"));
    }

    #[test]
    fn another_server_s_requests_total_is_left_alone() {
        let body = "# TYPE app_requests_total counter\n\
            app_requests_total{status=\"200\"} 7\n";
        let exposition = parse_text(body).unwrap();
        assert!(matches!(
            normalise_dynamo_prefix(&exposition),
            Cow::Borrowed(_)
        ));
    }
}
