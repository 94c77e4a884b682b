//! A model's roles on client threads: which role a thread plays, its share
//! of the role's operations a period, and the stores and mix it draws
//! from. Every thread's stream has the same marks (`load`, then one per
//! period), since the driver meets its threads at marks.

use ledgerbench_model::Workload;
use ledgerbench_model::model::Role;

use crate::generated::GenError;

/// One thread's part of a role.
#[derive(Debug, Clone)]
pub(crate) struct RoleThread {
    /// Operations this thread issues a period.
    pub share: u64,
    /// Its writes at the period's start in one commit.
    pub block: bool,
    /// The stores it acts on and their cumulative shares of operations.
    pub stores: Vec<usize>,
    /// ... in the same order.
    pub store_cum: Vec<f64>,
    /// Cumulative shares of its mix, in [`ledgerbench_model::model::Mix::shares`]'s order.
    pub mix: [f64; 8],
    /// It does not write: it reads the initial state only (the writer's
    /// keys are another thread's), unchecked (the writer may delete).
    pub reads_initial: bool,
    /// This thread loads the initial state (the first thread of all).
    pub loads: bool,
}

/// Threads the model's roles need.
pub(crate) fn threads(w: &Workload) -> u64 {
    w.roles.iter().map(|r| u64::from(r.threads)).sum()
}

/// What thread `t` of `n` plays; an error when `n` is not the roles'
/// thread count.
pub(crate) fn of(w: &Workload, t: u64, n: u64) -> Result<RoleThread, GenError> {
    let need = threads(w);
    if n != need {
        return Err(GenError::config(
            "synth",
            format!(
                "the model's roles play on {need} threads ({}); run with --threads {need}",
                w.roles
                    .iter()
                    .map(|r| format!("{} {}", r.name, r.threads))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ));
    }
    let mut first = 0u64;
    for r in &w.roles {
        let k = u64::from(r.threads);
        if t < first + k {
            return Ok(part(w, r, t - first, k, t == 0));
        }
        first += k;
    }
    Err(GenError::config(
        "synth",
        format!("thread {t} is past the roles' {need} threads"),
    ))
}

fn part(w: &Workload, r: &Role, j: u64, k: u64, loads: bool) -> RoleThread {
    let stores: Vec<usize> = w
        .stores
        .iter()
        .enumerate()
        .filter(|(_, s)| r.stores.is_empty() || r.stores.contains(&s.name))
        .map(|(i, _)| i)
        .collect();
    let mut total = 0.0;
    let store_cum = stores
        .iter()
        .map(|&i| {
            total += w.stores[i].operations.max(1) as f64;
            total
        })
        .collect();
    let mut mix = [0.0; 8];
    let mut sum = 0.0;
    for (m, (_, v)) in mix.iter_mut().zip(r.mix.shares()) {
        sum += v;
        *m = sum;
    }
    let m = &r.mix;
    RoleThread {
        // The period's operations split evenly, the first threads taking
        // the remainder.
        share: r.ops_per_period / k + u64::from(j < r.ops_per_period % k),
        block: r.block,
        stores,
        store_cum,
        mix,
        reads_initial: m.insert + m.overwrite + m.delete + m.delete_range == 0.0,
        loads,
    }
}

/// The index `u` (uniform in [0, 1)) falls at in cumulative shares.
pub(crate) fn at(cum: &[f64], u: f64) -> usize {
    let total = cum.last().copied().unwrap_or(0.0);
    cum.partition_point(|&c| c <= u * total)
        .min(cum.len().saturating_sub(1))
}

#[cfg(test)]
mod tests {
    use super::*;
    use ledgerbench_model::model::{Commits, Mix, Store};

    fn model() -> Workload {
        let store = |name: &str| Store {
            name: name.into(),
            operations: 100,
            keys: 0,
            initial_keys: 10,
            mix: Mix::default(),
            key_size: Default::default(),
            value_size: Default::default(),
            scan_length: None,
            inserts: Default::default(),
            access: Default::default(),
            read_age: None,
            lifetime: None,
        };
        let role = |name: &str, threads, mix| Role {
            name: name.into(),
            threads,
            ops_per_period: 10,
            mix,
            stores: vec!["state".into()],
            block: false,
        };
        Workload {
            version: 1,
            source: String::new(),
            stores: vec![store("ledger"), store("state")],
            commits: Commits::default(),
            roles: vec![
                role(
                    "block",
                    1,
                    Mix {
                        overwrite: 1.0,
                        ..Mix::default()
                    },
                ),
                role(
                    "rpc",
                    3,
                    Mix {
                        get_found: 1.0,
                        ..Mix::default()
                    },
                ),
            ],
        }
    }

    #[test]
    fn threads_are_dealt_to_roles_in_order_with_the_remainder_first() {
        let w = model();
        assert_eq!(threads(&w), 4);
        let b = of(&w, 0, 4).expect("block");
        assert_eq!(
            (b.share, b.block, b.loads, b.reads_initial),
            (10, false, true, false)
        );
        assert_eq!(b.stores, vec![1]);
        let shares: Vec<u64> = (1..4).map(|t| of(&w, t, 4).expect("rpc").share).collect();
        assert_eq!(shares, vec![4, 3, 3]);
        assert!(of(&w, 2, 4).expect("rpc").reads_initial);
        let e = of(&w, 0, 2).expect_err("two threads").to_string();
        assert!(e.contains("--threads 4"), "{e}");
    }

    #[test]
    fn cumulative_shares_are_found() {
        assert_eq!(at(&[0.2, 0.2, 1.0], 0.1), 0);
        assert_eq!(at(&[0.2, 0.2, 1.0], 0.5), 2);
        assert_eq!(at(&[0.5, 1.0], 0.999), 1);
    }
}
