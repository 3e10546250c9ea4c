//! A router on `metrics` 0.24 exporting through the metrics bridge.

#[path = "../../common/router.rs"]
#[macro_use]
pub mod router;

pub fn main() {
    let (telemetry, renderer) = router::telemetry();
    let recorder = router::bridge(&telemetry);
    record_router!(metrics, &recorder);
    router::check(&renderer, "metrics 0.24");
    telemetry.shutdown().unwrap();
}
