//! The planted stall: a store call that never returns, as an engine stuck
//! at its memory limit once did, so that tests can show the watchdog ends
//! such a run and records it.

use std::time::Duration;

/// The variable that plants a stall: `put`, `flush`, `get`, `scan` or
/// `compact`, optionally `:ENGINE` (an engine name as `ledgerbench list`
/// shows it, say `mem`) to stall that engine's stores only.
pub const STALL_ENV: &str = "LEDGERBENCH_PLANT_STALL";

/// A kind of store call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Call {
    /// `write` (puts and deletes, in batches).
    Put,
    /// `flush`.
    Flush,
    /// `get_into` and `get_many`.
    Get,
    /// `scan`.
    Scan,
    /// `compact`.
    Compact,
}

impl std::fmt::Display for Call {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Put => "put",
            Self::Flush => "flush",
            Self::Get => "get",
            Self::Scan => "scan",
            Self::Compact => "compact",
        })
    }
}

/// A planted stall: which call, of which engine's stores.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stall {
    /// The call that blocks.
    pub call: Call,
    /// Only this engine's stores (every store when `None`).
    pub engine: Option<String>,
}

impl Stall {
    /// Parses `CALL` or `CALL:ENGINE`.
    pub fn parse(v: &str) -> Option<Self> {
        let (call, engine) = match v.trim().split_once(':') {
            Some((c, e)) if !e.is_empty() => (c, Some(e.to_string())),
            Some(_) => return None,
            None => (v.trim(), None),
        };
        let call = match call {
            "put" => Call::Put,
            "flush" => Call::Flush,
            "get" => Call::Get,
            "scan" => Call::Scan,
            "compact" => Call::Compact,
            _ => return None,
        };
        Some(Self { call, engine })
    }

    /// Whether a store of `engine` stalls.
    pub fn applies_to(&self, engine: &str) -> bool {
        self.engine.as_deref().is_none_or(|e| e == engine)
    }
}

impl std::fmt::Display for Stall {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.engine {
            Some(e) => write!(f, "{}:{e}", self.call),
            None => write!(f, "{}", self.call),
        }
    }
}

/// The planted stall, when the variable names one (read once; a value
/// that names none is said once and plants nothing).
pub fn stall() -> Option<Stall> {
    static STALL: std::sync::OnceLock<Option<Stall>> = std::sync::OnceLock::new();
    STALL
        .get_or_init(|| {
            let v = std::env::var(STALL_ENV).ok()?;
            let s = Stall::parse(&v);
            if s.is_none() {
                ledgerbench_core::note!(
                    "ledgerbench: {STALL_ENV}={v} ignored: give put, flush, get, scan or compact, optionally :ENGINE"
                );
            }
            s
        })
        .clone()
}

/// Blocks the calling thread for good.
pub fn forever() -> ! {
    loop {
        std::thread::sleep(Duration::from_secs(3600));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stalls_parse_and_name_their_engine() {
        let s = Stall::parse("flush").expect("flush");
        assert_eq!((s.call, s.engine.clone()), (Call::Flush, None));
        assert!(s.applies_to("mem") && s.applies_to("rocksdb"));
        let s = Stall::parse("get:mem").expect("get:mem");
        assert!(s.applies_to("mem") && !s.applies_to("redb"));
        assert_eq!(s.to_string(), "get:mem");
        for bad in ["", "put:", "write", "sleep:mem"] {
            assert!(Stall::parse(bad).is_none(), "{bad}");
        }
    }
}
