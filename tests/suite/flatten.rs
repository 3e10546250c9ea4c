//! `#[derive(Attributes)]` groups flattened into instrument sets: their
//! attributes (and defaults) go on every instrument, or on those `only(..)`
//! names.

use nemo_lens::testing::Capture;
use nemo_lens::{Attributes, Instruments};

/// What every set of one service carries.
#[derive(Attributes, Default, Clone, Debug)]
pub struct Service {
    /// The model served.
    #[attribute("gen_ai.request.model")]
    pub model: Option<String>,
    /// The region, `local` unless set.
    #[attribute("cloud.region", default = "local")]
    pub region: Option<String>,
    /// The serving port.
    #[attribute("server.port")]
    pub port: Option<u16>,
}

/// A request, with the service's attributes on both instruments.
#[derive(Instruments, Default)]
struct Request {
    /// Time to answer.
    #[histogram("app.request.duration", unit = "s")]
    duration_s: Option<f64>,
    /// Requests answered.
    #[counter("app.requests", unit = "{request}")]
    requests: Option<u64>,
    /// Why it failed, on the duration only.
    #[attribute("error.type", only(duration_s))]
    error: Option<String>,
    /// The service.
    #[flatten]
    service: Service,
}

/// A set that scopes the group to one instrument.
#[derive(Instruments, Default)]
struct Batch {
    /// Batch size.
    #[histogram("app.batch.size", unit = "{request}")]
    size: Option<u64>,
    /// Batches in flight.
    #[up_down_counter("app.batches.active", unit = "{batch}")]
    active: Option<i64>,
    /// The service, on the batch size only.
    #[flatten(only(size))]
    service: Service,
}

/// The attribute sets of `name`'s series, each as `key=value,..`.
fn attrs(c: &Capture, name: &str) -> Vec<String> {
    c.attribute_sets(name)
        .into_iter()
        .map(|set| {
            set.iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect::<Vec<_>>()
                .join(",")
        })
        .collect()
}

#[test]
fn a_flattened_group_goes_on_every_instrument_with_its_defaults() {
    let c = Capture::new();
    let service = Service::default().model("llama-3-8b").port(8000);
    Request::default()
        .duration_s(0.25)
        .requests(1)
        .error("timeout")
        .service(service.clone())
        .record(c.meter());
    assert_eq!(
        attrs(&c, "app.request.duration"),
        ["cloud.region=local,error.type=timeout,gen_ai.request.model=llama-3-8b,server.port=8000"]
    );
    // error.type is scoped to the duration; the group is not.
    assert_eq!(
        attrs(&c, "app.requests"),
        ["cloud.region=local,gen_ai.request.model=llama-3-8b,server.port=8000"]
    );
    // An unset group still carries its defaults.
    Request::default().requests(2).record(c.meter());
    assert_eq!(
        attrs(&c, "app.requests"),
        [
            "cloud.region=local",
            "cloud.region=local,gen_ai.request.model=llama-3-8b,server.port=8000",
        ]
    );
    assert_eq!(
        c.sum("app.requests", &[("server.port", "8000")]),
        Some(1.0),
        "an integer attribute matches its decimal text"
    );
}

#[test]
fn flatten_only_scopes_the_group() {
    let c = Capture::new();
    Batch::default()
        .size(8)
        .active(1)
        .service(Service::default().region("eu-west-1"))
        .record(c.meter());
    assert_eq!(attrs(&c, "app.batch.size"), ["cloud.region=eu-west-1"]);
    assert_eq!(attrs(&c, "app.batches.active"), [""]);
}

#[test]
fn the_unbound_path_past_the_limit_exports_the_same_attributes() {
    let c = Capture::new();
    // More distinct combinations than the bound-handle map keeps.
    let limit = nemo_lens::__private::BOUND_LIMIT;
    for i in 0..(limit + 3) {
        Request::default()
            .requests(1)
            .service(Service::default().model(format!("m{i}")))
            .record(c.meter());
    }
    let last = format!("m{}", limit + 2);
    let series = [
        ("gen_ai.request.model", last.as_str()),
        ("cloud.region", "local"),
    ];
    assert_eq!(c.sum("app.requests", &series), Some(1.0));
}

#[test]
fn descriptors_list_the_group_attributes_in_declaration_order() {
    let duration = Request::DESCRIPTORS
        .iter()
        .find(|d| d.name == "app.request.duration")
        .unwrap();
    assert_eq!(
        duration.attribute_keys,
        [
            "error.type",
            "gen_ai.request.model",
            "cloud.region",
            "server.port"
        ]
    );
    let region = duration.attributes[2];
    assert_eq!(
        (region.key, region.values, region.default),
        ("cloud.region", None, Some("local"))
    );
    // only(size): the batch size carries the group, the counter nothing.
    let by_name = |name: &str| Batch::DESCRIPTORS.iter().find(|d| d.name == name).unwrap();
    assert_eq!(
        by_name("app.batch.size").attribute_keys,
        ["gen_ai.request.model", "cloud.region", "server.port"]
    );
    assert!(by_name("app.batches.active").attribute_keys.is_empty());
    assert_eq!(<Service as nemo_lens::Attributes>::KEYS.len(), 3);
}
