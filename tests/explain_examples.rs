//! Every `before`/`after` example in `rules/diagnostics.toml` (what `acc2omp explain ID`
//! prints) is a real translation: `before` becomes exactly `after`, with the rule's profile
//! when it names one, and `after` is a fixed point.

use acc2omp::profile::Profile;
use acc2omp::rules::Tables;
use acc2omp::{Options, migrate_text};

#[test]
fn explain_examples_round_trip() {
    let mut failures = Vec::new();
    let mut checked = 0;
    for rule in &Tables::builtin().diagnostics {
        let (Some(before), Some(after)) = (&rule.before, &rule.after) else {
            assert!(
                rule.before.is_none() && rule.after.is_none(),
                "{}: 'before' and 'after' go together",
                rule.id
            );
            continue;
        };
        let profile = match rule.profile.as_deref() {
            None => Profile::Default,
            Some(name) => *Profile::ALL
                .iter()
                .find(|p| p.name() == name)
                .unwrap_or_else(|| panic!("{}: unknown profile {name}", rule.id)),
        };
        let opts = Options {
            profile,
            ..Options::default()
        };
        let out = migrate_text(before, &opts);
        if out.text != *after {
            failures.push(format!(
                "[{}] translating 'before' gives:\n{}\nbut 'after' is:\n{}",
                rule.id, out.text, after
            ));
            continue;
        }
        if migrate_text(after, &opts).text != *after {
            failures.push(format!("[{}] 'after' is not a fixed point", rule.id));
        }
        checked += 1;
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    assert!(checked >= 5, "only {checked} examples found");
}
