//! A workload model as TOML a person reads and edits: a comment above every
//! field (serde's writers have no comments), and the checks a hand-written
//! file needs when it is read back.

use std::fmt::Write as _;

use crate::model::{
    Access, Commits, Inserts, Pareto, Quantiles, Role, Sizes, Store, VERSION, Workload,
};

/// Why a workload file was refused.
#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    /// Not TOML, or a field unknown, missing or of the wrong type.
    #[error("{path}: {message}")]
    Parse {
        /// The file.
        path: String,
        /// The parser's account, with the line.
        message: String,
    },
    /// Read but not usable: what is wrong and what to write instead.
    #[error("{path}: {message}")]
    Invalid {
        /// The file.
        path: String,
        /// What is wrong and what is accepted.
        message: String,
    },
}

/// Reads a workload file's text (`path` names it in errors).
pub fn parse(path: &str, text: &str) -> Result<Workload, ModelError> {
    let w: Workload = toml::from_str(text).map_err(|e| ModelError::Parse {
        path: path.into(),
        message: e.to_string(),
    })?;
    let bad = |message: String| ModelError::Invalid {
        path: path.into(),
        message,
    };
    if w.version != VERSION {
        return Err(bad(format!(
            "version {} is not one this build reads; write version = {VERSION}",
            w.version
        )));
    }
    if w.stores.is_empty() {
        return Err(bad("no [[store]]: a workload needs at least one".into()));
    }
    for s in &w.stores {
        let shares = s.mix.shares();
        if let Some((k, v)) = shares.iter().find(|(_, v)| !(v.is_finite() && *v >= 0.0)) {
            return Err(bad(format!(
                "store `{}`: mix.{k} = {v}: give a share of 0 or more",
                s.name
            )));
        }
        let sum: f64 = shares.iter().map(|(_, v)| v).sum();
        if (sum - 1.0).abs() > 1e-3 {
            return Err(bad(format!(
                "store `{}`: the mix's shares sum to {sum}; they must sum to 1",
                s.name
            )));
        }
    }
    check_roles(&w).map_err(|e| bad(e.0))?;
    Ok(w)
}

/// Why a model's roles cannot be played.
#[derive(Debug)]
struct RoleError(String);

/// Roles need a period to pace them, stores that exist, shares that sum
/// to 1, and a single thread where they write (inserts take the next key:
/// two writers would write the same keys).
fn check_roles(w: &Workload) -> Result<(), RoleError> {
    let bad = |m: String| Err(RoleError(m));
    if w.roles.is_empty() {
        return Ok(());
    }
    if w.commits.period_micros.is_none_or(|p| p == 0) {
        return bad(
            "[[role]] needs commits.period_micros: the period (a block time) that paces the roles"
                .into(),
        );
    }
    for (i, r) in w.roles.iter().enumerate() {
        if w.roles[..i].iter().any(|o| o.name == r.name) {
            return bad(format!("role `{}` is named twice", r.name));
        }
        if let Some(s) = r
            .stores
            .iter()
            .find(|s| !w.stores.iter().any(|t| &t.name == *s))
        {
            return bad(format!(
                "role `{}` names store `{s}`, which no [[store]] is",
                r.name
            ));
        }
        let sum: f64 = r.mix.shares().iter().map(|(_, v)| v).sum();
        if (sum - 1.0).abs() > 1e-3 || r.mix.shares().iter().any(|(_, v)| v.is_nan() || *v < 0.0) {
            return bad(format!(
                "role `{}`: the mix's shares sum to {sum}; they must sum to 1",
                r.name
            ));
        }
        let m = &r.mix;
        let writes = m.insert + m.overwrite + m.delete + m.delete_range > 0.0;
        if writes && r.threads != 1 {
            return bad(format!(
                "role `{}` writes on {} threads: a role that writes has one thread (give readers their own role)",
                r.name, r.threads
            ));
        }
        if r.threads == 0 || r.ops_per_period == 0 {
            return bad(format!(
                "role `{}`: threads and ops_per_period must be at least 1",
                r.name
            ));
        }
    }
    Ok(())
}

/// The model as commented TOML.
pub fn write(w: &Workload) -> String {
    let mut o = String::new();
    o.push_str(
        "# A ledgerbench workload model: what `ledgerbench fit` found in a trace,\n\
         # or what a person wrote; `ledgerbench run synth --workload FILE` plays it.\n\
         # Sizes are bytes; ages and lifetimes count operations on the store;\n\
         # quantiles are {min, p10, p50, p90, p99, max, mean, count}.\n",
    );
    line(
        &mut o,
        "The format's version.",
        "version",
        &VERSION.to_string(),
    );
    line(
        &mut o,
        "Where the model came from.",
        "source",
        &quote(&w.source),
    );
    commits(&mut o, &w.commits);
    for s in &w.stores {
        store(&mut o, s);
    }
    for r in &w.roles {
        role(&mut o, r);
    }
    o
}

