//! The trie of a sorted key set built from scratch, bottom up: the bulk
//! load of a run's accounts, and the independent root every incremental
//! update is checked against.
//!
//! A subtrie's top node is returned unstored, because where it hangs (its
//! path) is only known once its parent decides whether to fold it into an
//! extension; every node below it is already handed to the sink.

use crate::node::{Node, Ref, nibble, reference};
use crate::{Hash, TrieError, keccak};

/// One key and its value, as the builder reads it.
pub trait Leaf {
    /// The key (every key of one trie has the same length).
    fn key(&self) -> &[u8];
    /// The value stored at the key.
    fn value(&self) -> Vec<u8>;
}

impl Leaf for (Vec<u8>, Vec<u8>) {
    fn key(&self) -> &[u8] {
        &self.0
    }
    fn value(&self) -> Vec<u8> {
        self.1.clone()
    }
}

/// Where finished nodes go: (path of the node, its hash, its RLP). Only
/// hashed nodes are stored; inline ones live in their parents.
pub type Sink<'a> = dyn FnMut(&[u8], &Hash, &[u8]) -> Result<(), TrieError> + 'a;

/// The root hash of `items` (sorted by key, distinct, keys of one length),
/// every stored node handed to `sink`.
pub fn root<L: Leaf>(items: &[L], sink: &mut Sink<'_>) -> Result<Hash, TrieError> {
    let top = match items {
        [] => None,
        _ => Some(subtrie(items, 0, &mut Vec::new(), sink)?),
    };
    finish_root(top, sink)
}

/// The root of a trie built one bucket at a time: bucket `b` (of
/// `16^depth`) holds the keys whose first `depth` nibbles spell `b`, and
/// `bucket(b)` returns them sorted. Only one bucket is in memory at once.
pub fn root_by_buckets<L: Leaf>(
    depth: usize,
    bucket: &mut dyn FnMut(u64) -> Result<Vec<L>, TrieError>,
    sink: &mut Sink<'_>,
) -> Result<Hash, TrieError> {
    let count = 16u64.pow(depth as u32);
    let mut tops = Vec::with_capacity(count as usize);
    let mut path = Vec::with_capacity(64);
    for b in 0..count {
        let items = bucket(b)?;
        path.clear();
        path.extend((0..depth).rev().map(|i| ((b >> (4 * i)) & 0xf) as u8));
        if let Some(bad) = items
            .iter()
            .find(|l| !(0..depth).all(|i| nibble(l.key(), i) == path[i]))
        {
            return Err(TrieError::Order(format!(
                "bucket {b} holds key {} of another bucket",
                hex(bad.key())
            )));
        }
        tops.push(match items.is_empty() {
            true => None,
            false => Some(subtrie(&items, depth, &mut path, sink)?),
        });
    }
    let top = upper(&mut tops, &mut Vec::new(), sink)?;
    finish_root(top, sink)
}

fn finish_root(top: Option<Node>, sink: &mut Sink<'_>) -> Result<Hash, TrieError> {
    match top {
        None => Ok(crate::EMPTY_ROOT),
        // The root is hashed and stored whatever its size.
        Some(n) => {
            let rlp = n.encode();
            let h = keccak(&rlp);
            sink(&[], &h, &rlp)?;
            Ok(h)
        }
    }
}

/// The buckets' tops folded into the levels above them.
fn upper(
    tops: &mut [Option<Node>],
    path: &mut Vec<u8>,
    sink: &mut Sink<'_>,
) -> Result<Option<Node>, TrieError> {
    if tops.len() == 1 {
        return Ok(tops[0].take());
    }
    let width = tops.len() / 16;
    let mut subs: [Option<Node>; 16] = Default::default();
    for (n, chunk) in tops.chunks_mut(width).enumerate() {
        path.push(n as u8);
        subs[n] = upper(chunk, path, sink)?;
        path.pop();
    }
    combine(subs, path, sink)
}

