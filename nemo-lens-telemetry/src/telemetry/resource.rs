//! The OpenTelemetry resource that identifies one rank of one run.
//!
//! Attributes, later sources overriding earlier ones:
//!
//! | attribute | source |
//! |---|---|
//! | `telemetry.sdk.*` | the Rust SDK |
//! | anything | `OTEL_RESOURCE_ATTRIBUTES` |
//! | `service.name` | `OTEL_SERVICE_NAME` (default `nemo`) |
//! | `service.version` | [`SetupOptions::service_version`](super::SetupOptions::service_version), else `OTEL_RESOURCE_ATTRIBUTES`; unset otherwise (as in Python nemo-lens) |
//! | `dl.rank`, `dl.world_size` | the arguments of `setup_telemetry`, or the launcher's variables ([`JobRank`](super::JobRank)) |
//! | `nv.dl.rank`, `nv.dl.world_size` | the same, on a gym server ([`SetupOptions::gym_server`](super::SetupOptions::gym_server)), as NeMo-Gym 0.7.0 writes them |
//! | `nemo.run.id` | `NEMO_LENS_RUN_ID`, else the launcher's job: `TORCHELASTIC_RUN_ID` (unless `none`), `SLURM_JOB_ID`, `PMIX_NAMESPACE`, `PBS_JOBID`, `LSB_JOBID`; else 12 random hex digits, with a warning once when the world size is above 1 |
//! | `service.instance.id` | `{run_id}-rank{rank}` |
//! | `nemo.user.id` | `NEMO_LENS_USER_ID` |
//! | `deployment.environment` | `DEPLOYMENT_ENV`, else `ENVIRONMENT` |
//! | `host.name`, `process.pid` | the operating system |
//! | `host.gpu.count` | the GPUs of `nvidia-smi -L` that `CUDA_VISIBLE_DEVICES` makes visible ([`visible_gpus`]); without a driver, the entries of `CUDA_VISIBLE_DEVICES` |
//! | `slurm.job.id`, `slurm.job.name`, `slurm.job.partition`, `slurm.job.num_nodes`, `slurm.job.num_tasks`, `slurm.node.id`, `slurm.proc.id`, `slurm.local.id`, `slurm.cluster.name` | `SLURM_JOB_ID`, `SLURM_JOB_NAME`, `SLURM_JOB_PARTITION`, `SLURM_NNODES`, `SLURM_NTASKS`, `SLURM_NODEID`, `SLURM_PROCID`, `SLURM_LOCALID`, `SLURM_CLUSTER_NAME` |
//! | `k8s.pod.name` | `K8S_POD_NAME`, else `POD_NAME`, else `HOSTNAME` when `KUBERNETES_SERVICE_HOST` is set |
//! | `k8s.namespace.name` | `K8S_NAMESPACE`, else `POD_NAMESPACE` |
//! | `k8s.node.name` | `K8S_NODE_NAME`, else `NODE_NAME` |
//! | `k8s.pod.uid` | `K8S_POD_UID`, else `POD_UID` |
//! | `k8s.container.name` | `K8S_CONTAINER_NAME` |
//! | anything | [`SetupOptions::resource_attribute`](super::SetupOptions::resource_attribute) |

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use opentelemetry::KeyValue;
use opentelemetry_sdk::resource::{Resource, ResourceDetector, TelemetryResourceDetector};

use super::config::NemoLensConfig;
use super::env::EnvLookup;
use nemo_lens_core::__internal::named_count;
use nemo_lens_core::{visible_gpus, GpuId};

/// Environment variables copied into `slurm.*` attributes.
pub const SLURM_ATTRIBUTES: [(&str, &str); 9] = [
    ("slurm.job.id", "SLURM_JOB_ID"),
    ("slurm.job.name", "SLURM_JOB_NAME"),
    ("slurm.job.partition", "SLURM_JOB_PARTITION"),
    ("slurm.job.num_nodes", "SLURM_NNODES"),
    ("slurm.job.num_tasks", "SLURM_NTASKS"),
    ("slurm.node.id", "SLURM_NODEID"),
    ("slurm.proc.id", "SLURM_PROCID"),
    ("slurm.local.id", "SLURM_LOCALID"),
    ("slurm.cluster.name", "SLURM_CLUSTER_NAME"),
];

