//! The Fortran form of a directive that becomes runtime statements (`set`, `init` of the
//! host: the shared plan's `Calls`, `crate::translate::data`): the OpenMP routine calls on
//! `!$` conditional-compilation lines, so that a build without OpenMP still reads only
//! comments, as it did the directive. They stand in a `block` with its own `use omp_lib`,
//! which needs nothing of the unit (it may have `implicit none (external)` and no
//! `omp_lib`). The device-type model's helpers of the C plan are written inline, with the
//! same decisions (`devices.rs`): no helper procedure would build without OpenMP.

use crate::fortran::form::Form;
use crate::intent::{CallStmt, Calls};

/// The local variable the statements read the default device into.
const DEVICE: &str = "acc2omp_d";

/// The lines (joined by `eol`, without a final one) that replace the directive, with
/// `indent` before each sentinel in free form; else why they cannot be written.
pub(crate) fn lines(
    calls: &Calls,
    form: Form,
    indent: &str,
    eol: &str,
) -> Result<String, &'static str> {
    let mut body: Vec<(usize, String)> = Vec::new();
    let depth = usize::from(calls.cond.is_some());
    for s in &calls.stmts {
        statements(s, depth, &mut body)?;
    }
    let mut all = vec![(0, "block".to_string()), (1, "use omp_lib".to_string())];
    if body.iter().any(|(_, t)| t.contains(DEVICE)) {
        all.push((1, format!("integer :: {DEVICE}")));
    }
    if let Some(c) = &calls.cond {
        all.push((1, format!("if ({}) then", c.trim())));
    }
    all.extend(body.into_iter().map(|(d, t)| (d + 1, t)));
    if calls.cond.is_some() {
        all.push((1, "end if".to_string()));
    }
    all.push((0, "end block".to_string()));
    let lead = match form {
        Form::Free => format!("{indent}!$ "),
        Form::Fixed => "!$    ".to_string(),
    };
    let out: Vec<String> = all
        .into_iter()
        .map(|(d, t)| format!("{lead}{}{t}", "  ".repeat(d)))
        .collect();
    if out.iter().any(|l| l.chars().count() > super::limit(form)) {
        return Err("a statement would pass the line-length limit of the source form");
    }
    Ok(out.join(eol))
}

/// The Fortran statements of `s` at `depth`, pushed to `out`.
fn statements(
    s: &CallStmt,
    depth: usize,
    out: &mut Vec<(usize, String)>,
) -> Result<(), &'static str> {
    let set = |dev: &str| format!("call omp_set_default_device({dev})");
    let initial = set("omp_get_initial_device()");
    let read = format!("{DEVICE} = omp_get_default_device()");
    // The default device is the host (the model's "current type is the host").
    let host_now = format!("{DEVICE} < 0 .or. {DEVICE} >= omp_get_num_devices()");
    let mut push = |d: usize, t: String| out.push((depth + d, t));
    match s {
        CallStmt::Call {
            routine: "omp_set_default_device",
            args,
        } if args.len() == 1 => push(0, set(args[0].trim())),
        // acc2omp_set_device_type: "not host" keeps a non-host default device, else takes
        // device 0. The default type is the same: with no non-host device, device 0 is the
        // initial device, which the model's default type then is.
        CallStmt::Call {
            routine: "acc2omp_set_device_type",
            args,
        } if args.len() == 1
            && matches!(
                args[0].as_str(),
                "acc2omp_device_not_host" | "acc2omp_device_default"
            ) =>
        {
            push(0, read);
            push(0, format!("if ({host_now}) then"));
            push(1, set("0"));
            push(0, "end if".into());
        }
        // acc2omp_set_device_num(n, t): device n (n < 0: device 0) when t resolves to "not
        // host", else the initial device.
        CallStmt::Call {
            routine: "acc2omp_set_device_num",
            args,
        } if args.len() == 2 => {
            let n = format!("max({}, 0)", args[0].trim());
            match args[1].as_str() {
                "acc2omp_device_current" => {
                    push(0, read);
                    push(0, format!("if ({host_now}) then"));
                    push(1, initial);
                    push(0, "else".into());
                    push(1, set(&n));
                    push(0, "end if".into());
                }
                "acc2omp_device_default" => {
                    push(0, "if (omp_get_num_devices() > 0) then".into());
                    push(1, set(&n));
                    push(0, "else".into());
                    push(1, initial);
                    push(0, "end if".into());
                }
                _ => return Err("its device type has no Fortran form"),
            }
        }
        CallStmt::Assign { .. } => {
            return Err(
                "'default_async': in Fortran 'async' without argument is one fixed queue, with no variable to set",
            );
        }
        CallStmt::Call { .. } => return Err("it would call a routine with no Fortran form"),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(routine: &'static str, args: &[&str]) -> CallStmt {
        CallStmt::Call {
            routine,
            args: args.iter().map(|a| a.to_string()).collect(),
        }
    }

    #[test]
    fn host_in_free_form_under_a_condition() {
        let c = Calls {
            cond: Some("n > 0".into()),
            stmts: vec![call(
                "omp_set_default_device",
                &["omp_get_initial_device()"],
            )],
        };
        let text = lines(&c, Form::Free, "  ", "\n").unwrap();
        assert_eq!(
            text,
            "  !$ block\n  !$   use omp_lib\n  !$   if (n > 0) then\n  !$     call omp_set_default_device(omp_get_initial_device())\n  !$   end if\n  !$ end block"
        );
    }

    #[test]
    fn current_type_in_fixed_form() {
        let c = Calls {
            cond: None,
            stmts: vec![call(
                "acc2omp_set_device_num",
                &["k", "acc2omp_device_current"],
            )],
        };
        let text = lines(&c, Form::Fixed, "", "\n").unwrap();
        assert!(
            text.starts_with("!$    block\n!$      use omp_lib\n!$      integer :: acc2omp_d\n")
        );
        assert!(text.contains("!$        call omp_set_default_device(max(k, 0))\n"));
        assert!(text.lines().all(|l| l.len() <= 72));
    }

    #[test]
    fn refusals() {
        let q = Calls {
            cond: None,
            stmts: vec![CallStmt::Assign {
                var: "acc2omp_default_async",
                value: "3".into(),
            }],
        };
        assert!(lines(&q, Form::Free, "", "\n").is_err());
        let long = Calls {
            cond: Some("x".repeat(70)),
            stmts: vec![call("omp_set_default_device", &["n"])],
        };
        assert!(lines(&long, Form::Fixed, "", "\n").is_err());
        assert!(lines(&long, Form::Free, "", "\n").is_ok());
    }
}