/// The node over sixteen subtries at `path`: none, the only one folded
/// up a nibble, or a branch of the finished ones.
fn combine(
    subs: [Option<Node>; 16],
    path: &mut Vec<u8>,
    sink: &mut Sink<'_>,
) -> Result<Option<Node>, TrieError> {
    let present = subs.iter().filter(|s| s.is_some()).count();
    if present <= 1 {
        let Some((n, node)) = subs
            .into_iter()
            .enumerate()
            .find_map(|(n, s)| s.map(|s| (n, s)))
        else {
            return Ok(None);
        };
        let n = n as u8;
        return Ok(Some(match node {
            Node::Leaf { path: p, value } => Node::Leaf {
                path: prepend(n, p),
                value,
            },
            Node::Extension { path: p, child } => Node::Extension {
                path: prepend(n, p),
                child,
            },
            branch @ Node::Branch { .. } => {
                path.push(n);
                let child = finish(branch, path, sink)?;
                path.pop();
                Node::Extension {
                    path: vec![n],
                    child,
                }
            }
        }));
    }
    let mut children: Box<[Option<Ref>; 16]> = Box::default();
    for (n, s) in subs.into_iter().enumerate() {
        if let Some(node) = s {
            path.push(n as u8);
            children[n] = Some(finish(node, path, sink)?);
            path.pop();
        }
    }
    Ok(Some(Node::Branch { children }))
}

fn prepend(n: u8, mut p: Vec<u8>) -> Vec<u8> {
    p.insert(0, n);
    p
}

/// `node`, now known to hang at `path`: encoded, stored when hashed.
pub(crate) fn finish(node: Node, path: &[u8], sink: &mut Sink<'_>) -> Result<Ref, TrieError> {
    let rlp = node.encode();
    let r = reference(&rlp);
    if let Ref::Hash(h) = &r {
        sink(path, h, &rlp)?;
    }
    Ok(r)
}

/// The unstored top node of the keys in `items`, which share their first
/// `depth` nibbles (spelled by `path`).
fn subtrie<L: Leaf>(
    items: &[L],
    depth: usize,
    path: &mut Vec<u8>,
    sink: &mut Sink<'_>,
) -> Result<Node, TrieError> {
    let first = items[0].key();
    let width = first.len() * 2;
    if items.len() == 1 {
        return Ok(Node::Leaf {
            path: (depth..width).map(|i| nibble(first, i)).collect(),
            value: items[0].value(),
        });
    }
    let last = items[items.len() - 1].key();
    if last.len() != first.len() || first >= last {
        return Err(TrieError::Order(format!(
            "keys must be sorted, distinct and of one length: {} then {}",
            hex(first),
            hex(last)
        )));
    }
    // Sorted, so what the first and last share, all share.
    let shared = (depth..width)
        .take_while(|&i| nibble(first, i) == nibble(last, i))
        .count();
    if shared > 0 {
        let ext: Vec<u8> = (depth..depth + shared).map(|i| nibble(first, i)).collect();
        let len = path.len();
        path.extend_from_slice(&ext);
        let branch = subtrie(items, depth + shared, path, sink)?;
        let child = finish(branch, path, sink)?;
        path.truncate(len);
        return Ok(Node::Extension { path: ext, child });
    }
    let mut subs: [Option<Node>; 16] = Default::default();
    let mut start = 0;
    while start < items.len() {
        let n = nibble(items[start].key(), depth);
        let end = start
            + items[start..]
                .iter()
                .take_while(|l| l.key().len() == first.len() && nibble(l.key(), depth) == n)
                .count();
        if subs[n as usize].is_some() {
            return Err(TrieError::Order(format!(
                "keys must be sorted: {} is out of order",
                hex(items[start].key())
            )));
        }
        path.push(n);
        subs[n as usize] = Some(subtrie(&items[start..end], depth + 1, path, sink)?);
        path.pop();
        start = end;
    }
    Ok(combine(subs, path, sink)?.expect("two keys or more"))
}

pub use ledgerbench_core::hex;
