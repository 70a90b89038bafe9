//! The arena's children and lookup indexes, built after the walk or after decoding the
//! worker process's reply, and that reply's encoding (the indexes are left out of it).

use super::{Construct, Node, Parsed, VarEntry};
use crate::semantic::facts::{VarKind, VarType};
use crate::semantic::wire::{Reader, Writer};
use clang_sys::*;
use std::ops::Range;

impl Parsed {
    /// The parse with its lookup indexes built.
    pub(super) fn indexed(
        nodes: Vec<Node>,
        vars: Vec<VarEntry>,
        errors: Vec<(usize, String)>,
        constructs: Vec<Construct>,
        skipped: Vec<Range<usize>>,
        truncated: Vec<usize>,
    ) -> Parsed {
        // Children by counting: parents precede their children, so each list is in order.
        // One pass over the nodes counts them and gathers the three lookup lists.
        let mut kid_at = vec![0usize; nodes.len() + 1];
        let mut positions: Vec<usize> = Vec::new();
        let mut refs: Vec<usize> = Vec::new();
        let mut decl_nodes: Vec<usize> = Vec::new();
        for (i, n) in nodes.iter().enumerate() {
            if let Some(p) = n.parent {
                kid_at[p + 1] += 1;
                if (n.is_stmt || n.is_expr) && nodes[p].is_stmt {
                    positions.push(i);
                }
            }
            match n.kind {
                CXCursor_DeclRefExpr if n.var.is_some() => refs.push(i),
                CXCursor_VarDecl | CXCursor_ParmDecl => decl_nodes.push(i),
                _ => {}
            }
        }
        for k in 1..kid_at.len() {
            kid_at[k] += kid_at[k - 1];
        }
        let mut kids = vec![0usize; kid_at[nodes.len()]];
        let mut next = kid_at.clone();
        for (i, n) in nodes.iter().enumerate() {
            if let Some(p) = n.parent {
                kids[next[p]] = i;
                next[p] += 1;
            }
        }
        positions.sort_by_key(|&i| (nodes[i].start, std::cmp::Reverse(nodes[i].end)));
        refs.sort_by_key(|&i| nodes[i].start);
        decl_nodes.sort_by_key(|&i| nodes[i].start);
        let mut decls_named: crate::hash::HashMap<String, Vec<usize>> = Default::default();
        let mut declared: crate::hash::HashMap<String, Vec<usize>> = Default::default();
        for &i in &decl_nodes {
            if let Some(v) = nodes[i].var {
                decls_named.entry(vars[v].name.clone()).or_default().push(i);
                declared
                    .entry(vars[v].name.clone())
                    .or_default()
                    .push(nodes[i].start);
            }
        }
        Parsed {
            nodes,
            kids,
            kid_at,
            vars,
            errors,
            constructs,
            skipped,
            truncated,
            positions,
            refs,
            decls_named,
            declared: std::sync::Arc::new(declared),
            includes: Vec::new(),
            missing_include: false,
            header_missing: Vec::new(),
            header_macros: Vec::new(),
        }
    }

    /// The parse as walked, without children or indexes (see `parse_for_encoding`).
    pub(super) fn unindexed(
        nodes: Vec<Node>,
        vars: Vec<VarEntry>,
        errors: Vec<(usize, String)>,
        constructs: Vec<Construct>,
        skipped: Vec<Range<usize>>,
        truncated: Vec<usize>,
    ) -> Parsed {
        Parsed {
            nodes,
            kids: Vec::new(),
            kid_at: Vec::new(),
            vars,
            errors,
            constructs,
            skipped,
            truncated,
            positions: Vec::new(),
            refs: Vec::new(),
            decls_named: Default::default(),
            declared: Default::default(),
            includes: Vec::new(),
            missing_include: false,
            header_missing: Vec::new(),
            header_macros: Vec::new(),
        }
    }

