//! Trie nodes and their canonical encoding: RLP of Ethereum's leaf,
//! extension and branch nodes, hex-prefix paths, and how a parent refers to
//! a child (by keccak hash, or inline when the child's RLP is under 32
//! bytes).

use crate::{Hash, TrieError, keccak};

/// How a parent holds a child.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ref {
    /// The child's keccak hash: the child is a stored node.
    Hash(Hash),
    /// The child's whole RLP (under 32 bytes): it lives inside its parent
    /// and is never stored on its own.
    Inline(Vec<u8>),
}

/// A decoded node. Paths are nibbles, one per byte.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Node {
    /// The end of one key: the rest of its path and its value.
    Leaf {
        /// Nibbles left of the key below the node's position.
        path: Vec<u8>,
        /// The value (an account's RLP, here).
        value: Vec<u8>,
    },
    /// A run of nibbles every key below shares, then one child.
    Extension {
        /// The shared nibbles.
        path: Vec<u8>,
        /// The branch below.
        child: Ref,
    },
    /// Sixteen children, one per next nibble. The value slot is always
    /// empty: every key has the same length, so no key ends at a branch.
    Branch {
        /// Children by nibble.
        children: Box<[Option<Ref>; 16]>,
    },
}

impl Node {
    /// The node's RLP.
    pub fn encode(&self) -> Vec<u8> {
        let mut payload = Vec::with_capacity(128);
        match self {
            Node::Leaf { path, value } => {
                bytes(&mut payload, &hex_prefix(path, true));
                bytes(&mut payload, value);
            }
            Node::Extension { path, child } => {
                bytes(&mut payload, &hex_prefix(path, false));
                child_ref(&mut payload, Some(child));
            }
            Node::Branch { children } => {
                for c in children.iter() {
                    child_ref(&mut payload, c.as_ref());
                }
                // The value slot: empty.
                payload.push(0x80);
            }
        }
        let mut out = Vec::with_capacity(payload.len() + 3);
        header(&mut out, 0xc0, payload.len());
        out.extend_from_slice(&payload);
        out
    }

    /// Decodes a node's RLP.
    pub fn decode(rlp: &[u8]) -> Result<Node, TrieError> {
        let (list, body, rest) = item(rlp)?;
        if !list || !rest.is_empty() {
            return Err(TrieError::Decode("a node is one RLP list".into()));
        }
        let mut items = Vec::with_capacity(17);
        let mut at = body;
        while !at.is_empty() {
            let (is_list, payload, rest) = item(at)?;
            let whole = &at[..at.len() - rest.len()];
            items.push((is_list, payload, whole));
            at = rest;
        }
        match items.len() {
            2 => {
                let (path, leaf) = hex_prefix_decode(items[0].1)?;
                if leaf {
                    if items[1].0 {
                        return Err(TrieError::Decode("a leaf's value is a string".into()));
                    }
                    Ok(Node::Leaf {
                        path,
                        value: items[1].1.to_vec(),
                    })
                } else {
                    let child = decode_ref(items[1])?
                        .ok_or_else(|| TrieError::Decode("an extension has a child".into()))?;
                    Ok(Node::Extension { path, child })
                }
            }
            17 => {
                if !items[16].1.is_empty() || items[16].0 {
                    return Err(TrieError::Decode(
                        "a branch with a value: keys of different lengths".into(),
                    ));
                }
                let mut children: Box<[Option<Ref>; 16]> = Box::default();
                for (i, it) in items[..16].iter().enumerate() {
                    children[i] = decode_ref(*it)?;
                }
                Ok(Node::Branch { children })
            }
            n => Err(TrieError::Decode(format!(
                "a node has 2 or 17 items, not {n}"
            ))),
        }
    }
}

/// How a parent refers to a node of RLP `rlp`.
pub fn reference(rlp: &[u8]) -> Ref {
    if rlp.len() < 32 {
        Ref::Inline(rlp.to_vec())
    } else {
        Ref::Hash(keccak(rlp))
    }
}

fn decode_ref((is_list, payload, whole): (bool, &[u8], &[u8])) -> Result<Option<Ref>, TrieError> {
    if is_list {
        return Ok(Some(Ref::Inline(whole.to_vec())));
    }
    match payload.len() {
        0 => Ok(None),
        32 => Ok(Some(Ref::Hash(payload.try_into().expect("32 bytes")))),
        n => Err(TrieError::Decode(format!(
            "a child is a 32-byte hash or an inline list, not {n} bytes"
        ))),
    }
}

fn child_ref(out: &mut Vec<u8>, r: Option<&Ref>) {
    match r {
        None => out.push(0x80),
        Some(Ref::Hash(h)) => bytes(out, h),
        Some(Ref::Inline(rlp)) => out.extend_from_slice(rlp),
    }
}

/// Appends `b` as an RLP string.
pub fn bytes(out: &mut Vec<u8>, b: &[u8]) {
    if b.len() == 1 && b[0] < 0x80 {
        out.push(b[0]);
    } else {
        header(out, 0x80, b.len());
        out.extend_from_slice(b);
    }
}

/// Appends an RLP list of already-encoded `items`.
pub fn list(out: &mut Vec<u8>, items: &[u8]) {
    header(out, 0xc0, items.len());
    out.extend_from_slice(items);
}

