//! The items [`nothing_to_find`] lets through unlooked-up have no problem when looked up.

use super::*;
use crate::directive::{Item, parse_grammar_in};
use crate::facts::{VarKind, VarType};
use crate::rules::Tables;

fn ty(kind: VarKind, extents: &[Option<u64>]) -> VarType {
    VarType {
        kind,
        is_const: false,
        incomplete: false,
        restrict: false,
        dims: extents.len() as u8,
        extents: extents.to_vec(),
        param_dims: None,
    }
}

#[test]
fn items_not_looked_up_have_no_section_problem() {
    let mut f = crate::semantic::SiteFacts::default();
    let array = VarKind::Array { extent: Some(4) };
    f.names.insert("a".into(), ty(array, &[Some(4), Some(4)]));
    f.names.insert("b".into(), ty(array, &[Some(8)]));
    f.names
        .insert("p".into(), ty(VarKind::Pointer, &[None, Some(8)]));
    f.names.insert("s".into(), ty(VarKind::Scalar, &[]));
    let items = [
        "a",
        "a[0:4]",
        "a[1:2]",
        "a[-1:2]",
        "a[ - 1 :2]",
        "a[0:2][1:3]",
        "a[1][0:4]",
        "a[0:2][0:4]",
        "a[k-1]",
        "a[0:n-1]",
        "b[-2]",
        "b[0:8]",
        "b[2:]",
        "p[0:n][1:2]",
        "p[-1:2]",
        "s",
        "s.x[0:2]",
        "a /* [ */",
        "a[0:2] /* [-1] */",
        "q[0:2][1:3]",
        "a[0:n]",
        "b[i]",
        "b[0]",
        "b[0:]",
        "s.x[0:n]",
        "p[0:m]",
        "b[8]",
        "b[7]",
        "b[2:7]",
        "b[2:6]",
        "a[4][0:4]",
    ];
    let t = Tables::builtin();
    let (mut skipped, mut problems) = (0, 0);
    for item in items {
        let text = format!("parallel copy({item})");
        let d = parse_grammar_in(&text, 0..text.len(), &t, crate::directive::Dialect::C).unwrap();
        let it: &Item = d.clauses[0].items().next().unwrap();
        let full = looked_up_section_problem(&crate::c::lang::C, &text, it, &f);
        problems += usize::from(full.is_some());
        if nothing_to_find(&text, it) {
            skipped += 1;
            assert_eq!(full, None, "{item}");
        }
        assert_eq!(
            section_problem(&crate::c::lang::C, &text, it, &f),
            full,
            "{item}"
        );
    }
    assert!(
        skipped >= 8 && problems >= 7,
        "{skipped} skipped, {problems} problems"
    );
}

/// Items reaching past an array's declared extent with literals are problems; those inside
/// it, or whose bounds are not literals, or of a pointer's first dimension, are not.
#[test]
fn items_past_an_extent() {
    let mut f = crate::semantic::SiteFacts::default();
    let array = VarKind::Array { extent: Some(4) };
    f.names.insert("g".into(), ty(array, &[Some(4), Some(8)]));
    f.names
        .insert("p".into(), ty(VarKind::Pointer, &[None, Some(8)]));
    f.names.insert("h".into(), ty(array, &[Some(9)]));
    // A parameter declared `double q[10][8]`: a pointer, whose first extent C ignores
    // (libclang gives the type as written).
    let mut param = ty(VarKind::Pointer, &[Some(10), Some(8)]);
    param.param_dims = Some(vec![Some("10".into()), Some("8".into())]);
    f.names.insert("q".into(), param);
    let t = Tables::builtin();
    for (item, past) in [
        ("g[4][8]", true),
        ("g[3][8]", true),
        ("g[3][7]", false),
        ("g[1:3][0:8]", false),
        ("g[1:4][0:8]", true),
        ("g[2][5:4]", true),
        ("g[2][5:3]", false),
        ("g[n][9]", true),
        ("g[0:n][0:8]", false),
        ("p[100][0:8]", false),
        ("p[1][8]", true),
        ("q[0:20][0:8]", false),
        ("q[12][3]", false),
        ("q[1][0:9]", true),
        ("h[010]", false),
        ("h[011]", true),
        ("h[0x8]", false),
        ("h[0x9]", true),
        ("h[8u]", false),
        ("h[9u]", true),
        ("h[9:0]", false),
        ("h[10:0]", false),
        ("h[9:1]", true),
        ("h[0:9]", false),
    ] {
        let text = format!("parallel copy({item})");
        let d = parse_grammar_in(&text, 0..text.len(), &t, crate::directive::Dialect::C).unwrap();
        let it: &Item = d.clauses[0].items().next().unwrap();
        let found = section_problem(&crate::c::lang::C, &text, it, &f);
        let is_past = found
            .as_ref()
            .is_some_and(|(_, m)| m.contains("past the end"));
        assert_eq!(is_past, past, "{item}: {found:?}");
    }
}
