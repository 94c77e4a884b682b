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
pub const PRESETS: &[Preset] = &[
    Preset {
        name: "cosmos",
        about: "a Cosmos-SDK node, written by hand: a block of 5,000 updates every 6 s, four RPC readers (examples/workloads/cosmos.toml)",
        text: include_str!("../../../../examples/workloads/cosmos.toml"),
    },
    Preset {
        name: "mixgraph",
        about: "RocksDB's published mixgraph example (30 key ranges, a power law within each, Pareto values; 85% gets, 14% puts, 1% seeks) as db_bench 7.8 traced it, fitted (fixtures/models/mixgraph.toml, scripts/fit-presets.sh)",
        text: include_str!("../../../../fixtures/models/mixgraph.toml"),
    },
    Preset {
        name: "stellar",
        about: "Stellar's three stores (ledgers, txdata, txindex) as `record stellar --preset quick` wrote them, fitted (fixtures/models/stellar.toml)",
        text: include_str!("../../../../fixtures/models/stellar.toml"),
    },
    Preset {
        name: "solana",
        about: "the Solana blockstore (data and coding shreds, slot metadata; range purges, 8 slots in flight, 2% repairs) as `record solana` wrote it, fitted (fixtures/models/solana.toml)",
        text: include_str!("../../../../fixtures/models/solana.toml"),
    },
];

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
        for name in ["cosmos", "mixgraph", "stellar", "solana"] {
            assert!(by_name(name).is_some(), "{name}");
        }
        assert!(by_name("nosuch").is_none());
    }
}
