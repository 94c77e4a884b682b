//! The accounts of a state trie, regenerated from (seed, position): the
//! hashed key of account `i` and its RLP at each version, and the sorted
//! key set one bucket at a time, so neither a load nor a reference root
//! holds more than a bucket of keys.

use ledgerbench_rng::{Rng, stream};

use crate::build::Leaf;
use crate::node::{bytes, list};
use crate::{EMPTY_ROOT, Hash, keccak};

/// Keccak-256 of the empty string: the code hash of an account without code.
const EMPTY_CODE: Hash = [
    0xc5, 0xd2, 0x46, 0x01, 0x86, 0xf7, 0x23, 0x3c, 0x92, 0x7e, 0x7d, 0xb2, 0xdc, 0xc7, 0x03, 0xc0,
    0xe5, 0x00, 0xb6, 0x53, 0xca, 0x82, 0x27, 0x3b, 0x7b, 0xfa, 0xd8, 0x04, 0x5d, 0x85, 0xa4, 0x70,
];

const TAG_BALANCE: u64 = 0x7462;

/// Most keys a bucket of the sorted key set holds on average: 2^18, about
/// 10 MiB of keys and positions in memory at once.
const BUCKET_KEYS: u64 = 1 << 18;

/// `n` accounts of seed `seed`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Accounts {
    /// Seed of keys and balances.
    pub seed: u64,
    /// Accounts.
    pub n: u64,
}

/// Account `index` at `version`, with its hashed key, as the trie builder
/// reads it.
#[derive(Debug, Clone, Copy)]
pub struct Account {
    /// keccak(seed, index): the trie key.
    pub key: Hash,
    /// Position of the account.
    pub index: u64,
    /// Times it was updated.
    pub version: u32,
    /// The seed of its balance.
    pub seed: u64,
}

impl Leaf for Account {
    fn key(&self) -> &[u8] {
        &self.key
    }
    fn value(&self) -> Vec<u8> {
        account_rlp(self.seed, self.index, self.version)
    }
}

impl Accounts {
    /// The hashed key of account `i`, as a state trie keys it (keccak of
    /// an address; here of the seed and the position).
    pub fn key(&self, i: u64) -> Hash {
        let mut pre = [0u8; 16];
        pre[..8].copy_from_slice(&self.seed.to_le_bytes());
        pre[8..].copy_from_slice(&i.to_le_bytes());
        keccak(&pre)
    }

    /// Account `i` at `version`.
    pub fn account(&self, i: u64, version: u32) -> Account {
        Account {
            key: self.key(i),
            index: i,
            version,
            seed: self.seed,
        }
    }

    /// Nibbles of key prefix that split the sorted key set into buckets
    /// of at most about 2^18 keys each.
    pub fn bucket_depth(&self) -> usize {
        let mut d = 0;
        while self.n > BUCKET_KEYS << (4 * d) {
            d += 1;
        }
        d
    }

    /// The accounts whose keys start with the `depth` nibbles of `bucket`,
    /// sorted by key, each at the version `version` gives. One pass over
    /// every position: a whole sorted load costs `16^depth` passes of
    /// hashing, not memory.
    pub fn bucket(&self, depth: usize, bucket: u64, version: &dyn Fn(u64) -> u32) -> Vec<Account> {
        let shift = 64 - 4 * depth as u32;
        let mut out: Vec<Account> = (0..self.n)
            .filter_map(|i| {
                let key = self.key(i);
                let top = u64::from_be_bytes(key[..8].try_into().expect("8 bytes"));
                (depth == 0 || top >> shift == bucket).then(|| Account {
                    key,
                    index: i,
                    version: version(i),
                    seed: self.seed,
                })
            })
            .collect();
        out.sort_unstable_by_key(|a| a.key);
        out
    }
}

/// An account's RLP: [nonce, balance, storage root, code hash], an
/// externally owned account whose nonce is its version and whose balance
/// (up to 12 bytes) is regenerated from (seed, index, version): about 80
/// bytes, a leaf of about 110.
pub fn account_rlp(seed: u64, index: u64, version: u32) -> Vec<u8> {
    let mut r = Rng::new(stream(seed ^ TAG_BALANCE, index, u64::from(version)));
    let mut balance = r.next_u64().to_be_bytes().to_vec();
    balance.extend_from_slice(&(r.next_u64() as u32).to_be_bytes());
    let mut items = Vec::with_capacity(90);
    bytes(&mut items, trim(&u64::from(version).to_be_bytes()));
    bytes(&mut items, trim(&balance));
    bytes(&mut items, &EMPTY_ROOT);
    bytes(&mut items, &EMPTY_CODE);
    let mut out = Vec::with_capacity(items.len() + 2);
    list(&mut out, &items);
    out
}

/// An RLP integer: big-endian without leading zeros.
fn trim(b: &[u8]) -> &[u8] {
    let skip = b.iter().take_while(|x| **x == 0).count();
    &b[skip..]
}
