//! The shared conformance suite, run on MDBX (plain and write-map).

use ledgerbench_conformance::{SMALL_CAP, Subject, conformance_suite};
use ledgerbench_core::{Durability, KvBackend};
use ledgerbench_mdbx::{Geometry, Mdbx, MdbxConfig};

fn small() -> MdbxConfig {
    MdbxConfig {
        geometry: Geometry {
            lower: SMALL_CAP,
            upper: SMALL_CAP,
            growth_step: SMALL_CAP,
        },
        ..MdbxConfig::default()
    }
}

mod mdbx {
    use super::*;
    const S: Subject = Subject {
        name: "mdbx",
        open: |d| Mdbx::open_boxed(d, &MdbxConfig::default()),
        open_small: Some(|d| Mdbx::open_boxed(d, &small())),
        fifo_cap: None,
        durability: Durability::Process,
        map_writes: false,
    };
    conformance_suite!(S);
}

mod mdbx_write_map {
    use super::*;
    const S: Subject = Subject {
        name: "mdbx-write-map",
        open: |d| {
            Mdbx::open_boxed(
                d,
                &MdbxConfig {
                    write_map: true,
                    ..MdbxConfig::default()
                },
            )
        },
        open_small: Some(|d| {
            Mdbx::open_boxed(
                d,
                &MdbxConfig {
                    write_map: true,
                    ..small()
                },
            )
        }),
        fifo_cap: None,
        durability: Durability::Process,
        map_writes: true,
    };
    conformance_suite!(S);
}

#[test]
fn version_is_reported() {
    assert!(ledgerbench_mdbx::engine_version().starts_with("0.14"));
}

#[test]
fn bad_geometry_is_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cfg = MdbxConfig {
        geometry: Geometry {
            lower: 1 << 30,
            upper: 1 << 20,
            growth_step: 1 << 20,
        },
        ..MdbxConfig::default()
    };
    let err = Mdbx::open(&dir.path().join("s"), &cfg)
        .err()
        .expect("refused");
    assert!(err.to_string().contains("geometry"), "{err}");
}