    /// For the worker process's reply (children and indexes are rebuilt on decoding).
    ///
    /// A node is its kind, its start less the previous node's, its length, how far back its
    /// parent is (0: none), its variable and its two classes in one number: mostly one byte
    /// each, half of what the plain numbers took, which the decoding reads back in as much
    /// less time.
    pub fn encode(&self, w: &mut Writer) {
        w.buf.reserve(self.nodes.len() * 8);
        let mut prev = 0usize;
        let mut i = 0usize;
        w.list(&self.nodes, |w, n| {
            w.int(i64::from(n.kind));
            w.int(n.start as i64 - prev as i64);
            prev = n.start;
            w.usize(n.end - n.start);
            w.usize(n.parent.map_or(0, |p| i - p));
            i += 1;
            w.opt(n.var);
            w.uint(u64::from(n.is_stmt) | u64::from(n.is_expr) << 1);
        });
        w.list(&self.vars, |w, v| {
            w.str(&v.name);
            match v.ty.kind {
                VarKind::Scalar => w.uint(0),
                VarKind::Pointer => w.uint(1),
                VarKind::Array { extent } => {
                    w.uint(2);
                    w.uint(extent.map_or(0, |e| e.saturating_add(1)));
                }
                VarKind::Struct => w.uint(3),
                VarKind::Other => w.uint(4),
            }
            w.bool(v.ty.is_const);
            w.bool(v.ty.incomplete);
            w.bool(v.ty.restrict);
            w.uint(u64::from(v.ty.dims));
            w.list(&v.ty.extents, |w, d| {
                w.opt(d.and_then(|d| usize::try_from(d).ok()))
            });
            // param_dims: absent, or each bound as spelled (absent: not a constant).
            w.bool(v.ty.param_dims.is_some());
            w.list(v.ty.param_dims.as_deref().unwrap_or(&[]), |w, d| {
                w.bool(d.is_some());
                w.str(d.as_deref().unwrap_or(""));
            });
            w.opt(v.decl);
            w.bool(v.decl_extent.is_some());
            w.range(&v.decl_extent.clone().unwrap_or(0..0));
            w.bool(v.invalid);
        });
        w.list(&self.errors, |w, (o, m)| {
            w.usize(*o);
            w.str(m);
        });
        w.list(&self.constructs, |w, c| {
            w.int(i64::from(c.kind));
            w.range(&c.directive);
            w.bool(c.stmt.is_some());
            w.range(&c.stmt.clone().unwrap_or(0..0));
        });
        w.list(&self.skipped, |w, r| w.range(r));
        w.list(&self.truncated, |w, o| w.usize(*o));
        w.list(&self.includes, |w, f| w.str(f));
        w.bool(self.missing_include);
        w.list(&self.header_missing, |w, (o, m, f)| {
            w.usize(*o);
            w.str(m);
            w.str(f);
        });
        w.list(&self.header_macros, |w, m| {
            w.str(&m.name);
            w.bool(m.params.is_some());
            w.list(m.params.as_deref().unwrap_or(&[]), |w, p| w.str(p));
            w.str(&m.body);
        });
    }

