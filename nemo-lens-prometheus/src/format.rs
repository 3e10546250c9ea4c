//! The three exposition formats, what a scraper's `Accept` header asks
//! for, and a rendered scrape.

/// The content type of the text exposition format, version 0.0.4.
pub const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";
/// The content type of the protobuf exposition: length-delimited
/// `io.prometheus.client.MetricFamily` messages.
pub const PROTOBUF_CONTENT_TYPE: &str =
    "application/vnd.google.protobuf; proto=io.prometheus.client.MetricFamily; encoding=delimited";

/// The content type of the OpenMetrics 1.0 text exposition.
pub const OPENMETRICS_CONTENT_TYPE: &str =
    "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// An exposition format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Text, version 0.0.4: what every scraper reads; exponential
    /// histograms as classic buckets; no exemplars (a 0.0.4 parser fails
    /// the whole scrape on one).
    Text,
    /// OpenMetrics 1.0 text, what Prometheus asks for first: the text
    /// exposition with exemplars on histogram buckets.
    OpenMetrics,
    /// Protobuf: native histograms; what Prometheus asks for with
    /// `--enable-feature=native-histograms`.
    Protobuf,
}

impl Format {
    /// The format to answer a request with `Accept: accept`: the one the
    /// scraper weighs highest (`q`, 1 when absent; the earlier entry on a
    /// tie). Protobuf is the delimited `io.prometheus.client.MetricFamily`
    /// media type; OpenMetrics is `application/openmetrics-text` of version
    /// 1.0.0 (or none given); text answers `text/plain`, `text/*` and
    /// `*/*`. No header, or none listed with a non-zero weight, is text.
    pub fn negotiate(accept: Option<&str>) -> Format {
        let Some(accept) = accept else {
            return Format::Text;
        };
        // (weight, position) of the best entry of each format.
        let mut protobuf: Option<(f64, usize)> = None;
        let mut openmetrics: Option<(f64, usize)> = None;
        let mut text: Option<(f64, usize)> = None;
        for (position, entry) in accept.split(',').enumerate() {
            let mut parts = entry.split(';').map(str::trim);
            let media = parts.next().unwrap_or_default().to_ascii_lowercase();
            let (mut proto, mut delimited, mut weight) = (false, false, 1.0);
            let mut version_1 = true;
            for parameter in parts {
                let Some((key, value)) = parameter.split_once('=') else {
                    continue;
                };
                let value = value.trim().trim_matches('"');
                match key.trim().to_ascii_lowercase().as_str() {
                    "proto" => proto = value == "io.prometheus.client.MetricFamily",
                    "encoding" => delimited = value == "delimited",
                    "q" => weight = value.parse().unwrap_or(0.0),
                    "version" => version_1 = value == "1.0.0",
                    _ => {}
                }
            }
            if weight <= 0.0 {
                continue;
            }
            let best = match media.as_str() {
                "application/vnd.google.protobuf" if proto && delimited => &mut protobuf,
                "application/openmetrics-text" if version_1 => &mut openmetrics,
                "text/plain" | "text/*" | "*/*" => &mut text,
                _ => continue,
            };
            if best.is_none_or(|(w, _)| weight > w) {
                *best = Some((weight, position));
            }
        }
        // Highest weight, then earliest; text when nothing was listed.
        [
            (protobuf, Format::Protobuf),
            (openmetrics, Format::OpenMetrics),
            (text, Format::Text),
        ]
        .into_iter()
        .filter_map(|(best, format)| best.map(|(weight, at)| (weight, at, format)))
        .max_by(|a, b| a.0.total_cmp(&b.0).then(b.1.cmp(&a.1)))
        .map_or(Format::Text, |(_, _, format)| format)
    }

    /// The `Content-Type` of an exposition in this format.
    pub fn content_type(self) -> &'static str {
        match self {
            Format::Text => CONTENT_TYPE,
            Format::OpenMetrics => OPENMETRICS_CONTENT_TYPE,
            Format::Protobuf => PROTOBUF_CONTENT_TYPE,
        }
    }
}

/// A rendered scrape: the body and the `Content-Type` to send it with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Exposition {
    /// [`CONTENT_TYPE`], [`OPENMETRICS_CONTENT_TYPE`] or
    /// [`PROTOBUF_CONTENT_TYPE`].
    pub content_type: &'static str,
    /// The exposition.
    pub body: Vec<u8>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prometheus_gets_protobuf_with_native_histograms_openmetrics_without_and_others_text() {
        // The Accept headers Prometheus 2.42 sends with and without
        // --enable-feature=native-histograms.
        let native = "application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;\
                      encoding=delimited,application/openmetrics-text;version=1.0.0;q=0.8,\
                      application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;\
                      q=0.5,*/*;q=0.1";
        let classic = "application/openmetrics-text;version=1.0.0,application/openmetrics-text;\
                       version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1";
        assert_eq!(Format::negotiate(Some(native)), Format::Protobuf);
        assert_eq!(Format::negotiate(Some(classic)), Format::OpenMetrics);
        // OpenMetrics of another version, or weighed below text, is not chosen.
        let old = "application/openmetrics-text;version=0.0.1,text/plain;q=0.5";
        assert_eq!(Format::negotiate(Some(old)), Format::Text);
        let lighter = "application/openmetrics-text;q=0.2,text/plain;q=0.5";
        assert_eq!(Format::negotiate(Some(lighter)), Format::Text);
        assert_eq!(
            Format::negotiate(Some("application/openmetrics-text")),
            Format::OpenMetrics
        );
        assert_eq!(Format::negotiate(None), Format::Text);
        assert_eq!(Format::negotiate(Some("*/*")), Format::Text);
        // The higher weight wins, whatever the order.
        let text_first = "text/plain;version=0.0.4;q=0.6,\
                          application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;\
                          encoding=delimited;q=0.5";
        assert_eq!(Format::negotiate(Some(text_first)), Format::Text);
        let proto_heavier = "text/plain;q=0.4,application/vnd.google.protobuf;\
                             proto=io.prometheus.client.MetricFamily;encoding=delimited;q=0.9";
        assert_eq!(Format::negotiate(Some(proto_heavier)), Format::Protobuf);
        // Another protobuf, a text encoding, or a zero weight is not ours.
        for other in [
            "application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=text",
            "application/vnd.google.protobuf;proto=other.Message;encoding=delimited",
            "application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited;q=0",
        ] {
            assert_eq!(Format::negotiate(Some(other)), Format::Text, "{other}");
        }
    }
}
