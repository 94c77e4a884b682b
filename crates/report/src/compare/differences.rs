//! What makes two sides of a comparison incomparable: workload, seed,
//! durability, config, build, engine versions (refused unless forced), and
//! the machine (timings then shown but not judged).

use crate::doc::Loaded;

/// Differences that make a comparison meaningless (refused unless forced),
/// and differences of machine that make timings incomparable.
///
/// Long because one short check per field that two results must share to be compared, in the order a reader checks them.
pub fn differences(base: &[Loaded], cur: &[Loaded]) -> (Vec<String>, Vec<String>) {
    let mut hard = Vec::new();
    let mut machine = Vec::new();
    let (Some(b), Some(c)) = (base.first(), cur.first()) else {
        return (hard, machine);
    };
    let sides = base.iter().chain(cur.iter());
    for d in sides.clone() {
        if d.workload() != b.workload() {
            hard.push(format!(
                "workload: {} ({}) vs {} ({})",
                b.workload(),
                b.path.display(),
                d.workload(),
                d.path.display()
            ));
        }
        if d.seed() != b.seed() {
            hard.push(format!(
                "seed: {} vs {} ({})",
                b.seed(),
                d.seed(),
                d.path.display()
            ));
        }
        if d.durability() != b.durability() {
            let name = |x: Option<ledgerbench_core::Durability>| {
                x.map_or("unrecorded".to_string(), |l| l.to_string())
            };
            hard.push(format!(
                "durability: {} vs {} ({}): engines at different durability do different work",
                name(b.durability()),
                name(d.durability()),
                d.path.display()
            ));
        }
        if d.config() != b.config() {
            hard.push(format!(
                "workload config differs: {} vs {}",
                b.path.display(),
                d.path.display()
            ));
        }
    }
    let (be, ce) = (b.env(), c.env());
    if be.build_profile != ce.build_profile || be.debug_assertions != ce.debug_assertions {
        hard.push(format!(
            "build: {} (debug assertions {}) vs {} (debug assertions {})",
            be.build_profile, be.debug_assertions, ce.build_profile, ce.debug_assertions
        ));
    }
    // Per engine, over every file of each side: runs of different
    // backends name different engines, which is not a version change.
    let versions = |side: &[Loaded]| {
        let mut v: std::collections::BTreeMap<String, std::collections::BTreeSet<String>> =
            Default::default();
        for d in side {
            for (engine, ver) in &d.env().engine_versions {
                v.entry(engine.clone()).or_default().insert(ver.clone());
            }
        }
        v
    };
    let (bv, cv) = (versions(base), versions(cur));
    for (engine, b_set) in &bv {
        if let Some(c_set) = cv.get(engine)
            && b_set != c_set
        {
            let list = |s: &std::collections::BTreeSet<String>| {
                s.iter().cloned().collect::<Vec<_>>().join(", ")
            };
            hard.push(format!(
                "engine version of {engine}: {} vs {}",
                list(b_set),
                list(c_set)
            ));
        }
    }
    let fs = |e: &ledgerbench_results::env::EnvInfo| e.data_fs.as_ref().map(|m| m.fs_type.clone());
    for (what, x, y) in [
        ("host", be.host.clone(), ce.host.clone()),
        ("cpu", be.cpu_model.clone(), ce.cpu_model.clone()),
        (
            "cores",
            be.cores.map(|c| c.to_string()),
            ce.cores.map(|c| c.to_string()),
        ),
        (
            "ram",
            be.ram_bytes.map(|c| c.to_string()),
            ce.ram_bytes.map(|c| c.to_string()),
        ),
        ("kernel", be.kernel.clone(), ce.kernel.clone()),
        ("filesystem", fs(be), fs(ce)),
    ] {
        if x != y {
            machine.push(format!(
                "{what}: {} vs {}",
                x.unwrap_or_else(|| "?".into()),
                y.unwrap_or_else(|| "?".into())
            ));
        }
    }
    hard.dedup();
    (hard, machine)
}