/// Environment variables copied into `k8s.*` attributes, first found wins.
pub const K8S_ATTRIBUTES: [(&str, &[&str]); 5] = [
    ("k8s.pod.name", &["K8S_POD_NAME", "POD_NAME"]),
    ("k8s.namespace.name", &["K8S_NAMESPACE", "POD_NAMESPACE"]),
    ("k8s.node.name", &["K8S_NODE_NAME", "NODE_NAME"]),
    ("k8s.pod.uid", &["K8S_POD_UID", "POD_UID"]),
    // Not bare CONTAINER_NAME: container runtimes outside Kubernetes set it.
    ("k8s.container.name", &["K8S_CONTAINER_NAME"]),
];

/// Every key nemo-lens may put on the resource, set in some environments
/// and absent in others: a Prometheus label list may name them all.
pub(crate) const MAY_SET: [&str; 34] = [
    "service.name",
    // What a gym server sets through `SetupOptions::gym_server`.
    "nemo.gym.server.name",
    "nemo.gym.server.type",
    "nemo.gym.service_group",
    "nemo.gym.version",
    "service.version",
    "service.instance.id",
    "dl.rank",
    "dl.world_size",
    // A gym server's rank, as NeMo-Gym 0.7.0 writes it.
    "nv.dl.rank",
    "nv.dl.world_size",
    "nemo.run.id",
    "nemo.user.id",
    "deployment.environment",
    "host.name",
    "process.pid",
    "host.gpu.count",
    "telemetry.sdk.name",
    "telemetry.sdk.language",
    "telemetry.sdk.version",
    SLURM_ATTRIBUTES[0].0,
    SLURM_ATTRIBUTES[1].0,
    SLURM_ATTRIBUTES[2].0,
    SLURM_ATTRIBUTES[3].0,
    SLURM_ATTRIBUTES[4].0,
    SLURM_ATTRIBUTES[5].0,
    SLURM_ATTRIBUTES[6].0,
    SLURM_ATTRIBUTES[7].0,
    SLURM_ATTRIBUTES[8].0,
    K8S_ATTRIBUTES[0].0,
    K8S_ATTRIBUTES[1].0,
    K8S_ATTRIBUTES[2].0,
    K8S_ATTRIBUTES[3].0,
    K8S_ATTRIBUTES[4].0,
];

/// Whether `key` is one nemo-lens may set.
pub(crate) fn may_set(key: &str) -> bool {
    MAY_SET.contains(&key)
}

/// How long `nvidia-smi` may take before it is given up on (the count then
/// comes from `CUDA_VISIBLE_DEVICES` alone, or is left out).
const NVIDIA_SMI_TIMEOUT: Duration = Duration::from_secs(5);

/// The key `SetupOptions::gym_server` sets: what makes a gym server's
/// resource.
pub(crate) const GYM_SERVER_KEY: &str = "nemo.gym.server.name";

pub(crate) struct ResourceInputs<'a> {
    pub config: &'a NemoLensConfig,
    /// `nemo.run.id`, resolved once by setup (a random one must be the same
    /// id setup warned about).
    pub run_id: &'a str,
    pub env: &'a EnvLookup,
    pub rank: u32,
    pub world_size: u32,
    pub service_version: Option<&'a str>,
    pub extra: &'a [KeyValue],
    pub probe_gpus: bool,
}