fn role(o: &mut String, r: &Role) {
    o.push_str("\n[[role]]\n");
    line(o, "The role.", "name", &quote(&r.name));
    line(
        o,
        "Client threads playing it (one where it writes).",
        "threads",
        &r.threads.to_string(),
    );
    line(
        o,
        "Operations a period (commits.period_micros), its threads together.",
        "ops_per_period",
        &r.ops_per_period.to_string(),
    );
    line(
        o,
        "Its writes at the period's start in one commit (a block); else spread over the period.",
        "block",
        &r.block.to_string(),
    );
    if !r.stores.is_empty() {
        let names: Vec<String> = r.stores.iter().map(|s| quote(s)).collect();
        line(
            o,
            "The stores it acts on.",
            "stores",
            &format!("[{}]", names.join(", ")),
        );
    }
    let shares: Vec<String> = r
        .mix
        .shares()
        .iter()
        .map(|(k, v)| format!("{k} = {}", float(*v)))
        .collect();
    line(
        o,
        "Shares of its operations.",
        "mix",
        &format!("{{ {} }}", shares.join(", ")),
    );
}

fn commits(o: &mut String, c: &Commits) {
    o.push_str("\n# How writes are grouped into commits, and when commits come.\n[commits]\n");
    if let Some(q) = &c.writes {
        line(
            o,
            "Writes (puts and deletes, all stores) per commit.",
            "writes",
            &quantiles(q),
        );
    }
    if let Some(q) = &c.gap_micros {
        line(
            o,
            "Microseconds between commits.",
            "gap_micros",
            &quantiles(q),
        );
    }
    if let Some(p) = c.period_micros {
        line(
            o,
            "A commit every this many microseconds (a block time).",
            "period_micros",
            &p.to_string(),
        );
    }
    if let Some(n) = c.flush_every_writes {
        line(
            o,
            "The application flushes every store every this many writes.",
            "flush_every_writes",
            &n.to_string(),
        );
    }
    if let Some(n) = c.compact_every_writes {
        line(
            o,
            "It compacts every store's whole key range every this many writes.",
            "compact_every_writes",
            &n.to_string(),
        );
    }
}

fn store(o: &mut String, s: &Store) {
    o.push_str("\n[[store]]\n");
    line(o, "The store (column family).", "name", &quote(&s.name));
    line(
        o,
        "Operations on it in the trace.",
        "operations",
        &s.operations.to_string(),
    );
    line(
        o,
        "Distinct keys (estimated from a sample of keys in a long trace).",
        "keys",
        &s.keys.to_string(),
    );
    line(
        o,
        "Keys read before any write: the least it held when the trace began.",
        "initial_keys",
        &s.initial_keys.to_string(),
    );
    if let Some(q) = &s.read_age {
        line(
            o,
            "Operations since a key's last write when it is read (temporal locality).",
            "read_age",
            &quantiles(q),
        );
    }
    if let Some(q) = &s.lifetime {
        line(
            o,
            "Operations from a key's first write to its delete (TTL-like deletes).",
            "lifetime",
            &quantiles(q),
        );
    }
    o.push_str("\n# Shares of its operations (they sum to 1).\n[store.mix]\n");
    let what = [
        "Puts of a key not in the store.",
        "Puts of a key already there.",
        "Deletes of one key.",
        "Deletes of a key range.",
        "Gets that find their key.",
        "Gets that do not.",
        "Gets of keys the trace never wrote, answer not recorded (initial state, or missing).",
        "Scans.",
    ];
    for ((k, v), c) in s.mix.shares().iter().zip(what) {
        line(o, c, k, &float(*v));
    }
    inserts(o, &s.inserts);
    access(o, &s.access);
    sizes(o, "key_size", "Key sizes.", &s.key_size);
    sizes(o, "value_size", "Value sizes of puts.", &s.value_size);
    if let Some(z) = &s.scan_length {
        sizes(o, "scan_length", "Entries a scan asks for.", z);
    }
}

