//! The environment a result was measured in.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// Where and how a run was measured. Fields the harness could not read are absent.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct EnvInfo {
    /// Host name (the machine dimension when results of several machines merge).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    /// CPU model name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpu_model: Option<String>,
    /// Logical CPUs available to the process.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cores: Option<usize>,
    /// Total RAM, bytes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ram_bytes: Option<u64>,
    /// Kernel release.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kernel: Option<String>,
    /// Filesystem of the data directory.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data_fs: Option<MountInfo>,
    /// `rustc --version` of the build.
    pub rustc: String,
    /// Git commit of the build (`-dirty` when the tree had changes).
    pub git_commit: String,
    /// Cargo profile of the build (`release`, `debug`).
    pub build_profile: String,
    /// True when debug assertions were on: numbers from such a build mislead.
    pub debug_assertions: bool,
    /// Engine library versions by engine name.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub engine_versions: BTreeMap<String, String>,
}

pub use ledgerbench_meter::mounts::MountInfo;

impl EnvInfo {
    /// The hardware a run's timings depend on (CPU model, logical CPUs, RAM
    /// to the GiB), without the host name: two hosts of one class (pods of
    /// a node pool, CI runners of one size) are one machine to a cost
    /// model; absent fields read `?`.
    pub fn machine_class(&self) -> String {
        format!(
            "{}, {} CPUs, {} GiB",
            self.cpu_model.as_deref().unwrap_or("?"),
            self.cores.map_or("?".into(), |c| c.to_string()),
            self.ram_bytes
                .map_or("?".into(), |b| ((b + (1 << 29)) >> 30).to_string())
        )
    }
}
