//! The trie as a store holds it: nodes fetched one GET at a time as a
//! node walks them, a block's updates rewritten up to the root and put in
//! the block's batch.

use std::time::Instant;

use ledgerbench_core::{Batch, KvStore};

use crate::build::hex;
use crate::node::{Node, Ref, nibble, reference};
use crate::{Hash, TrieError, keccak};

/// How trie nodes are keyed in the store.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Scheme {
    /// Node hash -> node: every update adds new nodes, old ones stay (no
    /// pruning), so the store grows with every block.
    Hash,
    /// `A` + nibble path (one nibble a byte) -> node: an update overwrites
    /// the nodes on its path in place.
    Path,
}

impl Scheme {
    /// The scheme's name.
    pub fn name(self) -> &'static str {
        match self {
            Scheme::Hash => "hash",
            Scheme::Path => "path",
        }
    }

    /// The store key of the node at `path` with hash `hash`.
    pub fn node_key(self, path: &[u8], hash: &Hash, out: &mut Vec<u8>) {
        out.clear();
        match self {
            Scheme::Hash => out.extend_from_slice(hash),
            Scheme::Path => {
                out.push(b'A');
                out.extend_from_slice(path);
            }
        }
    }
}

/// The flat table's key of an account (`a` + its hashed key): the
/// "snapshot" a node reads an account from without walking the trie.
pub fn flat_key(key: &[u8]) -> Vec<u8> {
    let mut k = Vec::with_capacity(1 + key.len());
    k.push(b'a');
    k.extend_from_slice(key);
    k
}

/// What one block's trie update cost.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct UpdateCost {
    /// Nodes fetched from the store.
    pub nodes_read: u64,
    /// Their bytes.
    pub bytes_read: u64,
    /// Nodes put (new hashes, or paths overwritten).
    pub nodes_written: u64,
    /// Their bytes.
    pub bytes_written: u64,
    /// Seconds in fetches and decoding.
    pub walk_secs: f64,
    /// Seconds encoding and hashing the new nodes.
    pub hash_secs: f64,
}

/// One read's walk: nodes fetched from the store, one per level.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ReadTrace {
    /// Stored nodes fetched, root first.
    pub fetched: u32,
    /// Nibbles consumed before the leaf.
    pub leaf_depth: u32,
}

/// A trie in a store, at root `root`.
pub struct Trie<'s> {
    store: &'s dyn KvStore,
    scheme: Scheme,
    root: Hash,
    /// Reused for every store key and fetched node, so a walk allocates
    /// only the nodes it decodes.
    key: Vec<u8>,
    buf: Vec<u8>,
}

impl<'s> Trie<'s> {
    /// The trie of root `root` in `store`, keyed by `scheme`.
    pub fn new(store: &'s dyn KvStore, scheme: Scheme, root: Hash) -> Self {
        Trie {
            store,
            scheme,
            root,
            key: Vec::with_capacity(66),
            buf: Vec::with_capacity(600),
        }
    }

    /// The current root hash.
    pub fn root(&self) -> Hash {
        self.root
    }

    /// Fetches the stored node at `path` of hash `hash`.
    fn fetch(&mut self, path: &[u8], hash: &Hash, out: &mut Vec<u8>) -> Result<(), TrieError> {
        self.scheme.node_key(path, hash, &mut self.key);
        if !self.store.get_into(&self.key, out)? {
            return Err(TrieError::Missing {
                path: nibble_hex(path),
            });
        }
        // The path scheme finds a node by where it is; a stale node there
        // would be a lost write, which a walk must not read as current.
        if self.scheme == Scheme::Path && keccak(out) != *hash {
            return Err(TrieError::Decode(format!(
                "the node at path {} is not the one its parent names",
                nibble_hex(path)
            )));
        }
        Ok(())
    }

    /// The value at `key`, walking from the root; `probe(level, done)` is
    /// called before (`false`) and after (`true`) each node fetched from
    /// the store, so a caller can meter each level.
    pub fn read(
        &mut self,
        key: &[u8],
        probe: &mut dyn FnMut(u32, bool),
    ) -> Result<(Option<Vec<u8>>, ReadTrace), TrieError> {
        let mut buf = std::mem::take(&mut self.buf);
        let out = self.walk(key, probe, &mut buf);
        self.buf = buf;
        out
    }

    fn walk(
        &mut self,
        key: &[u8],
        probe: &mut dyn FnMut(u32, bool),
        buf: &mut Vec<u8>,
    ) -> Result<(Option<Vec<u8>>, ReadTrace), TrieError> {
        let mut trace = ReadTrace::default();
        if self.root == crate::EMPTY_ROOT {
            return Ok((None, trace));
        }
        let mut path = Vec::with_capacity(64);
        let mut next = Ref::Hash(self.root);
        let width = key.len() * 2;
        loop {
            let node = match &next {
                Ref::Inline(rlp) => Node::decode(rlp)?,
                Ref::Hash(h) => {
                    probe(trace.fetched, false);
                    let h = *h;
                    self.fetch(&path, &h, buf)?;
                    probe(trace.fetched, true);
                    trace.fetched += 1;
                    Node::decode(buf)?
                }
            };
            let at = path.len();
            match node {
                Node::Leaf { path: p, value } => {
                    trace.leaf_depth = at as u32;
                    let same = at + p.len() == width
                        && p.iter().enumerate().all(|(i, n)| nibble(key, at + i) == *n);
                    return Ok((same.then_some(value), trace));
                }
                Node::Extension { path: p, child } => {
                    if at + p.len() > width
                        || !p.iter().enumerate().all(|(i, n)| nibble(key, at + i) == *n)
                    {
                        return Ok((None, trace));
                    }
                    path.extend_from_slice(&p);
                    next = child;
                }
                Node::Branch { mut children } => {
                    if at >= width {
                        return Ok((None, trace));
                    }
                    let n = nibble(key, at);
                    let Some(child) = children[n as usize].take() else {
                        return Ok((None, trace));
                    };
                    path.push(n);
                    next = child;
                }
            }
        }
    }