fn inserts(o: &mut String, i: &Inserts) {
    o.push_str("\n# The order of inserts.\n[store.inserts]\n");
    line(
        o,
        "Share of inserts above every key before them (1 sequential, near 0 random).",
        "ascending",
        &float(i.ascending),
    );
    if !i.within_prefix.is_empty() {
        let items: Vec<String> = i
            .within_prefix
            .iter()
            .map(|p| {
                format!(
                    "{{ bytes = {}, ascending = {} }}",
                    p.bytes,
                    float(p.ascending)
                )
            })
            .collect();
        line(
            o,
            "The same within a key prefix of this many bytes.",
            "within_prefix",
            &format!("[{}]", items.join(", ")),
        );
    }
}

fn access(o: &mut String, a: &Access) {
    o.push_str("\n# How accesses spread over the keys: a range by key_ranges where given,\n# then a key in it by power where given, else any alike.\n[store.access]\n");
    line(
        o,
        "Share of accesses to the hottest 0.1% of keys.",
        "hottest_0_1",
        &float(a.hottest_0_1),
    );
    line(
        o,
        "... to the hottest 1%.",
        "hottest_1",
        &float(a.hottest_1),
    );
    line(
        o,
        "... to the hottest 10%.",
        "hottest_10",
        &float(a.hottest_10),
    );
    if let Some(p) = &a.power {
        line(
            o,
            "The hottest n keys take a * n^b of the accesses (db_bench key_dist_a, key_dist_b;\n# Zipf's exponent is 1 - b); max_gap: the law's largest miss of the trace's shares.",
            "power",
            &format!(
                "{{ a = {}, b = {}, max_gap = {} }}",
                float(p.a),
                float(p.b),
                float(p.max_gap)
            ),
        );
    }
    if let Some(k) = &a.key_ranges {
        line(
            o,
            "Ranges of equal key counts ranked by hotness, share a e^(b x) + c e^(d x) (db_bench\n# keyrange_dist_a..d); rmse against flat_rmse, the gap of ranges all alike.",
            "key_ranges",
            &format!(
                "{{ ranges = {}, a = {}, b = {}, c = {}, d = {}, rmse = {}, flat_rmse = {} }}",
                k.ranges,
                float(k.a),
                float(k.b),
                float(k.c),
                float(k.d),
                float(k.rmse),
                float(k.flat_rmse)
            ),
        );
    }
}

fn sizes(o: &mut String, key: &str, what: &str, s: &Sizes) {
    let _ = write!(o, "\n# {what}\n[store.{key}]\n");
    if let Some(f) = s.fixed {
        line(o, "Every one this size.", "fixed", &f.to_string());
    }
    if let Some(q) = &s.quantiles {
        line(o, "The sizes seen.", "quantiles", &quantiles(q));
    }
    if let Some(p) = &s.pareto {
        line(
            o,
            "A Generalized Pareto fitted to them (db_bench value_theta = loc, value_k = shape,\n# value_sigma = scale); ks: Kolmogorov-Smirnov distance of the sizes from it;\n# floor: share of sizes at exactly the smallest, the Pareto fitting those above.",
            "pareto",
            &pareto(p),
        );
    }
}

fn pareto(p: &Pareto) -> String {
    let floor = if p.floor > 0.0 {
        format!(", floor = {}", float(p.floor))
    } else {
        String::new()
    };
    format!(
        "{{ loc = {}, shape = {}, scale = {}, ks = {}{floor} }}",
        float(p.loc),
        float(p.shape),
        float(p.scale),
        float(p.ks)
    )
}

fn quantiles(q: &Quantiles) -> String {
    format!(
        "{{ min = {}, p10 = {}, p50 = {}, p90 = {}, p99 = {}, max = {}, mean = {}, count = {} }}",
        float(q.min),
        float(q.p10),
        float(q.p50),
        float(q.p90),
        float(q.p99),
        float(q.max),
        float(q.mean),
        q.count
    )
}

/// `# comment` then `key = value`.
fn line(o: &mut String, comment: &str, key: &str, value: &str) {
    let _ = writeln!(o, "# {comment}\n{key} = {value}");
}

/// A float to 6 significant digits, always a TOML float.
fn float(v: f64) -> String {
    if v.is_nan() {
        return "nan".into();
    }
    if v.is_infinite() {
        return if v > 0.0 { "inf" } else { "-inf" }.into();
    }
    let r: f64 = format!("{v:.5e}").parse().unwrap_or(v);
    format!("{r:?}")
}

/// A TOML basic string.
fn quote(s: &str) -> String {
    let mut q = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => q.push_str("\\\""),
            '\\' => q.push_str("\\\\"),
            c if c.is_control() => {
                let _ = write!(q, "\\u{:04x}", c as u32);
            }
            c => q.push(c),
        }
    }
    q.push('"');
    q
}