    /// The inverse of [`Parsed::encode`]; `None` for anything malformed or out of bounds.
    pub fn decode(r: &mut Reader) -> Option<Parsed> {
        let kind = |r: &mut Reader| CXCursorKind::try_from(r.int()?).ok();
        let mut prev = 0usize;
        let mut i = 0usize;
        let nodes = r.list(|r| {
            let kind = kind(r)?;
            let start = usize::try_from(i64::try_from(prev).ok()?.checked_add(r.int()?)?).ok()?;
            prev = start;
            let end = start.checked_add(r.usize()?)?;
            let parent = match r.usize()? {
                0 => None,
                back => Some(i.checked_sub(back)?),
            };
            i += 1;
            let var = r.opt()?;
            let classes = r.uint()?;
            if classes > 3 {
                return None;
            }
            Some(Node {
                kind,
                start,
                end,
                parent,
                var,
                is_stmt: classes & 1 != 0,
                is_expr: classes & 2 != 0,
            })
        })?;
        let vars = r.list(|r| {
            let name = r.str()?;
            let kind = match r.uint()? {
                0 => VarKind::Scalar,
                1 => VarKind::Pointer,
                2 => VarKind::Array {
                    extent: r.uint()?.checked_sub(1),
                },
                3 => VarKind::Struct,
                4 => VarKind::Other,
                _ => return None,
            };
            let ty = VarType {
                kind,
                is_const: r.bool()?,
                incomplete: r.bool()?,
                restrict: r.bool()?,
                dims: u8::try_from(r.uint()?).ok()?,
                extents: r.list(|r| Some(r.opt()?.map(|d| d as u64)))?,
                param_dims: {
                    let some = r.bool()?;
                    let dims = r.list(|r| {
                        let known = r.bool()?;
                        let text = r.str()?;
                        Some(known.then_some(text))
                    })?;
                    some.then_some(dims)
                },
            };
            let decl = r.opt()?;
            let has_extent = r.bool()?;
            let extent = r.range()?;
            let invalid = r.bool()?;
            Some(VarEntry {
                name,
                ty,
                decl,
                decl_extent: has_extent.then_some(extent),
                invalid,
            })
        })?;
        let errors = r.list(|r| Some((r.usize()?, r.str()?)))?;
        let constructs = r.list(|r| {
            let kind = kind(r)?;
            let directive = r.range()?;
            let has_stmt = r.bool()?;
            let stmt = r.range()?;
            Some(Construct {
                kind,
                directive,
                stmt: has_stmt.then_some(stmt),
            })
        })?;
        let skipped = r.list(|r| r.range())?;
        let truncated = r.list(|r| r.usize())?;
        let includes = r.list(|r| r.str())?;
        let missing_include = r.bool()?;
        let header_missing = r.list(|r| Some((r.usize()?, r.str()?, r.str()?)))?;
        let header_macros = r.list(|r| {
            let name = r.str()?;
            let function_like = r.bool()?;
            let params = r.list(|r| r.str())?;
            Some(crate::facts::HeaderMacro {
                name,
                params: function_like.then_some(params),
                body: r.str()?,
            })
        })?;
        // Each node's end is its start plus a length and its parent a distance back, so
        // starts precede ends and parents their children: only the variables are checked.
        if nodes.iter().any(|n| n.var.is_some_and(|v| v >= vars.len())) {
            return None;
        }
        let mut parsed = Parsed::indexed(nodes, vars, errors, constructs, skipped, truncated);
        parsed.includes = includes;
        parsed.missing_include = missing_include;
        parsed.header_missing = header_missing;
        parsed.header_macros = header_macros;
        Some(parsed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(
        kind: CXCursorKind,
        span: Range<usize>,
        parent: Option<usize>,
        var: Option<usize>,
        classes: u8,
    ) -> Node {
        Node {
            kind,
            start: span.start,
            end: span.end,
            parent,
            var,
            is_stmt: classes & 1 != 0,
            is_expr: classes & 2 != 0,
        }
    }

    /// The reply's bytes for a parse of `nodes` and `vars` alone.
    fn encoded(nodes: Vec<Node>, vars: Vec<VarEntry>) -> Vec<u8> {
        let parsed = Parsed::unindexed(nodes, vars, Vec::new(), Vec::new(), Vec::new(), Vec::new());
        let mut w = Writer::default();
        parsed.encode(&mut w);
        w.buf
    }

    /// The reply's nodes are delta-encoded (start against the previous node's, parent as a
    /// distance back): starts that go back, roots after children, far parents and every class
    /// pair come back as they were.
    #[test]
    fn nodes_round_trip_through_the_delta_encoding() {
        let nodes = vec![
            node(CXCursor_FunctionDecl, 0..5000, None, None, 0),
            node(CXCursor_CompoundStmt, 20..4990, Some(0), None, 1),
            node(CXCursor_DeclRefExpr, 300..301, Some(1), Some(0), 2),
            node(CXCursor_BinaryOperator, 299..310, Some(1), None, 3),
            node(CXCursor_VarDecl, 7000..7010, None, Some(1), 0),
            node(CXCursor_IntegerLiteral, 40..41, Some(1), None, 2),
        ];
        let var = |name: &str, decl: usize| VarEntry {
            name: name.into(),
            ty: VarType::unknown(),
            decl: Some(decl),
            decl_extent: Some(decl..decl + 1),
            invalid: false,
        };
        let buf = encoded(nodes.clone(), vec![var("a", 300), var("b", 7000)]);
        let back = Parsed::decode(&mut Reader::new(&buf)).expect("decodes");
        assert_eq!(format!("{:?}", back.nodes), format!("{nodes:?}"));
    }

    /// Header macros come back as they were: object-like, function-like without and with
    /// parameters.
    #[test]
    fn header_macros_round_trip() {
        let mut parsed = Parsed::unindexed(
            Vec::new(),
            Vec::new(),
            Vec::new(),
            Vec::new(),
            Vec::new(),
            Vec::new(),
        );
        let mac = |name: &str, params: Option<Vec<String>>, body: &str| crate::facts::HeaderMacro {
            name: name.into(),
            params,
            body: body.into(),
        };
        parsed.header_macros = vec![
            mac("N", None, "4096"),
            mac("F", Some(Vec::new()), "f()"),
            mac("B", Some(vec!["x".into(), "y".into()]), "(x) + (y)"),
        ];
        let mut w = Writer::default();
        parsed.encode(&mut w);
        let back = Parsed::decode(&mut Reader::new(&w.buf)).expect("decodes");
        assert_eq!(back.header_macros, parsed.header_macros);
    }

    /// A parent distance reaching before the first node is malformed, not a panic.
    #[test]
    fn a_parent_before_the_first_node_is_refused() {
        let buf = encoded(
            vec![node(CXCursor_FunctionDecl, 0..10, None, None, 0)],
            Vec::new(),
        );
        // The list's length, then the node: kind, start delta, length, parent distance.
        let head = |parent: usize| {
            let mut h = Writer::default();
            h.usize(1);
            h.int(i64::from(CXCursor_FunctionDecl));
            h.int(0);
            h.usize(10);
            h.usize(parent);
            h.buf
        };
        assert!(buf.starts_with(&head(0)));
        let mut bad = buf.clone();
        bad.splice(..head(0).len(), head(1));
        assert!(Parsed::decode(&mut Reader::new(&bad)).is_none());
        assert!(Parsed::decode(&mut Reader::new(&buf)).is_some());
    }
}
