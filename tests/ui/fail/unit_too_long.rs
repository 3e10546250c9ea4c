use nemo_lens::Instruments;

#[derive(Instruments)]
struct Metrics {
    /// Bytes moved.
    #[counter("app.io", unit = "{bytes_moved_between_the_host_and_the_device_over_the_pcie_bus_x16}")]
    io: Option<u64>,
}

fn main() {}
