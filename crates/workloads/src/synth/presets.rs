//! Models shipped in the binary, so `run synth --preset NAME` plays one on
//! a fresh clone: each is a file of the repository, included as it is.

/// A preset: its name, what it is, and the model's text.
pub struct Preset {
    /// What `--preset` takes.
    pub name: &'static str,
    /// Where it comes from, in a line.
    pub about: &'static str,
    /// The model (TOML, `ledgerbench fit`'s format).
    pub text: &'static str,
}

/// Every preset, by name.
pub const PRESETS: &[Preset] = &[Preset {
    name: "cosmos",
    about: "a Cosmos-SDK node, written by hand: a block of 5,000 updates every 6 s, four RPC readers (examples/workloads/cosmos.toml)",
    text: include_str!("../../../../examples/workloads/cosmos.toml"),
}];

/// What `workload = "preset:NAME"` names.
pub const PREFIX: &str = "preset:";

/// The preset `name`, if there is one.
pub fn by_name(name: &str) -> Option<&'static Preset> {
    PRESETS.iter().find(|p| p.name == name)
}

/// The presets' names, comma-separated, for messages.
pub fn names() -> String {
    PRESETS
        .iter()
        .map(|p| p.name)
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_preset_is_a_model_that_reads() {
        for p in PRESETS {
            ledgerbench_model::parse(p.name, p.text)
                .unwrap_or_else(|e| panic!("preset {}: {e}", p.name));
        }
        assert!(by_name("cosmos").is_some() && by_name("nosuch").is_none());
    }
}