pub(crate) fn build(inputs: &ResourceInputs<'_>) -> Resource {
    let ResourceInputs {
        config, env, rank, ..
    } = inputs;
    let mut attrs: Vec<KeyValue> = TelemetryResourceDetector
        .detect()
        .iter()
        .map(|(k, v)| KeyValue::new(k.clone(), v.clone()))
        .collect();
    attrs.extend(
        config
            .resource_attributes
            .iter()
            .map(|(k, v)| KeyValue::new(k.clone(), v.clone())),
    );

    let run_id = inputs.run_id;
    attrs.push(KeyValue::new("service.name", config.service_name.clone()));
    // No default: nemo-lens's own version would pass for the application's.
    if let Some(version) = inputs.service_version {
        attrs.push(KeyValue::new("service.version", version.to_owned()));
    }
    attrs.push(KeyValue::new("dl.rank", i64::from(*rank)));
    attrs.push(KeyValue::new("dl.world_size", i64::from(inputs.world_size)));
    // NeMo-Gym 0.7.0 sets its rank through Lens's NV_DL_RANK and
    // NV_DL_WORLD_SIZE, `nv.dl.rank` and `nv.dl.world_size` in Lens's later
    // conventions: a gym server writes those too, so a Rust one and a
    // Python one share keys (`dl.rank` stays for the dashboards and the
    // Prometheus labels that read it).
    if inputs
        .extra
        .iter()
        .any(|kv| kv.key.as_str() == GYM_SERVER_KEY)
    {
        attrs.push(KeyValue::new("nv.dl.rank", i64::from(*rank)));
        attrs.push(KeyValue::new(
            "nv.dl.world_size",
            i64::from(inputs.world_size),
        ));
    }
    attrs.push(KeyValue::new(
        "service.instance.id",
        format!("{run_id}-rank{rank}"),
    ));
    attrs.push(KeyValue::new("nemo.run.id", run_id.to_owned()));
    if let Some(user) = &config.user_id {
        attrs.push(KeyValue::new("nemo.user.id", user.clone()));
    }
    if let Some(deployment) = &config.deployment_environment {
        attrs.push(KeyValue::new("deployment.environment", deployment.clone()));
    }
    if let Some(host) = gethostname::gethostname().to_str() {
        attrs.push(KeyValue::new("host.name", host.to_owned()));
    }
    attrs.push(KeyValue::new("process.pid", i64::from(std::process::id())));
    if let Some(count) = gpu_count(env, inputs.probe_gpus) {
        attrs.push(KeyValue::new("host.gpu.count", count));
    }
    for (key, var) in SLURM_ATTRIBUTES {
        if let Some(v) = env.get(var) {
            attrs.push(KeyValue::new(key, v));
        }
    }
    for (key, vars) in K8S_ATTRIBUTES {
        if let Some(v) = vars.iter().find_map(|var| env.get(var)) {
            attrs.push(KeyValue::new(key, v));
        }
    }
    let in_k8s = env.get("KUBERNETES_SERVICE_HOST").is_some();
    if in_k8s && !attrs.iter().any(|kv| kv.key.as_str() == "k8s.pod.name") {
        // Kubernetes sets HOSTNAME to the pod name unless the spec overrides it.
        if let Some(pod) = env.get("HOSTNAME") {
            attrs.push(KeyValue::new("k8s.pod.name", pod));
        }
    }
    attrs.extend(inputs.extra.iter().cloned());
    // The builder keeps the last value of a repeated key, which gives the
    // precedence documented above.
    Resource::builder_empty().with_attributes(attrs).build()
}

/// GPUs visible to this process: those `nvidia-smi -L` lists that
/// `CUDA_VISIBLE_DEVICES` makes visible ([`visible_gpus`]); without a driver
/// (or without probing), the entries of `CUDA_VISIBLE_DEVICES`, and nothing
/// when it is unset. Set but empty means none, without asking the driver.
fn gpu_count(env: &EnvLookup, probe: bool) -> Option<i64> {
    let visible = env.get_raw("CUDA_VISIBLE_DEVICES");
    // Set but empty means no GPUs, as for CUDA itself (and Python nemo-lens):
    // nothing to ask the driver.
    if visible.as_deref().is_some_and(|v| v.trim().is_empty()) {
        return Some(0);
    }
    let listed = if probe { nvidia_smi_gpus() } else { None };
    let count = match (listed, visible.as_deref()) {
        (Some(gpus), visible) => {
            let ids: Vec<GpuId<'_>> = gpus
                .iter()
                .map(|(index, uuid)| GpuId {
                    index: *index,
                    uuid,
                })
                .collect();
            visible_gpus(visible, &ids).len()
        }
        // Without the driver, the names are all there is.
        (None, Some(visible)) => named_count(visible),
        (None, None) => return None,
    };
    i64::try_from(count).ok()
}