    /// Sets the value of every key of `updates` (sorted, distinct, each
    /// already in the trie), rewriting each path up to the root once per
    /// block, and puts the new nodes in `batch`. The new root is current
    /// once the caller commits `batch`.
    pub fn update(
        &mut self,
        updates: &[(Vec<u8>, Vec<u8>)],
        batch: &mut Batch,
    ) -> Result<UpdateCost, TrieError> {
        let mut cost = UpdateCost::default();
        if updates.is_empty() {
            return Ok(cost);
        }
        if self.root == crate::EMPTY_ROOT {
            return Err(TrieError::NotInTrie(hex(&updates[0].0)));
        }
        if let Some(w) = updates.windows(2).find(|w| w[0].0 >= w[1].0) {
            return Err(TrieError::Order(format!(
                "a block's updates must be sorted and distinct: {} then {}",
                hex(&w[0].0),
                hex(&w[1].0)
            )));
        }
        let mut path = Vec::with_capacity(64);
        let root = self.load(&Ref::Hash(self.root), &path, &mut cost)?;
        let new = self.rewrite(root, &mut path, updates, &mut cost, batch)?;
        let t = Instant::now();
        let rlp = new.encode();
        let h = keccak(&rlp);
        cost.hash_secs += t.elapsed().as_secs_f64();
        self.put(&[], &h, &rlp, &mut cost, batch);
        self.root = h;
        Ok(cost)
    }

    fn load(&mut self, r: &Ref, path: &[u8], cost: &mut UpdateCost) -> Result<Node, TrieError> {
        let t = Instant::now();
        let node = match r {
            Ref::Inline(rlp) => Node::decode(rlp)?,
            Ref::Hash(h) => {
                let mut buf = std::mem::take(&mut self.buf);
                let fetched = self.fetch(path, h, &mut buf);
                let node = fetched.and_then(|()| Node::decode(&buf));
                cost.nodes_read += 1;
                cost.bytes_read += buf.len() as u64;
                self.buf = buf;
                node?
            }
        };
        cost.walk_secs += t.elapsed().as_secs_f64();
        Ok(node)
    }

    fn put(&mut self, path: &[u8], h: &Hash, rlp: &[u8], cost: &mut UpdateCost, batch: &mut Batch) {
        self.scheme.node_key(path, h, &mut self.key);
        batch.put(&self.key, rlp);
        cost.nodes_written += 1;
        cost.bytes_written += rlp.len() as u64;
    }

    /// `node` (at `path`) with the values of `items` set below it.
    fn rewrite(
        &mut self,
        node: Node,
        path: &mut Vec<u8>,
        items: &[(Vec<u8>, Vec<u8>)],
        cost: &mut UpdateCost,
        batch: &mut Batch,
    ) -> Result<Node, TrieError> {
        let at = path.len();
        let first = &items[0].0;
        let width = first.len() * 2;
        let under = |k: &[u8], p: &[u8]| {
            at + p.len() <= width && p.iter().enumerate().all(|(i, n)| nibble(k, at + i) == *n)
        };
        match node {
            Node::Leaf { path: p, .. } => {
                if items.len() != 1 || at + p.len() != width || !under(first, &p) {
                    let stray = items
                        .iter()
                        .find(|(k, _)| !under(k, &p))
                        .unwrap_or(&items[0]);
                    return Err(TrieError::NotInTrie(hex(&stray.0)));
                }
                Ok(Node::Leaf {
                    path: p,
                    value: items[0].1.clone(),
                })
            }
            Node::Extension { path: p, child } => {
                if let Some((k, _)) = items.iter().find(|(k, _)| !under(k, &p)) {
                    return Err(TrieError::NotInTrie(hex(k)));
                }
                path.extend_from_slice(&p);
                let below = self.load(&child, path, cost)?;
                let below = self.rewrite(below, path, items, cost, batch)?;
                let child = self.finish(below, path, cost, batch);
                path.truncate(at);
                Ok(Node::Extension { path: p, child })
            }
            Node::Branch { mut children } => {
                if at >= width {
                    return Err(TrieError::NotInTrie(hex(first)));
                }
                let mut start = 0;
                while start < items.len() {
                    let n = nibble(&items[start].0, at);
                    let end = start
                        + items[start..]
                            .iter()
                            .take_while(|(k, _)| nibble(k, at) == n)
                            .count();
                    let Some(child) = children[n as usize].take() else {
                        return Err(TrieError::NotInTrie(hex(&items[start].0)));
                    };
                    path.push(n);
                    let below = self.load(&child, path, cost)?;
                    let below = self.rewrite(below, path, &items[start..end], cost, batch)?;
                    children[n as usize] = Some(self.finish(below, path, cost, batch));
                    path.pop();
                    start = end;
                }
                Ok(Node::Branch { children })
            }
        }
    }

    /// `node` at `path` encoded, put when hashed; its reference.
    fn finish(&mut self, node: Node, path: &[u8], cost: &mut UpdateCost, batch: &mut Batch) -> Ref {
        let t = Instant::now();
        let rlp = node.encode();
        let r = reference(&rlp);
        cost.hash_secs += t.elapsed().as_secs_f64();
        if let Ref::Hash(h) = &r {
            self.put(path, h, &rlp, cost, batch);
        }
        r
    }
}

fn nibble_hex(path: &[u8]) -> String {
    if path.is_empty() {
        return "(root)".into();
    }
    path.iter().map(|n| format!("{n:x}")).collect()
}
