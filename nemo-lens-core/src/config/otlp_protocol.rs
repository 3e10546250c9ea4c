//! The OTLP transport a configuration names, whether or not this build can
//! export over OTLP (a configuration is read, and checked, either way).

/// OTLP transport (`OTEL_EXPORTER_OTLP_METRICS_PROTOCOL`, else
/// `OTEL_EXPORTER_OTLP_PROTOCOL`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OtlpProtocol {
    /// `grpc`, the default.
    Grpc,
    /// `http/protobuf`.
    HttpProtobuf,
}

impl OtlpProtocol {
    /// The value of `OTEL_EXPORTER_OTLP_PROTOCOL` that selects this transport.
    pub fn as_str(self) -> &'static str {
        match self {
            OtlpProtocol::Grpc => "grpc",
            OtlpProtocol::HttpProtobuf => "http/protobuf",
        }
    }
}