fn header(out: &mut Vec<u8>, base: u8, len: usize) {
    if len < 56 {
        out.push(base + len as u8);
    } else {
        let be = (len as u64).to_be_bytes();
        let skip = be.iter().take_while(|b| **b == 0).count();
        out.push(base + 55 + (8 - skip) as u8);
        out.extend_from_slice(&be[skip..]);
    }
}

/// One RLP item at the front of `b`: (is a list, payload, what follows).
fn item(b: &[u8]) -> Result<(bool, &[u8], &[u8]), TrieError> {
    let short = || TrieError::Decode("RLP shorter than its header says".into());
    let first = *b.first().ok_or_else(short)?;
    let (list, start, len) = match first {
        0x00..=0x7f => return Ok((false, &b[..1], &b[1..])),
        0x80..=0xb7 => (false, 1, (first - 0x80) as usize),
        0xb8..=0xbf => long(b, (first - 0xb7) as usize, false)?,
        0xc0..=0xf7 => (true, 1, (first - 0xc0) as usize),
        0xf8..=0xff => long(b, (first - 0xf7) as usize, true)?,
    };
    let end = start
        .checked_add(len)
        .filter(|e| *e <= b.len())
        .ok_or_else(short)?;
    Ok((list, &b[start..end], &b[end..]))
}

fn long(b: &[u8], n: usize, list: bool) -> Result<(bool, usize, usize), TrieError> {
    let lenb = b
        .get(1..1 + n)
        .ok_or_else(|| TrieError::Decode("RLP length cut short".into()))?;
    let len = lenb.iter().fold(0usize, |a, x| (a << 8) | *x as usize);
    Ok((list, 1 + n, len))
}

/// Ethereum's hex-prefix (compact) encoding of a nibble path.
pub fn hex_prefix(nibbles: &[u8], leaf: bool) -> Vec<u8> {
    let flag = if leaf { 2u8 } else { 0 };
    let mut out = Vec::with_capacity(nibbles.len() / 2 + 1);
    let rest = if !nibbles.len().is_multiple_of(2) {
        out.push(((flag + 1) << 4) | nibbles[0]);
        &nibbles[1..]
    } else {
        out.push(flag << 4);
        nibbles
    };
    for pair in rest.chunks(2) {
        out.push((pair[0] << 4) | pair[1]);
    }
    out
}

fn hex_prefix_decode(b: &[u8]) -> Result<(Vec<u8>, bool), TrieError> {
    let first = *b
        .first()
        .ok_or_else(|| TrieError::Decode("an empty hex-prefix path".into()))?;
    let flag = first >> 4;
    if flag > 3 {
        return Err(TrieError::Decode(format!("hex-prefix flag {flag}")));
    }
    let mut out = Vec::with_capacity(b.len() * 2);
    if flag & 1 == 1 {
        out.push(first & 0x0f);
    }
    for x in &b[1..] {
        out.push(x >> 4);
        out.push(x & 0x0f);
    }
    Ok((out, flag & 2 == 2))
}

/// Nibble `i` of `key`.
pub fn nibble(key: &[u8], i: usize) -> u8 {
    let b = key[i / 2];
    if i.is_multiple_of(2) {
        b >> 4
    } else {
        b & 0x0f
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nodes_round_trip_through_their_encoding() {
        let leaf = Node::Leaf {
            path: vec![1, 2, 3],
            value: vec![7; 70],
        };
        let ext = Node::Extension {
            path: vec![4, 5],
            child: reference(&leaf.encode()),
        };
        let mut children: Box<[Option<Ref>; 16]> = Box::default();
        children[3] = Some(reference(&ext.encode()));
        children[9] = Some(reference(
            &Node::Leaf {
                path: vec![1],
                value: vec![1],
            }
            .encode(),
        ));
        assert!(matches!(children[9], Some(Ref::Inline(_))));
        let branch = Node::Branch { children };
        for n in [leaf, ext, branch] {
            assert_eq!(Node::decode(&n.encode()).expect("decodes"), n);
        }
    }

    #[test]
    fn hex_prefix_matches_the_yellow_paper() {
        assert_eq!(hex_prefix(&[1, 2, 3, 4, 5], false), [0x11, 0x23, 0x45]);
        assert_eq!(
            hex_prefix(&[0, 1, 2, 3, 4, 5], false),
            [0x00, 0x01, 0x23, 0x45]
        );
        assert_eq!(
            hex_prefix(&[0, 15, 1, 12, 11, 8], true),
            [0x20, 0x0f, 0x1c, 0xb8]
        );
        assert_eq!(hex_prefix(&[15, 1, 12, 11, 8], true), [0x3f, 0x1c, 0xb8]);
        for (n, leaf) in [(vec![1, 2, 3], true), (vec![], false), (vec![9, 9], true)] {
            assert_eq!(
                hex_prefix_decode(&hex_prefix(&n, leaf)).expect("ok"),
                (n, leaf)
            );
        }
    }

    #[test]
    fn garbage_is_an_error_not_a_panic() {
        for bad in [
            &[][..],
            &[0xc1][..],
            &[0xc2, 0x80][..],
            &[0xf9, 0xff][..],
            &[0x80][..],
        ] {
            assert!(Node::decode(bad).is_err(), "{bad:?}");
        }
    }
}
