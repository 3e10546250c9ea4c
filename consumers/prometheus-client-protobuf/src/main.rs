//! The `prometheus-client-registry` program again, with the crate's
//! `protobuf` feature on in the graph.

#[path = "../../prometheus-client-registry/src/main.rs"]
mod registry;

fn main() {
    registry::main();
    println!("prometheus-client-protobuf: the same, with the protobuf feature on");
}