/// Index and UUID of each GPU `nvidia-smi -L` lists; `None` without a
/// driver (or one that hangs).
fn nvidia_smi_gpus() -> Option<Vec<(u32, String)>> {
    let mut child = Command::new("nvidia-smi")
        .arg("-L")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let deadline = Instant::now() + NVIDIA_SMI_TIMEOUT;
    loop {
        match child.try_wait() {
            Ok(Some(status)) if status.success() => break,
            Ok(Some(_)) | Err(_) => return None,
            Ok(None) if Instant::now() >= deadline => {
                // A hung driver must not hang start-up.
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
        }
    }
    let output = child.wait_with_output().ok()?;
    Some(parse_nvidia_smi_list(&String::from_utf8_lossy(
        &output.stdout,
    )))
}

/// `GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-8e2f…)` lines; MIG lines (which
/// are indented) are not GPUs of their own here.
fn parse_nvidia_smi_list(listing: &str) -> Vec<(u32, String)> {
    listing
        .lines()
        .filter_map(|line| {
            let rest = line.strip_prefix("GPU ")?;
            let (index, rest) = rest.split_once(':')?;
            let uuid = rest.rsplit_once("(UUID: ")?.1.strip_suffix(')')?;
            Some((index.trim().parse().ok()?, uuid.trim().to_owned()))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use opentelemetry::{Key, Value};

    fn resource(env: &[(&str, &str)], extra: &[KeyValue]) -> Resource {
        versioned(env, extra, None)
    }

    fn versioned(env: &[(&str, &str)], extra: &[KeyValue], version: Option<&str>) -> Resource {
        let env = EnvLookup::from_pairs(env.iter().copied());
        let config = NemoLensConfig::from_lookup(env.clone()).unwrap();
        build(&ResourceInputs {
            config: &config,
            run_id: &super::super::run_id::resolve(&config, &env).id,
            env: &env,
            rank: 3,
            world_size: 8,
            service_version: version,
            extra,
            probe_gpus: false,
        })
    }

    fn get(r: &Resource, key: &'static str) -> Option<Value> {
        r.get(&Key::from_static_str(key))
    }

    #[test]
    fn a_gym_server_also_writes_its_rank_as_nemo_gym_does() {
        let gym = resource(&[], &[KeyValue::new("nemo.gym.server.name", "math_env")]);
        assert_eq!(get(&gym, "nv.dl.rank"), Some(Value::I64(3)));
        assert_eq!(get(&gym, "nv.dl.world_size"), Some(Value::I64(8)));
        assert_eq!(get(&gym, "dl.rank"), Some(Value::I64(3)));
        let trainer = resource(&[], &[]);
        assert_eq!(get(&trainer, "nv.dl.rank"), None);
        assert_eq!(get(&trainer, "dl.rank"), Some(Value::I64(3)));
    }

    #[test]
    fn identifies_rank_run_and_host() {
        let r = resource(
            &[
                ("NEMO_LENS_RUN_ID", "run42"),
                ("NEMO_LENS_USER_ID", "alice"),
                ("DEPLOYMENT_ENV", "prod"),
                ("OTEL_SERVICE_NAME", "trainer"),
                ("CUDA_VISIBLE_DEVICES", "0,1,3"),
            ],
            &[],
        );
        assert_eq!(get(&r, "service.name"), Some("trainer".into()));
        assert_eq!(get(&r, "service.version"), None);
        assert_eq!(get(&r, "dl.rank"), Some(Value::I64(3)));
        assert_eq!(get(&r, "dl.world_size"), Some(Value::I64(8)));
        assert_eq!(get(&r, "nemo.run.id"), Some("run42".into()));
        assert_eq!(get(&r, "service.instance.id"), Some("run42-rank3".into()));
        assert_eq!(get(&r, "nemo.user.id"), Some("alice".into()));
        assert_eq!(get(&r, "deployment.environment"), Some("prod".into()));
        assert_eq!(get(&r, "host.gpu.count"), Some(Value::I64(3)));
        assert_eq!(
            get(&r, "process.pid"),
            Some(Value::I64(i64::from(std::process::id())))
        );
        let host = gethostname::gethostname().to_string_lossy().into_owned();
        assert_eq!(get(&r, "host.name"), Some(host.into()));
        assert_eq!(get(&r, "telemetry.sdk.language"), Some("rust".into()));
    }

    #[test]
    fn service_version_is_the_applications_or_left_out() {
        let sdk = TelemetryResourceDetector.detect();
        let sdk_version = sdk.get(&Key::from_static_str("telemetry.sdk.version"));
        assert!(sdk_version.is_some());
        let in_env = [("OTEL_RESOURCE_ATTRIBUTES", "service.version=4.5.6")];
        for (env, version, extra, expected) in [
            (&[][..], None, None, None),
            (&in_env[..], None, None, Some("4.5.6")),
            (&[][..], Some("1.2.3"), None, Some("1.2.3")),
            // The option wins over the environment, and a resource
            // attribute over both.
            (&in_env[..], Some("1.2.3"), None, Some("1.2.3")),
            (&in_env[..], Some("1.2.3"), Some("7.8.9"), Some("7.8.9")),
        ] {
            let extra: Vec<KeyValue> = extra
                .map(|v| KeyValue::new("service.version", v))
                .into_iter()
                .collect();
            let r = versioned(env, &extra, version);
            let label = format!("{env:?} {version:?} {extra:?}");
            assert_eq!(
                get(&r, "service.version"),
                expected.map(Value::from),
                "{label}"
            );
            // Whatever the version, the SDK's own attributes are the SDK's.
            assert_eq!(get(&r, "telemetry.sdk.version"), sdk_version, "{label}");
            assert_eq!(get(&r, "telemetry.sdk.name"), Some("opentelemetry".into()));
            assert_eq!(get(&r, "telemetry.sdk.language"), Some("rust".into()));
        }
    }

    #[test]
    fn run_id_falls_back_to_slurm_then_random() {
        let r = resource(&[("SLURM_JOB_ID", "98765")], &[]);
        assert_eq!(get(&r, "nemo.run.id"), Some("98765".into()));
        assert_eq!(get(&r, "slurm.job.id"), Some("98765".into()));
        assert_eq!(get(&r, "service.instance.id"), Some("98765-rank3".into()));

        let r = resource(&[], &[]);
        let id = get(&r, "nemo.run.id").unwrap().to_string();
        assert_eq!(id.len(), 12);
        assert!(id.chars().all(|c| c.is_ascii_hexdigit()), "{id}");
        assert_eq!(get(&r, "host.gpu.count"), None);
    }

    #[test]
    fn slurm_and_kubernetes_variables_become_attributes() {
        let r = resource(
            &[
                ("SLURM_JOB_NAME", "grpo"),
                ("SLURM_NODEID", "2"),
                ("SLURM_PROCID", "17"),
                ("SLURM_LOCALID", "1"),
                ("SLURM_NNODES", "4"),
                ("POD_NAME", "trainer-0"),
                ("K8S_POD_NAME", "trainer-0-k8s"),
                ("POD_NAMESPACE", "rl"),
                ("NODE_NAME", "gpu-node-9"),
            ],
            &[],
        );
        assert_eq!(get(&r, "slurm.job.name"), Some("grpo".into()));
        assert_eq!(get(&r, "slurm.node.id"), Some("2".into()));
        assert_eq!(get(&r, "slurm.proc.id"), Some("17".into()));
        assert_eq!(get(&r, "slurm.local.id"), Some("1".into()));
        assert_eq!(get(&r, "slurm.job.num_nodes"), Some("4".into()));
        assert_eq!(get(&r, "k8s.pod.name"), Some("trainer-0-k8s".into()));
        assert_eq!(get(&r, "k8s.namespace.name"), Some("rl".into()));
        assert_eq!(get(&r, "k8s.node.name"), Some("gpu-node-9".into()));

        let r = resource(
            &[
                ("KUBERNETES_SERVICE_HOST", "10.0.0.1"),
                ("HOSTNAME", "pod-x"),
            ],
            &[],
        );
        assert_eq!(get(&r, "k8s.pod.name"), Some("pod-x".into()));
    }

    #[test]
    fn precedence_env_then_nemo_then_caller() {
        let r = resource(
            &[
                (
                    "OTEL_RESOURCE_ATTRIBUTES",
                    "service.name=from-env,cluster=eos,team=x",
                ),
                ("OTEL_SERVICE_NAME", "svc"),
            ],
            &[
                KeyValue::new("team", "rl"),
                KeyValue::new("dl.rank", 99_i64),
            ],
        );
        assert_eq!(get(&r, "service.name"), Some("svc".into()));
        assert_eq!(get(&r, "cluster"), Some("eos".into()));
        assert_eq!(get(&r, "team"), Some("rl".into()));
        assert_eq!(get(&r, "dl.rank"), Some(Value::I64(99)));
    }

    #[test]
    fn cuda_visible_devices_counts() {
        let count =
            |v: &str| gpu_count(&EnvLookup::from_pairs([("CUDA_VISIBLE_DEVICES", v)]), false);
        assert_eq!(count("0"), Some(1));
        assert_eq!(count("GPU-aaaa,GPU-bbbb"), Some(2));
        assert_eq!(count("0,-1,2"), Some(1));
        assert_eq!(count("-1"), Some(0));
        // Set but empty hides every GPU.
        assert_eq!(count(""), Some(0));
        assert_eq!(count(" "), Some(0));
        // Unset, and without probing, gives nothing.
        assert_eq!(gpu_count(&EnvLookup::from_pairs([("X", "1")]), false), None);
    }

    #[test]
    fn nvidia_smi_lists_index_and_uuid_of_each_gpu() {
        let listing = "GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-8e2f0a11-1111)\n\
                       GPU 1: NVIDIA A100-SXM4-80GB (UUID: GPU-1b7c9d22-2222)\n\
                       \x20 MIG 1g.10gb     Device  0: (UUID: MIG-5c3a)\n";
        assert_eq!(
            parse_nvidia_smi_list(listing),
            [
                (0, "GPU-8e2f0a11-1111".to_owned()),
                (1, "GPU-1b7c9d22-2222".to_owned())
            ]
        );
    }
}
