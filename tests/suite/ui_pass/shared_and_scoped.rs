//! A field sharing an instrument states only its attr(..); an attribute
//! scoped with only(..) is attached to the fields it lists.

use nemo_lens::opentelemetry::metrics::MeterProvider as _;
use nemo_lens::opentelemetry_sdk::metrics::{
    InMemoryMetricExporter, PeriodicReader, SdkMeterProvider,
};
use nemo_lens::{Instruments, Meter};

#[derive(Instruments, Default)]
struct Call {
    /// Call duration.
    #[histogram("app.call.duration", unit = "s", buckets = [0.1, 1, 10])]
    duration_s: Option<f64>,
    /// Bytes sent and received.
    #[histogram("app.call.payload", unit = "By", buckets = [1, 1024], attr("direction" = "sent"))]
    sent: Option<u64>,
    /// Bytes received: the same instrument, told apart by its attribute.
    #[histogram("app.call.payload", attr("direction" = "received"))]
    received: Option<u64>,
    /// Why the call failed; on the duration only.
    #[attribute("error.type", only(duration_s))]
    error_type: Option<&'static str>,
}

#[test]
fn shared_and_scoped() {
    let bytes = Call::DESCRIPTORS
        .iter()
        .filter(|d| d.name == "app.call.payload");
    for descriptor in bytes {
        assert_eq!(descriptor.unit, "By");
        assert_eq!(descriptor.description, "Bytes sent and received.");
        assert_eq!(descriptor.buckets, Some(&[1.0, 1024.0][..]));
        assert_eq!(descriptor.attribute_keys, &["direction"]);
    }
    assert_eq!(Call::DESCRIPTORS[0].attribute_keys, &["error.type"]);

    let exporter = InMemoryMetricExporter::default();
    let provider = SdkMeterProvider::builder()
        .with_reader(PeriodicReader::builder(exporter.clone()).build())
        .build();
    let meter = Meter::from(provider.meter("test"));
    Call::default()
        .duration_s(2.0)
        .sent(10)
        .received(20)
        .error_type("timeout")
        .record(&meter);
    provider.force_flush().unwrap();
    let exported = format!("{:?}", exporter.get_finished_metrics().unwrap());
    assert!(exported.contains("error.type"));
    assert_eq!(
        exported.matches("error.type").count(),
        1,
        "on the duration only"
    );
}
