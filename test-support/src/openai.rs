//! What the OpenAI layer's tests share: one exchange with a router, and
//! the exported points they read back.

use axum::body::Body;
use axum::http::{header, Request, StatusCode};
use axum::Router;
use http_body_util::BodyExt;
use tower::ServiceExt;

use crate::{Harness, Point, Value};

pub const DURATION: &str = "gen_ai.server.request.duration";
pub const TTFT: &str = "gen_ai.server.time_to_first_token";
pub const TPOT: &str = "gen_ai.server.time_per_output_token";
pub const TOKENS: &str = "gen_ai.client.token.usage";

/// Sends `body` to `path` and reads the whole response.
pub async fn exchange(app: Router, path: &str, body: &str) -> (StatusCode, String) {
    let request = Request::post(path)
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from(body.to_owned()))
        .unwrap();
    let response = app.oneshot(request).await.unwrap();
    let status = response.status();
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    (status, String::from_utf8_lossy(&bytes).into_owned())
}

/// The one point of `name`.
pub fn single(harness: &Harness, name: &str) -> Point {
    let mut points = harness.points_of(name);
    assert_eq!(points.len(), 1, "{name}: {points:#?}");
    points.remove(0)
}

/// A histogram point's count and sum.
pub fn histogram(point: &Point) -> (u64, f64) {
    match point.value {
        Value::Histogram { count, sum, .. } => (count, sum),
        Value::Number(_) => panic!("{} is not a histogram", point.name),
    }
}

/// The count and sum of the `kind` (`input`, `output`) token histogram.
pub fn tokens(harness: &Harness, kind: &str) -> Option<(u64, f64)> {
    harness
        .points_of(TOKENS)
        .into_iter()
        .find(|p| p.str_attr("gen_ai.token.type") == Some(kind))
        .map(|p| histogram(&p))
}

/// Sends `body` to `path`, reads `frames` frames of the response, and goes
/// away: the client that leaves mid-stream.
pub async fn leave_after(app: Router, path: &str, body: &'static str, frames: usize) {
    let request = Request::post(path).body(Body::from(body)).unwrap();
    let response = app.oneshot(request).await.unwrap();
    let mut body = response.into_body();
    for _ in 0..frames {
        body.frame().await.unwrap().unwrap();
    }
}
